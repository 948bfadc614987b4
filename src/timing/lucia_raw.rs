//! Raw LUCIA files of OASIS3-MCT 3/4: `lucia.CC.RRRRRR`, one per sampled rank.
//!
//! The analysis follows formats.md (what CERFACS' `lucia` post-processor computes):
//! * Steps are counted on a component's receive (get) events, or on its send events when it
//!   receives nothing. Of the `n` exchanges, the first two (initialisation) and the last
//!   (termination) are skipped: the analysed window runs from the end of exchange 2 to the end
//!   of exchange `n - 2` (0-based), i.e. `n - 4` coupling steps of model time.
//! * Every event (field x exchange x before/after x put/get/interpolation) is taken as the max
//!   over the sampled ranks: the slowest rank sets the pace.
//! * waiting = per step, the time covered by the get events (overlapping gets of several
//!   fields counted once); sending = likewise for the put events; interpolation = mean over the
//!   rank files of the summed interpolation events; jitter = sum over the events of the spread
//!   (max - min over ranks) of their start times.
//! * computing = the window's length minus each step's coupling phase: from the step's first
//!   coupling event to its last one. (Bookkeeping between a put and the following get is part of
//!   the coupling phase, not computation.) When a step's events are not one contiguous phase
//!   inside the step (a model that gets at the start of its step and puts at the end), only the
//!   events themselves are subtracted.
//!
//! Running jobs leave half-written files. The complete part is measured: a cut last line is
//! dropped, a `Before` without `After` ends the rank at the previous exchange, `****` times end it
//! at the overflow, ranks that wrote fewer exchanges than others bound the window, a missing rank
//! file is left out. Each of these marks the measurement partial with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::text::{self, Field, Lines};
use super::{ComponentTiming, Format, Measurement, ReadOptions, Reading, TimingError};

/// Exchanges skipped at the start (initialisation) and at the end (termination).
pub const SKIP_FIRST: usize = 2;
pub const SKIP_LAST: usize = 1;
/// Fewest exchanges that leave at least one analysed step.
pub const MIN_EXCHANGES: usize = SKIP_FIRST + SKIP_LAST + 2;

/// Field id written as `***` (ids above 999).
const OVERFLOW_ID: u16 = u16::MAX;

/// Is `name` a raw LUCIA file name, `lucia.CC.RRRRRR`?
pub fn is_rank_file_name(name: &str) -> bool {
    parse_file_name(name).is_some()
}

/// `(component id, rank)` of a `lucia.CC.RRRRRR` file name.
pub fn parse_file_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("lucia.")?;
    let (cc, rank) = rest.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(cc) || !digits(rank) {
        return None;
    }
    Some((cc.parse().ok()?, rank.parse().ok()?))
}

/// The rank file name of component `cc`, rank `rank`.
pub fn file_name(cc: u32, rank: u32) -> String {
    format!("lucia.{cc:02}.{rank:06}")
}

/// Which ranks write a LUCIA file when a component runs on `nproc` PEs (formats.md): all of
/// them below 20 PEs, every `nproc / 5`-th below 100, every `nproc / 20`-th otherwise.
pub fn sampled_ranks(nproc: u32) -> Vec<u32> {
    (0..nproc)
        .step_by(sampling_stride(nproc) as usize)
        .collect()
}

/// The distance between sampled ranks on `nproc` PEs (at least 1).
fn sampling_stride(nproc: u32) -> u32 {
    let stride = if nproc < 20 {
        1
    } else if nproc < 100 {
        nproc / 5
    } else {
        nproc / 20
    };
    stride.max(1)
}

/// Does `dir` hold any raw LUCIA file?
pub fn has_rank_files(dir: &Path) -> Result<bool, TimingError> {
    Ok(!rank_files(dir)?.is_empty())
}

