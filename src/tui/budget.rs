//! The budget slider and the cost selector: what `{`/`}` and `$` do to the app's problem.
//!
//! Both rebuild the prediction the way `autolb predict` builds it ([`Problem::billed_with_model`]
//! on the same inputs, with only `max_nproc` or the cost changed), so the app at budget B shows
//! the same feasible and kept counts and the same top N as `predict --max-nproc B`. A change
//! that the prediction refuses (below the base case, nothing fits the chosen queue) leaves the
//! app as it was and says why.
//!
//! Decisions where the issue is silent: the budget moves by one node of the `[machine]`
//! (`cores_per_node` PEs) or else by the candidate `step`; it stops at the base case below and,
//! above, at the sum of every component's largest candidate PE count (a larger budget changes
//! nothing). The other model's problem (`M`) is rebuilt at the same budget and cost when it is
//! switched to, not on every key.

use autolb::machine::{CostKind, CostModel};
use autolb::metrics;
use autolb::predict::{ComponentInput, Problem, Settings};

use super::app::{index_of, App};
use super::trade_off::TradeOffState;

/// PEs one budget key moves: a node's cores with a machine, else the candidate step.
pub fn budget_step(problem: &Problem) -> u32 {
    problem
        .cost_model
        .machine
        .map_or(problem.settings.step, |m| m.cores_per_node)
        .max(1)
}

/// The budgets worth moving between: the base case's PEs (no smaller budget has a
/// prediction) up to every component at its largest PE count (no larger one changes it).
pub fn budget_range(problem: &Problem, inputs: &[ComponentInput]) -> (u32, u32) {
    let low: u32 = problem.baseline_nproc.iter().sum();
    let high: u32 = inputs
        .iter()
        .map(|c| {
            let last = c.curve.last_nproc();
            let own = c.max_nproc.map_or(last, |m| m.min(last));
            match &c.allowed {
                Some(list) => list
                    .iter()
                    .copied()
                    .filter(|&p| p <= own)
                    .max()
                    .unwrap_or(0),
                None => own,
            }
        })
        .fold(0u32, u32::saturating_add);
    (low, high.max(low))
}

/// The cost after `current` in the selector's cycle over `available`.
pub fn next_cost(available: &[CostKind], current: CostKind) -> CostKind {
    let at = available.iter().position(|&k| k == current).unwrap_or(0);
    available[(at + 1) % available.len().max(1)]
}

impl App {
    /// `}` (`up`) or `{`: one budget step more or less, re-predicted at once.
    pub fn step_budget(&mut self, up: bool) {
        let step = budget_step(&self.problem);
        let (low, high) = budget_range(&self.problem, &self.inputs);
        let now = self.problem.settings.max_nproc;
        let target = if up {
            now.saturating_add(step).min(high.max(now))
        } else {
            now.saturating_sub(step).max(low)
        };
        if target == now {
            self.message = Some(if up {
                format!("the budget {now} already holds every component's largest PE count")
            } else {
                format!("the budget {now} is the base case's PEs; a smaller one has no prediction")
            });
            return;
        }
        self.set_budget(target);
    }

    /// Re-predicts at budget `max_nproc` (the balanced components' PEs, as `--max-nproc`).
    pub fn set_budget(&mut self, max_nproc: u32) {
        let settings = Settings {
            max_nproc,
            ..self.problem.settings.clone()
        };
        let cost_model = self.problem.cost_model.clone();
        match self.rebuild(&settings, &cost_model) {
            Ok(problem) => {
                // The other model's problem is now stale; `M` rebuilds it.
                self.replace_problem(problem);
                self.error = None;
                self.message = Some(format!("budget {}", self.budget_text()));
            }
            Err(e) => self.error = Some(format!("budget {max_nproc}: {e}")),
        }
    }

    /// `$`: the next cost the machine defines (core-hours, node-hours, energy).
    pub fn cycle_cost(&mut self) {
        let available = self.problem.cost_model.available_costs();
        if available.len() < 2 {
            self.message = Some(
                "only core-hours: node-hours needs cores_per_node ([machine] or \
                 --cores-per-node), energy also node_power_w"
                    .into(),
            );
            return;
        }
        let cost = next_cost(&available, self.problem.cost_model.cost);
        let cost_model = CostModel {
            cost,
            ..self.problem.cost_model.clone()
        };
        let settings = self.problem.settings.clone();
        match self.rebuild(&settings, &cost_model) {
            Ok(problem) => {
                self.replace_problem(problem);
                self.error = None;
                self.message = Some(format!(
                    "cost: {} ({}) colours the matrix and ranks the top N",
                    cost.label(),
                    cost.header()
                ));
            }
            Err(e) => self.error = Some(format!("cost {}: {e}", cost.label())),
        }
    }

