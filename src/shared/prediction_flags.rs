//! The prediction's inputs as flags, shared by `autolb predict` and `autolb tui`, and their
//! merge with a campaign file (`--config`): a flag wins over the file.
//!
//! With `--curve` or `--component` flags, the components are exactly those (the curves first,
//! each kind in flag order); allowed lists, limits and timing names from the file still apply
//! to components of the same name. A `--component` has no curve: the calibrated model learns
//! its coupled-mode curve from the `--measured` runs.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;

use std::collections::BTreeMap;

use autolb::campaign::measured::load_measured;
use autolb::config::{self, CampaignFile};
use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::machine::{CostKind, CostModel, Machine, Placement};
use autolb::model::decomposition::layouts_of;
use autolb::model::measured::Naming;
use autolb::model::steps::{StepProfile, Steps};
use autolb::model::{FitOptions, MeasuredRun, Model};
use autolb::predict::{ComponentInput, Settings};

use super::error::user;
use super::parse::{parse_key_value, parse_pes, reject_repeated_names};

/// The prediction's inputs and settings, shared by `autolb predict` and `autolb tui`.
#[derive(Debug, Default, Clone, Args)]
pub struct PredictionFlags {
    /// A component's scalability curve, `NAME=PATH` (CSV `nproc,SYPD` or JSON); repeat for
    /// each component, in component order.
    #[arg(long = "curve", value_name = "NAME=PATH", value_parser = parse_key_value)]
    pub curves: Vec<(String, String)>,
    /// A component without a curve, `NAME` or `NAME=MIN-MAX` (its PE range, which a prediction
    /// needs unless --allowed or the --config file gives it): the calibrated model learns its
    /// coupled-mode curve from the --measured runs alone. Repeat for each; they come after the
    /// --curve components.
    #[arg(long = "component", value_name = "NAME[=MIN-MAX]", value_parser = parse_component)]
    pub components: Vec<(String, Option<(u32, u32)>)>,
    /// Budget: the most PEs the balanced components may use together.
    #[arg(long, value_name = "N")]
    pub max_nproc: Option<u32>,
    /// Distance between candidate PE counts [default: 1].
    #[arg(long, value_name = "S")]
    pub step: Option<u32>,
    /// Weight of speed against cost in fittingness, 0..1 [default: 0.5].
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub tts_w: Option<f64>,
    /// How many configurations to propose [default: 5].
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// Interpolation between measured points: linear, quadratic (scipy interp1d) or pchip
    /// (monotone) [default: pchip].
    #[arg(long, value_name = "METHOD")]
    pub interp: Option<Method>,
    /// PE counts a component can run on, `NAME=FILE` or `NAME=48,96,144`.
    #[arg(long = "allowed", value_name = "NAME=PATH_OR_LIST", value_parser = parse_key_value)]
    pub allowed: Vec<(String, String)>,
    /// Threads per MPI rank a hybrid component may take, `NAME=1,2,4` (its curve carries a
    /// `threads` column) [default: every thread count its curve measures].
    #[arg(long = "threads", value_name = "NAME=LIST", value_parser = parse_key_value)]
    pub threads: Vec<(String, String)>,
    /// PEs that count in CHSY but are not balanced (XIOS, runoff mapper) [default: 0].
    #[arg(long, value_name = "E")]
    pub extra_pes: Option<u32>,
    /// Cores of one node: configurations are billed in whole nodes (overrides `[machine]`).
    #[arg(long, value_name = "N")]
    pub cores_per_node: Option<u32>,
    /// Node placement: packed (the job's PEs share nodes), per-component (each component
    /// its own nodes) or groups (the best node packing of each node count) [default: packed].
    #[arg(long, value_name = "PLACEMENT")]
    pub placement: Option<Placement>,
    /// Whether the extra PEs may fill the components' idle cores, true or false [default: true].
    #[arg(long, value_name = "BOOL")]
    pub extras_share_node: Option<bool>,
    /// Average power of a busy node in watts, for --cost energy.
    #[arg(long, value_name = "W")]
    pub node_power_w: Option<f64>,
    /// The cost fittingness weighs: core-hours, node-hours or energy [default: core-hours].
    #[arg(long, value_name = "COST")]
    pub cost: Option<CostKind>,
    /// Keep only configurations that fit this `[[queue]]` of the campaign file.
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,
    /// Campaign file (TOML) with the settings and curves; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// A prediction's inputs, settings and bill, resolved and validated from the flags and the
/// campaign file (read once): what a command runs on.
#[derive(Debug, Clone)]
pub struct PredictionSetup {
    /// The `--config` file with the directory its paths are relative to.
    pub file: Option<(CampaignFile, PathBuf)>,
    pub inputs: Vec<ComponentInput>,
    pub settings: Settings,
    pub cost_model: CostModel,
}

impl PredictionFlags {
    /// Reads the campaign file once and merges it with the flags: the components, the
    /// settings and the cost model, every value checked.
    pub fn resolve(&self) -> Result<PredictionSetup> {
        let file = load_config(self)?;
        let (inputs, settings) = resolve_with(self, file.as_ref())?;
        let cost_model = cost_model_with(self, file.as_ref())?;
        Ok(PredictionSetup {
            file,
            inputs,
            settings,
            cost_model,
        })
    }
}

/// Merges the campaign file and the flags into prediction inputs.
pub fn resolve(args: &PredictionFlags) -> Result<(Vec<ComponentInput>, Settings)> {
    let file = load_config(args)?;
    resolve_with(args, file.as_ref())
}

/// [`resolve`] with the campaign file already read ([`load_config`]).
pub fn resolve_with(
    args: &PredictionFlags,
    file: Option<&(CampaignFile, PathBuf)>,
) -> Result<(Vec<ComponentInput>, Settings)> {
    reject_repeated_names("--allowed", &args.allowed)?;
    let mut settings = file.map(|(f, _)| f.settings()).unwrap_or_default();
    let from_file_budget = file.and_then(|(f, _)| f.max_nproc);
    settings.max_nproc = args.max_nproc.or(from_file_budget).ok_or_else(|| {
        user("no budget: pass --max-nproc N (or set max_nproc in the --config file)")
    })?;
    if let Some(v) = args.step {
        settings.step = v;
    }
    if let Some(v) = args.tts_w {
        settings.tts_w = v;
    }
    if let Some(v) = args.top {
        settings.top = v;
    }
    if let Some(v) = args.interp {
        settings.interp = v;
    }
    if let Some(v) = args.extra_pes {
        settings.extra_pes = v;
    }
    let inputs = resolve_components(args, file)?;
    // A prediction searches each component's range: one without a curve must say it.
    if let Some(c) = inputs.iter().find(|c| c.range().is_none()) {
        let name = c.name();
        return Err(user(format!(
            "{name} has no curve, so the search needs its PE range: write --component \
             {name}=MIN-MAX (e.g. {name}=48-1632), or give --allowed {name}=LIST, or min_nproc \
             and max_nproc in its [[component]] table"
        )));
    }
    Ok((inputs, settings))
}

/// The campaign file of `--config`, with the directory its paths are relative to.
pub fn load_config(args: &PredictionFlags) -> Result<Option<(CampaignFile, PathBuf)>> {
    match &args.config {
        Some(path) => Ok(Some((
            CampaignFile::load(path).map_err(user)?,
            base_dir(path),
        ))),
        None => Ok(None),
    }
}

/// The components (curves, allowed lists, limits) from `--curve`, `--allowed` and the file.
pub fn resolve_components(
    args: &PredictionFlags,
    file: Option<&(CampaignFile, PathBuf)>,
) -> Result<Vec<ComponentInput>> {
    reject_repeated_names("--curve", &args.curves)?;
    for (k, (name, _)) in args.components.iter().enumerate() {
        if args.components[..k].iter().any(|(n, _)| n == name) {
            return Err(user(format!(
                "--component {name} is given twice; give each component once"
            )));
        }
        if args.curves.iter().any(|(n, _)| n == name) {
            return Err(user(format!(
                "{name} is given both as --curve and as --component; a --component has no \
                 curve: give one of them"
            )));
        }
    }
    let file_inputs = match file {
        Some((f, dir)) => f.component_inputs(dir).map_err(user)?,
        None => Vec::new(),
    };
    let from_file = |input: &mut ComponentInput| {
        if let Some(f) = file_inputs.iter().find(|c| c.name() == input.name()) {
            input.allowed = f.allowed.clone();
            input.min_nproc = f.min_nproc;
            input.max_nproc = f.max_nproc;
        }
    };
    let mut inputs: Vec<ComponentInput> = if args.curves.is_empty() && args.components.is_empty() {
        file_inputs.clone()
    } else {
        let mut inputs = args
            .curves
            .iter()
            .map(|(name, path)| {
                let series = Curve::load_series(name.clone(), Path::new(path)).map_err(user)?;
                let from_file_threads = file
                    .and_then(|(f, _)| f.components.iter().find(|c| &c.name == name))
                    .and_then(|c| c.threads.as_deref());
                let mut input = ComponentInput::threaded(series, from_file_threads)
                    .map_err(|why| user(format!("{path}: {why}")))?;
                from_file(&mut input);
                Ok(input)
            })
            .collect::<Result<Vec<_>>>()?;
        for (name, range) in &args.components {
            let mut input = ComponentInput {
                name: name.clone(),
                curve: None,
                allowed: None,
                min_nproc: None,
                max_nproc: None,
                thread_curves: Vec::new(),
            };
            from_file(&mut input);
            if let Some((lo, hi)) = range {
                input.min_nproc = Some(*lo);
                input.max_nproc = Some(*hi);
            }
            inputs.push(input);
        }
        inputs
    };
    for (name, spec) in &args.allowed {
        let names: Vec<String> = inputs.iter().map(|c| c.name().to_string()).collect();
        let Some(input) = inputs.iter_mut().find(|c| c.name() == name) else {
            return Err(user(format!(
                "--allowed names {name:?}, which is not a component; use one of {}",
                names.join(", ")
            )));
        };
        input.allowed = Some(parse_allowed_spec(name, spec)?);
    }
    reject_repeated_names("--threads", &args.threads)?;
    for (name, spec) in &args.threads {
        let names: Vec<String> = inputs.iter().map(|c| c.name().to_string()).collect();
        let Some(input) = inputs.iter_mut().find(|c| c.name() == name) else {
            return Err(user(format!(
                "--threads names {name:?}, which is not a component; use one of {}",
                names.join(", ")
            )));
        };
        let list = parse_thread_list(name, spec)?;
        input
            .restrict_threads(&list)
            .map_err(|why| user(format!("--threads {name}={spec}: {why}")))?;
    }
    Ok(inputs)
}

/// Parses `--component NAME` or `NAME=MIN-MAX` (a PE range, `MIN <= MAX`, both positive).
fn parse_component(s: &str) -> Result<(String, Option<(u32, u32)>), String> {
    let Some((name, range)) = s.split_once('=') else {
        autolb::curve::validate_component_name(s)?;
        return Ok((s.to_string(), None));
    };
    autolb::curve::validate_component_name(name)?;
    let bad = || {
        format!("{name}={range}: expected a PE range MIN-MAX of positive whole numbers, e.g. {name}=48-1632")
    };
    let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
    let lo: u32 = lo.trim().parse().map_err(|_| bad())?;
    let hi: u32 = hi.trim().parse().map_err(|_| bad())?;
    if lo == 0 || lo > hi {
        return Err(bad());
    }
    Ok((name.to_string(), Some((lo, hi))))
}

/// `--threads NAME=1,2,4`: positive thread counts per rank, separated by commas.
fn parse_thread_list(name: &str, spec: &str) -> Result<Vec<u32>> {
    spec.split(',')
        .map(|t| match t.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(user(format!(
                "--threads {name}={spec}: {:?} is not a positive thread count; write e.g. \
                 --threads {name}=1,2,4",
                t.trim()
            ))),
        })
        .collect()
}

