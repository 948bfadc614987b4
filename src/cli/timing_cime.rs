//! `autolb timing` for CIME runs (CESM, E3SM, NorESM): the run's components with their PE
//! ranges and run times, the layout those ranges imply and the layout model's TOT, and
//! `--layout-check`, the layout model's error over many runs, and `--curves`, each class's
//! scalability curve from runs at several layouts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::timing::cime::overhead::{self, CouplerOverhead, OverheadSample};
use autolb::timing::cime::{curves, CimeComponent, CimeRun};
use autolb::timing::{self, Format, Measurement, ReadOptions, Reading};

use crate::shared::error::user;
use crate::shared::output::errln;

/// The coupled run of the `--json` object.
#[derive(Serialize)]
struct CoupledJson {
    run_s: Option<f64>,
    sim_s: Option<f64>,
    sypd: Option<f64>,
    chsy: Option<f64>,
    cost_pes: Option<u32>,
    cores: Option<u64>,
    cpl_run_s: Option<f64>,
    cpl_comm_s: Option<f64>,
    init_s: Option<f64>,
}

/// The `--json` object of a CIME run.
#[derive(Serialize)]
pub struct CimeJson<'a> {
    format: &'static str,
    driver: &'a str,
    case: Option<&'a str>,
    components: &'a [CimeComponent],
    coupled: CoupledJson,
    layout: Option<String>,
    predicted_run_s: Option<f64>,
    partial: Option<&'a str>,
    notes: &'a [String],
}

