//! `autolb predict --config FILE` when the file gives `layout`: the placements the layout tree
//! allows within the budget, ranked by the exact search ([`autolb::layout::search::front`]),
//! and `--emit cime`, the `./xmlchange` lines that set the best one in a CIME case.
//!
//! Each component's time is the wall time of one simulated year at its task count, read from
//! its curve (86400 / SYPD); the tree combines them (the slowest part of `|`, the sum of `;`).
//! The ranking is the speed/PE front: the fastest placement, then the fastest on fewer PEs, and
//! so on; the search gives every row at the cost of one. What this path does not price yet
//! (a machine, queues, resources, threads, the calibrated model) is refused with a line that
//! says so, rather than ignored.

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::interp::Interpolant;
use autolb::layout::search::{self, Best, Placement};
use autolb::layout::Layout;
use autolb::predict::{ComponentInput, Settings};

use crate::shared::error::user;

/// CIME classes that usually run on the PEs of others (the coupler, river runoff, land ice,
/// waves). Left out of the tree, they take the PEs of the part that holds the atmosphere, so the
/// case never gets a made-up count for them.
pub const RIDE_ALONG: [&str; 4] = ["cpl", "rof", "glc", "wav"];

/// What the layout path prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutOutput {
    Table,
    Json,
    Cime,
}

/// Seconds of wall time per simulated year at `sypd`.
fn seconds_per_year(sypd: f64) -> f64 {
    86_400.0 / sypd
}

/// The task counts the search may give a component: its allowed list, or every `step` from
/// its curve's first point, within its curve, its limits and the budget.
fn counts(input: &ComponentInput, settings: &Settings) -> Vec<u32> {
    let Some(curve) = &input.curve else {
        return Vec::new();
    };
    let low = curve.first_nproc().max(input.min_nproc.unwrap_or(0));
    let high = curve
        .last_nproc()
        .min(input.max_nproc.unwrap_or(u32::MAX))
        .min(settings.max_nproc);
    let inside = |p: &u32| (low..=high).contains(p);
    match &input.allowed {
        Some(list) => list.iter().copied().filter(inside).collect(),
        None => (curve.first_nproc()..=high)
            .step_by(settings.step.max(1) as usize)
            .filter(inside)
            .collect(),
    }
}

/// Why the layout path cannot take these inputs, if it cannot.
fn unsupported(inputs: &[ComponentInput]) -> Option<String> {
    for c in inputs {
        match &c.curve {
            None => {
                return Some(format!(
                    "component {} has no curve; a layout tree is ranked from curves only for now: give it curve = \"PATH\"",
                    c.name
                ))
            }
            Some(curve) if curve.threads() > 1 || !c.thread_curves.is_empty() => {
                return Some(format!(
                    "component {} has curves at several thread counts; a layout tree is ranked at one thread per task for now: give its single-thread curve",
                    c.name
                ))
            }
            Some(_) => {}
        }
    }
    None
}

/// One ranked placement, as printed and as JSON.
#[derive(Debug, Serialize)]
struct Row<'a> {
    rank: usize,
    /// PEs the placement spans (with the file's extra PEs: the cores CHSY counts).
    pes: u32,
    run_s: f64,
    sypd: f64,
    chsy: f64,
    placements: &'a [Placement],
}

#[derive(Debug, Serialize)]
struct LayoutJson<'a> {
    layout: String,
    max_nproc: u32,
    rows: Vec<Row<'a>>,
}

/// Ranks the placements of `tree` and writes them as `output` asks.
pub fn run(
    tree: &Layout,
    inputs: &[ComponentInput],
    settings: &Settings,
    output: LayoutOutput,
) -> Result<String> {
    if let Some(why) = unsupported(inputs) {
        return Err(user(why));
    }
    let curves: Vec<(String, Interpolant, Vec<u32>)> = inputs
        .iter()
        .filter_map(|c| {
            let curve = c.curve.as_ref()?;
            let f = Interpolant::new(settings.interp, &curve.xs(), &curve.ys());
            Some((c.name.clone(), f, counts(c, settings)))
        })
        .collect();
    let find = |name: &str| curves.iter().find(|(n, ..)| n == name);
    let count_of = |name: &str| find(name).map(|c| c.2.clone()).unwrap_or_default();
    let time = |name: &str, p: u32| {
        let sypd = find(name)?.1.eval(f64::from(p));
        (sypd.is_finite() && sypd > 0.0).then(|| seconds_per_year(sypd))
    };
    let rows =
        search::front(tree, settings.max_nproc, 1, settings.top, &count_of, &time).map_err(user)?;
    let Some(best) = rows.first() else {
        return Err(user(format!(
            "no placement of {tree} fits max_nproc = {}: the smallest task counts the curves allow do not fit; raise max_nproc or lower the components' min_nproc",
            settings.max_nproc
        )));
    };
    let text = match output {
        LayoutOutput::Cime => cime_lines(tree, best),
        LayoutOutput::Json => {
            let json = LayoutJson {
                layout: tree.to_string(),
                max_nproc: settings.max_nproc,
                rows: ranked(&rows, settings.extra_pes),
            };
            serde_json::to_string_pretty(&json).map_err(user)? + "\n"
        }
        LayoutOutput::Table => table(tree, &rows, settings),
    };
    Ok(text)
}

