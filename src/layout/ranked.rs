//! Placements of a layout tree ranked by fittingness, exactly, with threads.
//!
//! Fittingness weighs a placement's speed against its cost after a min-max normalisation over
//! every placement kept (at least as good as the base case, every component at its first
//! choice), as the side-by-side prediction does ([`crate::metrics`]). The fastest and the
//! cheapest kept placements come from the speed/PE tables of [`super::search`], but the
//! slowest kept one and the dearest do not: "the largest time under a limit" does not split
//! over `;`, whose parts' times add up (a subset sum). So this search lists the placements
//! themselves, bottom up, as (PEs, most threads, time) with the way each was made: a part's
//! list is every choice of its components, and joining two parts pairs their lists. Two
//! things keep the lists small without losing any kept placement: a part whose cores alone
//! exceed the budget, or whose own time and cores already fail the base-case test, can only
//! make a whole that does too (time, PEs and threads never fall as parts are added), so it is
//! dropped; and equal (PEs, threads, time) are kept once. [`MAX_PAIRS`] and [`MAX_KEPT`] bound
//! the work and the memory, with an error that says what to change.
//!
//! Cores are counted as CIME counts them: the PEs the layout spans times the most threads any
//! component runs. A placement's time is the layout model's ([`super::Layout::run_time`]), in
//! seconds per simulated year, so its SYPD is 86400 over it.

use std::collections::HashSet;

pub use super::choice::Choice;
use super::search::Placement;
use super::Layout;
use crate::metrics::{self, Bounds};

/// Most pairs of part placements one ranking tries before it gives up: a few seconds.
pub const MAX_PAIRS: u64 = 100_000_000;

/// Most placements one part keeps: some hundreds of megabytes with their index.
pub const MAX_KEPT: usize = 5_000_000;

/// A placement scored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Rated {
    /// The layout model's seconds per simulated year.
    pub run_s: f64,
    /// Simulated years per day, 86400 / `run_s`.
    pub sypd: f64,
    /// PEs the placement spans (one past the highest PE any component uses).
    pub width: u32,
    /// Cores as CIME counts them: `width` x the most threads.
    pub cores: u64,
    /// Cores plus the extra PEs: what CHSY counts.
    pub pes: u64,
    /// Core hours per simulated year.
    pub chsy: f64,
    /// Fittingness at the TTS_w asked for.
    pub fittingness: f64,
    /// Every component of the tree, left to right.
    pub placements: Vec<Placement>,
}

/// The kept placements of a tree and the normalisation of fittingness over them; ranking at
/// another TTS_w ([`Ranking::top`]) costs one pass over them.
#[derive(Debug)]
pub struct Ranking {
    parts: Vec<Part>,
    root: usize,
    extra_pes: u32,
    base: Entry,
    /// Kept placements, counted once per distinct PEs, threads and time.
    pub kept: u64,
    /// Min-max bounds of SYPD over the kept placements.
    pub sypd_bounds: Bounds,
    /// Min-max bounds of CHSY over the kept placements.
    pub chsy_bounds: Bounds,
}

/// A placement of a part: PEs, most threads, time, and how it was made (for a component the
/// index of its choice; for a join the indices into the two joined lists).
#[derive(Debug, Clone, Copy)]
struct Entry {
    width: u32,
    threads: u32,
    run_s: f64,
    from: (u32, u32),
}

impl Entry {
    fn cores(&self) -> u64 {
        u64::from(self.width) * u64::from(self.threads.max(1))
    }
}

#[derive(Debug)]
enum Shape {
    Component {
        name: String,
        choices: Vec<Choice>,
    },
    /// `left` then `right`, side by side (`|`) or one after the other (`;`).
    Join {
        beside: bool,
        left: usize,
        right: usize,
    },
}

#[derive(Debug)]
struct Part {
    shape: Shape,
    entries: Vec<Entry>,
}

/// What the pruning tests against: the budget and the base case.
struct Limits {
    budget: u64,
    extra: f64,
    base_sypd: f64,
    base_pes: f64,
}

