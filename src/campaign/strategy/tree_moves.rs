//! Algorithm 1 on a layout tree: the moves between the two sides of the `|` that waits most.
//!
//! Parts side by side (`|`) finish at different times; the part that finishes first waits for
//! the slowest, its PEs idle meanwhile. After an iteration every `|` of the tree is weighed by
//! that idle core time, `sum over its parts of (slowest part's time - part's time) x part's
//! PEs`, from the components' measured run times combined by the tree (the slowest part of `|`,
//! the sum of `;`). At the `|` that waits most, the fastest part (the donor) gives `step` PEs
//! to the slowest part (the recipient); the step halves when the direction reverses, when the
//! configuration was run before and when no move fits, and the test ends once it falls below
//! `minimum_step`, as in Algorithm 1 between two components.
//!
//! A part holding several components (CESM's `atm ; (ice | lnd)`) changes its width by the
//! step with every component scaled in proportion to its tasks: each gets `tasks x (width +-
//! step) / width`, snapped to its allowed counts and limits, so the shape of the part stays
//! and its width moves by about the step. The decision's donor and recipient are the
//! components that dominate each part's time (the largest run time), for the notes and for
//! telling a reversal: the direction reversed when the last recipient is now on the giving
//! side. Ride-along classes the tree leaves out (cpl, rof, glc, wav) are not balanced: they
//! share the PEs of the part that holds the atmosphere.

use super::algorithm1::{all_failed, halving_search, HalvingSearch, Limits};
use crate::campaign::state::{Decision, Outcome};
use crate::campaign::tree::{relative_times, width};
use crate::layout::Layout;

/// Everything [`decide`] needs about one test after an iteration.
#[derive(Debug, Clone)]
pub struct TreeInput<'a> {
    /// The layout tree.
    pub tree: &'a Layout,
    /// The components' names, in component order (the tree's leaves).
    pub names: &'a [String],
    /// The test's tasks per component in the iteration that ended.
    pub nproc: &'a [u32],
    /// The test's step in that iteration, in PEs.
    pub step: u32,
    /// The test's (donor, recipient) of its previous decision.
    pub previous: Option<(usize, usize)>,
    /// Mean partial coupling costs; `None` when every run failed.
    pub partial: Option<&'a [f64]>,
    /// A test finishes once its step falls below this many PEs.
    pub minimum_step: u32,
    /// The counts each component may take, in component order.
    pub limits: &'a [Limits],
    /// The budget: the most PEs the layout may span.
    pub max_nproc: u32,
}

/// The `|` that waits most: its giving and receiving parts (component indices) and the idle
/// core time in units of TOT x PEs.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    /// Components of the part that finishes first.
    pub donor: Vec<usize>,
    /// Components of the part that finishes last.
    pub recipient: Vec<usize>,
    /// Idle core time at this `|`, relative to TOT.
    pub idle: f64,
}

/// The `|` of `tree` whose parts wait most for each other, from the components' times
/// (`times[k]`, any unit); `None` when the tree has no `|` or nothing waits.
pub fn most_waiting(
    tree: &Layout,
    names: &[String],
    nproc: &[u32],
    times: &[f64],
) -> Option<Waiting> {
    let mut best: Option<Waiting> = None;
    visit(tree, names, nproc, times, &mut best);
    best.filter(|w| w.idle > 0.0)
}

fn index_of(names: &[String], name: &str) -> Option<usize> {
    names.iter().position(|n| n == name)
}

fn members(part: &Layout, names: &[String]) -> Vec<usize> {
    part.components()
        .into_iter()
        .filter_map(|n| index_of(names, n))
        .collect()
}

fn visit(
    node: &Layout,
    names: &[String],
    nproc: &[u32],
    times: &[f64],
    best: &mut Option<Waiting>,
) {
    let parts = match node {
        Layout::Component(_) => return,
        Layout::Beside(parts) | Layout::After(parts) => parts,
    };
    for part in parts {
        visit(part, names, nproc, times, best);
    }
    if !matches!(node, Layout::Beside(_)) {
        return;
    }
    let time_of = |name: &str| index_of(names, name).and_then(|k| times.get(k).copied());
    let measured: Vec<(f64, u32, &Layout)> = parts
        .iter()
        .filter_map(|p| Some((p.run_time(&time_of).ok()?, width(p, names, nproc), p)))
        .collect();
    if measured.len() != parts.len() {
        return;
    }
    let slowest = measured
        .iter()
        .enumerate()
        .fold(0, |b, (i, m)| if m.0 > measured[b].0 { i } else { b });
    let fastest = measured
        .iter()
        .enumerate()
        .fold(0, |b, (i, m)| if m.0 < measured[b].0 { i } else { b });
    let top = measured[slowest].0;
    let idle: f64 = measured
        .iter()
        .map(|(t, w, _)| (top - t) * f64::from(*w))
        .sum();
    if best.as_ref().is_none_or(|b| idle > b.idle) && slowest != fastest {
        *best = Some(Waiting {
            donor: members(measured[fastest].2, names),
            recipient: members(measured[slowest].2, names),
            idle,
        });
    }
}

