//! The detail view (Enter): a configuration's figures, or an iteration row with its runs.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;

use super::{opt, scrolled_popup};
use crate::tui::app::App;
use crate::tui::calibration::estimate;
use crate::tui::campaign_view::{IterRow, ScalingCurve, ScalingPoint};
use crate::tui::ranking::ModelKind;
use autolb::model::check::rel_error;
use autolb::model::Model;
use autolb::predict::Cell;

/// Lines describing a configuration (public for tests).
pub fn config_lines(app: &App, index: &[usize]) -> Vec<String> {
    let p = &app.ranking.problem;
    let nproc = app.ranking.nproc_of(index);
    let threads = app.ranking.threads_of(&p.score(index, app.ranking.tts_w()));
    let mut out = vec![app.ranking.describe_index(index), String::new()];
    // The problem's speeds are the ranking model's: the curves' (the component alone), or the
    // calibrated model's, learned from coupled runs.
    let (sypd, chsy) = match app.ranking.model {
        ModelKind::Standalone => ("SYPD alone", "CHSY alone"),
        ModelKind::Calibrated => ("coupled-mode SYPD", "coupled-mode CHSY"),
    };
    for (k, (c, &i)) in p.components.iter().zip(index).enumerate() {
        // A hybrid component's PEs are cores: its ranks times the threads per rank chosen.
        let ranks = match threads.get(k).copied().unwrap_or(1) {
            t if t > 1 => format!(" ({} ranks x {t} threads)", c.nproc[i] / t),
            _ => String::new(),
        };
        out.push(format!(
            "{:<8} {:>6} PEs{ranks}   {sypd} {:>7.2}   {chsy} {:>8.0}",
            c.name,
            c.nproc[i],
            c.sypd[i],
            24.0 * f64::from(c.nproc[i]) / c.sypd[i]
        ));
    }
    out.push(String::new());
    // The budget bounds the balanced components only; the extras come on top of it.
    let balanced: u32 = nproc.iter().sum();
    out.push(format!(
        "total PEs {}: {balanced} balanced (budget {}) + {} extra",
        p.total_nproc(balanced),
        p.settings.max_nproc,
        p.settings.extra_pes
    ));
    out.extend(billing_lines(app, index));
    match p.cell(index, app.ranking.tts_w()) {
        Cell::OverBudget => out.push("over the budget".into()),
        Cell::WorseThanBase { sypd, chsy } => {
            out.push(format!("coupled SYPD {sypd:.2}   CHSY {chsy:.0}"));
            out.push("worse than the base case: speed-up x efficiency vs the base case < 1".into());
        }
        Cell::Scored {
            sypd,
            chsy,
            coupling_cost,
            fittingness,
        } => {
            out.push(format!(
                "coupled SYPD {sypd:.2}   CHSY {chsy:.0}   coupling cost {:.2} %",
                coupling_cost * 100.0
            ));
            out.push(format!(
                "fittingness {fittingness:.4} at TTS_w {:.2}",
                app.ranking.tts_w()
            ));
            match app.ranking.rank_of(&nproc) {
                Some(r) => out.push(format!("rank {r} of the top {}", app.ranking.top)),
                None => out.push(format!("not in the top {}", app.ranking.top)),
            }
        }
    }
    out.extend(measured_lines(app, &nproc));
    let base = p.baseline(app.ranking.tts_w());
    out.push(format!(
        "base case {}: SYPD {:.2}, CHSY {:.0}",
        app.ranking.describe(&base.nproc),
        base.sypd,
        base.chsy
    ));
    out.push(format!(
        "normalisation over {} kept configurations: SYPD {:.2}..{:.2}, CHSY {:.0}..{:.0}",
        p.considered, p.sypd_bounds.min, p.sypd_bounds.max, p.cost_bounds.min, p.cost_bounds.max
    ));
    out
}

/// With a `[machine]` or queues: the nodes the job takes, its billed and idle cores, the cost
/// FN weighs, and the chosen queue or else the smallest queue it fits.
fn billing_lines(app: &App, index: &[usize]) -> Vec<String> {
    let p = &app.ranking.problem;
    let config = p.score(index, app.ranking.tts_w());
    let Some(b) = &config.billing else {
        return Vec::new();
    };
    let model = &p.cost_model;
    let mut out = Vec::new();
    if let Some(m) = &model.machine {
        out.push(format!(
            "nodes {} of {} cores   billed cores {}   idle cores {}",
            b.nodes, m.cores_per_node, b.billed_cores, b.idle_cores
        ));
    }
    out.push(format!(
        "cost ({}; {} changes it): {} {:.1}",
        model.cost.label(),
        app.ui.keys.first(crate::tui::keys::Action::CycleCost),
        model.cost.header(),
        b.cost
    ));
    if !model.queues.is_empty() {
        out.push(match (&model.queue, &b.queue) {
            (Some(_), Some(q)) => format!("queue {q} (chosen)"),
            (Some(q), None) => format!("does not fit the chosen queue {q}"),
            (None, Some(q)) => format!("smallest queue it fits: {q}"),
            (None, None) => "fits no queue".to_string(),
        });
    }
    out
}

