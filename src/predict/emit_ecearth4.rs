//! A chosen configuration as an EC-Earth4 experiment-config fragment, so the answer is
//! something to paste into the experiment YAML rather than a list of numbers.
//!
//! EC-Earth4 (ScriptEngine on Slurm) takes per-component resources under `job`: with
//! `job.launch.method: slurm-hetjob` each component is one Slurm het-job component on nodes of
//! its own, with `ntasks` (MPI ranks), `ntasks_per_node` and, for a hybrid component such as
//! OpenIFS, `omp_num_threads` (the het job passes them to `--cpus-per-task`). The
//! `slurm-wrapper-taskset` form packs several components on every node (`job.groups`), with the
//! pinned helpers (XIOS, the runoff mapper) where the campaign file pins them: `predict` with
//! `placement = "groups"` and the terminal app on such a file write it
//! ([`crate::predict::node_groups::groups_fragment`]) with [`to_yaml`] too.
//!
//! The fragment is written from `Serialize` structs with serde_norway, in the order EC-Earth4's
//! own files use (components in the prediction's order). Keys are component names in lower
//! case, so two names that differ only in case would be one key, and a YAML reader keeps the
//! last: such names are refused, naming both, as are names that would be one of the fragment's
//! own keys (`launch`, `groups`, `nodes`). serde_norway quotes a key a YAML 1.2 reader would
//! take for a number, a boolean or null (`0x1f`, `1e3`, `true`); ScriptEngine reads with PyYAML,
//! a YAML 1.1 reader, which also takes `yes`, `on`, `y` for booleans and `1_000` for a number,
//! so every key that does not start with a letter or is one of those words is written quoted
//! ([`to_yaml`]).

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

/// Words a YAML 1.1 reader (PyYAML) takes for a boolean or null when written plain, in lower
/// case (keys are).
const NOT_STRINGS: [&str; 10] = [
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
];

/// Keys of the fragment itself that a component key would clash with: `job.launch`,
/// `job.groups` and a node group's `nodes`.
const FRAGMENT_KEYS: [&str; 3] = ["launch", "groups", "nodes"];

/// The component's key under `job`: its name in lower case.
pub fn key_of(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// Whether a YAML reader, 1.1 or 1.2, could read `key` written plain as other than this
/// string: anything not starting with a letter (a number, `.inf`, `~`, `-1`), a boolean or
/// null word, or a key with characters outside letters, digits, `_` and `-`.
fn needs_quotes(key: &str) -> bool {
    !key.starts_with(|c: char| c.is_ascii_alphabetic())
        || NOT_STRINGS.contains(&key.to_ascii_lowercase().as_str())
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Refuses component names that would not each be a key of their own: two that are one key in
/// lower case (`IFS` and `ifs`), an empty one, or one that is a key of the fragment itself.
pub fn check_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut seen: Vec<(&str, String)> = Vec::new();
    for name in names {
        let key = key_of(name);
        if key.is_empty() {
            return Err("a component with an empty name cannot be a YAML key; name it".into());
        }
        if FRAGMENT_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "component {name:?} would be written as the key {key:?}, which the EC-Earth4 \
                 fragment uses itself; rename the component"
            ));
        }
        if let Some((other, _)) = seen.iter().find(|(_, k)| *k == key) {
            return Err(format!(
                "components {other:?} and {name:?} would both be written as the key {key:?} \
                 (keys are names in lower case), and a YAML reader keeps only the last; rename \
                 one of them"
            ));
        }
        seen.push((name, key));
    }
    Ok(())
}

