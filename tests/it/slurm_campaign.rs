//! Whole campaigns on a real Slurm: every run of the campaign is a batch job that runs
//! `autolb simulate` (the stand-in coupled model) to the end; the driver is killed with SIGKILL
//! while jobs are queued and resumed without submitting anything twice; `campaign cancel`
//! scancels the campaign's jobs. Every test skips (or fails with AUTOLB_REQUIRE_SLURM=1)
//! without a reachable Slurm.

use crate::common::{autolb, autolb_path, CampaignToml};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::slurm_common::*;
use autolb::campaign::status::{RunView, Status};
use autolb::campaign::{DriveOptions, DriveOutcome};
use autolb::config::CampaignFile;
use autolb::executor::slurm::SlurmExecutor;
use autolb::executor::{Executor, RunStatus};

/// Knobs of a small EC-Earth3-like campaign (IFS + NEMO on the bundled curves).
struct Small {
    top: u32,
    repetitions: u32,
    jobs: u32,
    /// Real seconds per modelled wall-clock second of `autolb simulate`: 10 coupling steps of
    /// EC-Earth3 SR take about 5 modelled seconds (about 16 SYPD).
    compress: f64,
}

/// Writes the campaign file and its inputs into `dir`; returns the file's path.
fn write_campaign_file(dir: &Path, small: &Small) -> PathBuf {
    let executor = format!(
        r#"
[executor]
kind = "slurm"
jobs = {jobs}
retries = 0
command = ["{autolb}", "simulate", "--comp", "ATMIFS={{nproc.IFS}}", "--comp", "oceanx={{nproc.NEMO}}",
           "--out", ".", "--steps", "10", "--compress", "{compress}",
           "--seed", "{{iteration}}{{test}}{{repetition}}"]

[executor.slurm]
# One task per job whatever the PEs: the stand-in model is one process (a 2-core CI node).
max_ntasks = 1
poll_interval_s = 0.3
autolb = "{autolb}"
"#,
        jobs = small.jobs,
        compress = small.compress,
        autolb = autolb_path().display(),
    );
    CampaignToml::default()
        .set_after("step", "tts_w", 0.5)
        .set("top", small.top)
        .set("repetitions", small.repetitions)
        .table(&executor)
        .write(dir, "campaign.toml")
}

/// Creates the campaign directory `base/camp` from a small campaign file.
fn init_campaign(base: &Path, small: &Small) -> PathBuf {
    let file_path = write_campaign_file(base, small);
    let file = CampaignFile::load(&file_path).unwrap();
    let dir = base.join("camp");
    autolb::campaign::init(&dir, &file, base, false).expect("campaign init");
    dir
}

fn all_runs(status: &Status) -> Vec<&RunView> {
    status
        .iterations
        .iter()
        .flat_map(|i| &i.tests)
        .flat_map(|t| &t.runs)
        .collect()
}

/// The executor a driver of this campaign would build (same job names).
fn executor_of(dir: &Path) -> SlurmExecutor {
    let file = CampaignFile::load(&dir.parent().unwrap().join("campaign.toml")).unwrap();
    SlurmExecutor::from_config(file.executor.as_ref().unwrap(), dir).unwrap()
}

/// Every job Slurm knows (queued, running or recently ended) whose name is of this campaign:
/// `(id, state)`.
fn campaign_jobs(dir: &Path) -> BTreeMap<u64, String> {
    let prefix = format!("{}-", executor_of(dir).job_name_prefix());
    let out = Command::new("squeue")
        .args(["-h", "-t", "all", "-o", "%i|%j|%T"])
        .output()
        .expect("squeue");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('|');
            let (id, name, state) = (f.next()?, f.next()?, f.next()?);
            if !name.starts_with(&prefix) {
                return None;
            }
            Some((id.parse().ok()?, state.to_string()))
        })
        .collect()
}

