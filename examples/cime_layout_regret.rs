//! CIME layouts from timing runs: autolb's method against the one of CIME's removed
//! `load_balancing_tool`, on synthetic CESM-shaped cases (docs/src/benchmarks.md, "CIME layouts
//! against the old load-balancing tool").
//!
//! `cargo run --example cime_layout_regret` runs seeds 1-30, then 10 fresh seeds drawn when it
//! runs (printed; `-- --seeds LIST` runs them again, `--fresh N` draws another number).
//!
//! Each seed draws a case: four classes (atm, ice, lnd, ocn), each with a true time per
//! simulated day `T(n) = a / n + b + c n` on `n` tasks (`a` the perfectly parallel work, `b` a
//! part that does not shrink, `c` communication that grows), and a total of PEs. The timing runs
//! measure every class at five task counts (1/16 to all of the total) with 1.5 % noise; the
//! noisy variant of the case has the same runs with one of them (a class and count drawn from
//! the seed) 30 % slow. Both methods get the same runs and the same total:
//!
//! - *old tool*: each class's time interpolated piecewise-linearly between its measured counts
//!   (no extrapolation), the fastest layout using exactly the total, over its two fixed shapes:
//!   fully sequential `atm ; ice ; lnd ; ocn` and `ocn | (atm ; (ice | lnd))` with ice and lnd
//!   splitting atm's PEs;
//! - *autolb*: each class's scaling law fitted to its runs as the calibrated model fits a
//!   component without a curve ([`autolb::model::robust_law::fit`]: robust, terms chosen by
//!   leave-one-out, a single run the other counts cannot explain set aside), and the exact
//!   search ([`autolb::layout::search::fastest`]) of both trees within the total; where a
//!   class's top run is doubtful (a slow run or a class that stops scaling, which five single
//!   runs cannot tell apart), the search runs under both readings and the layout with the least
//!   regret under either is taken ([`autolb::model::robust_law::least_regret`]).
//!
//! The truth is the exact search of both trees on the true curves. Reported per method: the
//! regret (the true time of its layout over the true optimum's, minus 1) and its cost (core-hours
//! per simulated year of its layout on the true curves, the cores it spans), median and max over
//! the cases, clean and with the noisy point.

mod common;

use autolb::layout::search::fastest;
use autolb::layout::Layout;
use autolb::model::robust_law;
use autolb::model::scaling_law::ScalingLaw;
use clap::Parser;
use common::{fresh_seeds, seed_list, Seeds};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The classes, in the old tool's sequential order.
const CLASSES: [&str; 4] = ["atm", "ice", "lnd", "ocn"];
/// The default CIME layout, the old tool's concurrent shape.
const CONCURRENT: &str = "ocn | (atm ; (ice | lnd))";
/// Fully sequential, the old tool's other shape.
const SEQUENTIAL: &str = "atm ; ice ; lnd ; ocn";
/// Run-to-run noise of a timing run (relative standard deviation).
const NOISE: f64 = 0.015;
/// How much slower the noisy point is.
const SLOW: f64 = 1.3;
/// The measured task counts, as fractions of the total.
const FRACTIONS: [f64; 5] = [1.0 / 16.0, 1.0 / 8.0, 1.0 / 4.0, 1.0 / 2.0, 1.0];

/// CIME layouts: autolb against the old load-balancing tool (docs/src/benchmarks.md).
#[derive(Parser)]
struct Args {
    /// The seeds to run: a range like 1-30 or a list like 3,7,10 [default: 1-30, then fresh ones].
    #[arg(long)]
    seeds: Option<Seeds>,
    /// How many fresh seeds to draw after seeds 1-30 when `--seeds` is not given.
    #[arg(long, default_value_t = 10)]
    fresh: usize,
}

/// One class's true curve: seconds per simulated day on `n` tasks.
#[derive(Clone, Copy)]
struct Curve {
    a: f64,
    b: f64,
    c: f64,
}

impl Curve {
    fn time(&self, n: u32) -> f64 {
        let n = f64::from(n);
        self.a / n + self.b + self.c * n
    }
}

/// A case: the true curves, the total of PEs and the timing runs `(class, tasks, seconds)`.
struct Case {
    truth: Vec<Curve>,
    total: u32,
    runs: Vec<(usize, u32, f64)>,
    /// The run made slow in the noisy variant.
    noisy: usize,
}

