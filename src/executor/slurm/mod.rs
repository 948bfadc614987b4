//! The Slurm executor: each run of a campaign is one batch job.
//!
//! A run's job script is rendered from a user template (or, without one, from the
//! `[executor] command`) into the run directory as `job.sh`, with the number placeholders of
//! the command executor plus `{ntasks}`, `{nodes}`, `{extra_pes}`, and the generated
//! `{command}` and `{launch}`; the run's text values (run directory, job name, paths) are
//! `export` lines at its top (`SlurmExecutor::exports`), which the script expands. It is submitted
//! with `sbatch --parsable`; the sbatch options (job name, tasks,
//! nodes, partition, account, QOS, time limit, exclusive, output files) go on the sbatch
//! command line, where they override any `#SBATCH` line of the template. The command line is
//! kept beside the script as `sbatch.cmd` so a run can be resubmitted by hand.
//!
//! Tracking asks `squeue` once for all jobs of a poll, then `sacct` (or `sacct -c` when the
//! cluster has no accounting storage) only for jobs that left the queue or failed. Job names
//! are `<prefix>-<campaign hash>-<run id>`, unique per campaign directory and run, so that a
//! driver restarted after a crash of the login node finds its jobs by id and, failing that,
//! by name ([`Executor::recover`]), instead of submitting them again.

pub mod client;
pub mod script;
mod settings;
pub mod states;

pub use settings::{ExtraProgram, MultiProgSettings, SlurmSettings};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use self::client::{JobRecord, SlurmClient};
use self::script::{Mode, RankGroup, Template, Value};
use super::{
    read_exit_status, status_on_disk, write_exit_status, Executor, ExecutorContext, ExecutorError,
    RunRequest, RunStatus, Ticket,
};
use crate::executor::ExecutorConfig;

/// Runs each campaign run as a Slurm batch job.
#[derive(Debug)]
pub struct SlurmExecutor {
    settings: SlurmSettings,
    campaign_dir: PathBuf,
    job_script: Template,
    command: Option<Vec<Template>>,
    programs: BTreeMap<String, Vec<Template>>,
    extras: Vec<(ExtraProgram, Vec<Template>)>,
    /// `<prefix>-<campaign hash>`; a job's name adds `-<run id>`.
    name_prefix: String,
    time_limit: Option<String>,
    autolb: PathBuf,
    poll_interval: Duration,
    client: SlurmClient,
}

impl SlurmExecutor {
    /// Builds the executor from the campaign's `[executor]` table. Reads and checks the
    /// template now, so a typo fails the campaign before any job is submitted.
    ///
    /// Relative paths (`template`, `autolb`) are taken relative to the campaign directory;
    /// prefer [`SlurmExecutor::from_context`], which knows the campaign file's directory.
    pub fn from_config(
        cfg: &ExecutorConfig,
        campaign_dir: &Path,
    ) -> Result<SlurmExecutor, ExecutorError> {
        SlurmExecutor::build(cfg, campaign_dir, None)
    }

    /// Builds the executor with what the campaign knows: relative paths in `[executor.slurm]`
    /// are relative to the campaign file (like the curves), and an MPMD table that misses a
    /// component is reported before any job is submitted.
    pub fn from_context(
        cfg: &ExecutorConfig,
        campaign_dir: &Path,
        ctx: &ExecutorContext,
    ) -> Result<SlurmExecutor, ExecutorError> {
        SlurmExecutor::build(cfg, campaign_dir, Some(ctx))
    }

    fn build(
        cfg: &ExecutorConfig,
        campaign_dir: &Path,
        ctx: Option<&ExecutorContext>,
    ) -> Result<SlurmExecutor, ExecutorError> {
        let settings::Validated {
            settings,
            campaign_dir,
            job_script,
            command,
            programs,
            extras,
            name_prefix,
            time_limit,
            autolb,
            poll_interval,
        } = settings::validate(cfg, campaign_dir, ctx)?;
        Ok(SlurmExecutor {
            poll_interval,
            settings,
            campaign_dir,
            job_script,
            command,
            programs,
            extras,
            name_prefix,
            time_limit,
            autolb,
            client: SlurmClient::new(),
        })
    }

