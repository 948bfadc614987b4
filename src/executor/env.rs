//! How a run's values reach the programs it starts: numbers as digits, text as environment
//! variables.
//!
//! A number autolb made (`{nproc.NAME}`, `{total_nproc}`, `{iteration}` ...) is written into a
//! command or job script as plain digits: digits mean the same to every shell and interpreter,
//! and shell arithmetic (`$(( {nproc.IFS} / 2 ))`) works. A text value (the run directory, the
//! run id, a component name, a path) is never written into anything a shell could parse: the
//! script expands it from the environment (`cd "$AUTOLB_RUN_DIR"`), where the shell treats it
//! as data whatever characters it holds. Deciding how to quote a value from a parse of the
//! script around it cannot be made right (here-documents, comments, `$(...)` inside `"..."`,
//! `bash -c -`, a program that hands its argument to another shell), so templates that name a
//! text placeholder are refused ([`text_placeholder_refusal`]) and the only place autolb itself
//! writes a value into a script is [`export_lines`], through [`shell_quote`].
//!
//! Names a run's settings take in a shell are made from component names: environment
//! variables (`AUTOLB_NPROC_<NAME>`) and bash array names (`<name>_nprocs`).
//!
//! Component names may hold letters, digits, `_` and `-` ([`crate::curve::validate_component_name`]),
//! and `-` is not allowed in a shell variable name. So:
//! * environment variables: the name in upper case, every character other than a letter or a
//!   digit replaced by `_` (`IFS-atm` -> `AUTOLB_NPROC_IFS_ATM`);
//! * bash arrays: the name with every `-` replaced by `_` (case kept), and a leading `_` when it
//!   starts with a digit (`IFS-atm` -> `IFS_atm_nprocs`, `2d` -> `_2d_nprocs`).
//!
//! Two components whose names map to the same variable are refused ([`check_distinct`]).
//!
//! [`run_env`] gives every variable of a run; every executor that starts a program (the
//! `command` executor, `campaign exec`, the Slurm job script) exports them:
//!
//! | variable | value |
//! |---|---|
//! | `AUTOLB_RUN` | the run id, `i00-t03-r1` |
//! | `AUTOLB_RUN_DIR` | the run directory |
//! | `AUTOLB_ITERATION`, `AUTOLB_TEST`, `AUTOLB_REPETITION` | the run's numbers |
//! | `AUTOLB_NPROC_<NAME>` | MPI ranks of component NAME ([`nproc_env_var`]); its PEs when it runs one thread per rank |
//! | `AUTOLB_THREADS_<NAME>` | OpenMP threads per rank of component NAME, 1 for pure MPI ([`threads_env_var`]) |
//! | `AUTOLB_CORES_<NAME>` | cores of component NAME, ranks x threads ([`cores_env_var`]) |
//! | `AUTOLB_COMPONENT`, `AUTOLB_NPROC` | a standalone run (scaling campaign): the component it measures and its PEs |
//! | `AUTOLB_TOTAL_NPROC` | all PEs of the run, extras included |

use super::RunRequest;

/// Every variable of one run, in the order of the table above.
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
    ];
    for (k, (name, p)) in run.nproc.iter().enumerate() {
        v.push((nproc_env_var(name), run.ranks_of(k).to_string()));
        v.push((threads_env_var(name), run.threads_of(k).to_string()));
        v.push((cores_env_var(name), p.to_string()));
    }
    if let Some(component) = &run.component {
        v.push(("AUTOLB_COMPONENT".to_string(), component.clone()));
        if let Some(k) = run.nproc.iter().position(|(name, _)| name == component) {
            v.push(("AUTOLB_NPROC".to_string(), run.ranks_of(k).to_string()));
        }
    }
    v.push((
        "AUTOLB_TOTAL_NPROC".to_string(),
        run.total_nproc().to_string(),
    ));
    v
}