/// The component of `side` with the largest time (the first on a tie).
fn dominant(side: &[usize], times: &[f64]) -> usize {
    side.iter()
        .copied()
        .fold(None, |b: Option<usize>, k| match b {
            Some(b) if times[b] >= times[k] => Some(b),
            _ => Some(k),
        })
        .unwrap_or(0)
}

/// Moves `step` PEs from the `donor` part to the `recipient` part, each part's components
/// scaled in proportion to their tasks (see the module doc). `None` when a part cannot change
/// its width that way within the limits, or the layout would span more than the budget (or
/// than it already did, if that was more).
pub fn move_between(
    tree: &Layout,
    names: &[String],
    nproc: &[u32],
    waiting: &Waiting,
    step: u32,
    limits: &[Limits],
    max_nproc: u32,
) -> Option<Vec<u32>> {
    if step == 0 {
        return None;
    }
    let mut next = nproc.to_vec();
    // A part of a `|` is a subtree: its width is that subtree's.
    let side_width = |side: &[usize], counts: &[u32]| subtree_width(tree, names, side, counts);
    for (side, giving) in [(&waiting.donor, true), (&waiting.recipient, false)] {
        let w = side_width(side, nproc);
        if w == 0 {
            return None;
        }
        let target_w = if giving {
            i64::from(w) - i64::from(step)
        } else {
            i64::from(w) + i64::from(step)
        };
        if target_w < 1 {
            return None;
        }
        let factor = target_w as f64 / f64::from(w);
        for &k in side.iter() {
            let p = nproc[k];
            let target = (f64::from(p) * factor).round() as i64;
            next[k] = if giving {
                limits[k].nearest_in(0, p, target, true)?
            } else {
                limits[k].nearest_in(p, u32::MAX, target, false)?
            };
        }
        let moved = side_width(side, &next);
        if (giving && moved >= w) || (!giving && moved <= w) {
            return None;
        }
    }
    let before = width(tree, names, nproc);
    let after = width(tree, names, &next);
    (after <= max_nproc.max(before)).then_some(next)
}

/// The PEs the smallest subtree holding every component of `side` spans.
fn subtree_width(tree: &Layout, names: &[String], side: &[usize], counts: &[u32]) -> u32 {
    let wanted: Vec<&str> = side.iter().map(|&k| names[k].as_str()).collect();
    fn find<'a>(node: &'a Layout, wanted: &[&str]) -> Option<&'a Layout> {
        let mut have = node.components();
        have.sort_unstable();
        let mut w = wanted.to_vec();
        w.sort_unstable();
        if have == w {
            return Some(node);
        }
        match node {
            Layout::Component(_) => None,
            Layout::Beside(parts) | Layout::After(parts) => {
                parts.iter().find_map(|p| find(p, wanted))
            }
        }
    }
    find(tree, &wanted).map_or(0, |node| width(node, names, counts))
}

