//! Scaling campaigns with slow runs: how far the curves they end with are from the truth when
//! a share of runs is several times slow (a bad node, a busy file system), per design
//! (docs/src/benchmarks.md, "Slow runs").
//!
//! `cargo run --release --example scaling_slow_runs` runs seeds 1-6 of the plain family, then
//! `--fresh N` (default 6) seeds of unseen families drawn when it runs (printed; `-- --seeds
//! LIST --unseen` runs them again). Each case runs three scaling campaigns on the stand-in
//! model with `[executor.sim] slow_runs = 0.25, slow_factor = 3` (`--slow`, `--factor`):
//! `design = "standalone"` (speed from the timing output), the same with `timing = "wall"`,
//! and `design = "coupled"`; each with `counts = 4`, `repetitions = 2` (`--counts`,
//! `--repetitions`), every component over its measured range.
//!
//! Reported per campaign: runs, the worst relative error of any point of the final curves
//! against the truth (standalone: the noise-free standalone speed; wall timing: that speed
//! with the stand-in's one second of start-up; coupled: the component's noise-free
//! coupled-mode speed), the points beyond 8 %, the runs left out as slow and the counts kept
//! as real dips.

mod common;

use std::path::Path;

use autolb::campaign::strategy::scaling::output::curves;
use autolb::campaign::State;
use autolb::config::{CampaignFile, ScalingDesign, ScalingTable, ScalingTiming};
use autolb::sim::synthetic::{write_curve_csv, SyntheticCase};
use clap::Parser;
use common::{Seeds, FRESH_SEEDS};

/// The error every point of a final curve must stay within.
const LIMIT: f64 = 0.08;

/// Scaling campaigns with a share of slow runs, per design (docs/src/benchmarks.md).
#[derive(Parser)]
struct Args {
    /// The seeds to run, as one set: a range like 1-6 or a list like 3,7,10 [default: 1-6,
    /// then fresh seeds].
    #[arg(long)]
    seeds: Option<Seeds>,
    /// Leave the fixed sets out: only the fresh seeds.
    #[arg(long)]
    skip_fixed: bool,
    /// `--seeds` are cases of unseen families.
    #[arg(long)]
    unseen: bool,
    /// How many fresh seeds of unseen families to draw after the fixed set (0: none).
    #[arg(long, default_value_t = FRESH_SEEDS / 2)]
    fresh: usize,
    /// Share of runs that are slow.
    #[arg(long, default_value_t = 0.25)]
    slow: f64,
    /// How many times slower a slow run is.
    #[arg(long, default_value_t = 3.0)]
    factor: f64,
    /// PE counts per component in the first series.
    #[arg(long, default_value_t = 4)]
    counts: u32,
    /// Runs per count.
    #[arg(long, default_value_t = 2)]
    repetitions: u32,
}

/// One campaign's outcome against the truth.
struct Judged {
    runs: usize,
    worst: f64,
    beyond: usize,
    points: usize,
    left_out: usize,
    dips: usize,
}

fn main() {
    let args = Args::parse();
    let sets = common::seed_sets(
        args.seeds.clone(),
        args.unseen,
        vec![(
            "fixed seeds 1-6 (plain family)".to_string(),
            (1..=6).collect(),
        )],
        args.skip_fixed,
        args.fresh,
    );
    let (mut worst, mut beyond, mut points) = (0.0f64, 0, 0);
    for (label, seeds, unseen) in &sets {
        println!("## {label}");
        println!();
        println!("| seed | n | family | design | runs | worst error | points > 8 % | slow runs left out | dips kept |");
        println!("|---:|---:|:---|:---|---:|---:|---:|---:|---:|");
        let mut set_worst = 0.0f64;
        for &seed in seeds {
            let case = common::case_of(seed, *unseen);
            for design in ["standalone", "wall", "coupled"] {
                match run(&case, design, &args) {
                    Ok(j) => {
                        println!(
                            "| {seed} | {} | {} | {design} | {} | {:.1} % | {} of {} | {} | {} |",
                            case.components.len(),
                            case.family,
                            j.runs,
                            100.0 * j.worst,
                            j.beyond,
                            j.points,
                            j.left_out,
                            j.dips
                        );
                        set_worst = set_worst.max(j.worst);
                        beyond += j.beyond;
                        points += j.points;
                    }
                    Err(e) => println!("| {seed} | | | {design} | skipped: {e} |"),
                }
            }
        }
        worst = worst.max(set_worst);
        println!();
        println!(
            "worst point of the set: {:.1} % off the truth",
            100.0 * set_worst
        );
        println!();
    }
    println!(
        "every set: worst point {:.1} % off the truth; {beyond} of {points} points beyond {:.0} %",
        100.0 * worst,
        100.0 * LIMIT
    );
}