fn rank_files(dir: &Path) -> Result<Vec<(u32, u32, PathBuf)>, TimingError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TimingError::Io {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some((cc, rank)) = parse_file_name(&name.to_string_lossy()) {
            files.push((cc, rank, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// What kind of coupling event a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Interp,
    Put,
    Get,
}

/// One series of events in a rank file: a field's `Before`/`After` times of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    field: u16,
    kind: Kind,
    after: bool,
}

/// One parsed rank file.
#[derive(Debug, Default)]
struct RankFile {
    rank: u32,
    name: Option<String>,
    /// Field ids this component sends and receives (from the `SN`/`RC` lines).
    sends: Vec<u32>,
    receives: Vec<u32>,
    /// Event times per key, in file order; reading stops at the first damage.
    series: Vec<(Key, Vec<f64>)>,
    /// Why this file ended early (cut line, unreadable line, overflow), if it did.
    damage: Option<String>,
}

impl RankFile {
    /// Records an event; an event earlier than the previous one of its series means the file
    /// is damaged (MPI_Wtime never goes back).
    fn push(&mut self, key: Key, t: f64) -> Result<(), String> {
        // A handful of keys per file: a linear scan beats hashing.
        match self.series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => {
                if v.last().is_some_and(|&last| t < last) {
                    return Err(format!(
                        "time {t} is earlier than the previous event of its kind"
                    ));
                }
                v.push(t);
            }
            None => self.series.push((key, vec![t])),
        }
        Ok(())
    }

    /// How many `Key` events of one field make up one exchange (>1 only for `***` ids, which
    /// stand for every field above 999 at once).
    fn multiplicity(&self, key: Key) -> usize {
        if key.field != OVERFLOW_ID {
            return 1;
        }
        let ids = if key.kind == Kind::Get {
            &self.receives
        } else {
            &self.sends
        };
        ids.iter().filter(|&&id| id > 999).count().max(1)
    }

    /// Complete exchanges in this file: the fewest of any of the component's event series
    /// (`keys`, with how many events of each make one exchange).
    fn exchanges(&self, keys: &[(Key, usize)]) -> usize {
        keys.iter()
            .map(|(key, m)| {
                self.series
                    .iter()
                    .find(|(k, _)| k == key)
                    .map_or(0, |(_, v)| v.len() / m)
            })
            .min()
            .unwrap_or(0)
    }
}

/// Every event series of a component's rank files, with how many events of each make one
/// exchange (the most any rank's headers say).
fn component_keys(ranks: &[RankFile]) -> Vec<(Key, usize)> {
    let mut keys: Vec<Key> = ranks
        .iter()
        .flat_map(|r| r.series.iter().map(|(k, _)| *k))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|key| {
            let m = ranks.iter().map(|r| r.multiplicity(key)).max().unwrap_or(1);
            (key, m)
        })
        .collect()
}

/// Parses one rank file's bytes. Never fails: damage ends the file and is recorded.
fn parse_rank(bytes: &[u8], file: &str, rank: u32) -> RankFile {
    let mut out = RankFile {
        rank,
        ..RankFile::default()
    };
    for line in Lines::new(bytes) {
        if !line.complete {
            out.damage = line.cut(file);
            break;
        }
        if let Err(why) = parse_line(line.text, &mut out) {
            out.damage = Some(format!("{file}: line {}: {why}", line.number));
            break;
        }
    }
    out
}

fn parse_line(line: &[u8], out: &mut RankFile) -> Result<(), String> {
    let mut t = text::tokens(line);
    let Some(first) = t.next() else {
        return Ok(()); // blank line
    };
    if first != b"Balance:" {
        return Err(format!(
            "{:?} does not start with `Balance:`",
            text::show(line)
        ));
    }
    let Some(tag) = t.next() else {
        return Ok(());
    };
    match tag {
        b"IT" => return Ok(()),
        b"MD" => {
            let name = t.next().ok_or("`MD` without a component name")?;
            out.name = Some(String::from_utf8_lossy(name).into_owned());
            return Ok(());
        }
        b"SN" | b"RC" => {
            let id = t.next().ok_or("field line without an id")?;
            let id: u32 = std::str::from_utf8(id)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("field id {:?} is not a number", text::show(id)))?;
            if tag == b"SN" {
                out.sends.push(id);
            } else {
                out.receives.push(id);
            }
            return Ok(());
        }
        _ => {}
    }
    let field =
        parse_field_id(tag).ok_or_else(|| format!("unknown entry {:?}", text::show(line)))?;
    let after = match t.next() {
        Some(b"Before") => false,
        Some(b"After") => true,
        _ => {
            return Err(format!(
                "expected Before or After in {:?}",
                text::show(line)
            ))
        }
    };
    let kind = match t.next() {
        Some(b"interpo") => Kind::Interp,
        Some(b"MPI") => match t.next() {
            Some(b"put") => Kind::Put,
            Some(b"get") => Kind::Get,
            _ => {
                return Err(format!(
                    "expected `MPI put` or `MPI get` in {:?}",
                    text::show(line)
                ))
            }
        },
        _ => return Err(format!("unknown event in {:?}", text::show(line))),
    };
    let time = t
        .next()
        .ok_or_else(|| format!("no time in {:?}", text::show(line)))?;
    if t.next().is_some() {
        return Err(format!(
            "unexpected text after the time in {:?}",
            text::show(line)
        ));
    }
    match text::number(time) {
        Field::Value(v) => out.push(Key { field, kind, after }, v),
        Field::Overflow => Err(format!(
            "time {:?} overflowed its field; later events cannot be timed",
            text::show(time)
        )),
        Field::Bad => Err(format!("time {:?} is not a number", text::show(time))),
    }
}

