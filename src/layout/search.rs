//! The fastest placement of a layout tree within a budget of PEs: an exact search.
//!
//! Every component may take one of its allowed task counts. Parts side by side (`|`) divide
//! the PEs between them; parts one after the other (`;`) each may use all of them. The search
//! is a dynamic programme over the tree: for every node and every budget `P` it keeps the best
//! time with at most `P` PEs, a component taking its best allowed count that fits, `;` adding its
//! parts' best times at `P`, and `|` trying every division of `P` between a part and the parts
//! before it. That is exact for the layout model ([`Layout::run_time`]) and takes
//! O(components x P^2) steps; [`MAX_UNITS`] bounds `P`. Budgets are counted in units of PEs
//! (1 for single PEs; a node's cores keeps every part of a `|` on whole nodes), and a component
//! with `n` tasks takes `ceil(n / unit)` units. Of placements equally fast, the one on the
//! fewest units is kept, and [`front`] reads the speed/PE front from the same tables.

use std::collections::HashMap;

pub use super::choice::Choice;
use super::Layout;

/// The most units (budget / unit) a search takes: the search is quadratic in them.
pub const MAX_UNITS: u32 = 20_000;

/// Where one component goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// The component.
    pub name: String,
    /// Its MPI tasks.
    pub tasks: u32,
    /// OpenMP threads per task.
    pub threads: u32,
    /// Its first PE.
    pub root_pe: u32,
}

/// The fastest placement found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Best {
    /// The layout model's time for it.
    pub run_s: f64,
    /// PEs it spans (one past the highest PE any component uses).
    pub width: u32,
    /// Cores as CIME counts them: `width` x the most threads any component runs.
    pub cores: u64,
    /// Every component of the tree, left to right.
    pub placements: Vec<Placement>,
}

/// A node's best times by budget, and how each was reached.
struct Table {
    /// `best[p]`: the least time with at most `p` units, if any placement fits.
    best: Vec<Option<f64>>,
    how: How,
}

enum How {
    /// The count a component takes at each budget.
    Component { name: String, pick: Vec<u32> },
    /// Parts one after the other: each gets the whole budget.
    After(Vec<Table>),
    /// Parts side by side; `split[i][p]`: units part `i` takes when parts `0..=i` share `p`.
    Beside {
        parts: Vec<Table>,
        split: Vec<Vec<u32>>,
    },
}

/// The fastest placement of `layout` on at most `budget` PEs counted in units of `unit`, each
/// component taking one of `counts(name)` tasks in `time(name, tasks)` seconds (`None`: that
/// count cannot run). `Ok(None)` when nothing fits; `Err` when the budget is too large to search.
pub fn fastest(
    layout: &Layout,
    budget: u32,
    unit: u32,
    counts: &dyn Fn(&str) -> Vec<u32>,
    time: &dyn Fn(&str, u32) -> Option<f64>,
) -> Result<Option<Best>, String> {
    Ok(front(layout, budget, unit, 1, counts, time)?.pop())
}

/// The speed/PE front of `layout` within `budget`, fastest first, at most `n` placements: the
/// fastest placement, then the fastest on fewer PEs than that one takes, and so on; each is
/// the fastest placement on at most its own width, so every row is a layout no other placement
/// beats on both time and PEs. It costs one search ([`fastest`]) however large `n` is: the
/// search already holds the best time at every budget.
pub fn front(
    layout: &Layout,
    budget: u32,
    unit: u32,
    n: usize,
    counts: &dyn Fn(&str) -> Vec<u32>,
    time: &dyn Fn(&str, u32) -> Option<f64>,
) -> Result<Vec<Best>, String> {
    let unit = unit.max(1);
    let units = budget / unit;
    if units > MAX_UNITS {
        return Err(format!(
            "a budget of {budget} PEs is {units} units of {unit}; the exact search takes at most {MAX_UNITS}: count in larger units (a node's cores)"
        ));
    }
    let table = build(layout, units as usize, unit, counts, time);
    let mut out: Vec<Best> = Vec::new();
    let mut p = units as usize;
    while out.len() < n {
        let Some(run_s) = table.best[p] else {
            break;
        };
        // The fewest units that reach the same time: ties go to the narrower placement.
        while p > 0 && table.best[p - 1] == Some(run_s) {
            p -= 1;
        }
        let mut placements = Vec::new();
        place(&table, p, 0, unit, &mut placements);
        let width = placements
            .iter()
            .map(|p| p.root_pe + p.tasks)
            .max()
            .unwrap_or(0);
        out.push(Best {
            run_s,
            width,
            cores: u64::from(width),
            placements,
        });
        // The next row: the fastest on fewer units than this one spans, if it is slower.
        let spans = units_of(width, unit);
        let Some(next) = (0..spans).rev().find(|&q| table.best[q].is_some()) else {
            break;
        };
        p = next;
    }
    Ok(out)
}