/// `value` as YAML, with every key in `keys` that a YAML 1.1 reader would not read back as
/// that string quoted (`'1_000':`, `'yes':`); serde_norway has quoted those YAML 1.2 would
/// misread already.
pub fn to_yaml<T: Serialize>(value: &T, keys: &[String]) -> Result<String, String> {
    let yaml = serde_norway::to_string(value).map_err(|e| e.to_string())?;
    let quoted: Vec<&String> = keys.iter().filter(|k| needs_quotes(k)).collect();
    if quoted.is_empty() {
        return Ok(yaml);
    }
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.lines() {
        let body = line.trim_start_matches(' ');
        let (indent, body) = line.split_at(line.len() - body.len());
        let (dash, body) = match body.strip_prefix("- ") {
            Some(rest) => ("- ", rest),
            None => ("", body),
        };
        let key = quoted.iter().find(|k| {
            body.strip_prefix(k.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        });
        match key {
            Some(k) => {
                let rest = &body[k.len()..];
                out.push_str(&format!("{indent}{dash}'{}'{rest}", k.replace('\'', "''")));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
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

/// The resources of each component (names `names`) of a configuration of `nproc` cores per
/// component at `threads` OpenMP threads per rank (1 where not given), with ranks per node when
/// the nodes' cores are known.
pub fn resources(
    names: &[String],
    nproc: &[u32],
    threads: &[u32],
    cores_per_node: Option<u32>,
) -> Vec<ComponentResources> {
    names
        .iter()
        .zip(nproc)
        .enumerate()
        .map(|(k, (name, &cores))| {
            let threads = threads.get(k).copied().unwrap_or(1).max(1);
            let ntasks = cores / threads;
            ComponentResources {
                key: key_of(name),
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
    check_names(components.iter().map(|c| c.key.as_str()))?;
    let root = HetJobFragment {
        job: HetJob {
            launch: Launch {
                method: "slurm-hetjob",
            },
            components: OrderedMap(components.iter().map(|c| (c.key.clone(), c)).collect()),
        },
    };
    let keys: Vec<String> = components.iter().map(|c| c.key.clone()).collect();
    let yaml = to_yaml(&root, &keys)?;
    let mut out: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    out.push_str(&yaml);
    Ok(out)
}

/// The het-job fragment of one configuration with its comment: `heading` (who chose it and
/// how), its SYPD and TTS_w, and each component's ranks and threads; the CLI's `--emit
/// ecearth4` writes this text.
pub fn hetjob_fragment(
    names: &[String],
    config: &Scored,
    cores_per_node: Option<u32>,
    tts_w: f64,
    heading: &str,
) -> Result<String, String> {
    hetjob_text(
        names,
        &config.nproc,
        &config.threads,
        cores_per_node,
        &format!("{heading}, {:.2} SYPD at TTS_w {tts_w:.2}", config.sypd),
    )
}

/// The het-job fragment of `nproc` cores per component at `threads` threads per rank, its
/// comment `heading` then each component's ranks and threads (`oifs 191 x 4 threads`); the
/// terminal app's `y` writes this text for a configuration it shows.
pub fn hetjob_text(
    names: &[String],
    nproc: &[u32],
    threads: &[u32],
    cores_per_node: Option<u32>,
    heading: &str,
) -> Result<String, String> {
    check_names(names.iter().map(String::as_str))?;
    let components = resources(names, nproc, threads, cores_per_node);
    let parts: Vec<String> = components
        .iter()
        .zip(names)
        .map(|(r, name)| match r.omp_num_threads {
            1 => format!("{name} {}", r.ntasks),
            t => format!("{name} {} x {t} threads", r.ntasks),
        })
        .collect();
    let comment = format!(
        "{heading}: {}\n\
         keys are the component names in lower case; for job.groups (node packings, \
         slurm-wrapper-taskset) use [machine] placement = \"groups\"",
        parts.join(" + ")
    );
    fragment(&components, &comment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_per_node_follow_the_threads_and_never_exceed_the_ranks() {
        let names = ["OIFS".to_string(), "NEMO".to_string()];
        let r = resources(&names, &[224, 9], &[4, 1], Some(112));
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
        let none = resources(&names, &[224, 9], &[4, 1], None);
        assert!(none.iter().all(|c| c.ntasks_per_node.is_none()));
    }

    #[test]
    fn names_that_are_one_key_are_refused_naming_both() {
        assert!(check_names(["OIFS", "NEMO", "nemo-4_2"]).is_ok());
        let e = check_names(["IFS", "NEMO", "ifs"]).unwrap_err();
        assert!(
            e.contains("\"IFS\" and \"ifs\" would both be written as the key \"ifs\""),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = check_names(["Launch"]).unwrap_err();
        assert!(e.contains("uses itself"), "{e}");
        assert!(check_names([""]).is_err());
    }

    #[test]
    fn keys_a_yaml_reader_would_misread_are_quoted() {
        for key in [
            "1_000", "0x1f", "yes", "on", "null", "~", "1e3", ".inf", "y", "-1", "1:20",
        ] {
            assert!(needs_quotes(key), "{key}");
        }
        for key in ["oifs", "nemo-4_2", "xios", "yesterday", "rnfm"] {
            assert!(!needs_quotes(key), "{key}");
        }
        let names: Vec<String> = ["1_000", "yes", "oifs"].map(String::from).to_vec();
        let r = resources(&names, &[4, 2, 8], &[1, 1, 1], None);
        let text = fragment(&r, "t").unwrap();
        assert!(
            text.contains("\n  '1_000':\n") && text.contains("\n  'yes':\n"),
            "{text}"
        );
        assert!(text.contains("\n  oifs:\n"), "{text}");
    }
}
