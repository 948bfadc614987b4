//! Slurm job states and what they mean for a campaign run.

use crate::executor::RunStatus;

/// A job's exit code as Slurm reports it (`sacct`'s `ExitCode` column, `code:signal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobExit {
    /// The job's exit code (0 on success).
    pub code: i32,
    /// The signal that ended it (0: none).
    pub signal: i32,
}

impl JobExit {
    /// Parses `3:0` (exit code 3, no signal) or `0:15` (killed by signal 15).
    pub fn parse(text: &str) -> Option<JobExit> {
        let (code, signal) = text.trim().split_once(':')?;
        Some(JobExit {
            code: code.parse().ok()?,
            signal: signal.parse().ok()?,
        })
    }
}

/// Whether a job in this state will not change any more.
pub fn is_final(state: &str) -> bool {
    matches!(
        base_state(state),
        "COMPLETED"
            | "FAILED"
            | "TIMEOUT"
            | "CANCELLED"
            | "NODE_FAIL"
            | "OUT_OF_MEMORY"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "PREEMPTED"
            | "REVOKED"
            | "SPECIAL_EXIT"
    )
}

/// Pending reasons that mean the job will wait for ever: the request does not fit the
/// account, QOS or partition. Such a job is a failed run (and is cancelled), not a campaign
/// that hangs.
pub fn never_starts(reason: &str) -> bool {
    matches!(
        reason.trim(),
        "BadConstraints"
            | "DependencyNeverSatisfied"
            | "InvalidAccount"
            | "InvalidQOS"
            | "AccountNotAllowed"
            | "QOSMaxWallDurationPerJobLimit"
            | "PartitionTimeLimit"
    )
}

/// The state word alone: sacct writes `CANCELLED by 1234`, squeue may add a `+`.
pub fn base_state(state: &str) -> &str {
    state
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches('+')
}

/// Maps a Slurm job state to a run status. Only `COMPLETED` yields a result the campaign may
/// measure; every other final state is a failed run whose reason names the state, the exit
/// code and the job's output file, so the user knows where to look.
pub fn run_status(
    state: &str,
    exit: Option<JobExit>,
    reason: Option<&str>,
    job_id: &str,
) -> RunStatus {
    let base = base_state(state);
    let detail = |what: &str| {
        let mut s = format!("Slurm job {job_id} {what}");
        if let Some(e) = exit {
            if e.signal != 0 {
                s.push_str(&format!(" (signal {})", e.signal));
            } else if e.code != 0 {
                s.push_str(&format!(" (exit code {})", e.code));
            }
        }
        if let Some(r) = reason.filter(|r| !r.is_empty() && *r != "None") {
            s.push_str(&format!(" [{r}]"));
        }
        s.push_str(&format!(
            "; see slurm-{job_id}.out and slurm-{job_id}.err in the run directory"
        ));
        s
    };
    match base {
        "PENDING" if reason.is_some_and(never_starts) => RunStatus::Failed {
            reason: format!(
                "Slurm job {job_id} can never start ({}); check partition, account, qos and \
                 time_limit in [executor.slurm]",
                reason.unwrap_or_default()
            ),
        },
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
        | "RESV_DEL_HOLD" => RunStatus::Queued,
        "RUNNING" | "COMPLETING" | "SIGNALING" | "STAGE_OUT" | "RESIZING" | "SUSPENDED"
        | "STOPPED" => RunStatus::Running,
        "COMPLETED" => RunStatus::Finished {
            exit_code: exit.map_or(0, |e| e.code),
        },
        "FAILED" => RunStatus::Failed {
            reason: detail("failed"),
        },
        "TIMEOUT" => RunStatus::Failed {
            reason: detail("reached its time limit (TIMEOUT)"),
        },
        "CANCELLED" => RunStatus::Failed {
            reason: detail("was cancelled"),
        },
        "NODE_FAIL" => RunStatus::Failed {
            reason: detail("ended by a node failure (NODE_FAIL)"),
        },
        "OUT_OF_MEMORY" => RunStatus::Failed {
            reason: detail("ran out of memory (OUT_OF_MEMORY)"),
        },
        "BOOT_FAIL" | "DEADLINE" | "PREEMPTED" | "REVOKED" | "SPECIAL_EXIT" => RunStatus::Failed {
            reason: detail(&format!("ended in state {base}")),
        },
        // A state this version does not know: the job is still known to Slurm, so keep
        // watching it; once it leaves the queue, sacct gives its final state.
        _ => RunStatus::Running,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_state_maps() {
        assert_eq!(
            run_status("PENDING", None, Some("Priority"), "7"),
            RunStatus::Queued
        );
        assert_eq!(run_status("RUNNING", None, None, "7"), RunStatus::Running);
        assert_eq!(
            run_status("COMPLETING", None, None, "7"),
            RunStatus::Running
        );
        assert_eq!(
            run_status("COMPLETED", JobExit::parse("0:0"), None, "7"),
            RunStatus::Finished { exit_code: 0 }
        );
        assert_eq!(
            run_status("COMPLETED", None, None, "7"),
            RunStatus::Finished { exit_code: 0 }
        );
        for (state, word) in [
            ("FAILED", "failed"),
            ("TIMEOUT", "time limit"),
            ("CANCELLED by 0", "cancelled"),
            ("NODE_FAIL", "node failure"),
            ("OUT_OF_MEMORY", "out of memory"),
            ("BOOT_FAIL", "BOOT_FAIL"),
        ] {
            match run_status(state, JobExit::parse("3:0"), Some("NonZeroExitCode"), "42") {
                RunStatus::Failed { reason } => {
                    assert!(reason.contains(word) && reason.contains("42"), "{reason}");
                    assert!(reason.contains("slurm-42.out"), "{reason}");
                }
                other => panic!("{state}: {other:?}"),
            }
            assert!(is_final(state), "{state}");
        }
        assert!(!is_final("PENDING") && !is_final("RUNNING"));
        match run_status("PENDING", None, Some("InvalidQOS"), "8") {
            RunStatus::Failed { reason } => {
                assert!(reason.contains("never start") && reason.contains("InvalidQOS"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            run_status("PENDING", None, Some("Resources"), "8"),
            RunStatus::Queued
        );
        assert_eq!(
            run_status("SOMETHING_NEW", None, None, "7"),
            RunStatus::Running
        );
    }

    #[test]
    fn failure_reasons_carry_exit_code_or_signal() {
        let RunStatus::Failed { reason } = run_status("FAILED", JobExit::parse("3:0"), None, "9")
        else {
            panic!()
        };
        assert!(reason.contains("exit code 3"), "{reason}");
        let RunStatus::Failed { reason } =
            run_status("CANCELLED", JobExit::parse("0:15"), None, "9")
        else {
            panic!()
        };
        assert!(reason.contains("signal 15"), "{reason}");
        assert_eq!(JobExit::parse("1:9"), Some(JobExit { code: 1, signal: 9 }));
        assert_eq!(JobExit::parse(""), None);
        assert_eq!(JobExit::parse("x:0"), None);
    }
}
