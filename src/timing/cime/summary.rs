//! The `cesm_timing.CASE.LID` / `e3sm_timing.CASE.LID` summary CIME writes at the end of a run.
//!
//! Its parts, read by their labels so that every generation of the file reads alike (leading
//! spaces or none; `run_type` or `run type`; `pes per node` or `mpi tasks per node`; a `Driver`
//! line in newer files only, older ones being MCT's):
//! * a header of `Label : value` lines, of which autolb keeps the case, the driver and the
//!   `run length : N days (...)`;
//! * the component table, one row per class:
//!   `atm = cam   comp_pes   root_pe   tasks x threads   instances (stride)`;
//! * `pe count for cost estimate`, `Model Cost: X pe-hrs/simulated_year`, `Init Time`;
//! * the run-time block: `TOT Run Time:`, one `XXX Run Time:` per class and `CPL COMM Time:`,
//!   each `S seconds  S/D seconds/mday  Y myears/wday`.
//!
//! What follows (the PE-range note, MCT's driver timers) is not needed. The reading is complete
//! once the `CPL COMM Time` line, the last of the run-time block, is there.

use std::path::Path;

use super::{whole_lines, CimeComponent, CimeRun};
use crate::timing::{Format, Reading, TimingError};

/// The model names CIME puts before `_timing.`: CESM (and NorESM, which runs as `cesm`), E3SM
/// and its former name ACME.
const MODELS: [&str; 3] = ["cesm", "e3sm", "acme"];

/// Whether a file name is a CIME summary: `cesm_timing.*` or `e3sm_timing.*` (`acme_timing.*`
/// in older E3SM), but not the `*_timing_stats.*` files beside it. Other names are recognised
/// by their text.
pub fn is_summary_name(name: &str) -> bool {
    name.split_once("_timing.")
        .is_some_and(|(model, rest)| MODELS.contains(&model) && !rest.is_empty())
}

/// Whether text (the first few kilobytes of a file) is a CIME summary.
pub fn sniff(text: &str) -> bool {
    text.contains("TIMING PROFILE") && text.contains("comp_pes")
}

/// Reads a summary file.
pub fn read_file(path: &Path) -> Result<Reading, TimingError> {
    let bytes = crate::timing::read_bytes(path)?;
    parse(&String::from_utf8_lossy(&bytes), path)
}

/// The seconds on a run-time line (`TOT Run Time:  27411.240 seconds  15.020 seconds/mday
/// 15.76 myears/wday`) and the years per day at its end; `None` unless the line has that shape.
fn run_time_line(rest: &str) -> Option<(f64, f64)> {
    let t: Vec<&str> = rest.split_whitespace().collect();
    match t.as_slice() {
        [s, "seconds", _, "seconds/mday", y, "myears/wday"] => Some((number(s)?, number(y)?)),
        _ => None,
    }
}

fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// One row of the component table: `atm = cam 1536 0 1536 x 1 1 (1 )`.
fn table_row(line: &str) -> Option<CimeComponent> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let [class, "=", model, comp_pes, root, tasks, "x", threads, instances, rest @ ..] =
        t.as_slice()
    else {
        return None;
    };
    let stride_text: String = rest.concat();
    let stride = stride_text.strip_prefix('(')?.strip_suffix(')')?;
    let class = class.to_ascii_lowercase();
    if !class.chars().all(|c| c.is_ascii_alphanumeric())
        || comp_pes.parse::<u64>().is_err()
        || instances.parse::<u32>().is_err()
    {
        return None;
    }
    Some(CimeComponent {
        name: class,
        model: Some(model.to_string()),
        nproc: tasks.parse().ok()?,
        threads: Some(threads.parse().ok()?),
        root_pe: Some(root.parse().ok()?),
        stride: Some(stride.trim().parse().ok()?),
        run_s: None,
    })
}

