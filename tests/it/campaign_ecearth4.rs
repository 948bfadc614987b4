//! EC-Earth4-style campaigns: a hybrid OpenIFS (ranks x OpenMP threads) balanced against NEMO,
//! the stand-in model writing what an EC-Earth4 run leaves (OASIS 5's load_balancing_info.txt
//! and log/NNN/timing.log), measured through the EC-Earth4 readers: the sim executor, the
//! command executor running `autolb simulate`, and the state, status and report around them.

use std::path::{Path, PathBuf};

use crate::common::{autolb, autolb_path};
use autolb::campaign::{Phase, RunState, State};
use autolb::curve::Curve;
use autolb::sim::{self, SimComponent, SimOutput, SimRun, SimSettings};
use autolb::timing::{self, Format, ReadOptions};

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/ecearth4-mn5")
}

/// A campaign file with OpenIFS at `threads` and NEMO, and `executor` appended.
fn campaign_file(dir: &Path, threads: &str, executor: &str) -> PathBuf {
    let a = assets();
    let text = format!(
        r#"max_nproc = 1024
extra_pes = 10
tts_w = 0.5
top = 2
initial_step = 64
minimum_step = 16
repetitions = 1

[[component]]
name = "oifs"
timing_name = "OpenIFS"
curve = "{oifs}"
threads = {threads}

[[component]]
name = "nemo"
timing_name = "oceanx"
curve = "{nemo}"

{executor}
"#,
        oifs = a.join("oifs.csv").display(),
        nemo = a.join("nemo.csv").display(),
    );
    let path = dir.join("campaign.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn init(file: &Path, dir: &Path) {
    autolb()
        .args(["campaign", "init", "--config"])
        .arg(file)
        .arg(dir)
        .stdout_ok();
}

#[test]
fn a_hybrid_component_moves_whole_ranks_and_counts_cores() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "[4]", "");
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let state = State::load(&dir).unwrap();
    assert_eq!(state.components[0].threads, 4);
    assert_eq!(state.components[1].threads, 1);
    // The curve's 14..672 ranks at 4 threads are 56..2688 cores.
    assert_eq!(
        (state.components[0].low, state.components[0].high),
        (56, 2688)
    );
    for t in &state.iterations[0].tests {
        assert_eq!(t.nproc[0] % 4, 0, "{:?} is not whole ranks", t.nproc);
        assert!(t.nproc.iter().sum::<u32>() <= 1024, "{:?}", t.nproc);
    }
    // The campaign's copy of the curve counts cores.
    let copy = Curve::load("oifs", &dir.join(&state.components[0].curve)).unwrap();
    assert_eq!(copy.first_nproc(), 56);

    let first = state.iterations[0].tests[0].nproc[0];
    let plan = autolb()
        .args(["campaign", "plan", "--config"])
        .arg(&file)
        .stdout_ok();
    assert!(
        plan.contains(&format!("oifs {}x4 / nemo", first / 4)),
        "{plan}"
    );
    let text = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    assert!(text.contains(&format!("{}x4/", first / 4)), "{text}");
    let json: serde_json::Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(&dir)
            .stdout_ok(),
    )
    .unwrap();
    assert_eq!(json["threads"]["oifs"], 4);
    assert_eq!(json["threads"]["nemo"], 1);

    // A state written before threads were kept reads as pure MPI.
    let raw = std::fs::read_to_string(dir.join("campaign.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&raw).unwrap();
    for c in value["components"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("threads");
    }
    std::fs::write(dir.join("campaign.json"), value.to_string()).unwrap();
    let old = State::load(&dir).unwrap();
    assert!(old.components.iter().all(|c| c.threads == 1));
}

#[test]
fn the_campaign_takes_the_thread_count_the_prediction_chose() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "[1, 2, 4, 8]", "");
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let state = State::load(&dir).unwrap();
    let predicted = autolb()
        .args(["predict", "--json", "--config"])
        .arg(&file)
        .stdout_ok();
    let p: serde_json::Value = serde_json::from_str(&predicted).unwrap();
    let chosen = p["top"][0]["threads"]["oifs"].as_u64().unwrap() as u32;
    // The example's curves make 2 threads the best; the test holds while that is so.
    assert!(chosen > 1, "{predicted}");
    assert_eq!(state.components[0].threads, chosen);
    assert_eq!(state.iterations[0].tests[0].nproc[0] % chosen, 0);
}

