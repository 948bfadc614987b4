//! `autolb example`, `autolb completions` and `autolb man`: what an installed binary, with no
//! repository beside it, brings along. The written example files are the repository's byte
//! for byte, and the guide's examples run from the directory they were written to.

use std::path::{Path, PathBuf};

use crate::common::autolb;
use crate::readme_examples::{documentation_files, examples, normalise};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir`, as paths relative to it, sorted.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// `autolb example --out DIR` into a fresh temporary directory.
fn written_example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ex");
    let stdout = autolb().args(["example", "--out"]).arg(&dir).stdout_ok();
    assert!(
        stdout.contains(&format!(
            "wrote {}",
            dir.join("assets/demo-campaign.toml").display()
        )),
        "{stdout}"
    );
    (tmp, dir)
}

#[test]
fn the_written_files_are_the_repositorys_assets_byte_for_byte() {
    let (_tmp, dir) = written_example();
    let written = files_below(&dir.join("assets"));
    let in_repository: Vec<PathBuf> = files_below(&repository().join("assets"))
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "png"))
        .collect();
    assert_eq!(written, in_repository);
    for path in &written {
        assert_eq!(
            std::fs::read(dir.join("assets").join(path)).unwrap(),
            std::fs::read(repository().join("assets").join(path)).unwrap(),
            "{}",
            path.display()
        );
    }
    let script = dir.join("assets/autosubmit/local/run-local.sh");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(script).unwrap().permissions());
    assert_eq!(mode & 0o111, 0o111, "scripts stay executable");
}

#[test]
fn the_demo_campaign_predicts_from_the_written_directory_as_from_the_repository() {
    let (_tmp, dir) = written_example();
    let args = ["predict", "--config", "assets/demo-campaign.toml"];
    let there = autolb().args(args).current_dir(&dir).stdout_ok();
    let here = autolb().args(args).current_dir(repository()).stdout_ok();
    assert!(there.contains("feasible configurations"), "{there}");
    assert_eq!(there, here);
}

#[test]
fn a_campaign_from_the_written_example_file_runs_to_the_end() {
    let (_tmp, dir) = written_example();
    autolb()
        .args([
            "campaign",
            "init",
            "demo",
            "--config",
            "assets/demo-campaign.toml",
        ])
        .current_dir(&dir)
        .assert()
        .success();
    autolb()
        .args(["campaign", "run", "demo"])
        .current_dir(&dir)
        .assert()
        .success();
    let status = autolb()
        .args(["campaign", "status", "demo", "--json"])
        .current_dir(&dir)
        .stdout_ok();
    assert!(status.contains("\"done\""), "{status}");
}

#[test]
fn every_documented_example_that_names_assets_prints_the_same_from_the_written_directory() {
    let (_tmp, dir) = written_example();
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in documentation_files(repository()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, command, expected) in examples(&text) {
            // The examples that read the repository's test fixtures need a clone.
            if !command.contains("assets/") || command.contains("tests/") {
                continue;
            }
            checked += 1;
            let words: Vec<&str> = command.split_whitespace().collect();
            let out = autolb()
                .args(&words[1..])
                .current_dir(&dir)
                .output()
                .unwrap();
            let got = normalise(&String::from_utf8_lossy(&out.stdout));
            if !out.status.success() || got != normalise(&expected) {
                failures.push(format!(
                    "{} line {line}: `{command}` from an `autolb example` directory: {}{got}",
                    file.display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(checked > 0, "no documented example names assets/");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every `autolb ...` command in a ```sh block of `text` (`\` continues a line, `#` starts a
/// comment), with its line number.
fn documented_commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if !in_sh {
            in_sh = line == "```sh";
            continue;
        }
        if line == "```" {
            in_sh = false;
            continue;
        }
        let code = line.split(" #").next().unwrap_or("").trim();
        let (continues, code) = match code.strip_suffix('\\') {
            Some(head) => (true, head.trim()),
            None => (false, code),
        };
        let (start, mut command) = pending.take().unwrap_or((i + 1, String::new()));
        if !command.is_empty() {
            command.push(' ');
        }
        command.push_str(code);
        if continues {
            pending = Some((start, command));
        } else if command.starts_with("autolb ") {
            out.push((start, command));
        }
    }
    out
}

