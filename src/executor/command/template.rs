//! The command template: placeholders, and quoting of the values that a shell will parse.
//!
//! A template is a list (program and arguments) with placeholders `{run_dir}`,
//! `{nproc.NAME}` (MPI ranks), `{threads.NAME}` (OpenMP threads per rank), `{cores.NAME}`
//! (ranks x threads), `{total_nproc}`, `{iteration}`, `{test}`, `{repetition}` and `{run}`, and in
//! a standalone run of a scaling campaign `{component}` and `{nproc}` (the one component);
//! `{{` and `}}` are literal braces. It runs without a shell, so most values need no quoting.
//! But in the script argument of a shell (`["bash", "-c", "cd {run_dir} && ./run"]`: the
//! program is sh, bash, dash, ksh, mksh, ash or zsh, also behind wrappers such as `env`,
//! `timeout` or `srun` ([`super::wrappers`], which refuses a template where it cannot prove
//! where the script is), and the argument is the script after a `-c` option) a value is shell
//! code unless quoted, and a campaign directory named
//! `x$(touch PWNED)` would run the `touch`. There each value is quoted for where it stands in
//! the script: outside quotes it becomes one single-quoted word, inside `'...'` its single
//! quotes are closed and reopened (`'\''`), inside `"..."` the characters `\`, `"`, `$` and
//! `` ` `` are escaped with a backslash. So a value is always exactly its text, whatever it
//! holds. (A placeholder right after a backslash outside quotes is refused, as is one inside
//! `$'...'`; inside `$(...)` within double quotes a value is safe but may split into words:
//! prefer the environment variables there, see [`crate::executor::env`].)

use std::collections::HashMap;

use crate::executor::RunRequest;

/// The value of every placeholder for one run.
pub fn placeholder_values(run: &RunRequest) -> HashMap<String, String> {
    let mut v = HashMap::new();
    v.insert("run_dir".to_string(), run.run_dir.display().to_string());
    v.insert("total_nproc".to_string(), run.total_nproc().to_string());
    v.insert("iteration".to_string(), run.iteration.to_string());
    v.insert("test".to_string(), run.test.to_string());
    v.insert("repetition".to_string(), run.repetition.to_string());
    v.insert("run".to_string(), run.id.clone());
    // A hybrid component's `nproc` is its MPI ranks, what a launcher starts; its cores are
    // ranks x threads.
    for (k, (name, p)) in run.nproc.iter().enumerate() {
        v.insert(format!("nproc.{name}"), run.ranks_of(k).to_string());
        v.insert(format!("threads.{name}"), run.threads_of(k).to_string());
        v.insert(format!("cores.{name}"), p.to_string());
    }
    // A standalone run: the component it measures and its PEs.
    if let Some(component) = &run.component {
        v.insert("component".to_string(), component.clone());
        if let Some(k) = run.nproc.iter().position(|(name, _)| name == component) {
            v.insert("nproc".to_string(), run.ranks_of(k).to_string());
        }
    }
    v
}

/// Fills every argument of `template`, quoting values in a shell's `-c` script.
pub fn expand_argv(
    template: &[String],
    values: &HashMap<String, String>,
) -> Result<Vec<String>, String> {
    let script = shell_script_index(template)?;
    template
        .iter()
        .enumerate()
        .map(|(k, arg)| {
            if Some(k) == script {
                expand_shell(arg, values)
            } else {
                expand(arg, values)
            }
        })
        .collect()
}

pub use super::wrappers::shell_script_index;

/// One piece of a template argument.
enum Piece {
    Text(char),
    Value(String),
}