/// For a configuration that has been run: what each model predicted against what was
/// measured (the calibrated model's training runs, and the watched campaign's rows).
pub fn measured_lines(app: &App, nproc: &[u32]) -> Vec<String> {
    let names = app.ranking.problem.names();
    let mut measured: Vec<f64> = app
        .ranking
        .calibration
        .as_ref()
        .map(|c| c.measured_at(&names, nproc))
        .unwrap_or_default();
    if measured.is_empty() && app.table.campaign.components == names {
        measured = app
            .table
            .campaign
            .rows
            .iter()
            .filter(|r| r.nproc == nproc)
            .filter_map(|r| r.sypd)
            .collect();
    }
    if measured.is_empty() {
        return Vec::new();
    }
    let mean = measured.iter().sum::<f64>() / measured.len() as f64;
    let mut out = vec![
        String::new(),
        format!(
            "measured: coupled SYPD {mean:.2} ({} run{})",
            measured.len(),
            if measured.len() == 1 { "" } else { "s" }
        ),
    ];
    out.extend(predicted_lines(app, nproc, mean));
    out
}

/// The standalone and the calibrated prediction for `nproc` against a `measured` coupled SYPD.
fn predicted_lines(app: &App, nproc: &[u32], mean: f64) -> Vec<String> {
    let interp = app.ranking.problem.settings.interp;
    let mut out = Vec::new();
    if let Some(e) = estimate(&Model::Standalone, &app.ranking.inputs, interp, nproc) {
        out.push(format!(
            "predicted, standalone: SYPD {:.2}   error {:+.1} %",
            e.sypd,
            100.0 * rel_error(e.sypd, mean)
        ));
    }
    match app.ranking.calibration.as_ref() {
        Some(c) => {
            if let Some(e) = estimate(&c.model, &app.ranking.inputs, interp, nproc) {
                out.push(format!(
                    "predicted, calibrated: SYPD {:.2} (band {:.2}..{:.2})   error {:+.1} %{}",
                    e.sypd,
                    e.low,
                    e.high,
                    100.0 * rel_error(e.sypd, mean),
                    if (e.low..=e.high).contains(&mean) {
                        ""
                    } else {
                        "   outside the band"
                    }
                ));
            }
        }
        None => out.push("predicted, calibrated: no calibrated model yet".into()),
    }
    out
}

pub fn render_config(app: &App, index: &[usize], frame: &mut Frame, area: Rect) {
    let lines: Vec<Line> = config_lines(app, index)
        .into_iter()
        .map(Line::raw)
        .collect();
    scrolled_popup(
        frame,
        area,
        90,
        " Configuration (esc closes) ",
        lines,
        app.ui.overlay_scroll,
    );
}

/// Lines describing an iteration row.
pub fn row_lines(app: &App, i: usize) -> Vec<String> {
    let Some(r) = app.table.campaign.rows.get(i) else {
        return vec!["no such row".into()];
    };
    let points = app.table.campaign.scaling_points(r);
    if !points.is_empty() {
        return scaling_row_lines(r, &points);
    }
    let names = &app.table.campaign.components;
    let place = match &r.label {
        Some(label) => label.clone(),
        None => format!("iteration {} test {}", r.iteration, r.test),
    };
    let mut out = vec![
        format!("{place}: {}", app.table.campaign.describe(&r.nproc)),
        format!(
            "SYPD {}   CHSY {}   coupling cost {} %   FN {}",
            opt(r.sypd, 2),
            opt(r.chsy, 0),
            opt(r.coupling_cost.map(|c| c * 100.0), 2),
            opt(r.fittingness, 3)
        ),
    ];
    for (n, c) in names.iter().zip(&r.partial_coupling_cost) {
        out.push(format!(
            "partial coupling cost {n}: {} %",
            opt(c.map(|v| v * 100.0), 2)
        ));
    }
    // A guided test has no step of its own (0): its next configuration is the model's choice.
    if let (Some(d), Some(t), Some(step)) = (&r.donor, &r.recipient, r.step.filter(|&s| s > 0)) {
        out.push(format!("next: move {step} PEs from {d} to {t}"));
    }
    if let Some(reason) = &r.reason {
        out.push(format!("why: {reason}"));
    }
    let view = &app.table.campaign;
    let mut measured: Vec<&[u32]> = view
        .rows
        .iter()
        .filter(|r| r.fittingness.is_some())
        .map(|r| r.nproc.as_slice())
        .collect();
    measured.sort();
    measured.dedup();
    let measured = measured.len();
    out.push(format!("state {}", r.state));
    out.push(format!(
        "FN: normalised over the {measured} measured configurations at TTS_w {}, as the campaign chooses its best",
        view.tts_w.map_or("-".into(), |w| format!("{w:.2}"))
    ));
    out.push(String::new());
    out.extend(run_lines(r, true));
    // The models against the measurement last: a watcher looks at the runs first.
    if let Some(measured) = r.sypd.filter(|_| *names == app.ranking.problem.names()) {
        out.push(String::new());
        out.extend(predicted_lines(app, &r.nproc, measured));
    }
    out
}

