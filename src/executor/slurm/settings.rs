//! What `[executor.slurm]` says and the checks it passes before any job is submitted: the
//! settings as written ([`SlurmSettings`]) and, once validated against the `[executor]` table
//! and the campaign, the parsed templates, limits and names the executor runs with
//! ([`Validated`]). Kept apart from submitting and tracking jobs so every way a campaign file
//! can be wrong is in one place, and the executor only ever holds settings that passed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::campaign_hash;
use super::script::{self, Template};
use crate::executor::{ExecutorConfig, ExecutorContext, ExecutorError};

/// `[executor.slurm]` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmSettings {
    /// Job script template file. A relative path is relative to the campaign file (see
    /// [`SlurmSettings::resolve_paths`]); when still relative at run time, to the campaign
    /// directory.
    pub template: Option<PathBuf>,
    /// The job script template inline, instead of `template`. Without either, the job runs
    /// `[executor] command` in the run directory.
    pub script: Option<String>,
    /// Slurm partition (`--partition`); default: the cluster's.
    pub partition: Option<String>,
    /// Slurm account to charge (`--account`).
    pub account: Option<String>,
    /// Slurm QOS (`--qos`).
    pub qos: Option<String>,
    /// Slurm time limit per job (`MM`, `HH:MM:SS`, `D-HH:MM:SS`); default: `[executor]
    /// timeout_s` rounded up to whole minutes, else the partition's default.
    pub time_limit: Option<String>,
    /// Ask for whole nodes (`--exclusive`).
    pub exclusive: Option<bool>,
    /// Cores per node of the partition: sets `--nodes` and `{nodes}`.
    pub cores_per_node: Option<u32>,
    /// At most this many tasks per job, whatever the run's PEs: for testing a campaign with a
    /// stand-in model on a small machine. `{nproc.NAME}` and `{total_nproc}` keep the model's
    /// PE counts; `{ntasks}` and `--ntasks` are capped, and `{launch}`'s steps share the
    /// capped allocation (`--overlap --overcommit`). Cannot be combined with `{multi_prog}`.
    pub max_ntasks: Option<u32>,
    /// More sbatch options, one per item (e.g. `["--mem=0", "--constraint=highmem"]`).
    pub sbatch_args: Option<Vec<String>>,
    /// Seconds between two polls of the queue (default 10: one `squeue` call each time).
    pub poll_interval_s: Option<f64>,
    /// First part of the job names (default `autolb`).
    pub job_name_prefix: Option<String>,
    /// The autolb binary jobs call as `{autolb}` (default: the running binary).
    pub autolb: Option<PathBuf>,
    /// Writes an `srun --multi-prog` file per run (`{multi_prog}`), from the PE counts.
    pub multi_prog: Option<MultiProgSettings>,
}

/// `[executor.slurm.multi_prog]`: the program of each component for an MPMD launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiProgSettings {
    /// `NAME = ["program", "arg", ...]` per component (the campaign's component names).
    /// Components take ranks in the campaign's component order.
    pub programs: BTreeMap<String, Vec<String>>,
    /// Unbalanced extra programs (XIOS, the runoff mapper) after the components; their PEs
    /// must add up to the campaign's `extra_pes`.
    #[serde(default)]
    pub extras: Vec<ExtraProgram>,
}

/// `[[executor.slurm.multi_prog.extras]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraProgram {
    /// The program's name, for the comment line of the multi-prog file.
    pub name: String,
    /// Its PEs (ranks); the extras' PEs add up to the campaign's `extra_pes`.
    pub nproc: u32,
    /// Program and arguments.
    pub command: Vec<String>,
}

impl SlurmSettings {
    /// Makes relative paths absolute against the campaign file's directory (as the curve
    /// paths are), so a campaign directory keeps working from any current directory.
    /// [`SlurmExecutor::from_context`](super::SlurmExecutor::from_context) calls it with the
    /// campaign's `base_dir`.
    pub fn resolve_paths(&mut self, base_dir: &Path) {
        for path in [&mut self.template, &mut self.autolb].into_iter().flatten() {
            if path.is_relative() {
                *path = base_dir.join(&*path);
            }
        }
    }
}

/// Default seconds between polls: gentle on a shared slurmctld.
pub(super) const DEFAULT_POLL_INTERVAL_S: f64 = 10.0;

/// The job script used without a template: run the `[executor] command` in the run directory.
pub(super) const COMMAND_SCRIPT: &str = "#!/bin/bash\n\
# Job script written by autolb from [executor] command.\n\
cd \"$AUTOLB_RUN_DIR\" || exit 1\n\
{command}\n";

/// The job script for `[executor] command` in a scaling campaign's standalone runs: times the
/// command and writes its wall seconds into `wall_s` (what `timing = "wall"` reads; the time in
/// the queue is not in it), and ends with the command's exit code.
pub(super) const TIMED_COMMAND_SCRIPT: &str = "#!/bin/bash\n\
# Job script written by autolb from [executor] command.\n\
cd \"$AUTOLB_RUN_DIR\" || exit 1\n\
autolb_start=$(date +%s.%N)\n\
{command}\n\
autolb_status=$?\n\
autolb_end=$(date +%s.%N)\n\
awk -v s=\"$autolb_start\" -v e=\"$autolb_end\" 'BEGIN { print e - s }' > wall_s.tmp && mv wall_s.tmp wall_s\n\
exit $autolb_status\n";

