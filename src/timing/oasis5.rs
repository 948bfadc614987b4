//! OASIS3-MCT 5 `load_balancing_info.txt`.
//!
//! OASIS 5 writes this file once, from global rank 0, at the end of a run (EC-Earth4 switches it
//! on with `model_config.oasis.load_balancing: 1`). Two layouts are read.
//!
//! The one OASIS 5 writes: a header (`Coupled model simulation time (s):`, `Speed (SYPD) :`,
//! `Cost (CHPSY) :`, then per model `Model <name> simulation time :` and `cost (CHPSY):`); a line
//! `Load balance analysis` and the block
//!
//! ```text
//!      Model /  Computing time /  Waiting time
//!    OpenIFS /  6543.210 /   123.456
//!     RNFMAP /   -13.561 /  6679.000
//! ```
//!
//! then `Additional information` with a section per model (its name alone on a line, then
//! `Specific oasis_get time from model <name> :`, `Total jitter :`, the two `Partial coupling
//! cost` lines, `Total mapping/interpolation :` and `... with spread :`, the NetCDF output lines,
//! whose restart label differs between versions, `Total time of this load balancing analysis:`
//! and `Clock spread after synchronise ... :`). The coupled wall time is the header's `Coupled
//! model simulation time`. The file counts no coupling steps, so it gives no simulated time on
//! its own: an EC-Earth4 run directory adds it from the leg's `timing.log` ([`super::ecearth4`]).
//!
//! An older layout (`Number of coupling steps analysed :`, `Total elapsed time (s) :`, the
//! block, then sections with `Number of processes :` and `Total put time :`) is read too.
//!
//! Only the measured seconds, PEs and steps are used: the file's own SYPD and CHPSY are never
//! trusted (the unit of the simulated time OASIS is given is not documented, and CHPSY counts MPI
//! ranks, not cores, so it undercounts a threaded OpenIFS). Names are Fortran `A10`:
//! right-justified and cut to 10 characters, so a component whose timing name is longer is
//! matched on its first 10 characters ([`Format::name_width`]). A computing time can be
//! slightly negative for a component that computes almost nothing (clock noise, kept with a note
//! by the reader's consistency check, but no SYPD comes from it). Values from 10,000 s up print as
//! `********`: that value is unknown and the reading is partial, never a number.
//!
//! What a whole file holds: the model block closed by what follows it, at least two models,
//! no model twice, a section per model with the same kinds of lines as the others (PEs at
//! least, in the older layout), and `Total elapsed time` when the header gives the number of
//! coupling steps. Less is partial: a file still being written never passes for a complete one.

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
    // The layout OASIS 5 writes (a `Load balance analysis` line) has no PEs in its sections.
    let mut analysis_layout = false;
    // Models the header names (`Model <name> simulation time :`), with their line.
    let mut header_models: Vec<(usize, String)> = Vec::new();
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
        if t.eq_ignore_ascii_case("Load balance analysis") {
            analysis_layout = true;
            current = None;
            continue;
        }
        if let Some((key, value)) = t.split_once(':') {
            let key = key.trim().to_ascii_lowercase();
            let first = text::tokens(value.trim().as_bytes()).next().unwrap_or(b"");
            let field = text::number(first);
            let value = match field {
                Field::Value(v) => Some(v),
                _ => None,
            };
            if let Some(name) = header_model(&key, t) {
                header_models.push((number, name));
                continue;
            }
            if key.starts_with("coupled model simulation time") {
                elapsed = value;
                if field == Field::Overflow {
                    partial.push(format!(
                        "{}: the coupled model simulation time overflowed (********, 10,000 s \
                         or more); the coupled wall time is unknown",
                        path.display()
                    ));
                }
                continue;
            }
            match current.and_then(|i| comps.get_mut(i).zip(sections.get_mut(i))) {
                Some((c, kinds)) => {
                    if let Some(kind) = apply(c, &key, value) {
                        if field == Field::Overflow {
                            partial.push(format!(
                                "{}: line {number}: the {kind} of {} overflowed (********); it \
                                 is unknown",
                                path.display(),
                                c.name
                            ));
                        }
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
            if (decorated || analysis_layout) && !overflowed.iter().any(|o| o == word) {
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
        } else {
            current = None;
        }
    }
    if block_closed {
        let known =
            |n: &str| comps.iter().any(|c| c.name == n) || overflowed.iter().any(|o| o == n);
        if let Some((line, name)) = header_models.iter().find(|(_, n)| !known(n)) {
            return Err(TimingError::parse(
                path,
                *line,
                format!(
                    "the header names model {name}, which the model block lacks; a line of that \
                     block is missing"
                ),
            ));
        }
    }
    for name in &overflowed {
        partial.push(format!(
            "{}: the times of {name} overflowed (********, 10,000 s or more); it is left out",
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
        let first_kind = (!analysis_layout).then_some("processes");
        if let Some(missing) = incompleteness(&comps, &sections, block_closed, models, first_kind) {
            partial.push(format!("{}: {missing}", path.display()));
        }
    }
    let mut m = Measurement::new(Format::Oasis5);
    for c in &mut comps {
        if c.steps == 0 {
            c.steps = global_steps.unwrap_or(0);
        }
        if let Some(full) = full_name(&c.name, opts) {
            c.name = full;
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
    if analysis_layout && steps == 0 {
        m.notes.push(NO_SIMULATED_TIME.into());
    } else if opts.period_s.is_none() {
        m.notes.push(super::PERIOD_UNKNOWN.into());
    } else if steps == 0 {
        m.notes
            .push("the file gives no number of coupling steps; simulated time unknown".into());
    }
    m.components = comps;
    m.partial = (!partial.is_empty()).then(|| partial.join("; "));
    Ok(Reading::Measured(m))
}

/// The note of an OASIS 5 file read on its own: it counts no coupling steps.
pub const NO_SIMULATED_TIME: &str =
    "load_balancing_info.txt counts no coupling steps, so simulated time and SYPD are unknown; \
     read the EC-Earth4 run directory, whose log/NNN/timing.log gives them";

/// The model a header line `Model <name> simulation time : ...` names (`key` lowercased, `line`
/// as written, so the name keeps its case).
fn header_model(key: &str, line: &str) -> Option<String> {
    if !(key.starts_with("model ") && key.ends_with("simulation time")) {
        return None;
    }
    let label = line.split_once(':')?.0.trim();
    let inner = label.get(6..label.len() - "simulation time".len())?.trim();
    (!inner.is_empty() && !inner.contains(' ')).then(|| inner.to_string())
}

/// The timing name a (possibly cut) model name stands for: the `--nproc` name it is the 10-character
/// cut of, when exactly one is.
fn full_name(name: &str, opts: &ReadOptions) -> Option<String> {
    if opts.nproc.contains_key(name) {
        return None;
    }
    let mut cut_of = opts
        .nproc
        .keys()
        .filter(|k| Format::Oasis5.same_name(name, k) && k.as_str() != name);
    match (cut_of.next(), cut_of.next()) {
        (Some(k), None) => Some(k.clone()),
        _ => None,
    }
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
    } else if key.contains("with spread") || key.contains("coupling cost") {
        // The interpolation time with the ranks' spread, and percentages autolb recomputes.
        None
    } else if key.contains("mapping") || key.contains("interpolation") {
        c.interp_s = value;
        Some("interpolation")
    } else if key.contains("jitter") {
        c.jitter_s = value;
        Some("jitter")
    } else if key.contains("put time") || key.contains("send") {
        c.send_s = value;
        Some("put")
    } else {
        None
    }
}

/// What a `load_balancing_info.txt` still lacks to be whole, if anything: the model block must
/// be closed by what follows it and name at least two models (a coupled run), and every model
/// needs its section with every kind of line any section has (the number of processes at
/// least in the older layout, `first_kind`), so that a section still being written is not read as one without put time.
fn incompleteness(
    comps: &[ComponentTiming],
    sections: &[Option<Vec<&'static str>>],
    block_closed: bool,
    models: usize,
    first_kind: Option<&'static str>,
) -> Option<String> {
    if !block_closed {
        return Some("nothing follows the model block yet; another model may come".into());
    }
    if models < 2 {
        return Some("only one model; a coupled run has at least two".into());
    }
    let mut wanted: Vec<&str> = first_kind.into_iter().collect();
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