/// The placeholders whose values are text, with the variable a script expands instead.
pub const TEXT_PLACEHOLDERS: &[(&str, &str)] = &[
    ("run_dir", "AUTOLB_RUN_DIR"),
    ("run", "AUTOLB_RUN"),
    ("run_id", "AUTOLB_RUN"),
    ("component", "AUTOLB_COMPONENT"),
    ("campaign_dir", "AUTOLB_CAMPAIGN_DIR"),
    ("job_name", "AUTOLB_JOB_NAME"),
    ("autolb", "AUTOLB_BIN"),
    ("multi_prog", "AUTOLB_MULTI_PROG"),
];

/// The one-line refusal of a text placeholder at `place` (a key, an argument, a file and
/// line), showing the variable to write instead; `None` for any other placeholder.
pub fn text_placeholder_refusal(place: &str, placeholder: &str) -> Option<String> {
    let (_, var) = TEXT_PLACEHOLDERS.iter().find(|(p, _)| *p == placeholder)?;
    Some(format!(
        "{place}: {{{placeholder}}} is not written into commands or scripts; write \"${var}\" \
         (an environment variable the script expands)"
    ))
}

/// Quotes a string as one POSIX shell word: single quotes, with each `'` written as `'\''`.
/// Nothing inside single quotes is special to a shell (no `$`, backquote, backslash or line
/// break), so the word is exactly the string. The only quoting autolb does; its callers put
/// the word where a word starts (`export NAME=WORD`, one argument of a command line).
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `export NAME='value'` lines, one per variable: what a generated script starts with, and
/// what `campaign next --env` prints.
pub fn export_lines(vars: &[(String, String)]) -> String {
    vars.iter()
        .map(|(k, v)| format!("export {k}={}\n", shell_quote(v)))
        .collect()
}

/// The `AUTOLB_THREADS_<NAME>` variable of a component: OpenMP threads per rank.
pub fn threads_env_var(component: &str) -> String {
    format!("AUTOLB_THREADS_{}", env_suffix(component))
}

/// The `AUTOLB_CORES_<NAME>` variable of a component: ranks x threads.
pub fn cores_env_var(component: &str) -> String {
    format!("AUTOLB_CORES_{}", env_suffix(component))
}

/// The `AUTOLB_NPROC_<NAME>` variable of a component.
pub fn nproc_env_var(component: &str) -> String {
    format!("AUTOLB_NPROC_{}", env_suffix(component))
}

