//! What the campaign benchmarks share (`campaign_cost`, `pipeline_cost`, `cold_start`): the campaign
//! settings, running a campaign on the stand-in model and pricing its runs, and the regret of
//! an answer on the true speeds.
//!
//! Each example uses a part of this module, so the parts one leaves unused are not warned about.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use autolb::campaign::{self, DriveOptions, State, Status};
use autolb::config::{CampaignFile, ComponentEntry, Strategy};
use autolb::executor::{ExecutorConfig, ExecutorKind};
use autolb::metrics::{fittingness_in, Bounds};
use autolb::sim::synthetic::SyntheticCase;
use autolb::sim::SimSettings;

pub const MAX_NPROC: u32 = 1200;
pub const STEP: u32 = 24;
pub const MINIMUM_STEP: u32 = 12;
pub const INITIAL_STEP: u32 = 48;
pub const TOP: usize = 4;
pub const REPETITIONS: u32 = 2;
pub const TTS_W: f64 = 0.5;
/// Regret the target forgives (issue: "or <= 0.005").
pub const REGRET_SLACK: f64 = 0.005;

/// What one campaign cost and answered.
pub struct Outcome {
    /// Core-hours of every run, failed ones included.
    pub cost: f64,
    pub runs: usize,
    pub failed: usize,
    /// Filled in by the caller once every answer of the case is known.
    pub regret: f64,
    /// The configuration the campaign reports as best (empty for a scaling campaign).
    pub best: Vec<u32>,
}

/// `1-24` or `3,7,10` (or both mixed: `1-4,9`).
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let bad = || format!("{part:?} is not a seed or a range of seeds");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (
                    a.trim().parse::<u64>().map_err(|_| bad())?,
                    b.trim().parse::<u64>().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() || out.contains(&0) {
        return Err("seeds start at 1".into());
    }
    Ok(out)
}

/// The seeds a benchmark's `--seeds` names, parsed by [`parse_seeds`].
#[derive(Clone, Debug)]
pub struct Seeds(pub Vec<u64>);

impl std::str::FromStr for Seeds {
    type Err = String;

    fn from_str(text: &str) -> Result<Seeds, String> {
        parse_seeds(text)
            .map(Seeds)
            .map_err(|e| format!("{e}; give a range like 1-24 or a list like 3,7,10"))
    }
}

/// How many fresh seeds a benchmark draws when it runs, unless told otherwise.
pub const FRESH_SEEDS: usize = 12;

/// The case a benchmark runs for `seed`: of the plain family the rules were designed on (odd
/// seeds two components, even seeds three), or, `unseen`, of families and a component count
/// (2 to 4) drawn from the seed ([`SyntheticCase::unseen`]).
pub fn case_of(seed: u64, unseen: bool) -> SyntheticCase {
    if unseen {
        SyntheticCase::unseen(seed)
    } else {
        SyntheticCase::generate(seed, if seed % 2 == 1 { 2 } else { 3 })
    }
}

/// `count` seeds drawn now from the system's randomness, so that nobody can tune a rule to
/// them; the benchmark prints them, and `--seeds` with `--unseen` runs them again.
pub fn fresh_seeds(count: usize) -> Vec<u64> {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..count).map(|_| rng.random_range(1..1_000_000)).collect()
}

/// The seeds as `--seeds` reads them: `3,7,10`.
pub fn seed_list(seeds: &[u64]) -> String {
    seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The sets of seeds a benchmark runs: `--seeds` as one set (of unseen families with
/// `--unseen`), or the `fixed` sets (unless `skip_fixed`) followed by `fresh` seeds drawn now
/// of unseen families. Each set is `(label, seeds, unseen)`.
pub fn seed_sets(
    given: Option<Seeds>,
    unseen: bool,
    fixed: Vec<(String, Vec<u64>)>,
    skip_fixed: bool,
    fresh: usize,
) -> Vec<(String, Vec<u64>, bool)> {
    if let Some(Seeds(seeds)) = given {
        let what = if unseen {
            "unseen families"
        } else {
            "plain family"
        };
        return vec![(format!("{} seeds, {what}", seeds.len()), seeds, unseen)];
    }
    let mut sets: Vec<(String, Vec<u64>, bool)> = fixed
        .into_iter()
        .filter(|_| !skip_fixed)
        .map(|(l, s)| (l, s, false))
        .collect();
    if fresh > 0 {
        let seeds = fresh_seeds(fresh);
        sets.push((
            format!(
                "{fresh} fresh seeds of unseen families, drawn now (again: --seeds {} --unseen)",
                seed_list(&seeds)
            ),
            seeds,
            true,
        ));
    }
    sets
}

/// The true speed of a configuration of `case` whose runs go at `sim`: the stand-in's
/// noise-free coupled speed (heavy steps and coupling overheads included), each
/// configuration simulated once.
pub fn noise_free_speed<'a>(
    case: &'a SyntheticCase,
    sim: &'a SimSettings,
) -> impl Fn(&[u32]) -> f64 + 'a {
    let memo: std::cell::RefCell<std::collections::HashMap<Vec<u32>, f64>> = Default::default();
    move |n: &[u32]| {
        if let Some(&s) = memo.borrow().get(n) {
            return s;
        }
        let s = case
            .noise_free_sypd(sim, n)
            .expect("the stand-in runs every configuration of the grid");
        memo.borrow_mut().insert(n.to_vec(), s);
        s
    }
}

pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// The user's current configuration: the budget split in proportion to each component's
/// smallest measured PE count, on the 12-PE grid, within the curve.
pub fn original(case: &SyntheticCase) -> Vec<u32> {
    let firsts: Vec<f64> = case
        .components
        .iter()
        .map(|c| f64::from(c.standalone.first_nproc()))
        .collect();
    let sum: f64 = firsts.iter().sum();
    case.components
        .iter()
        .zip(&firsts)
        .map(|(c, f)| {
            let p = (f64::from(MAX_NPROC) * f / sum / f64::from(MINIMUM_STEP)).floor() as u32
                * MINIMUM_STEP;
            p.clamp(c.standalone.first_nproc(), c.standalone.last_nproc())
        })
        .collect()
}

/// A component table with nothing but a name and a curve.
pub fn component(name: &str, curve: Option<PathBuf>) -> ComponentEntry {
    ComponentEntry {
        name: name.to_string(),
        curve,
        allowed: None,
        min_nproc: None,
        max_nproc: None,
        timing_name: None,
        resource: None,
        pinned: None,
        nproc: None,
        threads: None,
    }
}

/// The `sim` executor with `sim` settings, written all at once (no time compression).
pub fn sim_executor(mut sim: SimSettings) -> ExecutorConfig {
    sim.compression = Some(0.0);
    ExecutorConfig {
        kind: ExecutorKind::Sim,
        command: None,
        timeout_s: None,
        jobs: Some(8),
        retries: None,
        sim: Some(sim),
        slurm: None,
    }
}

/// A balancing campaign of `case` with `strategy` from `curves` (by component name), its runs
/// going at `sim`: max_nproc 1200, step 24, top 4 plus an original, repetitions 2,
/// initial_step 48, minimum_step 12, TTS_W 0.5.
pub fn balancing_file(
    case: &SyntheticCase,
    curves: &BTreeMap<String, PathBuf>,
    sim: SimSettings,
    strategy: Strategy,
) -> CampaignFile {
    let names = case.names();
    CampaignFile {
        max_nproc: Some(MAX_NPROC),
        step: Some(STEP),
        tts_w: Some(TTS_W),
        top: Some(TOP),
        initial_step: Some(INITIAL_STEP),
        minimum_step: Some(MINIMUM_STEP),
        repetitions: Some(REPETITIONS),
        strategy: Some(strategy),
        components: names
            .iter()
            .map(|n| component(n, Some(curves[n].clone())))
            .collect(),
        original: Some(names.iter().cloned().zip(original(case)).collect()),
        executor: Some(sim_executor(sim)),
        ..CampaignFile::default()
    }
}

/// Core-hours of one run of `pes` PEs measured at `sypd`, for runs as long as `sim`'s (the
/// stand-in's 40 coupling steps of 45 minutes by default).
pub fn run_core_hours(sim: &SimSettings, pes: f64, sypd: f64) -> f64 {
    let run_years = f64::from(sim.steps()) * sim.period() / (365.0 * 86400.0);
    pes * 24.0 * run_years / sypd
}

/// Inits and drives `file` to the end in `dir` (made under `tmp` unless `AUTOLB_KEEP=DIR`
/// keeps it in `DIR/label` for a look with `autolb campaign status`), and prices its runs: a
/// balancing campaign's run costs all the configuration's PEs, a scaling run the measured
/// component's. The best configuration is left empty for a scaling campaign.
pub fn run_campaign(
    file: &CampaignFile,
    tmp: &Path,
    label: &str,
) -> Result<(Outcome, PathBuf), String> {
    let dir = match std::env::var_os("AUTOLB_KEEP") {
        Some(keep) => Path::new(&keep).join(label),
        None => tmp.join(label),
    };
    campaign::init(&dir, file, tmp, true).map_err(|e| e.to_string())?;
    let opts = DriveOptions {
        jobs: None,
        observer: None,
        poll_interval: Some(std::time::Duration::from_millis(2)),
    };
    campaign::drive(&dir, &opts, &AtomicBool::new(false)).map_err(|e| e.to_string())?;
    let state = State::load(&dir).map_err(|e| e.to_string())?;
    let best: Vec<u32> = if file.scaling.is_some() {
        Vec::new()
    } else {
        let status = Status::from_state(&state, &dir);
        status
            .best
            .as_ref()
            .ok_or("nothing measured")?
            .nproc
            .values()
            .copied()
            .collect()
    };
    let sim = file
        .executor
        .as_ref()
        .and_then(|e| e.sim.clone())
        .unwrap_or_default();
    let mut cost = 0.0;
    let (mut runs, mut failed) = (0, 0);
    let mut worst_wall_h: f64 = 0.0;
    for it in &state.iterations {
        for t in &it.tests {
            let pes = f64::from(t.nproc.iter().sum::<u32>() + state.settings.extra_pes);
            for r in &t.runs {
                runs += 1;
                match &r.metrics {
                    Some(m) => {
                        let h = run_core_hours(&sim, pes, m.sypd);
                        worst_wall_h = worst_wall_h.max(h / pes);
                        cost += h;
                    }
                    None => failed += 1,
                }
            }
        }
    }
    // Failed runs (none with these settings) are charged the longest measured run's hours.
    cost += failed as f64 * worst_wall_h * f64::from(MAX_NPROC);
    Ok((
        Outcome {
            cost,
            runs,
            failed,
            regret: f64::NAN,
            best,
        },
        dir,
    ))
}

