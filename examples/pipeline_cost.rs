//! What the whole of step 1 and step 2 costs, from no curves to a balanced configuration, per
//! pipeline, on synthetic cases of the stand-in model (docs/src/benchmarks.md, "Step 1:
//! curves").
//!
//! `cargo run --release --example pipeline_cost` runs 24 cases (seeds 1-24; odd seeds have two
//! components, even seeds three), then fresh seeds (below). `-- --quick` runs seeds 1-6; `-- --seeds 3,7,10` (or a
//! range) those seeds; `-- --counts N` and `-- --repetitions N` change the adaptive study's
//! first series (default 4 counts, 2 runs each); `-- --verbose` adds each answer and the true
//! optimum; `-- --only study` runs only the fixed and the adaptive studies (their core-hours,
//! runs and prediction gaps); `-- --only cold` runs pipelines (a) and (c) only, for a cold
//! start's measurement at less cost; `AUTOLB_KEEP=DIR` keeps the campaigns in DIR.
//!
//! After the fixed set it runs `--fresh N` (default 8) seeds drawn when it runs, of families
//! nobody designed a rule on ([`autolb::sim::synthetic::SyntheticCase::unseen`]: decomposition
//! dips and plateaus, falling speed, a slowdown trend, heavier steps, growing interpolation,
//! slow runs, 2 to 4 components); it prints them, and `-- --seeds LIST --unseen` runs them
//! again.
//!
//! Each case ([`autolb::sim::synthetic`]) has a hidden noise-free standalone curve per
//! component (what a standalone run goes at) and a hidden coupled-mode truth (standalone times
//! a random smooth slowdown with dips) that coupled runs go at, with 2 % step noise, the
//! atmosphere's heavy radiation steps (every 4th step 1.5 times as long; the mean is the curve)
//! and interpolation that grows with the sender's PEs (`interp_s_per_pe`). Nothing measured is
//! given: each pipeline measures its own curves first.
//!
//! * (a) the paper's: a fixed standalone study, 12 log-spaced PE counts per component from the
//!   component's first count to its last (or to the most the budget leaves it: see
//!   [`study_range`]), 3 runs each, run as stand-in standalone runs directly
//!   (the same runs a scaling campaign's `sim` executor makes, without the campaign), the
//!   curve the mean of each count; then Algorithm 1 from those curves;
//! * (b) autolb's: the adaptive standalone scaling campaign (`[scaling] design =
//!   "standalone"`), then the `guided` strategy from the curves it wrote;
//! * (c) the cold start: a guided campaign without curves (each component's range as the
//!   studies measure it, the same `[original]`), coupled scaling runs first, then guided
//!   balancing with the model learnt from them; its initial step is the cold start's default.
//!
//! Both balancing campaigns: max_nproc 1200, step 24, top 4 plus an original, repetitions 2,
//! initial_step 48, minimum_step 12, TTS_w 0.5 (as `campaign_cost`). Cost = core-hours of
//! every run, standalone and coupled: PEs x modelled wall hours of the run (40 coupling steps
//! of 45 minutes). Regret = true FN of the true optimum minus true FN of the answer, the true
//! speed of a configuration being the stand-in's noise-free coupled speed (heavy steps and
//! interpolation included), FN normalised over the kept configurations at 12-PE spacing.
//! "Prediction" = the FN gap, on the noise-free standalone curves, between the best
//! configuration and the one a prediction from the study's curves picks.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use autolb::campaign::State;
use autolb::config::{CampaignFile, ScalingDesign, ScalingTable, Strategy};
use autolb::curve::{Curve, Point};
use autolb::predict::{ComponentInput, Problem, Settings};
use autolb::sim::synthetic::{write_curve_csv, SyntheticCase};
use autolb::sim::{SimComponent, SimRun, SimSettings};
use clap::Parser;
use common::{median, Outcome, Truth, MAX_NPROC, MINIMUM_STEP, REGRET_SLACK, TTS_W};

/// Fresh seeds drawn when it runs, unless `--fresh` says otherwise.
const FRESH_SEEDS: usize = 8;