    /// The Slurm job name of a run: `<prefix>-<campaign hash>-<run id>`.
    pub fn job_name(&self, run: &RunRequest) -> String {
        let id: String = run
            .id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{}-{id}", self.name_prefix)
    }

    /// The job names of this campaign start with this, then `-`.
    pub fn job_name_prefix(&self) -> &str {
        &self.name_prefix
    }

    /// Cancels every job of this campaign that Slurm still has queued or running, found by
    /// job name (for `campaign cancel`, even when the state lost a ticket). Returns their ids.
    pub fn cancel_campaign(&mut self) -> Result<Vec<String>, ExecutorError> {
        let prefix = format!("{}-", self.name_prefix);
        let ids: Vec<String> = self
            .client
            .squeue_mine()?
            .into_iter()
            .filter(|j| j.name.starts_with(&prefix) && !states::is_final(&j.state))
            .map(|j| j.id)
            .collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.client.scancel(&refs)?;
        Ok(ids)
    }

    /// The placeholder values of a run (without `{launch}` and `{command}`): its numbers.
    fn values(&self, run: &RunRequest) -> BTreeMap<String, Value> {
        let ntasks = self.ntasks(run);
        let mut v: BTreeMap<String, Value> = crate::executor::command::placeholder_values(run)
            .into_iter()
            .map(|(name, n)| (name, Value::Number(n)))
            .collect();
        v.insert("extra_pes".into(), Value::Number(run.extra_pes.into()));
        v.insert("ntasks".into(), Value::Number(ntasks.into()));
        if let Some(cpn) = self.settings.cores_per_node {
            v.insert(
                "nodes".into(),
                Value::Number(script::nodes_for(ntasks, cpn).into()),
            );
        }
        v
    }

    /// The variables the job script exports: the run's ([`crate::executor::env::run_env`]),
    /// plus `AUTOLB_CAMPAIGN_DIR`, `AUTOLB_JOB_NAME`, `AUTOLB_BIN` (the autolb binary) and,
    /// with `[executor.slurm.multi_prog]`, `AUTOLB_MULTI_PROG` (the MPMD file).
    fn exports(&self, run: &RunRequest) -> Vec<(String, String)> {
        let mut vars = crate::executor::env::run_env(run);
        let path = |p: &Path| p.display().to_string();
        vars.push(("AUTOLB_CAMPAIGN_DIR".into(), path(&self.campaign_dir)));
        vars.push(("AUTOLB_JOB_NAME".into(), self.job_name(run)));
        vars.push(("AUTOLB_BIN".into(), path(&self.autolb)));
        if self.settings.multi_prog.is_some() {
            vars.push((
                "AUTOLB_MULTI_PROG".into(),
                path(&run.run_dir.join(MULTI_PROG_FILE)),
            ));
        }
        vars
    }

    /// Tasks the job asks for: all PEs of the run, capped by `max_ntasks`.
    fn ntasks(&self, run: &RunRequest) -> u32 {
        let total = run.total_nproc().max(1);
        self.settings.max_ntasks.map_or(total, |cap| total.min(cap))
    }

    /// The rank groups of the MPMD file: components in the run's order, then the extras.
    fn rank_groups(
        &self,
        run: &RunRequest,
        values: &BTreeMap<String, Value>,
    ) -> Result<Vec<RankGroup>, String> {
        let render = |words: &[Template]| {
            words
                .iter()
                .map(|w| w.render(values, Mode::Word))
                .collect::<Result<Vec<_>, _>>()
        };
        let mut groups = Vec::new();
        for (k, (name, _)) in run.nproc.iter().enumerate() {
            let words = self.programs.get(name).ok_or_else(|| {
                format!(
                    "[executor.slurm.multi_prog.programs] has no program for component {name}; \
                     add {name} = [\"path/to/binary\", ...]"
                )
            })?;
            groups.push(RankGroup {
                name: name.clone(),
                ntasks: run.ranks_of(k),
                command: render(words)?,
            });
        }
        if let Some(unknown) = self
            .programs
            .keys()
            .find(|k| !run.nproc.iter().any(|(n, _)| n == *k))
        {
            return Err(format!(
                "[executor.slurm.multi_prog.programs] names {unknown}, which is not a component \
                 of this campaign"
            ));
        }
        let extra_total: u64 = self.extras.iter().map(|(e, _)| u64::from(e.nproc)).sum();
        if extra_total != u64::from(run.extra_pes) {
            return Err(format!(
                "[executor.slurm.multi_prog.extras] add up to {extra_total} PEs but the campaign's \
                 extra_pes is {}; make them equal",
                run.extra_pes
            ));
        }
        for (extra, words) in &self.extras {
            groups.push(RankGroup {
                name: extra.name.clone(),
                ntasks: extra.nproc,
                command: render(words)?,
            });
        }
        Ok(groups)
    }

