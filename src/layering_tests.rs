//! Keeps the layers that `src/lib.rs`'s docs describe: every `crate::`, `super::` and `self::`
//! path in `src/` is read, each file is mapped to its module and layer, and the test fails when
//! a module reaches a higher layer, or when two sibling modules of one parent import each other.
//! The binary's files (`main.rs`, `cli/`, `shared/`, `tui/`) are a crate of their own: there
//! `crate::` means the binary's modules, and the library (`autolb::`) is always allowed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The library's top-level modules from the bottom layer up: a module may import only from
/// modules before it (or itself). The layer names are the ones the crate docs use.
const LIBRARY_LAYERS: &[(&str, &[&str])] = &[
    ("base", &["limits", "fsutil"]),
    (
        "core",
        &[
            "metrics", "curve", "interp", "machine", "layout", "timing", "model", "predict",
        ],
    ),
    (
        "services",
        &[
            "example", "sim", "executor", "config", "watch", "campaign", "report",
        ],
    ),
];

/// The binary's top-level modules from the bottom up.
const BINARY_LAYERS: &[(&str, &[&str])] = &[("binary", &["shared", "tui", "cli"])];

/// The crates whose sibling modules must not import each other: both.
const SIBLING_CIRCLES_CHECKED: &[Crate] = &[Crate::Library, Crate::Binary];

/// A source file, its path relative to `src/` with `/` separators.
struct SourceFile {
    path: String,
    text: String,
}

/// Which crate a file belongs to: the paths mean different modules in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Crate {
    Library,
    Binary,
}

fn crate_of(path: &str) -> Crate {
    let binary = path == "main.rs"
        || ["cli/", "shared/", "tui/"]
            .iter()
            .any(|dir| path.starts_with(dir));
    if binary {
        Crate::Binary
    } else {
        Crate::Library
    }
}

