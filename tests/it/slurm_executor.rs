//! The Slurm executor against a real Slurm, through the `Executor` trait: a job that runs to
//! the end, one that exits non-zero, one killed by its time limit, a cancelled one, recovery
//! by id and by name after a "crash", an MPMD launch, and a hostile run directory.
//! Every test skips (or fails with AUTOLB_REQUIRE_SLURM=1) without a reachable Slurm.

use crate::common::autolb_path;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::slurm_common::*;
use autolb::executor::slurm::SlurmExecutor;
use autolb::executor::ExecutorConfig;
use autolb::executor::{Executor, RunStatus};

/// An executor from an `[executor]` table written in TOML, as a campaign file would have it.
fn executor(toml_text: &str, campaign_dir: &Path) -> SlurmExecutor {
    let cfg: ExecutorConfig = toml::from_str(toml_text).expect("executor table");
    SlurmExecutor::from_config(&cfg, campaign_dir).expect("slurm executor")
}

const LIMIT: Duration = Duration::from_secs(240);

#[test]
fn slurm_job_runs_to_completion_and_sees_its_placeholders() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_job_runs_to_completion_and_sees_its_placeholders") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        &format!(
            r#"
kind = "slurm"
command = ["sh", "-c", "echo IFS={{nproc.IFS}} NEMO={{nproc.NEMO}} total={{total_nproc}} tasks=$SLURM_NTASKS job=$SLURM_JOB_NAME > placeholders.txt; \"$AUTOLB_BIN\" --version > version.txt"]
[slurm]
max_ntasks = 1
poll_interval_s = 0.2
autolb = "{}"
"#,
            autolb_path().display()
        ),
        dir.path(),
    );
    let run = request(dir.path(), "i01-t01-r1", 48, 96);
    let ticket = ex.start(&run).expect("sbatch");
    let seen = wait_final(&mut ex, &run, &ticket, LIMIT);
    assert_eq!(
        seen.last(),
        Some(&RunStatus::Finished { exit_code: 0 }),
        "{seen:?}\n{}",
        job_output(&run.run_dir)
    );
    let text = std::fs::read_to_string(run.run_dir.join("placeholders.txt")).unwrap();
    assert_eq!(
        text.trim(),
        format!("IFS=48 NEMO=96 total=144 tasks=1 job={}", ex.job_name(&run))
    );
    let version = std::fs::read_to_string(run.run_dir.join("version.txt")).unwrap();
    assert!(version.starts_with("autolb "), "{version}");
    assert!(run.run_dir.join(format!("slurm-{}.out", ticket.0)).exists());
    assert!(run.run_dir.join("job.sh").exists() && run.run_dir.join("sbatch.cmd").exists());
}

#[test]
fn slurm_job_exiting_non_zero_is_a_failed_run() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_job_exiting_non_zero_is_a_failed_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        r#"
kind = "slurm"
command = ["sh", "-c", "echo about to fail; exit 3"]
[slurm]
poll_interval_s = 0.2
"#,
        dir.path(),
    );
    let run = request(dir.path(), "fails", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    let seen = wait_final(&mut ex, &run, &ticket, LIMIT);
    match seen.last() {
        Some(RunStatus::Failed { reason }) => {
            assert!(
                reason.contains("failed") && reason.contains("exit code 3"),
                "{reason}"
            )
        }
        other => panic!("{other:?}\n{}", job_output(&run.run_dir)),
    }
}