/// Splits an argument into characters and placeholders; unknown names are errors.
fn pieces(template: &str, values: &HashMap<String, String>) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push(Piece::Text('{'));
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push(Piece::Text('}'));
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err(format!(
                                "unclosed placeholder {{{name}; write {{{{ for a literal brace"
                            ))
                        }
                    }
                }
                match values.get(&name) {
                    Some(v) => out.push(Piece::Value(v.clone())),
                    None => {
                        let mut known: Vec<&str> = values.keys().map(|k| k.as_str()).collect();
                        known.sort_unstable();
                        return Err(format!(
                            "unknown placeholder {{{name}}}; known: {}",
                            known
                                .iter()
                                .map(|k| format!("{{{k}}}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
            }
            '}' => return Err("a lone } ; write }} for a literal brace".into()),
            c => out.push(Piece::Text(c)),
        }
    }
    Ok(out)
}

/// Fills `{name}` placeholders; `{{` / `}}` are literal braces. Unknown names are errors.
pub fn expand(template: &str, values: &HashMap<String, String>) -> Result<String, String> {
    Ok(pieces(template, values)?
        .into_iter()
        .map(|p| match p {
            Piece::Text(c) => c.to_string(),
            Piece::Value(v) => v,
        })
        .collect())
}

/// Where in a shell script we are.
#[derive(Clone, Copy, PartialEq)]
enum Quoting {
    Plain,
    /// After a backslash outside quotes.
    PlainEscaped,
    Single,
    Double,
    DoubleEscaped,
    /// Inside bash's `$'...'`.
    AnsiC,
}

/// [`expand`] for a shell script: each value quoted for its place (see the module doc).
pub fn expand_shell(script: &str, values: &HashMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut q = Quoting::Plain;
    let mut prev = '\0';
    for piece in pieces(script, values)? {
        match piece {
            Piece::Text(c) => {
                out.push(c);
                q = match (q, c) {
                    (Quoting::Plain, '\\') => Quoting::PlainEscaped,
                    (Quoting::Plain, '\'') if prev == '$' => Quoting::AnsiC,
                    (Quoting::Plain, '\'') => Quoting::Single,
                    (Quoting::Plain, '"') => Quoting::Double,
                    (Quoting::PlainEscaped, _) => Quoting::Plain,
                    (Quoting::Single, '\'') => Quoting::Plain,
                    (Quoting::Double, '\\') => Quoting::DoubleEscaped,
                    (Quoting::Double, '"') => Quoting::Plain,
                    (Quoting::DoubleEscaped, _) => Quoting::Double,
                    (Quoting::AnsiC, '\\') => Quoting::AnsiC,
                    (Quoting::AnsiC, '\'') if prev != '\\' => Quoting::Plain,
                    (q, _) => q,
                };
                prev = if prev == '\\' && c == '\\' { '\0' } else { c };
            }
            Piece::Value(v) => {
                match q {
                    Quoting::Plain => {
                        out.push('\'');
                        out.push_str(&v.replace('\'', "'\\''"));
                        out.push('\'');
                    }
                    Quoting::Single => out.push_str(&v.replace('\'', "'\\''")),
                    Quoting::Double => {
                        for c in v.chars() {
                            if matches!(c, '\\' | '"' | '$' | '`') {
                                out.push('\\');
                            }
                            out.push(c);
                        }
                    }
                    Quoting::PlainEscaped | Quoting::DoubleEscaped => {
                        return Err("a placeholder right after a backslash in a shell script cannot be quoted safely; remove the backslash".into())
                    }
                    Quoting::AnsiC => {
                        return Err("a placeholder inside $'...' cannot be quoted safely; use \"...\" or the AUTOLB_* environment variables".into())
                    }
                }
                prev = '\0';
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hybrid_component_has_ranks_threads_and_cores() {
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
        let values = placeholder_values(&run);
        assert_eq!(values["nproc.oifs"], "64");
        assert_eq!(values["threads.oifs"], "4");
        assert_eq!(values["cores.oifs"], "256");
        assert_eq!(values["nproc.nemo"], "200");
        assert_eq!(values["threads.nemo"], "1");
        assert_eq!(values["cores.nemo"], "200");
        assert_eq!(values["total_nproc"], "464");
    }

    fn values(dir: &str) -> HashMap<String, String> {
        HashMap::from([
            ("run_dir".to_string(), dir.to_string()),
            ("nproc.IFS".to_string(), "408".to_string()),
        ])
    }

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn script_at(template: &[String]) -> Option<usize> {
        shell_script_index(template).unwrap()
    }

    #[test]
    fn the_script_of_a_shell_is_found() {
        assert_eq!(script_at(&argv(&["bash", "-c", "x"])), Some(2));
        assert_eq!(script_at(&argv(&["/bin/sh", "-ec", "x"])), Some(2));
        assert_eq!(
            script_at(&argv(&["bash", "-o", "pipefail", "-c", "x", "a0"])),
            Some(4)
        );
        assert_eq!(script_at(&argv(&["zsh", "-c", "--", "x"])), Some(3));
        assert_eq!(script_at(&argv(&["bash", "script.sh", "-c"])), None);
        assert_eq!(script_at(&argv(&["python3", "-c", "x"])), None);
        assert_eq!(script_at(&argv(&["sh", "-e", "x"])), None);
    }

    /// What `sh` makes of `script` (prints its arguments one a line).
    fn run_sh(shell: &str, script: &str) -> Option<String> {
        let out = std::process::Command::new(shell)
            .args(["-c", script])
            .output()
            .ok()?;
        Some(String::from_utf8_lossy(&out.stdout).to_string())
    }

    #[test]
    fn hostile_values_stay_their_text_in_every_quoting_context() {
        let hostile = [
            "x$(touch PWNED)",
            "a'b",
            "a\"b",
            "`id`",
            "a\\b",
            "$HOME",
            "two words",
            "new\nline",
            "'; echo owned; '",
            "\"; echo owned; \"",
        ];
        for shell in ["sh", "bash", "dash", "zsh", "ksh"] {
            if run_sh(shell, "true").is_none() {
                continue; // not installed
            }
            for v in hostile {
                for script in [
                    "printf '%s|' {run_dir}",
                    "printf '%s|' '{run_dir}'",
                    "printf '%s|' \"{run_dir}\"",
                    "printf '%s|' pre{run_dir}post",
                    "printf '%s|' \"pre {run_dir} post\"",
                    "printf '%s|' 'pre {run_dir} post'",
                ] {
                    let code = expand_shell(script, &values(v)).unwrap();
                    let want = expand(script, &values("@"))
                        .unwrap()
                        .replace(['\'', '"'], "")
                        .trim_start_matches("printf %s| ")
                        .replace('@', v)
                        + "|";
                    assert_eq!(
                        run_sh(shell, &code).unwrap(),
                        want,
                        "{shell}: {script} with {v:?} became {code}"
                    );
                }
            }
        }
    }

    #[test]
    fn unsafe_places_are_refused_and_other_arguments_are_left_alone() {
        assert!(expand_shell("echo \\{run_dir}", &values("/x")).is_err());
        assert!(expand_shell("echo $'{run_dir}'", &values("/x")).is_err());
        let a = expand_argv(
            &argv(&["bash", "-c", "cd {run_dir}", "{run_dir}"]),
            &values("/a b"),
        )
        .unwrap();
        assert_eq!(a, ["bash", "-c", "cd '/a b'", "/a b"]);
    }
}
