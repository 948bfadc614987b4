//! How the Slurm executor talks to Slurm, checked with stand-in `sbatch`, `squeue`, `sacct`
//! and `scancel` scripts that log every call: one `squeue` call per poll for all jobs, `sacct`
//! only for jobs that ended badly or left the queue, the fall back to `sacct -c` when
//! accounting storage is off (tried once, then remembered). Needs no Slurm.
//!
//! This file holds a single test because it changes PATH for the whole test process.

use std::path::Path;

use autolb::executor::slurm::SlurmExecutor;
use autolb::executor::ExecutorConfig;
use autolb::executor::{Executor, RunRequest, RunStatus, Ticket};

fn write_tool(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"{name} $*\" >> {}/calls.log\n{body}\n",
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn calls(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();
    std::fs::remove_file(dir.join("calls.log")).ok();
    text.lines().map(String::from).collect()
}

fn request(dir: &Path, id: &str) -> RunRequest {
    RunRequest {
        component: None,
        id: id.into(),
        iteration: 0,
        test: 0,
        repetition: 1,
        nproc: vec![("IFS".into(), 2), ("NEMO".into(), 1)],
        threads: Vec::new(),
        extra_pes: 0,
        run_dir: dir.join(id),
    }
}

#[test]
fn slurm_executor_polls_with_one_squeue_call_and_falls_back_to_sacct_c() {
    let tools = tempfile::tempdir().unwrap();
    let t = tools.path();
    let d = t.display();
    write_tool(
        t,
        "sbatch",
        &format!(
            "n=$(cat {d}/next 2>/dev/null || echo 100); echo $((n + 1)) > {d}/next; echo \"$n;ci\""
        ),
    );
    write_tool(t, "squeue", &format!("cat {d}/squeue.out"));
    write_tool(
        t,
        "sacct",
        &format!("if [ \"$1\" = -c ]; then cat {d}/sacct.out; else echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1; fi"),
    );
    write_tool(t, "scancel", "exit 0");
    let path = format!(
        "{}:{}",
        t.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::env::set_var("PATH", path);

    let campaign = tempfile::tempdir().unwrap();
    let cfg: ExecutorConfig = toml::from_str(
        r#"
kind = "slurm"
command = ["true"]
[slurm]
partition = "debug"
"#,
    )
    .unwrap();
    let mut ex = SlurmExecutor::from_config(&cfg, campaign.path()).unwrap();
    let runs: Vec<RunRequest> = ["a", "b", "c"]
        .iter()
        .map(|id| request(campaign.path(), id))
        .collect();
    let tickets: Vec<Ticket> = runs.iter().map(|r| ex.start(r).unwrap()).collect();
    assert_eq!(
        tickets,
        [
            Ticket("100".into()),
            Ticket("101".into()),
            Ticket("102".into())
        ]
    );
    let submitted = calls(t);
    assert_eq!(submitted.len(), 3);
    assert!(
        submitted[0].starts_with("sbatch --parsable --job-name=autolb-")
            && submitted[0].contains("--partition=debug"),
        "{submitted:?}"
    );
    let names: Vec<String> = runs.iter().map(|r| ex.job_name(r)).collect();
    let name = |r: &RunRequest| names[runs.iter().position(|x| x.id == r.id).unwrap()].clone();
    let pairs: Vec<(&RunRequest, &Ticket)> = runs.iter().zip(&tickets).collect();

    // All queued or running: one squeue call, no sacct.
    std::fs::write(
        t.join("squeue.out"),
        format!(
            "100|{}|RUNNING|None\n101|{}|PENDING|Priority\n102|{}|PENDING|Resources\n",
            name(&runs[0]),
            name(&runs[1]),
            name(&runs[2])
        ),
    )
    .unwrap();
    let statuses = ex.poll(&pairs).unwrap();
    assert_eq!(
        statuses,
        [RunStatus::Running, RunStatus::Queued, RunStatus::Queued]
    );
    let polled = calls(t);
    assert_eq!(polled.len(), 1, "{polled:?}");
    assert!(
        polled[0].starts_with("squeue ") && polled[0].contains("--jobs=100,101,102"),
        "{polled:?}"
    );

    // One completed, one failed (sacct for its exit code), one gone from the queue (sacct):
    // plain sacct fails, sacct -c answers.
    std::fs::write(
        t.join("squeue.out"),
        format!(
            "100|{}|COMPLETED|None\n101|{}|FAILED|NonZeroExitCode\n",
            name(&runs[0]),
            name(&runs[1])
        ),
    )
    .unwrap();
    std::fs::write(
        t.join("sacct.out"),
        format!(
            "101|{}|FAILED|3:0\n102|{}|TIMEOUT|0:15\n",
            name(&runs[1]),
            name(&runs[2])
        ),
    )
    .unwrap();
    let statuses = ex.poll(&pairs).unwrap();
    assert_eq!(statuses[0], RunStatus::Finished { exit_code: 0 });
    assert!(
        matches!(&statuses[1], RunStatus::Failed { reason } if reason.contains("exit code 3")),
        "{statuses:?}"
    );
    assert!(
        matches!(&statuses[2], RunStatus::Failed { reason } if reason.contains("TIMEOUT")),
        "{statuses:?}"
    );
    let polled = calls(t);
    assert_eq!(polled.len(), 3, "{polled:?}");
    assert!(
        polled[1].starts_with("sacct --noheader") && polled[1].contains("--jobs=101,102"),
        "{polled:?}"
    );
    assert!(polled[2].starts_with("sacct -c --noheader"), "{polled:?}");

    // sacct -c is remembered: the next poll does not try plain sacct again.
    ex.poll(&pairs).unwrap();
    let polled = calls(t);
    assert_eq!(polled.len(), 2, "{polled:?}");
    assert!(polled[1].starts_with("sacct -c "), "{polled:?}");

    // A job that can never start (its QOS does not exist) is a failed run, and is cancelled.
    let late = request(campaign.path(), "d");
    let late_ticket = ex.start(&late).unwrap();
    calls(t);
    std::fs::write(
        t.join("squeue.out"),
        format!(
            "{}|{}|PENDING|InvalidQOS\n",
            late_ticket.0,
            ex.job_name(&late)
        ),
    )
    .unwrap();
    let statuses = ex.poll(&[(&late, &late_ticket)]).unwrap();
    assert!(
        matches!(&statuses[0], RunStatus::Failed { reason } if reason.contains("InvalidQOS")),
        "{statuses:?}"
    );
    let polled = calls(t);
    assert_eq!(
        polled.last().unwrap(),
        &format!("scancel {}", late_ticket.0),
        "{polled:?}"
    );

    // The ended jobs' run directories now record how they ended.
    assert_eq!(
        autolb::executor::read_exit_status(&runs[0].run_dir),
        Some(RunStatus::Finished { exit_code: 0 })
    );
    // A job id that now names another job (a reinstalled Slurm) is not this run's job.
    std::fs::remove_file(runs[0].run_dir.join(autolb::executor::EXIT_STATUS_FILE)).unwrap();
    std::fs::write(t.join("squeue.out"), "100|someone-else|RUNNING|None\n").unwrap();
    std::fs::write(t.join("sacct.out"), "").unwrap();
    assert_eq!(ex.poll(&pairs[..1]).unwrap(), [RunStatus::Lost]);
}