    /// The problem of the model shown now at other settings.
    pub(super) fn rebuild(
        &self,
        settings: &Settings,
        cost_model: &CostModel,
    ) -> Result<Problem, autolb::predict::PredictError> {
        Problem::billed_with_model(&self.inputs, settings, self.active_model(), cost_model)
    }

    /// Whether `other` was built at another budget or cost than the problem shown.
    pub(super) fn is_stale(&self, other: &Problem) -> bool {
        other.settings.max_nproc != self.problem.settings.max_nproc
            || other.cost_model != self.problem.cost_model
    }

    /// Shows `problem` instead of the current one, which it returns: the top N, the matrix, the
    /// front and the table's FN follow; the cursor, the front's cursor and the marks stay on
    /// their PEs.
    pub fn replace_problem(&mut self, problem: Problem) -> Problem {
        let cursor_nproc = self.cursor_nproc();
        let front_nproc = self.trade_off.selected_config().map(|c| c.nproc.clone());
        let old = std::mem::replace(&mut self.problem, problem);
        self.cursor = nearest_index(&self.problem, &cursor_nproc);
        // A cursor the new budget leaves outside goes to the new recommendation.
        let outside = matches!(
            self.problem.cell(&self.cursor, self.tts_w()),
            autolb::predict::Cell::OverBudget
        );
        self.rerank();
        if outside {
            if let Some(index) = self
                .recommended()
                .and_then(|c| index_of(&self.problem, &c.nproc))
            {
                self.cursor = index;
                self.rerank();
            }
        }
        let measured = std::mem::take(&mut self.trade_off.measured);
        self.trade_off = TradeOffState::new(&self.problem, self.cloud_points());
        self.trade_off.measured = measured;
        self.reprice_measured();
        // The front's cursor stays on its configuration while it is on the new front, else
        // goes to the recommendation.
        let on_front = |n: &Vec<u32>| self.trade_off.front.iter().any(|c| &c.nproc == n);
        let target = front_nproc
            .filter(on_front)
            .or_else(|| self.prediction.top.first().map(|c| c.nproc.clone()));
        if let Some(n) = target {
            self.trade_off.select(&n);
        }
        self.rescore_table();
        old
    }

    /// The measured points' cost on the trade-off pane, billed like the problem.
    pub(super) fn reprice_measured(&mut self) {
        let extras = self.problem.settings.extra_pes;
        let model = &self.problem.cost_model;
        for m in &mut self.trade_off.measured {
            m.chsy = metrics::chsy(model.weight_of(&m.nproc, extras), m.sypd);
        }
    }

    /// The budget as the status line and the slider say it: `672 PEs` and, with a machine,
    /// the nodes of the largest job it allows (extras included).
    pub fn budget_text(&self) -> String {
        let p = &self.problem;
        let b = p.settings.max_nproc;
        match p.cost_model.machine {
            Some(m) if m.placement == autolb::machine::Placement::Packed => {
                let nodes = autolb::machine::nodes_for(b + p.settings.extra_pes, m.cores_per_node);
                format!("{b} PEs ({nodes} nodes with the extras)")
            }
            _ => format!("{b} PEs"),
        }
    }
}

/// A cost as the app writes it: kWh per simulated year with one decimal (a job's energy per
/// year is tens of kWh), core-hours whole.
pub fn cost_text(kind: CostKind, cost: f64) -> String {
    match kind {
        CostKind::Energy => format!("{cost:.1}"),
        _ => format!("{cost:.0}"),
    }
}

/// Candidate indices of `nproc` in `problem`, each component at its candidate nearest to the
/// PEs it had (candidates can change with the budget when a component has very many).
pub fn nearest_index(problem: &Problem, nproc: &[u32]) -> Vec<usize> {
    if let Some(index) = index_of(problem, nproc) {
        return index;
    }
    problem
        .components
        .iter()
        .zip(nproc)
        .map(|(c, &p)| {
            let i = c.nproc.partition_point(|&q| q < p);
            match (i.checked_sub(1), c.nproc.get(i)) {
                (Some(lo), Some(&hi)) if p - c.nproc[lo] <= hi - p => lo,
                (_, Some(_)) => i,
                (Some(lo), None) => lo,
                (None, None) => 0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_cycles_over_what_is_defined() {
        let all = CostKind::ALL;
        assert_eq!(next_cost(&all, CostKind::CoreHours), CostKind::NodeHours);
        assert_eq!(next_cost(&all, CostKind::Energy), CostKind::CoreHours);
        let two = [CostKind::CoreHours, CostKind::NodeHours];
        assert_eq!(next_cost(&two, CostKind::NodeHours), CostKind::CoreHours);
    }
}
