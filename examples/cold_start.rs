//! Cold starts on synthetic cases of the stand-in model: no curve, only each component's range
//! and an original configuration; how many runs a campaign makes, when it starts balancing, and
//! how far the best it reports is from the true optimum.
//!
//! `cargo run --release --example cold_start` runs seeds 1-8 (odd seeds two components, even
//! seeds three); `-- --seeds 1-24` (a range, or a list like `3,7,10`) runs others. Each case: budget 60 % of the ranges'
//! tops, `step = 4`, the original at a quarter of each range's top, the `sim` executor at the
//! case's true coupled-mode curves without radiation steps (so the coupled run goes at its
//! slowest component, which the regret's true speeds assume), every other setting at its
//! default.
//!
//! Regret: true FN of the true optimum minus true FN of the best the campaign reports, on the
//! prediction over the true coupled-mode curves (its normalisation, `step = 4`).

mod common;

use std::sync::atomic::AtomicBool;

use autolb::campaign::{self, ColdStartPhase, DriveOptions, State, Status};
use autolb::config::CampaignFile;
use autolb::metrics::{chsy, fittingness_in};
use autolb::predict::{ComponentInput, Problem, Settings};
use autolb::sim::synthetic::SyntheticCase;
use clap::Parser;
use common::Seeds;

/// Cold starts on synthetic cases of the stand-in model: runs, when balancing starts, regret.
#[derive(Parser)]
struct Args {
    /// The seeds to run: a range like 1-24 or a list like 3,7,10 [default: 1-8].
    #[arg(long)]
    seeds: Option<Seeds>,
}

fn main() {
    let seeds = Args::parse()
        .seeds
        .map_or_else(|| (1..=8).collect(), |s| s.0);
    let mut regrets = Vec::new();
    for seed in seeds {
        match run(seed) {
            Ok(line) => {
                println!("{}", line.0);
                regrets.push(line.1);
            }
            Err(e) => println!("seed {seed}: {e}"),
        }
    }
    regrets.sort_by(f64::total_cmp);
    if let Some(worst) = regrets.last() {
        println!(
            "{} cases: median regret {:.4}, worst {worst:.4}",
            regrets.len(),
            common::median(&regrets)
        );
    }
}

/// One case to the end: its line and its regret.
fn run(seed: u64) -> Result<(String, f64), String> {
    let case = SyntheticCase::generate(seed, if seed.is_multiple_of(2) { 3 } else { 2 });
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tops: u32 = case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum();
    let budget = tops * 6 / 10;
    let original: Vec<u32> = case
        .components
        .iter()
        .map(|c| (c.standalone.last_nproc() / 4).max(c.standalone.first_nproc()) / 4 * 4)
        .collect();
    let mut file = CampaignFile::synthetic_cold_start(&case, tmp.path(), budget, &original)
        .map_err(|e| e.to_string())?;
    file.step = Some(4);
    if let Some(sim) = file.executor.as_mut().and_then(|e| e.sim.as_mut()) {
        sim.compression = Some(0.0);
        sim.heavy_every = Some(0);
    }
    let dir = tmp.path().join("campaign");
    campaign::init(&dir, &file, tmp.path(), false).map_err(|e| e.to_string())?;
    campaign::drive(&dir, &DriveOptions::default(), &AtomicBool::new(false))
        .map_err(|e| e.to_string())?;
    let state = State::load(&dir).map_err(|e| e.to_string())?;
    let status = Status::from_state(&state, &dir);
    let best: Vec<u32> = status
        .best
        .as_ref()
        .ok_or("no best")?
        .nproc
        .values()
        .copied()
        .collect();
    let runs: usize = state.run_count();
    let switch = state
        .iterations
        .iter()
        .find(|it| it.phase == Some(ColdStartPhase::Balancing))
        .map_or("never".to_string(), |it| it.index.to_string());
    let settings = Settings {
        max_nproc: budget,
        step: 4,
        ..Settings::default()
    };
    let truth: Vec<ComponentInput> = case
        .components
        .iter()
        .map(|c| ComponentInput {
            name: c.name.clone(),
            curve: Some(c.coupled_truth.clone()),
            allowed: None,
            min_nproc: Some(c.standalone.first_nproc()),
            max_nproc: Some(c.standalone.last_nproc()),
            thread_curves: Vec::new(),
        })
        .collect();
    let problem = Problem::new(&truth, &settings).map_err(|e| e.to_string())?;
    let optimum = problem.rank(settings.tts_w, 1).top[0].clone();
    let sypd = case
        .components
        .iter()
        .zip(&best)
        .map(|(c, &p)| c.coupled_sypd(p))
        .fold(f64::INFINITY, f64::min);
    let picked = fittingness_in(
        settings.tts_w,
        sypd,
        chsy(f64::from(best.iter().sum::<u32>()), sypd),
        &problem.sypd_bounds,
        &problem.cost_bounds,
    );
    let regret = optimum.fittingness - picked;
    Ok((
        format!(
            "seed {seed} ({} components): {runs} runs, balancing from iteration {switch}, best {best:?}, optimum {:?}, regret {regret:.4}",
            case.components.len(),
            optimum.nproc
        ),
        regret,
    ))
}