impl Limits {
    /// Whether a part placement can still belong to a kept placement of the whole.
    fn may_keep(&self, e: &Entry) -> bool {
        let cores = e.cores();
        cores <= self.budget
            && metrics::beats_base_case(
                sypd_of(e.run_s),
                cores as f64 + self.extra,
                self.base_sypd,
                self.base_pes,
            )
    }
}

fn sypd_of(run_s: f64) -> f64 {
    metrics::SECONDS_PER_DAY / run_s
}

/// Ranks every placement of `layout` within `budget` cores, each component taking one of
/// `choices(name)` (in any order; its first by cores, then threads, then tasks, is its base
/// case), with `extra_pes` counted in CHSY. Errors in one line when a component has no choice,
/// the base case does not fit, or the placements are too many to list.
pub fn rank(
    layout: &Layout,
    budget: u32,
    extra_pes: u32,
    choices: &dyn Fn(&str) -> Vec<Choice>,
) -> Result<Ranking, String> {
    let mut named: Vec<(String, Vec<Choice>)> = Vec::new();
    for name in layout.components() {
        let mut list: Vec<Choice> = choices(name)
            .into_iter()
            .filter(|c| c.tasks > 0 && c.run_s.is_finite() && c.run_s > 0.0)
            .collect();
        list.sort_by(|a, b| {
            (a.cores(), a.threads, a.tasks)
                .cmp(&(b.cores(), b.threads, b.tasks))
                .then(a.run_s.total_cmp(&b.run_s))
        });
        if list.is_empty() {
            return Err(format!(
                "component {name} has no task count to run at; widen its curve, its limits or max_nproc"
            ));
        }
        named.push((name.to_string(), list));
    }
    let first = |n: &str| named.iter().find(|(m, _)| m == n).map(|(_, l)| l[0]);
    let base_width = layout.width(&|n| first(n).map(|c| c.tasks));
    let base_threads = named.iter().map(|(_, l)| l[0].threads).max().unwrap_or(1);
    let base_run_s = layout
        .run_time(&|n| first(n).map(|c| c.run_s))
        .map_err(|n| format!("component {n} has no time"))?;
    let base_cores = u64::from(base_width) * u64::from(base_threads.max(1));
    if base_cores > u64::from(budget) {
        return Err(format!(
            "the base case of {layout} (every component at its first task count) takes {base_cores} cores, more than max_nproc = {budget}; raise max_nproc or lower the components' first task counts"
        ));
    }
    let limits = Limits {
        budget: u64::from(budget),
        extra: f64::from(extra_pes),
        base_sypd: sypd_of(base_run_s),
        base_pes: base_cores as f64 + f64::from(extra_pes),
    };
    let mut parts = Vec::new();
    let mut work = 0u64;
    let root = build(layout, &named, &limits, &mut parts, &mut work)?;
    let pes = |e: &Entry| e.cores() as f64 + limits.extra;
    let entries = &parts[root].entries;
    let sypd_bounds = Bounds::of(entries.iter().map(|e| sypd_of(e.run_s)));
    let chsy_bounds = Bounds::of(
        entries
            .iter()
            .map(|e| metrics::chsy(pes(e), sypd_of(e.run_s))),
    );
    let (Some(sypd_bounds), Some(chsy_bounds)) = (sypd_bounds, chsy_bounds) else {
        return Err(format!(
            "no placement of {layout} fits max_nproc = {budget}"
        ));
    };
    Ok(Ranking {
        kept: entries.len() as u64,
        parts,
        root,
        extra_pes,
        base: Entry {
            width: base_width,
            threads: base_threads,
            run_s: base_run_s,
            from: (0, 0),
        },
        sypd_bounds,
        chsy_bounds,
    })
}

/// PEs a tree spans at these task counts: `|` adds its parts' PEs, `;` takes the widest.
fn build(
    layout: &Layout,
    named: &[(String, Vec<Choice>)],
    limits: &Limits,
    parts: &mut Vec<Part>,
    work: &mut u64,
) -> Result<usize, String> {
    match layout {
        Layout::Component(name) => {
            let choices = named
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l.clone())
                .unwrap_or_default();
            let entries = choices
                .iter()
                .enumerate()
                .map(|(i, c)| Entry {
                    width: c.tasks,
                    threads: c.threads.max(1),
                    run_s: c.run_s,
                    from: (i as u32, 0),
                })
                .filter(|e| limits.may_keep(e))
                .collect();
            parts.push(Part {
                shape: Shape::Component {
                    name: name.clone(),
                    choices,
                },
                entries,
            });
            Ok(parts.len() - 1)
        }
        Layout::Beside(list) | Layout::After(list) => {
            let beside = matches!(layout, Layout::Beside(_));
            let mut acc = build(&list[0], named, limits, parts, work)?;
            for next in &list[1..] {
                let right = build(next, named, limits, parts, work)?;
                acc = join(beside, acc, right, limits, parts, work)?;
            }
            Ok(acc)
        }
    }
}