/// The module a file defines: `campaign/strategy/mod.rs` is `campaign::strategy`,
/// `lib.rs` and `main.rs` the crate root.
fn module_of(path: &str) -> Vec<String> {
    let stem = path.strip_suffix(".rs").unwrap_or(path);
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The rank and layer name of a top-level module, if the layer table lists it.
fn rank_of(krate: Crate, top: &str) -> Option<(usize, &'static str)> {
    let layers = match krate {
        Crate::Library => LIBRARY_LAYERS,
        Crate::Binary => BINARY_LAYERS,
    };
    layers
        .iter()
        .flat_map(|(layer, modules)| modules.iter().map(move |m| (*layer, *m)))
        .enumerate()
        .find(|(_, (_, m))| *m == top)
        .map(|(rank, (layer, _))| (rank, layer))
}

/// Blanks out comments, string literals and character literals (keeping the line breaks), so
/// a path named in a doc comment or a string is not read as an import.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('#' | '"')) && !ident_before(&chars, i) {
            // A raw string: r"..." or r#"..."#, closed by a quote and as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &skipped in &chars[i..j.min(chars.len())] {
                out.push(blank(skipped));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'); anything else is a lifetime.
            let close = if next == Some('\\') {
                (i + 2..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Identifiers, `::` and single punctuation, each with its 1-based line.
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// One path a file names, resolved to segments from its crate's root.
#[derive(Debug, Clone)]
struct Import {
    line: usize,
    target: Vec<String>,
}

/// Reads the paths of one use tree (or plain path) starting at `i`, after `prefix`: `a::b`,
/// `a::{b, c::d, self}`, `a::*`, `a as b`. Returns the leaf paths and the index after it.
fn use_tree(
    tokens: &[(Token, usize)],
    mut i: usize,
    prefix: Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    loop {
        match tokens.get(i).map(|t| &t.0) {
            Some(Token::Ident(name)) => {
                if name == "self" && !path.is_empty() {
                    // `a::{self}` names `a` itself.
                } else {
                    path.push(name.clone());
                }
                i += 1;
                if tokens.get(i).map(|t| &t.0) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                if let Some(Token::Ident(word)) = tokens.get(i).map(|t| &t.0) {
                    if word == "as" {
                        i += 2;
                    }
                }
                return (vec![path], i);
            }
            Some(Token::Punct('*')) => return (vec![path], i + 1),
            Some(Token::Punct('{')) => {
                i += 1;
                let mut leaves = Vec::new();
                loop {
                    match tokens.get(i).map(|t| &t.0) {
                        None => return (leaves, i),
                        Some(Token::Punct('}')) => return (leaves, i + 1),
                        Some(Token::Punct(',')) => i += 1,
                        Some(_) => {
                            let (mut more, next) = use_tree(tokens, i, path.clone());
                            leaves.append(&mut more);
                            // Skip whatever the tree did not read (generics in a plain path).
                            let mut depth = 0usize;
                            i = next;
                            while let Some((t, _)) = tokens.get(i) {
                                match t {
                                    Token::Punct('{') => depth += 1,
                                    Token::Punct('}') if depth == 0 => break,
                                    Token::Punct('}') => depth -= 1,
                                    Token::Punct(',') if depth == 0 => break,
                                    _ => {}
                                }
                                i += 1;
                            }
                        }
                    }
                }
            }
            _ => return (vec![path], i),
        }
    }
}

/// Every `crate::`, `super::` and `self::` path of a file, resolved from its crate's root.
/// Inline modules (`mod tests { ... }`) move `super` and `self` one level down, as in Rust.
fn imports(file: &SourceFile) -> Vec<Import> {
    let code = code_only(&file.text);
    let tokens = tokens(&code);
    let file_module = module_of(&file.path);
    // Inline modules open at a brace depth; `super` inside one is the file's module.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (token, line) = &tokens[i];
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some((Token::Ident(name), _)), Some((Token::Punct('{'), _))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                }
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && tokens.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep)
                    && (i == 0 || tokens[i - 1].0 != Token::PathSep) =>
            {
                let (leaves, next) = use_tree(&tokens, i, Vec::new());
                let mut here = file_module.clone();
                here.extend(inline.iter().map(|(name, _)| name.clone()));
                for leaf in leaves {
                    if let Some(target) = resolve(&here, &leaf) {
                        out.push(Import {
                            line: *line,
                            target,
                        });
                    }
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A path from `crate`, `super` or `self` as segments from the crate root, or `None` when it
/// climbs above the root.
fn resolve(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut segments = path.iter().peekable();
    let mut base: Vec<String> = match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        _ => here.to_vec(),
    };
    while let Some(s) = segments.peek() {
        match s.as_str() {
            "super" => {
                base.pop()?;
            }
            "self" => {}
            _ => break,
        }
        segments.next();
    }
    base.extend(segments.cloned());
    Some(base)
}

/// Everything wrong with the layering of `files`, one line each.
fn check(files: &[SourceFile]) -> Vec<String> {
    // Each crate's modules and the file that defines each.
    let mut module_files: BTreeMap<(Crate, Vec<String>), &str> = BTreeMap::new();
    for file in files {
        module_files.insert((crate_of(&file.path), module_of(&file.path)), &file.path);
    }
    let defining_module = |krate: Crate, target: &[String]| -> Option<Vec<String>> {
        (0..=target.len())
            .rev()
            .map(|n| target[..n].to_vec())
            .find(|m| module_files.contains_key(&(krate, m.clone())))
    };
    let mut problems = Vec::new();
    // (crate, parent, child importing, child imported) -> first place it happens.
    let mut sibling_edges: BTreeMap<(Crate, Vec<String>, String, String), String> = BTreeMap::new();
    for file in files {
        let krate = crate_of(&file.path);
        let module = module_of(&file.path);
        if module.first().map(String::as_str) == Some("layering_tests") {
            // This checker: its examples name every layer in strings, and it imports nothing.
            continue;
        }
        let own = module.first().map(|top| (top, rank_of(krate, top)));
        if let Some((top, None)) = own {
            problems.push(format!(
                "{}: module `{top}` is not in the layer table of src/layering_tests.rs; add it \
                 to its layer",
                file.path
            ));
            continue;
        }
        for import in imports(file) {
            let Some(target_module) = defining_module(krate, &import.target) else {
                continue;
            };
            let target_file = module_files[&(krate, target_module.clone())];
            if let (Some((top, Some((rank, layer)))), Some(target_top)) =
                (own, target_module.first())
            {
                if let Some((target_rank, target_layer)) = rank_of(krate, target_top) {
                    if target_rank > rank {
                        problems.push(format!(
                            "src/{}:{}: `{top}` ({layer}) imports `{}` from `{target_top}` \
                             ({target_layer}, src/{target_file}), a higher layer",
                            file.path,
                            import.line,
                            import.target.join("::"),
                        ));
                    }
                }
            }
            let common = module
                .iter()
                .zip(&target_module)
                .take_while(|(a, b)| a == b)
                .count();
            if common < module.len() && common < target_module.len() {
                sibling_edges
                    .entry((
                        krate,
                        module[..common].to_vec(),
                        module[common].clone(),
                        target_module[common].clone(),
                    ))
                    .or_insert_with(|| {
                        format!(
                            "src/{}:{} imports src/{target_file}",
                            file.path, import.line
                        )
                    });
            }
        }
    }
    let mut reported = BTreeSet::new();
    for ((krate, parent, a, b), there) in &sibling_edges {
        if !SIBLING_CIRCLES_CHECKED.contains(krate) {
            continue;
        }
        let back = (*krate, parent.clone(), b.clone(), a.clone());
        if let Some(back_there) = sibling_edges.get(&back) {
            if reported.insert((krate, parent, a.min(b), a.max(b))) {
                let parent_name = if parent.is_empty() {
                    "the crate root".to_string()
                } else {
                    format!("`{}`", parent.join("::"))
                };
                problems.push(format!(
                    "sibling modules `{a}` and `{b}` of {parent_name} import each other ({there}; \
                     {back_there}); move what both need into one of them or a module below both"
                ));
            }
        }
    }
    problems
}

/// Every `.rs` file under `dir`, paths relative to `root`.
fn read_sources(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under src/");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            out.push(SourceFile {
                path: relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/"),
                text,
            });
        }
    }
}

