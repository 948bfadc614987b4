//! Algorithm 1 (the guide's `method/algorithm1.md`) as small pure functions, so every
//! decision can be checked on its own with synthetic measurements.
//!
//! Decisions the method leaves open, taken here (and in the guide's *Algorithm 1* page):
//! * Ties: the donor is the first component with the largest partial coupling cost, the
//!   recipient the first other component with the smallest.
//! * Snapping: donor and recipient are snapped separately to the PE count nearest to their
//!   target that is feasible for them (in the allowed list if any, within the limits), strictly
//!   below the donor's current count and strictly above the recipient's; on a tie the smaller
//!   move wins. So a component at its limit cannot move that way any more.
//! * A move whose snapped configuration exceeds the budget (`max_nproc`, or the configuration's
//!   own total if that was already above it) is not taken; like a configuration already run,
//!   it halves the step.
//! * A test whose runs all failed in an iteration finishes as failed: its configuration counts
//!   as run (no other test goes there), but it is never the best.
//! * Components on different hardware (`[[resource]]` tables): every resource keeps its own
//!   budget ([`Budgets`]). The step counts units of the first resource (CPU cores); on another
//!   resource a step of `s` is the number of its units that cost the same,
//!   `round(s * unit_cost_first / unit_cost)`, at least one. Between components on the same
//!   resource units move one for one; across resources the donor's freed cost buys the
//!   recipient the units that cost the same (Algorithm 1's constant budget, in cost). The speed
//!   change that buys is what the next measurement tells; the guided strategy weighs it through
//!   its model instead.

use crate::metrics::Bounds;
use crate::predict::ConfigurationText;

use crate::campaign::state::RunMetrics;

pub use super::budgets::{Budgets, Limits};

/// Mean metrics of the runs of one test in one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Means {
    /// Mean coupled SYPD.
    pub sypd: f64,
    /// Mean CHSY.
    pub chsy: f64,
    /// Mean coupling cost, a fraction.
    pub coupling_cost: f64,
    /// Mean partial coupling cost per component, in component order; the largest is the donor.
    pub partial_coupling_cost: Vec<f64>,
}

/// Averages the measured runs; failed runs are never passed in. `None` when there are none.
pub fn mean_metrics<'a>(runs: impl IntoIterator<Item = &'a RunMetrics>) -> Option<Means> {
    let runs: Vec<&RunMetrics> = runs.into_iter().collect();
    let n = runs.len();
    if n == 0 {
        return None;
    }
    let mean = |f: &dyn Fn(&RunMetrics) -> f64| runs.iter().map(|r| f(r)).sum::<f64>() / n as f64;
    let width = runs
        .iter()
        .map(|r| r.partial_coupling_cost.len())
        .min()
        .unwrap_or(0);
    Some(Means {
        sypd: mean(&|r| r.sypd),
        chsy: mean(&|r| r.chsy),
        coupling_cost: mean(&|r| r.coupling_cost),
        partial_coupling_cost: (0..width)
            .map(|i| mean(&|r| r.partial_coupling_cost[i]))
            .collect(),
    })
}

/// Donor = the component with the largest partial coupling cost (it waits most, so it has PEs
/// to spare); recipient = the one with the smallest. `None` with fewer than two components or a
/// cost that is not a number.
pub fn donor_and_recipient(partial: &[f64]) -> Option<(usize, usize)> {
    if partial.len() < 2 || partial.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut donor = 0;
    for (i, v) in partial.iter().enumerate() {
        if *v > partial[donor] {
            donor = i;
        }
    }
    let mut recipient = if donor == 0 { 1 } else { 0 };
    for (i, v) in partial.iter().enumerate() {
        if i != donor && *v < partial[recipient] {
            recipient = i;
        }
    }
    Some((donor, recipient))
}

/// The direction reversed when the last recipient is now the donor.
pub fn reversed(previous: Option<(usize, usize)>, donor: usize) -> bool {
    previous.is_some_and(|(_, last_recipient)| last_recipient == donor)
}

