//! `autolb predict --config FILE` when the file gives `layout`: the placements the layout tree
//! allows within the budget, ranked by fittingness ([`TreePrediction`]), then the speed/cores
//! front, and `--emit cime`, the `./xmlchange` lines that set the best-ranked one in a CIME
//! case.
//!
//! Each component's time is the wall time of one simulated year at its task and thread count,
//! read from its curve (86400 / SYPD); the tree combines them (the slowest part of `|`, the sum
//! of `;`), and cores are counted as CIME counts them (the PEs spanned x the most threads).
//! What this path does not price yet (a machine, queues, resources, the calibrated model) is
//! refused with a line that says so, rather than ignored.

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::layout::ranked::Rated;
use autolb::layout::search::{Best, Placement};
use autolb::layout::Layout;
use autolb::predict::on_layout::TreePrediction;
use autolb::predict::{ComponentInput, Settings};

use crate::shared::error::user;

pub use autolb::layout::emit::cime_lines;

/// What the layout path prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutOutput {
    Table,
    Json,
    Cime,
}

/// One placement as printed and as JSON: `fittingness` only in the ranking.
#[derive(Debug, Serialize)]
struct Row<'a> {
    rank: usize,
    /// Cores plus the file's extra PEs: what CHSY counts.
    pes: u64,
    /// Cores as CIME counts them (PEs spanned x the most threads).
    cores: u64,
    run_s: f64,
    sypd: f64,
    chsy: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    fittingness: Option<f64>,
    placements: &'a [Placement],
}

#[derive(Debug, Serialize)]
struct Ranked<'a> {
    /// What the rows are.
    what: &'static str,
    tts_w: f64,
    /// Kept placements (distinct cores, threads and time) the ranking scored.
    kept: u64,
    sypd_bounds: autolb::metrics::Bounds,
    chsy_bounds: autolb::metrics::Bounds,
    rows: Vec<Row<'a>>,
}

#[derive(Debug, Serialize)]
struct Front<'a> {
    what: &'static str,
    rows: Vec<Row<'a>>,
}

#[derive(Debug, Serialize)]
struct LayoutJson<'a> {
    layout: String,
    max_nproc: u32,
    top: Ranked<'a>,
    front: Front<'a>,
}

const TOP_WHAT: &str = "the top placements by fittingness";
const FRONT_WHAT: &str =
    "the speed/cores front: the fastest placement, then the fastest on fewer cores";

/// Ranks the placements of `tree` and writes them as `output` asks.
pub fn run(
    tree: &Layout,
    inputs: &[ComponentInput],
    settings: &Settings,
    output: LayoutOutput,
) -> Result<String> {
    let prediction = TreePrediction::new(tree, inputs, settings).map_err(user)?;
    let top = prediction.top(settings.tts_w);
    let Some(best) = top.first() else {
        return Err(user(format!(
            "no placement of {tree} fits max_nproc = {}: the smallest task counts the curves allow do not fit; raise max_nproc or lower the components' min_nproc",
            settings.max_nproc
        )));
    };
    let text = match output {
        LayoutOutput::Cime => format!(
            "# autolb predict: rank 1 by fittingness at TTS_w {:.2}\n{}",
            settings.tts_w,
            cime_lines(tree, &Best::from(best))
        ),
        LayoutOutput::Json => {
            let json = LayoutJson {
                layout: tree.to_string(),
                max_nproc: settings.max_nproc,
                top: Ranked {
                    what: TOP_WHAT,
                    tts_w: settings.tts_w,
                    kept: prediction.ranking.kept,
                    sypd_bounds: prediction.ranking.sypd_bounds,
                    chsy_bounds: prediction.ranking.chsy_bounds,
                    rows: rated_rows(&top),
                },
                front: Front {
                    what: FRONT_WHAT,
                    rows: front_rows(&prediction.front, settings.extra_pes),
                },
            };
            serde_json::to_string_pretty(&json).map_err(user)? + "\n"
        }
        LayoutOutput::Table => table(&prediction, &top),
    };
    Ok(text)
}

fn rated_rows(top: &[Rated]) -> Vec<Row<'_>> {
    top.iter()
        .enumerate()
        .map(|(i, r)| Row {
            rank: i + 1,
            pes: r.pes,
            cores: r.cores,
            run_s: r.run_s,
            sypd: r.sypd,
            chsy: r.chsy,
            fittingness: Some(r.fittingness),
            placements: &r.placements,
        })
        .collect()
}

fn front_rows(rows: &[Best], extra_pes: u32) -> Vec<Row<'_>> {
    rows.iter()
        .enumerate()
        .map(|(i, b)| {
            let pes = b.cores + u64::from(extra_pes);
            let sypd = autolb::metrics::SECONDS_PER_DAY / b.run_s;
            Row {
                rank: i + 1,
                pes,
                cores: b.cores,
                run_s: b.run_s,
                sypd,
                chsy: autolb::metrics::chsy(pes as f64, sypd),
                fittingness: None,
                placements: &b.placements,
            }
        })
        .collect()
}

/// A placement's cell: `tasks@root`, or `tasks x threads@root` when the layout is threaded.
pub fn cell(p: &Placement, threaded: bool) -> String {
    if threaded {
        format!("{}x{}@{}", p.tasks, p.threads, p.root_pe)
    } else {
        format!("{}@{}", p.tasks, p.root_pe)
    }
}

fn table(prediction: &TreePrediction, top: &[Rated]) -> String {
    let tree = &prediction.layout;
    let settings = &prediction.settings;
    let threaded = prediction.threaded;
    let names = tree.components();
    let header = |fn_column: bool| {
        let mut h = format!("{:>4}", "rank");
        for n in &names {
            h.push_str(&format!(" {n:>11}"));
        }
        h.push_str(&format!(" {:>6} {:>8} {:>9}", "PEs", "SYPD", "CHSY"));
        if fn_column {
            h.push_str(&format!(" {:>6}", "FN"));
        }
        h + "\n"
    };
    let line = |row: &Row| {
        let mut l = format!("{:>4}", row.rank);
        for p in row.placements {
            l.push_str(&format!(" {:>11}", cell(p, threaded)));
        }
        l.push_str(&format!(
            " {:>6} {:>8.2} {:>9.0}",
            row.pes, row.sypd, row.chsy
        ));
        if let Some(f) = row.fittingness {
            l.push_str(&format!(" {f:>6.3}"));
        }
        l + "\n"
    };
    let mut out = format!(
        "layout {tree} within {} cores: {TOP_WHAT} (TTS_w {:.2}, {} kept placements)\n",
        settings.max_nproc, settings.tts_w, prediction.ranking.kept
    );
    out.push_str(&header(true));
    for row in rated_rows(top) {
        out.push_str(&line(&row));
    }
    out.push_str(&format!("{FRONT_WHAT}\n"));
    out.push_str(&header(false));
    for row in front_rows(&prediction.front, settings.extra_pes) {
        out.push_str(&line(&row));
    }
    let cells = if threaded {
        "each cell: MPI tasks x threads@first PE"
    } else {
        "each cell: MPI tasks@first PE"
    };
    out.push_str(&format!(
        "{cells}; PEs: cores as CIME counts them (PEs spanned x the most threads) plus extra PEs; time per the layout model (the slowest part of `|`, the sum of `;`)\n"
    ));
    out
}