/// One test's decision on a tree (see the module doc).
pub fn decide(input: &TreeInput, seen: &dyn Fn(&[u32]) -> bool) -> Decision {
    let Some(partial) = input.partial else {
        return all_failed(input.step);
    };
    let times = relative_times(partial, input.nproc);
    let finished = |reason: String, notes: Vec<String>, who: Option<(usize, usize)>| Decision {
        donor: who.map(|w| w.0),
        recipient: who.map(|w| w.1),
        step: input.step,
        next: None,
        outcome: Outcome::Finished { reason },
        notes,
    };
    if times.len() != input.names.len() || times.iter().any(|t| !t.is_finite()) {
        return finished(
            "no run time for every component of the layout".into(),
            Vec::new(),
            None,
        );
    }
    let Some(waiting) = most_waiting(input.tree, input.names, input.nproc, &times) else {
        return finished(
            "no part of the layout waits for another".into(),
            Vec::new(),
            None,
        );
    };
    let donor = dominant(&waiting.donor, &times);
    let recipient = dominant(&waiting.recipient, &times);
    let part_text = |side: &[usize]| {
        side.iter()
            .map(|&k| input.names[k].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = vec![format!(
        "{} waits for {}: {} gives PEs to {}",
        part_text(&waiting.donor),
        part_text(&waiting.recipient),
        part_text(&waiting.donor),
        part_text(&waiting.recipient)
    )];
    let mut step = input.step;
    let reversed = input
        .previous
        .is_some_and(|(_, last)| waiting.donor.contains(&last));
    if reversed {
        notes.push(format!(
            "direction reversed ({} received last time, now gives): step {step} -> {}",
            input.names[input.previous.map_or(0, |p| p.1)],
            step / 2
        ));
        step /= 2;
    }
    let moving = format!(
        "{} to {}",
        part_text(&waiting.donor),
        part_text(&waiting.recipient)
    );
    halving_search(
        &HalvingSearch {
            step,
            minimum_step: input.minimum_step,
            names: input.names,
            moving: &moving,
            who: (donor, recipient),
        },
        &|step| {
            move_between(
                input.tree,
                input.names,
                input.nproc,
                &waiting,
                step,
                input.limits,
                input.max_nproc,
            )
        },
        seen,
        notes,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["ocn", "atm", "ice", "lnd"].map(String::from).to_vec()
    }

    fn free(n: usize) -> Vec<Limits> {
        vec![
            Limits {
                low: 1,
                high: 10_000,
                allowed: None
            };
            n
        ]
    }

    #[test]
    fn the_ocean_waiting_gives_pes_to_the_atmosphere_side_in_proportion() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let names = names();
        let nproc = [60, 80, 40, 40];
        // ocn 50 s; the other side 70 + 20 = 90 s: the ocean waits.
        let times = [50.0, 70.0, 20.0, 15.0];
        let w = most_waiting(&tree, &names, &nproc, &times).unwrap();
        assert_eq!(w.donor, vec![0]);
        assert_eq!(w.recipient, vec![1, 2, 3]);
        assert!((w.idle - 40.0 * 60.0).abs() < 1e-9);
        let next = move_between(&tree, &names, &nproc, &w, 16, &free(4), 140).unwrap();
        // The atmosphere's side spans 80 PEs and gets 16: every component x 96/80.
        assert_eq!(next, vec![44, 96, 48, 48]);
        assert!(width(&tree, &names, &next) <= 140);
        // The ocean cannot go below 50: it frees 10 PEs, the other side would take 16, and
        // the layout would span 146 PEs, over the budget.
        let mut limits = free(4);
        limits[0].low = 50;
        assert_eq!(
            move_between(&tree, &names, &nproc, &w, 16, &limits, 140),
            None
        );
        assert!(move_between(&tree, &names, &nproc, &w, 16, &limits, 146).is_some());
    }

    #[test]
    fn the_inner_bar_is_chosen_when_it_waits_most() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let names = names();
        let nproc = [60, 80, 40, 40];
        // Both top sides take 90 s; inside, ice waits 30 s for land on 40 PEs.
        let times = [90.0, 40.0, 20.0, 50.0];
        let w = most_waiting(&tree, &names, &nproc, &times).unwrap();
        assert_eq!((w.donor.clone(), w.recipient.clone()), (vec![2], vec![3]));
        let next = move_between(&tree, &names, &nproc, &w, 8, &free(4), 140).unwrap();
        assert_eq!(next, vec![60, 80, 32, 48]);
    }

    #[test]
    fn a_decision_halves_on_reversal_and_ends_below_the_minimum_step() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let names = names();
        let nproc = [60u32, 80, 40, 40];
        let times = [50.0, 70.0, 20.0, 15.0];
        let sum: f64 = nproc.iter().map(|&p| f64::from(p)).sum();
        let tot = 95.0;
        let partial: Vec<f64> = times
            .iter()
            .zip(&nproc)
            .map(|(&t, &p)| (tot - t) * f64::from(p) / (tot * sum))
            .collect();
        let limits = free(4);
        let input = TreeInput {
            tree: &tree,
            names: &names,
            nproc: &nproc,
            step: 16,
            previous: None,
            partial: Some(&partial),
            minimum_step: 4,
            limits: &limits,
            max_nproc: 140,
        };
        let d = decide(&input, &|_| false);
        assert_eq!(d.outcome, Outcome::Continue);
        assert_eq!((d.donor, d.recipient), (Some(0), Some(1)));
        assert_eq!(d.next, Some(vec![44, 96, 48, 48]));
        // The ocean received last time: a reversal halves the step.
        let d = decide(
            &TreeInput {
                previous: Some((1, 0)),
                ..input.clone()
            },
            &|_| false,
        );
        assert_eq!(d.step, 8);
        // Everything already run: the step halves until the test ends.
        let d = decide(&input, &|_| true);
        assert!(matches!(d.outcome, Outcome::Finished { .. }), "{d:?}");
        assert_eq!(d.step, 2);
        let d = decide(
            &TreeInput {
                partial: None,
                ..input
            },
            &|_| false,
        );
        assert!(matches!(d.outcome, Outcome::Failed { .. }));
    }
}
