//! `autolb predict`: the prediction as a table or one JSON object.
//!
//! Settings come from `--config FILE` (the campaign file) and flags; a flag wins over the file
//! (see [`crate::shared::prediction_flags`]).

use clap::Args;
use color_eyre::eyre::Result;
use serde_json::{json, Map, Value};

use autolb::machine::{CostModel, Placement};
use autolb::predict::{self, Config, Prediction};

use crate::shared::error::user;
use crate::shared::prediction_flags::{resolve, resolve_cost_model, PredictionFlags};

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
    let model = resolve_cost_model(&args.prediction)?;
    let prediction = predict::predict_billed(&inputs, &settings, &model).map_err(user)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&prediction_json(&prediction)).map_err(user)?
        );
    } else {
        print!("{}", table(&prediction));
        if let Some(line) = billing_note(&model) {
            println!("{line}");
        }
    }
    Ok(())
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
    if let Some(b) = &config.billing {
        map.insert("nodes".into(), json!(b.nodes));
        map.insert("billed_cores".into(), json!(b.billed_cores));
        map.insert("idle_cores".into(), json!(b.idle_cores));
        map.insert("cost".into(), json!(b.cost));
        map.insert("queue".into(), json!(b.queue));
    }
    map
}

/// What the billing columns mean, under the table (nothing for the plain model).
fn billing_note(model: &CostModel) -> Option<String> {
    if model.is_plain() {
        return None;
    }
    let machine = match &model.machine {
        Some(m) => format!(
            "{} cores per node, {} placement, extras {}",
            m.cores_per_node,
            match m.placement {
                Placement::Packed => "packed",
                Placement::PerComponent => "per-component",
            },
            if m.extras_share_node {
                "share nodes"
            } else {
                "on their own nodes"
            }
        ),
        None => "no machine: cores = used PEs".to_string(),
    };
    let queue = match &model.queue {
        Some(q) => format!("only configurations that fit queue {q}"),
        None => "queue: the smallest queue each configuration fits (- for none)".to_string(),
    };
    Some(format!(
        "cost: {} ({}); {machine}; {queue}",
        model.cost.label(),
        model.cost.header()
    ))
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
    let billed = p.cost.map(|k| k.header());
    if let Some(cost) = billed {
        header.push_str(&format!(
            " {:>5} {:>6} {:>5} {:>9} {:<8}",
            "nodes", "billed", "idle", cost, "queue"
        ));
    }
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
        if let Some(b) = &c.billing {
            line.pop();
            line.push_str(&format!(
                " {:>5} {:>6} {:>5} {:>9.1} {:<8}",
                b.nodes,
                b.billed_cores,
                b.idle_cores,
                b.cost,
                b.queue.as_deref().unwrap_or("-")
            ));
            let trimmed = line.trim_end().len();
            line.truncate(trimmed);
            line.push('\n');
        }
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
