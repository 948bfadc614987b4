//! The machine a configuration runs on: whole nodes, what the centre bills, and queue limits.
//!
//! Without a machine description autolb counts cost as the guide's `method/prediction.md` does, as
//! if a job paid for exactly the PEs it uses (CHSY). Real machines allocate and bill whole nodes,
//! and queues cap job sizes and wall times. Everything here is a small pure function of plain
//! numbers, so the prediction, the naive reference, the campaign and the app compute the same bill
//! the same way.
//!
//! Every cost is written as `24 * weight / SYPD`: the weight is the used PEs (core-hours, CHSY),
//! the billed cores (node-hours, still in core-hours so it compares with CHSY), or the billed
//! nodes' power in kW (energy, kWh per simulated year). The weight never falls when a component
//! gets more PEs; the exact search relies on that.

use serde::{Deserialize, Serialize};

mod resource;
pub use resource::{Resource, ResourceUse};

/// How a job's PEs are laid out on nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// All PEs of the job are rounded up to whole nodes together (components share nodes).
    #[default]
    Packed,
    /// Each component gets its own whole nodes (what `srun --multi-prog` with one node set per
    /// binary, or heterogeneous jobs, do).
    PerComponent,
    /// Every node holds several components, packed in node groups (EC-Earth4's `job.groups`):
    /// `predict` then searches the best packing of each node count
    /// ([`crate::predict::packing`]). A single configuration is billed as `packed` is: the
    /// job's cores rounded up to whole nodes.
    Groups,
}

/// The cost figure FN weighs against speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostKind {
    /// CHSY as the guide's `method/prediction.md` defines it: used PEs (with the extra PEs) x 24 /
    /// SYPD.
    #[default]
    CoreHours,
    /// Billed nodes x cores per node x 24 / SYPD, in core-hours.
    NodeHours,
    /// Billed nodes x node power x 24 / SYPD, in kWh per simulated year.
    Energy,
}

impl CostKind {
    /// All kinds in the order the app's cost selector cycles them.
    pub const ALL: [CostKind; 3] = [CostKind::CoreHours, CostKind::NodeHours, CostKind::Energy];

    /// The name a campaign file's `cost` key and the `--cost` option take (`core-hours`,
    /// `node-hours`, `energy`).
    pub fn label(self) -> &'static str {
        match self {
            CostKind::CoreHours => "core-hours",
            CostKind::NodeHours => "node-hours",
            CostKind::Energy => "energy",
        }
    }

    /// Short column header for tables.
    pub fn header(self) -> &'static str {
        match self {
            CostKind::CoreHours => "CHSY",
            CostKind::NodeHours => "NHSY",
            CostKind::Energy => "kWh/SY",
        }
    }
}

impl Placement {
    /// The word the campaign file and `--placement` use.
    pub fn label(self) -> &'static str {
        match self {
            Placement::Packed => "packed",
            Placement::PerComponent => "per-component",
            Placement::Groups => "groups",
        }
    }

    /// Whether the job's cores are rounded up to whole nodes together (components share nodes).
    pub fn shares_nodes(self) -> bool {
        matches!(self, Placement::Packed | Placement::Groups)
    }
}

impl std::str::FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "packed" => Ok(Placement::Packed),
            "per-component" => Ok(Placement::PerComponent),
            "groups" => Ok(Placement::Groups),
            _ => Err(format!(
                "unknown placement {s:?}; use packed, per-component or groups"
            )),
        }
    }
}

impl std::str::FromStr for CostKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CostKind::ALL
            .into_iter()
            .find(|k| k.label() == s)
            .ok_or_else(|| format!("unknown cost {s:?}; use core-hours, node-hours or energy"))
    }
}

/// The `[machine]` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// Cores (PEs) of one node: jobs are allocated and billed in multiples of it; must be at least
    /// 1.
    pub cores_per_node: u32,
    /// How the job's PEs are laid out on nodes (packed by default).
    #[serde(default)]
    pub placement: Placement,
    /// Whether the extra PEs (XIOS, runoff mapper) may fill the idle cores of the components'
    /// nodes; otherwise they get nodes of their own.
    #[serde(default = "default_true")]
    pub extras_share_node: bool,
    /// Average power of a busy node in watts, for `cost = "energy"`.
    pub node_power_w: Option<f64>,
}

