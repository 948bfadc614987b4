//! BSC "lucia_lite" post-processed tables: `table.csv` and `summary`.
//!
//! `table.csv`: `,nproc,number_ts,exec_time,waiting_time,interpo_time,SYPD,CHPSY,cpl_cost`, one
//! row per component and a `Coupled` row. exec_time is a component's compute seconds (the
//! Coupled row: the coupled wall seconds). number_ts counts coupling exchanges, so the simulated
//! time is `(number_ts - 1) x period` (of the Coupled row). The file's own SYPD, CHPSY and
//! cpl_cost columns are not used: autolb recomputes them (tests hold the two to agree).
//!
//! The tables carry no coupling period. Without `--period` it is recovered from the file's own
//! SYPD (the most precisely printed one) and snapped to a divisor of a day (2700 s for
//! EC-Earth3 SR); a note says so.
//!
//! Sending time is not in the tables (`send_s` is null); a component's coupling time for the
//! partial coupling cost is the coupled wall time minus its compute time, exactly how
//! lucia_lite defines it.

use std::path::Path;

use super::text::{self, Field, Lines};
use super::{ComponentTiming, Format, Measurement, ReadOptions, Reading, TimingError};
use crate::metrics::SECONDS_PER_YEAR;

/// One row of either table: what a component (or the coupled run) measured.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    name: String,
    nproc: Option<u32>,
    number_ts: Option<u64>,
    exec_s: Option<f64>,
    wait_s: Option<f64>,
    interp_s: Option<f64>,
    /// The file's own SYPD, used only to recover a missing coupling period.
    sypd: Option<f64>,
    /// Decimals printed in `sypd` (its precision).
    sypd_decimals: usize,
}

impl Row {
    fn named(name: &str) -> Row {
        Row {
            name: name.to_string(),
            nproc: None,
            number_ts: None,
            exec_s: None,
            wait_s: None,
            interp_s: None,
            sypd: None,
            sypd_decimals: 0,
        }
    }
}

/// Reads `table.csv`.
pub fn read_table_file(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let bytes = super::read_bytes(path)?;
    read_table(&bytes, path, opts)
}

/// Reads `summary`.
pub fn read_summary_file(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let bytes = super::read_bytes(path)?;
    read_summary(&bytes, path, opts)
}

const COLUMNS: [&str; 6] = [
    "nproc",
    "number_ts",
    "exec_time",
    "waiting_time",
    "interpo_time",
    "SYPD",
];

/// Parses `table.csv` text. Public for the fuzz tests.
pub fn read_table(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut columns: Option<Vec<Option<usize>>> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut partial = None;
    for line in Lines::new(bytes) {
        // Tolerate a tab after each comma and spaces around values.
        let fields: Vec<&[u8]> = line.text.split(|&b| b == b',').map(text::trim).collect();
        if fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        let Some(cols) = &columns else {
            let find = |name: &str| {
                fields
                    .iter()
                    .position(|f| f.eq_ignore_ascii_case(name.as_bytes()))
            };
            if find("exec_time").is_none() || find("number_ts").is_none() {
                return Err(TimingError::parse(
                    path,
                    line.number,
                    format!(
                        "header {:?} lacks number_ts and exec_time; expected `,{}`",
                        text::show(line.text),
                        "nproc,number_ts,exec_time,waiting_time,interpo_time,SYPD,CHPSY,cpl_cost"
                    ),
                ));
            }
            columns = Some(COLUMNS.iter().map(|c| find(c)).collect());
            continue;
        };
        // In a line cut by a running writer only fields followed by a comma are whole.
        let whole = if line.complete {
            fields.len()
        } else {
            fields.len() - 1
        };
        if !line.complete {
            partial = Some(text::cut_note(path.display(), line.number));
        }
        let name = String::from_utf8_lossy(fields[0]).trim().to_string();
        if name.is_empty() || whole == 0 {
            continue;
        }
        let mut row = Row::named(&name);
        let get = |i: usize| -> Result<Option<(f64, usize)>, TimingError> {
            let Some(col) = cols[i] else { return Ok(None) };
            if col >= whole {
                return Ok(None);
            }
            let raw = fields[col];
            match text::number(raw) {
                Field::Value(v) => Ok(Some((v, decimals(raw)))),
                Field::Overflow => Ok(None),
                Field::Bad if raw.is_empty() => Ok(None),
                Field::Bad => Err(TimingError::parse(
                    path,
                    line.number,
                    format!(
                        "{} {:?} of {name} is not a number",
                        COLUMNS[i],
                        text::show(raw)
                    ),
                )),
            }
        };
        row.nproc = get(0)?.map(|(v, _)| v as u32).filter(|&n| n > 0);
        row.number_ts = get(1)?.map(|(v, _)| v as u64);
        row.exec_s = get(2)?.map(|(v, _)| v);
        row.wait_s = get(3)?.map(|(v, _)| v);
        row.interp_s = get(4)?.map(|(v, _)| v);
        if let Some((v, d)) = get(5)? {
            row.sypd = Some(v);
            row.sypd_decimals = d;
        }
        rows.push(row);
    }
    if columns.is_none() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: empty (no header yet)", path.display()),
        });
    }
    build(Format::Table, rows, partial, path, opts)
}