/// [`front`] with threads: each component runs as one of `choices(name)` (tasks, threads per
/// task, seconds), and the budget counts cores as CIME does: the PEs the layout spans times the
/// most threads any component runs. For every thread count `T` that occurs, the search of
/// [`front`] runs with each component at its fastest choice of at most `T` threads on
/// `budget / T` PEs; the fastest placement within `c` cores is then the fastest of those at
/// `c / T` PEs. That is exact: a placement whose most threads are `T` is in the search at `T`,
/// and every placement a search at `T` finds takes at most `T` threads. Without threads it is one
/// search, as [`front`].
pub fn front_threaded(
    layout: &Layout,
    budget: u32,
    unit: u32,
    n: usize,
    choices: &dyn Fn(&str) -> Vec<Choice>,
) -> Result<Vec<Best>, String> {
    let unit = unit.max(1);
    let named: Vec<(String, Vec<Choice>)> = layout
        .components()
        .into_iter()
        .map(|c| (c.to_string(), choices(c)))
        .collect();
    let mut levels: Vec<u32> = named
        .iter()
        .flat_map(|(_, l)| l.iter().map(|c| c.threads.max(1)))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    // Per thread count and component: the fastest choice of each task count at most that many
    // threads (fewer threads on equal times), looked up by tasks.
    let fastest_by_tasks = |t: u32| -> FastestByTasks<'_> {
        let mut out: FastestByTasks<'_> = HashMap::new();
        for (name, choices) in &named {
            let by = out.entry(name.as_str()).or_default();
            for c in choices
                .iter()
                .filter(|c| c.threads.max(1) <= t && c.run_s.is_finite())
            {
                let new = (c.run_s, c.threads.max(1));
                let slot = by.entry(c.tasks).or_insert(new);
                if new.0.total_cmp(&slot.0).then(new.1.cmp(&slot.1)).is_lt() {
                    *slot = new;
                }
            }
        }
        out
    };
    let picks: Vec<FastestByTasks<'_>> = levels.iter().map(|&t| fastest_by_tasks(t)).collect();
    let pick = |level: usize, name: &str, tasks: u32| -> Option<(f64, u32)> {
        picks[level].get(name)?.get(&tasks).copied()
    };
    let mut tables = Vec::new();
    for (level, &t) in levels.iter().enumerate() {
        let units = budget / t / unit;
        if units > MAX_UNITS {
            return Err(format!(
                "a budget of {budget} cores is {units} units of {unit} PEs at {t} thread(s); the exact search takes at most {MAX_UNITS}: count in larger units (a node's cores)"
            ));
        }
        let counts = |name: &str| -> Vec<u32> {
            picks[level]
                .get(name)
                .map(|m| m.keys().copied().collect())
                .unwrap_or_default()
        };
        let time = |name: &str, tasks: u32| pick(level, name, tasks).map(|p| p.0);
        tables.push((
            t,
            level,
            build(layout, units as usize, unit, &counts, &time),
        ));
    }
    let mut out: Vec<Best> = Vec::new();
    let mut cores = u64::from(budget);
    while out.len() < n {
        let at = |t: u32, table: &Table| {
            let p = (cores / u64::from(t * unit)) as usize;
            (p, table.best[p.min(table.best.len() - 1)])
        };
        let Some(run_s) = tables
            .iter()
            .filter_map(|(t, _, table)| at(*t, table).1)
            .min_by(f64::total_cmp)
        else {
            break;
        };
        let mut found: Option<Best> = None;
        for (t, level, table) in &tables {
            let (mut p, time) = at(*t, table);
            if time != Some(run_s) {
                continue;
            }
            p = p.min(table.best.len() - 1);
            while p > 0 && table.best[p - 1] == Some(run_s) {
                p -= 1;
            }
            let mut placements = Vec::new();
            place(table, p, 0, unit, &mut placements);
            for pl in &mut placements {
                pl.threads = pick(*level, &pl.name, pl.tasks).map_or(1, |p| p.1);
            }
            let width = placements
                .iter()
                .map(|p| p.root_pe + p.tasks)
                .max()
                .unwrap_or(0);
            let most = placements.iter().map(|p| p.threads).max().unwrap_or(1);
            let best = Best {
                run_s,
                width,
                cores: u64::from(width) * u64::from(most),
                placements,
            };
            if found.as_ref().is_none_or(|f| best.cores < f.cores) {
                found = Some(best);
            }
        }
        let Some(best) = found else { break };
        let Some(fewer) = best.cores.checked_sub(1) else {
            out.push(best);
            break;
        };
        cores = fewer;
        out.push(best);
    }
    Ok(out)
}