fn default_true() -> bool {
    true
}

/// One `[[queue]]` table: the limits a job must respect to be accepted by a partition/QOS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    /// The queue's name, which `use_queue = "..."` (or `--queue`) chooses it by.
    pub name: String,
    /// Most cores a job may request (billed cores with a `[machine]`, used PEs without).
    pub max_nproc: Option<u32>,
    /// Most nodes a job may request (needs a `[machine]`).
    pub max_nodes: Option<u32>,
    /// Longest wall time, in hours.
    pub max_walltime_h: Option<f64>,
    /// Simulated years one job (chunk) runs: with `max_walltime_h`, the slowest SYPD allowed.
    pub chunk_years: Option<f64>,
    /// Slurm partition to submit to when this queue is chosen.
    pub partition: Option<String>,
    /// Slurm QOS to submit with when this queue is chosen.
    pub qos: Option<String>,
}

impl Queue {
    /// The slowest SYPD a chunk may run at and still finish within the wall-time limit:
    /// `chunk_years / (walltime_h / 24)`.
    pub fn min_sypd(&self) -> Option<f64> {
        match (self.max_walltime_h, self.chunk_years) {
            (Some(h), Some(y)) if h > 0.0 => Some(y * 24.0 / h),
            _ => None,
        }
    }

    /// The most cores a job may hold in this queue (node limits converted with the machine).
    pub fn core_capacity(&self, machine: Option<&Machine>) -> u64 {
        let by_nodes = match (self.max_nodes, machine) {
            (Some(n), Some(m)) => u64::from(n) * u64::from(m.cores_per_node),
            _ => u64::MAX,
        };
        self.max_nproc.map_or(u64::MAX, u64::from).min(by_nodes)
    }

    /// Whether a job holding `alloc` allocated cores on `nodes` nodes at `sypd` fits.
    pub fn fits(&self, alloc: u32, nodes: Option<u32>, sypd: f64) -> bool {
        self.max_nproc.is_none_or(|m| alloc <= m)
            && self.max_nodes.is_none_or(|m| nodes.is_none_or(|n| n <= m))
            && self.min_sypd().is_none_or(|s| sypd >= s)
    }
}

/// How a configuration is billed, for output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Billing {
    /// Whole nodes the job takes (0 with queues but no `[machine]`, where nodes are not known).
    pub nodes: u32,
    /// Cores the job is allocated and billed for: its nodes' cores with a `[machine]`, the used PEs
    /// (balanced plus extra) without.
    pub billed_cores: u32,
    /// Billed minus used cores.
    pub idle_cores: u32,
    /// The chosen cost (see [`CostKind`]).
    pub cost: f64,
    /// The chosen queue, or else the smallest queue the configuration fits (`None`: none).
    pub queue: Option<String>,
    /// Per resource, with `[[resource]]` tables (absent otherwise). Then `nodes`,
    /// `billed_cores` and `idle_cores` add up every resource's nodes and units.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceUse>,
}

/// Everything the prediction needs to bill configurations like the centre does: the machine
/// (optional), the cost FN weighs, the queue table and the chosen queue.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CostModel {
    /// The `[machine]` table, when one is given; `None`: no whole nodes (cost in used PEs, or in
    /// the `[[resource]]` tables' nodes).
    pub machine: Option<Machine>,
    /// The cost FN weighs against speed (CHSY unless chosen).
    pub cost: CostKind,
    /// The `[[queue]]` tables, in the order given.
    pub queues: Vec<Queue>,
    /// Keep only configurations that fit this queue (a name in `queues`).
    pub queue: Option<String>,
    /// `[[resource]]` tables: components on different hardware (see `machine::resource`). Empty:
    /// every component on one implicit CPU resource, as without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// The index in `resources` of each balanced component, in component order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub component_resource: Vec<usize>,
}