fn decimals(raw: &[u8]) -> usize {
    raw.iter()
        .position(|&b| b == b'.')
        .map_or(0, |p| raw.len() - p - 1)
}

/// Parses `summary` text. Public for the fuzz tests.
pub fn read_summary(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut rows: Vec<Row> = Vec::new();
    let mut current: Option<Row> = None;
    let mut wall: Option<f64> = None;
    let mut partial = None;
    for line in Lines::new(bytes) {
        if !line.complete {
            // A whole file ends on the run totals (`Coupled CHPSY: ...`) without a newline;
            // they are not used, so only a cut component line makes the reading partial.
            let t = text::trim(line.text);
            if !t.is_empty() && !t.starts_with(b"Coupled") && !t.starts_with(b"Total") {
                partial = Some(text::cut_note(path.display(), line.number));
            }
            break;
        }
        let t = text::trim(line.text);
        if t.is_empty() || t.iter().all(|&b| b == b'-') {
            if t.first() == Some(&b'-') {
                if let Some(r) = current.take() {
                    rows.push(r);
                }
            }
            continue;
        }
        let Some(colon) = t.iter().position(|&b| b == b':') else {
            // A bare name starts a component's block.
            if let Some(r) = current.take() {
                rows.push(r);
            }
            current = Some(Row::named(&String::from_utf8_lossy(t)));
            continue;
        };
        let key = String::from_utf8_lossy(text::trim(&t[..colon])).to_string();
        let value_text = text::trim(&t[colon + 1..]);
        let first = text::tokens(value_text).next().unwrap_or(b"");
        let first = first.strip_suffix(b"%").unwrap_or(first);
        let value = match text::number(first) {
            Field::Value(v) => Some(v),
            _ => None,
        };
        let Some(row) = current.as_mut() else {
            continue;
        };
        match key.as_str() {
            "Number of processes" => row.nproc = value.map(|v| v as u32).filter(|&n| n > 0),
            "Number of ts" => row.number_ts = value.map(|v| v as u64),
            "Coupled execution time" => wall = wall.or(value),
            "Component execution time" => row.exec_s = value,
            "Waiting time" => row.wait_s = value,
            "Interpolation time" | "Interpolating time" => row.interp_s = value,
            k if k == format!("{} SYPD", row.name) => {
                row.sypd = value;
                row.sypd_decimals = decimals(first);
            }
            _ => {}
        }
    }
    if let Some(r) = current.take() {
        rows.push(r);
    }
    rows.retain(|r| r.nproc.is_some() || r.exec_s.is_some());
    if rows.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no component written yet", path.display()),
        });
    }
    // The summary has no Coupled block: the coupled wall time is in every component's block
    // and the coupled step count is the largest component's.
    let mut coupled = Row::named("Coupled");
    coupled.exec_s = wall;
    coupled.number_ts = rows.iter().filter_map(|r| r.number_ts).max();
    coupled.nproc = rows
        .iter()
        .try_fold(0u32, |total, r| total.checked_add(r.nproc?));
    rows.push(coupled);
    build(Format::Summary, rows, partial, path, opts)
}