/// Each component's grid: from its first measured PE count in `MINIMUM_STEP` steps to its
/// last (twice that step with four components or more, where the finer grid holds millions
/// of configurations).
pub fn grid(case: &SyntheticCase) -> Vec<Vec<u32>> {
    let step = if case.components.len() >= 4 {
        2 * MINIMUM_STEP
    } else {
        MINIMUM_STEP
    };
    case.components
        .iter()
        .map(|c| {
            (c.standalone.first_nproc()..=c.standalone.last_nproc())
                .step_by(step as usize)
                .collect()
        })
        .collect()
}

/// The true speeds of a case: `speed(configuration)` on the grid ([`grid`]), and the FN of
/// any configuration normalised over the grid's kept configurations (within the budget, at
/// least as good as the base case, method.md).
pub struct Truth<'a> {
    speed: &'a dyn Fn(&[u32]) -> f64,
    sypd_bounds: Bounds,
    cost_bounds: Bounds,
    /// The best kept configuration of the grid and its FN.
    optimum: (f64, Vec<u32>),
}

impl<'a> Truth<'a> {
    pub fn new(case: &SyntheticCase, speed: &'a dyn Fn(&[u32]) -> f64) -> Truth<'a> {
        let lists = grid(case);
        let base: Vec<u32> = lists.iter().map(|l| l[0]).collect();
        let base_s = speed(&base);
        let base_p = f64::from(base.iter().sum::<u32>());
        let mut kept = Vec::new();
        walk(&lists, &mut Vec::new(), &mut |n| {
            let s = speed(n);
            let p = f64::from(n.iter().sum::<u32>());
            if (s / base_s).powi(2) * (base_p / p) >= 1.0 {
                kept.push((n.to_vec(), s, 24.0 * p / s));
            }
        });
        let sypd_bounds = Bounds::of(kept.iter().map(|k| k.1)).expect("the base case is kept");
        let cost_bounds = Bounds::of(kept.iter().map(|k| k.2)).expect("the base case is kept");
        let optimum = kept
            .iter()
            .map(|(n, s, c)| {
                (
                    fittingness_in(TTS_W, *s, *c, &sypd_bounds, &cost_bounds),
                    n.clone(),
                )
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .expect("the base case is kept");
        Truth {
            speed,
            sypd_bounds,
            cost_bounds,
            optimum,
        }
    }

    /// True FN of `n`.
    pub fn fn_of(&self, n: &[u32]) -> f64 {
        let s = (self.speed)(n);
        let c = 24.0 * f64::from(n.iter().sum::<u32>()) / s;
        fittingness_in(TTS_W, s, c, &self.sypd_bounds, &self.cost_bounds)
    }

    /// True FN of the optimum minus true FN of `best`, and the optimum.
    ///
    /// A campaign can end off the grid (a move clamped at a curve's last PE count); such an
    /// answer can beat every grid configuration, so the optimum also considers `also` (every
    /// answer of the case).
    pub fn regret(&self, best: &[u32], also: &[&[u32]]) -> (f64, Vec<u32>) {
        let (optimum, at) = also
            .iter()
            .map(|n| (self.fn_of(n), n.to_vec()))
            .chain(std::iter::once(self.optimum.clone()))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .expect("the grid's optimum is there");
        (optimum - self.fn_of(best), at)
    }
}

/// Calls `f(configuration)` for every configuration of the lists within the budget.
fn walk(lists: &[Vec<u32>], prefix: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
    let Some((first, rest)) = lists.split_first() else {
        f(prefix);
        return;
    };
    let used: u32 = prefix.iter().sum();
    let rest_min: u32 = rest.iter().map(|l| l[0]).sum();
    for &p in first {
        if used + p + rest_min > MAX_NPROC {
            break;
        }
        prefix.push(p);
        walk(rest, prefix, f);
        prefix.pop();
    }
}