/// Why a cost model cannot be used. Messages say what to change.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MachineError {
    /// `cores_per_node` is 0.
    #[error("cores_per_node is 0; give the cores of one node, e.g. cores_per_node = 48")]
    ZeroCoresPerNode,
    /// The chosen cost (its label) counts nodes, but no machine is described.
    #[error("cost = \"{0}\" needs a machine: add a [machine] table with cores_per_node (or pass --cores-per-node)")]
    CostNeedsMachine(&'static str),
    /// `cost = "energy"` without `node_power_w`.
    #[error("cost = \"energy\" needs node_power_w in [machine] (or --node-power-w), the average power of a busy node in watts")]
    EnergyNeedsPower,
    /// `node_power_w` is not a positive number (the value given).
    #[error("node_power_w {0} is not a positive number of watts")]
    BadPower(f64),
    /// The chosen queue (first) is not among the defined ones (second: their names).
    #[error("queue {0:?} is not defined; add a [[queue]] table with that name or use one of: {1}")]
    UnknownQueue(String, String),
    /// A queue (its name) limits nodes without a machine to convert them to cores.
    #[error(
        "queue {0:?} limits max_nodes but there is no [machine]; add [machine] cores_per_node"
    )]
    NodesNeedMachine(String),
    /// A queue (its name) has only one of `max_walltime_h` and `chunk_years`, or one that is not
    /// positive.
    #[error(
        "queue {0:?}: max_walltime_h and chunk_years must both be positive numbers, or both absent"
    )]
    BadWalltime(String),
    /// Two queues share a name (the name).
    #[error("queue {0:?} is defined twice; give each [[queue]] its own name")]
    DuplicateQueue(String),
    /// Two resources share a name (the name).
    #[error("resource {0:?} is defined twice; give each [[resource]] its own name")]
    DuplicateResource(String),
    /// A resource (its name) has `units_per_node = 0`.
    #[error("resource {0:?}: units_per_node is 0; give the units (cores, GPUs) of one node, e.g. units_per_node = 4")]
    ZeroUnitsPerNode(String),
    /// A resource (first) has a `unit_cost` (second) that is not a positive number.
    #[error("resource {0:?}: unit_cost = {1} is not a positive number; give what an hour of one unit costs against a CPU core-hour, e.g. unit_cost = 1 for cores")]
    BadUnitCost(String, f64),
    /// A resource (its name) has `max_units = 0`.
    #[error("resource {0:?}: max_units is 0; give its budget in units, or leave max_units out to use max_nproc")]
    ZeroMaxUnits(String),
    /// A component's resource index is past the resource list (the index).
    #[error("a component is placed on resource number {0}, which does not exist")]
    ResourceIndex(usize),
    /// `cost = "energy"` together with `[[resource]]` tables, which are not combined yet.
    #[error("cost = \"energy\" is not combined with [[resource]] tables yet; fold node power into each resource's unit_cost and use cost = \"core-hours\" or \"node-hours\"")]
    EnergyWithResources,
    /// `[[queue]]` limits together with `[[resource]]` tables, which are not combined yet.
    #[error("[[queue]] limits are not combined with [[resource]] tables yet (a queue's core limit does not say which units it counts); remove the [[queue]] tables or the [[resource]] tables")]
    QueuesWithResources,
    /// The `[machine]` cores per node differ from the first resource's units per node, where the
    /// extra PEs run.
    #[error("[machine] cores_per_node = {cores_per_node} but the first resource {resource:?} (where the extra PEs run) has units_per_node = {units_per_node}; make them equal or drop cores_per_node's [machine] table")]
    MachineMismatch {
        /// The `[machine]` table's `cores_per_node`.
        cores_per_node: u32,
        /// The first resource's name.
        resource: String,
        /// Its `units_per_node`.
        units_per_node: u32,
    },
}

/// Whole nodes holding `pes` PEs.
pub fn nodes_for(pes: u32, cores_per_node: u32) -> u32 {
    pes.div_ceil(cores_per_node)
}

