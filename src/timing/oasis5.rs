//! OASIS3-MCT 5 `load_balancing_info.txt`.
//!
//! The file opens with a block
//!
//! ```text
//!      Model /  Computing time /  Waiting time
//!      fesom /  806.519 /   89.604
//!       oifs /  702.113 /  193.010
//! ```
//!
//! followed by one section per model (a line naming it, then `key : value` lines such as
//! `Number of processes : 288`, `Number of coupling steps : 4377`, `Total put time : 0.5`,
//! `Total mapping/interpolation : 12.3`, `Partial coupling cost (%) : 3.2`). Only the
//! measured seconds, PEs and steps are used: SYPD, CHPSY and the costs are recomputed (the
//! file's own SYPD/CHPSY lines are unreliable). Computing times can be slightly negative (clock
//! noise, kept with a note by the reader's consistency check, but no SYPD comes from them); values
//! past 9999.999 s print as `********` and are unknown.
//! The coupled wall time is the `Total elapsed time` line when there is one, else the largest
//! computing + waiting + interpolation + put time of a model.
//!
//! What a whole file holds: the model block closed by what follows it, at least two models,
//! no model twice, a section per model with the same kinds of lines as the others (PEs at
//! least), and `Total elapsed time` when the header gives the number of coupling steps. Less is partial: a file still being written never passes for a complete one.

use std::path::Path;

use super::text::{self, Field};
use super::{ComponentTiming, Format, Measurement, ReadOptions, Reading, TimingError};

/// Reads a `load_balancing_info.txt` file.
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let bytes = super::read_bytes(path)?;
    read(&bytes, path, opts)
}

/// Parses `load_balancing_info.txt` text. Public for the fuzz tests.
pub fn read(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut comps: Vec<ComponentTiming> = Vec::new();
    let mut overflowed: Vec<String> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    let mut in_block = false;
    let mut current: Option<usize> = None;
    let mut elapsed: Option<f64> = None;
    let mut global_steps: Option<u64> = None;
    let mut block_closed = false;
    // Per component (as in `comps`): the kinds of lines its section gave, once it has one.
    let mut sections: Vec<Option<Vec<&'static str>>> = Vec::new();
    let (lines, cut) = text::complete_trimmed_lines(bytes, path);
    partial.extend(cut);
    for (number, t) in &lines {
        let (number, t) = (*number, t.as_str());
        let slashes: Vec<&str> = t.split('/').map(str::trim).collect();
        if slashes.len() == 3 && slashes[0] == "Model" {
            in_block = true;
            continue;
        }
        if in_block && slashes.len() == 3 && !t.contains(':') {
            let name = slashes[0].to_string();
            match (
                text::number(slashes[1].as_bytes()),
                text::number(slashes[2].as_bytes()),
            ) {
                (Field::Value(compute), Field::Value(wait)) => {
                    if comps.iter().any(|c| c.name == name) || overflowed.contains(&name) {
                        return Err(TimingError::parse(
                            path,
                            number,
                            format!("a second line of model {name}; each model has one"),
                        ));
                    }
                    comps.push(ComponentTiming::new(name, 0, compute, wait));
                    sections.push(None);
                }
                (Field::Bad, _) | (_, Field::Bad) => {
                    return Err(TimingError::parse(
                        path,
                        number,
                        format!("{t:?}: expected `model / computing seconds / waiting seconds`"),
                    ))
                }
                _ => overflowed.push(name),
            }
            continue;
        }
        if in_block {
            block_closed = true;
        }
        in_block = false;
        if let Some((key, value)) = t.split_once(':') {
            let key = key.trim().to_ascii_lowercase();
            let first = text::tokens(value.trim().as_bytes()).next().unwrap_or(b"");
            let value = match text::number(first) {
                Field::Value(v) => Some(v),
                _ => None,
            };
            match current.and_then(|i| comps.get_mut(i).zip(sections.get_mut(i))) {
                Some((c, kinds)) => {
                    if let Some(kind) = apply(c, &key, value) {
                        let kinds = kinds.get_or_insert_with(Vec::new);
                        if !kinds.contains(&kind) {
                            kinds.push(kind);
                        }
                    }
                }
                None => {
                    if key.contains("elapsed") || key.contains("wall") {
                        elapsed = value;
                    } else if key.contains("coupling steps") {
                        global_steps = value.filter(|v| *v >= 0.0).map(|v| v as u64);
                    }
                }
            }
            if key.contains("elapsed") || key.contains("wall") {
                elapsed = elapsed.or(value);
            }
            continue;
        }
        // A section title: a line whose only word is a model name (decorations aside).
        let word = t.trim_matches(|c: char| c == '-' || c == '=' || c == '*' || c.is_whitespace());
        if let Some(i) = comps.iter().position(|c| c.name == word) {
            current = Some(i);
            sections[i].get_or_insert_with(Vec::new);
        } else if !word.is_empty() && !word.contains(' ') {
            let decorated = word.len() < t.len();
            if decorated && !overflowed.iter().any(|o| o == word) {
                return Err(TimingError::parse(
                    path,
                    number,
                    format!(
                        "a section of model {word}, which the model block lacks; a line of that \
                         block is missing"
                    ),
                ));
            }
            current = None;
        }
    }
    for name in &overflowed {
        partial.push(format!(
            "{}: the times of {name} overflowed (********); it is left out",
            path.display()
        ));
    }
    if comps.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no model line yet", path.display()),
        });
    }
    if partial.is_empty() && global_steps.is_some() && elapsed.is_none() {
        // The header gives the analysed steps and the elapsed time together; with one and not
        // the other a line is lost, and a wall time estimated from the models would pass off
        // as measured.
        partial.push(format!(
            "{}: the header gives the coupling steps but no `Total elapsed time`",
            path.display()
        ));
    }
    if partial.is_empty() {
        let models = comps.len() + overflowed.len();
        if let Some(missing) = incompleteness(&comps, &sections, block_closed, models) {
            partial.push(format!("{}: {missing}", path.display()));
        }
    }
    let mut m = Measurement::new(Format::Oasis5);
    for c in &mut comps {
        if c.steps == 0 {
            c.steps = global_steps.unwrap_or(0);
        }
        c.nproc = super::resolve_nproc(path, &c.name, c.nproc, opts)?;
    }
    m.wall_s = elapsed.or_else(|| {
        comps
            .iter()
            .map(|c| c.compute_s + c.wait_s + c.interp_s.unwrap_or(0.0) + c.send_s.unwrap_or(0.0))
            .reduce(f64::max)
    });
    let steps = comps.iter().map(|c| c.steps).max().unwrap_or(0);
    m.period_s = opts.period_s;
    m.sim_s = opts
        .period_s
        .filter(|_| steps > 0)
        .map(|p| p * steps as f64);
    if opts.period_s.is_none() {
        m.notes.push(super::PERIOD_UNKNOWN.into());
    } else if steps == 0 {
        m.notes
            .push("the file gives no number of coupling steps; simulated time unknown".into());
    }
    m.components = comps;
    m.partial = (!partial.is_empty()).then(|| partial.join("; "));
    Ok(Reading::Measured(m))
}

