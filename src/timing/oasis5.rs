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
//! file's own SYPD/CHPSY lines are unreliable). Computing times can be negative (kept, but no
//! SYPD comes from them); values past 9999.999 s print as `********` and are unknown.
//! The coupled wall time is the `Total elapsed time` line when there is one, else the largest
//! computing + waiting + interpolation + put time of a model.

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
                    comps.push(ComponentTiming::new(name, 0, compute, wait));
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
        in_block = false;
        if let Some((key, value)) = t.split_once(':') {
            let key = key.trim().to_ascii_lowercase();
            let first = text::tokens(value.trim().as_bytes()).next().unwrap_or(b"");
            let value = match text::number(first) {
                Field::Value(v) => Some(v),
                _ => None,
            };
            match current.and_then(|i| comps.get_mut(i)) {
                Some(c) => apply(c, &key, value),
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
        } else if !word.is_empty() && !word.contains(' ') {
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
    let mut m = Measurement::new(Format::Oasis5);
    for c in &mut comps {
        if c.steps == 0 {
            c.steps = global_steps.unwrap_or(0);
        }
        if let Some(&n) = opts.nproc.get(&c.name) {
            c.nproc = Some(n);
        }
        if c.compute_s < 0.0 {
            m.notes.push(format!(
                "computing time of {} is negative ({:.3} s), as OASIS 5 can report; no SYPD from it",
                c.name, c.compute_s
            ));
        }
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

fn apply(c: &mut ComponentTiming, key: &str, value: Option<f64>) {
    if key.contains("processes") || key.contains("nproc") {
        c.nproc = value.filter(|v| *v >= 1.0).map(|v| v as u32);
    } else if key.contains("coupling steps") || key.contains("time steps") {
        c.steps = value.filter(|v| *v >= 0.0).map_or(0, |v| v as u64);
    } else if key.contains("mapping") || key.contains("interpolation") {
        c.interp_s = value;
    } else if key.contains("put") || key.contains("send") {
        c.send_s = value;
    }
}