fn run(case: &SyntheticCase, design: &str, args: &Args) -> Result<Judged, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path();
    case.write_curves(dir).map_err(|e| e.to_string())?;
    let mut sim = case.sim_settings(dir);
    let mut alone = std::collections::BTreeMap::new();
    for c in &case.components {
        let path = dir.join(format!("standalone_truth_{}.csv", c.name));
        write_curve_csv(&c.standalone_truth, &path).map_err(|e| e.to_string())?;
        alone.insert(c.name.clone(), path);
    }
    sim.standalone_curves = Some(alone);
    sim.slow_runs = Some(args.slow);
    sim.slow_factor = Some(args.factor);
    // One run's simulated days, for wall timing.
    let days = f64::from(sim.steps()) * sim.period() / 86_400.0;
    let file = CampaignFile {
        components: case
            .components
            .iter()
            .map(|c| {
                let mut entry = common::component(&c.name, None);
                entry.min_nproc = Some(c.standalone.first_nproc());
                entry.max_nproc = Some(c.standalone.last_nproc());
                entry
            })
            .collect(),
        scaling: Some(ScalingTable {
            design: Some(if design == "coupled" {
                ScalingDesign::Coupled
            } else {
                ScalingDesign::Standalone
            }),
            repetitions: Some(args.repetitions),
            counts: Some(args.counts),
            max_runs: None,
            max_core_hours: None,
            simulated_days: (design == "wall").then_some(days),
            timing: (design == "wall").then_some(ScalingTiming::Wall),
        }),
        executor: Some(common::sim_executor(sim.clone())),
        ..CampaignFile::default()
    };
    let label = format!("{}-{design}", case.seed);
    let (outcome, campaign) = common::run_campaign(&file, dir, &label)?;
    judge(case, design, days, &campaign, outcome.runs)
}

fn judge(
    case: &SyntheticCase,
    design: &str,
    days: f64,
    campaign: &Path,
    runs: usize,
) -> Result<Judged, String> {
    let state = State::load(campaign).map_err(|e| e.to_string())?;
    let status = autolb::campaign::Status::from_state(&state, campaign);
    let mut j = Judged {
        runs,
        worst: 0.0,
        beyond: 0,
        points: 0,
        left_out: 0,
        dips: 0,
    };
    for (name, counts) in status.scaling.iter().flat_map(|s| s.0.iter()) {
        let _ = name;
        j.left_out += counts.outliers.len();
        j.dips += counts.features.len();
    }
    for ((name, points), c) in curves(&state).iter().zip(&case.components) {
        debug_assert_eq!(name, &c.name);
        for p in points {
            let truth = match design {
                "coupled" => c.coupled_sypd(p.nproc),
                "wall" => {
                    // The run's steps at the truth's speed and 1 s of initialisation.
                    let years = days / 365.0;
                    let standalone = c.standalone_sypd(p.nproc);
                    years / ((years * 86_400.0 / standalone + 1.0) / 86_400.0)
                }
                _ => c.standalone_sypd(p.nproc),
            };
            let off = (p.sypd / truth - 1.0).abs();
            j.worst = j.worst.max(off);
            j.beyond += usize::from(off > LIMIT);
            j.points += 1;
        }
    }
    Ok(j)
}
