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

/// The header of a lucia_lite `table.csv`, field by field (compared without case).
const HEADER: [&str; 9] = [
    "",
    "nproc",
    "number_ts",
    "exec_time",
    "waiting_time",
    "interpo_time",
    "SYPD",
    "CHPSY",
    "cpl_cost",
];

/// Parses `table.csv` text. Public for the fuzz tests.
///
/// What a complete table holds: the exact header (one damaged byte in it is an error, never a
/// shift of the columns), rows of exactly the header's field count with distinct names, and a
/// `Coupled` row whose PEs are the sum of the component rows' (so a lost row is seen).
pub fn read_table(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut header_seen = false;
    let mut rows: Vec<Row> = Vec::new();
    let mut partial = None;
    for line in Lines::new(bytes) {
        // Tolerate a tab after each comma and spaces around values.
        let fields: Vec<&[u8]> = line.text.split(|&b| b == b',').map(text::trim).collect();
        if fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        if !header_seen {
            if !line.complete {
                break; // the header itself is still being written
            }
            check_header(&fields, line.number, line.text, path)?;
            header_seen = true;
            continue;
        }
        if fields.len() > HEADER.len() || (line.complete && fields.len() != HEADER.len()) {
            return Err(TimingError::parse(
                path,
                line.number,
                format!(
                    "{:?} has {} fields; the header has {}",
                    text::show(line.text),
                    fields.len(),
                    HEADER.len()
                ),
            ));
        }
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
        if rows.iter().any(|r| r.name == name) {
            return Err(TimingError::parse(
                path,
                line.number,
                format!("a second row of {name}; each component has one"),
            ));
        }
        let mut row = Row::named(&name);
        let get = |i: usize| -> Result<Option<(f64, usize)>, TimingError> {
            let col = i + 1;
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
    if !header_seen {
        return Ok(Reading::Incomplete {
            reason: format!("{}: empty (no header yet)", path.display()),
        });
    }
    if partial.is_none() {
        check_coupled_pes(&rows, path)?;
    }
    build(Format::Table, rows, partial, path, opts)
}

/// The header must be lucia_lite's, field for field: a damaged header would shift every value
/// into the wrong column.
fn check_header(
    fields: &[&[u8]],
    number: usize,
    line: &[u8],
    path: &Path,
) -> Result<(), TimingError> {
    let matches = fields.len() == HEADER.len()
        && fields
            .iter()
            .zip(HEADER)
            .all(|(f, h)| f.eq_ignore_ascii_case(h.as_bytes()));
    if matches {
        return Ok(());
    }
    Err(TimingError::parse(
        path,
        number,
        format!(
            "header {:?} is not lucia_lite's `{}`",
            text::show(line),
            HEADER.join(",")
        ),
    ))
}

/// In a whole table the Coupled row's PEs are the components' sum: a row lost from the middle
/// (or a damaged PE count) shows here instead of passing off a smaller run as complete.
fn check_coupled_pes(rows: &[Row], path: &Path) -> Result<(), TimingError> {
    let (coupled, comps): (Vec<&Row>, Vec<&Row>) = rows
        .iter()
        .partition(|r| r.name.eq_ignore_ascii_case("Coupled"));
    let Some(total) = coupled.first().and_then(|c| c.nproc) else {
        return Ok(());
    };
    let sum = comps.iter().try_fold(0u32, |t, r| t.checked_add(r.nproc?));
    match sum {
        Some(sum) if sum != total => Err(TimingError::Parse {
            file: path.to_path_buf(),
            line: 0,
            message: format!(
                "the component rows ({}) add up to {sum} PEs but the Coupled row says {total}: \
                 a row is missing or damaged",
                comps
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
        _ => Ok(()),
    }
}

fn decimals(raw: &[u8]) -> usize {
    raw.iter()
        .position(|&b| b == b'.')
        .map_or(0, |p| raw.len() - p - 1)
}

/// The run totals that end a `summary`, after every component block.
#[derive(Debug, Default)]
struct Totals {
    /// `Coupled SYPD: v` on a whole line: written after the last block, so every block before
    /// it is whole. Without it the file is still being written.
    sypd: Option<(f64, usize)>,
    /// `Total coupling execution cost (execution time (h) * num_proc): v`, the run's core hours
    /// (newer summaries).
    core_hours: Option<(f64, usize)>,
    /// `Coupled CHPSY: v` (older summaries: `Coupled CHPY`), its decimals, and whether it may
    /// still grow: its line has no newline (as the last line of a whole file) and no decimal
    /// point yet.
    chpsy: Option<(f64, usize, bool)>,
}

impl Totals {
    /// Reads a run-totals line; false when `key` is not one.
    fn take(&mut self, key: &str, raw: &[u8], whole_line: bool) -> bool {
        let value = match text::number(raw) {
            Field::Value(v) => Some((v, decimals(raw))),
            _ => None,
        };
        match key {
            "Coupled SYPD" if whole_line => self.sypd = value,
            "Coupled CHPSY" | "Coupled CHPY" => {
                let growing = !whole_line && !raw.contains(&b'.');
                self.chpsy = value.map(|(v, d)| (v, d, growing));
            }
            k if k.starts_with("Total coupling execution cost") => self.core_hours = value,
            k => return k.starts_with("Total coupling cost") || k == "Coupled SYPD",
        }
        true
    }
}

/// Parses `summary` text. Public for the fuzz tests.
///
/// What a complete summary holds: component blocks, then the run totals (`Coupled SYPD`,
/// `Coupled CHPSY`). Until the totals are there, a block may still follow and the reading is
/// partial. The totals also tell the run's PEs (core hours over wall hours, or CHPSY x SYPD /
/// 24): the blocks must add up to them, so a block lost from the middle is an error, never a
/// smaller run passed off as complete. Every block must give the same coupled execution time.
pub fn read_summary(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let mut rows: Vec<Row> = Vec::new();
    let mut current: Option<Row> = None;
    let mut walls: Vec<(String, f64)> = Vec::new();
    let mut totals = Totals::default();
    let mut partial = None;
    for line in Lines::new(bytes) {
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
            if !line.complete {
                partial = partial.or(line.cut(path.display()));
                break;
            }
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
        if totals.take(&key, first, line.complete) {
            if !line.complete {
                break; // the file ends inside the totals: the blocks are all whole
            }
            continue;
        }
        if !line.complete {
            partial = partial.or(line.cut(path.display()));
            break;
        }
        let Some(row) = current.as_mut() else {
            continue;
        };
        match key.as_str() {
            "Number of processes" => row.nproc = value.map(|v| v as u32).filter(|&n| n > 0),
            "Number of ts" => row.number_ts = value.map(|v| v as u64),
            "Coupled execution time" => {
                if let Some(v) = value {
                    walls.push((row.name.clone(), v));
                }
            }
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
    if let Some((name, _)) = rows
        .iter()
        .enumerate()
        .find(|(i, r)| rows[..*i].iter().any(|o| o.name == r.name))
        .map(|(_, r)| (r.name.clone(), ()))
    {
        return Err(TimingError::inconsistent(
            path,
            format!("a second block of {name}; each component has one"),
        ));
    }
    if let Some((first, w0)) = walls.first() {
        if let Some((other, w)) = walls.iter().find(|(_, w)| (w - w0).abs() > 1e-9) {
            return Err(TimingError::inconsistent(
                path,
                format!(
                    "the blocks disagree on the coupled execution time ({w0} s in {first}, {w} s \
                     in {other}); the file is damaged"
                ),
            ));
        }
    }
    let wall = walls.first().map(|(_, w)| *w);
    if partial.is_none() && totals.sypd.is_some() {
        partial = missing_label(&rows, &walls, path);
    }
    if partial.is_none() {
        match totals.sypd {
            None => {
                partial = Some(format!(
                    "{}: the run totals (`Coupled SYPD`) are not written yet; another component \
                     block may follow",
                    path.display()
                ))
            }
            Some(_) => partial = check_summary_pes(&rows, &totals, wall, path)?,
        }
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

/// Every block of a whole summary has these lines; one lost or with a damaged label (the
/// reader matches labels exactly) makes the reading partial, naming it.
fn missing_label(rows: &[Row], walls: &[(String, f64)], path: &Path) -> Option<String> {
    rows.iter().find_map(|r| {
        let label = if r.nproc.is_none() {
            "Number of processes"
        } else if !walls.iter().any(|(name, _)| *name == r.name) {
            "Coupled execution time"
        } else if r.exec_s.is_none() {
            "Component execution time"
        } else if r.wait_s.is_none() {
            "Waiting time"
        } else {
            return None;
        };
        Some(format!(
            "{}: the block of {} has no readable `{label}:` line (lost or damaged)",
            path.display(),
            r.name
        ))
    })
}

/// The run's PEs that the totals imply must be the blocks' sum (within what the printed
/// precision allows). `Ok(Some(note))` when the check fails only because the file ends inside
/// the CHPSY line (a writer still at it); an error when the file is whole and disagrees.
fn check_summary_pes(
    rows: &[Row],
    totals: &Totals,
    wall: Option<f64>,
    path: &Path,
) -> Result<Option<String>, TimingError> {
    let Some(sum) = rows
        .iter()
        .try_fold(0u32, |t, r| t.checked_add(r.nproc?))
        .map(f64::from)
    else {
        return Ok(None); // a block without PEs: `build` cannot measure it anyway
    };
    let half_unit = |d: usize| 0.5 * 10f64.powi(-(d.min(12) as i32));
    let (implied, tolerance, cut) = match (totals.core_hours, wall, totals.chpsy, totals.sypd) {
        (Some((ch, d)), Some(w), _, _) if w > 0.0 => {
            let p = ch * 3600.0 / w;
            (p, half_unit(d) * 3600.0 / w + p * 0.0005 / w, false)
        }
        (_, _, Some((chpsy, dc, growing)), Some((sypd, ds))) if chpsy > 0.0 && sypd > 0.0 => {
            let p = chpsy * sypd / 24.0;
            // A value still growing is cut when it has fewer digits than the one expected.
            let expected = 24.0 * sum / sypd;
            let cut = growing && chpsy.log10().floor() < expected.log10().floor();
            (p, p * (half_unit(dc) / chpsy + half_unit(ds) / sypd), cut)
        }
        _ => return Ok(None),
    };
    if (implied - sum).abs() <= tolerance + 1e-9 * sum {
        return Ok(None);
    }
    if cut {
        return Ok(Some(format!(
            "{}: the file ends inside the `Coupled CHPSY` line",
            path.display()
        )));
    }
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    Err(TimingError::inconsistent(
        path,
        format!(
            "the component blocks ({}) add up to {sum} PEs but the run totals imply {implied:.1}: \
             a block is missing or damaged",
            names.join(", ")
        ),
    ))
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
        c.nproc = super::resolve_nproc(path, &r.name, r.nproc, opts)?;
        c.interp_s = r.interp_s;
        if c.nproc.is_none() {
            // Both tables print every component's PEs: a missing one is a damaged line.
            partial.get_or_insert_with(|| {
                format!(
                    "{}: {} has no readable number of processes",
                    path.display(),
                    r.name
                )
            });
        }
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
                let (p, snapped) = infer_period(&comps, &coupled, steps)?;
                if snapped {
                    m.notes.push(format!(
                        "coupling period not given; {p} s recovered from the file's own SYPD (pass --period to set it)"
                    ));
                } else {
                    // Coupling periods divide a day: a period that does not is a guess from a
                    // damaged or imprecise SYPD, and SYPD from it must not pass for measured.
                    partial.get_or_insert_with(|| {
                        format!(
                            "{}: coupling period not given, and the {p} s the file's own SYPD implies is no divisor of a day: a guess; pass --period",
                            path.display()
                        )
                    });
                }
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
    super::consistency::check(&mut m, path)?;
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
/// divisor of a day when one is within 0.5 % (coupling periods are; then `true`), else rounded
/// to a whole second (`false`: a guess).
fn infer_period(comps: &[Row], coupled: &Row, steps: u64) -> Option<(f64, bool)> {
    if steps == 0 {
        return None;
    }
    let period = implied_sim_s(comps, coupled)? / steps as f64;
    let divisor = (1..=86_400u32)
        .filter(|d| 86_400 % d == 0)
        .map(f64::from)
        .min_by(|a, b| (a - period).abs().total_cmp(&(b - period).abs()))?;
    Some(if (divisor - period).abs() <= 0.005 * period {
        (divisor, true)
    } else {
        (period.round().max(1.0), false)
    })
}
