//! `autolb predict`: the prediction as a table or one JSON object.
//!
//! Settings come from `--config FILE` (the campaign file) and flags; a flag wins over the file.
//! With `--curve` flags, the components are exactly those curves, in flag order; allowed lists
//! and limits from the file still apply to components of the same name.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;
use serde_json::{json, Map, Value};

use autolb::config::{self, CampaignFile};
use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::predict::{self, ComponentInput, Config, Prediction, Settings};

use super::{parse_key_value, user};

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
    /// Campaign file (TOML) with the settings and curves; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub prediction: PredictionFlags,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &PredictArgs) -> Result<()> {
    let (inputs, settings) = resolve(&args.prediction)?;
    let prediction = predict::predict(&inputs, &settings).map_err(user)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&prediction_json(&prediction)).map_err(user)?
        );
    } else {
        print!("{}", table(&prediction));
    }
    Ok(())
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

/// One configuration as JSON, PEs keyed by component name in component order.
pub fn config_json(names: &[String], config: &Config) -> Map<String, Value> {
    let nproc: Map<String, Value> = names
        .iter()
        .zip(&config.nproc)
        .map(|(n, &p)| (n.clone(), json!(p)))
        .collect();
    let mut map = Map::new();
    map.insert("nproc".into(), Value::Object(nproc));
    map.insert("total_nproc".into(), json!(config.total_nproc));
    map.insert("sypd".into(), json!(config.sypd));
    map.insert("chsy".into(), json!(config.chsy));
    map.insert("coupling_cost".into(), json!(config.coupling_cost));
    map.insert("fittingness".into(), json!(config.fittingness));
    map
}

/// The `--json` object (its shape is a contract for scripts).
pub fn prediction_json(p: &Prediction) -> Value {
    let top: Vec<Value> = p
        .top
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut m = Map::new();
            m.insert("rank".into(), json!(i + 1));
            m.extend(config_json(&p.components, c));
            Value::Object(m)
        })
        .collect();
    json!({
        "components": p.components,
        "candidates": p.candidates,
        "considered": p.considered,
        "baseline": Value::Object(config_json(&p.components, &p.baseline)),
        "top": top,
    })
}

/// The human-readable table.
pub fn table(p: &Prediction) -> String {
    let mut out = String::new();
    let names = &p.components;
    let mut header = format!("{:>4}", "rank");
    for n in names {
        header.push_str(&format!(" {:>8}", n));
    }
    header.push_str(&format!(
        " {:>7} {:>8} {:>9} {:>9} {:>7}",
        "total", "SYPD", "CHSY", "cpl cost", "FN"
    ));
    out.push_str(&header);
    out.push('\n');
    let row = |label: String, c: &Config| {
        let mut line = format!("{label:>4}");
        for n in &c.nproc {
            line.push_str(&format!(" {n:>8}"));
        }
        line.push_str(&format!(
            " {:>7} {:>8.2} {:>9.0} {:>8.1}% {:>7.4}\n",
            c.total_nproc,
            c.sypd,
            c.chsy,
            c.coupling_cost * 100.0,
            c.fittingness
        ));
        line
    };
    for (i, c) in p.top.iter().enumerate() {
        out.push_str(&row((i + 1).to_string(), c));
    }
    out.push_str(&row("base".into(), &p.baseline));
    out.push_str(&format!(
        "{} feasible configurations, {} at least as good as the base case; TTS_w {:.2}\n",
        p.candidates, p.considered, p.tts_w
    ));
    out
}
