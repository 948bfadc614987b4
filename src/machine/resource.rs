//! Components on different hardware: `[[resource]]` tables.
//!
//! A resource is a kind of unit a component runs on (CPU cores, GPUs), with its own nodes, its
//! own budget and a relative price, the *equivalent compute unit* the paper's conclusion asks
//! for: `unit_cost` is what an hour of one unit costs against an hour of one CPU core (from node
//! prices or node power). A component's curve counts its resource's units.
//!
//! Decisions (also in the guide's page *CPU and GPU resources*):
//! * Cost is counted in core-hour equivalents: CHSY = `24 * sum_r unit_cost_r * units_r / SYPD`
//!   and, with `cost = "node-hours"`, `24 * sum_r unit_cost_r * nodes_r * units_per_node_r /
//!   SYPD`. With one resource of `unit_cost = 1` that is exactly the CPU-only figure.
//! * The base-case filter (the guide's `method/prediction.md`, step 5) compares the same equivalent
//!   units.
//! * Each resource has its own budget: `max_units`, else the campaign's `max_nproc`.
//! * The extra PEs (XIOS, runoff mapper) are CPU processes: they run on the first resource and
//!   are billed at its price.
//! * Nodes are never shared between resources (a GPU node is not a CPU node); within a
//!   resource the `[machine]` placement applies (packed by default).
//! * `cost = "energy"` and `[[queue]]` limits are not combined with resources yet (a GPU node
//!   draws another power, and a queue's core limit does not say which units it counts); both
//!   are refused with a message that says what to do instead.

use serde::{Deserialize, Serialize};

use super::{job_nodes, nodes_for, CostKind, CostModel, Machine, MachineError, Placement};

/// One `[[resource]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    /// The resource's name, which components are placed on (e.g. `cpu`, `gpu`).
    pub name: String,
    /// Units (cores, GPUs) of one node of this resource.
    pub units_per_node: u32,
    /// What an hour of one unit costs against an hour of one CPU core.
    pub unit_cost: f64,
    /// Most units the components on this resource may use together (default: `max_nproc`).
    pub max_units: Option<u32>,
}

/// How one resource is used by a configuration, for output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceUse {
    /// The resource's name, as in its `[[resource]]` table.
    pub name: String,
    /// Units the configuration uses on this resource (the extra PEs count on the first).
    pub units: u32,
    /// Whole nodes of this resource.
    pub nodes: u32,
    /// Units of those nodes left unused.
    pub idle_units: u32,
    /// This resource's share of the configuration's cost, in [0, 1].
    pub cost_share: f64,
}

impl CostModel {
    /// Whether `[[resource]]` tables describe the hardware.
    pub fn has_resources(&self) -> bool {
        !self.resources.is_empty()
    }

    /// The resource of component `c` (0, the implicit CPU resource, without resources).
    pub fn resource_of(&self, c: usize) -> usize {
        self.component_resource.get(c).copied().unwrap_or(0)
    }

    /// Each resource's budget in its units: `max_units`, else `max_nproc`. Without resources,
    /// one budget: `max_nproc`.
    pub fn budgets(&self, max_nproc: u32) -> Vec<u32> {
        if self.resources.is_empty() {
            return vec![max_nproc];
        }
        self.resources
            .iter()
            .map(|r| r.max_units.unwrap_or(max_nproc))
            .collect()
    }

    /// What an hour of one of component `c`'s units costs against a CPU core-hour (1 without
    /// resources).
    pub fn unit_cost_of(&self, c: usize) -> f64 {
        self.resources
            .get(self.resource_of(c))
            .map_or(1.0, |r| r.unit_cost)
    }

    /// The budget of component `c`'s resource.
    pub fn budget_of(&self, c: usize, max_nproc: u32) -> u32 {
        self.budgets(max_nproc)[self.resource_of(c)]
    }

    /// Balanced units on each resource (one entry without resources).
    pub fn units_per_resource(&self, nproc: &[u32]) -> Vec<u32> {
        let mut units = vec![0u32; self.resources.len().max(1)];
        for (c, &p) in nproc.iter().enumerate() {
            units[self.resource_of(c)] += p;
        }
        units
    }

    /// Whether a configuration fits every budget: the sum of the balanced PEs within
    /// `max_nproc`, or with resources each resource's units within its own budget.
    pub fn fits_budgets(&self, nproc: &[u32], max_nproc: u32) -> bool {
        if self.resources.is_empty() {
            return nproc.iter().map(|&p| u64::from(p)).sum::<u64>() <= u64::from(max_nproc);
        }
        self.units_per_resource(nproc)
            .iter()
            .zip(self.budgets(max_nproc))
            .all(|(&u, b)| u <= b)
    }

