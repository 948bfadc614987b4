//! Finding the shell script in a command template through the programs that wrap a shell
//! (`env FOO=1 bash -c ...`, `timeout 3600 bash --norc -c ...`, `srun -n 4 bash -c ...`), so
//! that its placeholders are quoted for the shell ([`super::template`]); and refusing a
//! template where a shell may get a script with a placeholder at a place autolb cannot prove
//! it knows (an unknown wrapper, an option it does not know, a second shell): there a value
//! such as a campaign directory named `x$(touch PWNED)` would be shell code. The environment
//! variables (`"$AUTOLB_RUN_DIR"`, see [`crate::executor::env`]) are always safe.
//!
//! Each known wrapper's options are parsed as its manual says: which take a value (`nice -n
//! N`, `timeout -k DURATION`, `env -u NAME`), which words are not the program (`env`'s
//! `VAR=value`, `timeout`'s DURATION). An option it does not know makes the wrapper unknown.

/// Programs whose `-c` argument is shell code that we know how to quote for.
pub const SHELLS: &[&str] = &["sh", "bash", "dash", "ksh", "mksh", "ash", "zsh"];

/// Launchers of parallel jobs: their options are many and version-specific, so a word after
/// one of their options is taken as its value unless it is a shell.
const LAUNCHERS: &[&str] = &["srun", "mpirun", "mpiexec", "orterun", "aprun"];

/// The program name of a template word (`/usr/bin/env` -> `env`).
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_shell(word: &str) -> bool {
    SHELLS.contains(&base(word))
}

/// Where the wrapped program starts, for the wrapper at `k`; `None` when the wrapper or one
/// of its options is unknown (then nothing after it is known).
fn wrapped_program(argv: &[String], k: usize) -> Option<usize> {
    let name = base(&argv[k]);
    let opts = |flags: &[&str], valued: &[&str]| skip_options(argv, k + 1, flags, valued);
    match name {
        "env" => {
            let mut j = opts(
                &[
                    "-i",
                    "-",
                    "--ignore-environment",
                    "-0",
                    "--null",
                    "-v",
                    "--debug",
                ],
                &["-u", "--unset", "-C", "--chdir"],
            )?;
            // `VAR=value` words set variables; the program is the first word without `=`.
            while argv
                .get(j)
                .is_some_and(|w| w.contains('=') && !w.starts_with('-'))
            {
                j += 1;
            }
            Some(j)
        }
        "nice" => {
            // `-N` (old form) is an adjustment too.
            let numeric = |w: &str| {
                w.strip_prefix('-')
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            };
            let mut j = k + 1;
            if argv.get(j).is_some_and(|w| numeric(w)) {
                j += 1;
            }
            skip_options(argv, j, &[], &["-n", "--adjustment"])
        }
        "timeout" => {
            let j = opts(
                &["--preserve-status", "--foreground", "-v", "--verbose"],
                &["-s", "--signal", "-k", "--kill-after"],
            )?;
            // The DURATION, then the program.
            argv.get(j).map(|_| j + 1)
        }
        "nohup" => opts(&[], &[]),
        "setsid" => opts(&["-c", "--ctty", "-f", "--fork", "-w", "--wait"], &[]),
        "stdbuf" => opts(&[], &["-i", "--input", "-o", "--output", "-e", "--error"]),
        "time" => opts(
            &[
                "-p",
                "--portability",
                "-v",
                "--verbose",
                "-a",
                "--append",
                "-q",
                "--quiet",
            ],
            &["-f", "--format", "-o", "--output"],
        ),
        // `command -v`/`-V` only looks the program up: it runs nothing, so it is not known.
        "command" => opts(&["-p"], &[]),
        "exec" => opts(&["-c", "-l"], &["-a"]),
        n if LAUNCHERS.contains(&n) => launcher_program(argv, k + 1),
        _ => None,
    }
}

