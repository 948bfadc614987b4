//! How well the calibrated model without curves predicts EC-Earth4-like runs it was not
//! designed on: `cargo run --example ec4_model_check [-- --seed N] [--sets K]`.
//!
//! Draws `K` run sets (default 4) of every family of [`autolb::sim::ec4_runs`] with seeds
//! drawn now (printed: `--seed N` draws the same sets again), and takes the EC-Earth3
//! lucia_lite runs bundled in tests/fixtures, each component learned from the runs alone.
//! On each, leave-one-out (repeats of a configuration held out together) for:
//! - `old`: the model's law terms chosen by AIC with a ratio smoother at the run-to-run noise
//!   ([`LawChoice::Aic`]), what `autolb model check --component` did before;
//! - `naive`: `1 / SYPD = a / n + b + c n` per component by least squares, the coupled run at
//!   the slowest component times the training runs' mean coupling factor, and a band of 1.645
//!   training residual sds;
//! - `new`: the model as it is ([`LawChoice::LeaveOneOut`]), without and with NEMO's reported
//!   decompositions.
//!
//! Prints the median and largest absolute error and the share of runs inside the band, pooled
//! over the sets of each family and over all of them; then how many sets meet every target on
//! their own (median <= 7 %, max <= 25 %, band >= 80 %) and the median over sets of a set's
//! largest error (a set is one sweep, as a user's 20-30 runs are).

use std::path::Path;

use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::model::check::{leave_one_out_by, CheckRow, ErrorStats};
use autolb::model::decomposition::Layouts;
use autolb::model::measured::{load_runs_dir, Naming};
use autolb::model::steps::Steps;
use autolb::model::{ComponentCurve, FitOptions, LawChoice, MeasuredRun, Model};
use autolb::sim::ec4_runs::{families, generate};

/// A component known by name only: learned from the runs.
struct Bare(String);

impl ComponentCurve for Bare {
    fn name(&self) -> &str {
        &self.0
    }
    fn standalone(&self) -> Option<&Curve> {
        None
    }
}

/// The models compared, in table order.
const MODELS: [&str; 4] = ["old", "naive", "new", "new+decomp"];

/// Leave-one-out rows of every model on `runs`.
fn check_all(names: &[&str], runs: &[MeasuredRun], layouts: &Layouts) -> Vec<Vec<CheckRow>> {
    let comps: Vec<Bare> = names.iter().map(|n| Bare(n.to_string())).collect();
    let interp = Method::default();
    let steps = Steps::default();
    let with = |options: FitOptions| {
        leave_one_out_by(&comps, interp, runs, &steps, &|train| {
            Model::fit_with_options(&comps, interp, train, &steps, &options).0
        })
        .0
        .runs
    };
    vec![
        with(FitOptions {
            layouts: Layouts::default(),
            laws: LawChoice::Aic,
        }),
        naive_leave_one_out(names, runs),
        with(FitOptions::default()),
        with(FitOptions {
            layouts: layouts.clone(),
            laws: LawChoice::LeaveOneOut,
        }),
    ]
}

/// `1 / SYPD = b + a / n + c n` by least squares on relative errors, every coefficient
/// `>= 0` (each subset of terms tried, the best non-negative fit kept).
fn naive_law(points: &[(f64, f64)]) -> [f64; 3] {
    let mut best = ([0.0; 3], f64::INFINITY);
    for mask in 1u8..8 {
        let cols: Vec<usize> = (0..3).filter(|k| mask & (1 << k) != 0).collect();
        let k = cols.len();
        if k > points.len() {
            continue;
        }
        let mut ata = vec![0.0; k * k];
        let mut atb = vec![0.0; k];
        for &(n, days) in points {
            let x = [1.0 / days, 1.0 / (n * days), n / days];
            for a in 0..k {
                atb[a] += x[cols[a]];
                for b in 0..k {
                    ata[a * k + b] += x[cols[a]] * x[cols[b]];
                }
            }
        }
        let Some(sol) = solve(&ata, &atb, k) else {
            continue;
        };
        if sol.iter().any(|v| *v < 0.0 || !v.is_finite()) {
            continue;
        }
        let mut theta = [0.0; 3];
        for (a, &c) in cols.iter().enumerate() {
            theta[c] = sol[a];
        }
        let sse: f64 = points
            .iter()
            .map(|&(n, d)| ((theta[0] + theta[1] / n + theta[2] * n) / d - 1.0).powi(2))
            .sum();
        if sse < best.1 - 1e-12 {
            best = (theta, sse);
        }
    }
    best.0
}