fn parse_field_id(tag: &[u8]) -> Option<u16> {
    if tag.iter().all(|&b| b == b'*') {
        return Some(OVERFLOW_ID);
    }
    if tag.len() > 4 || !tag.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(tag).ok()?.parse().ok()
}

/// Reads a directory of rank files, or a single rank file.
pub fn read(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let files = if path.is_dir() {
        rank_files(path)?
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let (cc, rank) = parse_file_name(&name).unwrap_or((0, 0));
        vec![(cc, rank, path.to_path_buf())]
    };
    if files.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no lucia.* files yet", path.display()),
        });
    }
    let parsed = parse_files(&files)?;
    analyse(parsed, opts)
}

/// Analyses rank files held in memory, `(file name, contents)`: the same analysis as [`read`]
/// without the file system (for tests and fuzzing). Names that are not `lucia.CC.RRRRRR` count
/// as component 0, rank 0.
pub fn read_in_memory(files: &[(&str, &[u8])], opts: &ReadOptions) -> Result<Reading, TimingError> {
    super::validate_options(opts)?;
    if files.is_empty() {
        return Ok(Reading::Incomplete {
            reason: "no lucia.* files yet".into(),
        });
    }
    let parsed = files
        .iter()
        .map(|(name, bytes)| {
            let (cc, rank) = parse_file_name(name).unwrap_or((0, 0));
            (cc, parse_rank(bytes, name, rank))
        })
        .collect();
    analyse(parsed, opts)
}

/// Reads and parses every file, on as many threads as help (rank files are independent).
fn parse_files(files: &[(u32, u32, PathBuf)]) -> Result<Vec<(u32, RankFile)>, TimingError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len());
    let parse_one =
        |(cc, rank, path): &(u32, u32, PathBuf)| -> Result<(u32, RankFile), TimingError> {
            let bytes = super::read_bytes(path)?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            Ok((*cc, parse_rank(&bytes, &name, *rank)))
        };
    if workers <= 1 {
        return files.iter().map(parse_one).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<(u32, RankFile), TimingError>>> =
        (0..files.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        done.push((i, parse_one(f)));
                    }
                    done
                })
            })
            .collect();
        for h in handles {
            // A worker cannot panic on input (the parser never does); if it somehow did, the
            // affected files stay `None` and are reported as unreadable below.
            if let Ok(done) = h.join() {
                for (i, r) in done {
                    results[i] = Some(r);
                }
            }
        }
    });
    results
        .into_iter()
        .zip(files)
        .map(|(r, (_, _, path))| {
            r.unwrap_or_else(|| {
                Err(TimingError::Io {
                    path: path.clone(),
                    reason: "internal error while parsing".into(),
                })
            })
        })
        .collect()
}

/// One component's rank files.
struct ComponentFiles {
    cc: u32,
    name: String,
    ranks: Vec<RankFile>,
    keys: Vec<(Key, usize)>,
}

