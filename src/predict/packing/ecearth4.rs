//! A packing as EC-Earth4's experiment configuration writes it (`job.groups`).

use serde::Serialize;

use super::{Packing, PackingProblem};
use crate::predict::emit_ecearth4::OrderedMap;

/// A packing as EC-Earth4's experiment configuration takes it with
/// `job.launch.method: slurm-wrapper-taskset`: the node groups with each component's ranks per
/// node (lower-case keys, as EC-Earth4 names its components), the threads of each hybrid
/// component, and OASIS's load-balance analysis switched on, so the runs it makes write the
/// timing `autolb` reads. Serialise it with any serde format (`predict --emit ecearth4` writes
/// YAML).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Fragment {
    /// The `job` section.
    pub job: Ecearth4Job,
    /// The `model_config` section: `oasis.load_balancing: 1`.
    pub model_config: Ecearth4ModelConfig,
}

/// `job`: the launch method, the threads of each hybrid component and the node groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Job {
    /// `launch.method`.
    pub launch: Ecearth4Launch,
    /// `COMPONENT: {omp_num_threads: T}` for each component with more than one thread per rank.
    #[serde(flatten)]
    pub threads: std::collections::BTreeMap<String, Ecearth4Threads>,
    /// One map per node group: `nodes`, then each component's and helper's ranks per node.
    pub groups: Vec<OrderedMap<u32>>,
}

/// `job.launch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Launch {
    /// Always `slurm-wrapper-taskset`, the launcher that reads `job.groups`.
    pub method: &'static str,
}

/// A hybrid component's `omp_num_threads`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Threads {
    /// OpenMP threads per MPI rank.
    pub omp_num_threads: u32,
}

/// `model_config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4ModelConfig {
    /// `oasis`.
    pub oasis: Ecearth4Oasis,
}

/// `model_config.oasis`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Oasis {
    /// 1: OASIS writes `load_balancing_info.txt`, the timing a balancing run is read from.
    pub load_balancing: u32,
}

impl PackingProblem {
    /// `packing` as an EC-Earth4 experiment-configuration fragment (see [`Ecearth4Fragment`]);
    /// keys are the component and helper names in lower case, and a helper or component with no
    /// rank on a group's nodes is left out of that group.
    pub fn ecearth4_fragment(&self, packing: &Packing) -> Ecearth4Fragment {
        let key = |name: &str| name.to_ascii_lowercase();
        let groups = packing
            .groups
            .iter()
            .map(|g| {
                let mut entries = vec![("nodes".to_string(), g.nodes)];
                for (c, r) in self.components.iter().zip(&g.ranks) {
                    if *r > 0 {
                        entries.push((key(&c.name), *r));
                    }
                }
                for (h, r) in self.helpers.iter().zip(&g.helpers) {
                    if *r > 0 {
                        entries.push((key(&h.name), *r));
                    }
                }
                OrderedMap(entries)
            })
            .collect();
        let threads = self
            .components
            .iter()
            .zip(&packing.threads)
            .filter(|(_, t)| **t > 1)
            .map(|(c, t)| {
                (
                    key(&c.name),
                    Ecearth4Threads {
                        omp_num_threads: *t,
                    },
                )
            })
            .collect();
        Ecearth4Fragment {
            job: Ecearth4Job {
                launch: Ecearth4Launch {
                    method: "slurm-wrapper-taskset",
                },
                threads,
                groups,
            },
            model_config: Ecearth4ModelConfig {
                oasis: Ecearth4Oasis { load_balancing: 1 },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::predict::packing::best_packing;
    use crate::predict::packing::fixtures::ecearth4_like;

    #[test]
    fn the_ecearth4_fragment_reproduces_the_packing() {
        let problem = ecearth4_like("OIFS");
        let p = best_packing(&problem, 6).unwrap().unwrap();
        let yaml = serde_norway::to_string(&problem.ecearth4_fragment(&p)).unwrap();
        let back: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(back["job"]["launch"]["method"], "slurm-wrapper-taskset");
        assert_eq!(back["job"]["oifs"]["omp_num_threads"], 4);
        assert_eq!(back["model_config"]["oasis"]["load_balancing"], 1);
        let groups = back["job"]["groups"].as_sequence().unwrap();
        assert_eq!(groups.len(), p.groups.len());
        let count = |g: &serde_norway::Value, k: &str| g[k].as_u64().unwrap_or(0) as u32;
        let nodes: u32 = groups.iter().map(|g| count(g, "nodes")).sum();
        assert_eq!(nodes, 6);
        // The ranks in all, threads x ranks per node within every node, the helpers placed.
        for (c, key) in ["oifs", "nemo"].iter().enumerate() {
            let total: u32 = groups
                .iter()
                .map(|g| count(g, "nodes") * count(g, key))
                .sum();
            assert_eq!(total, p.ranks[c], "{key}\n{yaml}");
        }
        for g in groups {
            let cores =
                4 * count(g, "oifs") + count(g, "nemo") + count(g, "xios") + count(g, "rnfm");
            assert!(cores <= 112, "{yaml}");
        }
        assert_eq!(count(&groups[0], "rnfm"), 1);
        assert!(groups[1..]
            .iter()
            .all(|g| count(g, "rnfm") == 0 && count(g, "xios") == 1));
        // `nodes` comes first in every group, as EC-Earth4's own files write it.
        assert!(yaml.contains("- nodes: 1\n"), "{yaml}");
    }
}