/// Nodes a job takes, from the balanced PE sum, the nodes the components take on their own
/// (`component_nodes`, the sum of each component's whole nodes; only used per component) and
/// the extra PEs. With `extras_share_node` the extras first fill the components' idle cores:
/// per component that is `max(component_nodes, ceil((sum + extras) / cpn))`.
pub fn job_nodes(machine: &Machine, sum: u32, component_nodes: u32, extras: u32) -> u32 {
    let cpn = machine.cores_per_node;
    let balanced = match machine.placement {
        Placement::Packed | Placement::Groups => nodes_for(sum, cpn),
        Placement::PerComponent => component_nodes,
    };
    if machine.extras_share_node {
        match machine.placement {
            Placement::Packed | Placement::Groups => nodes_for(sum + extras, cpn),
            Placement::PerComponent => balanced.max(nodes_for(sum + extras, cpn)),
        }
    } else {
        balanced + nodes_for(extras, cpn)
    }
}

/// The components' own whole nodes (per-component placement): `sum_c ceil(p_c / cpn)`.
pub fn component_nodes(machine: &Machine, nproc: &[u32]) -> u32 {
    nproc
        .iter()
        .map(|&p| nodes_for(p, machine.cores_per_node))
        .sum()
}

impl CostModel {
    /// Checks the model; `Ok` for the default (no machine, core-hours).
    pub fn validate(&self) -> Result<(), MachineError> {
        if let Some(m) = &self.machine {
            if m.cores_per_node == 0 {
                return Err(MachineError::ZeroCoresPerNode);
            }
            if let Some(w) = m.node_power_w {
                if !(w.is_finite() && w > 0.0) {
                    return Err(MachineError::BadPower(w));
                }
            }
        }
        self.validate_resources()?;
        match (self.cost, &self.machine) {
            (CostKind::CoreHours, _) => {}
            // Resources bring their own nodes (units_per_node).
            (CostKind::NodeHours, None) if self.has_resources() => {}
            (k, None) => return Err(MachineError::CostNeedsMachine(k.label())),
            (CostKind::Energy, Some(m)) if m.node_power_w.is_none() => {
                return Err(MachineError::EnergyNeedsPower)
            }
            _ => {}
        }
        for (i, q) in self.queues.iter().enumerate() {
            if self.queues[..i].iter().any(|o| o.name == q.name) {
                return Err(MachineError::DuplicateQueue(q.name.clone()));
            }
            if q.max_nodes.is_some() && self.machine.is_none() {
                return Err(MachineError::NodesNeedMachine(q.name.clone()));
            }
            let ok = |v: Option<f64>| v.is_none_or(|v| v.is_finite() && v > 0.0);
            if q.max_walltime_h.is_some() != q.chunk_years.is_some()
                || !ok(q.max_walltime_h)
                || !ok(q.chunk_years)
            {
                return Err(MachineError::BadWalltime(q.name.clone()));
            }
        }
        if let Some(name) = &self.queue {
            if self.chosen_queue().is_none() {
                let names: Vec<&str> = self.queues.iter().map(|q| q.name.as_str()).collect();
                let list = if names.is_empty() {
                    "(none defined)".to_string()
                } else {
                    names.join(", ")
                };
                return Err(MachineError::UnknownQueue(name.clone(), list));
            }
        }
        Ok(())
    }

    /// Whether this is today's model: nothing about nodes or queues to show.
    pub fn is_plain(&self) -> bool {
        self.machine.is_none()
            && self.queues.is_empty()
            && self.cost == CostKind::CoreHours
            && self.resources.is_empty()
    }

    /// The queue configurations must fit, if one was chosen.
    pub fn chosen_queue(&self) -> Option<&Queue> {
        let name = self.queue.as_ref()?;
        self.queues.iter().find(|q| &q.name == name)
    }

    /// The cost kinds this model can compute (the app's cost selector cycles them).
    pub fn available_costs(&self) -> Vec<CostKind> {
        CostKind::ALL
            .into_iter()
            .filter(|&k| match k {
                CostKind::CoreHours => true,
                CostKind::NodeHours => self.machine.is_some() || self.has_resources(),
                CostKind::Energy => {
                    !self.has_resources() && self.machine.is_some_and(|m| m.node_power_w.is_some())
                }
            })
            .collect()
    }

    /// Whether the cost depends on the balanced PE sum only (no machine, or packed nodes, and
    /// no resources): then the exact search can convolve over PE sums.
    pub fn cost_follows_sum(&self) -> bool {
        self.resources.is_empty()
            && self
                .machine
                .is_none_or(|m| m.placement == Placement::Packed)
    }

