//! How a campaign chooses the next iteration's tests: one trait, two strategies.
//!
//! A [`Strategy`] looks at the state after an iteration has ended (every run done or failed)
//! and returns a [`Plan`]: one decision per test of that iteration, and the tests of the next
//! iteration, each with the reason it was chosen. The driver, the executors, `next`/`record`,
//! the state file and the app only ever see the plan, so they do not know which strategy ran.
//!
//! * [`Algorithm1`]: the paper's Algorithm 1 ([`algorithm1`]), unchanged.
//! * [`guided::Guided`]: the calibrated model chooses where to measure next.
//! * [`scaling::Scaling`]: a scaling campaign's, which measures curves instead of balancing.
//! * [`cold_start::ColdStart`]: a campaign without curves, the coupled scaling design first,
//!   then the guided strategy once the model is firm.

pub mod algorithm1;
pub mod budgets;
pub mod cold_start;
pub mod guided;
pub mod scaling;
pub mod tree_moves;

use std::collections::HashSet;
use std::path::Path;

use self::algorithm1::{DecisionInput, Limits};
use super::state::{Decision, Iteration, RunMetrics, State};
use crate::config::Strategy as StrategyKind;

/// What a strategy decided after an iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// One per test of the iteration that ended, in its order.
    pub decisions: Vec<Decision>,
    /// The next iteration's tests; empty when the campaign is over.
    pub next: Vec<PlannedTest>,
    /// A cold start's phase of the next iteration; `None` in other campaigns.
    pub phase: Option<super::state::ColdStartPhase>,
    /// A cold start's balancing plan: the FN normalisation it compared on.
    pub normalisation: Option<super::state::Normalisation>,
}

/// A test of the next iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTest {
    /// An existing test goes on (`Some(id)`), or a new test starts (`None`; its origin is the
    /// strategy's name).
    pub test: Option<u32>,
    /// PEs per component, in component order.
    pub nproc: Vec<u32>,
    /// The test's step in the new iteration.
    pub step: u32,
    /// Runs to make of it in the new iteration (at least 1).
    pub runs: u32,
    /// Why it was chosen; `None` when it follows from the decision (Algorithm 1).
    pub reason: Option<String>,
}

/// Why a strategy could not plan the next iteration. Nothing is decided then: the campaign
/// stays as it was, and planning again once the cause is gone carries on from there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A file the strategy reads could not be read. On a parallel file system this is often
    /// momentary (a busy metadata server, a file being replaced), so trying again can help.
    #[error("cannot read {what}: {reason}")]
    Unreadable {
        /// What could not be read (a curve, a run's timing output), with its path.
        what: String,
        /// What the filesystem or the reader said.
        reason: String,
    },
    /// The strategy reads the campaign directory and was given only the state.
    #[error("the {strategy} strategy needs the campaign directory (it reads the curves there)")]
    NeedsDirectory {
        /// The strategy's name (`guided`).
        strategy: &'static str,
    },
}

impl PlanError {
    /// Whether trying again shortly can succeed (a read that failed), as opposed to a call
    /// that can never plan.
    pub fn is_transient(&self) -> bool {
        matches!(self, PlanError::Unreadable { .. })
    }
}

/// Chooses the next iteration's tests from the state after an iteration.
pub trait Strategy {
    /// `dir` is the campaign directory (copies of the curves live there); `None` when the
    /// caller has only the state, which is enough for Algorithm 1.
    fn plan(&self, state: &State, dir: Option<&Path>) -> Result<Plan, PlanError>;
}

/// The strategy of a campaign: a scaling campaign's ([`scaling::Scaling`]), else the one it
/// was created with.
pub fn for_state(state: &State) -> Box<dyn Strategy> {
    if state.is_cold_start() {
        Box::new(cold_start::ColdStart)
    } else if state.is_scaling() {
        Box::new(scaling::Scaling)
    } else {
        of(state.settings.strategy)
    }
}

/// The strategy a balancing campaign was created with.
pub fn of(kind: StrategyKind) -> Box<dyn Strategy> {
    match kind {
        StrategyKind::Algorithm1 => Box::new(Algorithm1),
        StrategyKind::Guided => Box::new(guided::Guided),
    }
}

/// The balanced components' limits and allowed lists, in component order.
pub fn limits_of(state: &State) -> Vec<Limits> {
    state
        .components
        .iter()
        .map(|c| Limits {
            low: c.low,
            high: c.high,
            allowed: c.allowed.clone(),
        })
        .collect()
}

/// Algorithm 1 (the guide's `method/algorithm1.md`): each test of the iteration takes its
/// own donor/recipient decision; the tests that go on make the next iteration.
pub struct Algorithm1;

impl Strategy for Algorithm1 {
    fn plan(&self, state: &State, _dir: Option<&Path>) -> Result<Plan, PlanError> {
        let mut plan = Plan::default();
        let Some(last) = state.iterations.len().checked_sub(1) else {
            return Ok(plan);
        };
        let names = state.component_names();
        let limits = limits_of(state);
        let budgets = state.settings.budgets();
        // A layout tree moves PEs between the sides of its `|` (see `tree_moves`).
        let tree = super::tree::tree_of(state.settings.layout.as_deref());
        let mut seen: HashSet<Vec<u32>> = state
            .iterations
            .iter()
            .flat_map(|it| it.tests.iter().map(|t| t.nproc.clone()))
            .collect();
        for test in &state.iterations[last].tests {
            let previous = previous_direction(&state.iterations[..last], test.test);
            let metrics: Vec<&RunMetrics> = test
                .runs
                .iter()
                .filter_map(|r| r.metrics.as_ref())
                .collect();
            let means = algorithm1::mean_metrics(metrics);
            let decision = if let Some(tree) = &tree {
                tree_moves::decide(
                    &tree_moves::TreeInput {
                        tree,
                        names: &names,
                        nproc: &test.nproc,
                        step: test.step,
                        previous,
                        partial: means.as_ref().map(|m| m.partial_coupling_cost.as_slice()),
                        minimum_step: state.settings.minimum_step,
                        limits: &limits,
                        max_nproc: state.settings.max_nproc,
                    },
                    &|c| seen.contains(c),
                )
            } else {
                algorithm1::decide_within(
                    &DecisionInput {
                        nproc: &test.nproc,
                        step: test.step,
                        previous,
                        partial: means.as_ref().map(|m| m.partial_coupling_cost.as_slice()),
                        minimum_step: state.settings.minimum_step,
                        limits: &limits,
                        max_nproc: state.settings.max_nproc,
                        names: &names,
                    },
                    &budgets,
                    &|c| seen.contains(c),
                )
            };
            if let Some(next) = &decision.next {
                seen.insert(next.clone());
                plan.next.push(PlannedTest {
                    test: Some(test.test),
                    nproc: next.clone(),
                    step: decision.step,
                    runs: state.settings.repetitions,
                    reason: None,
                });
            }
            plan.decisions.push(decision);
        }
        Ok(plan)
    }
}

/// The (donor, recipient) of a test's most recent decision before the current iteration.
pub fn previous_direction(earlier: &[Iteration], test: u32) -> Option<(usize, usize)> {
    earlier.iter().rev().find_map(|it| {
        let d = it
            .tests
            .iter()
            .find(|t| t.test == test)?
            .decision
            .as_ref()?;
        Some((d.donor?, d.recipient?))
    })
}