/// A scaling test's row: the measured point of each component it runs (the mean of the runs
/// kept, their spread, the outliers left out), why it was run and its runs. No FN: a scaling
/// run measures curves, not a configuration.
fn scaling_row_lines(r: &IterRow, points: &[(&ScalingCurve, &ScalingPoint)]) -> Vec<String> {
    let what: Vec<String> = points
        .iter()
        .map(|(c, p)| format!("{} at {} PEs", c.name, p.nproc))
        .collect();
    let mode = points.first().map_or("", |(c, _)| c.mode.as_str());
    let mut out = vec![format!(
        "iteration {} test {}: {}, measured in {mode} mode",
        r.iteration,
        r.test,
        what.join(" + ")
    )];
    for (curve, point) in points {
        let name = if points.len() > 1 {
            format!("{} ", curve.name)
        } else {
            String::new()
        };
        out.push(match point.sypd {
            Some(m) => format!(
                "{name}measured point at {}: SYPD {m:.2} ± {:.2} (sd, {:.1} %) over {} run{} kept",
                point.nproc,
                point.sd,
                100.0 * point.sd / m,
                point.runs,
                if point.runs == 1 { "" } else { "s" }
            ),
            None => format!("{name}measured point at {}: none yet", point.nproc),
        });
        out.push(format!(
            "{name}runs: {} kept, {} left out as outliers, {} failed, {} queued",
            point.runs,
            point.outliers.len(),
            point.failed,
            point.queued
        ));
        for (id, sypd) in &point.outliers {
            let off = point
                .sypd
                .map(|m| format!(" ({:+.1} % off the mean)", 100.0 * (sypd - m) / m))
                .unwrap_or_default();
            out.push(format!(
                "{name}outlier {id}: SYPD {sypd:.2}{off}, left out of the mean and run again"
            ));
        }
    }
    if let Some(reason) = &r.reason {
        out.push(format!("why: {reason}"));
    }
    out.push(format!("state {}", r.state));
    out.push(String::new());
    out.extend(run_lines(r, points.len() > 1));
    out
}

/// A row's runs, two lines each (more with a note): state, SYPD (with CHSY and coupling cost
/// when `coupled`: a standalone scaling run has neither), job, run directory.
fn run_lines(r: &IterRow, coupled: bool) -> Vec<String> {
    let mut out = Vec::new();
    for run in &r.runs {
        let figures = if coupled {
            format!(
                "  CHSY {:>6}  cpl {} %",
                opt(run.chsy, 0),
                opt(run.coupling_cost.map(|c| c * 100.0), 2)
            )
        } else {
            String::new()
        };
        out.push(format!(
            "rep {}  {:<8} SYPD {:>6}{figures}  job {}",
            run.repetition,
            run.state,
            opt(run.sypd, 2),
            run.job.clone().unwrap_or_else(|| "-".into()),
        ));
        out.push(format!("       {}", run.run_dir.display()));
        if let Some(note) = &run.note {
            let label = if run.state == "failed" {
                "failed: "
            } else {
                ""
            };
            out.push(format!("       {label}{}", compact_note(note)));
        }
    }
    out
}

pub fn render_row(app: &App, i: usize, frame: &mut Frame, area: Rect) {
    let lines: Vec<Line> = row_lines(app, i).into_iter().map(Line::raw).collect();
    scrolled_popup(
        frame,
        area,
        110,
        " Iteration row (esc closes; ↑↓ pgup pgdn scroll) ",
        lines,
        app.ui.overlay_scroll,
    );
}

/// A long note (a cut run's PARTIAL list naming every rank file) kept to one readable line:
/// the first 200 characters and how much was left out.
pub fn compact_note(note: &str) -> String {
    const KEEP: usize = 200;
    let n = note.chars().count();
    if n <= KEEP {
        return note.to_string();
    }
    let head: String = note.chars().take(KEEP).collect();
    format!("{head} ... ({} more characters)", n - KEEP)
}