    /// Nodes of a job (`None` without a machine); `component_nodes` as in [`job_nodes`].
    pub fn nodes(&self, sum: u32, component_nodes: u32, extras: u32) -> Option<u32> {
        self.machine
            .as_ref()
            .map(|m| job_nodes(m, sum, component_nodes, extras))
    }

    /// Cores the job holds: whole nodes with a machine, else exactly the PEs it uses.
    pub fn allocated(&self, sum: u32, component_nodes: u32, extras: u32) -> u32 {
        match &self.machine {
            Some(m) => job_nodes(m, sum, component_nodes, extras) * m.cores_per_node,
            None => sum + extras,
        }
    }

    /// The cost weight `W` (cost = 24 W / SYPD): used PEs, billed cores or kW.
    pub fn weight(&self, sum: u32, component_nodes: u32, extras: u32) -> f64 {
        match (&self.cost, &self.machine) {
            (CostKind::CoreHours, _) | (_, None) => f64::from(sum + extras),
            (CostKind::NodeHours, Some(m)) => {
                f64::from(job_nodes(m, sum, component_nodes, extras) * m.cores_per_node)
            }
            (CostKind::Energy, Some(m)) => {
                f64::from(job_nodes(m, sum, component_nodes, extras))
                    * m.node_power_w.unwrap_or(0.0)
                    / 1000.0
            }
        }
    }

    /// The weight of a configuration given per component.
    pub fn weight_of(&self, nproc: &[u32], extras: u32) -> f64 {
        if self.has_resources() {
            return self.resource_weight(nproc, extras);
        }
        self.weight(nproc.iter().sum(), self.component_nodes_of(nproc), extras)
    }

    /// `sum_c ceil(p_c / cpn)` with a machine, else 0.
    pub fn component_nodes_of(&self, nproc: &[u32]) -> u32 {
        self.machine
            .as_ref()
            .map_or(0, |m| component_nodes(m, nproc))
    }

    /// Whether a configuration fits `queue`.
    pub fn fits_queue(&self, queue: &Queue, nproc: &[u32], extras: u32, sypd: f64) -> bool {
        let (sum, cn) = (nproc.iter().sum(), self.component_nodes_of(nproc));
        queue.fits(
            self.allocated(sum, cn, extras),
            self.nodes(sum, cn, extras),
            sypd,
        )
    }

    /// Whether a configuration fits the chosen queue (always, when none was chosen).
    pub fn fits(&self, nproc: &[u32], extras: u32, sypd: f64) -> bool {
        self.chosen_queue()
            .is_none_or(|q| self.fits_queue(q, nproc, extras, sypd))
    }

