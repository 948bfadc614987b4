//! The documentation's examples cannot go stale: in README.md and in every page of the user
//! guide (`docs/src/**/*.md`), every ```sh block followed at once by a plain ``` block (the
//! command's output) is run here and its output compared, line for line.
//!
//! Such a `sh` block holds one `autolb ...` command (`\` continues a line); it runs in the
//! repository root. To regenerate an example, run its command there and paste the output.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `(line number, command, expected output)` of every example with output in `text`.
pub(crate) fn examples(text: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim_end() != "```" {
            end += 1;
        }
        // The output block must open on the very next line, without a language.
        if lines.get(end + 1).map(|l| l.trim_end()) == Some("```") {
            let command = lines[start..end]
                .iter()
                .map(|l| l.trim_end().trim_end_matches('\\').trim())
                .collect::<Vec<_>>()
                .join(" ");
            let mut o = end + 2;
            let mut expected = Vec::new();
            while o < lines.len() && lines[o].trim_end() != "```" {
                expected.push(lines[o]);
                o += 1;
            }
            out.push((start, command, expected.join("\n")));
            i = o + 1;
        } else {
            i = end + 1;
        }
    }
    out
}

pub(crate) fn normalise(s: &str) -> String {
    s.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// README.md, then every Markdown page under `docs/src`, in path order.
pub(crate) fn documentation_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs/src"), &mut files);
    files
}

/// Runs one example; `None` when it printed what the page says, else why not.
fn check(root: &Path, command: &str, expected: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.first() != Some(&"autolb") {
        return Some(format!(
            "an example with output runs one autolb command: {command}"
        ));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_autolb"))
        .args(&words[1..])
        .current_dir(root)
        .output()
        .unwrap();
    if !out.status.success() {
        return Some(format!(
            "`{command}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    let got = normalise(&String::from_utf8_lossy(&out.stdout));
    if got != normalise(expected) {
        return Some(format!(
            "`{command}` prints something else now; paste its output:\n{got}"
        ));
    }
    None
}

#[test]
fn every_documented_example_with_output_prints_that_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = 0;
    let mut failures = Vec::new();
    for file in documentation_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (line, command, expected) in examples(&text) {
            found += 1;
            if let Some(why) = check(root, &command, &expected) {
                failures.push(format!("{name} line {line}: {why}"));
            }
        }
    }
    assert!(found > 0, "no example with output found: the parser broke");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_guide_is_searched_as_well_as_the_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = documentation_files(root);
    assert_eq!(files[0], root.join("README.md"));
    assert!(
        files.iter().any(|f| f.starts_with(root.join("docs/src"))),
        "no page of the user guide found under docs/src"
    );
}

#[test]
fn the_parser_finds_commands_and_their_output_only() {
    let text = "x\n```sh\nautolb a \\\n  --b 1\n```\n```\nout 1\nout 2\n```\n```sh\nautolb c\n```\n\ntext\n```\nnot output\n```\n";
    let found = examples(text);
    assert_eq!(
        found,
        vec![(2, "autolb a --b 1".to_string(), "out 1\nout 2".to_string())]
    );
}