/// PE counts per component of the paper's fixed study.
const FIXED_COUNTS: usize = 12;
/// Runs per count of the fixed study.
const FIXED_REPETITIONS: u32 = 3;
/// Interpolation seconds per field and step added per PE of the sender.
const INTERP_S_PER_PE: f64 = 2e-5;
/// How far the prediction from measured curves may be from the true curves' (FN).
const PREDICTION_SLACK: f64 = 0.005;

/// One pipeline's outcome: its standalone study, its balancing campaign, and the prediction
/// its curves make.
struct Pipeline {
    study: Outcome,
    balance: Outcome,
    prediction_gap: f64,
}

impl Pipeline {
    fn cost(&self) -> f64 {
        self.study.cost + self.balance.cost
    }
}

/// Whole pipelines from no curves to a balanced configuration on synthetic cases: (a) the
/// paper's, (b) autolb's adaptive study then guided, (c) the cold start (docs/src/benchmarks.md).
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    seed_args: common::SeedArgs,
    /// Seeds 1-6 only, when --seeds is not given.
    #[arg(long)]
    quick: bool,
    /// PE counts per component in the adaptive study's first series.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    counts: u32,
    /// Runs per count in the adaptive study's first series.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: u32,
    /// Each answer and the true optimum under each case's row.
    #[arg(long)]
    verbose: bool,
    /// Run only part: `study` the two studies, `cold` pipelines (a) and (c).
    #[arg(long, value_enum)]
    only: Option<Only>,
}

/// What `--only` keeps.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Only {
    /// The fixed and the adaptive studies alone: their cost and prediction gap.
    Study,
    /// (a), the reference, and (c), the cold start, leaving out (b).
    Cold,
}

fn main() {
    let args = Args::parse();
    let fixed: Vec<u64> = if args.quick {
        (1..=6).collect()
    } else {
        (1..=24).collect()
    };
    let fixed_label = format!(
        "fixed seeds {}-{} (plain family)",
        fixed[0],
        fixed[fixed.len() - 1]
    );
    let sets = common::seed_sets(&args.seed_args, vec![(fixed_label, fixed)], FRESH_SEEDS);
    let adaptive = ScalingTable {
        design: Some(ScalingDesign::Standalone),
        repetitions: Some(args.repetitions),
        counts: Some(args.counts),
        max_runs: None,
        max_core_hours: None,
        simulated_days: None,
        timing: None,
    };
    for (label, seeds, unseen) in &sets {
        println!("## {label}");
        println!();
        match args.only {
            Some(Only::Study) => study_set(seeds, *unseen, &adaptive),
            Some(Only::Cold) => run_cold_set(seeds, *unseen, args.verbose),
            None => run_set(seeds, *unseen, &adaptive, args.verbose),
        }
        println!();
    }
}

