//! Wall time and peak memory of the prediction on the target scenarios, each in a fresh
//! process so that peak memory is the scenario's own.
//!
//! `cargo run --release --example predict_scale` runs all of them (each in a child process);
//! `cargo run --release --example predict_scale -- N` runs scenario N only;
//! `cargo run --release --example predict_scale -- calibrated` times the ranking with the
//! calibrated model (`predict --measured`) on the bundled runs, with and without curves.

use std::time::Instant;

use autolb::predict::{full_model, Problem, ProblemOptions};

#[path = "../benches/support/scenarios.rs"]
mod scenarios;

fn peak_rss_mib() -> f64 {
    // VmHWM: the peak resident set size of this process.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// `predict --measured` without reading the runs: the calibrated problem built and ranked by
/// the full model, best of five, per scenario of [`scenarios::calibrated`].
fn calibrated() {
    for s in scenarios::calibrated() {
        let mut best = f64::INFINITY;
        let mut result = None;
        for _ in 0..5 {
            let start = Instant::now();
            let problem = Problem::build(
                &s.inputs,
                &s.settings,
                ProblemOptions {
                    model: Some(&s.model),
                    cost_model: None,
                },
            )
            .expect("valid scenario");
            let p = full_model::rank(&problem, &s.model, &s.inputs, 0.5, 5);
            best = best.min(start.elapsed().as_secs_f64());
            result = Some(p);
        }
        let p = result.expect("ranked");
        println!(
            "{:<58} {:>9.2} ms  feasible {:>9}  best {:?} at {:.2} SYPD",
            s.name,
            best * 1e3,
            p.configurations,
            p.top[0].nproc,
            p.top[0].sypd
        );
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("calibrated") {
        calibrated();
        return;
    }
    let scenarios = scenarios::all();
    match std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
    {
        Some(n) => {
            let s = &scenarios[n];
            let base = peak_rss_mib();
            let start = Instant::now();
            let problem = Problem::new(&s.inputs, &s.settings).expect("valid scenario");
            let prediction = problem.rank(s.settings.tts_w, s.settings.top);
            let elapsed = start.elapsed();
            let best = &prediction.top[0];
            println!(
                "{:<48} {:>9.1} ms {:>8.1} MiB peak ({:.1} MiB before) feasible {:>12} kept {:>12} best {:?}",
                s.name,
                elapsed.as_secs_f64() * 1e3,
                peak_rss_mib(),
                base,
                prediction.configurations,
                prediction.considered,
                best.nproc
            );
        }
        None => {
            let exe = std::env::current_exe().expect("own path");
            for n in 0..scenarios.len() {
                let status = std::process::Command::new(&exe).arg(n.to_string()).status();
                if !status.is_ok_and(|s| s.success()) {
                    eprintln!("scenario {n} failed");
                    std::process::exit(1);
                }
            }
        }
    }
}