/// Skips the options of a wrapper from `j`: `flags` take no value, `valued` take one (`-n 5`,
/// `-n5`, `--adjustment=5`, `--adjustment 5`); `--` ends them. Returns where the options end,
/// `None` at an option not in either list.
fn skip_options(argv: &[String], mut j: usize, flags: &[&str], valued: &[&str]) -> Option<usize> {
    while let Some(w) = argv.get(j) {
        if w == "--" {
            return Some(j + 1);
        }
        if flags.contains(&w.as_str()) {
            j += 1;
        } else if !w.starts_with('-') || w == "-" {
            return Some(j);
        } else if valued.contains(&w.as_str()) {
            j += 2;
        } else if valued.iter().any(|v| {
            // `--name=value`, or a short option with its value attached (`-oL`).
            w.strip_prefix(v).is_some_and(|rest| {
                (v.starts_with("--") && rest.starts_with('='))
                    || (!v.starts_with("--") && !rest.is_empty())
            })
        }) {
            j += 1;
        } else {
            return None;
        }
    }
    Some(j)
}

/// The program of `srun`/`mpirun`-like launchers: options are skipped, a word after an option
/// without `=` is taken as its value unless it is a shell.
fn launcher_program(argv: &[String], mut j: usize) -> Option<usize> {
    while let Some(w) = argv.get(j) {
        if w == "--" {
            return Some(j + 1);
        }
        if !w.starts_with('-') {
            return Some(j);
        }
        j += 1;
        let takes_value = !w.contains('=');
        if takes_value
            && argv
                .get(j)
                .is_some_and(|v| !v.starts_with('-') && !is_shell(v))
        {
            j += 1;
        }
    }
    Some(j)
}

/// The index of the script argument of the shell at `s`, when it has `-c`. Short option
/// clusters (`-ec`, `+x`), `-o NAME`/`-O NAME` and long options (`--norc`, `--noprofile`,
/// `--login`, `--rcfile FILE`) are skipped.
fn script_of_shell(argv: &[String], s: usize) -> Option<usize> {
    let mut seen_c = false;
    let mut k = s + 1;
    while let Some(arg) = argv.get(k) {
        if arg == "--" {
            return seen_c.then_some(k + 1).filter(|&i| i < argv.len());
        }
        if let Some(long) = arg.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                k += 1;
            }
            k += 1;
            continue;
        }
        let is_cluster = (arg.starts_with('-') || arg.starts_with('+'))
            && arg.len() > 1
            && arg[1..].chars().all(|c| c.is_ascii_alphabetic());
        if !is_cluster {
            return seen_c.then_some(k);
        }
        seen_c |= arg[1..].contains('c');
        // Each `o`/`O` takes the next argument (an option name).
        k += 1 + arg[1..].chars().filter(|&c| c == 'o' || c == 'O').count();
    }
    None
}

/// Whether a template word holds a placeholder (`{name}`; `{{` is a literal brace).
fn has_placeholder(word: &str) -> bool {
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '{' {
            if chars.peek() == Some(&'{') {
                chars.next();
            } else {
                return true;
            }
        }
    }
    false
}