/// `--allowed` takes a file path or an inline comma-separated list.
fn parse_allowed_spec(name: &str, spec: &str) -> Result<Vec<u32>> {
    let path = Path::new(spec);
    if path.is_file() {
        return config::load_allowed(path).map_err(user);
    }
    let looks_like_list = spec
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
    if !looks_like_list {
        return Err(user(format!(
            "--allowed {name}={spec}: no such file, and not a list like 48,96,144"
        )));
    }
    config::parse_allowed(spec, &format!("--allowed {name}")).map_err(user)
}

fn base_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The machine, cost and queues from the campaign file and the flags (a flag wins). Machine
/// flags without a `[machine]` table describe one (`--cores-per-node` is then required).
///
/// With `[[resource]]` tables each component's resource comes from its `[[component]]` table,
/// by name, so `--curve` flags may list the components in another order.
pub fn resolve_cost_model(args: &PredictionFlags) -> Result<CostModel> {
    let file = load_config(args)?;
    cost_model_with(args, file.as_ref())
}

/// [`resolve_cost_model`] with the campaign file already read.
fn cost_model_with(
    args: &PredictionFlags,
    file: Option<&(CampaignFile, PathBuf)>,
) -> Result<CostModel> {
    let mut model = match (file, &args.config) {
        (Some((file, _)), Some(path)) => {
            let mut model = file.cost_model();
            if !args.curves.is_empty() || !args.components.is_empty() {
                let names: Vec<&str> = args
                    .curves
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .chain(args.components.iter().map(|(n, _)| n.as_str()))
                    .collect();
                model.component_resource = file
                    .component_resources(&names)
                    .map_err(|e| user(format!("{}: {e}", path.display())))?;
            }
            model
        }
        _ => CostModel::default(),
    };
    let machine_flags = args.cores_per_node.is_some()
        || args.placement.is_some()
        || args.extras_share_node.is_some()
        || args.node_power_w.is_some();
    if machine_flags {
        let mut machine = match (model.machine, args.cores_per_node) {
            (Some(m), _) => m,
            (None, Some(cores_per_node)) => Machine {
                cores_per_node,
                placement: Placement::default(),
                extras_share_node: true,
                node_power_w: None,
            },
            (None, None) => {
                return Err(user(
                    "--placement, --extras-share-node and --node-power-w describe a machine: add --cores-per-node N (or a [machine] table)",
                ))
            }
        };
        if let Some(v) = args.cores_per_node {
            machine.cores_per_node = v;
        }
        if let Some(v) = args.placement {
            machine.placement = v;
        }
        if let Some(v) = args.extras_share_node {
            machine.extras_share_node = v;
        }
        if let Some(v) = args.node_power_w {
            machine.node_power_w = Some(v);
        }
        model.machine = Some(machine);
    }
    if let Some(v) = args.cost {
        model.cost = v;
    }
    if let Some(v) = &args.queue {
        model.queue = Some(v.clone());
    }
    model.validate().map_err(user)?;
    Ok(model)
}

