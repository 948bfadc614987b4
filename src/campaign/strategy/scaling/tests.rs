//! The scaling strategy on the stand-in model, with random truths nobody chose
//! ([`crate::sim::synthetic`]): campaigns run to the end, and the curves they write follow the
//! true standalone speed.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::*;
use crate::campaign::{drive, init, DriveOptions};
use crate::config::CampaignFile;
use crate::curve::Curve;
use crate::sim::synthetic::{write_curve_csv, SyntheticCase};

/// A standalone scaling campaign file for a synthetic case, its truths written into `dir`.
fn scaling_file(case: &SyntheticCase, dir: &Path, extra: &str) -> CampaignFile {
    let mut text = String::new();
    let mut sim = String::from("[executor.sim]\nsteps = 12\n");
    sim.push_str(&format!("seed = {}\n", case.seed));
    let mut truths = String::from("[executor.sim.curves]\n");
    let mut alone = String::from("[executor.sim.standalone_curves]\n");
    for c in &case.components {
        let truth = dir.join(format!("truth_{}.csv", c.name));
        let sa = dir.join(format!("standalone_{}.csv", c.name));
        write_curve_csv(&c.coupled_truth, &truth).unwrap();
        write_curve_csv(&c.standalone_truth, &sa).unwrap();
        text.push_str(&format!(
            "[[component]]\nname = \"{}\"\nmin_nproc = {}\nmax_nproc = {}\n\n",
            c.name,
            c.standalone.first_nproc(),
            c.standalone.last_nproc()
        ));
        truths.push_str(&format!("{} = {:?}\n", c.name, truth.display().to_string()));
        alone.push_str(&format!("{} = {:?}\n", c.name, sa.display().to_string()));
    }
    text.push_str(&format!(
        "[scaling]\ndesign = \"standalone\"\n{extra}\n[executor]\nkind = \"sim\"\njobs = 8\n\n{sim}\n{truths}\n{alone}"
    ));
    CampaignFile::parse(&text, "scaling.toml").unwrap()
}

fn run_to_end(case: &SyntheticCase, tmp: &Path, extra: &str) -> State {
    let file = scaling_file(case, tmp, extra);
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    State::load(&dir).unwrap()
}

#[test]
fn campaigns_on_random_truths_end_and_their_curves_follow_the_standalone_truth() {
    for seed in [3, 11, 29] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let state = run_to_end(&case, tmp.path(), "");
        assert!(state.is_done(), "seed {seed}");
        let dir = tmp.path().join("campaign");
        for (k, c) in case.components.iter().enumerate() {
            let written = Curve::load(c.name.clone(), &dir.join(&state.components[k].curve))
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            // Every measured point is the true standalone speed within the noise.
            for p in written.points() {
                let truth = c.standalone_sypd(p.nproc);
                let off = (p.sypd - truth).abs() / truth;
                assert!(
                    off < 0.03,
                    "seed {seed} {} at {}: {} vs {truth}",
                    c.name,
                    p.nproc,
                    p.sypd
                );
            }
            assert!(
                written.points().len() >= 4,
                "seed {seed}: {:?}",
                written.points()
            );
            // The first series spans the range.
            assert_eq!(written.first_nproc(), c.standalone.first_nproc());
        }
        // Every test carries its reason and one component.
        for it in &state.iterations {
            for t in &it.tests {
                assert!(t
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("scaling: ")));
                let c = t.component.unwrap();
                assert!(t
                    .nproc
                    .iter()
                    .enumerate()
                    .all(|(k, &p)| (k == c) == (p > 0)));
            }
        }
    }
}

#[test]
fn the_run_budget_holds() {
    let case = SyntheticCase::generate(5, 2);
    let tmp = tempfile::tempdir().unwrap();
    let state = run_to_end(
        &case,
        tmp.path(),
        "counts = 4\nrepetitions = 2\nmax_runs = 18\n",
    );
    assert!(state.is_done());
    let runs: usize = state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .map(|t| t.runs.len())
        .sum();
    assert!((16..=18).contains(&runs), "{runs}");
}

#[test]
#[ignore]
fn show_a_campaign() {
    let case = SyntheticCase::generate(3, 2);
    let tmp = tempfile::tempdir().unwrap();
    let state = run_to_end(&case, tmp.path(), "");
    for it in &state.iterations {
        for t in &it.tests {
            let s: Vec<String> = t
                .runs
                .iter()
                .map(|r| format!("{:.4}", r.metrics.as_ref().map_or(0.0, |m| m.sypd)))
                .collect();
            eprintln!(
                "it {} test {} {:?} {:?} {:?} {}",
                it.index,
                t.test,
                t.nproc,
                t.reason,
                t.decision.as_ref().map(|d| &d.outcome),
                s.join(" ")
            );
        }
    }
    eprintln!(
        "{}",
        std::fs::read_to_string(tmp.path().join("campaign/curves/IFS.csv")).unwrap_or_default()
    );
}
