//! Shared by the Slurm integration tests (tests/it/slurm_*.rs): finding a reachable Slurm, and
//! waiting for jobs.
//!
//! Without a reachable Slurm the tests print a skip message and pass, so `cargo test` works on
//! a laptop; with `AUTOLB_REQUIRE_SLURM=1` (set by `.ci/run`) they fail instead, so CI cannot
//! pass by skipping them. Start a one-node Slurm with `sudo bash .ci/slurm-up.sh`.
//!
//! All of them share the one Slurm (its queue, its node, the job names they look for), and they
//! are all in one test binary whose tests run on threads at once: each takes [`exclusive`] first.

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use autolb::executor::{Executor, RunRequest, RunStatus, Ticket};

/// The one real Slurm, for the calling test alone until the guard drops. A test that failed
/// while holding it does not stop the others (the lock is taken even when poisoned).
pub fn exclusive() -> MutexGuard<'static, ()> {
    static SLURM: Mutex<()> = Mutex::new(());
    SLURM.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why Slurm cannot be used here, if it cannot.
fn slurm_problem() -> Option<String> {
    let ping = match Command::new("scontrol").arg("ping").output() {
        Ok(out) => out,
        Err(e) => return Some(format!("scontrol cannot be run ({e})")),
    };
    let text = String::from_utf8_lossy(&ping.stdout);
    if !ping.status.success() || !text.contains("UP") {
        let first = text.lines().next().unwrap_or("").trim();
        return Some(format!(
            "slurmctld does not answer (`scontrol ping`: {first})"
        ));
    }
    let nodes = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%t"])
        .output();
    match nodes {
        Ok(out) => {
            let states = String::from_utf8_lossy(&out.stdout);
            if states
                .lines()
                // `plnd`: an idle node the backfill scheduler has planned for a pending job
                // (seen when a test starts while an earlier test's jobs are still queued).
                .any(|s| ["idle", "mix", "alloc", "plnd"].contains(&s.trim().trim_end_matches('*')))
            {
                None
            } else {
                Some(format!(
                    "no node is up (`sinfo` node states: {:?})",
                    states.trim()
                ))
            }
        }
        Err(e) => Some(format!("sinfo cannot be run ({e})")),
    }
}

/// True when the test can use Slurm. Otherwise prints why it is skipped and returns false, or
/// panics when `AUTOLB_REQUIRE_SLURM=1`.
pub fn slurm_or_skip(test: &str) -> bool {
    match slurm_problem() {
        None => true,
        Some(why) => {
            if std::env::var("AUTOLB_REQUIRE_SLURM").is_ok_and(|v| v == "1") {
                panic!("{test}: AUTOLB_REQUIRE_SLURM=1 but no Slurm is reachable: {why}");
            }
            // Straight to stderr, past the test harness's capture, so the skip is seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: no Slurm reachable ({why}); start one with \
                 `sudo bash .ci/slurm-up.sh`, or set AUTOLB_REQUIRE_SLURM=1 to make this fail"
            );
            false
        }
    }
}

/// Polls until the run reaches a final status (Finished, Failed or Lost) or `limit` passes;
/// returns every distinct status seen, the final one last.
pub fn wait_final(
    ex: &mut dyn Executor,
    run: &RunRequest,
    ticket: &Ticket,
    limit: Duration,
) -> Vec<RunStatus> {
    let start = Instant::now();
    let mut seen: Vec<RunStatus> = Vec::new();
    loop {
        let status = ex
            .poll(&[(run, ticket)])
            .expect("poll")
            .pop()
            .expect("one status");
        if seen.last() != Some(&status) {
            seen.push(status.clone());
        }
        if !matches!(status, RunStatus::Queued | RunStatus::Running) {
            return seen;
        }
        assert!(
            start.elapsed() < limit,
            "job {} still {status:?} after {limit:?}; statuses seen {seen:?}",
            ticket.0
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Polls until the job is running (or already ended).
pub fn wait_started(ex: &mut dyn Executor, run: &RunRequest, ticket: &Ticket, limit: Duration) {
    let start = Instant::now();
    loop {
        let status = ex.poll(&[(run, ticket)]).expect("poll").pop().expect("one");
        if status != RunStatus::Queued {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "job {} still queued after {limit:?}",
            ticket.0
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A run request of two components.
pub fn request(dir: &Path, id: &str, ifs: u32, nemo: u32) -> RunRequest {
    RunRequest {
        threads: Vec::new(),
        component: None,
        id: id.to_string(),
        iteration: 1,
        test: 1,
        repetition: 1,
        nproc: vec![("IFS".into(), ifs), ("NEMO".into(), nemo)],
        extra_pes: 0,
        run_dir: dir.join(id),
    }
}

/// The job's stdout and stderr files in the run directory, for failure messages.
pub fn job_output(run_dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(run_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("slurm-") {
                out.push_str(&format!(
                    "--- {name}\n{}\n",
                    std::fs::read_to_string(e.path()).unwrap_or_default()
                ));
            }
        }
    }
    out
}
