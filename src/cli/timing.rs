//! `autolb timing`: what one run measured, as a table or one JSON object.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::timing::{self, Format, Measurement, ReadOptions, Reading};

use crate::shared::error::user;
use crate::shared::output::{errln, write_out};
use crate::shared::parse::{parse_key_value, parse_pes, reject_repeated_names};

#[derive(Debug, Args)]
pub struct TimingArgs {
    /// A run's timing output: a directory of raw `lucia.CC.RRRRRR` files, or a `table.csv`,
    /// `summary`, `lucia.log`, `load_balancing_info.txt` or per-step CSV (or a directory
    /// holding one of them), an EC-Earth4 run directory (`log/NNN/` legs), or a CIME run's
    /// `cesm_timing.*`/`e3sm_timing.*` or `ESMF_Profile.summary` (or its case directory).
    /// With --layout-check or --curves, any number of CIME summaries or directories holding them.
    #[arg(value_name = "PATH", required = true, num_args = 1..)]
    pub paths: Vec<PathBuf>,
    /// The layout model's TOT error over CIME runs: for every `cesm_timing.*` summary given
    /// (or in a directory given), the TOT the layout tree gives from the components' run times
    /// beside the measured TOT, and the median and largest error.
    #[arg(long)]
    pub layout_check: bool,
    /// Each component class's scalability curve from CIME runs at several layouts: reads every
    /// `cesm_timing.*` summary given (or in a directory given, or its `timing/` folder) and
    /// writes OUTDIR/CLASS.csv (`nproc,SYPD`, nproc = tasks x threads), the mean SYPD where
    /// cores repeat.
    #[arg(long, value_name = "OUTDIR", conflicts_with = "layout_check")]
    pub curves: Option<PathBuf>,
    /// Read as this format instead of detecting it: lucia-raw, lucia-log, oasis5, table,
    /// summary, steps, ecearth4, cime, esmf.
    #[arg(long, value_name = "F")]
    pub format: Option<Format>,
    /// Coupling period in seconds (simulated time per coupling step; EC-Earth3 SR: 2700).
    #[arg(long = "period", value_name = "S")]
    pub period_s: Option<f64>,
    /// PEs of a component, `NAME=N`, with NAME as the timing output writes it (e.g.
    /// ATMIFS=240); raw LUCIA files do not carry them. Repeat for each component.
    #[arg(long = "nproc", value_name = "NAME=N", value_parser = parse_key_value)]
    pub nproc: Vec<(String, String)>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &TimingArgs) -> Result<()> {
    if args.layout_check {
        return write_out(&super::timing_cime::layout_check(&args.paths, args.json)?);
    }
    if let Some(out_dir) = &args.curves {
        return write_out(&super::timing_cime::curves(&args.paths, out_dir)?);
    }
    let [path] = args.paths.as_slice() else {
        return Err(user(format!(
            "{} paths given; `autolb timing` reads one run (several only with --layout-check or --curves)",
            args.paths.len()
        )));
    };
    let opts = options(args)?;
    let measurement = match timing::read(path, &opts).map_err(user)? {
        Reading::Measured(m) => m,
        Reading::Incomplete { reason } => {
            return Err(user(format!(
                "{}: nothing complete to measure yet: {}",
                path.display(),
                timing::reason_without_path(&reason, path)
            )))
        }
    };
    if let Some(run) = measurement.cime.as_deref() {
        let text = if args.json {
            let json = super::timing_cime::CimeJson::new(&measurement, run);
            let mut t = serde_json::to_string_pretty(&json).map_err(user)?;
            t.push('\n');
            t
        } else {
            super::timing_cime::table(&measurement, run)
        };
        return write_out(&text);
    }
    for note in name_disagreements(path, &measurement) {
        errln!("autolb: note: {note}");
    }
    let text = if args.json {
        let mut t =
            serde_json::to_string_pretty(&MeasurementJson::new(&measurement)).map_err(user)?;
        t.push('\n');
        t
    } else {
        table(&measurement)
    };
    write_out(&text)
}

/// Where the run directory's name (`1008IFS_411NEMO`, as lucia_lite collections are named) and
/// the timing files disagree on a component's PEs, as `model check` notes it. The name uses model
/// names; the files, the names OASIS gives (EC-Earth3's ATMIFS and oceanx are known, other
/// components are matched by their timing name).
fn name_disagreements(path: &Path, m: &Measurement) -> Vec<String> {
    use autolb::model::measured::{self, Naming};
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    };
    let Some(dir_name) = dir.file_name() else {
        return Vec::new();
    };
    let namings: Vec<Naming> = m
        .components
        .iter()
        .map(|c| {
            let model = autolb::example::COMPONENTS
                .iter()
                .find(|(_, timing)| timing.eq_ignore_ascii_case(&c.name))
                .map_or(c.name.as_str(), |(model, _)| model);
            Naming::new(model, c.name.clone())
        })
        .collect();
    let named = measured::nproc_named(&dir_name.to_string_lossy(), &namings);
    let in_files = namings
        .iter()
        .zip(&m.components)
        .filter_map(|(n, c)| Some((n.name.as_str(), c.nproc?)));
    measured::name_disagreements(dir, &named, in_files)
}