/// Pairs the placements of two parts, keeping those that may still be kept, once each.
fn join(
    beside: bool,
    left: usize,
    right: usize,
    limits: &Limits,
    parts: &mut Vec<Part>,
    work: &mut u64,
) -> Result<usize, String> {
    let (l, r) = (&parts[left].entries, &parts[right].entries);
    let too_many = |what: String| {
        Err(format!(
            "the layout has too many placements to rank by fittingness exactly ({what}); raise step, give the components allowed task counts, or lower max_nproc"
        ))
    };
    *work = work.saturating_add(l.len() as u64 * r.len() as u64);
    if *work > MAX_PAIRS {
        return too_many(format!("more than {MAX_PAIRS} pairs of parts"));
    }
    let mut seen: HashSet<(u32, u32, u64)> = HashSet::new();
    let mut entries = Vec::new();
    for (i, a) in l.iter().enumerate() {
        for (j, b) in r.iter().enumerate() {
            let e = Entry {
                width: if beside {
                    a.width + b.width
                } else {
                    a.width.max(b.width)
                },
                threads: a.threads.max(b.threads),
                run_s: if beside {
                    a.run_s.max(b.run_s)
                } else {
                    a.run_s + b.run_s
                },
                from: (i as u32, j as u32),
            };
            if limits.may_keep(&e) && seen.insert((e.width, e.threads, e.run_s.to_bits())) {
                entries.push(e);
                if entries.len() > MAX_KEPT {
                    return too_many(format!("more than {MAX_KEPT} of one part"));
                }
            }
        }
    }
    parts.push(Part {
        shape: Shape::Join {
            beside,
            left,
            right,
        },
        entries,
    });
    Ok(parts.len() - 1)
}

