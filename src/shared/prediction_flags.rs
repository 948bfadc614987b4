//! The prediction's inputs as flags, shared by `autolb predict` and `autolb tui`, and their
//! merge with a campaign file (`--config`): a flag wins over the file.
//!
//! With `--curve` flags, the components are exactly those curves, in flag order; allowed lists
//! and limits from the file still apply to components of the same name.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;

use autolb::config::{self, CampaignFile};
use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::machine::{CostKind, CostModel, Machine, Placement};
use autolb::predict::{ComponentInput, Settings};

use super::error::user;
use super::parse::parse_key_value;

/// The prediction's inputs and settings, shared by `autolb predict` and `autolb tui`.
#[derive(Debug, Default, Clone, Args)]
pub struct PredictionFlags {
    /// A component's scalability curve, `NAME=PATH` (CSV `nproc,SYPD` or JSON); repeat for
    /// each component, in component order.
    #[arg(long = "curve", value_name = "NAME=PATH", value_parser = parse_key_value)]
    pub curves: Vec<(String, String)>,
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
    /// PEs that count in CHSY but are not balanced (XIOS, runoff mapper) [default: 0].
    #[arg(long, value_name = "E")]
    pub extra_pes: Option<u32>,
    /// Cores of one node: configurations are billed in whole nodes (overrides `[machine]`).
    #[arg(long, value_name = "N")]
    pub cores_per_node: Option<u32>,
    /// Node placement: packed (the job's PEs share nodes) or per-component (each component
    /// its own nodes) [default: packed].
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

/// Merges the campaign file and the flags into prediction inputs.
pub fn resolve(args: &PredictionFlags) -> Result<(Vec<ComponentInput>, Settings)> {
    let file = match &args.config {
        Some(path) => Some((CampaignFile::load(path).map_err(user)?, base_dir(path))),
        None => None,
    };
    let mut settings = file.as_ref().map(|(f, _)| f.settings()).unwrap_or_default();
    let from_file_budget = file.as_ref().and_then(|(f, _)| f.max_nproc);
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

    let file_inputs = match &file {
        Some((f, dir)) => f.component_inputs(dir).map_err(user)?,
        None => Vec::new(),
    };
    let mut inputs: Vec<ComponentInput> = if args.curves.is_empty() {
        file_inputs.clone()
    } else {
        args.curves
            .iter()
            .map(|(name, path)| {
                let curve = Curve::load(name.clone(), Path::new(path)).map_err(user)?;
                let mut input = ComponentInput::new(curve);
                if let Some(from_file) = file_inputs.iter().find(|c| c.name() == name) {
                    input.allowed = from_file.allowed.clone();
                    input.min_nproc = from_file.min_nproc;
                    input.max_nproc = from_file.max_nproc;
                }
                Ok(input)
            })
            .collect::<Result<_>>()?
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
    Ok((inputs, settings))
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
pub fn resolve_cost_model(args: &PredictionFlags) -> Result<CostModel> {
    let mut model = match &args.config {
        Some(path) => CampaignFile::load(path).map_err(user)?.cost_model(),
        None => CostModel::default(),
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
