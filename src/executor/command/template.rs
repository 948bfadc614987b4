//! The command template: a list (program and arguments) with placeholders, run without a
//! shell.
//!
//! Placeholders are the numbers of a run: `{nproc.NAME}` (MPI ranks), `{threads.NAME}`
//! (OpenMP threads per rank), `{cores.NAME}` (ranks x threads), `{total_nproc}`,
//! `{iteration}`, `{test}`, `{repetition}`, and in a standalone run of a scaling campaign
//! `{nproc}` (the one component's ranks); `{{` and `}}` are literal braces. Each is written as
//! plain digits, which mean the same in any argument, a shell's script included. Text values
//! (the run directory, the run id, the component) are not placeholders but environment
//! variables the program expands (`"$AUTOLB_RUN_DIR"`, see [`crate::executor::env`]): a
//! template naming `{run_dir}`, `{run}` or `{component}` is refused with the variable to write,
//! in every argument, since an argument given to a program may become shell code in it (`bash
//! -c`, `ssh`, `sh` behind a launcher) whatever autolb can see.

use std::collections::HashMap;

use crate::executor::env::text_placeholder_refusal;
use crate::executor::RunRequest;

/// The value of every placeholder for one run: its numbers.
pub fn placeholder_values(run: &RunRequest) -> HashMap<String, u64> {
    let mut v = HashMap::new();
    v.insert("total_nproc".to_string(), run.total_nproc().into());
    v.insert("iteration".to_string(), run.iteration.into());
    v.insert("test".to_string(), run.test.into());
    v.insert("repetition".to_string(), run.repetition.into());
    // A hybrid component's `nproc` is its MPI ranks, what a launcher starts; its cores are
    // ranks x threads.
    for (k, (name, p)) in run.nproc.iter().enumerate() {
        v.insert(format!("nproc.{name}"), run.ranks_of(k).into());
        v.insert(format!("threads.{name}"), run.threads_of(k).into());
        v.insert(format!("cores.{name}"), (*p).into());
    }
    // A standalone run: the PEs of the component it measures.
    if let Some(component) = &run.component {
        if let Some(k) = run.nproc.iter().position(|(name, _)| name == component) {
            v.insert("nproc".to_string(), run.ranks_of(k).into());
        }
    }
    v
}

/// Fills every argument of `template`; errors name the argument as `{what}[k]`.
pub fn expand_argv(
    template: &[String],
    values: &HashMap<String, u64>,
    what: &str,
) -> Result<Vec<String>, String> {
    template
        .iter()
        .enumerate()
        .map(|(k, arg)| expand(arg, values, &format!("{what}[{k}]")))
        .collect()
}

/// Fills `{name}` placeholders; `{{` / `}}` are literal braces. Unknown names, and the text
/// placeholders, are errors naming `place`.
pub fn expand(
    template: &str,
    values: &HashMap<String, u64>,
    place: &str,
) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' if chars.peek() == Some(&c) => {
                chars.next();
                out.push(c);
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err(format!(
                                "{place}: unclosed placeholder {{{name}; write {{{{ for a literal brace"
                            ))
                        }
                    }
                }
                if let Some(refusal) = text_placeholder_refusal(place, &name) {
                    return Err(refusal);
                }
                match values.get(&name) {
                    Some(v) => out.push_str(&v.to_string()),
                    None => {
                        let mut known: Vec<String> =
                            values.keys().map(|k| format!("{{{k}}}")).collect();
                        known.sort_unstable();
                        return Err(format!(
                            "{place}: unknown placeholder {{{name}}}; known: {}",
                            known.join(", ")
                        ));
                    }
                }
            }
            '}' => {
                return Err(format!(
                    "{place}: a lone }}; write }}}} for a literal brace"
                ))
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunRequest {
        RunRequest {
            component: None,
            id: "i00-t00-r1".into(),
            iteration: 0,
            test: 0,
            repetition: 1,
            nproc: vec![("oifs".into(), 256), ("nemo".into(), 200)],
            threads: vec![4, 1],
            extra_pes: 8,
            run_dir: std::path::PathBuf::from("/c/run"),
        }
    }

    #[test]
    fn a_hybrid_component_has_ranks_threads_and_cores() {
        let values = placeholder_values(&run());
        assert_eq!(values["nproc.oifs"], 64);
        assert_eq!(values["threads.oifs"], 4);
        assert_eq!(values["cores.oifs"], 256);
        assert_eq!(values["nproc.nemo"], 200);
        assert_eq!(values["threads.nemo"], 1);
        assert_eq!(values["cores.nemo"], 200);
        assert_eq!(values["total_nproc"], 464);
    }

    #[test]
    fn numbers_are_digits_and_text_placeholders_are_refused() {
        let values = placeholder_values(&run());
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            expand_argv(
                &argv(&["bash", "-c", "echo $(( {nproc.oifs} / 2 )) {{x}}"]),
                &values,
                "cmd"
            )
            .unwrap(),
            ["bash", "-c", "echo $(( 64 / 2 )) {x}"]
        );
        for text in ["{run_dir}", "x{run}y", "{component}"] {
            let e = expand_argv(&argv(&["a", text]), &values, "cmd").unwrap_err();
            assert!(
                e.starts_with("cmd[1]: {") && e.contains("\"$AUTOLB_"),
                "{e}"
            );
        }
        let e = expand("{nproc.FESOM}", &values, "cmd[0]").unwrap_err();
        assert!(e.contains("{nproc.oifs}") && e.starts_with("cmd[0]"), "{e}");
        assert!(expand("{nproc.oifs", &values, "c").is_err());
        assert!(expand("a}b", &values, "c").is_err());
    }
}