/// `[executor.slurm]` and `[executor]` once checked: what a [`super::SlurmExecutor`] runs with.
#[derive(Debug)]
pub(super) struct Validated {
    pub settings: SlurmSettings,
    pub campaign_dir: PathBuf,
    pub job_script: Template,
    pub command: Option<Vec<Template>>,
    pub programs: BTreeMap<String, Vec<Template>>,
    pub extras: Vec<(ExtraProgram, Vec<Template>)>,
    /// `<prefix>-<campaign hash>`; a job's name adds `-<run id>`.
    pub name_prefix: String,
    pub time_limit: Option<String>,
    pub autolb: PathBuf,
    pub poll_interval: Duration,
}

/// Checks `cfg` for the Slurm executor of the campaign in `campaign_dir`: reads and parses the
/// job script template, checks its placeholders against the settings that provide them, the
/// MPMD programs against the campaign's components (with `ctx`), and the limits and names
/// Slurm will be given.
pub(super) fn validate(
    cfg: &ExecutorConfig,
    campaign_dir: &Path,
    ctx: Option<&ExecutorContext>,
) -> Result<Validated, ExecutorError> {
    let mut settings = cfg.slurm.clone().unwrap_or_default();
    if let Some(ctx) = ctx {
        settings.resolve_paths(&ctx.base_dir);
    }
    let config = |m: String| ExecutorError::Config(format!("[executor.slurm] {m}"));
    let campaign_dir = std::path::absolute(campaign_dir).map_err(|e| ExecutorError::Io {
        what: format!("resolving {}", campaign_dir.display()),
        source: e,
    })?;

    let command = match &cfg.command {
        Some(words) if words.is_empty() => {
            return Err(ExecutorError::Config(
                "[executor] command is empty; give the program and its arguments".into(),
            ))
        }
        Some(words) => Some(
            words
                .iter()
                .enumerate()
                .map(|(i, w)| Template::parse(w, &format!("[executor] command[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map_err(ExecutorError::Config)?,
        ),
        None => None,
    };

    let job_script = match (&settings.template, &settings.script) {
        (Some(_), Some(_)) => {
            return Err(config(
                "has both template and script; keep one (a file, or the text inline)".into(),
            ))
        }
        (Some(path), None) => {
            let path = if path.is_relative() {
                campaign_dir.join(path)
            } else {
                path.clone()
            };
            let text = std::fs::read_to_string(&path).map_err(|e| {
                config(format!(
                    "template {}: cannot read it: {e}; give the job script template's path \
                     (relative to the campaign file)",
                    path.display()
                ))
            })?;
            Template::parse(&text, &path.display().to_string())
        }
        (None, Some(text)) => Template::parse(text, "[executor.slurm] script"),
        (None, None) if command.is_some() && ctx.is_some_and(|c| c.standalone) => {
            Template::parse(TIMED_COMMAND_SCRIPT, "built-in script")
        }
        (None, None) if command.is_some() => Template::parse(COMMAND_SCRIPT, "built-in script"),
        (None, None) => {
            return Err(config(
                "needs a job script: set template = \"job.tmpl\" (or script = \"...\"), or \
                 an [executor] command to run in each run's directory"
                    .into(),
            ))
        }
    }
    .map_err(ExecutorError::Config)?;

    if ctx.is_some_and(|c| c.standalone) && settings.multi_prog.is_some() {
        return Err(config(
            "multi_prog describes a coupled run of every component; a scaling campaign runs one component at a time: drop the table and use `[executor] command` (or a script) with \"$AUTOLB_COMPONENT\" and {nproc}".into(),
        ));
    }
    let mut known: Vec<&str> = script::RUN_PLACEHOLDERS.to_vec();
    if ctx.is_some_and(|c| c.standalone) {
        // A scaling campaign's standalone runs: the PEs of the component measured.
        known.push("nproc");
    }
    if settings.cores_per_node.is_some() {
        known.push("nodes");
    }
    if settings.multi_prog.is_some() {
        known.push("launch");
    }
    let word_known = known.clone();
    if command.is_some() {
        known.push("command");
    }
    // Placeholders that exist only with a setting: say which setting.
    for (placeholder, missing) in [
        (
            "nodes",
            settings
                .cores_per_node
                .is_none()
                .then_some("cores_per_node = N in [executor.slurm]"),
        ),
        (
            "launch",
            settings
                .multi_prog
                .is_none()
                .then_some("an [executor.slurm.multi_prog] table"),
        ),
        (
            "command",
            cfg.command.is_none().then_some("a command in [executor]"),
        ),
    ] {
        if let (true, Some(setting)) = (job_script.uses(placeholder), missing) {
            return Err(config(format!(
                "the job script uses {{{placeholder}}}, which needs {setting}"
            )));
        }
    }
    job_script
        .check_names(&known)
        .map_err(ExecutorError::Config)?;
    for word in command.iter().flatten() {
        word.check_names(&word_known)
            .map_err(ExecutorError::Config)?;
    }

    let (programs, extras) = match &settings.multi_prog {
        None => (BTreeMap::new(), Vec::new()),
        Some(mp) => {
            // `{launch}`'s steps share a capped allocation (--overlap); an MPMD file cannot.
            if settings.max_ntasks.is_some() && job_script.expands("AUTOLB_MULTI_PROG") {
                return Err(config(
                    "max_ntasks cannot be combined with \"$AUTOLB_MULTI_PROG\": the MPMD file \
                     needs every rank of the run; remove one of them, or launch with {launch}"
                        .into(),
                ));
            }
            let parse_words = |owner: &str, words: &[String]| {
                if words.is_empty() {
                    return Err(config(format!(
                        "multi_prog: {owner} has an empty command; give the program and its \
                         arguments"
                    )));
                }
                words
                    .iter()
                    .map(|w| {
                        let t = Template::parse(w, &format!("multi_prog {owner}"))?;
                        t.check_names(&word_known)?;
                        Ok(t)
                    })
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(ExecutorError::Config)
            };
            let mut programs = BTreeMap::new();
            for (name, words) in &mp.programs {
                crate::curve::validate_component_name(name)
                    .map_err(|e| config(format!("multi_prog.programs: {e}")))?;
                programs.insert(name.clone(), parse_words(name, words)?);
            }
            if let Some(ctx) = ctx {
                let names: Vec<&str> = ctx.components.iter().map(|c| c.name.as_str()).collect();
                if let Some(missing) = names.iter().find(|n| !programs.contains_key(**n)) {
                    return Err(config(format!(
                        "multi_prog.programs has no program for component {missing}; add \
                         {missing} = [\"path/to/binary\", ...]"
                    )));
                }
                if let Some(unknown) = programs.keys().find(|k| !names.contains(&k.as_str())) {
                    return Err(config(format!(
                        "multi_prog.programs names {unknown}, which is not a component of \
                         this campaign ({})",
                        names.join(", ")
                    )));
                }
            }
            let mut extras = Vec::new();
            for extra in &mp.extras {
                crate::curve::validate_component_name(&extra.name)
                    .map_err(|e| config(format!("multi_prog.extras: {e}")))?;
                extras.push((extra.clone(), parse_words(&extra.name, &extra.command)?));
            }
            (programs, extras)
        }
    };

    let time_limit = match (&settings.time_limit, cfg.timeout_s) {
        (Some(limit), _) => {
            script::validate_time_limit(limit).map_err(config)?;
            Some(limit.clone())
        }
        (None, Some(t)) if t > 0.0 && t.is_finite() => Some(script::time_limit_from_seconds(t)),
        (None, Some(t)) => {
            return Err(ExecutorError::Config(format!(
                "[executor] timeout_s = {t} is not a positive number of seconds"
            )))
        }
        (None, None) => None,
    };
    for (key, value) in [
        ("partition", &settings.partition),
        ("account", &settings.account),
        ("qos", &settings.qos),
    ] {
        if let Some(v) = value {
            if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(config(format!(
                    "{key} = {v:?} is not a Slurm name (no spaces, not empty)"
                )));
            }
        }
    }
    for arg in settings.sbatch_args.iter().flatten() {
        if !arg.starts_with('-') || arg.contains(['\n', '\r']) {
            return Err(config(format!(
                "sbatch_args: {arg:?} is not an sbatch option; write each as \"--name=value\""
            )));
        }
    }
    if settings.cores_per_node == Some(0) || settings.max_ntasks == Some(0) {
        return Err(config(
            "cores_per_node and max_ntasks must be at least 1".into(),
        ));
    }
    let poll_s = settings.poll_interval_s.unwrap_or(DEFAULT_POLL_INTERVAL_S);
    let poll_interval = Duration::try_from_secs_f64(poll_s)
        .ok()
        .filter(|_| poll_s >= 0.1)
        .ok_or_else(|| {
            config(format!(
                "poll_interval_s = {poll_s} must be at least 0.1 (seconds between squeue calls)"
            ))
        })?;
    let prefix = settings.job_name_prefix.as_deref().unwrap_or("autolb");
    crate::curve::validate_component_name(prefix).map_err(|_| {
        config(format!(
            "job_name_prefix = {prefix:?}: use only letters, digits, '_' and '-'"
        ))
    })?;
    let autolb = match &settings.autolb {
        Some(p) if p.is_relative() => campaign_dir.join(p),
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| ExecutorError::Io {
            what: "finding the autolb binary for {autolb}".into(),
            source: e,
        })?,
    };
    let name_prefix = format!("{prefix}-{}", campaign_hash(&campaign_dir));

    Ok(Validated {
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
    })
}