    /// sbatch's options for a run, the job script last.
    fn sbatch_args(&self, run: &RunRequest, script: &Path) -> Vec<String> {
        let dir = run.run_dir.display().to_string();
        let out_base = script::sbatch_filename_escape(&dir);
        let ntasks = self.ntasks(run);
        let mut args = vec![
            format!("--job-name={}", self.job_name(run)),
            format!("--chdir={dir}"),
            format!("--output={out_base}/slurm-%j.out"),
            format!("--error={out_base}/slurm-%j.err"),
            format!("--ntasks={ntasks}"),
        ];
        if let Some(cpn) = self.settings.cores_per_node {
            args.push(format!("--nodes={}", script::nodes_for(ntasks, cpn)));
        }
        if let Some(p) = &self.settings.partition {
            args.push(format!("--partition={p}"));
        }
        if let Some(a) = &self.settings.account {
            args.push(format!("--account={a}"));
        }
        if let Some(q) = &self.settings.qos {
            args.push(format!("--qos={q}"));
        }
        if let Some(t) = &self.time_limit {
            args.push(format!("--time={t}"));
        }
        if self.settings.exclusive == Some(true) {
            args.push("--exclusive".into());
        }
        args.extend(self.settings.sbatch_args.iter().flatten().cloned());
        args.push(script.display().to_string());
        args
    }

