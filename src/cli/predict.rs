//! `autolb predict`: the prediction as a table or one JSON object.
//!
//! Settings come from `--config FILE` (the campaign file) and flags; a flag wins over the file
//! (see [`crate::shared::prediction_flags`]).

use clap::Args;
use color_eyre::eyre::Result;
use serde_json::{json, Map, Value};

use autolb::predict::{self, Config, Prediction};

use super::front;
use crate::shared::error::user;
use crate::shared::prediction_flags::{resolve, PredictionFlags};

#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub prediction: PredictionFlags,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print the speed/cost front of the kept configurations and the TTS_w interval in which
    /// each configuration is the top-1, instead of the top N.
    #[arg(long)]
    pub front: bool,
    /// With --front: print CSV (one row per configuration) for reports and plotting tools.
    #[arg(long, requires = "front", conflicts_with = "json")]
    pub csv: bool,
}

pub fn run(args: &PredictArgs) -> Result<()> {
    let (inputs, settings) = resolve(&args.prediction)?;
    if args.front {
        let problem = predict::Problem::new(&inputs, &settings).map_err(user)?;
        let trade_off = front::TradeOff::of(&problem);
        let text = if args.json {
            serde_json::to_string_pretty(&front::json(&trade_off)).map_err(user)? + "\n"
        } else if args.csv {
            front::csv(&trade_off)
        } else {
            front::table(&trade_off)
        };
        return front::emit(&text);
    }
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