fn ranked(rows: &[Best], extra_pes: u32) -> Vec<Row<'_>> {
    rows.iter()
        .enumerate()
        .map(|(i, b)| {
            let pes = b.width + extra_pes;
            let sypd = 86_400.0 / b.run_s;
            Row {
                rank: i + 1,
                pes,
                run_s: b.run_s,
                sypd,
                chsy: autolb::metrics::chsy(f64::from(pes), sypd),
                placements: &b.placements,
            }
        })
        .collect()
}

fn table(tree: &Layout, rows: &[Best], settings: &Settings) -> String {
    let mut out = format!(
        "layout {tree} within {} PEs: the fastest placement, then the fastest on fewer PEs\n",
        settings.max_nproc
    );
    let names = tree.components();
    let mut header = format!("{:>4}", "rank");
    for n in &names {
        header.push_str(&format!(" {n:>11}"));
    }
    header.push_str(&format!(" {:>6} {:>8} {:>9}", "PEs", "SYPD", "CHSY"));
    out.push_str(&header);
    out.push('\n');
    for row in ranked(rows, settings.extra_pes) {
        let mut line = format!("{:>4}", row.rank);
        for p in row.placements {
            line.push_str(&format!(" {:>11}", format!("{}@{}", p.tasks, p.root_pe)));
        }
        line.push_str(&format!(
            " {:>6} {:>8.2} {:>9.0}\n",
            row.pes, row.sypd, row.chsy
        ));
        out.push_str(&line);
    }
    out.push_str(
        "each cell: MPI tasks@first PE; time per the layout model (the slowest part of `|`, the sum of `;`)\n",
    );
    out
}

/// `--emit cime`: the best placement as `./xmlchange` lines, every ride-along class the tree
/// leaves out on the PEs of the part that holds `atm` (the whole layout without one).
pub fn cime_lines(tree: &Layout, best: &Best) -> String {
    let host = host_part(tree);
    let on_host: Vec<&Placement> = best
        .placements
        .iter()
        .filter(|p| host.contains(&p.name.as_str()))
        .collect();
    let root = on_host.iter().map(|p| p.root_pe).min().unwrap_or(0);
    let end = on_host
        .iter()
        .map(|p| p.root_pe + p.tasks)
        .max()
        .unwrap_or(best.width);
    let mut placements = best.placements.clone();
    for class in RIDE_ALONG {
        if !placements
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(class))
        {
            placements.push(Placement {
                name: class.to_string(),
                tasks: end - root,
                root_pe: root,
            });
        }
    }
    let left_out: Vec<&str> = RIDE_ALONG
        .iter()
        .filter(|c| !tree.components().contains(c))
        .copied()
        .collect();
    let mut out = format!(
        "# autolb predict: the fastest placement of {tree} ({} PEs)",
        best.width
    );
    if !left_out.is_empty() {
        out.push_str(&format!(
            "; {} on the PEs of {}",
            left_out.join(", "),
            host.join(", ")
        ));
    }
    out.push('\n');
    out.push_str(&search::xmlchange_lines(&placements, &|_| 1));
    out
}

/// The components of the top-level part of `tree` that holds `atm` (all of them when the tree
/// does not split at the top or has no `atm`).
fn host_part(tree: &Layout) -> Vec<&str> {
    if let Layout::Beside(parts) = tree {
        if let Some(part) = parts.iter().find(|p| p.components().contains(&"atm")) {
            return part.components();
        }
    }
    tree.components()
}
