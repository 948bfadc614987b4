//! The Slurm command-line tools: `sbatch`, `squeue`, `sacct`, `scancel`. Each call is a
//! process; the output parsers are pure functions so they can be tested without a cluster.

use std::process::{Command, Output};

use super::states::JobExit;
use crate::executor::ExecutorError;

/// What Slurm says about one job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    /// The job id as `squeue` or `sacct` prints it (whole jobs only, no `.batch` step rows).
    pub id: String,
    /// The job's name (autolb's begin with `job_name_prefix`).
    pub name: String,
    /// The state word(s) as Slurm prints them (`PENDING`, `CANCELLED by 0`).
    pub state: String,
    /// squeue's reason (`Priority`, `NonZeroExitCode`), when known.
    pub reason: Option<String>,
    /// sacct's exit code, when known.
    pub exit: Option<JobExit>,
}

/// Which `sacct` works here: with accounting storage (slurmdbd), only from the job completion
/// file (`sacct -c`, when accounting storage is off), or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SacctMode {
    Untried,
    Accounting,
    JobComp,
    Unavailable,
}

/// Runs the Slurm tools. Remembers which form of `sacct` works, so that a cluster without
/// accounting storage costs one failed `sacct` call, not one per poll.
#[derive(Debug)]
pub struct SlurmClient {
    sacct: SacctMode,
}

impl Default for SlurmClient {
    fn default() -> Self {
        SlurmClient::new()
    }
}

/// The squeue output format parsed by [`parse_squeue`].
const SQUEUE_FORMAT: &str = "%i|%j|%T|%r";
/// The sacct columns parsed by [`parse_sacct`].
const SACCT_FIELDS: &str = "JobID,JobName,State,ExitCode";
/// Tries of an `squeue` call before its failure is reported.
const SQUEUE_ATTEMPTS: u64 = 3;
/// How far back `sacct` looks for jobs found by name (its default is since midnight).
const SACCT_NAME_WINDOW: &str = "now-60days";

impl SlurmClient {
    /// A client that finds out on its first `sacct` call which form works here.
    pub fn new() -> SlurmClient {
        SlurmClient {
            sacct: SacctMode::Untried,
        }
    }

    /// Submits a job script; returns the job id. `args` are sbatch's options, the script last.
    pub fn submit(&self, args: &[String]) -> Result<String, ExecutorError> {
        let mut all = vec!["--parsable".to_string()];
        all.extend_from_slice(args);
        let out = run("sbatch", &all)?;
        if !out.status.success() {
            return Err(failure("sbatch", &out));
        }
        parse_sbatch_parsable(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
            ExecutorError::Scheduler(format!(
                "sbatch printed no job id: {:?}",
                String::from_utf8_lossy(&out.stdout).trim()
            ))
        })
    }

    /// The jobs among `ids` that slurmctld still knows (queued, running, or recently ended):
    /// one `squeue` call for all of them.
    pub fn squeue_ids(&self, ids: &[&str]) -> Result<Vec<JobRecord>, ExecutorError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.squeue(&[format!("--jobs={}", ids.join(","))])
    }

    /// Jobs with exactly this name that slurmctld still knows.
    pub fn squeue_name(&self, name: &str) -> Result<Vec<JobRecord>, ExecutorError> {
        let jobs = self.squeue(&[format!("--name={name}")])?;
        Ok(jobs.into_iter().filter(|j| j.name == name).collect())
    }

    /// All jobs of the current user that slurmctld still knows.
    pub fn squeue_mine(&self) -> Result<Vec<JobRecord>, ExecutorError> {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        self.squeue(&[format!("--user={uid}")])
    }

    fn squeue(&self, selection: &[String]) -> Result<Vec<JobRecord>, ExecutorError> {
        let mut args = vec![
            "--noheader".to_string(),
            "--states=all".to_string(),
            format!("--format={SQUEUE_FORMAT}"),
        ];
        args.extend_from_slice(selection);
        let mut attempt = 1;
        loop {
            let out = run("squeue", &args)?;
            if out.status.success() {
                return Ok(parse_squeue(&String::from_utf8_lossy(&out.stdout)));
            }
            // squeue fails when the only job asked for has been purged; that is "no jobs".
            if String::from_utf8_lossy(&out.stderr).contains("Invalid job id") {
                return Ok(Vec::new());
            }
            // A busy slurmctld times out now and then: ask again before giving up.
            if attempt == SQUEUE_ATTEMPTS {
                return Err(failure("squeue", &out));
            }
            tracing::warn!("squeue failed (attempt {attempt}), asking again");
            std::thread::sleep(std::time::Duration::from_secs(attempt));
            attempt += 1;
        }
    }

    /// Finished jobs from the accounting records (`sacct`, or `sacct -c` when accounting
    /// storage is off). Empty when neither works: the caller then knows only what squeue says.
    pub fn sacct_ids(&mut self, ids: &[&str]) -> Vec<JobRecord> {
        if ids.is_empty() {
            return Vec::new();
        }
        self.sacct(&[format!("--jobs={}", ids.join(","))])
    }

    /// Jobs with exactly this name from the accounting records of the last 60 days.
    pub fn sacct_name(&mut self, name: &str) -> Vec<JobRecord> {
        // `sacct -c` ignores --name, so filter here in every case.
        self.sacct(&[
            format!("--name={name}"),
            format!("--starttime={SACCT_NAME_WINDOW}"),
        ])
        .into_iter()
        .filter(|j| j.name == name)
        .collect()
    }

    fn sacct(&mut self, selection: &[String]) -> Vec<JobRecord> {
        let mut args = vec![
            "--noheader".to_string(),
            "--parsable2".to_string(),
            "--allocations".to_string(),
            format!("--format={SACCT_FIELDS}"),
        ];
        args.extend_from_slice(selection);
        let mut with_c = vec!["-c".to_string()];
        with_c.extend_from_slice(&args);
        let attempts: &[(SacctMode, &[String])] = match self.sacct {
            SacctMode::Unavailable => &[],
            SacctMode::Accounting => &[(SacctMode::Accounting, &args)],
            SacctMode::JobComp => &[(SacctMode::JobComp, &with_c)],
            SacctMode::Untried => &[
                (SacctMode::Accounting, &args),
                (SacctMode::JobComp, &with_c),
            ],
        };
        for (mode, a) in attempts {
            match run("sacct", a) {
                Ok(out) if out.status.success() => {
                    self.sacct = *mode;
                    return parse_sacct(&String::from_utf8_lossy(&out.stdout));
                }
                Ok(out) => tracing::debug!(
                    "sacct {:?} failed: {}",
                    mode,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                Err(e) => tracing::debug!("sacct {:?}: {e}", mode),
            }
        }
        if self.sacct == SacctMode::Untried {
            tracing::info!("no sacct here (neither accounting storage nor a job completion file)");
            self.sacct = SacctMode::Unavailable;
        }
        Vec::new()
    }

    /// Cancels jobs. Jobs that already ended are not an error.
    pub fn scancel(&self, ids: &[&str]) -> Result<(), ExecutorError> {
        if ids.is_empty() {
            return Ok(());
        }
        let args: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let out = run("scancel", &args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success()
            || stderr.contains("already completing or completed")
            || stderr.contains("Invalid job id")
        {
            return Ok(());
        }
        Err(failure("scancel", &out))
    }
}

/// Runs one Slurm tool; a missing tool is reported as such.
fn run(program: &str, args: &[String]) -> Result<Output, ExecutorError> {
    tracing::debug!("{program} {}", args.join(" "));
    Command::new(program)
        .args(args)
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ExecutorError::Scheduler(format!(
                "{program} was not found; the slurm executor needs the Slurm commands on PATH \
                 (run autolb on a login node of the cluster)"
            )),
            _ => ExecutorError::Io {
                what: format!("running {program}"),
                source: e,
            },
        })
}