/// The donor's new count: the feasible count nearest to `current - step`, strictly below
/// `current` (ties: the larger, i.e. the smaller move).
pub fn snap_down(current: u32, step: u32, limits: &Limits) -> Option<u32> {
    let target = i64::from(current) - i64::from(step);
    limits.nearest_in(0, current.checked_sub(1)?, target, true)
}

/// The recipient's new count: the feasible count nearest to `current + step`, strictly above
/// `current` (ties: the smaller, i.e. the smaller move).
pub fn snap_up(current: u32, step: u32, limits: &Limits) -> Option<u32> {
    let target = i64::from(current) + i64::from(step);
    limits.nearest_in(current.checked_add(1)?, u32::MAX, target, false)
}

/// Moves `step` PEs from `donor` to `recipient`, snapped and within limits and the budget.
/// `None` when no such move exists at this step.
pub fn move_pes(
    nproc: &[u32],
    donor: usize,
    recipient: usize,
    step: u32,
    limits: &[Limits],
    max_nproc: u32,
) -> Option<Vec<u32>> {
    move_units(
        nproc,
        donor,
        recipient,
        step,
        limits,
        &Budgets::single(max_nproc),
    )
}

/// [`move_pes`] with a budget per resource: the donor gives the units that cost `step` units of
/// the first resource, the recipient gets those that cost the same on its own resource (see
/// the module doc), each snapped; every budget must hold (or not grow, if already broken).
pub fn move_units(
    nproc: &[u32],
    donor: usize,
    recipient: usize,
    step: u32,
    limits: &[Limits],
    budgets: &Budgets,
) -> Option<Vec<u32>> {
    if step == 0 || donor == recipient {
        return None;
    }
    let mut next = nproc.to_vec();
    next[donor] = snap_down(nproc[donor], budgets.units_for(donor, step), &limits[donor])?;
    next[recipient] = snap_up(
        nproc[recipient],
        budgets.units_for(recipient, step),
        &limits[recipient],
    )?;
    if !budgets.fits_from(nproc, &next) {
        return None;
    }
    Some(next)
}

/// Everything [`decide`] needs about one test after an iteration.
#[derive(Debug, Clone)]
pub struct DecisionInput<'a> {
    /// The test's PEs per component in the iteration that ended.
    pub nproc: &'a [u32],
    /// The test's step in that iteration, in PEs.
    pub step: u32,
    /// The test's (donor, recipient) of its previous decision.
    pub previous: Option<(usize, usize)>,
    /// Mean partial coupling costs; `None` when every run failed.
    pub partial: Option<&'a [f64]>,
    /// A test finishes once its step falls below this many PEs.
    pub minimum_step: u32,
    /// The PE counts each component may take, in component order.
    pub limits: &'a [Limits],
    /// Budget for the balanced components together, in PEs.
    pub max_nproc: u32,
    /// The components' names, for the decision's notes.
    pub names: &'a [String],
}

/// One test's decision (Algorithm 1): donor and recipient, halving on reversal, the move,
/// halving while the configuration was already run (`seen`) or no move fits, and the end of
/// the test once the step falls below `minimum_step`.
pub fn decide(
    input: &DecisionInput,
    seen: &dyn Fn(&[u32]) -> bool,
) -> crate::campaign::state::Decision {
    decide_within(input, &Budgets::single(input.max_nproc), seen)
}