    /// The smallest queue (fewest cores, then file order) a configuration fits.
    pub fn smallest_queue(&self, nproc: &[u32], extras: u32, sypd: f64) -> Option<&Queue> {
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, q)| self.fits_queue(q, nproc, extras, sypd))
            .min_by_key(|(i, q)| (q.core_capacity(self.machine.as_ref()), *i))
            .map(|(_, q)| q)
    }

    /// The bill of a configuration, `None` for the plain model (output stays as it was).
    pub fn billing(&self, nproc: &[u32], extras: u32, sypd: f64) -> Option<Billing> {
        if self.is_plain() {
            return None;
        }
        if self.has_resources() {
            let resources = self.resource_use(nproc, extras);
            let billed: u32 = resources.iter().map(|r| r.units + r.idle_units).sum();
            let idle: u32 = resources.iter().map(|r| r.idle_units).sum();
            return Some(Billing {
                nodes: resources.iter().map(|r| r.nodes).sum(),
                billed_cores: billed,
                idle_cores: idle,
                cost: crate::metrics::chsy(self.weight_of(nproc, extras), sypd),
                queue: None,
                resources,
            });
        }
        let (sum, cn) = (nproc.iter().sum::<u32>(), self.component_nodes_of(nproc));
        let allocated = self.allocated(sum, cn, extras);
        let queue = match self.chosen_queue() {
            Some(q) => self
                .fits_queue(q, nproc, extras, sypd)
                .then(|| q.name.clone()),
            None => self
                .smallest_queue(nproc, extras, sypd)
                .map(|q| q.name.clone()),
        };
        Some(Billing {
            nodes: self.nodes(sum, cn, extras).unwrap_or(0),
            billed_cores: allocated,
            idle_cores: allocated - (sum + extras),
            cost: crate::metrics::chsy(self.weight(sum, cn, extras), sypd),
            queue,
            resources: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(placement: Placement, share: bool) -> Machine {
        Machine {
            cores_per_node: 48,
            placement,
            extras_share_node: share,
            node_power_w: Some(500.0),
        }
    }

    #[test]
    fn node_rounding_by_hand() {
        // IFS 408 + NEMO 264 + 96 extras on 48-core nodes.
        let packed = machine(Placement::Packed, true);
        assert_eq!(job_nodes(&packed, 672, 0, 96), 16); // 768 / 48
        let packed_apart = machine(Placement::Packed, false);
        assert_eq!(job_nodes(&packed_apart, 672, 0, 95), 14 + 2);
        let per = machine(Placement::PerComponent, true);
        let cn = component_nodes(&per, &[408, 264]); // 9 + 6 = 15 nodes, 48 idle cores
        assert_eq!(cn, 15);
        assert_eq!(job_nodes(&per, 672, cn, 40), 15); // the extras fit in the idle cores
        assert_eq!(job_nodes(&per, 672, cn, 96), 16);
        let per_apart = machine(Placement::PerComponent, false);
        assert_eq!(job_nodes(&per_apart, 672, cn, 96), 17);
    }

    #[test]
    fn costs_by_hand() {
        let model = CostModel {
            machine: Some(machine(Placement::PerComponent, true)),
            cost: CostKind::NodeHours,
            ..CostModel::default()
        };
        // 16 nodes x 48 cores.
        assert_eq!(model.weight_of(&[408, 264], 96), 768.0);
        let energy = CostModel {
            cost: CostKind::Energy,
            ..model.clone()
        };
        // 16 nodes x 0.5 kW.
        assert_eq!(energy.weight_of(&[408, 264], 96), 8.0);
        let b = model.billing(&[400, 260], 40, 12.0).unwrap();
        // 9 + 6 nodes; 700 used of 720.
        assert_eq!((b.nodes, b.billed_cores, b.idle_cores), (15, 720, 20));
        assert_eq!(b.cost, 24.0 * 720.0 / 12.0);
        assert!(CostModel::default().billing(&[1], 0, 1.0).is_none());
    }

    #[test]
    fn queues_and_walltime() {
        let debug = Queue {
            name: "debug".into(),
            max_nproc: Some(768),
            max_nodes: None,
            max_walltime_h: Some(2.0),
            chunk_years: Some(1.0),
            partition: None,
            qos: Some("debug".into()),
        };
        // One year in two hours: at least 12 SYPD.
        assert_eq!(debug.min_sypd(), Some(12.0));
        let big = Queue {
            name: "big".into(),
            max_nproc: None,
            max_nodes: Some(100),
            max_walltime_h: None,
            chunk_years: None,
            partition: Some("main".into()),
            qos: None,
        };
        let model = CostModel {
            machine: Some(machine(Placement::Packed, true)),
            queues: vec![big, debug],
            ..CostModel::default()
        };
        model.validate().unwrap();
        assert_eq!(
            model
                .smallest_queue(&[672], 96, 12.5)
                .map(|q| q.name.as_str()),
            Some("debug")
        );
        assert_eq!(
            model
                .smallest_queue(&[672], 96, 11.0)
                .map(|q| q.name.as_str()),
            Some("big")
        );
        assert_eq!(
            model
                .smallest_queue(&[673], 96, 20.0)
                .map(|q| q.name.as_str()),
            Some("big")
        );
        let bad = CostModel {
            queue: Some("nope".into()),
            ..model
        };
        assert!(matches!(
            bad.validate(),
            Err(MachineError::UnknownQueue(..))
        ));
        let no_machine = CostModel {
            cost: CostKind::NodeHours,
            ..CostModel::default()
        };
        assert!(no_machine.validate().is_err());
    }
}