#[test]
fn slurm_job_killed_by_its_time_limit_is_a_failed_run() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_job_killed_by_its_time_limit_is_a_failed_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // timeout_s becomes a whole-minute Slurm limit: 1 minute (the shortest Slurm has).
    let mut ex = executor(
        r#"
kind = "slurm"
command = ["sleep", "600"]
timeout_s = 5
[slurm]
poll_interval_s = 0.5
"#,
        dir.path(),
    );
    let run = request(dir.path(), "too-slow", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    let started = Instant::now();
    let seen = wait_final(&mut ex, &run, &ticket, LIMIT);
    match seen.last() {
        Some(RunStatus::Failed { reason }) => assert!(reason.contains("TIMEOUT"), "{reason}"),
        other => panic!("{other:?}\n{}", job_output(&run.run_dir)),
    }
    assert!(seen.contains(&RunStatus::Running), "{seen:?}");
    assert!(
        started.elapsed() >= Duration::from_secs(55),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn slurm_cancelled_job_is_a_failed_run() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_cancelled_job_is_a_failed_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        r#"
kind = "slurm"
command = ["sleep", "600"]
[slurm]
poll_interval_s = 0.2
"#,
        dir.path(),
    );
    let run = request(dir.path(), "cancel-me", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    wait_started(&mut ex, &run, &ticket, LIMIT);
    ex.cancel(&run, &ticket).expect("scancel");
    // Cancelling twice, or a job that ended, is not an error.
    ex.cancel(&run, &ticket).expect("scancel again");
    let seen = wait_final(&mut ex, &run, &ticket, Duration::from_secs(60));
    match seen.last() {
        Some(RunStatus::Failed { reason }) => assert!(reason.contains("cancelled"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn slurm_restarted_executor_recovers_jobs_by_id_then_by_name() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_restarted_executor_recovers_jobs_by_id_then_by_name") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = r#"
kind = "slurm"
command = ["sleep", "600"]
[slurm]
poll_interval_s = 0.2
"#;
    let mut first = executor(table, dir.path());
    let run = request(dir.path(), "i02-t03-r1", 1, 1);
    let ticket = first.start(&run).expect("sbatch");
    drop(first); // the driver "crashes"

    let mut again = executor(table, dir.path());
    // By the ticket the state had saved.
    assert_eq!(
        again.recover(&run, Some(&ticket)).unwrap(),
        Some(ticket.clone())
    );
    // By name, when the state had no ticket yet (a crash right after sbatch).
    assert_eq!(again.recover(&run, None).unwrap(), Some(ticket.clone()));
    // A stale ticket (a job id that is not this run's job) falls back to the name.
    let stale = autolb::executor::Ticket("1".into());
    assert_eq!(
        again.recover(&run, Some(&stale)).unwrap(),
        Some(ticket.clone())
    );
    // A run that was never submitted must be started.
    let other = request(dir.path(), "i02-t04-r1", 1, 1);
    assert_eq!(again.recover(&other, None).unwrap(), None);
    // Another campaign directory does not see this campaign's jobs.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut stranger = executor(table, elsewhere.path());
    let mut same_id = run.clone();
    same_id.run_dir = elsewhere.path().join("i02-t03-r1");
    assert_eq!(stranger.recover(&same_id, None).unwrap(), None);

    // `campaign cancel` cancels every job of the campaign, found by name.
    let cancelled = again.cancel_campaign().unwrap();
    assert_eq!(cancelled, vec![ticket.0.clone()]);
    let seen = wait_final(&mut again, &run, &ticket, Duration::from_secs(60));
    assert!(
        matches!(seen.last(), Some(RunStatus::Failed { .. })),
        "{seen:?}"
    );
    // A cancelled job is not recovered by name: the run must be submitted again.
    assert_eq!(again.recover(&run, None).unwrap(), None);
    // By its ticket it is found, so the driver sees the failure and retries.
    assert_eq!(
        again.recover(&run, Some(&ticket)).unwrap(),
        Some(ticket.clone())
    );
}

#[test]
fn slurm_mpmd_job_gives_each_component_its_ranks() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_mpmd_job_gives_each_component_its_ranks") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        r##"
kind = "slurm"
[slurm]
poll_interval_s = 0.2
script = """#!/bin/bash
#SBATCH --comment=autolb-mpmd-test
cd "$AUTOLB_RUN_DIR"
srun --ntasks={ntasks} --multi-prog "$AUTOLB_MULTI_PROG"
"""
[slurm.multi_prog.programs]
IFS = ["sh", "-c", "echo IFS > rank-$SLURM_PROCID"]
NEMO = ["sh", "-c", "echo NEMO {nproc.NEMO} > rank-$SLURM_PROCID"]
"##,
        dir.path(),
    );
    let run = request(dir.path(), "mpmd", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    let seen = wait_final(&mut ex, &run, &ticket, LIMIT);
    assert_eq!(
        seen.last(),
        Some(&RunStatus::Finished { exit_code: 0 }),
        "{seen:?}\n{}",
        job_output(&run.run_dir)
    );
    let rank = |r: u32| std::fs::read_to_string(run.run_dir.join(format!("rank-{r}"))).unwrap();
    assert_eq!(rank(0).trim(), "IFS");
    assert_eq!(rank(1).trim(), "NEMO 1");
}

#[test]
fn slurm_hostile_campaign_path_reaches_the_job_quoted() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_hostile_campaign_path_reaches_the_job_quoted") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let dir = base
        .path()
        .join("it's a $(touch PWNED) `id` 100%j \"campaign\"");
    std::fs::create_dir_all(&dir).unwrap();
    let mut ex = executor(
        r##"
kind = "slurm"
[slurm]
poll_interval_s = 0.2
script = """#!/bin/bash
cd "$AUTOLB_RUN_DIR" && printf '%s\\n' "$AUTOLB_RUN_DIR" > where.txt
"""
"##,
        &dir,
    );
    let run = request(&dir, "hostile", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    let seen = wait_final(&mut ex, &run, &ticket, LIMIT);
    assert_eq!(
        seen.last(),
        Some(&RunStatus::Finished { exit_code: 0 }),
        "{seen:?}\n{}",
        job_output(&run.run_dir)
    );
    let written = std::fs::read_to_string(run.run_dir.join("where.txt")).unwrap();
    assert_eq!(written.trim_end(), run.run_dir.display().to_string());
    assert!(run.run_dir.join(format!("slurm-{}.out", ticket.0)).exists());
    assert!(!base.path().join("PWNED").exists() && !dir.join("PWNED").exists());
    assert!(!run.run_dir.join("PWNED").exists());
    // The job script has the user's umask: not executable, not group/world writable here.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(run.run_dir.join("job.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "{mode:o}");
}

#[test]
fn slurm_rejected_submission_is_an_error_with_sbatch_message() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_rejected_submission_is_an_error_with_sbatch_message") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        r#"
kind = "slurm"
command = ["true"]
[slurm]
partition = "no_such_partition"
"#,
        dir.path(),
    );
    let run = request(dir.path(), "rejected", 1, 1);
    let e = ex.start(&run).unwrap_err().to_string();
    assert!(e.contains("sbatch") && e.contains("partition"), "{e}");
}

#[test]
fn slurm_job_forgotten_by_slurm_keeps_the_end_its_run_directory_recorded() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_job_forgotten_by_slurm_keeps_the_end_its_run_directory_recorded") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut ex = executor(
        r#"
kind = "slurm"
command = ["true"]
"#,
        dir.path(),
    );
    // A job id Slurm has never heard of (purged long ago, accounting off).
    let gone = autolb::executor::Ticket("987654321".into());
    let run = request(dir.path(), "forgotten", 1, 1);
    std::fs::create_dir_all(&run.run_dir).unwrap();
    assert_eq!(ex.poll(&[(&run, &gone)]).unwrap(), vec![RunStatus::Lost]);
    assert_eq!(ex.recover(&run, Some(&gone)).unwrap(), None);
    // An earlier poll saw it complete and wrote exit_status: that still counts.
    autolb::executor::write_exit_status(&run.run_dir, &RunStatus::Finished { exit_code: 0 })
        .unwrap();
    assert_eq!(ex.recover(&run, Some(&gone)).unwrap(), Some(gone.clone()));
    assert_eq!(
        ex.poll(&[(&run, &gone)]).unwrap(),
        vec![RunStatus::Finished { exit_code: 0 }]
    );
}