fn run_set(seeds: &[u64], unseen: bool, adaptive: &ScalingTable, verbose: bool) {
    let started = Instant::now();
    println!(
        "| seed | n | fixed study core-h | adaptive study core-h | study % | (a) core-h | (b) core-h | (a) regret | (b) regret | guided / A1 | prediction gap | (c) core-h | (c) regret | (c) / (a) | target (b) | target (c) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|");
    let mut study_ratios = Vec::new();
    let mut balance_ratios: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let (mut a_costs, mut b_costs, mut a_regrets, mut b_regrets) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut met, mut predicted, mut fixed_predicted, mut total) = (0, 0, 0, 0);
    let (mut c_met, mut cold_ratios, mut c_regrets, mut c_costs) =
        (0, Vec::new(), Vec::new(), Vec::new());
    for &seed in seeds {
        let case = common::case_of(seed, unseen);
        let n = case.components.len();
        let (a, b, c, truth_line) = match run_case(&case, Some(adaptive)) {
            Ok((a, Some(b), c, truth_line)) => (a, b, c, truth_line),
            Ok(_) => continue,
            Err(e) => {
                println!("| {seed} | {n} | skipped: {e} |");
                continue;
            }
        };
        let (a_regret, b_regret) = (a.balance.regret, b.balance.regret);
        let ok = b_regret <= a_regret + 1e-12 || b_regret <= REGRET_SLACK;
        let c_ok = c.regret <= a_regret + 1e-12 || c.regret <= REGRET_SLACK;
        c_met += usize::from(c_ok);
        cold_ratios.push(c.cost / a.cost());
        c_regrets.push(c.regret);
        c_costs.push(c.cost);
        total += 1;
        met += usize::from(ok);
        predicted += usize::from(b.prediction_gap <= PREDICTION_SLACK);
        fixed_predicted += usize::from(a.prediction_gap <= PREDICTION_SLACK);
        study_ratios.push(b.study.cost / a.study.cost);
        balance_ratios
            .entry(n)
            .or_default()
            .push(b.balance.cost / a.balance.cost);
        a_costs.push(a.cost());
        b_costs.push(b.cost());
        a_regrets.push(a_regret);
        b_regrets.push(b_regret);
        println!(
            "| {seed} | {n} | {:.1} | {:.1} | {:.0}% | {:.1} | {:.1} | {:.4} | {:.4} | {:.0}% | {:.4} | {:.1} | {:.4} | {:.0}% | {} | {} |",
            a.study.cost,
            b.study.cost,
            100.0 * b.study.cost / a.study.cost,
            a.cost(),
            b.cost(),
            a_regret,
            b_regret,
            100.0 * b.balance.cost / a.balance.cost,
            b.prediction_gap,
            c.cost,
            c.regret,
            100.0 * c.cost / a.cost(),
            if ok { "yes" } else { "NO" },
            if c_ok { "yes" } else { "NO" },
        );
        if unseen {
            println!("|  |  | family: {} |", case.family);
        }
        if verbose {
            println!(
                "|  |  | runs: fixed {} adaptive {}; balancing runs: a1 {} guided {} cold start {}; best: a1 {:?} guided {:?} cold start {:?}; {truth_line}; fixed-curve prediction gap {:.4} |",
                a.study.runs, b.study.runs, a.balance.runs, b.balance.runs, c.runs,
                a.balance.best, b.balance.best, c.best, a.prediction_gap
            );
        }
    }
    let pct = |k: usize| 100.0 * k as f64 / total.max(1) as f64;
    println!();
    println!(
        "- (b) regret no worse than (a)'s (or <= {REGRET_SLACK}): {met} of {total} cases ({:.0} %)",
        pct(met)
    );
    println!(
        "- regret median: (a) {:.4}, (b) {:.4}; max: (a) {:.4}, (b) {:.4}",
        median(&a_regrets),
        median(&b_regrets),
        a_regrets.iter().copied().fold(0.0, f64::max),
        b_regrets.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "- adaptive standalone study / fixed study core-hours: median {:.1} %, max {:.0} %",
        100.0 * median(&study_ratios),
        100.0 * study_ratios.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "- prediction from the study's curves within {PREDICTION_SLACK} FN of the true curves': adaptive {predicted} of {total}, fixed {fixed_predicted} of {total}"
    );
    println!(
        "- whole pipeline core-hours: (a) median {:.1}, (b) median {:.1}",
        median(&a_costs),
        median(&b_costs)
    );
    for (n, ratios) in &balance_ratios {
        println!(
            "- balancing part, guided / Algorithm 1 core-hours, {n} components: median {:.1} %, max {:.0} % ({} cases)",
            100.0 * median(ratios),
            100.0 * ratios.iter().copied().fold(0.0, f64::max),
            ratios.len()
        );
    }
    println!(
        "- (c) regret no worse than (a)'s (or <= {REGRET_SLACK}): {c_met} of {total} cases ({:.0} %); regret median {:.4}, max {:.4}",
        pct(c_met),
        median(&c_regrets),
        c_regrets.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "- (c) core-hours / (a)'s: median {:.1} %, max {:.0} %; (c) median {:.1} core-h",
        100.0 * median(&cold_ratios),
        100.0 * cold_ratios.iter().copied().fold(0.0, f64::max),
        median(&c_costs)
    );
    println!("({:.0} s)", started.elapsed().as_secs_f64());
}

