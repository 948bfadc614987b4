//! A chosen configuration as an EC-Earth4 experiment-config fragment, so the answer is
//! something to paste into the experiment YAML rather than a list of numbers.
//!
//! EC-Earth4 (ScriptEngine on Slurm) takes per-component resources under `job`: with
//! `job.launch.method: slurm-hetjob` each component is one Slurm het-job component on nodes of
//! its own, with `ntasks` (MPI ranks), `ntasks_per_node` and, for a hybrid component such as
//! OpenIFS, `omp_num_threads` (the het job passes them to `--cpus-per-task`). The
//! `slurm-wrapper-taskset` form packs several components on every node (`job.groups`); node
//! packings are not searched yet, so that form is not written.
//!
//! The fragment is written from `Serialize` structs with serde_norway, in the order EC-Earth4's
//! own files use (components in the prediction's order). Keys are component names in lower case;
//! a name that a YAML 1.1 reader (PyYAML, which ScriptEngine uses) would take for a boolean or
//! null is refused rather than written.

use serde::{Serialize, Serializer};

use super::Scored;

/// Key-value pairs serialised as a map in this order, where a `BTreeMap` would sort them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Words a YAML 1.1 reader takes for a boolean or null when written as a plain key.
const NOT_STRINGS: [&str; 10] = [
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
];

/// Refuses a key that YAML 1.1 would not read back as the component's name.
pub fn check_key(key: &str) -> Result<(), String> {
    if NOT_STRINGS.contains(&key) || key.is_empty() {
        return Err(format!(
            "component key {key:?}: YAML readers such as PyYAML take it for a boolean or null; rename the component"
        ));
    }
    Ok(())
}

/// One component's resources in the fragment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentResources {
    /// The component's key under `job` (its name in lower case: `oifs`, `nemo`).
    #[serde(skip)]
    pub key: String,
    /// MPI ranks.
    pub ntasks: u32,
    /// Ranks per node with `cores_per_node`: as many as fit (each takes `omp_num_threads`
    /// cores), never more than `ntasks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks_per_node: Option<u32>,
    /// OpenMP threads per rank; written only for a hybrid component (more than 1).
    #[serde(skip_serializing_if = "is_one")]
    pub omp_num_threads: u32,
}

/// The resources of each component of `config` (component names `names`), with ranks per node
/// when the nodes' cores are known.
pub fn resources(
    names: &[String],
    config: &Scored,
    cores_per_node: Option<u32>,
) -> Vec<ComponentResources> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let threads = config.threads.get(k).copied().unwrap_or(1).max(1);
            let ntasks = config.nproc[k] / threads;
            ComponentResources {
                key: name.to_ascii_lowercase(),
                ntasks,
                ntasks_per_node: cores_per_node.map(|n| (n / threads).clamp(1, ntasks.max(1))),
                omp_num_threads: threads,
            }
        })
        .collect()
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// `job.launch`.
#[derive(Serialize)]
struct Launch {
    method: &'static str,
}

/// `job`: the launch method, then each component's resources in order.
#[derive(Serialize)]
struct HetJob<'a> {
    launch: Launch,
    #[serde(flatten)]
    components: OrderedMap<&'a ComponentResources>,
}

/// The fragment's root.
#[derive(Serialize)]
struct HetJobFragment<'a> {
    job: HetJob<'a>,
}

/// The fragment's text: a comment naming what it is, then `job.launch.method` and each
/// component's `ntasks`, `ntasks_per_node` and `omp_num_threads`; an error for a component
/// name YAML would not read back as a string.
pub fn fragment(components: &[ComponentResources], comment: &str) -> Result<String, String> {
    for c in components {
        check_key(&c.key)?;
    }
    let root = HetJobFragment {
        job: HetJob {
            launch: Launch {
                method: "slurm-hetjob",
            },
            components: OrderedMap(components.iter().map(|c| (c.key.clone(), c)).collect()),
        },
    };
    let yaml = serde_norway::to_string(&root).map_err(|e| e.to_string())?;
    let mut out: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    out.push_str(&yaml);
    Ok(out)
}

/// The het-job fragment of one configuration with its comment: `heading` (who chose it and
/// how), its SYPD and TTS_w, and each component's ranks and threads; the CLI's `--emit
/// ecearth4` and the app's key write this one text.
pub fn hetjob_fragment(
    names: &[String],
    config: &Scored,
    cores_per_node: Option<u32>,
    tts_w: f64,
    heading: &str,
) -> Result<String, String> {
    let components = resources(names, config, cores_per_node);
    let parts: Vec<String> = components
        .iter()
        .zip(names)
        .map(|(r, name)| match r.omp_num_threads {
            1 => format!("{name} {}", r.ntasks),
            t => format!("{name} {} x {t} threads", r.ntasks),
        })
        .collect();
    let comment = format!(
        "{heading}, {:.2} SYPD at TTS_w {tts_w:.2}: {}\n\
         keys are the component names in lower case; for job.groups (node packings, \
         slurm-wrapper-taskset) use [machine] placement = \"groups\"",
        config.sypd,
        parts.join(" + ")
    );
    fragment(&components, &comment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(nproc: &[u32], threads: &[u32]) -> Scored {
        Scored {
            nproc: nproc.to_vec(),
            threads: threads.to_vec(),
            total_nproc: nproc.iter().sum(),
            sypd: 1.0,
            chsy: 1.0,
            coupling_cost: 0.0,
            fittingness: 1.0,
            billing: None,
        }
    }

    #[test]
    fn ranks_per_node_follow_the_threads_and_never_exceed_the_ranks() {
        let names = ["OIFS".to_string(), "NEMO".to_string()];
        let r = resources(&names, &scored(&[224, 9], &[4, 1]), Some(112));
        assert_eq!(
            r,
            [
                ComponentResources {
                    key: "oifs".into(),
                    ntasks: 56,
                    ntasks_per_node: Some(28),
                    omp_num_threads: 4
                },
                ComponentResources {
                    key: "nemo".into(),
                    ntasks: 9,
                    ntasks_per_node: Some(9),
                    omp_num_threads: 1
                }
            ]
        );
        assert_eq!(
            fragment(&r, "autolb").unwrap(),
            "# autolb\njob:\n  launch:\n    method: slurm-hetjob\n  oifs:\n    ntasks: 56\n    \
             ntasks_per_node: 28\n    omp_num_threads: 4\n  nemo:\n    ntasks: 9\n    \
             ntasks_per_node: 9\n"
        );
        let none = resources(&names, &scored(&[224, 9], &[4, 1]), None);
        assert!(none.iter().all(|c| c.ntasks_per_node.is_none()));
    }

    #[test]
    fn keys_yaml_would_read_as_other_than_strings_are_refused() {
        assert!(check_key("oifs").is_ok());
        assert!(check_key("nemo-4_2").is_ok());
        for bad in ["on", "no", "true", "null", "y"] {
            let e = check_key(bad).unwrap_err();
            assert!(e.contains("rename the component"), "{e}");
        }
    }
}