/// Gaussian elimination with partial pivoting; `None` when singular.
fn solve(a: &[f64], b: &[f64], k: usize) -> Option<Vec<f64>> {
    let mut m: Vec<Vec<f64>> = (0..k)
        .map(|i| {
            let mut row = a[i * k..(i + 1) * k].to_vec();
            row.push(b[i]);
            row
        })
        .collect();
    for c in 0..k {
        let p = (c..k).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        let pivot = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, &y) in row.iter_mut().zip(&pivot).skip(c) {
                    *x -= f * y;
                }
            }
        }
    }
    Some((0..k).map(|i| m[i][k] / m[i][i]).collect())
}

fn naive_leave_one_out(names: &[&str], runs: &[MeasuredRun]) -> Vec<CheckRow> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let predict = |laws: &[[f64; 3]], nproc: &[u32]| {
        laws.iter()
            .zip(nproc)
            .map(|(t, &n)| 1.0 / (t[0] + t[1] / f64::from(n) + t[2] * f64::from(n)))
            .fold(f64::INFINITY, f64::min)
    };
    runs.iter()
        .map(|run| {
            let key = run.nproc_of(&names);
            let train: Vec<&MeasuredRun> =
                runs.iter().filter(|o| o.nproc_of(&names) != key).collect();
            let laws: Vec<[f64; 3]> = names
                .iter()
                .map(|n| {
                    let pts: Vec<(f64, f64)> = train
                        .iter()
                        .filter_map(|r| r.component(n))
                        .map(|c| (f64::from(c.nproc), 1.0 / c.sypd))
                        .collect();
                    naive_law(&pts)
                })
                .collect();
            let factors: Vec<f64> = train
                .iter()
                .map(|r| (r.coupled_sypd / r.slowest_sypd().unwrap_or(f64::NAN)).ln())
                .collect();
            let k = factors.iter().sum::<f64>() / factors.len() as f64;
            let resid: Vec<f64> = train
                .iter()
                .map(|r| {
                    (r.coupled_sypd / (k.exp() * predict(&laws, &r.nproc_of(&names).unwrap()))).ln()
                })
                .collect();
            let sd = (resid.iter().map(|r| r * r).sum::<f64>() / resid.len() as f64).sqrt();
            let nproc = key.unwrap();
            let mid = k.exp() * predict(&laws, &nproc);
            CheckRow {
                path: run.path.clone(),
                nproc: names.iter().cloned().zip(nproc).collect(),
                measured_sypd: run.coupled_sypd,
                standalone_sypd: None,
                calibrated_sypd: mid,
                low: mid * (-1.645 * sd).exp(),
                high: mid * (1.645 * sd).exp(),
            }
        })
        .collect()
}

/// Median and largest absolute error and the band's coverage of `rows`, as fractions.
fn summary(rows: &[CheckRow]) -> (f64, f64, f64) {
    let e: Vec<f64> = rows.iter().map(CheckRow::calibrated_error).collect();
    let s = ErrorStats::of(&e);
    let covered = rows.iter().filter(|r| r.covered()).count() as f64 / rows.len() as f64;
    (s.median, s.max, covered)
}

/// The targets for one set: median <= 7 %, max <= 25 %, band holding >= 80 %.
fn meets_targets(rows: &[CheckRow]) -> bool {
    let (median, max, coverage) = summary(rows);
    median <= 0.07 && max <= 0.25 && coverage >= 0.8
}

