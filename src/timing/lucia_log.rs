//! `lucia.log`, the text the CERFACS `lucia` post-processor prints:
//!
//! ```text
//!   Component -         Calculations   -     Waiting time (s) - # cpl step :
//!   fesom                    1616.47                 45.08          4377
//!   oifs                     1263.30                397.72          4377
//!
//!  Additional informations
//!   Component -   Mean interpolation time (s) -   Jitter (s)
//!   fesom                    3.21                 0.55
//!   oifs                    12.40                 1.20
//! ```
//!
//! Names are cut to 6 characters: a `--nproc` name that starts with the cut name gives both the
//! PEs and the full name. The coupled wall time is not printed; by lucia's definition
//! (calculations = window length - waiting) it is the largest `calculations + waiting`.
//! Sending time is not printed (null).
//!
//! What a whole `lucia.log` holds: the component table, closed by what follows it (the
//! `Additional informations` section), at least two components, no name twice, and an
//! additional-information row for each component. Less is partial.

use std::path::Path;

use super::text::{self, Field};
use super::{ComponentTiming, Format, Measurement, ReadOptions, Reading, TimingError};

/// Reads a `lucia.log` file.
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let bytes = super::read_bytes(path)?;
    read(&bytes, path, opts)
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Before,
    Main,
    Additional,
    /// After the additional-information rows (e.g. the `Load balance:` line).
    After,
}

/// Parses `lucia.log` text. Public for the fuzz tests.
pub fn read(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut section = Section::Before;
    let mut comps: Vec<ComponentTiming> = Vec::new();
    let mut extra_columns: Vec<String> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    let mut main_closed = false;
    let mut additional_rows: Vec<String> = Vec::new();
    let (lines, cut) = text::complete_trimmed_lines(bytes, path);
    partial.extend(cut);
    for (number, t) in &lines {
        let (number, t) = (*number, t.as_str());
        if t.contains("Calculations") && t.contains("Waiting") {
            section = Section::Main;
            continue;
        }
        if t.starts_with("Additional") {
            section = Section::Additional;
            main_closed |= !comps.is_empty();
            extra_columns.clear();
            continue;
        }
        match section {
            Section::Before | Section::After => {}
            Section::Main => {
                let tok: Vec<&[u8]> = text::tokens(t.as_bytes()).collect();
                if tok.len() != 4 {
                    // Decoration between rows, or what follows the table: then it is whole.
                    main_closed |= !comps.is_empty();
                    continue;
                }
                let name = String::from_utf8_lossy(tok[0]).to_string();
                if comps.iter().any(|c| c.name == name) {
                    return Err(TimingError::parse(
                        path,
                        number,
                        format!("a second row of {name}; each component has one"),
                    ));
                }
                let values: Vec<Field> = tok[1..].iter().map(|v| text::number(v)).collect();
                match (values[0], values[1], values[2]) {
                    (Field::Value(calc), Field::Value(wait), Field::Value(steps))
                        if steps >= 0.0 =>
                    {
                        comps.push(ComponentTiming::new(name, steps as u64, calc, wait));
                    }
                    (Field::Bad, _, _) | (_, Field::Bad, _) | (_, _, Field::Bad) => {
                        if comps.is_empty() {
                            continue; // still in the header decoration
                        }
                        return Err(TimingError::parse(
                            path,
                            number,
                            format!("{t:?}: expected `name calculations waiting steps`"),
                        ));
                    }
                    _ => partial.push(format!(
                        "{}: line {}: a value of {name} overflowed (****)",
                        path.display(),
                        number
                    )),
                }
            }
            Section::Additional => {
                if extra_columns.is_empty() {
                    if t.starts_with("Component") {
                        extra_columns = t
                            .split(" - ")
                            .skip(1)
                            .map(|c| c.trim().to_ascii_lowercase())
                            .collect();
                    }
                    continue;
                }
                let tok: Vec<&[u8]> = text::tokens(t.as_bytes()).collect();
                let Some((name, values)) = tok.split_first() else {
                    continue;
                };
                let is_row = values.len() == extra_columns.len()
                    && values
                        .iter()
                        .all(|v| !matches!(text::number(v), Field::Bad));
                if !is_row {
                    section = Section::After; // what follows the rows
                    continue;
                }
                let name = String::from_utf8_lossy(name);
                let Some(c) = comps.iter_mut().find(|c| c.name == name) else {
                    return Err(TimingError::parse(
                        path,
                        number,
                        format!(
                            "additional informations of {name}, which the component table lacks; \
                             a row of that table is missing"
                        ),
                    ));
                };
                if !additional_rows.contains(&c.name) {
                    additional_rows.push(c.name.clone());
                }
                for (column, raw) in extra_columns.iter().zip(values) {
                    let Field::Value(v) = text::number(raw) else {
                        continue;
                    };
                    if column.contains("interp") {
                        c.interp_s = Some(v);
                    } else if column.contains("jitter") {
                        c.jitter_s = Some(v);
                    }
                }
            }
        }
    }
    if comps.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no component line yet", path.display()),
        });
    }
    if partial.is_empty() {
        if let Some(missing) = incompleteness(&comps, main_closed, section, &additional_rows) {
            partial.push(format!("{}: {missing}", path.display()));
        }
    }
    let mut m = Measurement::new(Format::LuciaLog);
    for c in &mut comps {
        if let Some((full, n)) = match_nproc(&c.name, opts) {
            c.name = full;
            c.nproc = Some(n);
        }
    }
    m.wall_s = comps
        .iter()
        .map(|c| c.compute_s + c.wait_s)
        .reduce(f64::max);
    let steps = comps.iter().map(|c| c.steps).max().unwrap_or(0);
    m.period_s = opts.period_s;
    m.sim_s = opts.period_s.map(|p| p * steps as f64);
    if opts.period_s.is_none() {
        m.notes.push(super::PERIOD_UNKNOWN.into());
    }
    m.components = comps;
    m.partial = (!partial.is_empty()).then(|| partial.join("; "));
    Ok(Reading::Measured(m))
}

/// What a `lucia.log` still lacks to be whole, if anything: the component table must be
/// followed by something (so no row can still come), hold at least two components (a coupled
/// run), and, once the additional-information section has begun, that section needs a row for
/// every component.
fn incompleteness(
    comps: &[ComponentTiming],
    main_closed: bool,
    section: Section,
    additional_rows: &[String],
) -> Option<String> {
    if !main_closed {
        return Some("nothing follows the component table yet; another row may come".into());
    }
    if comps.len() < 2 {
        return Some(format!(
            "only one component ({}); a coupled run has at least two",
            comps[0].name
        ));
    }
    if matches!(section, Section::Additional | Section::After) {
        let missing: Vec<&str> = comps
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| !additional_rows.iter().any(|a| a == n))
            .collect();
        if !missing.is_empty() {
            return Some(format!(
                "the additional informations of {} are not written yet",
                missing.join(", ")
            ));
        }
    }
    None
}

/// The `--nproc` entry for a (possibly cut) name: exact, else the only one it is a prefix of.
fn match_nproc(name: &str, opts: &ReadOptions) -> Option<(String, u32)> {
    if let Some(&n) = opts.nproc.get(name) {
        return Some((name.to_string(), n));
    }
    let mut prefixed = opts
        .nproc
        .iter()
        .filter(|(k, _)| k.starts_with(name) && name.len() >= 6);
    match (prefixed.next(), prefixed.next()) {
        (Some((k, &n)), None) => Some((k.clone(), n)),
        _ => None,
    }
}
