//! The demo campaign (README): the stand-in model on the bundled EC-Earth3 curves runs to the
//! end in well under a minute, and its status shows the iterations and the best configuration.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use autolb::campaign::{self, DriveEvent, DriveOptions, DriveOutcome, Phase};
use serde_json::Value;

use crate::common::autolb;

#[test]
fn the_readme_demo_runs_to_the_end_in_under_a_minute() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let init = autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--demo")
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let start = Instant::now();
    let run = autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    eprintln!("demo campaign: {took:?}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // Not a terminal: plain progress lines.
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        out.contains("iteration 1:") && out.contains("start i00-t00-r1"),
        "{out}"
    );

    let status = autolb()
        .args(["campaign", "status", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["state"], "done");
    assert!(status["iterations"].as_array().unwrap().len() >= 2);
    let best = &status["best"];
    assert!(best["nproc"]["IFS"].as_u64().is_some() && best["nproc"]["NEMO"].as_u64().is_some());
    // EC-Earth3 SR on 672 PEs runs at about 17-18 SYPD in the curves.
    let sypd = best["sypd"].as_f64().unwrap();
    assert!((15.0..20.0).contains(&sypd), "{sypd}");
    let table = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("campaign done") && table.contains("best so far: IFS"),
        "{table}"
    );
}

/// What the terminal app does: a demo campaign in a temp dir, driven on a background thread,
/// stopped, and resumed.
#[test]
fn the_demo_can_be_driven_from_a_thread_stopped_and_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = campaign::demo::init_demo(tmp.path(), Some(0.005)).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let opts = DriveOptions {
        jobs: Some(2),
        observer: Some(Arc::new(move |e: &DriveEvent| {
            seen.lock().unwrap().push(e.clone())
        })),
        poll_interval: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handle = {
        let (dir, opts, stop) = (dir.clone(), opts.clone(), Arc::clone(&stop));
        std::thread::spawn(move || campaign::drive(&dir, &opts, &stop))
    };
    // Stop once a few runs have ended.
    let start = Instant::now();
    while campaign::status(&dir).unwrap().counts.done < 3 {
        assert!(start.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(handle.join().unwrap().unwrap(), DriveOutcome::Stopped);
    let status = campaign::status(&dir).unwrap();
    assert_eq!(status.state, Phase::Running);
    assert_eq!(status.counts.running, 0, "stopped runs go back to pending");
    stop.store(false, std::sync::atomic::Ordering::SeqCst);
    let outcome = campaign::drive(&dir, &opts, &stop).unwrap();
    let DriveOutcome::Done { best } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(best.is_some());
    assert_eq!(campaign::status(&dir).unwrap().best, best);
    let events = events.lock().unwrap();
    assert!(events.iter().any(|e| matches!(e, DriveEvent::Stopped)));
    assert!(events
        .iter()
        .any(|e| matches!(e, DriveEvent::TestDecided { .. })));
    assert!(matches!(events.last(), Some(DriveEvent::Done { .. })));
}

/// What the terminal app does with a run it sees finishing before the driver records it.
#[test]
fn a_viewer_overlays_a_finished_run_from_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let mut status = campaign::status(&dir).unwrap();
    let run = status.iterations[0].tests[0].runs[0].clone();
    assert!(!status.overlay_run(&run.run));
    assert_eq!(status.measure_run(&run.run), Ok(None));
    let nproc = &status.iterations[0].tests[0].nproc;
    let components = status
        .timing_names
        .iter()
        .zip(nproc.values())
        .map(|(timing, &p)| autolb::sim::SimComponent {
            name: timing.clone(),
            nproc: p,
            curve: autolb::sim::builtin_curve(timing).unwrap(),
            threads: 1,
        })
        .collect();
    let sim = autolb::sim::SimRun::new(&Default::default(), components, 7);
    autolb::sim::simulate(&sim, &run.run_dir).unwrap();
    assert!(status.overlay_run(&run.run));
    let row = &status.iterations[0].tests[0];
    assert_eq!(row.runs[0].state, campaign::RunState::Done);
    // The demo (guided) runs each configuration once at first: its only run is done.
    // With more runs the others wait: the test is pending, as the counts say.
    let expected = if row.runs.len() > 1 {
        campaign::TestState::Pending
    } else {
        campaign::TestState::Done
    };
    assert_eq!(row.state, expected);
    assert!(row.sypd.unwrap() > 10.0);
    assert_eq!(status.best.as_ref().unwrap().test, 0);
    // Overlaying is a view only: the state on disk is untouched.
    assert_eq!(campaign::status(&dir).unwrap().counts.done, 0);
}

/// A stand-in model that fails now and then: failed runs are recorded as failed, never
/// averaged in, and never the best.
#[test]
fn failing_runs_are_recorded_and_never_averaged() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign::demo::write_demo_inputs(tmp.path()).unwrap();
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "compression = 0.01",
        "compression = 0.002\nfail_probability = 0.35\nseed = 11",
    );
    std::fs::write(&file, text).unwrap();
    let dir = tmp.path().join("camp");
    campaign::init_file(&dir, &file, campaign::InitMode::New).unwrap();
    let stop = AtomicBool::new(false);
    let outcome = campaign::drive(&dir, &DriveOptions::default(), &stop).unwrap();
    assert!(matches!(outcome, DriveOutcome::Done { .. }));
    let status = campaign::status(&dir).unwrap();
    assert!(
        status.counts.failed > 0,
        "no run failed: {:?}",
        status.counts
    );
    let mut mixed = 0;
    for it in &status.iterations {
        for t in &it.tests {
            let done: Vec<f64> = t.runs.iter().filter_map(|r| r.sypd).collect();
            for r in &t.runs {
                if r.state == campaign::RunState::Failed {
                    assert!(r.sypd.is_none());
                    assert!(r.failure.as_deref().unwrap().starts_with("exit status 1"));
                }
            }
            match done.len() {
                0 => {
                    assert_eq!(t.state, campaign::TestState::Failed);
                    assert!(t.sypd.is_none() && t.fittingness.is_none());
                }
                n => {
                    if n < t.runs.len() {
                        mixed += 1;
                    }
                    let mean = done.iter().sum::<f64>() / n as f64;
                    assert!((t.sypd.unwrap() - mean).abs() < 1e-12);
                }
            }
        }
    }
    eprintln!("{mixed} tests with both measured and failed runs");
    let best = status.best.unwrap();
    assert!(best.sypd.is_finite());
}