impl<'a> CimeJson<'a> {
    pub fn new(m: &'a Measurement, run: &'a CimeRun) -> Self {
        CimeJson {
            format: m.format.name(),
            driver: &run.driver,
            case: run.case.as_deref(),
            components: &run.components,
            coupled: CoupledJson {
                run_s: run.run_s,
                sim_s: m.sim_s,
                sypd: run.sypd.or_else(|| m.coupled_sypd()),
                chsy: run.chsy.or_else(|| m.chsy()),
                cost_pes: run.cost_pes,
                cores: run.cores(),
                cpl_run_s: run.cpl_run_s,
                cpl_comm_s: run.cpl_comm_s,
                init_s: run.init_s,
            },
            layout: run.layout().map(|l| l.to_string()),
            predicted_run_s: run.predicted_run_s(),
            partial: m.partial.as_deref(),
            notes: &m.notes,
        }
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

/// The readable table of a CIME run.
pub fn table(m: &Measurement, run: &CimeRun) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "format: {} ({} driver){}",
        m.format,
        run.driver,
        run.case
            .as_deref()
            .map(|c| format!(", case {c}"))
            .unwrap_or_default()
    );
    if let Some(p) = &m.partial {
        let _ = writeln!(out, "PARTIAL: only the complete part was read: {p}");
    }
    let _ = writeln!(
        out,
        "{:<9} {:<8} {:>7} {:>7} {:>7} {:>6} {:>12}",
        "component", "model", "nproc", "threads", "root_pe", "stride", "run_s"
    );
    for c in &run.components {
        let _ = writeln!(
            out,
            "{:<9} {:<8} {:>7} {:>7} {:>7} {:>6} {:>12}",
            c.name,
            c.model.as_deref().unwrap_or("-"),
            c.nproc,
            opt(c.threads),
            opt(c.root_pe),
            opt(c.stride),
            secs(c.run_s),
        );
    }
    let json = CimeJson::new(m, run);
    let c = &json.coupled;
    let mut parts = vec![format!("TOT {} s", secs(c.run_s))];
    if let Some(days) = run.sim_days {
        parts.push(format!("simulated {days} days"));
    }
    if let Some(sypd) = c.sypd {
        parts.push(format!("SYPD {sypd:.2}"));
    }
    if let Some(chsy) = c.chsy {
        parts.push(format!("CHSY {chsy:.1}"));
    }
    match (c.cost_pes, c.cores) {
        (Some(pes), Some(cores)) => {
            parts.push(format!("cost on {pes} PEs ({cores} cores by CIME's count)"));
        }
        (None, Some(cores)) => parts.push(format!("{cores} cores by CIME's count")),
        (Some(pes), None) => parts.push(format!("cost on {pes} PEs")),
        (None, None) => {}
    }
    parts.push(format!("CPL {} s", secs(c.cpl_run_s)));
    parts.push(format!("CPL COMM {} s", secs(c.cpl_comm_s)));
    let _ = writeln!(out, "coupled: {}", parts.join(", "));
    match (&json.layout, json.predicted_run_s, run.run_s) {
        (Some(layout), Some(predicted), Some(tot)) => {
            let _ = writeln!(out, "layout: {layout}");
            let _ = writeln!(
                out,
                "layout model: TOT {predicted:.3} s from the components' run times ({:+.2} % of the measured)",
                100.0 * (predicted - tot) / tot
            );
        }
        (Some(layout), _, _) => {
            let _ = writeln!(out, "layout: {layout}");
        }
        _ => {}
    }
    for note in &m.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// One run of `--layout-check`.
#[derive(Serialize)]
struct CheckRow {
    file: String,
    layout: String,
    run_s: f64,
    predicted_run_s: f64,
    error: f64,
    per_pe_run_s: Option<f64>,
    per_pe_error: Option<f64>,
    /// The tree plus the overhead learned from the other runs (leave-one-out).
    overhead_run_s: Option<f64>,
    overhead_error: Option<f64>,
}

/// The `--layout-check --json` object.
#[derive(Serialize)]
struct CheckJson {
    runs: Vec<CheckRow>,
    median_abs_error: f64,
    max_abs_error: f64,
    per_pe_median_abs_error: Option<f64>,
    per_pe_max_abs_error: Option<f64>,
    /// The coupler overhead fitted on every run: core-seconds per simulated day.
    overhead_core_s_per_day: Option<f64>,
    overhead_median_abs_error: Option<f64>,
    overhead_max_abs_error: Option<f64>,
    skipped: Vec<String>,
}

/// The CIME summaries a path names: a file itself, a directory every summary in it and in its
/// `timing/` folder, in name order.
fn summaries(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut found = Vec::new();
    for place in [path.to_path_buf(), path.join("timing")] {
        let Ok(entries) = std::fs::read_dir(&place) else {
            continue;
        };
        for entry in entries {
            let entry = entry.map_err(|e| user(format!("{}: {e}", place.display())))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if timing::cime::summary::is_summary_name(&name)
                && !name.ends_with(".gz")
                && entry.path().is_file()
            {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(user(format!(
            "{}: no cesm_timing.* or e3sm_timing.* file in it or in its timing/ folder",
            path.display()
        )));
    }
    Ok(found)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    autolb::model::check::median_sorted(&v)
}

/// `--layout-check`: for every CIME summary under `paths`, the layout model's TOT beside the
/// measured one, the per-PE sum's and the tree plus the coupler overhead learned from the other
/// runs ([`overhead`]), then the median and largest errors.
pub fn layout_check(paths: &[PathBuf], json: bool) -> Result<String> {
    let opts = ReadOptions {
        format: Some(Format::Cime),
        ..ReadOptions::default()
    };
    let mut runs = Vec::new();
    let mut samples = Vec::new();
    let mut skipped = Vec::new();
    for path in paths {
        for file in summaries(path)? {
            let name = file.display().to_string();
            let m = match timing::read(&file, &opts).map_err(user)? {
                Reading::Measured(m) if m.partial.is_none() => m,
                Reading::Measured(m) => {
                    skipped.push(format!(
                        "{name}: partial ({})",
                        m.partial.unwrap_or_default()
                    ));
                    continue;
                }
                Reading::Incomplete { reason } => {
                    skipped.push(reason);
                    continue;
                }
            };
            let Some(run) = m.cime.as_deref() else {
                continue;
            };
            let (Some(layout), Some(predicted), Some(tot)) = (
                run.layout(),
                run.predicted_run_s(),
                run.run_s.filter(|t| *t > 0.0),
            ) else {
                skipped.push(format!("{name}: a PE range or a run time is missing"));
                continue;
            };
            let per_pe = run.per_pe_run_s();
            samples.push(OverheadSample::from_run(run));
            runs.push(CheckRow {
                file: name,
                layout: layout.to_string(),
                run_s: tot,
                predicted_run_s: predicted,
                error: (predicted - tot) / tot,
                per_pe_run_s: per_pe,
                per_pe_error: per_pe.map(|p| (p - tot) / tot),
                overhead_run_s: None,
                overhead_error: None,
            });
        }
    }
    if runs.is_empty() {
        return Err(user(format!(
            "no whole CIME summary to check{}",
            skipped
                .first()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        )));
    }
    // The overhead is checked when every run gives a sample (a run without its simulated days
    // gives none) and there are two or more.
    let samples: Option<Vec<OverheadSample>> = samples.into_iter().collect();
    let overhead_fit = samples.as_deref().and_then(CouplerOverhead::fit);
    if let Some(predicted) = samples.as_deref().and_then(overhead::leave_one_out) {
        for (r, p) in runs.iter_mut().zip(predicted) {
            r.overhead_run_s = Some(p);
            r.overhead_error = Some((p - r.run_s) / r.run_s);
        }
    }
    let overhead_abs: Option<Vec<f64>> = runs
        .iter()
        .map(|r| r.overhead_error.map(f64::abs))
        .collect();
    let abs: Vec<f64> = runs.iter().map(|r| r.error.abs()).collect();
    let per_pe_abs: Option<Vec<f64>> = runs.iter().map(|r| r.per_pe_error.map(f64::abs)).collect();
    let check = CheckJson {
        median_abs_error: median(abs.clone()),
        max_abs_error: abs.iter().copied().fold(0.0, f64::max),
        per_pe_median_abs_error: per_pe_abs.clone().map(median),
        per_pe_max_abs_error: per_pe_abs.map(|v| v.into_iter().fold(0.0, f64::max)),
        overhead_core_s_per_day: overhead_fit.map(|f| f.core_s_per_day),
        overhead_median_abs_error: overhead_abs.clone().map(median),
        overhead_max_abs_error: overhead_abs.map(|v| v.into_iter().fold(0.0, f64::max)),
        runs,
        skipped,
    };
    if json {
        let mut t = serde_json::to_string_pretty(&check).map_err(user)?;
        t.push('\n');
        return Ok(t);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>12} {:>8} {:>12} {:>8} {:>12} {:>8}  layout, file",
        "TOT_s", "model_s", "error", "per_PE_s", "error", "+overhead_s", "error"
    );
    for r in &check.runs {
        let file = Path::new(&r.file)
            .file_name()
            .map_or(r.file.clone(), |n| n.to_string_lossy().to_string());
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.3} {:>7.2}% {:>12} {:>8} {:>12} {:>8}  {}  {file}",
            r.run_s,
            r.predicted_run_s,
            100.0 * r.error,
            r.per_pe_run_s.map_or("-".into(), |v| format!("{v:.3}")),
            r.per_pe_error
                .map_or("-".into(), |v| format!("{:.2}%", 100.0 * v)),
            r.overhead_run_s.map_or("-".into(), |v| format!("{v:.3}")),
            r.overhead_error
                .map_or("-".into(), |v| format!("{:.2}%", 100.0 * v)),
            r.layout,
        );
    }
    let _ = writeln!(
        out,
        "layout model: |error| median {:.2} %, max {:.2} % over {} runs",
        100.0 * check.median_abs_error,
        100.0 * check.max_abs_error,
        check.runs.len()
    );
    if let (Some(med), Some(max)) = (check.per_pe_median_abs_error, check.per_pe_max_abs_error) {
        let _ = writeln!(
            out,
            "per-PE sum:   |error| median {:.2} %, max {:.2} %",
            100.0 * med,
            100.0 * max
        );
    }
    if let (Some(med), Some(max), Some(k)) = (
        check.overhead_median_abs_error,
        check.overhead_max_abs_error,
        check.overhead_core_s_per_day,
    ) {
        let _ = writeln!(
            out,
            "+ overhead:   |error| median {:.2} %, max {:.2} %, each run left out of the fit",
            100.0 * med,
            100.0 * max
        );
        let _ = writeln!(
            out,
            "overhead: {k:.1} core-seconds per simulated day over the coupler's cores, fitted on all {} runs",
            check.runs.len()
        );
    }
    for s in &check.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    Ok(out)
}

