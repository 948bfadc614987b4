//! The cold start: a guided campaign without curves. It runs the coupled scaling design
//! ([`super::scaling`], every run a coupled configuration near balance) until the model is
//! firm, then the guided strategy ([`super::guided`]) with the model learnt from every coupled
//! run, in the same campaign and state. Each iteration records its [`ColdStartPhase`].
//!
//! **Firm** ([`firmness`]) means both:
//! * every component has at least [`MIN_COUNTS`] distinct PE counts measured (the model's
//!   scaling law of a component without a curve needs three), and
//! * the model's band at its own best configuration is narrow: its high end at most
//!   [`MAX_BAND`] times its low end, so the guided strategy's choices rest on a model that can
//!   tell configurations near the answer apart.
//!
//! Before it switches, the model's best configuration is measured ([`answer_probe`]) when no
//! measured configuration is within `initial_step` PEs of it: the guided strategy moves from
//! the best measured configuration by at most `initial_step` an iteration, so without that run
//! it would walk from a far-off probe towards the answer a step at a time.
//!
//! **What the model learns from** ([`trusted`]): every coupled run but the slow ones. A slow
//! run (a bad node, a busy file system) makes every component of the run compute longer; the
//! model would take it for a configuration a third as fast, its run-to-run noise for huge,
//! and its band for wide everywhere, so it would never get firm and, balancing, would keep
//! promising gains the noise it believes in could hide. A run is slow when every component's
//! speed in it is one the scaling points leave out or put far below their curve: a run
//! slower than the others at the component's count, or a run at a count far below the curve
//! through its neighbours ([`BELOW_LIMIT`], or that many noise units), even one repeated runs
//! confirmed. A dip of one component (a bad decomposition) is kept: the other components'
//! speeds in the same run agree with their curves. Every component far below its curve at
//! once is the run's doing, not the curves': a configuration whose runs were all slow would
//! otherwise pass for a dip in one component and, beside the same count of another
//! component measured at full speed elsewhere, make the model's noise enormous.
//!
//! The phase ends firm or not once the scaling design has nothing left to run (every curve
//! settled, or its `max_runs` / `max_core_hours` reached), or once it has made its run budget
//! ([`scaling_run_budget`]: the first iteration's runs and [`SCALING_RUNS_PER_COMPONENT`] more
//! per component). A model that never becomes firm (steps the model does not describe, such as
//! heavy radiation steps or interpolation that grows with the PEs, keep its band wide) would
//! otherwise keep the campaign refining curves until `max_iterations` and end it before any
//! balancing; past the budget the guided strategy balances with what the model knows, its
//! trust region keeping each move near measured configurations. The guided strategy then stops
//! at once if the model still cannot score configurations, with the reason; the campaign's
//! answer is then the best measured configuration, on the measured configurations' FN scale.

use std::path::Path;

use super::guided::{landscape::Landscape, measured_configs, Guided};
use super::scaling::points::{points_of, pooled_noise, BELOW_LIMIT, BELOW_NOISE_UNITS};
use super::scaling::{
    configuration_words, core_hours_spent, nothing_measured, runs_so_far, Scaling,
};
use super::{Plan, PlanError, PlannedTest, Strategy};
use crate::campaign::state::{ColdStartPhase, Outcome, State};
use std::collections::BTreeSet;

/// PE counts each component needs measured before the model is firm.
pub const MIN_COUNTS: usize = 3;
/// The widest band (high end over low end of the coupled SYPD) at the model's best
/// configuration that counts as firm: about +-10 % around the estimate.
pub const MAX_BAND: f64 = 1.2;
/// Runs per component the scaling phase may make beyond its first iteration: past this the
/// campaign balances with what the model knows, firm or not. The model's scaling law needs
/// three counts per component and the first series gives four; four more each leave room for
/// the outliers' re-runs and the counts where the curves are most uncertain.
pub const SCALING_RUNS_PER_COMPONENT: u32 = 4;
/// Runs of the model's best ([`answer_probe`]) the phase may make past its run budget: the
/// model moves with every run, and its best with it, so the probes are bounded too.
pub const PROBES_PAST_BUDGET: u32 = 1;

/// See the module documentation.
pub struct ColdStart;