/// Applies one `key : value` line of a model's section; returns the kind of line it was when
/// it is one autolb uses.
fn apply(c: &mut ComponentTiming, key: &str, value: Option<f64>) -> Option<&'static str> {
    if key.contains("processes") || key.contains("nproc") {
        c.nproc = value.filter(|v| *v >= 1.0).map(|v| v as u32);
        Some("processes")
    } else if key.contains("coupling steps") || key.contains("time steps") {
        c.steps = value.filter(|v| *v >= 0.0).map_or(0, |v| v as u64);
        Some("steps")
    } else if key.contains("mapping") || key.contains("interpolation") {
        c.interp_s = value;
        Some("interpolation")
    } else if key.contains("put") || key.contains("send") {
        c.send_s = value;
        Some("put")
    } else {
        None
    }
}

/// What a `load_balancing_info.txt` still lacks to be whole, if anything: the model block must
/// be closed by what follows it and name at least two models (a coupled run), and every model
/// needs its section with every kind of line any section has (the number of processes at
/// least), so that a section still being written is not read as one without put time.
fn incompleteness(
    comps: &[ComponentTiming],
    sections: &[Option<Vec<&'static str>>],
    block_closed: bool,
    models: usize,
) -> Option<String> {
    if !block_closed {
        return Some("nothing follows the model block yet; another model may come".into());
    }
    if models < 2 {
        return Some("only one model; a coupled run has at least two".into());
    }
    let mut wanted: Vec<&str> = vec!["processes"];
    for kind in sections.iter().flatten().flatten() {
        if !wanted.contains(kind) {
            wanted.push(kind);
        }
    }
    for (c, kinds) in comps.iter().zip(sections) {
        let Some(kinds) = kinds else {
            return Some(format!("the section of {} is not written yet", c.name));
        };
        if let Some(lacking) = wanted.iter().find(|w| !kinds.contains(w)) {
            return Some(format!(
                "the section of {} has no {lacking} line yet",
                c.name
            ));
        }
    }
    None
}
