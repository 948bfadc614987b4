//! `campaign plan`: what `init` would create, before anything exists, so a workflow manager can
//! build its job graph first (Autosubmit needs its member list and chunk count, and every job's
//! PEs, before `autosubmit create`).
//!
//! The iteration bound it states is [`super::bound`]'s.

use std::path::Path;

use serde::Serialize;

use super::state::State;
use super::status::NameMap;
use super::CampaignError;
use crate::config::CampaignFile;

/// `campaign plan --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The balanced components' names, in order.
    pub components: Vec<String>,
    /// The tests of the first lb-iteration (the predictions and the original configuration).
    pub tests: Vec<PlannedTest>,
    /// The most runs of one test in one iteration (guided: the most runs of one
    /// configuration): Autosubmit's SPLITS.
    pub repetitions: u32,
    /// Runs of each test of the first iteration: what runs first (a cold start's scaling
    /// phase runs its own `[scaling] repetitions`).
    pub first_repetitions: u32,
    /// The most lb-iterations the campaign takes ([`super::bound::iteration_limit`]).
    pub max_iterations: u32,
    /// Whether `max_iterations` holds for sure (the campaign's `max_iterations` enforces it,
    /// or Algorithm 1's bound with two components proves it) or is an estimate.
    pub bound_proven: bool,
    /// Which settings give `max_iterations`: the step values and the range that takes the most
    /// moves, so a user who finds the bound too high knows what to change.
    pub bound_by: String,
    /// PEs to request for any run: the largest total a configuration can reach (the budget, or
    /// a starting configuration's total if larger) plus `extra_pes`.
    pub job_nproc: u32,
    /// The PE budget of the balanced components together.
    pub max_nproc: u32,
    /// PEs every run takes besides the balanced components (XIOS, runoff mapper).
    pub extra_pes: u32,
    /// PEs moved in the first lb-iteration.
    pub initial_step: u32,
    /// A test finishes once its step falls below this many PEs.
    pub minimum_step: u32,
    /// Notes on the first tests' PE counts, one line each: counts that leave part of a node
    /// unused, where an allowed list holds too few whole-node counts for the series asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// OpenMP threads per rank of each component, when one runs more than one (absent for
    /// pure MPI): every `nproc` counts cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<NameMap<u32>>,
}

impl Plan {
    /// A test's configuration as text, a hybrid component as `ranks x threads`
    /// (`oifs 191x4 / nemo 259`).
    pub fn configuration_text(&self, test: &PlannedTest) -> String {
        test.nproc
            .0
            .iter()
            .enumerate()
            .map(|(k, (name, p))| {
                match self
                    .threads
                    .as_ref()
                    .and_then(|t| t.0.get(k))
                    .map(|(_, t)| *t)
                {
                    Some(t) if t > 1 => format!("{name} {}x{t}", p / t),
                    _ => format!("{name} {p}"),
                }
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

/// One test of the first iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedTest {
    /// The test's stable id, 0-based.
    pub test: u32,
    /// Where it came from: `prediction #k` or `original`.
    pub origin: String,
    /// PEs per balanced component.
    pub nproc: NameMap<u32>,
    /// All PEs of its runs, `extra_pes` included.
    pub total_nproc: u32,
}

/// Plans the campaign a campaign file would create (nothing is written).
pub fn plan_file(path: &Path) -> Result<Plan, CampaignError> {
    let file = CampaignFile::load(path)?;
    let base_dir = super::file_base_dir(path);
    let origin = path.display().to_string();
    let (state, inputs) = super::planned_state(&file, base_dir, &origin)?;
    super::init::check_executor(&state, &inputs, base_dir, &origin)?;
    Ok(plan_of(&state))
}

/// The plan of a freshly initialised state.
pub fn plan_of(state: &State) -> Plan {
    let names = state.component_names();
    let s = &state.settings;
    let first = state.iterations.first();
    let tests: Vec<PlannedTest> = first
        .map(|it| {
            it.tests
                .iter()
                .map(|t| PlannedTest {
                    test: t.test,
                    origin: state.origin_of(t.test).unwrap_or_default().into(),
                    nproc: NameMap::zip(&names, t.nproc.iter().copied()),
                    total_nproc: super::tree::used_pes(state, &t.nproc).saturating_add(s.extra_pes),
                })
                .collect()
        })
        .unwrap_or_default();
    let largest_start = first
        .into_iter()
        .flat_map(|it| &it.tests)
        .map(|t| super::tree::used_pes(state, &t.nproc))
        .max()
        .unwrap_or(0);
    let limit = super::bound::iteration_limit(state);
    let first_repetitions = first
        .into_iter()
        .flat_map(|it| &it.tests)
        .map(|t| t.runs.len() as u32)
        .max()
        .unwrap_or(s.repetitions);
    let threads = state
        .components
        .iter()
        .any(|c| c.threads > 1)
        .then(|| NameMap::zip(&names, state.components.iter().map(|c| c.threads)));
    Plan {
        notes: partial_node_notes(state),
        threads,
        components: names,
        tests,
        repetitions: s.repetitions.max(first_repetitions),
        first_repetitions,
        max_iterations: limit.at_most,
        bound_by: limit.by,
        bound_proven: limit.proven,
        job_nproc: s.max_nproc.max(largest_start).saturating_add(s.extra_pes),
        max_nproc: s.max_nproc,
        extra_pes: s.extra_pes,
        initial_step: s.initial_step,
        minimum_step: s.minimum_step,
    }
}

/// Per component whose first-series counts leave part of a node unused, a line naming them:
/// an allowed list with too few whole-node counts keeps its other counts rather than measure
/// fewer than asked ([`super::strategy::scaling::counts::Grid::new`]).
fn partial_node_notes(state: &State) -> Vec<String> {
    let Some(node) = state.cores_per_node().filter(|&n| n > 1) else {
        return Vec::new();
    };
    if !state.measures_curves() {
        return Vec::new();
    }
    let tests = state
        .iterations
        .first()
        .map(|it| &it.tests[..])
        .unwrap_or(&[]);
    state
        .components
        .iter()
        .enumerate()
        .filter_map(|(c, comp)| {
            let mut partial: Vec<u32> = tests
                .iter()
                .filter_map(|t| t.nproc.get(c).copied())
                .filter(|&p| p > 0 && p % node != 0)
                .collect();
            partial.sort_unstable();
            partial.dedup();
            let list: Vec<String> = partial.iter().map(u32::to_string).collect();
            (!partial.is_empty()).then(|| {
                format!(
                    "{}: {} PEs leave part of a {node}-core node unused (too few of its allowed \
                     counts are whole nodes for the counts asked); such a run takes whole nodes, \
                     and with cost = \"node-hours\" pays for them",
                    comp.name,
                    list.join(", ")
                )
            })
        })
        .collect()
}