    /// Renders and writes the run's files (job script, MPMD file, sbatch command line) and
    /// returns sbatch's arguments.
    pub(crate) fn prepare(&self, run: &RunRequest) -> Result<Vec<String>, ExecutorError> {
        let io = |what: String| move |e| ExecutorError::Io { what, source: e };
        std::fs::create_dir_all(&run.run_dir)
            .map_err(io(format!("creating {}", run.run_dir.display())))?;
        let mut values = self.values(run);
        if self.settings.multi_prog.is_some() {
            let groups = self
                .rank_groups(run, &values)
                .map_err(ExecutorError::Config)?;
            let text = script::render_multi_prog(&run.id, &groups)
                .map_err(|e| ExecutorError::Config(format!("[executor.slurm.multi_prog] {e}")))?;
            write_atomically(&run.run_dir.join(MULTI_PROG_FILE), &text)?;
            // The same programs as one job step each, with each component's threads.
            let threads: Vec<u32> = (0..groups.len())
                .map(|k| {
                    if k < run.nproc.len() {
                        run.threads_of(k)
                    } else {
                        1
                    }
                })
                .collect();
            let steps: Vec<script::LaunchStep> = groups
                .into_iter()
                .zip(threads)
                .map(|(g, threads)| script::LaunchStep {
                    name: g.name,
                    ranks: g.ntasks,
                    threads,
                    command: g.command,
                })
                .collect();
            let overlap = self.ntasks(run) < run.total_nproc();
            let launch = script::render_launch(&steps, overlap)
                .map_err(|e| ExecutorError::Config(format!("[executor.slurm.multi_prog] {e}")))?;
            values.insert("launch".into(), Value::Shell(launch));
        }
        if let Some(words) = &self.command {
            let rendered = words
                .iter()
                .map(|w| {
                    w.render(&values, Mode::Word)
                        .map(|s| script::shell_quote(&s))
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(ExecutorError::Config)?;
            values.insert("command".into(), Value::Shell(rendered.join(" ")));
        }
        let text = self
            .job_script
            .render(&values, Mode::Shell)
            .map_err(ExecutorError::Config)?;
        let exports = crate::executor::env::export_lines(&self.exports(run));
        let text = script::with_exports(&text, &exports);
        let script_path = run.run_dir.join("job.sh");
        write_atomically(&script_path, &text)?;
        let args = self.sbatch_args(run, &script_path);
        let line = std::iter::once("sbatch".to_string())
            .chain(args.iter().map(|a| script::shell_quote(a)))
            .collect::<Vec<_>>()
            .join(" ");
        write_atomically(&run.run_dir.join("sbatch.cmd"), &format!("{line}\n"))?;
        Ok(args)
    }

    /// What Slurm knows about these jobs: squeue for all of them, then sacct only for those
    /// that left the queue or ended badly (for their exit code).
    fn lookup(&mut self, ids: &[&str]) -> Result<BTreeMap<String, JobRecord>, ExecutorError> {
        let mut found: BTreeMap<String, JobRecord> = self
            .client
            .squeue_ids(ids)?
            .into_iter()
            .map(|j| (j.id.clone(), j))
            .collect();
        let ask_sacct: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| match found.get(*id) {
                None => true,
                Some(j) => states::is_final(&j.state) && !j.state.starts_with("COMPLETED"),
            })
            .collect();
        for record in self.client.sacct_ids(&ask_sacct) {
            match found.get_mut(&record.id) {
                Some(known) => known.exit = known.exit.or(record.exit),
                None => {
                    found.insert(record.id.clone(), record);
                }
            }
        }
        Ok(found)
    }
}

/// The `srun --multi-prog` file in a run directory (`$AUTOLB_MULTI_PROG`).
const MULTI_PROG_FILE: &str = "multi-prog.conf";

/// A short stable hash of the campaign directory, so job names differ between campaigns.
fn campaign_hash(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // FNV-1a, 64 bits, folded to 32.
    let h = super::fnv1a(canonical.to_string_lossy().bytes());
    format!("{:08x}", (h ^ (h >> 32)) as u32)
}

/// Writes a run file with [`crate::fsutil::write_atomically`] (the user's umask: the script
/// is not made executable or world-writable; sbatch does not need it); errors name the file.
fn write_atomically(path: &Path, text: &str) -> Result<(), ExecutorError> {
    crate::fsutil::write_atomically(path, text.as_bytes()).map_err(|e| ExecutorError::Io {
        what: format!("writing {}", path.display()),
        source: e,
    })
}

/// Writes `exit_status` into the run directory once a job has ended (like the local
/// executors), so the run directory tells how it ended even after Slurm forgets the job.
fn record_end(run: &RunRequest, status: &RunStatus) {
    if !matches!(
        status,
        RunStatus::Finished { .. } | RunStatus::Failed { .. }
    ) || !run.run_dir.is_dir()
        || read_exit_status(&run.run_dir).as_ref() == Some(status)
    {
        return;
    }
    if let Err(e) = write_exit_status(&run.run_dir, status) {
        tracing::warn!("run {}: cannot write its exit status: {e}", run.id);
    }
}

/// Whether a ticket is a plain Slurm job id.
fn is_job_id(ticket: &Ticket) -> bool {
    !ticket.0.is_empty() && ticket.0.chars().all(|c| c.is_ascii_digit())
}

fn numeric_id(id: &str) -> u64 {
    id.parse().unwrap_or(0)
}

impl Executor for SlurmExecutor {
    fn cancel_untracked(&mut self) -> Result<Vec<String>, ExecutorError> {
        self.cancel_campaign()
    }

    fn kind(&self) -> &'static str {
        "slurm"
    }

    fn start(&mut self, run: &RunRequest) -> Result<Ticket, ExecutorError> {
        // The job runs elsewhere, from another directory: it gets absolute paths only.
        let mut run = run.clone();
        run.run_dir = std::path::absolute(&run.run_dir).map_err(|e| ExecutorError::Io {
            what: format!("resolving {}", run.run_dir.display()),
            source: e,
        })?;
        let run = &run;
        let args = self.prepare(run)?;
        let id = self.client.submit(&args)?;
        tracing::info!("run {} submitted as Slurm job {id}", run.id);
        Ok(Ticket(id))
    }