/// Per component, each task count's fastest (seconds, threads) at most some thread count.
type FastestByTasks<'a> = HashMap<&'a str, HashMap<u32, (f64, u32)>>;

fn units_of(tasks: u32, unit: u32) -> usize {
    tasks.div_ceil(unit) as usize
}

fn build(
    layout: &Layout,
    units: usize,
    unit: u32,
    counts: &dyn Fn(&str) -> Vec<u32>,
    time: &dyn Fn(&str, u32) -> Option<f64>,
) -> Table {
    match layout {
        Layout::Component(name) => {
            let mut first: Vec<Option<(f64, u32)>> = vec![None; units + 1];
            let mut allowed = counts(name);
            allowed.sort_unstable();
            allowed.dedup();
            for n in allowed.into_iter().filter(|&n| n > 0) {
                let need = units_of(n, unit);
                let Some(t) = time(name, n).filter(|t| t.is_finite()) else {
                    continue;
                };
                if need <= units && first[need].is_none_or(|(old, _)| t < old) {
                    first[need] = Some((t, n));
                }
            }
            let mut best = vec![None; units + 1];
            let mut pick = vec![0; units + 1];
            let mut running: Option<(f64, u32)> = None;
            for p in 0..=units {
                if let Some((t, n)) = first[p] {
                    if running.is_none_or(|(old, _)| t < old) {
                        running = Some((t, n));
                    }
                }
                if let Some((t, n)) = running {
                    best[p] = Some(t);
                    pick[p] = n;
                }
            }
            Table {
                best,
                how: How::Component {
                    name: name.clone(),
                    pick,
                },
            }
        }
        Layout::After(parts) => {
            let tables: Vec<Table> = parts
                .iter()
                .map(|p| build(p, units, unit, counts, time))
                .collect();
            let best = (0..=units)
                .map(|p| tables.iter().map(|t| t.best[p]).sum::<Option<f64>>())
                .collect();
            Table {
                best,
                how: How::After(tables),
            }
        }
        Layout::Beside(parts) => {
            let tables: Vec<Table> = parts
                .iter()
                .map(|p| build(p, units, unit, counts, time))
                .collect();
            let mut acc = tables[0].best.clone();
            let mut split = vec![Vec::new()];
            for t in &tables[1..] {
                let mut next = vec![None; units + 1];
                let mut took = vec![0u32; units + 1];
                for p in 0..=units {
                    for mine in 0..=p {
                        let (Some(a), Some(b)) = (acc[p - mine], t.best[mine]) else {
                            continue;
                        };
                        let both = a.max(b);
                        if next[p].is_none_or(|old| both < old) {
                            next[p] = Some(both);
                            took[p] = mine as u32;
                        }
                    }
                }
                acc = next;
                split.push(took);
            }
            Table {
                best: acc,
                how: How::Beside {
                    parts: tables,
                    split,
                },
            }
        }
    }
}

