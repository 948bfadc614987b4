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

use color_eyre::eyre::Result;

use autolb::machine::CostKind;
use autolb::predict::front::Winner;
use autolb::predict::{Problem, Scored};

use super::json::{ConfigJson, FrontJson, WinnerJson};
use crate::shared::error::user;

/// The front and the winners of `problem`, computed once.
pub struct TradeOff {
    pub names: Vec<String>,
    pub front: Vec<Scored>,
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
    fn interval_of(&self, config: &Scored) -> Option<(bool, &Winner)> {
        self.winners
            .iter()
            .enumerate()
            .find(|(_, w)| same(&w.config, config))
            .map(|(k, w)| (k == 0, w))
    }

    /// The front and the winners, in ascending SYPD, each configuration once.
    fn rows(&self) -> Vec<&Scored> {
        let mut rows: Vec<&Scored> = self.front.iter().collect();
        for w in &self.winners {
            if !rows.iter().any(|c| same(c, &w.config)) {
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

    /// Whether a shown configuration runs more than one thread per rank anywhere: the
    /// outputs then give ranks and threads beside the cores.
    fn threaded(&self) -> bool {
        self.rows().iter().any(|c| c.is_threaded())
    }
}

/// The same configuration: the same cores and threads per component.
fn same(a: &Scored, b: &Scored) -> bool {
    a.nproc == b.nproc && a.threads == b.threads
}

impl TradeOff {
    /// `{"components": [...], "front": [...], "winners": [...]}` (its shape is a contract for
    /// scripts), with `cost` when a machine or queues bill the configurations.
    pub fn json(&self) -> FrontJson<'_> {
        FrontJson {
            components: &self.names,
            front: self
                .front
                .iter()
                .map(|c| ConfigJson::unranked(&self.names, c))
                .collect(),
            winners: self
                .winners
                .iter()
                .map(|w| WinnerJson {
                    tts_w_from: w.tts_w_from,
                    tts_w_to: w.tts_w_to,
                    config: ConfigJson::unranked(&self.names, &w.config),
                })
                .collect(),
            cost: self.cost.map(CostKind::label),
        }
    }

    /// One row per configuration; `tts_w_from`/`tts_w_to` are empty for a front point that
    /// wins no TTS_w, `on_front` is 0 for a winner off the front.
    pub fn csv(&self) -> Result<String> {
        let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
        let mut header: Vec<String> = self.names.clone();
        let threaded = self.threaded();
        if threaded {
            for n in &self.names {
                header.push(format!("{n}_ranks"));
                header.push(format!("{n}_threads"));
            }
        }
        header.extend(
            [
                "total_nproc",
                "sypd",
                "chsy",
                "coupling_cost",
                "on_front",
                "tts_w_from",
                "tts_w_to",
            ]
            .map(String::from),
        );
        if self.cost.is_some() {
            header
                .extend(["nodes", "billed_cores", "idle_cores", "cost", "queue"].map(String::from));
        }
        w.write_record(&header).map_err(user)?;
        for c in self.rows() {
            let mut row: Vec<String> = c.nproc.iter().map(u32::to_string).collect();
            if threaded {
                for (r, t) in c.ranks().iter().zip(&c.threads) {
                    row.push(r.to_string());
                    row.push(t.to_string());
                }
            }
            let on_front = self.front.iter().any(|f| same(f, c));
            let (from, to) = match self.interval_of(c) {
                Some((_, w)) => (w.tts_w_from.to_string(), w.tts_w_to.to_string()),
                None => (String::new(), String::new()),
            };
            row.extend([
                c.total_nproc.to_string(),
                c.sypd.to_string(),
                c.chsy.to_string(),
                c.coupling_cost.to_string(),
                u8::from(on_front).to_string(),
                from,
                to,
            ]);
            if self.cost.is_some() {
                match &c.billing {
                    Some(b) => row.extend([
                        b.nodes.to_string(),
                        b.billed_cores.to_string(),
                        b.idle_cores.to_string(),
                        b.cost.to_string(),
                        b.queue.clone().unwrap_or_default(),
                    ]),
                    None => row.extend(std::iter::repeat_n(String::new(), 5)),
                }
            }
            w.write_record(&row).map_err(user)?;
        }
        let bytes = w.into_inner().map_err(|e| user(e.error()))?;
        String::from_utf8(bytes).map_err(user)
    }
}

/// The human-readable form: the front, then who wins which TTS_w.
pub fn table(t: &TradeOff) -> String {
    let mut out = String::new();
    // With a hybrid component each cell is `ranks x threads = cores`.
    let threaded = t.threaded();
    let width = if threaded { 13 } else { 8 };
    let mut header = String::new();
    for n in &t.names {
        let _ = write!(header, "{n:>width$} ");
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
        for (k, p) in c.nproc.iter().enumerate() {
            if threaded {
                let th = c.threads.get(k).copied().unwrap_or(1);
                let cell = format!("{}x{th}={p}", p / th.max(1));
                let _ = write!(line, "{cell:>width$} ");
            } else {
                let _ = write!(line, "{p:>8} ");
            }
        }
        let wins = t
            .interval_of(c)
            .map(|(first, w)| interval_text(first, w))
            .unwrap_or_default();
        let off = if t.front.iter().any(|f| same(f, c)) {
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
    if threaded {
        let _ = writeln!(
            out,
            "each component: MPI ranks x OpenMP threads per rank = cores; total and CHSY count cores"
        );
    }
    out
}

/// `[0.0000, 0.3127]` for the first interval, `(0.3127, 0.5521]` for the others.
fn interval_text(first: bool, w: &Winner) -> String {
    let open = if first { '[' } else { '(' };
    format!("{open}{:.4}, {:.4}]", w.tts_w_from, w.tts_w_to)
}
