//! The guided strategy (`strategy = "guided"`): after every iteration it refits the calibrated
//! model ([`crate::model`]) on every run measured so far and puts the next runs where the model
//! says they can still beat the best measured configuration, most informative first.
//!
//! One iteration's plan, in order (the guide's page *Strategies: Algorithm 1 and guided* explains the rules):
//! 1. Fit ([`landscape`]): every measured run gives each component's coupled-mode speed (the
//!    run's SYPD over the share of the wall time the component computed, from its partial
//!    coupling cost); the calibrated model learns from them as from any measured run. FN is
//!    normalised once for everything the strategy compares: on the bounds of the model's
//!    predicted landscape (the kept configurations of the prediction ranked with the fitted
//!    model), so that a run far from the answer does not change which of two configurations
//!    near it wins.
//! 2. Choose (`choose`), up to as many tests as the campaign started with:
//!    * `donor/recipient`: the move of Algorithm 1 from the best measured configuration (step
//!      `initial_step`, halved while the target was measured, down to `minimum_step`), when
//!      the model's band lets it beat the best;
//!    * `model`: the configurations whose upper FN beats the best measured FN, by expected
//!      improvement (at least [`tuning::MIN_EI`], and at least [`tuning::MIN_EI_NOISE`]
//!      standard deviations of the best's measured FN), no two within `initial_step / 2` PEs of each
//!      other in one iteration, all within `initial_step` PEs of one of the two best measured
//!      configurations (a trust region that moves with the best).
//!
//!    * `neighbour`, when neither proposes anything: the best's unmeasured neighbours at
//!      `initial_step / 2` PEs (one component up or down, or a move between two components in
//!      either direction) whose upper FN beats the best, by expected improvement (at least
//!      [`tuning::MIN_EI`], no noise floor): the model's mean is least trustworthy right
//!      around the best, where irregular steps decide the balance.
//!
//!    A configuration within `minimum_step` PEs (in every component) of a measured one counts
//!    as measured: it is never run again except as a repetition.
//! 3. Repeat: once nothing unmeasured can beat the best, the best and the measured
//!    configuration closest to it, when its FN is within the band of the noise of the best's
//!    (the model's run-to-run noise over the root of each one's run count, the model's band
//!    width in standard deviations), run once more, up to `repetitions` runs each; then step 2
//!    is tried again on the new means.
//! 4. Stop when there is nothing to choose, no neighbour to check and nothing to repeat.

mod choose;
pub mod landscape;

use std::path::Path;

use super::algorithm1;
use super::{Plan, PlanError, Strategy};
use crate::campaign::state::{Decision, Outcome, RunMetrics, RunState, State};
use crate::curve::Curve;
use landscape::Landscape;

pub use landscape::{component_speeds, measured_configs, within_budget, MeasuredConfig};

/// The strategy's constants (documented in the guide's page *Strategies: Algorithm 1 and guided*).
pub mod tuning {
    /// A model choice is dropped when its expected improvement is below this share of the
    /// iteration's first choice (so iterations shrink as the model converges).
    pub const MIN_EI_SHARE: f64 = 0.5;
    /// Nor is a configuration run whose expected FN gain is below this: a run costs the same
    /// wherever it goes, and a gain this small is below what the noise lets a campaign tell.
    pub const MIN_EI: f64 = 0.001;
    /// Nor one whose expected FN gain is below this many standard deviations of the best's
    /// measured FN (the model's run-to-run noise over the root of its run count): a gain the
    /// noise of the best's own measurement hides is not worth a run, and the campaign stops
    /// once nothing unmeasured promises more.
    pub const MIN_EI_NOISE: f64 = 0.4;
    /// At most this many configurations (the best included) are repeated at once: the best
    /// and the rival most likely to overturn it.
    pub const CONTENDERS_AT_MOST: usize = 2;
    /// The model only proposes configurations within `initial_step` PEs (in every component)
    /// of one of this many best measured configurations: a trust region that moves with the
    /// best, so the runs go where the answer is.
    pub const TRUST_AROUND: usize = 2;
}