/// Where the performance model comes from: measured runs (`--measured`, repeatable) or a
/// fitted model file (`--model`); shared by `predict`, `tui` and `model`.
#[derive(Debug, Default, Clone, Args)]
pub struct ModelFlags {
    /// Measured coupled runs to calibrate the model on: a campaign directory, a directory of
    /// run directories named like 240IFS_144NEMO[_suffix], or one run directory (with --nproc
    /// when its files do not carry PE counts). Repeat for more: a path given twice is read
    /// once (with a note), a path inside another is refused.
    #[arg(long = "measured", value_name = "PATH")]
    pub measured: Vec<PathBuf>,
    /// A model written by `autolb model fit --out FILE`.
    #[arg(long = "model", value_name = "FILE", conflicts_with = "measured")]
    pub model: Option<PathBuf>,
    /// A component's name in the timing files, `NAME=NAME_IN_TIMING_FILES` (e.g. IFS=ATMIFS)
    /// [default: the campaign file's timing_name, else the name itself]. Once per component,
    /// and no two components with one timing name.
    #[arg(long = "timing-name", value_name = "NAME=TIMING_NAME", value_parser = parse_key_value)]
    pub timing_names: Vec<(String, String)>,
    /// PEs of a component for a single --measured run directory whose files do not say,
    /// `NAME=N`.
    #[arg(long = "nproc", value_name = "NAME=N", value_parser = parse_key_value)]
    pub nproc: Vec<(String, String)>,
    /// A component's per-coupling-step series (CSV `,Component,Waiting,Interpolation,Sending`),
    /// `NAME=PATH[@NPROC]` (PEs from the file name `..._ts_240.csv` when not given): the coupled
    /// time becomes the sum over steps of the slowest component's step time.
    #[arg(long = "steps", value_name = "NAME=PATH[@NPROC]", value_parser = parse_key_value)]
    pub steps: Vec<(String, String)>,
}

