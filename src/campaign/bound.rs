//! The most lb-iterations a campaign takes: one answer for `campaign plan`, the Autosubmit
//! numbers and the status's progress line. A campaign enforces its `max_iterations`; where the
//! strategy's own bound is lower (Algorithm 1 with two components, a scaling campaign's run
//! budget) that bound is the answer.
//!
//! Algorithm 1's bound: a test moves PEs from a donor to a recipient each iteration, by the
//! current step, until the step falls below `minimum_step`. The step takes the values
//! `initial_step`, `/2`, `/4`, ... down to `minimum_step`. At one step value the direction
//! cannot reverse (a reversal halves the step), so with two components the recipient gains PEs
//! at every move until it reaches its limit: at most `ceil((high - low) / step)` moves, or
//! with an allowed list (where a snapped move may be shorter than the step) at most one move
//! per allowed count above `low`. The bound is
//! one iteration for the start plus the largest such count over the components, summed over
//! the step values. With three or more components the direction may turn without reversing;
//! the bound then sums the counts over the components (an estimate, not a proof: check
//! `campaign status` after the workflow and raise the chunk count if the campaign is not done).

use super::state::{
    bound_is_proven, iteration_bound, moves_at, step_values, FrozenComponent, State,
};

/// The most lb-iterations a campaign takes, and why: one answer for `campaign plan`, the
/// Autosubmit numbers and the status's progress line.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationLimit {
    /// The bound.
    pub at_most: u32,
    /// Whether it holds for sure (enforced, or proven for Algorithm 1 with two components).
    pub proven: bool,
    /// What sets it, in words, and what lowers or raises it.
    pub by: String,
}

/// The campaign's iteration limit: `max_iterations`, which the campaign enforces, or the
/// strategy's own bound where that is lower (Algorithm 1 with two components, proven; a
/// scaling campaign's run budget).
pub fn iteration_limit(state: &State) -> IterationLimit {
    let s = &state.settings;
    let (bound, by, proven) = if state.is_scaling() {
        let (n, by) = super::strategy::scaling::iteration_bound(state);
        // A scaling campaign's bound counts runs, which is proven whatever the components.
        (n, by, true)
    } else {
        (
            iteration_bound(&state.components, s.initial_step, s.minimum_step),
            format!(
                "{}; a larger minimum_step or a narrower range lowers it",
                bound_by(&state.components, s.initial_step, s.minimum_step)
            ),
            bound_is_proven(state),
        )
    };
    match s.max_iterations {
        Some(cap) if cap < bound => IterationLimit {
            at_most: cap,
            proven: true,
            by: format!(
                "set by max_iterations = {cap} (tests still moving then end; the answer is the \
                 best measured); the strategy's own bound here is {bound}"
            ),
        },
        _ => IterationLimit {
            at_most: bound,
            proven,
            by,
        },
    }
}

