//! `autolb predict --front`: the speed/cost front and the TTS_w intervals as a table, one JSON
//! object or one CSV.
//!
//! The CSV has one row per configuration that is on the front or wins some TTS_w (a winner off
//! the front only happens at TTS_w 0, see [`autolb::predict::front`]), in ascending SYPD, so a
//! report or a plotting tool reads one file for both the curve and the intervals.
//!
//! With `--measured`/`--model` the calibrated model's speeds make the front; with a machine
//! (`[machine]`, `--cores-per-node`, `--cost`, queues) the cost axis is the bill FN weighs, and
//! each configuration also carries its nodes, billed and idle cores, cost and queue (the JSON's
//! `nodes`, `billed_cores`, `idle_cores`, `cost`, `queue`; the same as trailing CSV columns).

use std::fmt::Write as _;
use std::io::Write as _;

use color_eyre::eyre::Result;

use serde_json::{json, Map, Value};

use autolb::machine::{CostKind, CostModel};
use autolb::model::Model;
use autolb::predict::front::Winner;
use autolb::predict::{ComponentInput, Config, Problem, Settings};

use super::config_json;
use crate::shared::error::user;
use crate::shared::prediction_flags::{load_config, resolve_model, ModelFlags, PredictionFlags};

/// The problem whose front `predict --front` prints: the calibrated model's speeds when
/// `--measured`/`--model` ask for them, billed by `cost_model`. `--steps` is refused: its
/// coupled speed is not the slowest component's, which the exact front relies on.
pub fn problem(
    prediction: &PredictionFlags,
    flags: &ModelFlags,
    inputs: &[ComponentInput],
    settings: &Settings,
    cost_model: &CostModel,
) -> Result<Problem> {
    if !flags.steps.is_empty() {
        return Err(user(
            "--front cannot use --steps (per-step series make the coupled speed other than the \
             slowest component's); drop --steps, or use `autolb predict --steps` for the top N",
        ));
    }
    let model = if flags.wants_model() {
        let file = load_config(prediction)?;
        let resolved = resolve_model(flags, inputs, file.as_ref(), settings.interp, None)?;
        for n in &resolved.notes {
            eprintln!("autolb: note: {n}");
        }
        resolved.model
    } else {
        Model::Standalone
    };
    if flags.wants_model() && !model.is_calibrated() {
        eprintln!("autolb: note: no usable measured run; the front is the standalone model's");
    }
    Problem::billed_with_model(inputs, settings, &model, cost_model).map_err(user)
}

/// The front and the winners of `problem`, computed once.
pub struct TradeOff {
    pub names: Vec<String>,
    pub front: Vec<Config>,
    pub winners: Vec<Winner>,
    /// The cost on the cost axis when a machine or queues are described (`None`: CHSY only).
    pub cost: Option<CostKind>,
}

impl TradeOff {
    pub fn of(problem: &Problem) -> TradeOff {
        let (front, winners) = problem.trade_off(problem.settings.tts_w);
        TradeOff {
            names: problem.names(),
            front,
            winners,
            cost: (!problem.cost_model.is_plain()).then_some(problem.cost_model.cost),
        }
    }

    /// The interval in which `config` is the top-1, if it is one, with whether it is the first
    /// (closed at 0) interval.
    fn interval_of(&self, config: &Config) -> Option<(bool, &Winner)> {
        self.winners
            .iter()
            .enumerate()
            .find(|(_, w)| w.config.nproc == config.nproc)
            .map(|(k, w)| (k == 0, w))
    }

    /// The front and the winners, in ascending SYPD, each configuration once.
    fn rows(&self) -> Vec<&Config> {
        let mut rows: Vec<&Config> = self.front.iter().collect();
        for w in &self.winners {
            if !rows.iter().any(|c| c.nproc == w.config.nproc) {
                rows.push(&w.config);
            }
        }
        rows.sort_by(|a, b| {
            a.sypd
                .total_cmp(&b.sypd)
                .then(a.total_nproc.cmp(&b.total_nproc))
        });
        rows
    }
}

/// `{"front": [...], "winners": [...]}` (its shape is a contract for scripts).
pub fn json(t: &TradeOff) -> Value {
    let front: Vec<Value> = t
        .front
        .iter()
        .map(|c| {
            let mut m = config_json(&t.names, c);
            m.remove("fittingness");
            Value::Object(m)
        })
        .collect();
    let winners: Vec<Value> = t
        .winners
        .iter()
        .map(|w| {
            let mut m = config_json(&t.names, &w.config);
            m.remove("fittingness");
            let mut out = Map::new();
            out.insert("tts_w_from".into(), json!(w.tts_w_from));
            out.insert("tts_w_to".into(), json!(w.tts_w_to));
            out.extend(m);
            Value::Object(out)
        })
        .collect();
    let mut out = json!({ "components": t.names, "front": front, "winners": winners });
    if let (Some(k), Some(m)) = (t.cost, out.as_object_mut()) {
        m.insert("cost".into(), json!(k.label()));
    }
    out
}