/// See the module documentation.
pub struct Guided;

impl Strategy for Guided {
    fn plan(&self, state: &State, dir: Option<&Path>) -> Result<Plan, PlanError> {
        let Some(last) = state.iterations.last() else {
            return Ok(Plan::default());
        };
        let finish_all = |reason: String| Plan {
            decisions: last
                .tests
                .iter()
                .map(|t| {
                    finished(
                        t.runs.iter().filter_map(|r| r.metrics.as_ref()),
                        reason.clone(),
                    )
                })
                .collect(),
            next: Vec::new(),
            phase: None,
            normalisation: None,
        };
        // An unreadable curve ends nothing: the caller may try again (the file system may
        // be slow for a moment) or report it, and the campaign goes on once it can be read.
        let dir = dir.ok_or(PlanError::NeedsDirectory { strategy: "guided" })?;
        let curves = load_curves(state, dir).map_err(|reason| PlanError::Unreadable {
            what: "the campaign's curves".into(),
            reason,
        })?;
        let view = match Landscape::new(state, &curves) {
            Ok(v) => v,
            Err(e) => {
                return Ok(finish_all(format!(
                    "the guided strategy cannot score configurations: {e}"
                )))
            }
        };
        let max_tests = state
            .iterations
            .first()
            .map(|it| it.tests.len())
            .unwrap_or(1)
            .max(1);
        let chosen = choose::choose(&view, max_tests);
        let normalisation = Some(view.normalisation());
        let why_stop = match &chosen.stop {
            Some(reason) => reason.clone(),
            None => "measured; the model chose the next tests".to_string(),
        };
        let mut plan = Plan::default();
        for t in &last.tests {
            let continues = chosen.next.iter().find(|n| n.test == Some(t.test));
            let metrics = t.runs.iter().filter_map(|r| r.metrics.as_ref());
            plan.decisions.push(match continues {
                Some(n) => Decision {
                    next: Some(n.nproc.clone()),
                    step: n.step,
                    outcome: Outcome::Continue,
                    ..finished(metrics, String::new())
                },
                None if t.runs.iter().all(|r| r.state == RunState::Failed) => Decision {
                    outcome: Outcome::Failed {
                        reason: "every run of this test failed".into(),
                    },
                    ..finished(metrics, String::new())
                },
                None => finished(metrics, why_stop.clone()),
            });
        }
        plan.next = chosen.next;
        // Kept in the state for a cold start only: other campaigns' status normalises over
        // what they measured, as the method does.
        if state.is_cold_start() {
            plan.normalisation = normalisation;
        }
        Ok(plan)
    }
}

/// A decision that ends a test, with the donor and recipient of its measurements for the record.
fn finished<'a>(metrics: impl IntoIterator<Item = &'a RunMetrics>, reason: String) -> Decision {
    let means = algorithm1::mean_metrics(metrics);
    let dr = means
        .as_ref()
        .and_then(|m| algorithm1::donor_and_recipient(&m.partial_coupling_cost));
    Decision {
        donor: dr.map(|d| d.0),
        recipient: dr.map(|d| d.1),
        step: 0,
        next: None,
        outcome: Outcome::Finished { reason },
        notes: Vec::new(),
    }
}

/// The campaign's curves, in component order; none in a cold start, whose model learns every
/// component's curve from the coupled runs alone.
pub(crate) fn load_curves(state: &State, dir: &Path) -> Result<Vec<Option<Curve>>, String> {
    if state.measures_curves() {
        return Ok(vec![None; state.components.len()]);
    }
    state
        .components
        .iter()
        .map(|c| {
            Curve::load(c.name.clone(), &dir.join(&c.curve))
                .map(Some)
                .map_err(|e| e.to_string())
        })
        .collect()
}