impl ModelFlags {
    /// True when a model other than the standalone one is asked for.
    pub fn wants_model(&self) -> bool {
        !self.measured.is_empty() || self.model.is_some() || !self.steps.is_empty()
    }

    /// Checks the model flags against the components and the campaign file, before anything
    /// is read: every name a component, no flag twice for one component, no two components
    /// with one timing name, each `--measured` path once. `period_s` is the command's own
    /// coupling period (`--period`), else the file's.
    pub fn request(
        &self,
        inputs: &[ComponentInput],
        file: Option<&(CampaignFile, PathBuf)>,
        period_s: Option<f64>,
    ) -> Result<ModelRequest> {
        // The calibrated model learns coupled speeds per PE count of one curve per component;
        // a hybrid component's speed depends on ranks and threads, which it does not model yet.
        if let Some(threaded) = inputs.iter().find(|c| c.is_threaded()) {
            return Err(user(format!(
                "{} is measured at more than 1 thread per rank, and the calibrated model \
                 (--measured, --model) covers pure-MPI components only; drop those flags, or \
                 pass --threads {}=1",
                threaded.name(),
                threaded.name()
            )));
        }
        let names = namings(self, inputs, file)?;
        reject_repeated_names("--nproc", &self.nproc)?;
        let mut nproc = BTreeMap::new();
        for (name, value) in &self.nproc {
            require_component("--nproc", name, inputs)?;
            nproc.insert(name.clone(), parse_pes("--nproc", name, value)?);
        }
        let mut steps = Vec::new();
        for (name, spec) in &self.steps {
            require_component("--steps", name, inputs)?;
            let (path, nproc) = match spec.rsplit_once('@') {
                Some((path, n)) => (path, Some(parse_pes("--steps", name, n)?)),
                None => (spec.as_str(), None),
            };
            steps.push(StepSpec {
                name: name.clone(),
                path: PathBuf::from(path),
                nproc,
            });
        }
        let (measured, notes) = distinct_measured(&self.measured)?;
        let source = match &self.model {
            Some(path) => ModelSource::Fitted(path.clone()),
            None => ModelSource::Measured {
                paths: measured,
                names,
                nproc,
                period_s: period_s.or_else(|| file.and_then(|(f, _)| f.period_s)),
            },
        };
        Ok(ModelRequest {
            source,
            steps,
            notes,
        })
    }
}