/// The stand-in settings of every run of a case (curves written into `dir`): coupled runs at
/// the coupled truth, standalone runs at the noise-free standalone curve, heavy radiation steps
/// [`run_set`] for pipelines (a) and (c) only (`--only cold`): the cold start's regret and
/// cost against the paper's pipeline, without the adaptive study and guided campaign of (b).
fn run_cold_set(seeds: &[u64], unseen: bool, verbose: bool) {
    let started = Instant::now();
    println!(
        "| seed | n | (a) core-h | (a) regret | (c) core-h | (c) regret | (c) / (a) | target (c) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|:---|");
    let (mut c_met, mut total, mut ratios, mut a_regrets, mut c_regrets) =
        (0, 0, Vec::new(), Vec::new(), Vec::new());
    for &seed in seeds {
        let case = common::case_of(seed, unseen);
        let n = case.components.len();
        let (a, c, truth_line) = match run_case(&case, None) {
            Ok((a, _, c, truth_line)) => (a, c, truth_line),
            Err(e) => {
                println!("| {seed} | {n} | skipped: {e} |");
                continue;
            }
        };
        let a_regret = a.balance.regret;
        let c_ok = c.regret <= a_regret + 1e-12 || c.regret <= REGRET_SLACK;
        c_met += usize::from(c_ok);
        total += 1;
        ratios.push(c.cost / a.cost());
        a_regrets.push(a_regret);
        c_regrets.push(c.regret);
        println!(
            "| {seed} | {n} | {:.1} | {a_regret:.4} | {:.1} | {:.4} | {:.0}% | {} |",
            a.cost(),
            c.cost,
            c.regret,
            100.0 * c.cost / a.cost(),
            if c_ok { "yes" } else { "NO" },
        );
        if unseen {
            println!("|  |  | family: {} |", case.family);
        }
        if verbose {
            println!(
                "|  |  | runs: fixed {}; balancing runs: a1 {} cold start {}; best: a1 {:?} cold start {:?}; {truth_line} |",
                a.study.runs, a.balance.runs, c.runs, a.balance.best, c.best
            );
        }
    }
    println!();
    println!(
        "- (c) regret no worse than (a)'s (or <= {REGRET_SLACK}): {c_met} of {total} cases ({:.0} %); regret median: (a) {:.4}, (c) {:.4}; max (c) {:.4}",
        100.0 * c_met as f64 / total.max(1) as f64,
        median(&a_regrets),
        median(&c_regrets),
        c_regrets.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "- (c) core-hours / (a)'s: median {:.1} %, max {:.0} %",
        100.0 * median(&ratios),
        100.0 * ratios.iter().copied().fold(0.0, f64::max)
    );
    println!("({:.0} s)", started.elapsed().as_secs_f64());
}

/// on, interpolation growing with PEs.
fn balancing_sim(case: &SyntheticCase, dir: &Path) -> SimSettings {
    let mut sim = case.sim_settings(dir);
    sim.standalone_curves = Some(
        case.components
            .iter()
            .map(|c| (c.name.clone(), standalone_truth_path(dir, &c.name)))
            .collect(),
    );
    // A case of an unseen family may bring its own growth.
    sim.interp_s_per_pe = sim.interp_s_per_pe.or(Some(INTERP_S_PER_PE));
    sim
}

/// The PE counts a study of component `k` measures: from its first count to its last, or to
/// the most the budget leaves it (every other component at its first count), whichever is
/// lower. Neither balancing campaign can go past that, so measuring beyond it would be waste
/// in both studies alike.
fn study_range(case: &SyntheticCase, k: usize) -> (u32, u32) {
    let others: u32 = case
        .components
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != k)
        .map(|(_, c)| c.standalone.first_nproc())
        .sum();
    let c = &case.components[k];
    let hi = c.standalone.last_nproc().min(MAX_NPROC - others) / 8 * 8;
    (c.standalone.first_nproc(), hi)
}

fn standalone_truth_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("standalone_truth_{name}.csv"))
}