    /// The units a configuration uses, in CPU-core equivalents: `sum_r unit_cost_r * units_r`
    /// with the extras on the first resource; without resources the PEs used (balanced plus
    /// extras). Never falls when a component gets more units. CHSY and the base-case filter use
    /// it, and every part of autolb computes it here, with the same floating-point sum.
    pub fn used_weight(&self, nproc: &[u32], extras: u32) -> f64 {
        if self.resources.is_empty() {
            return f64::from(nproc.iter().sum::<u32>() + extras);
        }
        self.used_weight_of_units(&self.units_per_resource(nproc), extras)
    }

    /// [`CostModel::used_weight`] from the balanced units on each resource (same expression).
    pub fn used_weight_of_units(&self, balanced: &[u32], extras: u32) -> f64 {
        self.resources
            .iter()
            .zip(balanced)
            .enumerate()
            .map(|(k, (r, &u))| r.unit_cost * f64::from(if k == 0 { u + extras } else { u }))
            .sum()
    }

    /// Whether the cost weight is a function of the units on each resource: core-hours, or
    /// node-hours with packed nodes (per-component nodes depend on each component's rounding).
    pub fn cost_follows_resource_sums(&self) -> bool {
        self.cost != CostKind::NodeHours || self.machine.is_none_or(|m| m.placement.shares_nodes())
    }

    /// The cost weight from the balanced units on each resource, when
    /// [`CostModel::cost_follows_resource_sums`]; the same expression as [`CostModel::weight_of`].
    pub fn weight_of_units(&self, balanced: &[u32], extras: u32) -> f64 {
        match self.cost {
            CostKind::NodeHours => self
                .resources
                .iter()
                .zip(balanced)
                .enumerate()
                .map(|(k, (r, &u))| {
                    let e = if k == 0 { extras } else { 0 };
                    let nodes = job_nodes(&self.resource_machine(r), u, 0, e);
                    r.unit_cost * f64::from(nodes * r.units_per_node)
                })
                .collect::<Vec<f64>>()
                .into_iter()
                .sum(),
            _ => self.used_weight_of_units(balanced, extras),
        }
    }

    /// The machine rules applied to one resource's nodes: its units per node, the `[machine]`
    /// placement and extras rule (packed and shared by default).
    fn resource_machine(&self, r: &Resource) -> Machine {
        Machine {
            cores_per_node: r.units_per_node,
            placement: self.machine.map_or(Placement::Packed, |m| m.placement),
            extras_share_node: self.machine.is_none_or(|m| m.extras_share_node),
            node_power_w: None,
        }
    }