#[test]
fn every_documented_command_that_names_assets_succeeds_from_the_written_directory() {
    let (_tmp, dir) = written_example();
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for file in documentation_files(repository()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, command) in documented_commands(&text) {
            if !command.contains("assets/") || command.contains("tests/") {
                continue;
            }
            let words: Vec<&str> = command.split_whitespace().collect();
            let out = autolb()
                .args(&words[1..])
                .current_dir(&dir)
                .output()
                .unwrap();
            if !out.status.success() {
                failures.push(format!(
                    "{} line {line}: `{command}` failed from an `autolb example` directory: {}",
                    file.display(),
                    String::from_utf8_lossy(&out.stderr).trim_end()
                ));
            }
            ran.push(command);
        }
    }
    // The guide's campaign examples are among them, not only the predictions.
    for needle in [
        "campaign init",
        "assets/slurm/campaign.toml",
        "report --config",
    ] {
        assert!(
            ran.iter().any(|c| c.contains(needle)),
            "no documented command with {needle:?} found: {ran:#?}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn documented_commands_are_read_across_continuations_without_comments() {
    let text = "```sh\nautolb a --x assets/f  # note\nautolb b \\\n  --y 1\ncargo test\n```\n\
                ```toml\nautolb = 1\n```\n";
    assert_eq!(
        documented_commands(text),
        vec![
            (2, "autolb a --x assets/f".to_string()),
            (3, "autolb b --y 1".to_string())
        ]
    );
}

#[test]
fn a_second_run_refuses_to_overwrite_and_names_the_file_until_forced() {
    let (_tmp, dir) = written_example();
    let edited = dir.join("assets/demo-campaign.toml");
    std::fs::write(&edited, "# mine\n").unwrap();
    let out = autolb()
        .args(["example", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert!(
        stderr.contains(&dir.join("assets").display().to_string()),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "# mine\n");

    autolb()
        .args(["example", "--force", "--out"])
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&edited).unwrap(),
        std::fs::read(repository().join("assets/demo-campaign.toml")).unwrap()
    );
}

#[test]
fn a_directory_that_cannot_be_made_is_one_line_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = autolb()
        .args(["example", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
}

#[test]
fn bash_completion_knows_the_commands_and_their_flags() {
    let script = autolb().args(["completions", "bash"]).stdout_ok();
    assert!(script.contains("complete -F _autolb"), "{}", &script[..200]);
    for word in [
        "campaign",
        "predict",
        "example",
        "--config",
        "--demo-compression",
    ] {
        assert!(script.contains(word), "{word} not in the bash completion");
    }
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_refused() {
    for (shell, marker) in [
        ("zsh", "#compdef autolb"),
        ("fish", "complete -c autolb"),
        ("elvish", "edit:completion:arg-completer[autolb]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = autolb().args(["completions", shell]).stdout_ok();
        assert!(script.contains(marker), "{shell}: {marker} missing");
        assert!(script.contains("predict"), "{shell}");
    }
    let out = autolb().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

#[test]
fn the_man_page_is_roff_and_names_every_subcommand() {
    let page = autolb().arg("man").stdout_ok();
    // After roff's definition of the quote string (`.ie`/`.el`), the page opens with its title.
    let first = page
        .lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "));
    assert!(
        first.is_some_and(|l| l.starts_with(".TH autolb 1")),
        "{}",
        &page[..300]
    );
    for sub in [
        "predict",
        "timing",
        "campaign",
        "report",
        "model",
        "simulate",
        "tui",
        "example",
        "completions",
        "man",
    ] {
        assert!(
            page.contains(&format!("autolb\\-{sub}(1)")),
            "autolb-{sub}(1) not in the man page"
        );
    }
    assert!(
        !page.contains("autolb\\-help(1)"),
        "no page is written for help"
    );
}

#[test]
fn man_out_writes_a_page_per_command_that_the_parent_pages_name() {
    let tmp = tempfile::tempdir().unwrap();
    let stdout = autolb().args(["man", "--out"]).arg(tmp.path()).stdout_ok();
    let pages = files_below(tmp.path());
    let names: Vec<String> = pages.iter().map(|p| p.display().to_string()).collect();
    for expected in [
        "autolb.1",
        "autolb-campaign.1",
        "autolb-campaign-init.1",
        "autolb-model-fit.1",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
        assert!(stdout.contains(expected), "{stdout}");
    }
    assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    let campaign = std::fs::read_to_string(tmp.path().join("autolb-campaign.1")).unwrap();
    assert!(
        campaign.contains("autolb\\-campaign\\-init(1)"),
        "{campaign}"
    );
    let init = std::fs::read_to_string(tmp.path().join("autolb-campaign-init.1")).unwrap();
    assert!(init.contains("\\-\\-config"), "{init}");
}

/// Whether `program` runs here (`program --version` succeeds).
fn available(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bash_completes_a_subcommand_and_a_flag_with_the_generated_script() {
    if !available("bash") {
        eprintln!("no bash here; skipped");
        return;
    }
    let script = autolb().args(["completions", "bash"]).stdout_ok();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("autolb.bash");
    std::fs::write(&file, script).unwrap();
    // What bash does on a Tab: set the words and the cursor's word, then call the function.
    let complete = |words: &str, current: usize| {
        let program = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={current}; \
             _autolb autolb \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; \
             echo \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(complete("autolb camp", 1), "campaign");
    assert_eq!(complete("autolb campaign init x --con", 4), "--config");
    assert_eq!(complete("autolb exa", 1), "example");
}

#[test]
fn every_man_page_renders_without_a_warning() {
    if !available("man") {
        eprintln!("no man here; skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    autolb()
        .args(["man", "--out"])
        .arg(tmp.path())
        .assert()
        .success();
    for page in files_below(tmp.path()) {
        let out = std::process::Command::new("man")
            .args(["--warnings", "-l"])
            .arg(tmp.path().join(&page))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", page.display());
        assert!(stderr.trim().is_empty(), "{}: {stderr}", page.display());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("SYNOPSIS"), "{}: {text}", page.display());
    }
}
