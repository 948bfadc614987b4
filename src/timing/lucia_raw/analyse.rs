//! The analysis half of the raw LUCIA reader: the parsed rank files of each component
//! grouped, checked for a complete rank set, cut to the exchanges every rank wrote, and
//! turned into one measurement (waiting, sending, interpolation, jitter and computing per
//! step, as the parent module's documentation defines them). Parsing the files is the
//! parent's job; this half never reads a file.

use super::*;

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

pub(super) fn analyse(
    parsed: Vec<(u32, RankFile)>,
    opts: &ReadOptions,
) -> Result<Reading, TimingError> {
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
        notes.push(crate::timing::PERIOD_UNKNOWN.into());
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
pub(super) fn covered(intervals: &mut [(f64, f64)]) -> f64 {
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