/// Parses summary text read from `path`.
pub fn parse(text: &str, path: &Path) -> Result<Reading, TimingError> {
    let (lines, cut) = whole_lines(text);
    let mut run = CimeRun::new("MCT");
    let mut notes = Vec::new();
    let mut saw_driver = false;
    let mut in_table = false;
    let mut table_seen = false;
    let mut comm_seen = false;
    let mut last_line = 0;
    for &(no, raw) in &lines {
        last_line = no;
        let line = raw.trim();
        if in_table {
            if line.starts_with("---") {
                continue;
            }
            match table_row(line) {
                Some(c) => {
                    if run.components.iter().any(|o| o.name == c.name) {
                        return Err(TimingError::parse(
                            path,
                            no,
                            format!("the component table lists {} twice", c.name),
                        ));
                    }
                    run.components.push(c);
                    continue;
                }
                None if line.is_empty() || line.starts_with("total pes") => in_table = false,
                None => {
                    return Err(TimingError::parse(
                        path,
                        no,
                        format!(
                            "expected a component row `atm = cam  comp_pes  root_pe  tasks x threads  instances (stride)`, found {line:?}"
                        ),
                    ))
                }
            }
        }
        if line.starts_with("component") && line.contains("comp_pes") {
            in_table = true;
            table_seen = true;
            continue;
        }
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim().to_ascii_lowercase().replace('_', " ");
        let rest = rest.trim();
        let class = label
            .strip_suffix(" run time")
            .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric()));
        if let Some(class) = class {
            let Some((seconds, years)) = run_time_line(rest) else {
                return Err(TimingError::parse(
                    path,
                    no,
                    format!("expected `{label}: S seconds  S/D seconds/mday  Y myears/wday`, found {rest:?}"),
                ));
            };
            if class == "tot" {
                run.run_s = Some(seconds);
                run.sypd = Some(years);
            } else if let Some(c) = run.components.iter_mut().find(|c| c.name == class) {
                c.run_s = Some(seconds);
            } else {
                notes.push(format!(
                    "{} has a run time ({seconds} s) but no row in the component table",
                    class.to_ascii_uppercase()
                ));
            }
            if class == "cpl" {
                run.cpl_run_s = Some(seconds);
            }
            continue;
        }
        match label.as_str() {
            "case" => run.case = Some(rest.to_string()),
            "driver" => {
                run.driver = rest.to_string();
                saw_driver = true;
            }
            "run length" => {
                let days = rest.split_whitespace().collect::<Vec<_>>();
                if let [n, "days", ..] = days.as_slice() {
                    run.sim_days = number(n).filter(|d| *d > 0.0);
                }
            }
            "pe count for cost estimate" => run.cost_pes = rest.parse().ok(),
            "model cost" => {
                if let [v, "pe-hrs/simulated_year"] =
                    rest.split_whitespace().collect::<Vec<_>>().as_slice()
                {
                    run.chsy = number(v);
                }
            }
            "init time" => {
                if let [v, "seconds", ..] = rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                    run.init_s = number(v);
                }
            }
            "cpl comm time" => {
                let Some((seconds, _)) = run_time_line(rest) else {
                    return Err(TimingError::parse(
                        path,
                        no,
                        format!("expected `CPL COMM Time: S seconds  S/D seconds/mday  Y myears/wday`, found {rest:?}"),
                    ));
                };
                run.cpl_comm_s = Some(seconds);
                comm_seen = true;
                break;
            }
            _ => {}
        }
    }
    if !saw_driver && table_seen {
        notes.push("no Driver line: an MCT run (CMEPS summaries name their driver)".into());
    }
    let ends = if cut {
        format!("the file ends in the middle of line {}", last_line + 1)
    } else {
        format!("the file ends at line {last_line}")
    };
    if run.components.is_empty() || run.run_s.is_none() {
        let what = if run.components.is_empty() {
            "no component table"
        } else {
            "no TOT run time"
        };
        return Ok(Reading::Incomplete {
            reason: format!("{}: {what} yet ({ends})", path.display()),
        });
    }
    let partial = (!comm_seen).then(|| {
        let missing: Vec<String> = run
            .components
            .iter()
            .filter(|c| c.run_s.is_none())
            .map(|c| c.name.to_ascii_uppercase())
            .collect();
        if missing.is_empty() {
            format!("no CPL COMM time ({ends})")
        } else {
            format!("no run time for {} ({ends})", missing.join(", "))
        }
    });
    if partial.is_none() {
        if let Some(c) = run.components.iter().find(|c| c.run_s.is_none()) {
            notes.push(format!(
                "{} has no run-time line; its time is unknown",
                c.name.to_ascii_uppercase()
            ));
        }
    }
    if run.sim_days.is_none() {
        notes.push("no `run length : N days` line: simulated time unknown".into());
    }
    Ok(run.into_reading(Format::Cime, partial, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_are_cimes_own() {
        assert!(is_summary_name(
            "cesm_timing.b.e20.BHIST.9459679.180517-114852"
        ));
        assert!(is_summary_name("e3sm_timing.case.123.240101-000000"));
        assert!(!is_summary_name("cesm_timing_stats.240101-000000"));
        assert!(!is_summary_name("ifs_timing.csv"));
        assert!(!is_summary_name("timing.log"));
        assert!(!is_summary_name("cesm_timing."));
    }
}