/// Runs pipelines (a), (b) (unless `adaptive` is `None`) and (c) on a case, with regret and
/// prediction gaps filled in, and a line on the true optimum.
fn run_case(
    case: &SyntheticCase,
    adaptive: Option<&ScalingTable>,
) -> Result<(Pipeline, Option<Pipeline>, Outcome, String), String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path();
    let sim = case_sim(case, dir)?;
    let (fixed_study, fixed_curves) = fixed_study(case, &sim)?;
    let fixed_paths = write_study_curves(&fixed_curves, dir, "fixed")?;
    let a1_file = common::balancing_file(case, &fixed_paths, sim.clone(), Strategy::Algorithm1);
    let label = |what: &str| format!("{}-{what}", case.seed);
    let (a1, _) = common::run_campaign(&a1_file, dir, &label("algorithm1"))?;

    // (b): the adaptive scaling campaign, then guided from the curves it wrote.
    let adaptive_run = match adaptive {
        Some(adaptive) => {
            let (study, paths, curves) = adaptive_study(case, adaptive, dir, &sim)?;
            let guided_file = common::balancing_file(case, &paths, sim.clone(), Strategy::Guided);
            let (guided, _) = common::run_campaign(&guided_file, dir, &label("guided"))?;
            Some((guided, study, curves))
        }
        None => None,
    };

    // (c): the cold start: the same balancing settings, no curve, each component's range as
    // the studies have it, and the cold start's own initial step (a sixteenth of the narrowest
    // range).
    let mut cold_file = common::balancing_file(case, &fixed_paths, sim.clone(), Strategy::Guided);
    for (k, entry) in cold_file.components.iter_mut().enumerate() {
        let (lo, hi) = study_range(case, k);
        entry.curve = None;
        entry.min_nproc = Some(lo);
        entry.max_nproc = Some(hi);
    }
    cold_file.initial_step = None;
    let (mut cold, _) = common::run_campaign(&cold_file, dir, &label("cold-start"))?;

    // The true speeds: noise-free stand-in runs, each configuration once.
    let speed = common::noise_free_speed(case, &sim);
    let truth = Truth::new(case, &speed);
    let mut answers = vec![a1.best.clone(), cold.best.clone()];
    if let Some((guided, _, _)) = &adaptive_run {
        answers.push(guided.best.clone());
    }
    let answers: Vec<&[u32]> = answers.iter().map(Vec::as_slice).collect();
    let mut a = Pipeline {
        study: fixed_study,
        balance: a1,
        prediction_gap: prediction_gap(case, &fixed_curves)?,
    };
    a.balance.regret = truth.regret(&a.balance.best, &answers).0;
    cold.regret = truth.regret(&cold.best, &answers).0;
    let b = match adaptive_run {
        Some((guided, study, curves)) => {
            let mut b = Pipeline {
                study,
                balance: guided,
                prediction_gap: prediction_gap(case, &curves)?,
            };
            b.balance.regret = truth.regret(&b.balance.best, &answers).0;
            Some(b)
        }
        None => None,
    };
    let (_, optimum) = truth.regret(&a.balance.best, &answers);
    Ok((a, b, cold, format!("true optimum {optimum:?}")))
}

/// The case's truths written into `dir`, and the stand-in settings of its runs.
fn case_sim(case: &SyntheticCase, dir: &Path) -> Result<SimSettings, String> {
    case.write_curves(dir).map_err(|e| e.to_string())?;
    for c in &case.components {
        write_curve_csv(&c.standalone_truth, &standalone_truth_path(dir, &c.name))
            .map_err(|e| e.to_string())?;
    }
    Ok(balancing_sim(case, dir))
}

/// The adaptive scaling campaign of a case (with the balancing campaigns' budget, so it knows
/// which counts matter): its outcome and its curves, by path and loaded in the case's
/// component order.
type AdaptiveStudy = (Outcome, BTreeMap<String, PathBuf>, Vec<Curve>);