    /// Per resource: (units used with the extras, nodes).
    fn resource_nodes(&self, nproc: &[u32], extras: u32) -> Vec<(u32, u32)> {
        self.resources
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let machine = self.resource_machine(r);
                let mine: Vec<u32> = nproc
                    .iter()
                    .enumerate()
                    .filter(|&(c, _)| self.resource_of(c) == k)
                    .map(|(_, &p)| p)
                    .collect();
                let sum: u32 = mine.iter().sum();
                let own: u32 = mine.iter().map(|&p| nodes_for(p, r.units_per_node)).sum();
                let e = if k == 0 { extras } else { 0 };
                (sum + e, job_nodes(&machine, sum, own, e))
            })
            .collect()
    }

    /// Each resource's part of the cost weight: `unit_cost * units` (core-hours) or
    /// `unit_cost * nodes * units_per_node` (node-hours).
    fn resource_weights(&self, nproc: &[u32], extras: u32) -> Vec<f64> {
        let nodes = self.resource_nodes(nproc, extras);
        self.resources
            .iter()
            .zip(nodes)
            .map(|(r, (units, n))| match self.cost {
                CostKind::NodeHours => r.unit_cost * f64::from(n * r.units_per_node),
                _ => r.unit_cost * f64::from(units),
            })
            .collect()
    }

    /// The cost weight with resources (see the module doc).
    pub(super) fn resource_weight(&self, nproc: &[u32], extras: u32) -> f64 {
        match self.cost {
            CostKind::NodeHours => self.resource_weights(nproc, extras).into_iter().sum(),
            _ => self.used_weight(nproc, extras),
        }
    }

    /// Per resource: units, nodes, idle units and cost share of a configuration.
    pub fn resource_use(&self, nproc: &[u32], extras: u32) -> Vec<ResourceUse> {
        let nodes = self.resource_nodes(nproc, extras);
        let weights = self.resource_weights(nproc, extras);
        let total: f64 = weights.iter().sum();
        self.resources
            .iter()
            .zip(nodes)
            .zip(weights)
            .map(|((r, (units, n)), w)| ResourceUse {
                name: r.name.clone(),
                units,
                nodes: n,
                idle_units: n * r.units_per_node - units,
                cost_share: if total > 0.0 { w / total } else { 0.0 },
            })
            .collect()
    }

    /// Checks the resource tables and the components' assignment to them.
    pub(super) fn validate_resources(&self) -> Result<(), MachineError> {
        if self.resources.is_empty() {
            return Ok(());
        }
        for (i, r) in self.resources.iter().enumerate() {
            if self.resources[..i].iter().any(|o| o.name == r.name) {
                return Err(MachineError::DuplicateResource(r.name.clone()));
            }
            if r.units_per_node == 0 {
                return Err(MachineError::ZeroUnitsPerNode(r.name.clone()));
            }
            if !(r.unit_cost.is_finite() && r.unit_cost > 0.0) {
                return Err(MachineError::BadUnitCost(r.name.clone(), r.unit_cost));
            }
            if r.max_units == Some(0) {
                return Err(MachineError::ZeroMaxUnits(r.name.clone()));
            }
        }
        if let Some(&k) = self
            .component_resource
            .iter()
            .find(|&&k| k >= self.resources.len())
        {
            return Err(MachineError::ResourceIndex(k));
        }
        if self.cost == CostKind::Energy {
            return Err(MachineError::EnergyWithResources);
        }
        if !self.queues.is_empty() || self.queue.is_some() {
            return Err(MachineError::QueuesWithResources);
        }
        if let Some(m) = &self.machine {
            let first = &self.resources[0];
            if m.cores_per_node != first.units_per_node {
                return Err(MachineError::MachineMismatch {
                    cores_per_node: m.cores_per_node,
                    resource: first.name.clone(),
                    units_per_node: first.units_per_node,
                });
            }
        }
        Ok(())
    }

    /// Resource names, for messages.
    pub fn resource_names(&self) -> String {
        self.resources
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_gpu(cost: CostKind) -> CostModel {
        CostModel {
            cost,
            resources: vec![
                Resource {
                    name: "cpu".into(),
                    units_per_node: 128,
                    unit_cost: 1.0,
                    max_units: None,
                },
                Resource {
                    name: "gpu".into(),
                    units_per_node: 4,
                    unit_cost: 40.0,
                    max_units: Some(32),
                },
            ],
            component_resource: vec![0, 1],
            ..CostModel::default()
        }
    }

    #[test]
    fn weights_budgets_and_use_by_hand() {
        let model = cpu_gpu(CostKind::CoreHours);
        model.validate().unwrap();
        assert_eq!(model.budgets(672), vec![672, 32]);
        assert!(model.fits_budgets(&[672, 32], 672));
        assert!(!model.fits_budgets(&[672, 33], 672));
        // 600 cores + 10 extras, 6 GPUs at 40 core-equivalents each.
        assert_eq!(model.used_weight(&[600, 6], 10), 610.0 + 240.0);
        assert_eq!(model.weight_of(&[600, 6], 10), 850.0);
        let nodes = cpu_gpu(CostKind::NodeHours);
        // 610 cores on 5 nodes of 128 (640), 6 GPUs on 2 nodes of 4 (8 GPUs = 320).
        assert_eq!(nodes.weight_of(&[600, 6], 10), 640.0 + 320.0);
        let used = nodes.resource_use(&[600, 6], 10);
        assert_eq!(
            (used[0].units, used[0].nodes, used[0].idle_units),
            (610, 5, 30)
        );
        assert_eq!(
            (used[1].units, used[1].nodes, used[1].idle_units),
            (6, 2, 2)
        );
        assert!((used[0].cost_share - 640.0 / 960.0).abs() < 1e-12);
        let b = nodes.billing(&[600, 6], 10, 12.0).unwrap();
        assert_eq!((b.nodes, b.billed_cores, b.idle_cores), (7, 648, 32));
        assert_eq!(b.cost, 24.0 * 960.0 / 12.0);
        assert_eq!(b.resources.len(), 2);
    }

    #[test]
    fn bad_tables_are_refused_naming_the_resource() {
        let mut m = cpu_gpu(CostKind::CoreHours);
        m.resources[1].unit_cost = 0.0;
        assert_eq!(
            m.validate(),
            Err(MachineError::BadUnitCost("gpu".into(), 0.0))
        );
        let mut m = cpu_gpu(CostKind::CoreHours);
        m.resources[0].units_per_node = 0;
        assert!(m
            .validate()
            .unwrap_err()
            .to_string()
            .contains("units_per_node"));
        let m = cpu_gpu(CostKind::Energy);
        assert!(m.validate().unwrap_err().to_string().contains("energy"));
    }
}