/// One row per configuration; `tts_w_from`/`tts_w_to` are empty for a front point that wins no
/// TTS_w, `on_front` is 0 for a winner off the front.
pub fn csv(t: &TradeOff) -> String {
    let mut out = String::new();
    for n in &t.names {
        let _ = write!(out, "{},", csv_field(n));
    }
    out.push_str("total_nproc,sypd,chsy,coupling_cost,on_front,tts_w_from,tts_w_to");
    if t.cost.is_some() {
        out.push_str(",nodes,billed_cores,idle_cores,cost,queue");
    }
    out.push('\n');
    for c in t.rows() {
        for p in &c.nproc {
            let _ = write!(out, "{p},");
        }
        let on_front = t.front.iter().any(|f| f.nproc == c.nproc);
        let (from, to) = match t.interval_of(c) {
            Some((_, w)) => (w.tts_w_from.to_string(), w.tts_w_to.to_string()),
            None => (String::new(), String::new()),
        };
        let _ = write!(
            out,
            "{},{},{},{},{},{from},{to}",
            c.total_nproc,
            c.sypd,
            c.chsy,
            c.coupling_cost,
            u8::from(on_front)
        );
        if t.cost.is_some() {
            match &c.billing {
                Some(b) => {
                    let queue = b.queue.as_deref().map(csv_field).unwrap_or_default();
                    let _ = write!(
                        out,
                        ",{},{},{},{},{queue}",
                        b.nodes, b.billed_cores, b.idle_cores, b.cost
                    );
                }
                None => out.push_str(",,,,,"),
            }
        }
        out.push('\n');
    }
    out
}

/// A component name as a CSV field (quoted when it holds a comma or a quote).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The human-readable form: the front, then who wins which TTS_w.
pub fn table(t: &TradeOff) -> String {
    let mut out = String::new();
    let mut header = String::new();
    for n in &t.names {
        let _ = write!(header, "{n:>8} ");
    }
    let by = match t.cost {
        Some(k) => format!("; cost {} ({})", k.label(), k.header()),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "Speed/cost front ({} configurations, ascending SYPD{by})",
        t.front.len()
    );
    let billed_header = match t.cost {
        Some(k) => format!(
            " {:>5} {:>5} {:>9} {:<8}",
            "nodes",
            "idle",
            k.header(),
            "queue"
        ),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{header}{:>7} {:>8} {:>9} {:>9}{billed_header}  {:>15}",
        "total", "SYPD", "CHSY", "cpl cost", "wins for TTS_w"
    );
    for c in t.rows() {
        let mut line = String::new();
        for p in &c.nproc {
            let _ = write!(line, "{p:>8} ");
        }
        let wins = t
            .interval_of(c)
            .map(|(first, w)| interval_text(first, w))
            .unwrap_or_default();
        let off = if t.front.iter().any(|f| f.nproc == c.nproc) {
            ""
        } else {
            " (off the front)"
        };
        let billed = match (&c.billing, t.cost) {
            (Some(b), Some(_)) => format!(
                " {:>5} {:>5} {:>9.1} {:<8}",
                b.nodes,
                b.idle_cores,
                b.cost,
                b.queue.as_deref().unwrap_or("-")
            ),
            _ => String::new(),
        };
        let row = format!(
            "{line}{:>7} {:>8.2} {:>9.0} {:>8.1}%{billed}  {wins}{off}",
            c.total_nproc,
            c.sypd,
            c.chsy,
            c.coupling_cost * 100.0
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
    let _ = writeln!(
        out,
        "{} configurations win some TTS_w; at a breakpoint the one with fewer PEs wins.",
        t.winners.len()
    );
    out
}

/// `[0.0000, 0.3127]` for the first interval, `(0.3127, 0.5521]` for the others.
fn interval_text(first: bool, w: &Winner) -> String {
    let open = if first { '[' } else { '(' };
    format!("{open}{:.4}, {:.4}]", w.tts_w_from, w.tts_w_to)
}

/// Writes `text` to stdout; a reader that stops early (`| head`) is not an error.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