/// Starts `autolb campaign run DIR` as a separate driver process.
fn spawn_driver(dir: &Path, log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    autolb()
        .args(["campaign", "run"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("autolb campaign run")
}

/// Waits until `ready(status)` holds, reading the state the driver saves.
fn wait_for_state(dir: &Path, what: &str, limit: Duration, ready: impl Fn(&Status) -> bool) {
    let start = Instant::now();
    loop {
        if let Ok(status) = autolb::campaign::status(dir) {
            if ready(&status) {
                return;
            }
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn slurm_campaign_runs_to_the_end_through_sbatch() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_campaign_runs_to_the_end_through_sbatch") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let small = Small {
        top: 1,
        repetitions: 1,
        jobs: 2,
        compress: 0.00002,
    };
    let dir = init_campaign(base.path(), &small);
    let stop = AtomicBool::new(false);
    let outcome = autolb::campaign::drive(&dir, &DriveOptions::default(), &stop).expect("drive");
    let DriveOutcome::Done { best: Some(best) } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(best.sypd > 10.0 && best.sypd < 30.0, "{best:?}");

    let status = autolb::campaign::status(&dir).unwrap();
    let runs = all_runs(&status);
    assert!(
        status.iterations.len() >= 2,
        "{} iterations",
        status.iterations.len()
    );
    let jobs = campaign_jobs(&dir);
    for run in &runs {
        assert_eq!(
            run.state,
            autolb::campaign::state::RunState::Done,
            "{run:?}"
        );
        let job = run.job.as_deref().expect("the job id is in the state");
        // The job ran in the run directory and ended COMPLETED in Slurm's own records.
        assert!(
            run.run_dir.join(format!("slurm-{job}.out")).exists(),
            "{run:?}"
        );
        assert!(run.run_dir.join("lucia.01.000000").exists(), "{run:?}");
        assert_eq!(
            jobs.get(&job.parse().unwrap()).map(String::as_str),
            Some("COMPLETED")
        );
    }
    // One job per run: nothing was submitted twice.
    assert_eq!(jobs.len(), runs.len(), "{jobs:?}");
}

#[test]
fn slurm_campaign_resumes_after_the_driver_is_killed_while_jobs_are_queued() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_campaign_resumes_after_the_driver_is_killed_while_jobs_are_queued") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    // 4 runs of about 3 s each, all submitted at once, on a node that runs 2 at a time: two
    // of them wait in the queue when the driver is killed.
    let small = Small {
        top: 2,
        repetitions: 2,
        jobs: 4,
        compress: 0.6,
    };
    let dir = init_campaign(base.path(), &small);
    let mut driver = spawn_driver(&dir, &base.path().join("driver-1.log"));
    wait_for_state(&dir, "4 submitted jobs", Duration::from_secs(60), |s| {
        s.counts.running == 4 && all_runs(s).iter().filter(|r| r.job.is_some()).count() == 4
    });
    let before: BTreeMap<String, String> = all_runs(&autolb::campaign::status(&dir).unwrap())
        .iter()
        .filter_map(|r| Some((r.run.clone(), r.job.clone()?)))
        .collect();
    let queued_at_kill = campaign_jobs(&dir)
        .values()
        .filter(|s| s.as_str() == "PENDING")
        .count();
    driver.kill().unwrap(); // SIGKILL: no clean-up at all
    driver.wait().unwrap();
    assert!(
        queued_at_kill >= 1,
        "no job was queued when the driver was killed"
    );
    // The jobs live on without their driver.
    assert_eq!(campaign_jobs(&dir).len(), 4);

    let mut again = spawn_driver(&dir, &base.path().join("driver-2.log"));
    let start = Instant::now();
    let exit = loop {
        if let Some(code) = again.try_wait().unwrap() {
            break code;
        }
        if start.elapsed() > Duration::from_secs(300) {
            let _ = again.kill();
            panic!("the resumed driver did not finish in 300 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let log = std::fs::read_to_string(base.path().join("driver-2.log")).unwrap();
    assert!(exit.success(), "{log}");
    assert!(
        log.contains("resumed: 4 runs found where the last driver left them, 0 to run again"),
        "{log}"
    );

    let status = autolb::campaign::status(&dir).unwrap();
    let runs = all_runs(&status);
    for run in &runs {
        assert_eq!(
            run.state,
            autolb::campaign::state::RunState::Done,
            "{run:?}\n{log}"
        );
        assert_eq!(run.attempts, 1, "{run:?}");
    }
    // The runs of the killed driver kept their jobs: recovered, not submitted again.
    for (run, job) in &before {
        let now = runs.iter().find(|r| &r.run == run).unwrap();
        assert_eq!(now.job.as_ref(), Some(job), "{run}");
    }
    let jobs = campaign_jobs(&dir);
    assert_eq!(jobs.len(), runs.len(), "one job per run: {jobs:?}");
    assert!(jobs.values().all(|s| s == "COMPLETED"), "{jobs:?}");
}

#[test]
fn slurm_campaign_cancel_scancels_its_jobs() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_campaign_cancel_scancels_its_jobs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    // Runs of about 5 minutes: they are still queued or running when cancelled.
    let small = Small {
        top: 1,
        repetitions: 2,
        jobs: 2,
        compress: 60.0,
    };
    let dir = init_campaign(base.path(), &small);
    let mut driver = spawn_driver(&dir, &base.path().join("driver.log"));
    wait_for_state(&dir, "2 submitted jobs", Duration::from_secs(60), |s| {
        all_runs(s).iter().filter(|r| r.job.is_some()).count() == 2
    });
    let out = autolb()
        .args(["campaign", "cancel"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    while driver.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the driver did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let status = autolb::campaign::status(&dir).unwrap();
    let mut ex = executor_of(&dir);
    for run in all_runs(&status) {
        assert_eq!(
            run.state,
            autolb::campaign::state::RunState::Failed,
            "{run:?}"
        );
        let ticket = autolb::executor::Ticket(run.job.clone().unwrap());
        let request = autolb::executor::RunRequest {
            threads: Vec::new(),
            component: None,
            id: run.run.clone(),
            iteration: 0,
            test: 0,
            repetition: run.repetition,
            nproc: Vec::new(),
            extra_pes: 0,
            run_dir: run.run_dir.clone(),
        };
        let seen = wait_final(&mut ex, &request, &ticket, Duration::from_secs(60));
        match seen.last() {
            Some(RunStatus::Failed { reason }) => assert!(reason.contains("cancelled"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    let jobs = campaign_jobs(&dir);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs.values().all(|s| s == "CANCELLED"), "{jobs:?}");
}

/// A job submitted just before the driver died is in Slurm but not in the state: `campaign
/// cancel` finds it by the campaign's job names and scancels it too.
#[test]
fn slurm_campaign_cancel_finds_jobs_the_state_does_not_track() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_campaign_cancel_finds_jobs_the_state_does_not_track") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let small = Small {
        top: 1,
        repetitions: 1,
        jobs: 1,
        compress: 60.0,
    };
    let dir = init_campaign(base.path(), &small);
    // Submit the first pending run by hand, as a driver would just before it crashed.
    let status = autolb::campaign::status(&dir).unwrap();
    let run = all_runs(&status)[0];
    let request = autolb::executor::RunRequest {
        threads: Vec::new(),
        component: None,
        id: run.run.clone(),
        iteration: 0,
        test: 0,
        repetition: run.repetition,
        nproc: status.components.iter().map(|c| (c.clone(), 48)).collect(),
        extra_pes: 0,
        run_dir: run.run_dir.clone(),
    };
    std::fs::create_dir_all(&request.run_dir).unwrap();
    let mut ex = executor_of(&dir);
    let ticket = ex.start(&request).expect("sbatch");
    assert_eq!(campaign_jobs(&dir).len(), 1);

    let out = autolb()
        .args(["campaign", "cancel"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = wait_final(&mut ex, &request, &ticket, Duration::from_secs(60));
    match seen.last() {
        Some(RunStatus::Failed { reason }) => assert!(reason.contains("cancelled"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&ticket.0) && said.contains("did not track"),
        "{said}"
    );
}
