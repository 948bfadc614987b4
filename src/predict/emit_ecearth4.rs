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
//! No YAML library is among the project's dependencies, and the fragment is a fixed shape of
//! nested maps of whole numbers and one word, so it is written here; every key is a component
//! name (letters, digits, `_`, `-`) in lower case, quoted where YAML 1.1 would read it as
//! something other than a string.

use std::fmt::Write as _;

use super::Scored;

/// One component's resources in the fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentResources {
    /// The component's key under `job` (its name in lower case: `oifs`, `nemo`).
    pub key: String,
    /// MPI ranks.
    pub ntasks: u32,
    /// Ranks per node with `cores_per_node`: as many as fit (each takes `omp_num_threads`
    /// cores), never more than `ntasks`.
    pub ntasks_per_node: Option<u32>,
    /// OpenMP threads per rank; written only for a hybrid component (more than 1).
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

/// The fragment's text: a comment naming what it is, then `job.launch.method` and each
/// component's `ntasks`, `ntasks_per_node` and `omp_num_threads`.
pub fn fragment(components: &[ComponentResources], comment: &str) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        let _ = writeln!(out, "# {line}");
    }
    out.push_str("job:\n  launch:\n    method: slurm-hetjob\n");
    for c in components {
        let _ = writeln!(out, "  {}:", yaml_key(&c.key));
        let _ = writeln!(out, "    ntasks: {}", c.ntasks);
        if let Some(per_node) = c.ntasks_per_node {
            let _ = writeln!(out, "    ntasks_per_node: {per_node}");
        }
        if c.omp_num_threads > 1 {
            let _ = writeln!(out, "    omp_num_threads: {}", c.omp_num_threads);
        }
    }
    out
}

/// A key as a YAML plain scalar when it reads as a string in YAML 1.1 and 1.2 (PyYAML, which
/// ScriptEngine uses, is 1.1), else double-quoted. Names hold only `A-Za-z0-9_-`, so quoting
/// needs no escapes.
fn yaml_key(key: &str) -> String {
    const WORDS: [&str; 11] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "",
    ];
    let plain = key.starts_with(|c: char| c.is_ascii_lowercase())
        && !WORDS.contains(&key)
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if plain {
        key.to_string()
    } else {
        format!("\"{key}\"")
    }
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
            fragment(&r, "autolb"),
            "# autolb\njob:\n  launch:\n    method: slurm-hetjob\n  oifs:\n    ntasks: 56\n    \
             ntasks_per_node: 28\n    omp_num_threads: 4\n  nemo:\n    ntasks: 9\n    \
             ntasks_per_node: 9\n"
        );
        let none = resources(&names, &scored(&[224, 9], &[4, 1]), None);
        assert!(none.iter().all(|c| c.ntasks_per_node.is_none()));
    }

    #[test]
    fn keys_yaml_would_read_as_other_than_strings_are_quoted() {
        assert_eq!(yaml_key("oifs"), "oifs");
        assert_eq!(yaml_key("nemo-4_2"), "nemo-4_2");
        assert_eq!(yaml_key("on"), "\"on\"");
        assert_eq!(yaml_key("2d"), "\"2d\"");
        assert_eq!(yaml_key("_x"), "\"_x\"");
    }
}
