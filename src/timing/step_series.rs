//! Per-coupling-step timings: `,Component,Waiting,Interpolation,Sending`.
//!
//! The index column is the simulated second at which the step starts; the others are the
//! step's compute, waiting, interpolation and sending seconds of one component. The series is
//! kept step by step ([`super::StepSeries`]) so that irregular steps (IFS radiation) stay
//! visible; the summed [`super::ComponentTiming`] goes with it.
//!
//! The file names the component neither in its header nor in its rows; it comes from the file
//! name `<...>_<name>_ts_<nproc>.csv` (e.g. `mn4_sr_cmip6_ifs_ts_240.csv`: `ifs` on 240 PEs),
//! overridden by `--nproc`. The coupling period is the spacing of the index unless `--period`
//! gives it. A row without values (the final exchange) is not a step.
//!
//! What a whole file holds: exactly that header, five fields in every row, step times that
//! increase by one coupling period each, and the final exchange (a row with a time and no values) last: without it the
//! series may still grow and is partial. Anything else is an error naming the line (a damaged file is never measured).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::text::{self, Field, Lines};
use super::{ComponentTiming, Format, Measurement, ReadOptions, Reading, StepSeries, TimingError};

/// One coupling step of a per-step series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    /// Simulated second at which the step starts.
    pub sim_time_s: f64,
    /// Seconds the component computed in this step (outside coupling events).
    pub compute_s: f64,
    /// Seconds it waited for other components' fields in this step.
    pub wait_s: f64,
    /// Seconds it interpolated fields before sending them in this step.
    pub interp_s: f64,
    /// Seconds in the sending (put) calls of this step.
    pub send_s: f64,
}

/// Reads a per-step CSV file.
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let bytes = super::read_bytes(path)?;
    read(&bytes, path, opts)
}

/// `(name, nproc)` from a file name like `mn4_sr_cmip6_ifs_ts_240.csv`.
pub fn name_from_file(path: &Path) -> (String, Option<u32>) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let (head, nproc) = match stem.rsplit_once("_ts_") {
        Some((head, n)) => (head.to_string(), n.parse().ok().filter(|&n: &u32| n > 0)),
        None => (stem.clone(), None),
    };
    let name = head
        .rsplit('_')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("component");
    (name.to_string(), nproc)
}