impl Ranking {
    /// The `n` best kept placements at `tts_w`: fittingness descending, then cores ascending,
    /// then time ascending.
    pub fn top(&self, tts_w: f64, n: usize) -> Vec<Rated> {
        let entries = &self.parts[self.root].entries;
        let mut scored: Vec<(f64, u64, f64, usize)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (self.fittingness(e, tts_w), e.cores(), e.run_s, i))
            .collect();
        let order = |a: &(f64, u64, f64, usize), b: &(f64, u64, f64, usize)| {
            b.0.total_cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
                .then(a.3.cmp(&b.3))
        };
        let n = n.min(scored.len());
        if n == 0 {
            return Vec::new();
        }
        if n < scored.len() {
            scored.select_nth_unstable_by(n - 1, order);
            scored.truncate(n);
        }
        scored.sort_by(order);
        scored
            .into_iter()
            .map(|(_, _, _, i)| {
                let e = entries[i];
                let mut placements = Vec::new();
                self.place(self.root, i, 0, &mut placements);
                self.rated(&e, placements, tts_w)
            })
            .collect()
    }

    /// The base case (every component at its first choice), scored; its placements are left
    /// empty.
    pub fn base(&self, tts_w: f64) -> Rated {
        self.rated(&self.base, Vec::new(), tts_w)
    }

    fn fittingness(&self, e: &Entry, tts_w: f64) -> f64 {
        let sypd = sypd_of(e.run_s);
        let chsy = metrics::chsy(self.pes(e), sypd);
        metrics::fittingness_in(tts_w, sypd, chsy, &self.sypd_bounds, &self.chsy_bounds)
    }

    fn pes(&self, e: &Entry) -> f64 {
        e.cores() as f64 + f64::from(self.extra_pes)
    }

    fn rated(&self, e: &Entry, placements: Vec<Placement>, tts_w: f64) -> Rated {
        let sypd = sypd_of(e.run_s);
        Rated {
            run_s: e.run_s,
            sypd,
            width: e.width,
            cores: e.cores(),
            pes: e.cores() + u64::from(self.extra_pes),
            chsy: metrics::chsy(self.pes(e), sypd),
            fittingness: self.fittingness(e, tts_w),
            placements,
        }
    }

    /// Places entry `i` of part `part` from PE `root`.
    fn place(&self, part: usize, i: usize, root: u32, out: &mut Vec<Placement>) {
        let e = self.parts[part].entries[i];
        match &self.parts[part].shape {
            Shape::Component { name, choices } => {
                let c = choices[e.from.0 as usize];
                out.push(Placement {
                    name: name.clone(),
                    tasks: c.tasks,
                    threads: c.threads.max(1),
                    root_pe: root,
                });
            }
            Shape::Join {
                beside,
                left,
                right,
            } => {
                let (a, b) = (e.from.0 as usize, e.from.1 as usize);
                self.place(*left, a, root, out);
                let shift = if *beside {
                    self.parts[*left].entries[a].width
                } else {
                    0
                };
                self.place(*right, b, root + shift, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::choice::oracle::{every_placement, random_tree};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    fn random_choices(rng: &mut StdRng, names: &[String]) -> BTreeMap<String, Vec<Choice>> {
        let mut out = BTreeMap::new();
        for n in names {
            let mut list: Vec<Choice> = (0..rng.random_range(1..=4))
                .map(|_| Choice {
                    tasks: rng.random_range(1..=10),
                    threads: [1, 1, 2, 3][rng.random_range(0..4)],
                    // Whole seconds make equal times common, so ties are tested too.
                    run_s: f64::from(rng.random_range(1..=40)),
                })
                .collect();
            list.sort_by_key(|c| (c.cores(), c.threads, c.tasks));
            list.dedup_by_key(|c| (c.tasks, c.threads));
            out.insert(n.clone(), list);
        }
        out
    }

    #[test]
    fn the_ranking_is_what_scoring_every_placement_gives() {
        let mut rng = StdRng::seed_from_u64(3737);
        let mut checked = 0;
        for case in 0..400 {
            let mut names = Vec::new();
            let tree = random_tree(&mut rng, &mut names, 3);
            let choices = random_choices(&mut rng, &names);
            let budget = rng.random_range(4..=60);
            let extra = rng.random_range(0..=3);
            let tts_w = [0.0, 0.3, 0.5, 1.0][case % 4];
            let all = every_placement(&tree, budget, &choices);
            // The base case: every component at its first choice.
            let base = &choices;
            let base_w = tree.width(&|n| Some(base[n][0].tasks));
            let base_t = base.values().map(|l| l[0].threads).max().unwrap();
            let base_cores = u64::from(base_w) * u64::from(base_t);
            let ranked = rank(&tree, budget, extra, &|n| choices[n].clone());
            if base_cores > u64::from(budget) {
                assert!(ranked.unwrap_err().contains("base case"), "case {case}");
                continue;
            }
            let ranking = ranked.unwrap();
            let base_run = tree.run_time(&|n| Some(base[n][0].run_s)).unwrap();
            let pes = |w: u32, t: u32| (u64::from(w) * u64::from(t)) as f64 + f64::from(extra);
            let base_pes = pes(base_w, base_t);
            // Placements of equal PEs, threads and time are one row of the ranking.
            let mut seen = HashSet::new();
            let kept: Vec<_> = all
                .iter()
                .filter(|(t, w, th, _)| {
                    metrics::beats_base_case(
                        86_400.0 / t,
                        pes(*w, *th),
                        86_400.0 / base_run,
                        base_pes,
                    )
                })
                .filter(|(t, w, th, _)| seen.insert((*w, *th, t.to_bits())))
                .collect();
            assert_eq!(ranking.kept, kept.len() as u64, "case {case}: {tree}");
            let sb = Bounds::of(kept.iter().map(|k| 86_400.0 / k.0)).unwrap();
            let cb = Bounds::of(
                kept.iter()
                    .map(|k| metrics::chsy(pes(k.1, k.2), 86_400.0 / k.0)),
            )
            .unwrap();
            assert_eq!(ranking.sypd_bounds, sb, "case {case}: {tree}");
            assert_eq!(ranking.chsy_bounds, cb, "case {case}: {tree}");
            let mut expected: Vec<(f64, u64, f64)> = kept
                .iter()
                .map(|(t, w, th, _)| {
                    let s = 86_400.0 / t;
                    let fnv =
                        metrics::fittingness_in(tts_w, s, metrics::chsy(pes(*w, *th), s), &sb, &cb);
                    (fnv, u64::from(*w) * u64::from(*th), *t)
                })
                .collect();
            expected.sort_by(|a, b| {
                b.0.total_cmp(&a.0)
                    .then(a.1.cmp(&b.1))
                    .then(a.2.total_cmp(&b.2))
            });
            let n = 6;
            let top = ranking.top(tts_w, n);
            let got: Vec<(f64, u64, f64)> = top
                .iter()
                .map(|r| (r.fittingness, r.cores, r.run_s))
                .collect();
            let want: Vec<(f64, u64, f64)> = expected.iter().take(n).copied().collect();
            assert_eq!(got, want, "case {case}: {tree}");
            // Each row's placement is real: its components' choices give its time, PEs and
            // threads, and `|` parts sit on disjoint PEs.
            for row in &top {
                let pick = |name: &str| {
                    let p = row.placements.iter().find(|p| p.name == name).unwrap();
                    *choices[name]
                        .iter()
                        .find(|c| c.tasks == p.tasks && c.threads == p.threads)
                        .unwrap()
                };
                let t = tree.run_time(&|n| Some(pick(n).run_s)).unwrap();
                assert_eq!(t, row.run_s, "case {case}");
                let ranges: Vec<(String, super::super::PeRange)> = row
                    .placements
                    .iter()
                    .map(|p| {
                        let r = super::super::PeRange {
                            tasks: p.tasks,
                            threads: p.threads,
                            root_pe: p.root_pe,
                            stride: 1,
                        };
                        (p.name.clone(), r)
                    })
                    .collect();
                let cores = super::super::cores(&ranges.iter().map(|r| r.1).collect::<Vec<_>>());
                assert_eq!(cores, row.cores, "case {case}");
                assert!(cores <= u64::from(budget));
                let range = |n: &str| ranges.iter().find(|r| r.0 == n).unwrap().1;
                for (a, b) in side_by_side(&tree) {
                    let (ra, rb) = (range(&a), range(&b));
                    let disjoint =
                        ra.end() <= u64::from(rb.root_pe) || rb.end() <= u64::from(ra.root_pe);
                    assert!(disjoint, "case {case}: {a} and {b} overlap in {row:?}");
                }
            }
            checked += 1;
        }
        assert!(checked > 200, "{checked}");
    }

    /// Every pair of components the tree puts side by side.
    fn side_by_side(tree: &Layout) -> Vec<(String, String)> {
        let mut out = Vec::new();
        match tree {
            Layout::Component(_) => {}
            Layout::Beside(parts) | Layout::After(parts) => {
                if matches!(tree, Layout::Beside(_)) {
                    for (i, a) in parts.iter().enumerate() {
                        for b in &parts[i + 1..] {
                            for x in a.components() {
                                for y in b.components() {
                                    out.push((x.to_string(), y.to_string()));
                                }
                            }
                        }
                    }
                }
                parts.iter().for_each(|p| out.extend(side_by_side(p)));
            }
        }
        out
    }

    #[test]
    fn too_many_placements_are_refused_in_one_line() {
        let tree = Layout::parse("a ; b ; c ; d").unwrap();
        let many: Vec<Choice> = (1..=200)
            .map(|k| Choice {
                tasks: k,
                threads: 1,
                run_s: 1e4 / f64::from(k) + f64::from(k) * 1e-3,
            })
            .collect();
        let e = rank(&tree, 200, 0, &|_| many.clone()).unwrap_err();
        assert!(e.contains("raise step") && !e.contains('\n'), "{e}");
        let e = rank(&tree, 200, 0, &|n| {
            if n == "c" {
                Vec::new()
            } else {
                many.clone()
            }
        })
        .unwrap_err();
        assert!(e.contains("component c"), "{e}");
    }
}