/// What [`iteration_bound`] follows from, in words: the step values and the component whose
/// range takes the most moves (with three or more components, all of them).
pub fn bound_by(components: &[FrozenComponent], initial_step: u32, minimum_step: u32) -> String {
    let steps = step_values(initial_step, minimum_step);
    if steps.is_empty() {
        return format!(
            "initial_step {initial_step} is below minimum_step {minimum_step}: only the start"
        );
    }
    let moves = |c: &FrozenComponent| steps.iter().map(|&s| moves_at(c, s)).sum::<u64>();
    let range = |c: &FrozenComponent| match &c.allowed {
        Some(list) => {
            let above = list.iter().filter(|&&p| p > c.low && p <= c.high).count();
            format!("{} ({above} allowed counts above {})", c.name, c.low)
        }
        None => format!("{} {}..{} PEs", c.name, c.low, c.high),
    };
    let over = if components.len() <= 2 {
        components
            .iter()
            .rev()
            .max_by_key(|c| moves(c))
            .map(range)
            .unwrap_or_default()
    } else {
        let all: Vec<String> = components.iter().map(range).collect();
        format!("{}, summed", all.join(", "))
    };
    let list: Vec<String> = steps.iter().map(u32::to_string).collect();
    format!(
        "set by initial_step {initial_step} halving to minimum_step {minimum_step} (steps {}) \
         over {over}",
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn comp(low: u32, high: u32, allowed: Option<Vec<u32>>) -> FrozenComponent {
        named("c", low, high, allowed)
    }

    fn named(name: &str, low: u32, high: u32, allowed: Option<Vec<u32>>) -> FrozenComponent {
        FrozenComponent {
            name: name.into(),
            timing_name: "c".into(),
            curve: PathBuf::new(),
            low,
            high,
            allowed,
            threads: 1,
        }
    }

    #[test]
    fn whole_ranks_bound_the_moves_as_a_free_range_does() {
        // A component at 4 threads: every multiple of 4 cores, moved 64 then 32 then 16 cores.
        let whole_ranks: Vec<u32> = (56..=2688).step_by(4).collect();
        let hybrid = comp(56, 2688, Some(whole_ranks));
        let free = comp(56, 2688, None);
        assert_eq!(
            iteration_bound(std::slice::from_ref(&hybrid), 64, 16),
            iteration_bound(std::slice::from_ref(&free), 64, 16)
        );
        // A step between two counts moves by the nearest multiple of the spacing, at least one.
        assert_eq!(
            moves_at(&comp(0, 40, Some((4..=40).step_by(4).collect())), 6),
            10
        );
        assert_eq!(
            moves_at(&comp(0, 40, Some((4..=40).step_by(4).collect())), 7),
            5
        );
        // An uneven list (NEMO's decompositions) still counts its entries.
        assert_eq!(moves_at(&comp(0, 40, Some(vec![4, 5, 9, 40])), 16), 4);
    }

    #[test]
    fn the_bound_counts_moves_per_step_value() {
        // Steps 96 and 48: ceil(144/96) = 2 and 144/48 = 3 moves; plus the start.
        let c = [comp(336, 480, None), comp(96, 192, None)];
        assert_eq!(iteration_bound(&c, 96, 48), 1 + 2 + 3);
        // An allowed list bounds the moves by its counts above `low`.
        let c = [
            comp(336, 480, None),
            comp(96, 192, Some(vec![96, 128, 192, 300])),
        ];
        assert_eq!(iteration_bound(&c, 96, 48), 1 + 2 + 3);
        let c = [comp(0, 10, Some(vec![2, 4])), comp(0, 10, Some(vec![5]))];
        assert_eq!(iteration_bound(&c, 8, 1), 1 + 2 * 4);
    }

    #[test]
    fn the_bound_names_the_steps_and_the_range_that_set_it() {
        let c = [named("IFS", 288, 1200, None), named("NEMO", 96, 192, None)];
        assert_eq!(
            bound_by(&c, 96, 6),
            "set by initial_step 96 halving to minimum_step 6 (steps 96, 48, 24, 12, 6) over \
             IFS 288..1200 PEs"
        );
        let c = [
            named("IFS", 288, 300, None),
            named("NEMO", 96, 192, Some(vec![96, 128, 192])),
        ];
        assert_eq!(
            bound_by(&c, 96, 48),
            "set by initial_step 96 halving to minimum_step 48 (steps 96, 48) over NEMO (2 \
             allowed counts above 96)"
        );
        let three = [
            named("A", 1, 10, None),
            named("B", 1, 20, None),
            named("C", 1, 30, None),
        ];
        assert!(
            bound_by(&three, 8, 8).ends_with("over A 1..10 PEs, B 1..20 PEs, C 1..30 PEs, summed")
        );
        assert_eq!(
            bound_by(&c, 4, 8),
            "initial_step 4 is below minimum_step 8: only the start"
        );
    }

    /// The bound holds against Algorithm 1 itself: every test of campaigns with random
    /// limits and random (synthetic) partial coupling costs ends within it.
    #[test]
    fn no_two_component_test_runs_past_the_bound() {
        use crate::campaign::strategy::algorithm1::{decide, DecisionInput, Limits};
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let names = vec!["A".to_string(), "B".to_string()];
        for _ in 0..2000 {
            let lows = [rng.random_range(1..200u32), rng.random_range(1..200u32)];
            let highs = [
                lows[0] + rng.random_range(0..400u32),
                lows[1] + rng.random_range(0..400u32),
            ];
            let minimum_step = rng.random_range(1..40u32);
            let initial_step = minimum_step * rng.random_range(1..9u32);
            let comps = [comp(lows[0], highs[0], None), comp(lows[1], highs[1], None)];
            let bound = iteration_bound(&comps, initial_step, minimum_step);
            let limits: Vec<Limits> = (0..2)
                .map(|k| Limits {
                    low: lows[k],
                    high: highs[k],
                    allowed: None,
                })
                .collect();
            let mut nproc = vec![
                rng.random_range(lows[0]..=highs[0]),
                rng.random_range(lows[1]..=highs[1]),
            ];
            let max_nproc = nproc.iter().sum::<u32>() + rng.random_range(0..200u32);
            let mut seen = vec![nproc.clone()];
            let (mut step, mut previous) = (initial_step, None);
            let mut iterations = 1;
            loop {
                let partial = [rng.random::<f64>(), rng.random::<f64>()];
                let d = decide(
                    &DecisionInput {
                        nproc: &nproc,
                        step,
                        previous,
                        partial: Some(&partial),
                        minimum_step,
                        limits: &limits,
                        max_nproc,
                        names: &names,
                    },
                    &|c| seen.iter().any(|s| s.as_slice() == c),
                );
                let Some(next) = d.next else { break };
                iterations += 1;
                assert!(iterations <= bound, "{iterations} > {bound}");
                seen.push(next.clone());
                nproc = next;
                step = d.step;
                previous = d.donor.zip(d.recipient);
            }
        }
    }
}