#[test]
fn what_cannot_work_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "[4]", "[machine]\ncores_per_node = 2\n");
    let out = autolb()
        .args(["campaign", "init", "--config"])
        .arg(&file)
        .arg(tmp.path().join("camp"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("more than the 2 cores of one node") && err.lines().count() == 1,
        "{err}"
    );

    // The stand-in's built-in curves are pure MPI; a thread count its curve lacks is named.
    let out = autolb()
        .args([
            "simulate",
            "--comp",
            "IFS=64",
            "--threads",
            "IFS=4",
            "--comp",
            "NEMO=100",
        ])
        .arg("--out")
        .arg(tmp.path().join("s1"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--threads IFS=4: pass --curve IFS=PATH"),
        "{err}"
    );
    let out = autolb()
        .args([
            "simulate",
            "--comp",
            "OpenIFS=64",
            "--threads",
            "OpenIFS=3",
            "--curve",
        ])
        .arg(format!("OpenIFS={}", assets().join("oifs.csv").display()))
        .args(["--comp", "NEMO=100", "--out"])
        .arg(tmp.path().join("s2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not 3; add rows at 3 threads"), "{err}");
}

#[test]
fn the_stand_in_writes_an_ecearth4_run_that_reads_back_to_its_times() {
    let tmp = tempfile::tempdir().unwrap();
    let series = Curve::load_series("OpenIFS", &assets().join("oifs.csv")).unwrap();
    let oifs = sim::curve_at_threads(series, 4).unwrap();
    let nemo = Curve::load("oceanx", &assets().join("nemo.csv")).unwrap();
    let settings = SimSettings {
        output: Some(SimOutput::Oasis5),
        steps: Some(32),
        period_s: Some(2700.0),
        ..SimSettings::default()
    };
    let run = SimRun::new(
        &settings,
        vec![
            SimComponent {
                name: "OpenIFS".into(),
                nproc: 64,
                curve: oifs.clone(),
                threads: 4,
            },
            SimComponent {
                name: "oceanx".into(),
                nproc: 200,
                curve: nemo,
                threads: 1,
            },
        ],
        7,
    );
    let out = tmp.path().join("run");
    let outcome = sim::simulate(&run, &out).unwrap();
    assert!(out.join("load_balancing_info.txt").is_file());
    assert!(out.join("log/001/timing.log").is_file());
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("lucia")));

    let opts = ReadOptions {
        nproc: [("OpenIFS".to_string(), 256), ("oceanx".to_string(), 200)].into(),
        ..ReadOptions::default()
    };
    let reading = timing::read(&out, &opts).unwrap();
    let m = reading.complete().expect("a complete reading");
    assert_eq!(m.format, Format::Ecearth4);
    for c in &outcome.components {
        let read = m.component(&c.name).unwrap();
        // load_balancing_info.txt prints F8.3.
        assert!(
            (read.compute_s - c.compute_s).abs() < 6e-4,
            "{c:?} {read:?}"
        );
        assert!((read.wait_s - c.wait_s).abs() < 6e-4, "{c:?} {read:?}");
    }
    // timing.log's wall time to the microsecond; its simulated time, the leg's 32 steps.
    assert!((m.wall_s.unwrap() - outcome.total_wall_s).abs() < 1e-5);
    assert!((m.sim_s.unwrap() - 32.0 * 2700.0).abs() < 1e-6);

    // The hidden thread efficiency: 4 threads run below the curve's speed, by 0.92^2.
    let curve_sypd = outcome.components[0].truth_sypd / 0.92f64.powi(2);
    let at_64 = oifs
        .points()
        .iter()
        .find(|p| p.nproc == 56)
        .map(|p| p.sypd)
        .unwrap();
    assert!(
        curve_sypd > at_64,
        "{curve_sypd} vs the curve's {at_64} at 56 ranks"
    );
    assert_eq!(outcome.components[0].threads, 4);
}

#[test]
fn the_sim_executor_runs_an_ecearth4_campaign_to_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(
        tmp.path(),
        "[4]",
        "[executor]\nkind = \"sim\"\n\n[executor.sim]\noutput = \"oasis5\"\nsteps = 32\n",
    );
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let text = autolb().args(["campaign", "run"]).arg(&dir).stdout_ok();
    assert!(text.contains("campaign done"), "{text}");
    let state = State::load(&dir).unwrap();
    let runs: Vec<_> = state
        .iterations
        .iter()
        .flat_map(|it| it.tests.iter().flat_map(|t| &t.runs))
        .collect();
    assert!(runs.iter().all(|r| r.state == RunState::Done));
    let first = state.request(&dir, 0, 0, 0);
    assert!(first.run_dir.join("log/001/timing.log").is_file());
    assert!(first.run_dir.join("load_balancing_info.txt").is_file());

    // The report: ranks x threads in the iteration table, and the best configuration as
    // EC-Earth4 resources.
    let best = autolb::campaign::status(&dir).unwrap().best.unwrap();
    let (oifs, nemo) = (best.nproc.0[0].1, best.nproc.0[1].1);
    let html = tmp.path().join("report.html");
    autolb()
        .args(["report"])
        .arg(&dir)
        .arg("--out")
        .arg(&html)
        .stdout_ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("<td>{}x4/{nemo}</td>", oifs / 4)),
        "no {oifs}/4 x 4 row"
    );
    let fragment = format!(
        "  oifs:\n    ntasks: {}\n    omp_num_threads: 4\n  nemo:\n    ntasks: {nemo}\n",
        oifs / 4
    );
    assert!(
        page.contains("<h2>EC-Earth4</h2>") && page.contains(&fragment),
        "{page}"
    );
}