/// `--curves`: every CIME summary under `paths` read whole, each class's curve written to
/// `out_dir/CLASS.csv`, one line per class saying what was written or why not.
pub fn curves(paths: &[PathBuf], out_dir: &Path) -> Result<String> {
    let opts = ReadOptions {
        format: Some(Format::Cime),
        ..ReadOptions::default()
    };
    let mut files = Vec::new();
    for path in paths {
        for file in summaries(path)? {
            let key = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            if !files.iter().any(|(k, _)| *k == key) {
                files.push((key, file));
            }
        }
    }
    let mut runs: Vec<(String, CimeRun)> = Vec::new();
    for (_, file) in &files {
        let name = file.display().to_string();
        let run = match timing::read(file, &opts).map_err(user)? {
            Reading::Measured(m) if m.partial.is_none() => m.cime.map(|r| *r),
            Reading::Measured(m) => {
                return Err(user(format!(
                    "{name}: partial ({}); a cut run would put a wrong point on the curves: \
                     leave it out or give its whole copy",
                    m.partial.unwrap_or_default()
                )))
            }
            Reading::Incomplete { reason } => return Err(user(reason)),
        };
        let run = run.ok_or_else(|| user(format!("{name}: not a CIME summary")))?;
        let label = file
            .file_name()
            .map_or(name.clone(), |n| n.to_string_lossy().to_string());
        runs.push((label, run));
    }
    let mut cases: Vec<&str> = Vec::new();
    for (_, run) in &runs {
        let case = run.case.as_deref().unwrap_or("(unnamed)");
        if !cases.contains(&case) {
            cases.push(case);
        }
    }
    if cases.len() > 1 {
        errln!(
            "autolb: warning: the runs are of {} cases ({}); a curve mixes them only if they \
             share grid, compset and machine",
            cases.len(),
            cases.join(", ")
        );
    }
    let borrowed: Vec<(String, &CimeRun)> = runs.iter().map(|(l, r)| (l.clone(), r)).collect();
    let curves = curves::class_curves(&borrowed).map_err(user)?;
    if curves.iter().all(|c| c.problem().is_some()) {
        return Err(user(format!(
            "no class has runs at 2 or more core counts in the {} run{} given; run the case at \
             other task counts (NTASKS) and give those timing files too",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        )));
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|e| user(format!("{}: cannot create it: {e}", out_dir.display())))?;
    let mut out = String::new();
    for curve in &curves {
        let points: Vec<String> = curve
            .points
            .iter()
            .map(|p| {
                let (lo, hi) = p.spread();
                if p.runs.len() > 1 {
                    format!(
                        "{}:{:.3} ({lo:.3}-{hi:.3}, {} runs)",
                        p.cores,
                        p.sypd(),
                        p.runs.len()
                    )
                } else {
                    format!("{}:{:.3}", p.cores, p.sypd())
                }
            })
            .collect();
        if let Some(problem) = curve.problem() {
            let _ = writeln!(
                out,
                "{}: not written: {problem} (cores:SYPD {})",
                curve.name,
                points.join(" ")
            );
            continue;
        }
        let file = out_dir.join(format!("{}.csv", curve.name));
        autolb::fsutil::write_atomically(&file, curve.to_csv().as_bytes())
            .map_err(|e| user(format!("{}: cannot write it: {e}", file.display())))?;
        let _ = writeln!(
            out,
            "{}: {} ({} runs, {} core counts), cores:SYPD {}",
            curve.name,
            file.display(),
            curve.run_count(),
            curve.points.len(),
            points.join(" ")
        );
    }
    Ok(out)
}
