//! `autolb simulate`: run the built-in stand-in coupled model and write raw LUCIA files (or,
//! with `--output oasis5`, an EC-Earth4 run directory).

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;

use autolb::curve::Curve;
use autolb::sim::{self, SimComponent, SimOutcome, SimRun, SimSettings};

use autolb::campaign;

use crate::shared::error::{coded, user};
use crate::shared::output::write_out;
use crate::shared::parse::{parse_key_value, parse_pes, reject_repeated_names};

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// A component and its PEs, `NAME=NPROC`, NAME as LUCIA writes it (e.g. ATMIFS=240);
    /// repeat for each component.
    #[arg(long = "comp", value_name = "NAME=NPROC", value_parser = parse_key_value, required_unless_present = "campaign", conflicts_with = "campaign")]
    pub comps: Vec<(String, String)>,
    /// Directory to write the `lucia.CC.RRRRRR` files (or the EC-Earth4 files) into (created
    /// if needed)
    /// [default with --campaign: the run's directory].
    #[arg(long, value_name = "DIR", required_unless_present = "campaign")]
    pub out: Option<PathBuf>,
    /// Simulate a run of this campaign: PEs and timing names from the campaign, its
    /// `[executor.sim]` settings if any (flags override them), the seed from the run id.
    #[arg(long, value_name = "DIR")]
    pub campaign: Option<PathBuf>,
    /// The run (with --campaign), e.g. i00-t01-r2 [default: $AUTOLB_RUN, which `campaign
    /// exec` and the executors set].
    #[arg(long, value_name = "ID", requires = "campaign")]
    pub run: Option<String>,
    /// OpenMP threads per rank of a hybrid component, `NAME=THREADS` (its --comp then counts
    /// MPI ranks, and its --curve needs rows at that thread count); repeat per component.
    #[arg(long = "threads", value_name = "NAME=THREADS", value_parser = parse_key_value, conflicts_with = "campaign")]
    pub threads: Vec<(String, String)>,
    /// Speed kept per doubling of threads per rank, hidden from the performance model
    /// [default: 0.92].
    #[arg(long = "thread-efficiency", value_name = "E")]
    pub thread_efficiency: Option<f64>,
    /// The timing output: `lucia` (raw LUCIA files) or `oasis5` (an EC-Earth4 run directory:
    /// OASIS 5's load_balancing_info.txt and log/001/timing.log) [default: lucia].
    #[arg(long, value_name = "FORMAT", value_parser = parse_output)]
    pub output: Option<sim::SimOutput>,
    /// Truth curve of a component, `NAME=PATH` (CSV `nproc,SYPD`). Default: the built-in
    /// EC-Earth3 SR curves for IFS/ATMIFS and NEMO/oceanx; other names need one.
    #[arg(long = "curve", value_name = "NAME=PATH", value_parser = parse_key_value)]
    pub curves: Vec<(String, String)>,
    /// Coupling steps to run [default: 40].
    #[arg(long, value_name = "N")]
    pub steps: Option<u32>,
    /// Coupling period in seconds [default: 2700].
    #[arg(long = "period", value_name = "S")]
    pub period_s: Option<f64>,
    /// Real seconds per modelled second (e.g. 0.01): files are written while the run "runs".
    /// Default: write at once.
    #[arg(long = "compress", value_name = "FACTOR")]
    pub compression: Option<f64>,
    /// Seed of the noise (same seed, same files) [default: 0; with --campaign it is
    /// combined with the run's own seed].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Relative standard deviation of a step's compute time [default: 0.02].
    #[arg(long, value_name = "SD")]
    pub noise: Option<f64>,
    /// Fields each component sends per exchange [default: 1].
    #[arg(long, value_name = "N")]
    pub fields: Option<u32>,
    /// Every how many steps the atmosphere has a heavy (radiation) step [default: 4; 0 = none].
    #[arg(long, value_name = "N")]
    pub heavy_every: Option<u32>,
    /// Make the run fail after N coupling steps: files end mid-line, exit status 1.
    #[arg(long = "fail", value_name = "N")]
    pub fail_after: Option<u32>,
    /// A standalone run of one component (one --comp): its speed from its curve, with no
    /// coupling (no interpolation, no put), as a scaling campaign measures it. With
    /// --campaign, a scaling campaign's runs are standalone by themselves.
    #[arg(long, conflicts_with = "campaign")]
    pub standalone: bool,
    /// Print what the model did as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &SimulateArgs) -> Result<()> {
    reject_repeated_names("--comp", &args.comps)?;
    reject_repeated_names("--curve", &args.curves)?;
    reject_repeated_names("--threads", &args.threads)?;
    check_flags(args)?;
    let run_id = args.run.clone().or_else(|| {
        args.campaign
            .as_ref()
            .and_then(|_| std::env::var("AUTOLB_RUN").ok())
    });
    if args.campaign.is_some() && run_id.is_none() {
        return Err(user(
            "--campaign needs the run: give --run ID, or run it through autolb (campaign exec, an executor), which sets AUTOLB_RUN",
        ));
    }
    let (run, out) = match (&args.campaign, &run_id) {
        (Some(dir), Some(id)) => {
            // Every campaign error, refused I/O included, is the user's to fix (exit 2).
            check_curve_names(dir, &args.curves)?;
            let curves = curve_paths(&args.curves)?;
            let (run, run_dir) = campaign::stand_in_run(dir, id, |s| {
                override_settings(s, args);
                // `--curve` wins over the campaign's `[executor.sim] curves` for its component.
                s.curves.get_or_insert_with(Default::default).extend(curves);
            })
            .map_err(user)?;
            (run, args.out.clone().unwrap_or(run_dir))
        }
        _ => {
            let mut settings = SimSettings::default();
            override_settings(&mut settings, args);
            settings.validate().map_err(user)?;
            if args.standalone {
                if args.comps.len() != 1 {
                    return Err(user(format!(
                        "--standalone runs one component; give one --comp NAME=NPROC, not {}",
                        args.comps.len()
                    )));
                }
                settings = settings.standalone();
            }
            let components = components(args)?;
            let out = args
                .out
                .clone()
                .ok_or_else(|| user("--out DIR is needed"))?;
            (
                SimRun::new(&settings, components, args.seed.unwrap_or(0)),
                out,
            )
        }
    };
    // An output directory that cannot be written (missing parent, read-only, full) is the
    // user's to fix: one line, exit 2, like every other bad input.
    let outcome = sim::simulate(&run, &out).map_err(user)?;
    let text = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&outcome)?)
    } else {
        summary(&outcome, &out, run.settings.output.unwrap_or_default())
    };
    write_out(&text)?;
    match &outcome.failed {
        // An asked-for failure is an outcome, not a bug: one plain line, exit code 1.
        Some(reason) => Err(coded(1, format!("the model failed: {reason}"))),
        None => Ok(()),
    }
}