#[test]
fn no_module_imports_from_a_higher_layer_or_a_sibling_that_imports_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_sources(&src, &src, &mut files);
    assert!(
        files.iter().any(|f| f.path == "campaign/mod.rs"),
        "the walk found the sources"
    );
    let problems = check(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn file(path: &str, text: &str) -> SourceFile {
    SourceFile {
        path: path.into(),
        text: text.into(),
    }
}

#[test]
fn an_upward_import_is_reported_with_both_files_and_the_line() {
    let files = [
        file("lib.rs", "pub mod campaign;\npub mod curve;\n"),
        file(
            "curve.rs",
            "//! Curves.\n\nuse crate::{fsutil, campaign::State};\n",
        ),
        file("campaign/mod.rs", "pub struct State;\n"),
        file("fsutil.rs", "pub fn read() {}\n"),
    ];
    let problems = check(&files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert!(
        p.contains("src/curve.rs:3")
            && p.contains("src/campaign/mod.rs")
            && p.contains("campaign::State"),
        "{p}"
    );
}

#[test]
fn a_circle_between_siblings_is_reported_and_a_parent_child_pair_is_not() {
    let files = [
        file("campaign/mod.rs", "mod a;\nmod b;\nuse a::X;\n"),
        file("campaign/a.rs", "use super::b::Y;\npub struct X;\n"),
        file(
            "campaign/b.rs",
            "pub struct Y;\nfn f() {\n    let _ = super::{a::X, State};\n}\n",
        ),
    ];
    let problems = check(&files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert!(
        p.contains("`a` and `b`")
            && p.contains("src/campaign/a.rs:1")
            && p.contains("src/campaign/b.rs:3"),
        "{p}"
    );
}

#[test]
fn comments_strings_and_the_binary_crate_are_read_as_rust_reads_them() {
    let files = [
        // A doc comment and a string name a higher layer; neither is an import.
        file(
            "curve.rs",
            "//! See [`crate::report`].\nconst S: &str = \"crate::report::x\";\nconst R: &str = r#\"use crate::campaign;\"#;\n",
        ),
        file("report/mod.rs", "mod tests {\n    use super::super::curve;\n}\n"),
        // In the binary `crate::` is the binary; the library is `autolb::`.
        file("main.rs", "mod cli;\nmod tui;\n"),
        file("tui/mod.rs", "use autolb::campaign;\nuse crate::cli::Args;\n"),
        file("cli/mod.rs", "pub struct Args;\n"),
    ];
    let problems = check(&files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("src/tui/mod.rs:2") && problems[0].contains("src/cli/mod.rs"),
        "{}",
        problems[0]
    );
}