impl Strategy for ColdStart {
    fn plan(&self, state: &State, dir: Option<&Path>) -> Result<Plan, PlanError> {
        if state.phase() == Some(ColdStartPhase::Balancing) {
            let mut plan = Guided.plan(&trusted(state), dir)?;
            plan.phase = Some(ColdStartPhase::Balancing);
            return Ok(plan);
        }
        let scaling = Scaling.plan(state, dir)?;
        if nothing_measured(state) {
            // Nothing to learn a model from: the scaling design's decisions say why it stops.
            return Ok(Plan {
                phase: Some(ColdStartPhase::Scaling),
                ..scaling
            });
        }
        let (made, budget) = (scaling_runs(state), scaling_run_budget(state));
        let switch = match firmness(state) {
            Ok(why) => Some(why),
            Err(why) if scaling.next.is_empty() => Some(format!(
                "the scaling design has nothing left to run, the model not firm ({why})"
            )),
            Err(why) if made >= budget => Some(format!(
                "the scaling phase made {made} runs, its budget of {budget}, the model not firm ({why}); balancing with what the model knows"
            )),
            Err(_) => None,
        };
        let Some(why) = switch else {
            return Ok(Plan {
                phase: Some(ColdStartPhase::Scaling),
                ..scaling
            });
        };
        if let Some(probe) = answer_probe(state) {
            return Ok(Plan {
                phase: Some(ColdStartPhase::Scaling),
                next: vec![probe],
                ..scaling
            });
        }
        let mut plan = Guided.plan(&trusted(state), dir)?;
        for d in &mut plan.decisions {
            if let Outcome::Finished { reason } = &mut d.outcome {
                *reason = format!("scaling phase over: {why}; {reason}");
            }
        }
        plan.phase = Some(ColdStartPhase::Balancing);
        Ok(plan)
    }
}

/// The model's best configuration as one more scaling run, when no measured configuration is
/// within `initial_step` PEs of it in every component (see the module doc); `None` when it is
/// (the guided strategy's first moves reach it), when the model cannot rank configurations,
/// or when the scaling budgets are spent.
pub fn answer_probe(state: &State) -> Option<PlannedTest> {
    let scaling = state.settings.scaling.as_ref()?;
    if scaling_runs(state) >= scaling_run_budget(state) + PROBES_PAST_BUDGET {
        return None;
    }
    if scaling
        .max_runs
        .is_some_and(|max| runs_so_far(state) >= max)
    {
        return None;
    }
    if let Some(max) = scaling.max_core_hours {
        if core_hours_spent(state, scaling).is_none_or(|spent| spent >= max) {
            return None;
        }
    }
    let view = Landscape::new(&trusted(state), &vec![None; state.components.len()]).ok()?;
    let best = view.predicted_best.clone()?;
    let reach = state.settings.initial_step;
    let nearest = distance_to_measured(state, &best)?;
    if nearest <= reach || !state.settings.fits(&best) {
        return None;
    }
    let words = configuration_words(&state.components, &best);
    Some(PlannedTest {
        test: None,
        nproc: best,
        step: 0,
        runs: 1,
        reason: Some(format!(
            "scaling: the model's best ({words}) is {nearest} PEs from every measured configuration, more than initial_step = {reach}; measured before the balancing starts from the best measured"
        )),
    })
}

/// Runs the scaling phase may make before the campaign balances with a model that is not
/// firm: the first iteration's and [`SCALING_RUNS_PER_COMPONENT`] per component.
pub fn scaling_run_budget(state: &State) -> u32 {
    let first = state
        .iterations
        .first()
        .map_or(0, |it| it.tests.iter().map(|t| t.runs.len() as u32).sum());
    first + SCALING_RUNS_PER_COMPONENT * state.components.len() as u32
}

/// Runs made in the scaling phase so far, failed ones included.
pub fn scaling_runs(state: &State) -> u32 {
    state
        .iterations
        .iter()
        .filter(|it| it.phase != Some(ColdStartPhase::Balancing))
        .map(|it| it.tests.iter().map(|t| t.runs.len() as u32).sum::<u32>())
        .sum()
}

/// How far `nproc` is from the nearest configuration with a measured run: the largest
/// difference in any one component's PEs, the distance the guided strategy's trust region
/// moves in. `None` before anything is measured.
pub(crate) fn distance_to_measured(state: &State, nproc: &[u32]) -> Option<u32> {
    measured_configs(state)
        .iter()
        .filter(|m| !m.runs.is_empty())
        .map(|m| {
            m.nproc
                .iter()
                .zip(nproc)
                .map(|(&a, &b)| a.abs_diff(b))
                .max()
                .unwrap_or(0)
        })
        .min()
}

/// The state the model learns from: `state` with the slow runs' measurements taken out (see
/// the module doc). The runs stay, so the plans made from it name the same tests and count
/// the same attempts; a slow run counts as one that measured nothing.
pub fn trusted(state: &State) -> State {
    let slow = slow_runs(state);
    if slow.is_empty() {
        return state.clone();
    }
    let mut out = state.clone();
    for run in out
        .iterations
        .iter_mut()
        .flat_map(|it| &mut it.tests)
        .flat_map(|t| &mut t.runs)
        .filter(|r| slow.contains(&r.id))
    {
        run.metrics = None;
    }
    out
}