fn options(args: &TimingArgs) -> Result<ReadOptions> {
    reject_repeated_names("--nproc", &args.nproc)?;
    if let Some(p) = args.period_s {
        autolb::limits::check_seconds("--period", p, autolb::limits::MAX_PERIOD_S, false)
            .map_err(user)?;
    }
    let mut nproc = BTreeMap::new();
    for (name, value) in &args.nproc {
        nproc.insert(name.clone(), parse_pes("--nproc", name, value)?);
    }
    Ok(ReadOptions {
        format: args.format,
        period_s: args.period_s,
        nproc,
    })
}

/// One component of the `--json` object.
#[derive(Serialize)]
struct ComponentJson<'a> {
    name: &'a str,
    nproc: Option<u32>,
    steps: u64,
    compute_s: f64,
    /// The computing time as written, when it was read as another (a helper's negative time
    /// read as 0 s); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    compute_as_written_s: Option<f64>,
    wait_s: f64,
    interp_s: Option<f64>,
    send_s: Option<f64>,
    jitter_s: Option<f64>,
    sypd: Option<f64>,
    partial_coupling_cost: Option<f64>,
    sampled_ranks: Option<u32>,
}

/// The coupled run of the `--json` object.
#[derive(Serialize)]
struct CoupledJson {
    wall_s: Option<f64>,
    sim_s: Option<f64>,
    sypd: Option<f64>,
    chsy: Option<f64>,
    coupling_cost: Option<f64>,
}

/// The `--json` object: the components and the coupled run, then extras: `sampled_ranks` per
/// component (raw LUCIA), `format`, `partial` and `notes`.
#[derive(Serialize)]
pub struct MeasurementJson<'a> {
    components: Vec<ComponentJson<'a>>,
    coupled: CoupledJson,
    format: &'static str,
    partial: Option<&'a str>,
    notes: &'a [String],
}

impl<'a> MeasurementJson<'a> {
    pub fn new(m: &'a Measurement) -> Self {
        MeasurementJson {
            components: m
                .components
                .iter()
                .enumerate()
                .map(|(i, c)| ComponentJson {
                    name: &c.name,
                    nproc: c.nproc,
                    steps: c.steps,
                    compute_s: c.compute_s,
                    compute_as_written_s: c.compute_as_written_s,
                    wait_s: c.wait_s,
                    interp_s: c.interp_s,
                    send_s: c.send_s,
                    jitter_s: c.jitter_s,
                    sypd: m.component_sypd(i),
                    partial_coupling_cost: m.partial_coupling_cost(i),
                    sampled_ranks: c.sampled_ranks,
                })
                .collect(),
            coupled: CoupledJson {
                wall_s: m.wall_s,
                sim_s: m.sim_s,
                sypd: m.coupled_sypd(),
                chsy: m.chsy(),
                coupling_cost: m.coupling_cost(),
            },
            format: m.format.name(),
            partial: m.partial.as_deref(),
            notes: &m.notes,
        }
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.2}%", v * 100.0))
}

/// The readable table: one line per component, then the coupled line.
pub fn table(m: &Measurement) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "format: {}", m.format);
    if let Some(p) = &m.partial {
        let _ = writeln!(out, "PARTIAL: only the complete part was measured: {p}");
    }
    let _ = writeln!(
        out,
        "{:<10} {:>6} {:>6} {:>11} {:>10} {:>9} {:>8} {:>9} {:>9} {:>10}",
        "component",
        "nproc",
        "steps",
        "compute_s",
        "wait_s",
        "interp_s",
        "send_s",
        "jitter_s",
        "SYPD",
        "cpl cost"
    );
    for (i, c) in m.components.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>6} {:>11.3} {:>10.3} {:>9} {:>8} {:>9} {:>9} {:>10}",
            c.name,
            c.nproc.map_or_else(|| "-".to_string(), |n| n.to_string()),
            c.steps,
            c.compute_s,
            c.wait_s,
            opt(c.interp_s, 3),
            opt(c.send_s, 3),
            opt(c.jitter_s, 3),
            opt(m.component_sypd(i), 3),
            pct(m.partial_coupling_cost(i)),
        );
    }
    let _ = writeln!(
        out,
        "coupled: wall {} s, simulated {} s, SYPD {}, CHSY {}, coupling cost {}",
        opt(m.wall_s, 3),
        opt(m.sim_s, 0),
        opt(m.coupled_sypd(), 3),
        opt(m.chsy(), 1),
        pct(m.coupling_cost()),
    );
    for series in &m.series {
        let _ = writeln!(out, "{}", series_line(series));
    }
    for note in &m.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// One line about a per-step series: how irregular the steps are.
fn series_line(series: &autolb::timing::StepSeries) -> String {
    let compute: Vec<f64> = series.rows.iter().map(|r| r.compute_s).collect();
    let n = compute.len().max(1) as f64;
    let mean = compute.iter().sum::<f64>() / n;
    let min = compute.iter().copied().fold(f64::INFINITY, f64::min);
    let max = compute.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let waiting = series.rows.iter().filter(|r| r.wait_s > 0.0).count();
    format!(
        "series {}: {} steps, compute per step mean {mean:.3} s (min {min:.3}, max {max:.3}), waiting in {waiting} of them",
        series.component,
        series.rows.len()
    )
}
