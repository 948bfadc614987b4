//! The campaign-file reference (`docs/src/reference/campaign-file.md`) cannot drift from the
//! code: every key a table of the campaign file accepts is documented in that table's section,
//! and every documented key is accepted.
//!
//! The keys come from the code itself, not from a list kept beside it: every table is
//! `#[serde(deny_unknown_fields)]`, so a probe key in it is refused with serde's "unknown field
//! `probe`, expected one of `a`, `b`, ..." naming every key the table has.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use autolb::config::CampaignFile;

const PAGE: &str = "docs/src/reference/campaign-file.md";
const PROBE: &str = "zz_probe_key";

/// What a table of the campaign file holds, as the code says.
#[derive(Debug, PartialEq)]
enum Table {
    /// A table with fixed keys.
    Keys(BTreeSet<String>),
    /// A table whose keys are the user's names (`[original]`: component names).
    Names,
}

/// Probes the table at `path` (`""`: the top level; `[[x]]` or `[x]` syntax as in `heading`).
fn probe(header: &str) -> Table {
    let text = if header.is_empty() {
        format!("{PROBE} = \"x\"\n")
    } else {
        format!("{header}\n{PROBE} = \"x\"\n")
    };
    let Err(e) = toml::from_str::<CampaignFile>(&text) else {
        return Table::Names;
    };
    let message = e.message().to_string();
    let Some(rest) = message.strip_prefix(&format!("unknown field `{PROBE}`")) else {
        // Not refused as a key: a value of the wrong type in a table of names.
        return Table::Names;
    };
    if rest.contains("there are no fields") {
        return Table::Keys(BTreeSet::new());
    }
    Table::Keys(backticked(rest).into_iter().collect())
}

/// The words between backticks in `text`, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// One `###` section of the page's "Every key": the table's TOML header (`""` for the top
/// level), the keys its rows name and the line of each.
#[derive(Debug)]
struct Section {
    header: String,
    line: usize,
    keys: Vec<(usize, String)>,
}

/// The sections under `## Every key`, in page order.
fn sections(page: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut inside = false;
    for (i, line) in page.lines().enumerate() {
        let number = i + 1;
        if let Some(title) = line.strip_prefix("## ") {
            inside = title.trim() == "Every key";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(title) = line.strip_prefix("### ") {
            // `[executor.sim]` (...) names its table; "Prediction (top level)" the top level.
            let header = backticked(title)
                .into_iter()
                .find(|w| w.starts_with('['))
                .unwrap_or_default();
            assert!(
                !header.is_empty() || title.contains("top level"),
                "{PAGE} line {number}: a section names its table in backticks, e.g. `[machine]`, \
                 or says (top level): {title}"
            );
            out.push(Section {
                header,
                line: number,
                keys: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            continue;
        };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| key | type | ...`: cells[0] is empty before the first bar.
        if cells.len() < 3 || cells[1] == "key" || cells[1].starts_with("---") {
            continue;
        }
        for key in backticked(cells[1]) {
            section.keys.push((number, key));
        }
    }
    out
}

/// `[[executor.slurm.multi_prog.extras]]` -> `executor.slurm.multi_prog.extras`.
fn dotted(header: &str) -> &str {
    header.trim_matches(|c| c == '[' || c == ']')
}

fn parent_and_key(path: &str) -> (&str, &str) {
    path.rsplit_once('.').unwrap_or(("", path))
}

/// Every disagreement between the page and the code, one line each.
fn drift(page: &str) -> Vec<String> {
    let sections = sections(page);
    let mut problems = Vec::new();
    // Documented keys per table path; a table may have several sections (the top level has two).
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut tables: BTreeMap<String, (usize, Table)> = BTreeMap::new();
    for section in &sections {
        let path = dotted(&section.header).to_string();
        let table = probe(&section.header);
        if let Table::Keys(keys) = &table {
            for (line, key) in &section.keys {
                if !keys.contains(key) {
                    problems.push(format!(
                        "{PAGE} line {line}: `{key}` is documented for {} but the code has no \
                         such key there; it has: {}",
                        shown(&section.header),
                        keys.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        documented
            .entry(path.clone())
            .or_default()
            .extend(section.keys.iter().map(|(_, k)| k.clone()));
        tables.entry(path).or_insert((section.line, table));
    }
    for (path, (line, _)) in &tables {
        if path.is_empty() {
            continue;
        }
        let (parent, key) = parent_and_key(path);
        let parent_has_it = matches!(
            tables.get(parent),
            Some((_, Table::Keys(keys))) if keys.contains(key)
        );
        if !parent_has_it {
            problems.push(format!(
                "{PAGE} line {line}: section [{path}] is documented but the code has no key \
                 `{key}` in {}",
                shown_path(parent)
            ));
        }
    }
    if !tables.contains_key("") {
        problems.push(format!("{PAGE}: no (top level) section"));
    }
    for (path, (line, table)) in &tables {
        let Table::Keys(keys) = table else {
            continue;
        };
        for key in keys {
            let sub = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let in_rows = documented.get(path).is_some_and(|d| d.contains(key));
            if !in_rows && !tables.contains_key(&sub) {
                problems.push(format!(
                    "{PAGE}: `{key}` of {} (section at line {line}) is accepted by the code but \
                     not documented: add a row, or a section [{sub}] if it is a table",
                    shown_path(path)
                ));
            }
        }
    }
    problems
}

fn shown(header: &str) -> String {
    shown_path(dotted(header))
}

fn shown_path(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_string()
    } else {
        format!("[{path}]")
    }
}

#[test]
fn every_key_of_the_campaign_file_is_documented_and_every_documented_key_exists() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE)).unwrap();
    let problems = drift(&page);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_probe_reads_the_keys_of_a_table_from_the_code() {
    match probe("[machine]") {
        Table::Keys(keys) => assert_eq!(
            keys,
            [
                "cores_per_node",
                "extras_share_node",
                "node_power_w",
                "placement"
            ]
            .map(String::from)
            .into()
        ),
        Table::Names => panic!("[machine] has fixed keys"),
    }
    assert_eq!(probe("[original]"), Table::Names);
    match probe("") {
        Table::Keys(keys) => {
            assert!(
                keys.contains("max_nproc") && keys.contains("component"),
                "{keys:?}"
            )
        }
        Table::Names => panic!("the top level has fixed keys"),
    }
}

#[test]
fn a_missing_key_a_made_up_key_and_a_made_up_section_are_each_found() {
    let page = "## Every key\n\n### Prediction (top level)\n\n| key | type |\n|---|---|\n\
                | `max_nproc` | integer |\n| `no_such_key` | integer |\n\n\
                ### `[machine]`\n\n| key | type |\n|---|---|\n| `cores_per_node` | integer |\n\n\
                ### `[executor.nowhere]`\n\n| key | type |\n|---|---|\n| `x` | integer |\n";
    let problems = drift(page).join("\n");
    assert!(
        problems.contains("line 8: `no_such_key` is documented"),
        "{problems}"
    );
    assert!(problems.contains("`step` of the top level"), "{problems}");
    assert!(problems.contains("`placement` of [machine]"), "{problems}");
    assert!(
        problems.contains("section [executor.nowhere]"),
        "{problems}"
    );
    // Documented as their own sections, or not at all here: both are reported as missing.
    assert!(
        problems.contains("`component` of the top level"),
        "{problems}"
    );
}