fn draw(seed: u64) -> Case {
    let mut rng = StdRng::seed_from_u64(seed);
    let total = [256, 384, 512, 768, 1024][rng.random_range(0..5)];
    // Parallel work in task-seconds per simulated day, and where each class stops scaling
    // (its fastest count, sqrt(a / c)), in plausible ranges for a 1-degree CESM case.
    let work = [
        (20_000.0, 60_000.0),
        (3_000.0, 12_000.0),
        (1_500.0, 8_000.0),
        (10_000.0, 40_000.0),
    ];
    let truth: Vec<Curve> = work
        .iter()
        .map(|&(lo, hi)| {
            let a: f64 = rng.random_range(lo..hi);
            let fastest_at: f64 = (rng.random_range(200.0_f64.ln()..3000.0_f64.ln())).exp();
            Curve {
                a,
                b: rng.random_range(0.2..3.0),
                c: a / (fastest_at * fastest_at),
            }
        })
        .collect();
    let mut runs = Vec::new();
    for (class, curve) in truth.iter().enumerate() {
        for f in FRACTIONS {
            let n = ((f64::from(total) * f).round() as u32).max(1);
            runs.push((class, n, curve.time(n) * (1.0 + NOISE * normal(&mut rng))));
        }
    }
    let noisy = rng.random_range(0..runs.len());
    Case {
        truth,
        total,
        runs,
        noisy,
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let v: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A method's answer: tasks per class (CLASSES order) and the PEs the layout spans.
struct Answer {
    tasks: [u32; 4],
    shape: &'static str,
    width: u32,
}

/// The runs of one class, sorted by tasks.
fn class_runs(runs: &[(usize, u32, f64)], class: usize) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = runs
        .iter()
        .filter(|r| r.0 == class)
        .map(|r| (r.1, r.2))
        .collect();
    out.sort_by_key(|p| p.0);
    out
}

/// Piecewise-linear interpolation between measured counts; `None` outside them.
fn interpolate(points: &[(u32, f64)], n: u32) -> Option<f64> {
    let i = points.partition_point(|p| p.0 < n);
    let (hi_n, hi_t) = *points.get(i)?;
    if hi_n == n {
        return Some(hi_t);
    }
    let (lo_n, lo_t) = *points.get(i.checked_sub(1)?)?;
    let w = f64::from(n - lo_n) / f64::from(hi_n - lo_n);
    Some(lo_t + w * (hi_t - lo_t))
}

/// The old tool's method: interpolated curves, every PE of the total used, two fixed shapes.
fn old_tool(runs: &[(usize, u32, f64)], total: u32) -> Option<Answer> {
    let curves: Vec<Vec<(u32, f64)>> = (0..4).map(|c| class_runs(runs, c)).collect();
    let t = |class: usize, n: u32| interpolate(&curves[class], n);
    let mut best: Option<(f64, Answer)> = None;
    let mut offer = |time: f64, answer: Answer| {
        if best.as_ref().is_none_or(|b| time < b.0) {
            best = Some((time, answer));
        }
    };
    // Fully sequential: every class on all PEs.
    if let (Some(a), Some(i), Some(l), Some(o)) =
        (t(0, total), t(1, total), t(2, total), t(3, total))
    {
        offer(
            a + i + l + o,
            Answer {
                tasks: [total; 4],
                shape: SEQUENTIAL,
                width: total,
            },
        );
    }
    // ocn beside atm, ice and lnd splitting atm's PEs.
    for ocn in 1..total {
        let atm = total - ocn;
        let (Some(to), Some(ta)) = (t(3, ocn), t(0, atm)) else {
            continue;
        };
        for ice in 1..atm {
            let lnd = atm - ice;
            let (Some(ti), Some(tl)) = (t(1, ice), t(2, lnd)) else {
                continue;
            };
            offer(
                to.max(ta + ti.max(tl)),
                Answer {
                    tasks: [atm, ice, lnd, ocn],
                    shape: CONCURRENT,
                    width: total,
                },
            );
        }
    }
    best.map(|b| b.1)
}

/// The exact search of both shapes within `total` on `time(class, tasks)`.
fn search(total: u32, time: &dyn Fn(usize, u32) -> f64) -> Answer {
    let index = |name: &str| CLASSES.iter().position(|c| *c == name).expect("a class");
    let counts = |_: &str| (1..=total).collect::<Vec<u32>>();
    let mut best: Option<(f64, Answer)> = None;
    for shape in [CONCURRENT, SEQUENTIAL] {
        let layout = Layout::parse(shape).expect("the shapes parse");
        let found = fastest(&layout, total, 1, &counts, &|name, n| {
            Some(time(index(name), n))
        })
        .expect("the total is within the search's range")
        .expect("one task per class fits");
        if best.as_ref().is_none_or(|b| found.run_s < b.0) {
            let mut tasks = [0; 4];
            for p in &found.placements {
                tasks[index(&p.name)] = p.tasks;
            }
            best = Some((
                found.run_s,
                Answer {
                    tasks,
                    shape,
                    width: found.width,
                },
            ));
        }
    }
    best.expect("two shapes searched").1
}

/// autolb's method: each class's scaling law from its runs, then the exact search. Where a
/// class's top run is doubtful (slow, or the class stops scaling: the runs cannot tell), the
/// search runs under both readings and the layout with the least regret under either wins.
fn autolb(runs: &[(usize, u32, f64)], total: u32) -> Answer {
    let laws: Vec<robust_law::RobustLaw> = (0..4)
        .map(|class| {
            let points: Vec<robust_law::Point> = class_runs(runs, class)
                .iter()
                .map(|&(n, t)| (f64::from(n), 1.0 / t, NOISE * NOISE))
                .collect();
            robust_law::fit(&points).expect("five runs per class fit")
        })
        .collect();
    let base: Vec<ScalingLaw> = laws.iter().map(|l| l.law.clone()).collect();
    let mut readings = vec![base.clone()];
    for (class, l) in laws.iter().enumerate() {
        if let Some(alternative) = &l.alternative {
            let mut reading = base.clone();
            reading[class] = alternative.clone();
            readings.push(reading);
        }
    }
    let mut answers: Vec<Answer> = readings
        .iter()
        .map(|r| search(total, &|class, n| 1.0 / r[class].sypd(f64::from(n))))
        .collect();
    let times: Vec<Vec<f64>> = answers
        .iter()
        .map(|a| {
            readings
                .iter()
                .map(|r| time_of(a, &|class, n| 1.0 / r[class].sypd(f64::from(n))))
                .collect()
        })
        .collect();
    answers.swap_remove(robust_law::least_regret(&times))
}

/// The time per simulated day of an answer with the classes' times `time(class, tasks)`.
fn time_of(answer: &Answer, time: &dyn Fn(usize, u32) -> f64) -> f64 {
    let layout = Layout::parse(answer.shape).expect("the shapes parse");
    layout
        .run_time(&|name| {
            let class = CLASSES.iter().position(|c| *c == name)?;
            Some(time(class, answer.tasks[class]))
        })
        .expect("every class has a time")
}

/// The true time per simulated day of an answer.
fn true_time(case: &Case, answer: &Answer) -> f64 {
    time_of(answer, &|class, n| case.truth[class].time(n))
}

/// Core-hours per simulated year of a layout taking `seconds_per_day` on `cores`.
fn chsy(seconds_per_day: f64, cores: u32) -> f64 {
    seconds_per_day * 365.0 / 3600.0 * f64::from(cores)
}

/// Regret and cost of both methods on one variant of a case.
struct Scores {
    /// Old tool's method, autolb, and the true optimum (regret 0).
    regret: [f64; 3],
    cost: [f64; 3],
}

fn score(case: &Case, runs: &[(usize, u32, f64)]) -> Scores {
    let optimum = search(case.total, &|class, n| case.truth[class].time(n));
    let best = true_time(case, &optimum);
    let answers = [
        old_tool(runs, case.total).expect("the total is a measured count"),
        autolb(runs, case.total),
    ];
    let mut scores = Scores {
        regret: [0.0; 3],
        cost: [0.0, 0.0, chsy(best, optimum.width)],
    };
    for (i, answer) in answers.iter().enumerate() {
        let t = true_time(case, answer);
        scores.regret[i] = t / best - 1.0;
        scores.cost[i] = chsy(t, answer.width);
    }
    scores
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    let args = Args::parse();
    let seeds: Vec<u64> = match args.seeds {
        Some(Seeds(seeds)) => seeds,
        None => {
            let fresh = fresh_seeds(args.fresh);
            println!("fresh seeds: {} (rerun with --seeds)", seed_list(&fresh));
            (1..=30).chain(fresh).collect()
        }
    };
    println!("seeds: {}", seed_list(&seeds));
    println!(
        "{:>7} {:>5}  {:>9} {:>9}  {:>9} {:>9}",
        "seed", "PEs", "old", "autolb", "old noisy", "autolb noisy"
    );
    let mut clean = Vec::new();
    let mut noisy = Vec::new();
    for &seed in &seeds {
        let case = draw(seed);
        let a = score(&case, &case.runs);
        let mut runs = case.runs.clone();
        runs[case.noisy].2 *= SLOW;
        let b = score(&case, &runs);
        println!(
            "{seed:>7} {:>5}  {:>8.2}% {:>8.2}%  {:>8.2}% {:>8.2}%",
            case.total,
            100.0 * a.regret[0],
            100.0 * a.regret[1],
            100.0 * b.regret[0],
            100.0 * b.regret[1]
        );
        clean.push(a);
        noisy.push(b);
    }
    println!();
    println!("| cases | method | regret median | regret max | cases > 1 % | cases > 5 % | CHSY median | CHSY max |");
    println!("|:---|:---|---:|---:|---:|---:|---:|---:|");
    for (label, set) in [("clean", &clean), ("one run 30 % slow", &noisy)] {
        for (i, method) in ["old tool's method", "autolb", "true optimum"]
            .iter()
            .enumerate()
        {
            let mut regret: Vec<f64> = set.iter().map(|s| s.regret[i]).collect();
            let n = regret.len();
            let mut cost: Vec<f64> = set.iter().map(|s| s.cost[i]).collect();
            let (rmax, cmax) = (
                regret.iter().copied().fold(0.0, f64::max),
                cost.iter().copied().fold(0.0, f64::max),
            );
            let over = |limit: f64| regret.iter().filter(|&&r| r > limit).count();
            let (over_1, over_5) = (over(0.01), over(0.05));
            println!(
                "| {label} | {method} | {:.2} % | {:.2} % | {over_1} of {n} | {over_5} of {n} | {:.0} | {:.0} |",
                100.0 * median(&mut regret),
                100.0 * rmax,
                median(&mut cost),
                cmax
            );
        }
    }
}