/// Ids of the coupled runs every component's scaling points leave out as slow (see the module
/// doc).
pub fn slow_runs(state: &State) -> BTreeSet<String> {
    let noise = pooled_noise(state);
    let limit = BELOW_LIMIT.max(BELOW_NOISE_UNITS * noise);
    let mut slow: Option<BTreeSet<String>> = None;
    for c in 0..state.components.len() {
        let mut flagged = BTreeSet::new();
        for point in points_of(state, c, noise) {
            flagged.extend(point.outliers.iter().cloned());
            let far_below = point.below_neighbours.is_some_and(|b| b > limit);
            if far_below {
                flagged.extend(kept_run_ids(state, c, point.nproc, &point.outliers));
            }
        }
        slow = Some(match slow {
            None => flagged,
            Some(s) => s.intersection(&flagged).cloned().collect(),
        });
    }
    slow.unwrap_or_default()
}

/// Ids of the measured runs in which component `c` ran at `nproc` PEs, but for `left_out`.
fn kept_run_ids(state: &State, c: usize, nproc: u32, left_out: &[String]) -> Vec<String> {
    state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .filter(|t| t.component.is_none() && t.nproc.get(c) == Some(&nproc))
        .flat_map(|t| &t.runs)
        .filter(|r| r.metrics.is_some() && !left_out.contains(&r.id))
        .map(|r| r.id.clone())
        .collect()
}

/// Whether the model is firm enough to balance with (see the module doc): `Ok` with why, or
/// `Err` with what is missing, in words.
pub fn firmness(state: &State) -> Result<String, String> {
    let noise = pooled_noise(state);
    for (c, comp) in state.components.iter().enumerate() {
        let counts = points_of(state, c, noise)
            .iter()
            .filter(|p| p.runs > 0)
            .count();
        if counts < MIN_COUNTS {
            return Err(format!(
                "{} has {counts} PE count(s) measured, the model needs {MIN_COUNTS}",
                comp.name
            ));
        }
    }
    let view = Landscape::new(&trusted(state), &vec![None; state.components.len()])?;
    let best = view
        .predicted_best
        .clone()
        .ok_or("the model ranks no configuration within the budget")?;
    let e = view.estimate(&best);
    let band = e.high / e.low;
    let words = configuration_words(&state.components, &best);
    if !(band.is_finite() && band <= MAX_BAND) {
        return Err(format!(
            "the model's band at its best ({words}) is {:.0} % wide, more than {:.0} %",
            100.0 * (band - 1.0),
            100.0 * (MAX_BAND - 1.0)
        ));
    }
    Ok(format!(
        "model firm: every component has {MIN_COUNTS} or more PE counts measured, and the band at the model's best ({words}) is {:.0} % wide",
        100.0 * (band - 1.0)
    ))
}

/// A cold start's phase in one line, for `campaign status` and the app: what it learns while
/// scaling, and since when the model guides; once the campaign is over (done or cancelled),
/// the phase it ended in and what it came to, with no promise of what comes next (`phase
/// scaling, ended: no coupled run was measured`). It always starts with the phase's name, so
/// a reader of `--json` can tell the phase by the first two words. `None` in other campaigns.
pub fn phase_words(state: &State) -> Option<String> {
    let phase = state.phase()?;
    let ended = match (state.is_done(), state.cancelled) {
        (_, true) => Some("cancelled"),
        (true, false) => Some("ended"),
        (false, false) => None,
    };
    match phase {
        ColdStartPhase::Scaling => {
            let noise = pooled_noise(state);
            let counts: Vec<usize> = (0..state.components.len())
                .map(|c| {
                    points_of(state, c, noise)
                        .iter()
                        .filter(|p| p.runs > 0)
                        .count()
                })
                .collect();
            let words = state
                .components
                .iter()
                .zip(&counts)
                .map(|(comp, n)| format!("{} {n}", comp.name))
                .collect::<Vec<_>>()
                .join(", ");
            Some(match ended {
                Some(how) if counts.iter().all(|&n| n == 0) => {
                    format!("phase scaling, {how}: no coupled run was measured")
                }
                Some(how) => format!(
                    "phase scaling, {how} before any balancing (PE counts measured: {words})"
                ),
                None => format!(
                    "phase scaling: learning the curves in coupled runs (PE counts measured: {words}); balancing starts once the model is firm"
                ),
            })
        }
        ColdStartPhase::Balancing => {
            let since = state
                .iterations
                .iter()
                .find(|it| it.phase == Some(ColdStartPhase::Balancing))
                .map_or(0, |it| it.index);
            Some(match ended {
                Some(how) => format!(
                    "phase balancing, {how}: the model learnt from every coupled run guided the runs since iteration {since}"
                ),
                None => format!(
                    "phase balancing: the model learnt from every coupled run guides the runs since iteration {since}"
                ),
            })
        }
    }
}
