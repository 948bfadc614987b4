//! The README's examples cannot go stale: every ```sh block followed at once by a plain ```
//! block (the command's output) is run here and its output compared, line for line.
//!
//! Such a `sh` block holds one `autolb ...` command (`\` continues a line); it runs in the
//! repository root. To regenerate an example, run its command and paste the output.

use std::path::Path;

use crate::common::autolb;

/// `(line number, command, expected output)` of every example with output in `text`.
fn examples(text: &str) -> Vec<(usize, String, String)> {
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

fn normalise(s: &str) -> String {
    s.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

#[test]
fn every_readme_example_with_output_prints_that_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let found = examples(&readme);
    assert!(
        !found.is_empty(),
        "no example with output found: the parser broke"
    );
    for (line, command, expected) in found {
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(
            words.first(),
            Some(&"autolb"),
            "README.md line {line}: an example with output runs one autolb command: {command}"
        );
        let out = autolb()
            .args(&words[1..])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README.md line {line}: {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = normalise(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(
            got,
            normalise(&expected),
            "README.md line {line}: `{command}` prints something else now; paste its output"
        );
    }
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
