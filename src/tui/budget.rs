//! The budget slider and the cost selector: what `{`/`}` and `$` do to the ranking's problem.
//! The budget and the cost are settings of the problem, so these are [`Ranking`] methods; each
//! answers a [`Change`] that the app shows (the matrix, the front and the table follow).
//!
//! Both rebuild the prediction the way `autolb predict` builds it ([`Problem::build`]
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
use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};

use super::ranking::{index_of, Ranking};

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
            let own = c.range().map_or(0, |(_, last)| last);
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

/// What a budget or cost key comes to.
#[derive(Debug)]
pub enum Change {
    /// Show this problem; the message says what it changed.
    To(Box<Problem>, String),
    /// Nothing to change; the message says why.
    Note(String),
    /// The prediction refused the change; the error says why.
    Refused(String),
}

impl Ranking {
    /// `}` (`up`) or `{`: one budget step more or less, re-predicted at once.
    pub fn step_budget(&self, up: bool) -> Change {
        let step = budget_step(&self.problem);
        let (low, high) = budget_range(&self.problem, &self.inputs);
        let now = self.problem.settings.max_nproc;
        let target = if up {
            now.saturating_add(step).min(high.max(now))
        } else {
            now.saturating_sub(step).max(low)
        };
        if target == now {
            return Change::Note(if up {
                format!("the budget {now} already holds every component's largest PE count")
            } else {
                format!("the budget {now} is the base case's PEs; a smaller one has no prediction")
            });
        }
        self.at_budget(target)
    }

    /// Re-predicts at budget `max_nproc` (the balanced components' PEs, as `--max-nproc`).
    pub fn at_budget(&self, max_nproc: u32) -> Change {
        let settings = Settings {
            max_nproc,
            ..self.problem.settings.clone()
        };
        match self.rebuild(&settings, &self.problem.cost_model) {
            Ok(problem) => {
                let message = format!("budget {}", budget_text(&problem));
                Change::To(Box::new(problem), message)
            }
            Err(e) => Change::Refused(format!("budget {max_nproc}: {e}")),
        }
    }

    /// `$`: the next cost the machine defines (core-hours, node-hours, energy).
    pub fn next_cost(&self) -> Change {
        let available = self.problem.cost_model.available_costs();
        if available.len() < 2 {
            return Change::Note(
                "only core-hours: node-hours needs cores_per_node ([machine] or \
                 --cores-per-node), energy also node_power_w"
                    .into(),
            );
        }
        let cost = next_cost(&available, self.problem.cost_model.cost);
        let cost_model = CostModel {
            cost,
            ..self.problem.cost_model.clone()
        };
        match self.rebuild(&self.problem.settings, &cost_model) {
            Ok(problem) => Change::To(
                Box::new(problem),
                format!(
                    "cost: {} ({}) colours the matrix and ranks the top N",
                    cost.label(),
                    cost.header()
                ),
            ),
            Err(e) => Change::Refused(format!("cost {}: {e}", cost.label())),
        }
    }

    /// The problem of the model shown now at other settings.
    pub fn rebuild(
        &self,
        settings: &Settings,
        cost_model: &CostModel,
    ) -> Result<Problem, autolb::predict::PredictError> {
        Problem::build(
            &self.inputs,
            settings,
            ProblemOptions {
                model: Some(self.active_model()),
                cost_model: Some(cost_model),
            },
        )
    }

    /// Whether `other` was built at another budget or cost than the problem shown.
    pub fn is_stale(&self, other: &Problem) -> bool {
        other.settings.max_nproc != self.problem.settings.max_nproc
            || other.cost_model != self.problem.cost_model
    }

    /// The budget as the status line and the slider say it (see [`budget_text`]).
    pub fn budget_text(&self) -> String {
        budget_text(&self.problem)
    }
}

/// The budget as the status line and the slider say it: `672 PEs` and, with a machine, the
/// nodes of the largest job it allows (extras included).
pub fn budget_text(p: &Problem) -> String {
    let b = p.settings.max_nproc;
    match p.cost_model.machine {
        Some(m) if m.placement.shares_nodes() => {
            let nodes = autolb::machine::nodes_for(b + p.settings.extra_pes, m.cores_per_node);
            format!("{b} PEs ({nodes} nodes with the extras)")
        }
        _ => format!("{b} PEs"),
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