#[test]
fn the_command_executor_runs_autolb_simulate_as_ecearth4() {
    let tmp = tempfile::tempdir().unwrap();
    let a = assets();
    let executor = format!(
        r#"[executor]
kind = "command"
jobs = 2
command = ["{bin}", "simulate", "--out", ".", "--output", "oasis5", "--steps", "32", "--json",
  "--comp", "OpenIFS={{nproc.oifs}}", "--threads", "OpenIFS={{threads.oifs}}", "--curve", "OpenIFS={oifs}",
  "--comp", "oceanx={{nproc.nemo}}", "--curve", "oceanx={nemo}", "--seed", "{{test}}"]
"#,
        bin = autolb_path().display(),
        oifs = a.join("oifs.csv").display(),
        nemo = a.join("nemo.csv").display(),
    );
    let file = campaign_file(tmp.path(), "[4]", &executor);
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let text = autolb().args(["campaign", "run"]).arg(&dir).stdout_ok();
    assert!(text.contains("campaign done"), "{text}");
    let status = autolb::campaign::status(&dir).unwrap();
    assert_eq!(status.state, Phase::Done);
    let best = status.best.expect("a best configuration");
    assert_eq!(best.nproc.0[0].1 % 4, 0);
    // Every run was measured, and the model ran OpenIFS at 4 threads on a quarter of its cores.
    let state = State::load(&dir).unwrap();
    for (i, it) in state.iterations.iter().enumerate() {
        for (t, test) in it.tests.iter().enumerate() {
            assert!(
                test.runs.iter().all(|r| r.state == RunState::Done),
                "{test:?}"
            );
            let run_dir = state.request(&dir, i, t, 0).run_dir;
            let stdout = std::fs::read_to_string(run_dir.join("stdout")).unwrap();
            let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(outcome["components"][0]["threads"], 4, "{stdout}");
            assert_eq!(
                outcome["components"][0]["nproc"].as_u64().unwrap() as u32 * 4,
                test.nproc[0]
            );
            assert!(run_dir.join("log/001/timing.log").is_file());
        }
    }
    let status_text = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    assert!(status_text.contains("x4/"), "{status_text}");
}

#[test]
fn an_outside_driver_gets_ranks_and_threads_and_records_an_ecearth4_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "[4]", "");
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let state = State::load(&dir).unwrap();
    let cores = state.iterations[0].tests[0].nproc[0];

    let bash = autolb()
        .args(["campaign", "next", "--bash"])
        .arg(&dir)
        .stdout_ok();
    assert!(
        bash.contains(&format!("oifs_nprocs=( {} ", cores / 4)),
        "{bash}"
    );
    assert!(bash.contains("oifs_threads=( 4 "), "{bash}");
    let env = autolb()
        .args([
            "campaign",
            "next",
            "--env",
            "--iteration",
            "0",
            "--test",
            "0",
            "--repetition",
            "1",
        ])
        .arg(&dir)
        .stdout_ok();
    assert!(
        env.contains(&format!("AUTOLB_NPROC_OIFS='{}'", cores / 4)),
        "{env}"
    );
    assert!(env.contains("AUTOLB_THREADS_OIFS='4'"), "{env}");
    assert!(
        env.contains(&format!("AUTOLB_CORES_OIFS='{cores}'")),
        "{env}"
    );

    // The stand-in runs the campaign's run at its ranks and threads, as EC-Earth4 output.
    let json = autolb()
        .args(["simulate", "--campaign"])
        .arg(&dir)
        .args([
            "--run",
            "i00-t00-r1",
            "--output",
            "oasis5",
            "--steps",
            "32",
            "--json",
        ])
        .stdout_ok();
    let outcome: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(outcome["components"][0]["threads"], 4);
    assert_eq!(
        outcome["components"][0]["nproc"].as_u64().unwrap() as u32,
        cores / 4
    );
    autolb()
        .args(["campaign", "record", "--run", "i00-t00-r1"])
        .arg(&dir)
        .stdout_ok();
    let state = State::load(&dir).unwrap();
    let run = &state.iterations[0].tests[0].runs[0];
    assert_eq!(run.state, RunState::Done, "{run:?}");
    let m = run.metrics.as_ref().unwrap();
    // CHSY counts cores: 24 x (OpenIFS's cores + NEMO's + the extras) / SYPD.
    let nemo = state.iterations[0].tests[0].nproc[1];
    let expected = 24.0 * f64::from(cores + nemo + 10) / m.sypd;
    assert!((m.chsy - expected).abs() < 1e-6 * expected, "{m:?}");
}