/// The bounded flags, named as the user typed them (the settings' own check names the
/// campaign file's keys).
fn check_flags(args: &SimulateArgs) -> Result<()> {
    use autolb::limits;
    if let Some(n) = args.steps.filter(|&n| n > limits::MAX_SIM_STEPS) {
        return Err(user(format!(
            "--steps {n} is more than the {} coupling steps a stand-in run may have",
            limits::MAX_SIM_STEPS
        )));
    }
    if let Some(p) = args.period_s {
        limits::check_seconds("--period", p, limits::MAX_PERIOD_S, false).map_err(user)?;
    }
    if let Some(c) = args.compression {
        limits::check_seconds("--compress", c, limits::MAX_COMPRESSION, true).map_err(user)?;
    }
    Ok(())
}

/// The model settings given on the command line, over `settings`.
fn override_settings(settings: &mut SimSettings, args: &SimulateArgs) {
    let set = |slot: &mut Option<u32>, v: Option<u32>| {
        if v.is_some() {
            *slot = v;
        }
    };
    set(&mut settings.steps, args.steps);
    set(&mut settings.fields, args.fields);
    set(&mut settings.heavy_every, args.heavy_every);
    set(&mut settings.fail_after, args.fail_after);
    for (slot, v) in [
        (&mut settings.period_s, args.period_s),
        (&mut settings.compression, args.compression),
        (&mut settings.noise, args.noise),
    ] {
        if v.is_some() {
            *slot = v;
        }
    }
    if args.seed.is_some() {
        settings.seed = args.seed;
    }
    if args.thread_efficiency.is_some() {
        settings.thread_efficiency = args.thread_efficiency;
    }
    if args.output.is_some() {
        settings.output = args.output;
    }
}