/// [`decide`] with a budget per resource (`input.max_nproc` is then not read).
pub fn decide_within(
    input: &DecisionInput,
    budgets: &Budgets,
    seen: &dyn Fn(&[u32]) -> bool,
) -> crate::campaign::state::Decision {
    use crate::campaign::state::{Decision, Outcome};
    let Some(partial) = input.partial else {
        return all_failed(input.step);
    };
    let Some((donor, recipient)) = donor_and_recipient(partial) else {
        return Decision {
            donor: None,
            recipient: None,
            step: input.step,
            next: None,
            outcome: Outcome::Finished {
                reason: "no donor and recipient (fewer than two components, or a partial coupling cost that is not a number)".into(),
            },
            notes: Vec::new(),
        };
    };
    let name = |i: usize| input.names.get(i).cloned().unwrap_or_else(|| i.to_string());
    let mut notes = Vec::new();
    let mut step = input.step;
    if reversed(input.previous, donor) {
        notes.push(format!(
            "direction reversed ({} was the recipient, now the donor): step {step} -> {}",
            name(donor),
            step / 2
        ));
        step /= 2;
    }
    let moving = format!("{} to {}", name(donor), name(recipient));
    halving_search(
        &HalvingSearch {
            step,
            minimum_step: input.minimum_step,
            names: input.names,
            moving: &moving,
            who: (donor, recipient),
        },
        &|step| move_units(input.nproc, donor, recipient, step, input.limits, budgets),
        seen,
        notes,
    )
}

/// The decision of a test whose every run failed: it finishes as failed.
pub fn all_failed(step: u32) -> crate::campaign::state::Decision {
    crate::campaign::state::Decision {
        donor: None,
        recipient: None,
        step,
        next: None,
        outcome: crate::campaign::state::Outcome::Failed {
            reason: "every run of this test failed".into(),
        },
        notes: Vec::new(),
    }
}

/// What [`halving_search`] moves, for its decision and notes.
pub struct HalvingSearch<'a> {
    /// The step to try first.
    pub step: u32,
    /// The search ends once the step falls below this.
    pub minimum_step: u32,
    /// The components' names, for the notes.
    pub names: &'a [String],
    /// What gives PEs to what, in words (`IFS to NEMO`).
    pub moving: &'a str,
    /// The decision's (donor, recipient).
    pub who: (usize, usize),
}

/// Algorithm 1's step search: the move `attempt(step)` gives, halving the step while that
/// configuration was already run (`seen`) or no move fits (`None`), until a move is found or
/// the step falls below the minimum and the test finishes. Each halving is a note.
pub fn halving_search(
    search: &HalvingSearch,
    attempt: &dyn Fn(u32) -> Option<Vec<u32>>,
    seen: &dyn Fn(&[u32]) -> bool,
    mut notes: Vec<String>,
) -> crate::campaign::state::Decision {
    use crate::campaign::state::{Decision, Outcome};
    let (donor, recipient) = search.who;
    let mut step = search.step;
    while step >= search.minimum_step && step > 0 {
        match attempt(step) {
            Some(next) if !seen(&next) => {
                return Decision {
                    donor: Some(donor),
                    recipient: Some(recipient),
                    step,
                    next: Some(next),
                    outcome: Outcome::Continue,
                    notes,
                };
            }
            Some(next) => notes.push(format!(
                "{} already run: step {step} -> {}",
                ConfigurationText::new(search.names, &next).slashed(),
                step / 2
            )),
            None => notes.push(format!(
                "no move of {step} PEs from {} fits the limits and budget: step {step} -> {}",
                search.moving,
                step / 2
            )),
        }
        step /= 2;
    }
    Decision {
        donor: Some(donor),
        recipient: Some(recipient),
        step,
        next: None,
        outcome: Outcome::Finished {
            reason: format!("step {step} is below minimum_step {}", search.minimum_step),
        },
        notes,
    }
}

/// One measured configuration, for choosing the best.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// PEs per component.
    pub nproc: Vec<u32>,
    /// All its PEs, the extra PEs included (the tie-break after FN).
    pub total_nproc: u32,
    /// Mean coupled SYPD of its runs.
    pub sypd: f64,
    /// Mean cost FN weighs: CHSY, or the billed cost with a machine.
    pub chsy: f64,
}

/// Fittingness of every measured configuration, normalised over all of them, and the index of
/// the best (FN descending, then total PEs ascending, then PE counts in component order).
pub fn fittingness_and_best(measured: &[Measured], tts_w: f64) -> (Vec<f64>, Option<usize>) {
    let sypd = Bounds::of(measured.iter().map(|m| m.sypd));
    let chsy = Bounds::of(measured.iter().map(|m| m.chsy));
    let (Some(sypd), Some(chsy)) = (sypd, chsy) else {
        return (Vec::new(), None);
    };
    fittingness_and_best_in(measured, tts_w, &sypd, &chsy)
}

