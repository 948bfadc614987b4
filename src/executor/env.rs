//! A run's values as environment variables, for commands and workflow managers that prefer
//! them to placeholders (`campaign run` exports them to every run; `campaign next --env`
//! prints them).
//!
//! | variable | value |
//! |---|---|
//! | `AUTOLB_RUN` | the run id, `i00-t03-r1` |
//! | `AUTOLB_RUN_DIR` | the run directory |
//! | `AUTOLB_ITERATION`, `AUTOLB_TEST`, `AUTOLB_REPETITION` | the run's numbers |
//! | `AUTOLB_TOTAL_NPROC` | all PEs of the run, extras included |
//! | `AUTOLB_NPROC_<NAME>` | PEs of component NAME, named by [`env_name`] |

use super::RunRequest;

/// The environment-variable form of a name: ASCII letters upper-cased, digits kept, anything
/// else (`-`, `.`, spaces, non-ASCII) becomes `_`. `nemo-oce.v4` → `NEMO_OCE_V4`.
pub fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The variable holding a component's PEs: `AUTOLB_NPROC_` + [`env_name`].
pub fn nproc_var(component: &str) -> String {
    format!("AUTOLB_NPROC_{}", env_name(component))
}

/// Every variable of one run, in a fixed order.
pub fn run_env(run: &RunRequest) -> Vec<(String, String)> {
    let mut v = vec![
        ("AUTOLB_RUN".to_string(), run.id.clone()),
        (
            "AUTOLB_RUN_DIR".to_string(),
            run.run_dir.display().to_string(),
        ),
        ("AUTOLB_ITERATION".to_string(), run.iteration.to_string()),
        ("AUTOLB_TEST".to_string(), run.test.to_string()),
        ("AUTOLB_REPETITION".to_string(), run.repetition.to_string()),
        (
            "AUTOLB_TOTAL_NPROC".to_string(),
            run.total_nproc().to_string(),
        ),
    ];
    for (name, p) in &run.nproc {
        v.push((nproc_var(name), p.to_string()));
    }
    v
}

/// Components whose variable names collide (`a-b` and `a_b`), as `(first, second, variable)`.
pub fn colliding_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<(String, String, String)> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for n in names {
        let var = nproc_var(n);
        if let Some((_, first)) = seen.iter().find(|(v, _)| *v == var) {
            return Some((first.to_string(), n.to_string(), var));
        }
        seen.push((var, n));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn names_are_upper_cased_and_everything_else_becomes_underscores() {
        assert_eq!(env_name("IFS"), "IFS");
        assert_eq!(env_name("nemo-oce.v4"), "NEMO_OCE_V4");
        assert_eq!(env_name("läuft 2"), "L_UFT_2");
        assert_eq!(nproc_var("oifs"), "AUTOLB_NPROC_OIFS");
        assert_eq!(
            colliding_names(["a-b", "IFS", "A_B"]),
            Some(("a-b".into(), "A_B".into(), "AUTOLB_NPROC_A_B".into()))
        );
        assert_eq!(colliding_names(["IFS", "NEMO"]), None);
    }

    #[test]
    fn a_run_exports_its_values() {
        let run = RunRequest {
            id: "i01-t02-r1".into(),
            iteration: 1,
            test: 2,
            repetition: 1,
            nproc: vec![("IFS".into(), 408), ("nemo".into(), 240)],
            extra_pes: 96,
            run_dir: PathBuf::from("/c/iter-01/test-02/rep-1"),
        };
        let env = run_env(&run);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("AUTOLB_RUN"), Some("i01-t02-r1"));
        assert_eq!(get("AUTOLB_RUN_DIR"), Some("/c/iter-01/test-02/rep-1"));
        assert_eq!(get("AUTOLB_TOTAL_NPROC"), Some("744"));
        assert_eq!(get("AUTOLB_NPROC_NEMO"), Some("240"));
        assert_eq!(get("AUTOLB_ITERATION"), Some("1"));
    }
}