/// Every `--curve NAME` names a component of the campaign (by its name or timing name), said
/// as the flag the user typed rather than as the `[executor.sim]` key it becomes.
fn check_curve_names(dir: &Path, curves: &[(String, String)]) -> Result<()> {
    if curves.is_empty() {
        return Ok(());
    }
    let state = campaign::State::load(dir).map_err(user)?;
    for (name, _) in curves {
        let known = state
            .components
            .iter()
            .any(|c| &c.name == name || &c.timing_name == name);
        if !known {
            return Err(user(format!(
                "--curve {name}=...: the campaign has no component {name}; use one of {}",
                state.component_names().join(", ")
            )));
        }
    }
    Ok(())
}

/// The `--curve` files by component, absolute: the campaign's settings read their own paths
/// relative to the campaign file, the command line's are relative to where it was typed.
fn curve_paths(curves: &[(String, String)]) -> Result<Vec<(String, PathBuf)>> {
    curves
        .iter()
        .map(|(name, path)| {
            let path = std::path::absolute(path).map_err(|e| {
                user(format!(
                    "--curve {name}={path}: cannot resolve the path: {e}"
                ))
            })?;
            Ok((name.clone(), path))
        })
        .collect()
}

fn parse_output(s: &str) -> Result<sim::SimOutput, String> {
    match s {
        "lucia" => Ok(sim::SimOutput::Lucia),
        "oasis5" => Ok(sim::SimOutput::Oasis5),
        _ => Err(format!("{s:?} is not an output; use lucia or oasis5")),
    }
}

fn components(args: &SimulateArgs) -> Result<Vec<SimComponent>> {
    for (name, _) in args.curves.iter().chain(&args.threads) {
        if !args.comps.iter().any(|(c, _)| c == name) {
            return Err(user(format!(
                "--curve {name}=...: no --comp {name}=NPROC to use it"
            )));
        }
    }
    args.comps
        .iter()
        .map(|(name, value)| {
            let nproc = parse_pes("--comp", name, value)?;
            let threads = match args.threads.iter().find(|(c, _)| c == name) {
                Some((_, t)) => t.parse().ok().filter(|&t| t > 0).ok_or_else(|| {
                    user(format!(
                        "--threads {name}={t}: give a positive whole number of threads per rank"
                    ))
                })?,
                None => 1,
            };
            let curve = match args.curves.iter().find(|(c, _)| c == name) {
                Some((_, path)) => {
                    let series = Curve::load_series(name.clone(), Path::new(path)).map_err(user)?;
                    sim::curve_at_threads(series, threads).map_err(user)?
                }
                None if threads > 1 => {
                    return Err(user(format!(
                        "--threads {name}={threads}: pass --curve {name}=PATH with rows at {threads} threads (the built-in curves are pure MPI)"
                    )))
                }
                None => sim::builtin_curve(name).ok_or_else(|| {
                    user(format!(
                        "no truth curve for {name}: pass --curve {name}=PATH (built in: IFS/ATMIFS, NEMO/oceanx)"
                    ))
                })?,
            };
            Ok(SimComponent {
                name: name.clone(),
                nproc,
                curve,
                threads,
            })
        })
        .collect()
}

fn summary(o: &SimOutcome, out: &Path, output: sim::SimOutput) -> String {
    let files: u32 = o.components.iter().map(|c| c.sampled_ranks).sum();
    let written = match output {
        sim::SimOutput::Lucia => format!("{files} LUCIA file(s)"),
        sim::SimOutput::Oasis5 => {
            "load_balancing_info.txt and log/001/timing.log (EC-Earth4)".to_string()
        }
        sim::SimOutput::Mct | sim::SimOutput::Cmeps => "a CIME timing summary".to_string(),
    };
    let mut s = format!(
        "wrote {written} to {} ({} exchanges; modelled wall {:.1} s)\n",
        out.display(),
        o.exchanges,
        o.total_wall_s
    );
    s.push_str(&format!(
        "analysis window: {} steps, {:.3} s wall, {:.0} s simulated\n",
        o.window_steps, o.window_wall_s, o.window_sim_s
    ));
    for c in &o.components {
        s.push_str(&format!(
            "  {:<10} {:>6} PEs  truth {:>8.3} SYPD  compute {:>9.3} s  wait {:>9.3} s\n",
            c.name,
            match c.threads {
                1 => c.nproc.to_string(),
                t => format!("{}x{t}", c.nproc),
            },
            c.truth_sypd,
            c.compute_s,
            c.wait_s
        ));
    }
    s
}