/// [`fittingness_and_best`] on given bounds instead of the measured configurations' own.
pub fn fittingness_and_best_in(
    measured: &[Measured],
    tts_w: f64,
    sypd: &Bounds,
    chsy: &Bounds,
) -> (Vec<f64>, Option<usize>) {
    if measured.is_empty() {
        return (Vec::new(), None);
    }
    let fns: Vec<f64> = measured
        .iter()
        .map(|m| crate::metrics::fittingness_in(tts_w, m.sypd, m.chsy, sypd, chsy))
        .collect();
    let best = (0..measured.len()).min_by(|&a, &b| {
        fns[b]
            .total_cmp(&fns[a])
            .then(measured[a].total_nproc.cmp(&measured[b].total_nproc))
            .then_with(|| measured[a].nproc.cmp(&measured[b].nproc))
    });
    (fns, best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::state::Outcome;

    fn free(low: u32, high: u32) -> Limits {
        Limits {
            low,
            high,
            allowed: None,
        }
    }

    fn names() -> Vec<String> {
        vec!["IFS".into(), "NEMO".into()]
    }

    #[test]
    fn donor_waits_most_recipient_least() {
        assert_eq!(donor_and_recipient(&[0.05, 0.20]), Some((1, 0)));
        assert_eq!(donor_and_recipient(&[0.30, 0.01, 0.10]), Some((0, 1)));
        // Ties: first of the largest, first other of the smallest.
        assert_eq!(donor_and_recipient(&[0.1, 0.1]), Some((0, 1)));
        assert_eq!(donor_and_recipient(&[0.1]), None);
        assert_eq!(donor_and_recipient(&[0.1, f64::NAN]), None);
    }

    #[test]
    fn reversal_is_last_recipient_becoming_donor() {
        assert!(!reversed(None, 0));
        assert!(!reversed(Some((0, 1)), 0));
        assert!(reversed(Some((0, 1)), 1));
    }

    #[test]
    fn snapping_to_allowed_lists() {
        let nemo = Limits {
            low: 48,
            high: 400,
            allowed: Some(vec![48, 96, 144, 190, 240, 288, 336]),
        };
        // Target 240 - 24 = 216: 190 and 240 are options below 240 -> 190 (only one below).
        assert_eq!(snap_down(240, 24, &nemo), Some(190));
        // Target 240 + 24 = 264: 288 is the only option above nearer than 336.
        assert_eq!(snap_up(240, 24, &nemo), Some(288));
        // Tie between 96 and 144 for target 120 from 190 down: the smaller move (144).
        assert_eq!(snap_down(190, 70, &nemo), Some(144));
        // Nothing below the lowest.
        assert_eq!(snap_down(48, 24, &nemo), None);
        // Nothing above the limit.
        assert_eq!(snap_up(336, 24, &nemo), None);
    }

    #[test]
    fn moves_without_lists_clamp_to_limits() {
        let limits = [free(100, 500), free(48, 300)];
        assert_eq!(
            move_pes(&[400, 200], 0, 1, 48, &limits, 672),
            Some(vec![352, 248])
        );
        // Recipient clamped at its high limit: a partial move.
        assert_eq!(
            move_pes(&[400, 290], 0, 1, 48, &limits, 672),
            Some(vec![352, 300])
        );
        // Recipient at its limit: no move.
        assert_eq!(move_pes(&[400, 300], 0, 1, 48, &limits, 700), None);
        // Donor at its low limit: no move.
        assert_eq!(move_pes(&[100, 200], 0, 1, 48, &limits, 672), None);
    }

    /// CPU cores (unit cost 1, 768) and GPUs (unit cost 32, 16): component 0 on the CPU,
    /// component 1 on the GPU.
    fn cpu_gpu() -> Budgets {
        Budgets {
            max_units: vec![768, 16],
            resource_of: vec![0, 1],
            unit_cost: vec![1.0, 32.0],
            names: vec!["cpu".into(), "gpu".into()],
        }
    }

    #[test]
    fn budgets_per_resource() {
        let b = cpu_gpu();
        assert!(b.fits(&[768, 16]));
        assert!(!b.fits(&[769, 1]));
        assert!(!b.fits(&[64, 17]));
        assert_eq!(
            b.over(&[64, 17]).as_deref(),
            Some("uses 17 units of gpu, over its budget of 16")
        );
        // Prefix: the first component at 700, the second at its smallest (1 GPU).
        assert!(b.fits_prefix(&[700], &[64, 1]));
        assert!(!b.fits_prefix(&[800], &[64, 1]));
        // Steps count CPU cores; a GPU step is the GPUs that cost the same, at least one.
        assert_eq!(b.units_for(0, 64), 64);
        assert_eq!(b.units_for(1, 64), 2);
        assert_eq!(b.units_for(1, 8), 1);
        // Without resources nothing converts.
        let one = Budgets::single(672);
        assert_eq!(one.units_for(1, 48), 48);
        assert!(one.fits(&[400, 272]) && !one.fits(&[400, 273]));
    }

    #[test]
    fn moves_across_resources_keep_the_cost_and_each_budget() {
        let limits = [free(64, 768), free(1, 16)];
        let b = cpu_gpu();
        // CPU gives 64 cores, the GPU ocean gets the 2 GPUs that cost the same.
        assert_eq!(
            move_units(&[736, 12], 0, 1, 64, &limits, &b),
            Some(vec![672, 14])
        );
        // The other way: 2 GPUs for 64 cores.
        assert_eq!(
            move_units(&[672, 14], 1, 0, 64, &limits, &b),
            Some(vec![736, 12])
        );
        // The CPU budget holds: 736 + 64 > 768 (with limits that would allow it).
        let high = [free(64, 1024), free(1, 16)];
        assert_eq!(move_units(&[736, 12], 1, 0, 64, &high, &b), None);
        // The GPU budget holds even where the limits would allow more.
        let wide = [free(64, 768), free(1, 64)];
        assert_eq!(move_units(&[736, 16], 0, 1, 64, &wide, &b), None);
        // Two components on one resource move unit for unit.
        let same = Budgets {
            max_units: vec![768, 16],
            resource_of: vec![1, 1],
            unit_cost: vec![1.0, 32.0],
            names: vec!["cpu".into(), "gpu".into()],
        };
        assert_eq!(
            move_units(&[8, 4], 0, 1, 64, &[free(1, 16), free(1, 16)], &same),
            Some(vec![6, 6])
        );
    }

    #[test]
    fn snapping_may_not_break_the_budget() {
        let limits = [
            free(100, 600),
            Limits {
                low: 48,
                high: 400,
                allowed: Some(vec![240, 288, 336]),
            },
        ];
        // 432 + 240 = 672; move 24 from IFS: 408 + 288 = 696 > 672.
        assert_eq!(move_pes(&[432, 240], 0, 1, 24, &limits, 672), None);
        assert_eq!(
            move_pes(&[432, 240], 0, 1, 24, &limits, 700),
            Some(vec![408, 288])
        );
    }

    fn input<'a>(
        nproc: &'a [u32],
        step: u32,
        previous: Option<(usize, usize)>,
        partial: Option<&'a [f64]>,
        limits: &'a [Limits],
        names: &'a [String],
    ) -> DecisionInput<'a> {
        DecisionInput {
            nproc,
            step,
            previous,
            partial,
            minimum_step: 6,
            limits,
            max_nproc: 672,
            names,
        }
    }

    #[test]
    fn decide_moves_from_donor_to_recipient() {
        let limits = [free(48, 600), free(48, 600)];
        let names = names();
        let d = decide(
            &input(&[408, 240], 48, None, Some(&[0.02, 0.15]), &limits, &names),
            &|_| false,
        );
        assert_eq!((d.donor, d.recipient), (Some(1), Some(0)));
        assert_eq!(d.next, Some(vec![456, 192]));
        assert_eq!(d.step, 48);
        assert_eq!(d.outcome, Outcome::Continue);
    }

    #[test]
    fn decide_halves_on_reversal_and_on_repeats_then_finishes() {
        let limits = [free(48, 600), free(48, 600)];
        let names = names();
        // Previously NEMO gave to IFS; now IFS waits most: reversed, 48 -> 24.
        let d = decide(
            &input(
                &[456, 192],
                48,
                Some((1, 0)),
                Some(&[0.2, 0.01]),
                &limits,
                &names,
            ),
            &|_| false,
        );
        assert_eq!(d.next, Some(vec![432, 216]));
        assert_eq!(d.step, 24);
        // And 432/216 was already run: 24 -> 12 gives 444/204.
        let d = decide(
            &input(
                &[456, 192],
                48,
                Some((1, 0)),
                Some(&[0.2, 0.01]),
                &limits,
                &names,
            ),
            &|c| c == [432, 216],
        );
        assert_eq!(d.next, Some(vec![444, 204]));
        assert_eq!(d.step, 12);
        assert_eq!(d.notes.len(), 2, "{:?}", d.notes);
        // Everything already run: 24, 12, 6 tried, then 3 < 6 finishes.
        let d = decide(
            &input(
                &[456, 192],
                48,
                Some((1, 0)),
                Some(&[0.2, 0.01]),
                &limits,
                &names,
            ),
            &|_| true,
        );
        assert_eq!(d.next, None);
        assert_eq!(d.step, 3);
        assert!(matches!(d.outcome, Outcome::Finished { .. }));
        // A step already below the minimum after the reversal finishes at once.
        let d = decide(
            &input(
                &[456, 192],
                8,
                Some((1, 0)),
                Some(&[0.2, 0.01]),
                &limits,
                &names,
            ),
            &|_| false,
        );
        assert_eq!((d.step, d.next.clone()), (4, None));
        assert!(matches!(d.outcome, Outcome::Finished { .. }));
    }

    #[test]
    fn decide_without_measurements_fails_the_test() {
        let limits = [free(48, 600), free(48, 600)];
        let names = names();
        let d = decide(
            &input(&[408, 240], 48, None, None, &limits, &names),
            &|_| false,
        );
        assert!(matches!(d.outcome, Outcome::Failed { .. }));
    }

    #[test]
    fn best_by_fittingness_over_all_measured() {
        let m = |nproc: Vec<u32>, sypd: f64| {
            let total = nproc.iter().sum::<u32>();
            Measured {
                total_nproc: total,
                chsy: 24.0 * f64::from(total) / sypd,
                nproc,
                sypd,
            }
        };
        let all = vec![
            m(vec![400, 240], 10.0),
            m(vec![420, 240], 12.0),
            m(vec![300, 200], 10.0),
        ];
        let (fns, best) = fittingness_and_best(&all, 1.0);
        assert_eq!(best, Some(1));
        assert_eq!(fns[1], 1.0);
        assert_eq!(fns[2], 0.0);
        let (_, best) = fittingness_and_best(&all, 0.0);
        // Cheapest per simulated year: 500 PEs at 10 SYPD = 1200 CHSY (vs 1536 and 1320).
        assert_eq!(best, Some(2));
        assert_eq!(fittingness_and_best(&[], 0.5).1, None);
    }

    #[test]
    fn means_skip_nothing_they_are_given() {
        let r = |s: f64| RunMetrics {
            sypd: s,
            chsy: 100.0,
            coupling_cost: 0.1,
            partial_coupling_cost: vec![0.1, 0.2],
        };
        let m = mean_metrics([&r(10.0), &r(12.0)]).unwrap();
        assert_eq!(m.sypd, 11.0);
        assert_eq!(m.partial_coupling_cost, vec![0.1, 0.2]);
        assert!(mean_metrics(std::iter::empty()).is_none());
    }
}