/// Refuses a flag that names something other than a component.
fn require_component(flag: &str, name: &str, inputs: &[ComponentInput]) -> Result<()> {
    if inputs.iter().any(|c| c.name() == name) {
        return Ok(());
    }
    Err(user(format!(
        "{flag} names {name:?}, which is not a component; use one of {}",
        inputs
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// The `--measured` paths, each once: a path given twice is read once (with a note); a path
/// inside another is refused, since whether the outer one's reading already holds its runs
/// depends on the layout.
fn distinct_measured(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>)> {
    // A path that does not resolve stays as given: reading it names the problem.
    let key = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut kept: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut notes = Vec::new();
    for path in paths {
        let canonical = key(path);
        if let Some((first, _)) = kept.iter().find(|(_, k)| *k == canonical) {
            notes.push(format!(
                "--measured {} is given twice (as {}); its runs are read once",
                path.display(),
                first.display()
            ));
            continue;
        }
        if let Some((outer, inner)) = kept.iter().find_map(|(p, k)| {
            if canonical.starts_with(k) {
                Some((p.as_path(), path.as_path()))
            } else if k.starts_with(&canonical) {
                Some((path.as_path(), p.as_path()))
            } else {
                None
            }
        }) {
            return Err(user(format!(
                "--measured {} is inside --measured {}; give one of them, so that no run counts twice",
                inner.display(),
                outer.display()
            )));
        }
        kept.push((path.clone(), canonical));
    }
    Ok((kept.into_iter().map(|(p, _)| p).collect(), notes))
}

/// One `--steps NAME=PATH[@NPROC]`, checked but not read yet.
#[derive(Debug, Clone)]
pub struct StepSpec {
    pub name: String,
    pub path: PathBuf,
    pub nproc: Option<u32>,
}

/// Where the model comes from, checked but not read yet.
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// A model written by `autolb model fit` (`--model FILE`).
    Fitted(PathBuf),
    /// Fitted here on measured runs (none: the standalone model, with `--steps` if given).
    Measured {
        paths: Vec<PathBuf>,
        names: Vec<Naming>,
        nproc: BTreeMap<String, u32>,
        period_s: Option<f64>,
    },
}

/// The model flags, validated: what [`ModelRequest::load`] reads and fits.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub source: ModelSource,
    pub steps: Vec<StepSpec>,
    /// What resolving changed (a `--measured` path given twice), for stderr.
    pub notes: Vec<String>,
}

impl ModelRequest {
    /// Reads the model file, or the measured runs and fits the model against the curves; the
    /// notes say which runs were left out.
    pub fn load(&self, inputs: &[ComponentInput], interp: Method) -> Result<ResolvedModel> {
        let steps = self.load_steps()?;
        match &self.source {
            ModelSource::Fitted(path) => Ok(ResolvedModel {
                model: load_fitted(path, inputs)?,
                steps,
                runs: Vec::new(),
                notes: Vec::new(),
            }),
            ModelSource::Measured {
                paths,
                names,
                nproc,
                period_s,
            } => {
                let (mut runs, mut notes) = (Vec::new(), Vec::new());
                for path in paths {
                    let (r, n) = load_measured(path, names, nproc, *period_s).map_err(user)?;
                    runs.extend(r);
                    notes.extend(n);
                }
                // NEMO's decompositions where the runs' ocean.output says them.
                let options = FitOptions {
                    layouts: layouts_of(&runs),
                    ..FitOptions::default()
                };
                let (model, fit_notes) =
                    Model::fit_with_options(inputs, interp, &runs, &steps, &options);
                notes.extend(fit_notes);
                Ok(ResolvedModel {
                    model,
                    steps,
                    runs,
                    notes,
                })
            }
        }
    }

    fn load_steps(&self) -> Result<Steps> {
        let profiles = self
            .steps
            .iter()
            .map(|s| StepProfile::load(&s.name, &s.path, s.nproc).map_err(user))
            .collect::<Result<_>>()?;
        Ok(Steps { profiles })
    }
}

/// A `--model FILE`, refused when it knows nothing of one of the components.
fn load_fitted(path: &Path, inputs: &[ComponentInput]) -> Result<Model> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| user(format!("--model {}: {e}", path.display())))?;
    let model =
        Model::from_json(&text).map_err(|e| user(format!("--model {}: {e}", path.display())))?;
    let known = model.component_names();
    if let Some(c) = inputs
        .iter()
        .find(|c| model.is_calibrated() && !known.iter().any(|k| k == c.name()))
    {
        return Err(user(format!(
            "--model {} was fitted on {}; it knows nothing of {}: refit it with that curve",
            path.display(),
            known.join(", "),
            c.name()
        )));
    }
    // A learned component's ratio is relative to its learned law, not to a curve.
    for c in inputs.iter().filter(|_| model.is_calibrated()) {
        let name = c.name();
        match (&c.curve, model.learned_curve(name)) {
            (Some(_), true) => {
                return Err(user(format!(
                    "--model {} learned {name} without a curve; use it with --component \
                     {name}, or refit it with --curve {name}=PATH",
                    path.display()
                )))
            }
            (None, false) => {
                return Err(user(format!(
                    "--model {} was fitted with {name}'s curve; give --curve {name}=PATH, or \
                     refit it with --component {name}",
                    path.display()
                )))
            }
            _ => {}
        }
    }
    Ok(model)
}

