//! Raw LUCIA files of OASIS3-MCT 3/4: `lucia.CC.RRRRRR`, one per sampled rank.
//!
//! The analysis follows the guide's `timing.md` (what CERFACS' `lucia` post-processor
//! computes):
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

mod analyse;
use analyse::analyse;

/// Exchanges skipped at the start (initialisation).
pub const SKIP_FIRST: usize = 2;
/// Exchanges skipped at the end (termination).
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

/// Which ranks write a LUCIA file when a component runs on `nproc` PEs (the guide's `timing.md`):
/// all of them below 20 PEs, every `nproc / 5`-th below 100, every `nproc / 20`-th otherwise.
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

#[cfg(test)]
mod tests {
    use super::analyse::covered;
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