/// Turns parsed rows into a measurement.
fn build(
    format: Format,
    rows: Vec<Row>,
    mut partial: Option<String>,
    path: &Path,
    opts: &ReadOptions,
) -> Result<Reading, TimingError> {
    let (coupled, comps): (Vec<Row>, Vec<Row>) = rows
        .into_iter()
        .partition(|r| r.name.eq_ignore_ascii_case("Coupled"));
    let Some(coupled) = coupled.into_iter().next() else {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no Coupled row yet", path.display()),
        });
    };
    let mut m = Measurement::new(format);
    for r in &comps {
        let (Some(exec), Some(wait)) = (r.exec_s, r.wait_s) else {
            partial.get_or_insert_with(|| {
                format!("{}: the row of {} is incomplete", path.display(), r.name)
            });
            continue;
        };
        let steps = r.number_ts.map_or(0, |n| n.saturating_sub(1));
        let mut c = ComponentTiming::new(r.name.clone(), steps, exec, wait);
        c.nproc = opts.nproc.get(&r.name).copied().or(r.nproc);
        c.interp_s = r.interp_s;
        m.components.push(c);
    }
    if m.components.is_empty() {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no complete component row yet", path.display()),
        });
    }
    m.wall_s = coupled.exec_s;
    match coupled.number_ts.map(|n| n.saturating_sub(1)) {
        Some(steps) => {
            m.period_s = opts.period_s.or_else(|| {
                let p = infer_period(&comps, &coupled, steps)?;
                m.notes.push(format!(
                    "coupling period not given; {p} s recovered from the file's own SYPD (pass --period to set it)"
                ));
                Some(p)
            });
            m.sim_s = m.period_s.map(|p| steps as f64 * p);
        }
        None => {
            // Older summaries print no step count: the simulated time is what the file's own
            // SYPD and execution times imply, rounded to whole steps when the period is known.
            let implied = implied_sim_s(&comps, &coupled);
            m.period_s = opts.period_s;
            m.sim_s = match (implied, opts.period_s) {
                (Some(sim), Some(p)) => {
                    let steps = (sim / p).round().max(1.0);
                    for c in &mut m.components {
                        c.steps = steps as u64;
                    }
                    Some(steps * p)
                }
                (sim, _) => sim,
            };
            if m.sim_s.is_some() {
                m.notes.push(
                    "the file gives no step count; simulated time recovered from its own SYPD"
                        .into(),
                );
            }
        }
    }
    if m.wall_s.is_none() {
        partial.get_or_insert_with(|| {
            format!("{}: the Coupled row has no execution time", path.display())
        });
    }
    m.partial = partial;
    Ok(Reading::Measured(m))
}

/// The simulated seconds the file's own SYPD columns imply, `SYPD x exec_time` (in years), from
/// the row where that product is most precise (SYPD and seconds are both rounded when printed).
fn implied_sim_s(comps: &[Row], coupled: &Row) -> Option<f64> {
    comps
        .iter()
        .chain(std::iter::once(coupled))
        .filter_map(|r| {
            let sypd = r.sypd.filter(|s| s.is_finite() && *s > 0.0)?;
            let exec = r.exec_s.filter(|e| e.is_finite() && *e > 0.0)?;
            let uncertainty =
                0.5 * 10f64.powi(-(r.sypd_decimals.min(12) as i32)) / sypd + 0.0005 / exec;
            Some((uncertainty, sypd * SECONDS_PER_YEAR * exec / 86_400.0))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, sim)| sim)
        .filter(|sim| sim.is_finite() && *sim > 0.0)
}

/// The coupling period that makes the file's own SYPD come out over `steps` steps, snapped to a
/// divisor of a day when one is within 0.5 % (coupling periods are), else to a whole second.
fn infer_period(comps: &[Row], coupled: &Row, steps: u64) -> Option<f64> {
    if steps == 0 {
        return None;
    }
    let period = implied_sim_s(comps, coupled)? / steps as f64;
    let divisor = (1..=86_400u32)
        .filter(|d| 86_400 % d == 0)
        .map(f64::from)
        .min_by(|a, b| (a - period).abs().total_cmp(&(b - period).abs()))?;
    Some(if (divisor - period).abs() <= 0.005 * period {
        divisor
    } else {
        period.round().max(1.0)
    })
}