    fn poll(&mut self, runs: &[(&RunRequest, &Ticket)]) -> Result<Vec<RunStatus>, ExecutorError> {
        let ids: Vec<&str> = runs
            .iter()
            .filter(|(_, t)| is_job_id(t))
            .map(|(_, t)| t.0.as_str())
            .collect();
        let found = self.lookup(&ids)?;
        // Jobs that can never start are failed runs: take them out of the queue.
        let stuck: Vec<&str> = found
            .values()
            .filter(|j| {
                j.name.starts_with(&self.name_prefix)
                    && states::base_state(&j.state) == "PENDING"
                    && j.reason.as_deref().is_some_and(states::never_starts)
            })
            .map(|j| j.id.as_str())
            .collect();
        if !stuck.is_empty() {
            tracing::warn!("cancelling Slurm jobs that can never start: {stuck:?}");
            self.client.scancel(&stuck)?;
        }
        Ok(runs
            .iter()
            .map(|(run, ticket)| match found.get(&ticket.0) {
                // A job id reused by a reinstalled Slurm is not our job.
                Some(job) if job.name == self.job_name(run) => {
                    let status =
                        states::run_status(&job.state, job.exit, job.reason.as_deref(), &job.id);
                    record_end(run, &status);
                    status
                }
                // Slurm forgot the job (no accounting, purged from slurmctld): what an
                // earlier poll saw it end with, if any.
                _ => status_on_disk(&run.run_dir),
            })
            .collect())
    }

    fn cancel(&mut self, _run: &RunRequest, ticket: &Ticket) -> Result<(), ExecutorError> {
        if !is_job_id(ticket) {
            return Ok(());
        }
        self.client.scancel(&[ticket.0.as_str()])
    }

    fn recover(
        &mut self,
        run: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> Result<Option<Ticket>, ExecutorError> {
        let name = self.job_name(run);
        let mut candidates: BTreeMap<String, JobRecord> = BTreeMap::new();
        if let Some(t) = ticket.filter(|t| is_job_id(t)) {
            candidates.extend(self.lookup(&[t.0.as_str()])?);
        }
        for job in self.client.squeue_name(&name)? {
            candidates.entry(job.id.clone()).or_insert(job);
        }
        for job in self.client.sacct_name(&name) {
            candidates.entry(job.id.clone()).or_insert(job);
        }
        let ours: Vec<&JobRecord> = candidates.values().filter(|j| j.name == name).collect();
        let mut active: Vec<&JobRecord> = ours
            .iter()
            .copied()
            .filter(|j| !states::is_final(&j.state))
            .collect();
        active.sort_by_key(|j| numeric_id(&j.id));
        if let Some(newest) = active.pop() {
            // Two live jobs for one run (a crash between two submissions): keep the newest.
            let extra: Vec<&str> = active.iter().map(|j| j.id.as_str()).collect();
            if !extra.is_empty() {
                tracing::warn!("run {}: cancelling duplicate jobs {extra:?}", run.id);
                self.client.scancel(&extra)?;
            }
            return Ok(Some(Ticket(newest.id.clone())));
        }
        if let Some(t) = ticket.filter(|t| ours.iter().any(|j| j.id == t.0)) {
            return Ok(Some(t.clone()));
        }
        // A job that ended while no driver watched it: by ticket, Slurm may have forgotten it
        // but an earlier poll recorded how it ended.
        if let Some(t) = ticket.filter(|t| is_job_id(t)) {
            if read_exit_status(&run.run_dir).is_some() {
                return Ok(Some(t.clone()));
            }
        }
        // By name, only a job that completed into this very run directory: a completed job
        // of an earlier attempt wrote into a directory the driver has since moved aside.
        Ok(ours
            .iter()
            .filter(|j| j.state.starts_with("COMPLETED"))
            .filter(|j| run.run_dir.join(format!("slurm-{}.out", j.id)).exists())
            .max_by_key(|j| numeric_id(&j.id))
            .map(|j| Ticket(j.id.clone())))
    }

    fn poll_interval(&self) -> Duration {
        self.poll_interval
    }
}

#[cfg(test)]
mod tests;