/// A name as an environment-variable suffix: upper case, non-alphanumerics to `_`.
pub fn env_suffix(name: &str) -> String {
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

/// A name as a bash identifier: non-alphanumerics to `_`, case kept, `_` in front of a
/// leading digit.
pub fn shell_identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Refuses components whose names map to the same environment variable or bash array name
/// (e.g. `IFS-atm` and `IFS_atm`), naming both.
pub fn check_distinct<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let names: Vec<&str> = names.into_iter().collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[..i] {
            if env_suffix(a) == env_suffix(b) || shell_identifier(a) == shell_identifier(b) {
                return Err(format!(
                    "components {b:?} and {a:?} map to the same shell variable ({}); rename one",
                    nproc_env_var(a)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_valid_shell_names() {
        assert_eq!(nproc_env_var("IFS-atm"), "AUTOLB_NPROC_IFS_ATM");
        assert_eq!(nproc_env_var("nemo"), "AUTOLB_NPROC_NEMO");
        assert_eq!(shell_identifier("IFS-atm"), "IFS_atm");
        assert_eq!(shell_identifier("2d-ocean"), "_2d_ocean");
        assert_eq!(shell_identifier("NEMO"), "NEMO");
        for name in ["a-b", "9x", "_-_", "A1-b2_c3"] {
            let id = shell_identifier(name);
            assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            assert!(!id.starts_with(|c: char| c.is_ascii_digit()), "{id}");
        }
    }

    /// What `sh` makes of `export X=<quoted>`: the value it reads back.
    fn through_sh(value: &str) -> String {
        let script = export_lines(&[("X".into(), value.into())]) + "printf %s \"$X\"";
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn hostile_values_are_exported_as_exactly_their_text() {
        for v in [
            "x$(touch PWNED)",
            "`touch PWNED`",
            "a'b",
            "'\\''",
            "a\"b",
            "a\\b",
            "$'\\x41'",
            "new\nline",
            "; touch PWNED; ",
            "-n",
            "*?[a]",
            "",
            "é ✓ \u{202e}",
        ] {
            assert_eq!(through_sh(v), v);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_string_is_exported_as_exactly_its_text(v in "[^\\x00]{0,40}") {
            proptest::prop_assert_eq!(through_sh(&v), v);
        }

        #[test]
        fn shell_characters_are_exported_as_exactly_their_text(
            v in "[-$`'\"\\\\;&|<>(){}*?~#! \\n\\ta-z]{0,30}"
        ) {
            proptest::prop_assert_eq!(through_sh(&v), v);
        }
    }

    #[test]
    fn text_placeholders_are_refused_with_their_variable() {
        let e = text_placeholder_refusal("[executor] command[2]", "run_dir").unwrap();
        assert_eq!(
            e,
            "[executor] command[2]: {run_dir} is not written into commands or scripts; write \"$AUTOLB_RUN_DIR\" (an environment variable the script expands)"
        );
        assert!(text_placeholder_refusal("x", "nproc.IFS").is_none());
    }

    #[test]
    fn colliding_names_are_refused() {
        assert!(check_distinct(["IFS", "NEMO", "IFS-atm"]).is_ok());
        let e = check_distinct(["IFS-atm", "NEMO", "IFS_atm"]).unwrap_err();
        assert!(e.contains("IFS-atm") && e.contains("IFS_atm"), "{e}");
        assert!(check_distinct(["ifs", "IFS"]).is_err());
        assert!(check_distinct(["1a", "_1a"]).is_err());
    }

    #[test]
    fn a_run_exports_its_values() {
        let run = RunRequest {
            component: None,
            id: "i01-t02-r1".into(),
            iteration: 1,
            test: 2,
            repetition: 1,
            nproc: vec![("IFS".into(), 408), ("nemo-oce".into(), 240)],
            threads: Vec::new(),
            extra_pes: 96,
            run_dir: std::path::PathBuf::from("/c/iter-01/test-02/rep-1"),
        };
        let env = run_env(&run);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("AUTOLB_RUN"), Some("i01-t02-r1"));
        assert_eq!(get("AUTOLB_RUN_DIR"), Some("/c/iter-01/test-02/rep-1"));
        assert_eq!(get("AUTOLB_TOTAL_NPROC"), Some("744"));
        assert_eq!(get("AUTOLB_NPROC_NEMO_OCE"), Some("240"));
        assert_eq!(get("AUTOLB_THREADS_NEMO_OCE"), Some("1"));
        assert_eq!(get("AUTOLB_CORES_NEMO_OCE"), Some("240"));
        assert_eq!(get("AUTOLB_ITERATION"), Some("1"));
    }

    #[test]
    fn a_hybrid_component_exports_ranks_threads_and_cores() {
        let run = RunRequest {
            component: None,
            id: "i00-t00-r1".into(),
            iteration: 0,
            test: 0,
            repetition: 1,
            nproc: vec![("oifs".into(), 256), ("nemo".into(), 200)],
            threads: vec![4, 1],
            extra_pes: 8,
            run_dir: std::path::PathBuf::from("/c/run"),
        };
        let env = run_env(&run);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("AUTOLB_NPROC_OIFS"), Some("64"));
        assert_eq!(get("AUTOLB_THREADS_OIFS"), Some("4"));
        assert_eq!(get("AUTOLB_CORES_OIFS"), Some("256"));
        assert_eq!(get("AUTOLB_NPROC_NEMO"), Some("200"));
        assert_eq!(get("AUTOLB_TOTAL_NPROC"), Some("464"));
    }
}