/// Places `table`'s choice at budget `p` from PE `root`; returns the PEs it spans.
fn place(table: &Table, p: usize, root: u32, unit: u32, out: &mut Vec<Placement>) -> u32 {
    match &table.how {
        How::Component { name, pick } => {
            let tasks = pick[p];
            out.push(Placement {
                name: name.clone(),
                tasks,
                threads: 1,
                root_pe: root,
            });
            // A part beside others starts on a unit boundary.
            units_of(tasks, unit) as u32 * unit
        }
        How::After(parts) => parts
            .iter()
            .map(|t| place(t, p, root, unit, out))
            .max()
            .unwrap_or(0),
        How::Beside { parts, split } => {
            let mut budgets = vec![0usize; parts.len()];
            let mut left = p;
            for i in (1..parts.len()).rev() {
                budgets[i] = split[i][left] as usize;
                left -= budgets[i];
            }
            budgets[0] = left;
            let mut offset = 0;
            for (t, b) in parts.iter().zip(budgets) {
                offset += place(t, b, root + offset, unit, out);
            }
            offset
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::choice::oracle::random_tree;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// Width of an assignment of task counts on the tree: `|` adds, `;` takes the largest.
    fn width(l: &Layout, tasks: &BTreeMap<String, u32>) -> u32 {
        match l {
            Layout::Component(n) => tasks[n],
            Layout::Beside(parts) => parts.iter().map(|p| width(p, tasks)).sum(),
            Layout::After(parts) => parts.iter().map(|p| width(p, tasks)).max().unwrap_or(0),
        }
    }

    /// The best time by trying every combination of allowed counts.
    fn enumerate(
        l: &Layout,
        budget: u32,
        counts: &BTreeMap<String, Vec<u32>>,
        times: &BTreeMap<(String, u32), f64>,
    ) -> Option<f64> {
        let names: Vec<String> = l.components().iter().map(|s| s.to_string()).collect();
        let mut best: Option<f64> = None;
        let mut idx = vec![0usize; names.len()];
        loop {
            let tasks: BTreeMap<String, u32> = names
                .iter()
                .zip(&idx)
                .map(|(n, &i)| (n.clone(), counts[n][i]))
                .collect();
            if width(l, &tasks) <= budget {
                let t = l
                    .run_time(&|n: &str| times.get(&(n.to_string(), tasks[n])).copied())
                    .unwrap();
                best = Some(best.map_or(t, |b: f64| b.min(t)));
            }
            let mut k = 0;
            loop {
                if k == names.len() {
                    return best;
                }
                idx[k] += 1;
                if idx[k] < counts[&names[k]].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    #[test]
    fn the_search_finds_what_plain_enumeration_finds() {
        let mut rng = StdRng::seed_from_u64(37);
        for case in 0..300 {
            let mut names = Vec::new();
            let tree = random_tree(&mut rng, &mut names, 3);
            let mut counts = BTreeMap::new();
            let mut times = BTreeMap::new();
            for n in &names {
                let mut c: Vec<u32> = (0..rng.random_range(1..=4))
                    .map(|_| rng.random_range(1..=12))
                    .collect();
                c.sort_unstable();
                c.dedup();
                for &k in &c {
                    times.insert((n.clone(), k), rng.random_range(1.0..100.0));
                }
                counts.insert(n.clone(), c);
            }
            let budget = rng.random_range(1..=30);
            let expected = enumerate(&tree, budget, &counts, &times);
            let found = fastest(&tree, budget, 1, &|n| counts[n].clone(), &|n, k| {
                times.get(&(n.to_string(), k)).copied()
            })
            .unwrap();
            assert_eq!(
                found.as_ref().map(|b| b.run_s),
                expected,
                "case {case}: {tree}"
            );
            let Some(best) = found else { continue };
            // Every row of the front is the fastest any combination reaches on its width, and
            // nothing is as fast on fewer PEs.
            let rows = front(&tree, budget, 1, 4, &|n| counts[n].clone(), &|n, k| {
                times.get(&(n.to_string(), k)).copied()
            })
            .unwrap();
            assert_eq!(rows[0], best, "case {case}");
            for row in &rows {
                assert_eq!(
                    enumerate(&tree, row.width, &counts, &times),
                    Some(row.run_s),
                    "case {case}"
                );
                if row.width > 0 {
                    let narrower = enumerate(&tree, row.width - 1, &counts, &times);
                    assert!(narrower.is_none_or(|t| t > row.run_s), "case {case}");
                }
            }
            // The placement is real: within the budget, disjoint where `|` says, and its
            // time by the tree is the time reported.
            assert!(best.width <= budget, "case {case}");
            let tasks: BTreeMap<String, u32> = best
                .placements
                .iter()
                .map(|p| (p.name.clone(), p.tasks))
                .collect();
            let t = tree
                .run_time(&|n: &str| times.get(&(n.to_string(), tasks[n])).copied())
                .unwrap();
            assert_eq!(t, best.run_s, "case {case}");
            let ranges: Vec<(String, super::super::PeRange)> = best
                .placements
                .iter()
                .map(|p| {
                    (
                        p.name.clone(),
                        super::super::PeRange {
                            tasks: p.tasks,
                            threads: p.threads,
                            root_pe: p.root_pe,
                            stride: 1,
                        },
                    )
                })
                .collect();
            assert!(
                super::super::cores(&ranges.iter().map(|r| r.1).collect::<Vec<_>>())
                    <= u64::from(budget)
            );
        }
    }

    #[test]
    fn cesm_default_on_a_budget() {
        // Times inversely proportional to tasks: work / n.
        let work = |n: &str| match n {
            "ocn" => 400.0,
            "atm" => 600.0,
            "ice" => 100.0,
            "lnd" => 80.0,
            _ => 0.0,
        };
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let best = fastest(&tree, 100, 1, &|_| (1..=100).collect(), &|n, k| {
            Some(work(n) / f64::from(k))
        })
        .unwrap()
        .unwrap();
        assert!(best.width <= 100);
        let get = |n: &str| {
            best.placements
                .iter()
                .find(|p| p.name == n)
                .unwrap()
                .clone()
        };
        let (ocn, atm, ice, lnd) = (get("ocn"), get("atm"), get("ice"), get("lnd"));
        // ocn first, the rest beside it; ice and lnd side by side on atm's PEs.
        assert_eq!(ocn.root_pe, 0);
        assert_eq!(atm.root_pe, ocn.tasks);
        assert_eq!(ice.root_pe, atm.root_pe);
        assert_eq!(lnd.root_pe, ice.root_pe + ice.tasks);
        assert!(ice.tasks + lnd.tasks <= 100 - ocn.tasks && atm.tasks <= 100 - ocn.tasks);
        // Work 400 on ocn against 600 + 180 on the rest: the balance is near 400/n = 780/(100-n).
        assert!(
            (best.run_s - 400.0 / f64::from(ocn.tasks)).abs() < 1e-9
                || best.run_s > 400.0 / f64::from(ocn.tasks)
        );
        assert!(best.run_s < 12.0, "{best:?}");
        let too_big = fastest(&tree, 1_000_000, 1, &|_| vec![1], &|_, _| Some(1.0));
        assert!(too_big.unwrap_err().contains("larger units"));
        assert_eq!(
            fastest(&tree, 3, 1, &|_| vec![2], &|_, _| Some(1.0)).unwrap(),
            None
        );
    }
}

/// The `./xmlchange` lines that give a placement in a CIME case: per component its class's
/// `NTASKS`, `ROOTPE` and `NTHRDS` (`threads(name)`), then `./case.setup --reset`, which a
/// changed layout needs before the case is built again.
pub fn xmlchange_lines(placements: &[Placement], threads: &dyn Fn(&str) -> u32) -> String {
    let mut out = String::new();
    for p in placements {
        let class = p.name.to_ascii_uppercase();
        out.push_str(&format!(
            "./xmlchange NTASKS_{class}={},ROOTPE_{class}={},NTHRDS_{class}={}\n",
            p.tasks,
            p.root_pe,
            threads(&p.name).max(1)
        ));
    }
    out.push_str("./case.setup --reset\n");
    out
}

#[cfg(test)]
mod front_tests {
    use super::*;

    #[test]
    fn the_front_starts_at_the_fastest_and_each_row_takes_fewer_pes_for_more_time() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let work = |n: &str| match n {
            "ocn" => 300.0,
            "atm" => 500.0,
            _ => 90.0,
        };
        let counts = |_: &str| (1..=40).step_by(3).collect::<Vec<u32>>();
        let time = |n: &str, k: u32| Some(work(n) / f64::from(k) + 0.5);
        let rows = front(&tree, 64, 1, 6, &counts, &time).unwrap();
        let best = fastest(&tree, 64, 1, &counts, &time).unwrap().unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0], best);
        for pair in rows.windows(2) {
            assert!(pair[1].width < pair[0].width, "{pair:?}");
            assert!(pair[1].run_s > pair[0].run_s, "{pair:?}");
            // Each row is the fastest within its own width.
            let again = fastest(&tree, pair[1].width, 1, &counts, &time)
                .unwrap()
                .unwrap();
            assert_eq!(again.run_s, pair[1].run_s);
        }
    }
}

#[cfg(test)]
mod threaded_tests {
    use super::*;
    use crate::layout::choice::oracle::{every_placement, random_tree};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// The least time of any placement on at most `cores` cores (PEs spanned x most threads).
    fn fastest_within(
        tree: &Layout,
        cores: u64,
        choices: &BTreeMap<String, Vec<Choice>>,
    ) -> Option<f64> {
        let budget = u32::try_from(cores).unwrap();
        every_placement(tree, budget, choices)
            .into_iter()
            .map(|p| p.0)
            .min_by(f64::total_cmp)
    }

    #[test]
    fn the_front_with_threads_is_what_plain_enumeration_finds() {
        let mut rng = StdRng::seed_from_u64(2037);
        for case in 0..300 {
            let mut names = Vec::new();
            let tree = random_tree(&mut rng, &mut names, 3);
            let mut choices = BTreeMap::new();
            for n in &names {
                let mut list: Vec<Choice> = (0..rng.random_range(1..=4))
                    .map(|_| Choice {
                        tasks: rng.random_range(1..=10),
                        threads: [1, 2, 4][rng.random_range(0..3)],
                        run_s: rng.random_range(1.0..100.0),
                    })
                    .collect();
                list.sort_by_key(|c| (c.tasks, c.threads));
                list.dedup_by_key(|c| (c.tasks, c.threads));
                choices.insert(n.clone(), list);
            }
            let budget = rng.random_range(1..=60);
            let rows = front_threaded(&tree, budget, 1, 5, &|n| choices[n].clone()).unwrap();
            assert_eq!(
                rows.first().map(|r| r.run_s),
                fastest_within(&tree, u64::from(budget), &choices),
                "case {case}: {tree}"
            );
            for row in &rows {
                assert_eq!(
                    fastest_within(&tree, row.cores, &choices),
                    Some(row.run_s),
                    "case {case}: {tree}"
                );
                let fewer = fastest_within(&tree, row.cores - 1, &choices);
                assert!(fewer.is_none_or(|t| t > row.run_s), "case {case}: {tree}");
                // The placement's own choices give its time and its cores.
                let pick: BTreeMap<String, Choice> = row
                    .placements
                    .iter()
                    .map(|p| {
                        let c = choices[&p.name]
                            .iter()
                            .find(|c| c.tasks == p.tasks && c.threads == p.threads)
                            .copied()
                            .unwrap();
                        (p.name.clone(), c)
                    })
                    .collect();
                let t = tree.run_time(&|n: &str| Some(pick[n].run_s)).unwrap();
                assert_eq!(t, row.run_s, "case {case}");
                let ranges: Vec<crate::layout::PeRange> = row
                    .placements
                    .iter()
                    .map(|p| crate::layout::PeRange {
                        tasks: p.tasks,
                        threads: p.threads,
                        root_pe: p.root_pe,
                        stride: 1,
                    })
                    .collect();
                assert_eq!(crate::layout::cores(&ranges), row.cores, "case {case}");
            }
            for pair in rows.windows(2) {
                assert!(pair[1].cores < pair[0].cores && pair[1].run_s > pair[0].run_s);
            }
        }
    }
}

#[cfg(test)]
mod xmlchange_tests {
    use super::*;
    use crate::layout::{infer, PeRange};

    #[test]
    fn the_lines_give_back_the_layout_and_its_time() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let work = |n: &str| match n {
            "ocn" => 300.0,
            "atm" => 500.0,
            _ => 90.0,
        };
        let time = |n: &str, k: u32| Some(work(n) / f64::from(k));
        let best = fastest(&tree, 64, 1, &|_| (1..=64).collect(), &time)
            .unwrap()
            .unwrap();
        let lines = xmlchange_lines(&best.placements, &|_| 1);
        assert!(lines.ends_with("./case.setup --reset\n"));
        // Read the lines back as CIME would set the case, and infer the layout from them.
        let mut ranges = Vec::new();
        for line in lines.lines().filter(|l| l.starts_with("./xmlchange ")) {
            let fields: Vec<(String, u32)> = line["./xmlchange ".len()..]
                .split(',')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_string(), v.parse().unwrap())
                })
                .collect();
            let class = fields[0]
                .0
                .strip_prefix("NTASKS_")
                .unwrap()
                .to_ascii_lowercase();
            let range = PeRange {
                tasks: fields[0].1,
                root_pe: fields[1].1,
                threads: fields[2].1,
                stride: 1,
            };
            ranges.push((class, range));
        }
        let back = infer(&ranges).unwrap();
        let tasks = |n: &str| ranges.iter().find(|(c, _)| c == n).map(|(_, r)| r.tasks);
        let again = back.run_time(&|n| time(n, tasks(n)?)).unwrap();
        assert_eq!(again, best.run_s, "{back}");
    }
}
