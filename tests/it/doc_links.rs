//! The README and the user guide (`docs/`, an mdBook) cannot drift from the repository:
//! - every relative link in README.md and `docs/src/**/*.md` points at a file that exists, and
//!   an `#anchor` on a Markdown page at one of its headings;
//! - every entry of `docs/src/SUMMARY.md` exists, and every page under `docs/src` is in it;
//! - a text picture of the app marked `<!-- screen: SNAPSHOT -->` is exactly the screen that
//!   insta snapshot holds (`cargo test --bin autolb tui::screen_tests` keeps the snapshot true);
//!   the README shows the app's PNG picture, which `tui::picture_tests` and `pictures` keep true;
//! - (the key page `docs/src/app/keys.md` is generated from the key table; the binary's `keys_page` test keeps it so).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown page under `docs/src`, in path order.
fn guide_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out
}

fn documentation_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    files.extend(guide_pages());
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn name(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The text's lines outside fenced code blocks, with inline code spans blanked, as
/// `(line number, line)`.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                kept.push(c);
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// Targets of the inline links and images (`[text](target)`) of the text, as `(line, target)`.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// The anchor GitHub and mdBook give a heading: lower case, spaces to `-`, and only letters,
/// digits, `-` and `_` kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Anchors of every heading of a Markdown text (a repeated heading gets `-1`, `-2`, ...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines_keeping_code(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(&heading.replace('`', ""));
        let mut anchor = base.clone();
        let mut k = 1;
        while seen.contains(&anchor) {
            anchor = format!("{base}-{k}");
            k += 1;
        }
        seen.insert(anchor);
    }
    seen
}

/// Lines outside fenced code blocks, inline code kept (headings keep their code spans' text).
fn prose_lines_keeping_code(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line.to_string()));
        }
    }
    out
}

/// Why a link's target does not resolve, if it does not.
fn broken(file: &Path, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".into());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap().join(path)
    };
    if !resolved.exists() {
        return Some(format!("{} does not exist", name(&resolved)));
    }
    if let Some(anchor) = anchor {
        if resolved.extension().is_some_and(|e| e == "md")
            && !anchors(&read(&resolved)).contains(anchor)
        {
            return Some(format!("{} has no heading #{anchor}", name(&resolved)));
        }
    }
    None
}

#[test]
fn every_relative_link_resolves() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in documentation_files() {
        for (line, target) in links(&read(&file)) {
            count += 1;
            if let Some(why) = broken(&file, &target) {
                failures.push(format!("{} line {line}: ({target}): {why}", name(&file)));
            }
        }
    }
    assert!(count > 0, "no link found: the parser broke");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The pages `SUMMARY.md` lists, relative to `docs/src`, as `(line, path)`.
fn summary_entries() -> Vec<(usize, String)> {
    let summary = root().join("docs/src/SUMMARY.md");
    links(&read(&summary))
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(n, t)| (n, t.split('#').next().unwrap().to_string()))
        .collect()
}

#[test]
fn every_summary_entry_exists_and_every_page_is_in_the_summary() {
    let src = root().join("docs/src");
    let entries = summary_entries();
    assert!(entries.len() > 5, "SUMMARY.md lists almost nothing");
    for (line, entry) in &entries {
        assert!(
            src.join(entry).is_file(),
            "docs/src/SUMMARY.md line {line}: {entry} does not exist"
        );
    }
    let listed: BTreeSet<PathBuf> = entries.iter().map(|(_, e)| src.join(e)).collect();
    for page in guide_pages() {
        if page == src.join("SUMMARY.md") {
            continue;
        }
        assert!(
            listed.contains(&page),
            "{} is not in docs/src/SUMMARY.md: list it there, or mdBook will not show it",
            name(&page)
        );
    }
}

#[test]
fn book_toml_points_at_the_pages() {
    let book = read(&root().join("docs/book.toml"));
    assert!(
        book.contains("[book]"),
        "docs/book.toml has no [book] table"
    );
    assert!(
        !book.contains("src =") || book.contains("src = \"src\""),
        "docs/book.toml must keep the pages in docs/src"
    );
}

/// The screen an insta snapshot holds: everything after its `---` header.
fn snapshot_screen(path: &Path) -> String {
    let text = read(path);
    let body = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("{}: no insta header", name(path)));
    body.trim_end_matches('\n').to_string()
}

/// Every `<!-- screen: PATH -->` marker of the text with the fenced block after it, as
/// `(line, snapshot path, block)`.
fn screens(text: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(path) = line
            .trim()
            .strip_prefix("<!-- screen:")
            .and_then(|r| r.strip_suffix("-->"))
        else {
            continue;
        };
        let open = i + 1;
        assert!(
            lines.get(open).is_some_and(|l| l.starts_with("```")),
            "line {}: a screen marker must be followed at once by a fenced block",
            i + 1
        );
        let block: Vec<&str> = lines[open + 1..]
            .iter()
            .take_while(|l| !l.starts_with("```"))
            .copied()
            .collect();
        out.push((i + 1, path.trim().to_string(), block.join("\n")));
    }
    out
}

#[test]
fn the_pictures_of_the_app_are_its_snapshots() {
    let readme = read(&root().join("README.md"));
    assert!(
        links(&readme)
            .iter()
            .any(|(_, target)| target == "docs/src/images/watch-80x24.png"),
        "README.md lost its picture of the app (![...](docs/src/images/watch-80x24.png))"
    );
    let overview = read(&root().join("docs/src/app/overview.md"));
    assert!(
        screens(&overview)
            .iter()
            .any(|(_, p, _)| p.ends_with("screen_tests__watch_80x24.snap")),
        "docs/src/app/overview.md lost its text picture of the app \
         (<!-- screen: ...watch_80x24.snap -->)"
    );
    for file in documentation_files() {
        for (line, snapshot, block) in screens(&read(&file)) {
            let expected = snapshot_screen(&root().join(&snapshot));
            assert!(
                block == expected,
                "{} line {line}: the picture differs from {snapshot}; paste the snapshot's \
                 screen (after its --- header):\n{expected}",
                name(&file)
            );
        }
    }
}

#[test]
fn the_link_checker_sees_links_anchors_and_code() {
    let text = "# The `autolb` tool\n[a](x.md#the-autolb-tool) `[no](link)`\n```\n[no](link)\n```\n![img](p.png)\n## The tool\n## The tool\n";
    assert_eq!(
        links(text),
        vec![
            (2, "x.md#the-autolb-tool".to_string()),
            (6, "p.png".to_string())
        ]
    );
    let a = anchors(text);
    assert!(a.contains("the-autolb-tool") && a.contains("the-tool") && a.contains("the-tool-1"));
    assert_eq!(
        slug("Exit codes (every command)"),
        "exit-codes-every-command"
    );
}