fn adaptive_study(
    case: &SyntheticCase,
    adaptive: &ScalingTable,
    dir: &Path,
    sim: &SimSettings,
) -> Result<AdaptiveStudy, String> {
    let scaling_file = CampaignFile {
        components: case
            .components
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let (lo, hi) = study_range(case, k);
                let mut entry = common::component(&c.name, None);
                entry.min_nproc = Some(lo);
                entry.max_nproc = Some(hi);
                entry
            })
            .collect(),
        scaling: Some(adaptive.clone()),
        executor: Some(common::sim_executor(sim.clone())),
        ..CampaignFile::default()
    };
    let label = format!("{}-scaling", case.seed);
    let (study, scaling_dir) = common::run_campaign(&scaling_file, dir, &label)?;
    let state = State::load(&scaling_dir).map_err(|e| e.to_string())?;
    let paths: BTreeMap<String, PathBuf> = state
        .components
        .iter()
        .map(|c| (c.name.clone(), scaling_dir.join(&c.curve)))
        .collect();
    let curves = paths
        .iter()
        .map(|(name, path)| Curve::load(name.clone(), path).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((study, paths, adaptive_curves_in_order(case, curves)))
}

/// `--only study`: per case the two studies' core-hours and runs, and each one's prediction gap.
fn study_set(seeds: &[u64], unseen: bool, adaptive: &ScalingTable) {
    let started = Instant::now();
    println!("| seed | n | fixed study core-h | adaptive study core-h | study % | fixed runs | adaptive runs | fixed prediction gap | adaptive prediction gap |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (mut ratios, mut predicted, mut fixed_predicted, mut total) = (Vec::new(), 0, 0, 0);
    for &seed in seeds {
        let case = common::case_of(seed, unseen);
        let n = case.components.len();
        let row = tempfile::tempdir()
            .map_err(|e| e.to_string())
            .and_then(|tmp| {
                let sim = case_sim(&case, tmp.path())?;
                let (fixed, fixed_curves) = fixed_study(&case, &sim)?;
                let (study, _, curves) = adaptive_study(&case, adaptive, tmp.path(), &sim)?;
                Ok((
                    fixed,
                    study,
                    prediction_gap(&case, &fixed_curves)?,
                    prediction_gap(&case, &curves)?,
                ))
            });
        let (fixed, study, fixed_gap, gap) = match row {
            Ok(r) => r,
            Err(e) => {
                println!("| {seed} | {n} | skipped: {e} |");
                continue;
            }
        };
        total += 1;
        ratios.push(study.cost / fixed.cost);
        predicted += usize::from(gap <= PREDICTION_SLACK);
        fixed_predicted += usize::from(fixed_gap <= PREDICTION_SLACK);
        println!(
            "| {seed} | {n} | {:.1} | {:.1} | {:.0}% | {} | {} | {fixed_gap:.4} | {gap:.4} |",
            fixed.cost,
            study.cost,
            100.0 * study.cost / fixed.cost,
            fixed.runs,
            study.runs
        );
        if unseen {
            println!("|  |  | family: {} |", case.family);
        }
    }
    println!();
    println!(
        "- adaptive standalone study / fixed study core-hours: median {:.1} %, max {:.0} %",
        100.0 * median(&ratios),
        100.0 * ratios.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "- prediction from the study's curves within {PREDICTION_SLACK} FN of the true curves': adaptive {predicted} of {total}, fixed {fixed_predicted} of {total}"
    );
    println!("({:.0} s)", started.elapsed().as_secs_f64());
}

/// The curves loaded from a scaling campaign, in the case's component order.
fn adaptive_curves_in_order(case: &SyntheticCase, curves: Vec<Curve>) -> Vec<Curve> {
    case.components
        .iter()
        .filter_map(|c| curves.iter().find(|k| k.name == c.name).cloned())
        .collect()
}

/// The paper's fixed standalone study: [`FIXED_COUNTS`] log-spaced counts (multiples of 8)
/// from each component's first to its last count, [`FIXED_REPETITIONS`] stand-in standalone
/// runs each; the curve is each count's mean SYPD.
fn fixed_study(case: &SyntheticCase, sim: &SimSettings) -> Result<(Outcome, Vec<Curve>), String> {
    let alone = sim.standalone();
    let mut cost = 0.0;
    let mut runs = 0;
    let mut curves = Vec::new();
    for (k, c) in case.components.iter().enumerate() {
        let (lo, hi) = study_range(case, k);
        let (lo, hi) = (f64::from(lo), f64::from(hi));
        let mut counts: Vec<u32> = (0..FIXED_COUNTS)
            .map(|i| {
                let f = i as f64 / (FIXED_COUNTS - 1) as f64;
                let p = (lo.ln() + f * (hi / lo).ln()).exp();
                ((p / 8.0).round() as u32 * 8).clamp(lo as u32, hi as u32)
            })
            .collect();
        counts.dedup();
        let mut points = Vec::new();
        for &p in &counts {
            let mut sum = 0.0;
            for r in 0..FIXED_REPETITIONS {
                let run = SimRun::new(
                    &alone,
                    vec![SimComponent {
                        name: c.name.clone(),
                        nproc: p,
                        curve: c.standalone_truth.clone(),
                        threads: 1,
                    }],
                    (k as u64) << 40 | u64::from(p) << 8 | u64::from(r),
                );
                let out = autolb::sim::simulate_in_memory(&run).map_err(|e| e.to_string())?;
                let sypd = autolb::metrics::sypd(out.window_sim_s, out.window_wall_s);
                cost += common::run_core_hours(sim, f64::from(p), sypd);
                runs += 1;
                sum += sypd;
            }
            points.push(Point {
                nproc: p,
                sypd: sum / f64::from(FIXED_REPETITIONS),
            });
        }
        curves.push(
            Curve::from_points(&c.name, "fixed standalone study", &points)
                .map_err(|e| e.to_string())?,
        );
    }
    Ok((
        Outcome {
            cost,
            runs,
            failed: 0,
            regret: f64::NAN,
            best: Vec::new(),
        },
        curves,
    ))
}

fn write_study_curves(
    curves: &[Curve],
    dir: &Path,
    prefix: &str,
) -> Result<BTreeMap<String, PathBuf>, String> {
    curves
        .iter()
        .map(|c| {
            let path = dir.join(format!("{prefix}_{}.csv", c.name));
            write_curve_csv(c, &path).map_err(|e| e.to_string())?;
            Ok((c.name.clone(), path))
        })
        .collect()
}

/// The FN gap on the noise-free standalone curves between the best configuration and the one
/// a prediction from `measured` (in component order) picks, both over each component's range
/// with the campaigns' budget and 12-PE step.
fn prediction_gap(case: &SyntheticCase, measured: &[Curve]) -> Result<f64, String> {
    let settings = Settings {
        max_nproc: MAX_NPROC,
        step: MINIMUM_STEP,
        tts_w: TTS_W,
        ..Settings::default()
    };
    let inputs = |curve: &dyn Fn(usize) -> Curve| -> Vec<ComponentInput> {
        case.components
            .iter()
            .enumerate()
            .map(|(k, c)| ComponentInput {
                name: c.name.clone(),
                curve: Some(curve(k)),
                allowed: None,
                min_nproc: Some(study_range(case, k).0),
                max_nproc: Some(study_range(case, k).1),
                thread_curves: Vec::new(),
            })
            .collect()
    };
    let chosen = autolb::predict::predict(&inputs(&|k| measured[k].clone()), &settings)
        .map_err(|e| e.to_string())?
        .top[0]
        .clone();
    let problem = Problem::new(
        &inputs(&|k| case.components[k].standalone_truth.clone()),
        &settings,
    )
    .map_err(|e| e.to_string())?;
    let best = problem.rank(TTS_W, 1).top[0].clone();
    let index = chosen
        .nproc
        .iter()
        .enumerate()
        .map(|(c, &p)| problem.candidate_index(c, p))
        .collect::<Option<Vec<usize>>>()
        .ok_or("the prediction from measured curves left the true curves' grid")?;
    Ok(best.fittingness - problem.score(&index, TTS_W).fittingness)
}
