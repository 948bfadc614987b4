//! The fast search must return exactly what the naive enumeration returns: top N, counts and
//! normalisation bounds, on random curves small enough to enumerate.

use crate::common;

use crate::common::predict::{
    cost_model, cost_model_strategy, machine_strategy, queue_strategy, Speeds,
};
use autolb::machine::{CostKind, CostModel, Placement};
use autolb::predict::{naive, ComponentInput, PredictError, Problem, ProblemOptions, Settings};
use proptest::prelude::*;

fn problem_strategy() -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    common::predict::problem_strategy(1..=4, Speeds::Coarse)
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1000))]

    #[test]
    fn fast_search_equals_naive_enumeration((inputs, settings) in problem_strategy()) {
        let Ok(problem) = Problem::new(&inputs, &settings) else {
            // Invalid problems (budget below the base case, no candidates) are errors for both.
            return Ok(());
        };
        common::predict::same_as_naive(&problem, &settings)?;
    }
}

/// The billed search against the naive enumeration on one problem: counts, bounds and top N;
/// when a chosen queue leaves nothing, the naive enumeration must find nothing that fits it
/// either. Invalid problems are errors for both and pass.
fn billed_equals_naive(
    inputs: &[ComponentInput],
    settings: &Settings,
    model: &CostModel,
) -> Result<(), TestCaseError> {
    let problem = match Problem::build(
        inputs,
        settings,
        ProblemOptions {
            model: None,
            cost_model: Some(model),
        },
    ) {
        Ok(p) => p,
        Err(PredictError::NothingFitsQueue(_)) => {
            let open = CostModel {
                queue: None,
                ..model.clone()
            };
            let Ok(all) = Problem::build(
                inputs,
                settings,
                ProblemOptions {
                    model: None,
                    cost_model: Some(&open),
                },
            ) else {
                return Ok(());
            };
            let queue = model
                .chosen_queue()
                .expect("only a chosen queue can exclude all");
            let every = naive::enumerate(&all, settings.tts_w, usize::MAX);
            prop_assert!(every.top.iter().all(|c| !model.fits_queue(
                queue,
                &c.nproc,
                settings.extra_pes,
                c.sypd
            )));
            return Ok(());
        }
        Err(_) => return Ok(()),
    };
    common::predict::same_as_naive(&problem, settings)?;
    Ok(())
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(1000))]

    /// Node rounding (both placements), node-hour and energy costs and queue limits keep the
    /// fast search exact.
    #[test]
    fn billed_search_equals_naive_enumeration(
        (inputs, settings) in problem_strategy(),
        model in cost_model_strategy(),
    ) {
        billed_equals_naive(&inputs, &settings, &model)?;
    }
}

/// A machine that gives each component its own whole nodes, with a cost it can bill and random
/// queues: every two-component problem under it goes through the pair sweep of
/// `src/predict/placed.rs` (budget and queue as binary searches, the weight's extremes at the
/// ends of the kept candidates).
fn per_component_model_strategy() -> impl Strategy<Value = CostModel> {
    (
        machine_strategy(Just(Placement::PerComponent)),
        prop_oneof![
            Just(CostKind::NodeHours),
            Just(CostKind::Energy),
            Just(CostKind::CoreHours)
        ],
        proptest::collection::vec(queue_strategy(), 0..3),
        proptest::option::of(0usize..3),
    )
        .prop_map(|(machine, cost, queues, chosen)| cost_model(Some(machine), cost, queues, chosen))
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(2000))]

    /// Two components on per-component nodes (allowed lists, extra PEs, every cost, queues by
    /// cores, nodes and wall time): the pair sweep finds the naive enumeration's counts, bounds
    /// and top N.
    #[test]
    fn per_component_pair_equals_naive_enumeration(
        (inputs, settings) in common::predict::problem_strategy(2..=2, Speeds::Coarse),
        model in per_component_model_strategy(),
    ) {
        billed_equals_naive(&inputs, &settings, &model)?;
    }
}