/// The index of the shell script in `template` (through the known wrappers), `None` when no
/// shell gets one; an error when a shell may get a script holding a placeholder at a place not
/// proven to be that script.
pub fn shell_script_index(template: &[String]) -> Result<Option<usize>, String> {
    // Follow the wrappers to the program.
    let mut k = 0;
    let mut proven: Option<(usize, usize)> = None;
    let mut unknown: Option<usize> = None;
    while k < template.len() {
        if is_shell(&template[k]) {
            proven = script_of_shell(template, k).map(|script| (k, script));
            break;
        }
        match wrapped_program(template, k) {
            Some(next) if next > k => k = next,
            _ => {
                unknown = Some(k);
                break;
            }
        }
    }
    // Any other shell word followed by a `-c` option could be handed a script the walk above
    // did not prove: refuse placeholders after it.
    for j in 0..template.len() {
        if proven.is_some_and(|(shell, _)| shell == j) || !is_shell(&template[j]) {
            continue;
        }
        let has_c = template[j + 1..].iter().any(|w| {
            w.starts_with('-')
                && !w.starts_with("--")
                && w.len() > 1
                && w[1..].chars().all(|c| c.is_ascii_alphabetic())
                && w.contains('c')
        });
        let placeholder_after = template[j + 1..]
            .iter()
            .enumerate()
            .any(|(d, w)| proven.map(|(_, s)| s) != Some(j + 1 + d) && has_placeholder(w));
        if has_c && placeholder_after {
            let through = match unknown {
                Some(u) if u < j => {
                    format!("through `{}`, which autolb cannot see through", template[u])
                }
                _ => "at a place autolb cannot prove is its script".to_string(),
            };
            return Err(format!(
                "`{}` gets a `-c` script {through}, so a placeholder after it may reach the shell unquoted; use the environment variables instead (\"$AUTOLB_RUN_DIR\", \"$AUTOLB_NPROC_<NAME>\", \"$AUTOLB_RUN\", ...; see the environment reference)",
                template[j]
            ));
        }
    }
    Ok(proven.map(|(_, script)| script))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &str) -> Vec<String> {
        a.split(' ').map(str::to_string).collect()
    }

    fn script(a: &str) -> Option<usize> {
        shell_script_index(&argv(a)).unwrap()
    }

    #[test]
    fn the_script_is_found_through_every_known_wrapper() {
        for (template, at) in [
            ("bash -c S", 2),
            ("/bin/sh -ec S", 2),
            ("bash -o pipefail -c S a0", 4),
            ("bash --norc --noprofile -c S", 4),
            ("bash --rcfile F -c S", 4),
            ("bash -eo pipefail -c S", 4),
            ("zsh -c -- S", 3),
            ("env bash -c S", 3),
            ("/usr/bin/env bash -c S", 3),
            ("env -i -u HOME A=1 B=2 bash -c S", 8),
            ("env --unset=HOME -- bash -c S", 5),
            ("nice bash -c S", 3),
            ("nice -n 5 bash -c S", 5),
            ("nice -5 bash -c S", 4),
            ("nice --adjustment=5 bash -c S", 4),
            ("timeout 3600 bash -c S", 4),
            ("timeout -k 10 -s TERM --preserve-status 1h bash -c S", 9),
            ("timeout --kill-after=10 1h bash -c S", 5),
            ("nohup bash -c S", 3),
            ("setsid -w bash -c S", 4),
            ("stdbuf -oL -e 0 bash -c S", 6),
            ("stdbuf --output=L bash -c S", 4),
            ("time -p bash -c S", 4),
            ("time -f %e -o t.txt bash -c S", 7),
            ("command -p bash -c S", 4),
            ("exec -a name bash -c S", 5),
            ("srun -n 4 --exclusive bash -c S", 6),
            ("srun --ntasks=4 bash -c S", 4),
            ("mpirun -np 4 bash -c S", 5),
            (
                "nohup env A=1 timeout 60 nice -n 2 /bin/bash --norc -c S",
                11,
            ),
        ] {
            assert_eq!(script(template), Some(at), "{template}");
        }
    }

    #[test]
    fn no_shell_or_a_script_file_has_no_script() {
        assert_eq!(script("python3 -c x"), None);
        assert_eq!(script("sh -e x"), None);
        assert_eq!(script("bash script.sh -c"), None);
        assert_eq!(script("./model.exe {run_dir}"), None);
        assert_eq!(script("env A=1 ./model.exe {run_dir}"), None);
    }

    #[test]
    fn a_shell_autolb_cannot_prove_it_knows_is_refused_with_a_placeholder() {
        for template in [
            "./launch.sh bash -c {run_dir}",
            "sudo -u me bash -c {run_dir}",
            "env -S bash -c {run_dir}",
            "nice --weird bash -c {run_dir}",
            "command -v bash -c {run_dir}",
            "mpirun -np 2 bash -c A : -np 3 bash -c {run_dir}",
        ] {
            let e = shell_script_index(&argv(template)).unwrap_err();
            assert!(e.contains("AUTOLB_RUN_DIR"), "{template}: {e}");
        }
        let e = shell_script_index(&argv("./launch.sh bash -c {run_dir}")).unwrap_err();
        assert!(e.contains("through `./launch.sh`"), "{e}");
        // Without a placeholder after the shell, nothing can reach it: accepted.
        assert_eq!(script("./launch.sh bash -c ./run.sh"), None);
        assert_eq!(script("sudo bash -c {{x}}"), None);
        // The environment variables are always fine.
        assert_eq!(script("./launch.sh bash -c $AUTOLB_RUN_DIR"), None);
    }
}
