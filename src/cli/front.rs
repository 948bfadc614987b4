//! `autolb predict --front`: the speed/cost front and the TTS_w intervals as a table, one JSON
//! object or one CSV.
//!
//! The CSV has one row per configuration that is on the front or wins some TTS_w (a winner off
//! the front only happens at TTS_w 0, see [`autolb::predict::front`]), in ascending SYPD, so a
//! report or a plotting tool reads one file for both the curve and the intervals.

use std::fmt::Write as _;
use std::io::Write as _;

use color_eyre::eyre::Result;

use serde_json::{json, Map, Value};

use autolb::predict::front::Winner;
use autolb::predict::{Config, Problem};

use super::predict::config_json;

/// The front and the winners of `problem`, computed once.
pub struct TradeOff {
    pub names: Vec<String>,
    pub front: Vec<Config>,
    pub winners: Vec<Winner>,
}

impl TradeOff {
    pub fn of(problem: &Problem) -> TradeOff {
        let (front, winners) = problem.trade_off(problem.settings.tts_w);
        TradeOff {
            names: problem.names(),
            front,
            winners,
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

/// PEs keyed by component name, in component order.
fn nproc_json(names: &[String], config: &Config) -> Value {
    Value::Object(
        names
            .iter()
            .zip(&config.nproc)
            .map(|(n, &p)| (n.clone(), json!(p)))
            .collect::<Map<String, Value>>(),
    )
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
            json!({
                "tts_w_from": w.tts_w_from,
                "tts_w_to": w.tts_w_to,
                "nproc": nproc_json(&t.names, &w.config),
                "total_nproc": w.config.total_nproc,
                "sypd": w.config.sypd,
                "chsy": w.config.chsy,
                "coupling_cost": w.config.coupling_cost,
            })
        })
        .collect();
    json!({ "components": t.names, "front": front, "winners": winners })
}

/// One row per configuration; `tts_w_from`/`tts_w_to` are empty for a front point that wins no
/// TTS_w, `on_front` is 0 for a winner off the front.
pub fn csv(t: &TradeOff) -> String {
    let mut out = String::new();
    for n in &t.names {
        let _ = write!(out, "{},", csv_field(n));
    }
    out.push_str("total_nproc,sypd,chsy,coupling_cost,on_front,tts_w_from,tts_w_to\n");
    for c in t.rows() {
        for p in &c.nproc {
            let _ = write!(out, "{p},");
        }
        let on_front = t.front.iter().any(|f| f.nproc == c.nproc);
        let (from, to) = match t.interval_of(c) {
            Some((_, w)) => (w.tts_w_from.to_string(), w.tts_w_to.to_string()),
            None => (String::new(), String::new()),
        };
        let _ = writeln!(
            out,
            "{},{},{},{},{},{from},{to}",
            c.total_nproc,
            c.sypd,
            c.chsy,
            c.coupling_cost,
            u8::from(on_front)
        );
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
    let _ = writeln!(
        out,
        "Speed/cost front ({} configurations, ascending SYPD)",
        t.front.len()
    );
    let _ = writeln!(
        out,
        "{header}{:>7} {:>8} {:>9} {:>9}  {:>15}",
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
        let row = format!(
            "{line}{:>7} {:>8.2} {:>9.0} {:>8.1}%  {wins}{off}",
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
