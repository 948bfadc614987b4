//! Ranking with the full calibrated model (`predict::full_model`) against the obvious way:
//! every kept configuration of the problem scored with `Model::estimate` (the shortlist
//! re-scoring it replaced did exactly this), sorted, the top N taken. Random problems of one to
//! three components, with and without a machine's bill, `[[resource]]` budgets, a balance
//! slowdown of any size on the model's grid, and a fixed cost per run.

use crate::common::predict::{
    cost_model_strategy, fitted, problem_strategy, resource_model_strategy, Speeds,
};
use autolb::machine::CostModel;
use autolb::metrics;
use autolb::model::overhead::SIGMA_GRID;
use autolb::model::{EstimateRequest, Model};
use autolb::predict::{
    full_model, naive, rank_order, ComponentInput, Problem, ProblemOptions, Scored, Settings,
};
use proptest::prelude::*;

/// The top N by the full model, the obvious way: every kept configuration (the naive
/// enumeration's), each re-scored with `Model::estimate` as the full model predicts it.
fn oracle(
    problem: &Problem,
    model: &Model,
    inputs: &[ComponentInput],
    tts_w: f64,
    top: usize,
) -> Vec<Scored> {
    let every = naive::enumerate(problem, tts_w, usize::MAX);
    let mut scored: Vec<Scored> = every
        .top
        .iter()
        .map(|k| {
            let index: Vec<usize> = k
                .nproc
                .iter()
                .enumerate()
                .map(|(d, &p)| problem.candidate_index(d, p).expect("a candidate"))
                .collect();
            let mut c = problem.score(&index, tts_w);
            let e = model.estimate(&EstimateRequest::curves(
                inputs,
                problem.settings.interp,
                &c.nproc,
            ));
            let slower = c.sypd / e.sypd;
            c.sypd = e.sypd;
            c.chsy *= slower;
            if let Some(b) = c.billing.as_mut() {
                b.cost *= slower;
            }
            let pairs: Vec<(f64, f64)> = c
                .nproc
                .iter()
                .zip(&e.components)
                .map(|(&n, &s)| (f64::from(n), s))
                .collect();
            c.coupling_cost = metrics::predicted_coupling_cost(c.sypd, &pairs);
            c.fittingness = metrics::fittingness_in(
                tts_w,
                c.sypd,
                c.cost(),
                &problem.sypd_bounds,
                &problem.cost_bounds,
            );
            c
        })
        .collect();
    scored.sort_by(rank_order);
    scored.truncate(top);
    scored
}

/// A calibrated model on the problem's candidates with the balance slowdown set to `sigma`
/// and, with `fixed`, a fixed cost per run and a typical run length (so the search's speeds
/// and the estimate both carry the run's share of it).
fn model_for(
    inputs: &[ComponentInput],
    settings: &Settings,
    picks: &[(f64, f64)],
    sigma: f64,
    fixed: bool,
) -> Option<Model> {
    let mut model = fitted(inputs, settings, picks)?;
    if let Model::Calibrated(c) = &mut model {
        c.coupled.irregularity = sigma;
        if fixed {
            c.fixed_s = 30.0;
            c.typical_simulated_s = Some(7.0 * 86_400.0);
        }
    }
    Some(model)
}

fn same_as_oracle(
    inputs: &[ComponentInput],
    settings: &Settings,
    model: &Model,
    cost_model: &CostModel,
) -> Result<(), TestCaseError> {
    let Ok(problem) = Problem::build(
        inputs,
        settings,
        ProblemOptions {
            model: Some(model),
            cost_model: Some(cost_model),
        },
    ) else {
        return Ok(());
    };
    for tts_w in [settings.tts_w, 0.0, 1.0] {
        let fast = full_model::rank(&problem, model, inputs, tts_w, settings.top);
        let expected = oracle(&problem, model, inputs, tts_w, settings.top);
        prop_assert_eq!(&fast.top, &expected, "TTS_w {}", tts_w);
        prop_assert_eq!(fast.baseline, problem.baseline(tts_w));
    }
    Ok(())
}

fn sigma() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        proptest::sample::select(SIGMA_GRID.to_vec()),
        0.0f64..0.6
    ]
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    #[test]
    fn full_model_top_n_equals_full_enumeration(
        (inputs, settings) in problem_strategy(1..=3, Speeds::Continuous),
        picks in proptest::collection::vec((0.0f64..1.0, 0.3f64..1.2), 1..6),
        sigma in sigma(),
        fixed in proptest::bool::ANY,
    ) {
        let Some(model) = model_for(&inputs, &settings, &picks, sigma, fixed) else {
            return Ok(());
        };
        same_as_oracle(&inputs, &settings, &model, &CostModel::default())?;
    }

    /// Ties between components are the hard case of bottleneck groups.
    #[test]
    fn full_model_top_n_equals_full_enumeration_with_ties(
        (inputs, settings) in problem_strategy(2..=3, Speeds::Coarse),
        picks in proptest::collection::vec((0.0f64..1.0, 0.3f64..1.2), 1..6),
        sigma in sigma(),
    ) {
        let Some(model) = model_for(&inputs, &settings, &picks, sigma, false) else {
            return Ok(());
        };
        same_as_oracle(&inputs, &settings, &model, &CostModel::default())?;
    }

    #[test]
    fn full_model_top_n_equals_full_enumeration_on_the_bill(
        (inputs, settings) in problem_strategy(1..=3, Speeds::Continuous),
        picks in proptest::collection::vec((0.0f64..1.0, 0.3f64..1.2), 1..6),
        sigma in sigma(),
        cost_model in cost_model_strategy(),
    ) {
        let Some(model) = model_for(&inputs, &settings, &picks, sigma, false) else {
            return Ok(());
        };
        same_as_oracle(&inputs, &settings, &model, &cost_model)?;
    }

    #[test]
    fn full_model_top_n_equals_full_enumeration_on_resources(
        (inputs, settings) in problem_strategy(2..=2, Speeds::Continuous),
        picks in proptest::collection::vec((0.0f64..1.0, 0.3f64..1.2), 1..6),
        sigma in sigma(),
        cost_model in resource_model_strategy(2),
    ) {
        let Some(model) = model_for(&inputs, &settings, &picks, sigma, false) else {
            return Ok(());
        };
        same_as_oracle(&inputs, &settings, &model, &cost_model)?;
    }
}