/// The model the flags ask for, the runs it was fitted on and the notes on runs left out.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub model: Model,
    /// Per-step series from `--steps` (empty without).
    pub steps: Steps,
    pub runs: Vec<MeasuredRun>,
    pub notes: Vec<String>,
}

/// The balanced components' names in timing files: `--timing-name`, else the campaign file,
/// else the name itself. A component given twice, or two components given one timing name,
/// is refused.
pub fn namings(
    flags: &ModelFlags,
    inputs: &[ComponentInput],
    file: Option<&(CampaignFile, PathBuf)>,
) -> Result<Vec<Naming>> {
    reject_repeated_names("--timing-name", &flags.timing_names)?;
    for (name, _) in &flags.timing_names {
        require_component("--timing-name", name, inputs)?;
    }
    let names: Vec<Naming> = inputs
        .iter()
        .map(|c| {
            let timing = flags
                .timing_names
                .iter()
                .find(|(n, _)| n == c.name())
                .map(|(_, t)| t.clone())
                .or_else(|| {
                    file.and_then(|(f, _)| {
                        f.components
                            .iter()
                            .find(|e| e.name == c.name())
                            .map(|e| e.timing_name().to_string())
                    })
                })
                .unwrap_or_else(|| c.name().to_string());
            Naming::new(c.name(), timing)
        })
        .collect();
    let pairs: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.name.as_str(), n.timing_name.as_str()))
        .collect();
    if let Some((first, second, timing)) = config::shared_timing_name(&pairs) {
        return Err(user(format!(
            "--timing-name: {first} and {second} both have the timing name {timing:?}; give each \
             component its own (e.g. IFS=ATMIFS NEMO=oceanx)"
        )));
    }
    Ok(names)
}

/// Reads every `--measured` path (or `--model`) and fits the model against the curves: the
/// flags checked ([`ModelFlags::request`]), then read ([`ModelRequest::load`]).
pub fn resolve_model(
    flags: &ModelFlags,
    inputs: &[ComponentInput],
    file: Option<&(CampaignFile, PathBuf)>,
    interp: Method,
    period_s: Option<f64>,
) -> Result<ResolvedModel> {
    let request = flags.request(inputs, file, period_s)?;
    let mut resolved = request.load(inputs, interp)?;
    resolved.notes.splice(0..0, request.notes);
    Ok(resolved)
}