/// `median / max / band` of pooled rows, in percent.
fn figures(rows: &[CheckRow]) -> String {
    let (median, max, coverage) = summary(rows);
    format!(
        "{:5.1} {:6.1} {:5.0}",
        100.0 * median,
        100.0 * max,
        100.0 * coverage
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<u64>().expect("a whole number"))
    };
    let seed = value("--seed").unwrap_or_else(|| rand::random::<u32>().into());
    let sets = value("--sets").unwrap_or(4) as usize;
    let verbose = args.iter().any(|a| a == "--verbose");
    println!("EC-Earth4-like run sets, seed {seed} (again: --seed {seed} --sets {sets})");
    println!("leave-one-out, absolute SYPD error: median % / max % / runs in the band %");
    print!("{:<14} {:>5}", "family", "runs");
    for m in MODELS {
        print!(" | {m:^18}");
    }
    println!();
    let mut all: Vec<Vec<CheckRow>> = vec![Vec::new(); MODELS.len()];
    // Per model: sets meeting every target, and each set's largest error.
    let mut met = [0usize; MODELS.len()];
    let mut set_max: Vec<Vec<f64>> = vec![Vec::new(); MODELS.len()];
    let mut set_count = 0;
    for (f, family) in families().iter().enumerate() {
        let mut pooled: Vec<Vec<CheckRow>> = vec![Vec::new(); MODELS.len()];
        for s in 0..sets {
            let set_seed = seed.wrapping_mul(1_000).wrapping_add((f * 100 + s) as u64);
            let set = generate(family, set_seed);
            let rows = check_all(&["oifs", "nemo"], &set.runs, &set.layouts);
            if verbose {
                print!("  {:<12} {:>5}", format!("seed {set_seed}"), set.runs.len());
                for r in &rows {
                    print!(" | {:^18}", figures(r));
                }
                println!();
                for (m, r) in MODELS.iter().zip(&rows) {
                    let worst = r
                        .iter()
                        .max_by(|a, b| {
                            a.calibrated_error()
                                .abs()
                                .total_cmp(&b.calibrated_error().abs())
                        })
                        .expect("rows");
                    println!(
                        "    worst {m}: {} measured {:.2} predicted {:.2} band {:.2}-{:.2}",
                        worst.path,
                        worst.measured_sypd,
                        worst.calibrated_sypd,
                        worst.low,
                        worst.high
                    );
                }
            }
            set_count += 1;
            for (m, r) in rows.iter().enumerate() {
                met[m] += usize::from(meets_targets(r));
                set_max[m].push(summary(r).1);
            }
            for (p, r) in pooled.iter_mut().zip(rows) {
                p.extend(r);
            }
        }
        print!("{:<14} {:>5}", family.name, pooled[0].len());
        for r in &pooled {
            print!(" | {:^18}", figures(r));
        }
        println!();
        for (a, p) in all.iter_mut().zip(pooled) {
            a.extend(p);
        }
    }
    print!("{:<14} {:>5}", "all families", all[0].len());
    for r in &all {
        print!(" | {:^18}", figures(r));
    }
    println!();
    print!("{:<20}", "sets meeting targets");
    for m in met {
        print!(" | {:^18}", format!("{m} of {set_count}"));
    }
    println!();
    print!("{:<20}", "median set max %");
    for v in &mut set_max {
        v.sort_by(f64::total_cmp);
        let mid = autolb::model::check::median_sorted(v);
        print!(" | {:^18}", format!("{:.1}", 100.0 * mid));
    }
    println!();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
    let (runs, _) = load_runs_dir(&root.join("tests/fixtures/lucia_lite"), &names, None)
        .expect("tests/fixtures/lucia_lite");
    let rows = check_all(&["IFS", "NEMO"], &runs, &Layouts::default());
    print!("{:<14} {:>5}", "lucia_lite", rows[0].len());
    for r in &rows {
        print!(" | {:^18}", figures(r));
    }
    println!();
}