/// Parses per-step CSV text. Public for the fuzz tests.
pub fn read(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let (name, file_nproc) = name_from_file(path);
    let mut header_seen = false;
    let mut rows: Vec<StepRow> = Vec::new();
    let mut partial = None;
    let mut ended = false;
    let mut final_time: Option<f64> = None;
    for line in Lines::new(bytes) {
        if !line.complete {
            partial = partial.or(line.cut(path.display()));
            break;
        }
        let fields: Vec<&[u8]> = line.text.split(|&b| b == b',').map(text::trim).collect();
        if fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        if !header_seen {
            let expected = ["", "Component", "Waiting", "Interpolation", "Sending"];
            let matches = fields.len() == expected.len()
                && fields
                    .iter()
                    .zip(expected)
                    .all(|(f, e)| f.eq_ignore_ascii_case(e.as_bytes()));
            if !matches {
                return Err(TimingError::parse(
                    path,
                    line.number,
                    format!(
                        "header {:?} is not `,Component,Waiting,Interpolation,Sending`",
                        text::show(line.text)
                    ),
                ));
            }
            header_seen = true;
            continue;
        }
        if fields.len() != 5 {
            return Err(TimingError::parse(
                path,
                line.number,
                format!("{:?} has {} columns; expected 5 (time, compute, waiting, interpolation, sending)", text::show(line.text), fields.len()),
            ));
        }
        if fields[1..5].iter().all(|f| f.is_empty()) {
            // The final exchange: nothing measured, the series is whole. Its time still counts
            // for the spacing (a lost last step shows there).
            ended = true;
            if let Field::Value(t) = text::number(fields[0]) {
                final_time = Some(t);
            }
            continue;
        }
        if ended {
            return Err(TimingError::parse(
                path,
                line.number,
                "a step after the final exchange (the row without values); the file is damaged",
            ));
        }
        let mut values = [0.0f64; 5];
        for (i, raw) in fields[..5].iter().enumerate() {
            values[i] = match text::number(raw) {
                Field::Value(v) if i == 0 || v >= 0.0 => v,
                Field::Overflow => {
                    partial.get_or_insert_with(|| {
                        format!(
                            "{}: line {}: a value overflowed (****)",
                            path.display(),
                            line.number
                        )
                    });
                    f64::NAN
                }
                _ => {
                    return Err(TimingError::parse(
                        path,
                        line.number,
                        format!(
                            "value {:?} is not a number of seconds >= 0",
                            text::show(raw)
                        ),
                    ))
                }
            };
        }
        if values.iter().any(|v| v.is_nan()) {
            break; // the complete part ends at an overflow
        }
        if let Some(last) = rows.last() {
            // Steps follow each other in simulated time: a time that goes back or repeats is
            // a damaged file (`145800` -> `14,800`), never a step to add.
            if values[0] <= last.sim_time_s {
                return Err(TimingError::parse(
                    path,
                    line.number,
                    format!(
                        "step time {} s does not follow the previous step's {} s; step times \
                         must increase",
                        values[0], last.sim_time_s
                    ),
                ));
            }
        }
        rows.push(StepRow {
            sim_time_s: values[0],
            compute_s: values[1],
            wait_s: values[2],
            interp_s: values[3],
            send_s: values[4],
        });
    }
    if rows.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no step written yet", path.display()),
        });
    }
    if !ended && partial.is_none() {
        partial = Some(format!(
            "{}: the final exchange (a row without values) is not written yet; more steps may \
             follow",
            path.display()
        ));
    }
    check_spacing(&rows, final_time, opts.period_s, path)?;
    let sum = |f: fn(&StepRow) -> f64| rows.iter().map(f).sum::<f64>();
    let mut c = ComponentTiming::new(
        name.clone(),
        rows.len() as u64,
        sum(|r| r.compute_s),
        sum(|r| r.wait_s),
    );
    c.interp_s = Some(sum(|r| r.interp_s));
    c.send_s = Some(sum(|r| r.send_s));
    c.nproc = super::resolve_nproc(path, &name, file_nproc, opts)?;
    let mut m = Measurement::new(Format::Steps);
    m.period_s = opts.period_s.or_else(|| index_spacing(&rows));
    m.sim_s = m.period_s.map(|p| p * rows.len() as f64);
    // One component alone: its wall time is the sum of everything it did.
    m.wall_s = Some(c.compute_s + c.wait_s + c.interp_s.unwrap_or(0.0) + c.send_s.unwrap_or(0.0));
    m.series.push(StepSeries {
        component: name,
        nproc: c.nproc,
        rows,
    });
    m.components.push(c);
    m.partial = partial;
    Ok(Reading::Measured(m))
}

/// Steps follow each other one coupling period apart (`--period`, else the median spacing): a
/// larger gap is a step lost from the middle, which would pass a shorter run off as whole.
fn check_spacing(
    rows: &[StepRow],
    final_time: Option<f64>,
    period_s: Option<f64>,
    path: &Path,
) -> Result<(), TimingError> {
    let Some(period) = period_s.or_else(|| index_spacing(rows)) else {
        return Ok(());
    };
    let times: Vec<f64> = rows
        .iter()
        .map(|r| r.sim_time_s)
        .chain(final_time)
        .collect();
    for pair in times.windows(2) {
        let gap = pair[1] - pair[0];
        if (gap - period).abs() > 1e-6 * period.max(1.0) {
            return Err(TimingError::inconsistent(
                path,
                format!(
                    "the step at {} s comes {gap} s after the one before, not one coupling period \
                     ({period} s): a step is missing or the period is wrong",
                    pair[1]
                ),
            ));
        }
    }
    Ok(())
}

/// The median positive spacing of the index column: the coupling period, even when a few
/// steps are irregular.
fn index_spacing(rows: &[StepRow]) -> Option<f64> {
    let mut gaps: Vec<f64> = rows
        .windows(2)
        .map(|w| w[1].sim_time_s - w[0].sim_time_s)
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}
