//! What a configuration must fit: every budget (one per resource, or `max_nproc` for the balanced
//! PEs together) and each component's PE limits and allowed list. Algorithm 1 and the guided
//! strategy check feasibility here, in one place.

use crate::campaign::state::FrozenSettings;
use crate::machine::CostModel;

/// Every budget a configuration must fit and what each component's units cost: one budget per
/// resource (without `[[resource]]` tables, one: `max_nproc` for the balanced PEs together).
/// Algorithm 1 and the other strategies check feasibility here, in one place.
#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    /// Each resource's budget, in its units.
    pub max_units: Vec<u32>,
    /// The resource of each component (empty: all on the first).
    pub resource_of: Vec<usize>,
    /// Each resource's unit cost (empty: all 1).
    pub unit_cost: Vec<f64>,
    /// Each resource's name, for messages (empty without resources).
    pub names: Vec<String>,
}

impl Budgets {
    /// One budget for the balanced PEs together.
    pub fn single(max_nproc: u32) -> Budgets {
        Budgets {
            max_units: vec![max_nproc],
            resource_of: Vec::new(),
            unit_cost: Vec::new(),
            names: Vec::new(),
        }
    }

    /// The budgets of a cost model (`None`: the plain model) with `max_nproc` as the budget of
    /// resources without `max_units`.
    pub fn of(model: Option<&CostModel>, max_nproc: u32) -> Budgets {
        match model.filter(|m| m.has_resources()) {
            None => Budgets::single(max_nproc),
            Some(m) => Budgets {
                max_units: m.budgets(max_nproc),
                resource_of: m.component_resource.clone(),
                unit_cost: m.resources.iter().map(|r| r.unit_cost).collect(),
                names: m.resources.iter().map(|r| r.name.clone()).collect(),
            },
        }
    }

    fn resource(&self, c: usize) -> usize {
        self.resource_of.get(c).copied().unwrap_or(0)
    }

    /// Units per resource (u64: sums of any counts cannot wrap).
    fn units(&self, nproc: &[u32]) -> Vec<u64> {
        let mut units = vec![0u64; self.max_units.len().max(1)];
        for (c, &p) in nproc.iter().enumerate() {
            if let Some(u) = units.get_mut(self.resource(c)) {
                *u += u64::from(p);
            }
        }
        units
    }

    /// Whether a configuration fits every budget.
    pub fn fits(&self, nproc: &[u32]) -> bool {
        self.over(nproc).is_none()
    }

    /// Why a configuration does not fit, as the end of a sentence (`None` when it fits):
    /// "uses 800 PEs, over max_nproc = 768" or, per resource, "uses 17 units of gpu, over its
    /// budget of 16".
    pub fn over(&self, nproc: &[u32]) -> Option<String> {
        let units = self.units(nproc);
        let (r, (&u, &b)) = units
            .iter()
            .zip(&self.max_units)
            .enumerate()
            .find(|(_, (&u, &b))| u > u64::from(b))?;
        Some(match self.names.get(r) {
            None => format!("uses {u} PEs, over max_nproc = {b}"),
            Some(name) => format!("uses {u} units of {name}, over its budget of {b}"),
        })
    }

    /// Whether the first components at `prefix`, completed by the others at their smallest
    /// counts (`lows`, one per component; only the entries after the prefix are read), can fit
    /// every budget. Budgets are monotone, so a strategy enumerating in ascending order may
    /// stop as soon as this is false.
    pub fn fits_prefix(&self, prefix: &[u32], lows: &[u32]) -> bool {
        let mut nproc = prefix.to_vec();
        nproc.extend(lows.iter().skip(prefix.len()));
        self.fits(&nproc)
    }

    /// [`Budgets::fits`] with each budget raised to what `current` already uses (a start over
    /// a budget may still move, but not grow on that resource).
    pub(crate) fn fits_from(&self, current: &[u32], next: &[u32]) -> bool {
        let now = self.units(current);
        self.units(next)
            .iter()
            .zip(&self.max_units)
            .zip(&now)
            .all(|((&u, &b), &n)| u <= u64::from(b).max(n))
    }

    /// The units of component `c` that cost what `step` units of the first resource cost: at
    /// least one, and `step` itself on the first resource (and without resources).
    pub fn units_for(&self, c: usize, step: u32) -> u32 {
        let r = self.resource(c);
        let (Some(&first), Some(&own)) = (self.unit_cost.first(), self.unit_cost.get(r)) else {
            return step;
        };
        if r == 0 || own == first {
            return step;
        }
        let units = (f64::from(step) * first / own).round();
        (units.min(f64::from(u32::MAX)) as u32).max(1)
    }
}

impl FrozenSettings {
    /// The campaign's budgets (one per resource with `[[resource]]` tables).
    pub fn budgets(&self) -> Budgets {
        Budgets::of(self.cost_model.as_ref(), self.max_nproc)
    }

    /// Whether a configuration fits every budget of the campaign.
    pub fn fits(&self, nproc: &[u32]) -> bool {
        self.budgets().fits(nproc)
    }

    /// See [`Budgets::fits_prefix`].
    pub fn fits_prefix(&self, prefix: &[u32], lows: &[u32]) -> bool {
        self.budgets().fits_prefix(prefix, lows)
    }
}

/// The PE counts one component may take in a move.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Fewest PEs a move may leave the component with.
    pub low: u32,
    /// Most PEs a move may give it.
    pub high: u32,
    /// Ascending; `None` = every count in `[low, high]`.
    pub allowed: Option<Vec<u32>>,
}

impl Limits {
    /// The feasible count nearest to `target` within `[from, to]` (inclusive), preferring the
    /// larger or the smaller on a tie. Without an allowed list that is the clamped target.
    pub(crate) fn nearest_in(
        &self,
        from: u32,
        to: u32,
        target: i64,
        prefer_larger: bool,
    ) -> Option<u32> {
        let (from, to) = (from.max(self.low), to.min(self.high));
        if from > to {
            return None;
        }
        let Some(list) = &self.allowed else {
            return Some(target.clamp(i64::from(from), i64::from(to)) as u32);
        };
        let distance = |p: u32| (i64::from(p) - target).abs();
        list.iter()
            .copied()
            .filter(|p| (from..=to).contains(p))
            .reduce(|best, p| {
                let (d, db) = (distance(p), distance(best));
                if d < db || (d == db && (p > best) == prefer_larger) {
                    p
                } else {
                    best
                }
            })
    }
}