/// An error from a Slurm tool that ran and failed, with its own message.
fn failure(program: &str, out: &Output) -> ExecutorError {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let message = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    ExecutorError::Scheduler(format!(
        "{program} failed ({}): {}",
        out.status,
        if message.is_empty() {
            "no message"
        } else {
            &message
        }
    ))
}

/// The job id from `sbatch --parsable`: `123` or `123;cluster`.
pub fn parse_sbatch_parsable(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

/// Parses `squeue --format=%i|%j|%T|%r` lines. The job name sits in the middle, so a name with
/// a `|` in it is still read whole.
pub fn parse_squeue(stdout: &str) -> Vec<JobRecord> {
    stdout
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (id, rest) = line.split_once('|')?;
            let (rest, reason) = rest.rsplit_once('|')?;
            let (name, state) = rest.rsplit_once('|')?;
            Some(JobRecord {
                id: id.trim().to_string(),
                name: name.to_string(),
                state: state.trim().to_string(),
                reason: Some(reason.trim().to_string()).filter(|r| !r.is_empty()),
                exit: None,
            })
        })
        .collect()
}

/// Parses `sacct --parsable2 --format=JobID,JobName,State,ExitCode` lines, keeping whole jobs
/// only (no `123.batch` step rows).
pub fn parse_sacct(stdout: &str) -> Vec<JobRecord> {
    stdout
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (id, rest) = line.split_once('|')?;
            let (rest, exit) = rest.rsplit_once('|')?;
            let (name, state) = rest.rsplit_once('|')?;
            if id.contains('.') || id.is_empty() {
                return None;
            }
            Some(JobRecord {
                id: id.to_string(),
                name: name.to_string(),
                state: state.trim().to_string(),
                reason: None,
                exit: JobExit::parse(exit),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_job_ids() {
        assert_eq!(parse_sbatch_parsable("123\n"), Some("123".into()));
        assert_eq!(parse_sbatch_parsable("4567;ci\n"), Some("4567".into()));
        assert_eq!(
            parse_sbatch_parsable("sbatch: warning: x\n89\n"),
            Some("89".into())
        );
        assert_eq!(parse_sbatch_parsable(""), None);
        assert_eq!(parse_sbatch_parsable("Submitted batch job 5\n"), None);
    }

    #[test]
    fn squeue_lines() {
        let jobs = parse_squeue(
            "12|autolb-ab12cd34-i01-t01-r1|PENDING|Priority\n\
             13|odd|name|RUNNING|None\n\
             garbage\n\
             14|x|COMPLETED|\n",
        );
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].id, "12");
        assert_eq!(jobs[0].name, "autolb-ab12cd34-i01-t01-r1");
        assert_eq!(jobs[0].state, "PENDING");
        assert_eq!(jobs[0].reason.as_deref(), Some("Priority"));
        assert_eq!(jobs[1].name, "odd|name");
        assert_eq!(jobs[1].state, "RUNNING");
        assert_eq!(jobs[2].reason, None);
    }

    #[test]
    fn sacct_lines_keep_jobs_not_steps() {
        let jobs = parse_sacct(
            "5|wrap|COMPLETED|0:0\n5.batch|batch|COMPLETED|0:0\n6|job|CANCELLED by 0|0:15\n\
             7|job|FAILED|3:0\n",
        );
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[1].state, "CANCELLED by 0");
        assert_eq!(
            jobs[1].exit,
            Some(JobExit {
                code: 0,
                signal: 15
            })
        );
        assert_eq!(jobs[2].exit, Some(JobExit { code: 3, signal: 0 }));
    }
}