fn group(parsed: Vec<(u32, RankFile)>) -> Vec<ComponentFiles> {
    let mut by_cc: BTreeMap<u32, Vec<RankFile>> = BTreeMap::new();
    for (cc, rank) in parsed {
        by_cc.entry(cc).or_default().push(rank);
    }
    by_cc
        .into_iter()
        .map(|(cc, mut ranks)| {
            // In rank order whatever order the files came in (the rank-set check relies on it).
            ranks.sort_by_key(|r| r.rank);
            let name = ranks
                .iter()
                .find_map(|r| r.name.clone())
                .unwrap_or_else(|| format!("component{cc:02}"));
            let keys = component_keys(&ranks);
            ComponentFiles {
                cc,
                name,
                ranks,
                keys,
            }
        })
        .collect()
}

fn analyse(parsed: Vec<(u32, RankFile)>, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let components = group(parsed);
    let mut partial: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();

    // Check the rank files against the sampling rule, damage, and agreement between ranks.
    for comp in &components {
        let nproc = opts.nproc.get(&comp.name).copied();
        check_rank_set(comp, nproc, &mut partial)?;
        partial.extend(cut_rank_notes(comp));
        if nproc.is_none() {
            notes.push(format!(
                "nproc of {} unknown ({} sampled rank file(s)); pass --nproc {}=N for CHSY and coupling costs",
                comp.name,
                comp.ranks.len(),
                comp.name
            ));
        }
    }
    // The window is common to all components: the fewest complete exchanges of any rank.
    // The ranks of one component must agree exactly; components may differ by one exchange
    // (lucia_lite shows the runoff mapper one short); more means a rank is behind (a running
    // job).
    let mut per_component: Vec<(usize, usize)> = Vec::with_capacity(components.len());
    for comp in &components {
        let counts = comp.ranks.iter().map(|r| r.exchanges(&comp.keys));
        let (least, most) = counts.fold((usize::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
        if most != least {
            partial.push(format!(
                "{}: rank files disagree on the number of exchanges ({least} to {most})",
                comp.name
            ));
        }
        per_component.push((least, most));
    }
    let n = per_component.iter().map(|&(lo, _)| lo).min().unwrap_or(0);
    let most = per_component.iter().map(|&(_, hi)| hi).max().unwrap_or(0);
    if most > n + 1 {
        partial.push(format!(
            "components disagree on the number of exchanges ({n} to {most}); measured the first {n}"
        ));
    }
    if n < MIN_EXCHANGES {
        return Ok(Reading::Incomplete {
            reason: format!(
                "only {n} complete coupling exchange(s) written so far; the analysis skips the \
                 first {SKIP_FIRST} and the last {SKIP_LAST} and needs at least {MIN_EXCHANGES}"
            ),
        });
    }
    let mut m = Measurement::new(Format::LuciaRaw);
    let mut wall: f64 = 0.0;
    for comp in &components {
        let Some(a) = analyse_component(comp, n) else {
            return Ok(Reading::Incomplete {
                reason: format!("{}: no coupling events written yet", comp.name),
            });
        };
        if let Some(why) = a.inconsistency() {
            partial.push(format!("{}: {why}", comp.name));
        }
        wall = wall.max(a.span);
        let mut timing = ComponentTiming::new(
            comp.name.clone(),
            (n - MIN_EXCHANGES + 1) as u64,
            a.compute,
            a.wait,
        );
        timing.nproc = opts.nproc.get(&comp.name).copied();
        timing.interp_s = Some(a.interp);
        timing.send_s = Some(a.send);
        timing.jitter_s = Some(a.jitter);
        timing.sampled_ranks = Some(comp.ranks.len() as u32);
        m.components.push(timing);
    }
    let steps = (n - MIN_EXCHANGES + 1) as f64;
    m.wall_s = Some(wall);
    m.period_s = opts.period_s;
    m.sim_s = opts.period_s.map(|p| p * steps);
    if opts.period_s.is_none() {
        notes.push(super::PERIOD_UNKNOWN.into());
    }
    for name in opts.nproc.keys() {
        if m.component(name).is_none() {
            notes.push(format!(
                "--nproc {name}: no such component in the LUCIA files (they name {})",
                components
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    partial.dedup();
    m.partial = (!partial.is_empty()).then(|| partial.join("; "));
    m.notes = notes;
    Ok(Reading::Measured(m))
}

/// `Some(message)` when the file ends inside an event (a `Before` with no `After`).
fn unmatched_before(r: &RankFile) -> Option<String> {
    for (key, before) in r.series.iter().filter(|(k, _)| !k.after) {
        let after_key = Key {
            after: true,
            ..*key
        };
        let after = r
            .series
            .iter()
            .find(|(k, _)| *k == after_key)
            .map_or(0, |(_, v)| v.len());
        if before.len() > after {
            return Some("ends inside a coupling event (a Before with no After)".into());
        }
    }
    None
}

/// What is cut in a component's rank files (mid-line ends, a coupling event begun and not
/// ended): each file's note when one or two are cut; beyond that one compact note, e.g.
/// `oceanx: 41 rank files; 3 cut: lucia.02.000040, lucia.02.000080 ... (first: ...)`, so a
/// run cut by its time limit does not print a line per rank.
fn cut_rank_notes(comp: &ComponentFiles) -> Vec<String> {
    const LISTED: usize = 2;
    let mut cut: Vec<(String, String)> = Vec::new();
    for r in &comp.ranks {
        let name = file_name(comp.cc, r.rank);
        let mut why: Vec<String> = r.damage.iter().cloned().collect();
        if let Some(u) = unmatched_before(r) {
            why.push(format!("{name} {u}"));
        }
        if !why.is_empty() {
            cut.push((name, why.join("; ")));
        }
    }
    if cut.len() <= LISTED {
        return cut.into_iter().map(|(_, why)| why).collect();
    }
    let names: Vec<&str> = cut.iter().take(LISTED).map(|(n, _)| n.as_str()).collect();
    vec![format!(
        "{}: {} rank files; {} cut: {} ... (first: {})",
        comp.name,
        comp.ranks.len(),
        cut.len(),
        names.join(", "),
        cut[0].1
    )]
}

/// Checks which rank files exist against the sampling rule (with nproc) or for gaps (without).
fn check_rank_set(
    comp: &ComponentFiles,
    nproc: Option<u32>,
    partial: &mut Vec<String>,
) -> Result<(), TimingError> {
    // In rank order (see `group`).
    let mut present: Vec<u32> = comp.ranks.iter().map(|r| r.rank).collect();
    // The expected ranks are `0, stride, 2 stride, ...` up to `end` (exclusive). They are
    // counted, not listed: a stray file name with a 9-digit rank must not allocate billions.
    let (stride, end) = match nproc {
        Some(n) => {
            if let Some(&r) = present.iter().find(|&&r| r >= n) {
                return Err(TimingError::Option(format!(
                    "{} exists but --nproc {}={n} allows ranks 0..{}; give the PEs the run used",
                    file_name(comp.cc, r),
                    comp.name,
                    n.saturating_sub(1)
                )));
            }
            (sampling_stride(n), n)
        }
        None => {
            // Without nproc the stride is the distance between the first two ranks.
            let stride = match present.as_slice() {
                [a, b, ..] => b - a,
                _ => 1,
            };
            let last = present.last().copied().unwrap_or(0);
            (stride.max(1), last.saturating_add(1))
        }
    };
    present.dedup(); // two names for one rank (`lucia.01.5`, `lucia.01.000005`) count once
    let expected = (0..end).step_by(stride as usize);
    let present_expected = present.iter().filter(|&&r| r < end && r % stride == 0);
    let missing_count = end.div_ceil(stride) as usize - present_expected.count();
    if missing_count > 0 {
        let shown = expected
            .filter(|r| !present.contains(r))
            .take(3)
            .map(|r| file_name(comp.cc, r))
            .collect::<Vec<_>>()
            .join(", ");
        let more = if missing_count > 3 {
            format!(" and {} more", missing_count - 3)
        } else {
            String::new()
        };
        partial.push(format!(
            "{}: rank file(s) missing: {shown}{more}",
            comp.name
        ));
    }
    Ok(())
}

/// What the analysis finds for one component.
struct Analysis {
    span: f64,
    compute: f64,
    wait: f64,
    send: f64,
    interp: f64,
    jitter: f64,
}

impl Analysis {
    /// Why these numbers cannot describe a real run (damaged or foreign files), if they cannot.
    fn inconsistency(&self) -> Option<String> {
        let values = [
            self.span,
            self.compute,
            self.wait,
            self.send,
            self.interp,
            self.jitter,
        ];
        if values.iter().any(|v| !v.is_finite()) {
            return Some(
                "rank files do not line up (an event series is missing on some rank)".into(),
            );
        }
        if self.compute < 0.0 || self.interp < 0.0 {
            return Some(format!(
                "coupling events take longer ({:.3} s) than the window ({:.3} s): the files are inconsistent",
                self.span - self.compute,
                self.span
            ));
        }
        None
    }
}

/// Per key: max and min over ranks of each event, over the first `n` exchanges.
struct Combined {
    key: Key,
    per_exchange: usize,
    max: Vec<f64>,
    min: Vec<f64>,
}

fn combine(comp: &ComponentFiles, n: usize) -> Vec<Combined> {
    let mut out = Vec::with_capacity(comp.keys.len());
    for &(key, per_exchange) in &comp.keys {
        let len = n * per_exchange;
        let mut max = vec![f64::NEG_INFINITY; len];
        let mut min = vec![f64::INFINITY; len];
        for r in &comp.ranks {
            let Some((_, v)) = r.series.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            for ((mx, mn), &t) in max.iter_mut().zip(min.iter_mut()).zip(v.iter()) {
                *mx = mx.max(t);
                *mn = mn.min(t);
            }
        }
        out.push(Combined {
            key,
            per_exchange,
            max,
            min,
        });
    }
    out
}

/// Length of the union of intervals (overlaps counted once). Sorts in place.
fn covered(intervals: &mut [(f64, f64)]) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for &(s, e) in intervals.iter() {
        let e = e.max(s);
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = current {
        total += ce - cs;
    }
    total
}

fn analyse_component(comp: &ComponentFiles, n: usize) -> Option<Analysis> {
    let combined = combine(comp, n);
    let anchor_kind = [Kind::Get, Kind::Put, Kind::Interp]
        .into_iter()
        .find(|kind| combined.iter().any(|c| c.key.kind == *kind && c.key.after))?;
    // The end of exchange k: the latest `After` of the anchor kind.
    let anchor = |k: usize| -> f64 {
        combined
            .iter()
            .filter(|c| c.key.kind == anchor_kind && c.key.after)
            .flat_map(|c| c.max[k * c.per_exchange..(k + 1) * c.per_exchange].iter())
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let first = SKIP_FIRST;
    let last = n - 1 - SKIP_LAST;
    let span = anchor(last) - anchor(first);
    let pairs: Vec<(&Combined, &Combined)> = combined
        .iter()
        .filter(|c| !c.key.after)
        .filter_map(|b| {
            let a = combined.iter().find(|c| {
                c.key
                    == Key {
                        after: true,
                        ..b.key
                    }
            })?;
            Some((b, a))
        })
        .collect();
    let (mut wait, mut send, mut coupling, mut jitter) = (0.0, 0.0, 0.0, 0.0);
    let mut gets = Vec::new();
    let mut puts = Vec::new();
    let mut all = Vec::new();
    for k in first + 1..=last {
        gets.clear();
        puts.clear();
        all.clear();
        for (b, a) in &pairs {
            let m = b.per_exchange;
            for j in k * m..(k + 1) * m {
                let interval = (b.max[j], a.max[j]);
                match b.key.kind {
                    Kind::Get => gets.push(interval),
                    Kind::Put => puts.push(interval),
                    Kind::Interp => {}
                }
                all.push(interval);
                jitter += b.max[j] - b.min[j];
            }
        }
        wait += covered(&mut gets);
        send += covered(&mut puts);
        coupling += coupling_phase(&mut all, anchor(k - 1), anchor(k));
    }
    let interp = mean_interpolation(comp, first + 1, last);
    Some(Analysis {
        span,
        compute: span - coupling,
        wait,
        send,
        interp,
        jitter,
    })
}

/// Time of one step's coupling phase: from its first event to its last when they all lie inside
/// the step `(start, end]`, else (events spread over the step) the time the events cover.
fn coupling_phase(events: &mut [(f64, f64)], start: f64, end: f64) -> f64 {
    let earliest = events.iter().map(|e| e.0).fold(f64::INFINITY, f64::min);
    let latest = events.iter().map(|e| e.1).fold(f64::NEG_INFINITY, f64::max);
    if events.is_empty() {
        0.0
    } else if earliest >= start && latest <= end {
        latest - earliest
    } else {
        covered(events)
    }
}

/// Mean over rank files of each file's summed interpolation time over exchanges `from..=to`.
fn mean_interpolation(comp: &ComponentFiles, from: usize, to: usize) -> f64 {
    let mut total = 0.0;
    for r in &comp.ranks {
        for (key, before) in r
            .series
            .iter()
            .filter(|(k, _)| k.kind == Kind::Interp && !k.after)
        {
            let after_key = Key {
                after: true,
                ..*key
            };
            let Some((_, after)) = r.series.iter().find(|(k, _)| *k == after_key) else {
                continue;
            };
            let m = comp
                .keys
                .iter()
                .find(|(k, _)| k == key)
                .map_or(1, |(_, m)| *m);
            let range = from * m..((to + 1) * m).min(before.len()).min(after.len());
            if range.start < range.end {
                total +=
                    after[range.clone()].iter().sum::<f64>() - before[range].iter().sum::<f64>();
            }
        }
    }
    total / comp.ranks.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(parse_file_name("lucia.01.000228"), Some((1, 228)));
        assert_eq!(parse_file_name("lucia.log"), None);
        assert_eq!(parse_file_name("lucia.01."), None);
        assert_eq!(parse_file_name("lucia.x1.000000"), None);
        assert_eq!(file_name(2, 7), "lucia.02.000007");
    }

    #[test]
    fn sampling_rule() {
        assert_eq!(sampled_ranks(3), vec![0, 1, 2]);
        assert_eq!(sampled_ranks(48), vec![0, 9, 18, 27, 36, 45]);
        assert_eq!(sampled_ranks(96).len(), 6);
        let r = sampled_ranks(240);
        assert_eq!(r.len(), 20);
        assert_eq!(r[1], 12);
        assert_eq!(sampled_ranks(144).last(), Some(&140));
    }

    #[test]
    fn union_of_intervals() {
        assert_eq!(covered(&mut [(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)]), 3.0);
        assert_eq!(covered(&mut [(0.0, 1.0), (0.0, 1.0)]), 1.0);
        assert_eq!(covered(&mut []), 0.0);
    }

    /// A whole rank file of ATMIFS: six exchanges of one received field from `t0` on.
    fn rank(t0: f64) -> Vec<u8> {
        let mut text = String::from("Balance: MD ATMIFS\n");
        for k in 0..6 {
            let t = t0 + f64::from(k);
            text.push_str(&format!("Balance: 001 Before MPI get {t:.5}\n"));
            text.push_str(&format!("Balance: 001 After  MPI get {:.5}\n", t + 0.5));
        }
        text.into_bytes()
    }

    #[test]
    fn a_huge_rank_number_is_counted_not_listed() {
        let file = rank(100.0);
        let r = read_in_memory(&[("lucia.01.999999999", &file)], &ReadOptions::default());
        let Ok(Reading::Measured(m)) = r else {
            panic!("{r:?}");
        };
        let partial = m.partial.unwrap_or_default();
        assert!(
            partial
                .contains("lucia.01.000000, lucia.01.000001, lucia.01.000002 and 999999996 more"),
            "{partial}"
        );
    }

    #[test]
    fn rank_files_in_any_order_read_alike() {
        let (a, b) = (rank(100.0), rank(100.1));
        let opts = ReadOptions::default();
        let sorted =
            read_in_memory(&[("lucia.01.000000", &a), ("lucia.01.000004", &b)], &opts).unwrap();
        let reversed =
            read_in_memory(&[("lucia.01.000004", &b), ("lucia.01.000000", &a)], &opts).unwrap();
        assert!(matches!(sorted, Reading::Measured(_)), "{sorted:?}");
        assert_eq!(sorted, reversed);
    }

    #[test]
    fn damaged_lines_end_the_file() {
        let text = b"Balance: MD ATMIFS\nBalance: 001 Before MPI get 10.0\nBalance: 001 After  MPI get ******\n";
        let r = parse_rank(text, "f", 0);
        assert!(
            r.damage.as_deref().unwrap().contains("overflow"),
            "{:?}",
            r.damage
        );
        assert_eq!(r.series.len(), 1);
        let r = parse_rank(b"Balance: MD X\nBalance: 001 Before MPI get 10.", "f", 0);
        assert!(r.damage.as_deref().unwrap().contains("middle of line 2"));
        assert!(r.series.is_empty());
    }
}
