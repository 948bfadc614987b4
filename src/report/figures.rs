//! The report's figures as SVG: scalability curves (paper Figs. 7, 9, 12), the fittingness
//! matrix (Fig. 5) and the campaign panels (Figs. 8, 10, 11).
//!
//! Colour carries no meaning alone: every mark also has a label or a shape, so the figures
//! read in grey-scale print and for colour-blind readers; the colour maps are viridis.

use std::collections::BTreeMap;

use super::svg::{
    category, padded, spread, text_width, tick_label, viridis, Anchor, Axes, Scale, Svg,
};
use super::{CurveData, Mark, MarkKind, MatrixSection};
use crate::campaign::{RunState, Status, TestState, TestView};
use crate::metrics;
use crate::predict::Cell;

const INK: &str = "#222";

/// How a calibrated model's curve is drawn: dashed, in viridis' light green end.
const MODEL_STYLE: &str = r##"stroke="#35b779" stroke-width="2" stroke-dasharray="6 3""##;

/// Points (x, y) of one series.
type Series = Vec<(f64, f64)>;

/// SYPD and CHSY of one component against its PEs, side by side, with the marks' PEs as
/// vertical lines.
pub fn curves(curve: &CurveData, component: usize, marks: &[Mark]) -> String {
    let (w, h) = (720.0, 260.0);
    let mut svg = Svg::new(w, h);
    let chsy = |(x, y): (f64, f64)| (x, metrics::chsy(x, y));
    let chsy_of = |v: &Series| -> Series { v.iter().copied().map(chsy).collect() };
    // (title, measured, interpolation, calibrated model if any)
    let calibrated = curve.calibrated.as_ref().map(|(_, l)| l.clone());
    let panels: [(&str, Series, Series, Option<Series>); 2] = [
        (
            "SYPD",
            curve.measured.clone(),
            curve.line.clone(),
            calibrated.clone(),
        ),
        (
            "CHSY (its PEs only)",
            chsy_of(&curve.measured),
            chsy_of(&curve.line),
            calibrated.as_ref().map(chsy_of),
        ),
    ];
    // One vertical line per distinct PE count, labelled with every mark there.
    let mut at: BTreeMap<u32, Vec<&Mark>> = BTreeMap::new();
    for m in marks {
        if let Some(&p) = m.nproc.get(component) {
            at.entry(p).or_default().push(m);
        }
    }
    let xs = curve
        .measured
        .iter()
        .map(|p| p.0)
        .chain(at.keys().map(|&p| f64::from(p)));
    let (xlo, xhi) = padded(
        xs.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
        0.04,
    );
    for (k, (title, measured, line, model)) in panels.iter().enumerate() {
        let x0 = 60.0 + k as f64 * 360.0;
        let x = Scale::new(xlo.max(0.0), xhi, x0, x0 + 280.0);
        let ys = measured
            .iter()
            .chain(line.iter())
            .chain(model.iter().flatten())
            .map(|p| p.1);
        let (ylo, yhi) = padded(
            ys.clone().fold(f64::INFINITY, f64::min),
            ys.fold(f64::NEG_INFINITY, f64::max),
            0.08,
        );
        let y = Scale::new(ylo.max(0.0), yhi, 210.0, 42.0);
        let axes = Axes { x, y };
        axes.draw(&mut svg, &format!("{} PEs", curve.name), title);
        let labels: Vec<String> = at
            .values()
            .map(|ms| ms.iter().map(|m| m.label()).collect::<Vec<_>>().join(" "))
            .collect();
        let wants: Vec<f64> = at.keys().map(|&p| x.at(f64::from(p))).collect();
        let sizes: Vec<f64> = labels.iter().map(|l| text_width(l, 10.0) + 6.0).collect();
        let placed = spread(&wants, &sizes, x0 - 30.0, x0 + 310.0);
        for ((ms, label), (&px, &lx)) in at.values().zip(&labels).zip(wants.iter().zip(&placed)) {
            let style = if ms.iter().any(|m| m.kind == MarkKind::Best) {
                format!(r#"stroke="{INK}" stroke-width="2""#)
            } else if ms.iter().any(|m| m.kind == MarkKind::Original) {
                format!(r#"stroke="{INK}" stroke-dasharray="5 3""#)
            } else {
                r##"stroke="#777" stroke-dasharray="2 2""##.to_string()
            };
            svg.line(px, 42.0, px, 210.0, &style);
            svg.line(lx, 27.0, px, 42.0, r##"stroke="#777""##);
            svg.text(lx, 24.0, Anchor::Middle, r#"font-size="10""#, label);
        }
        let line_px: Vec<(f64, f64)> = line.iter().map(|&(a, b)| (x.at(a), y.at(b))).collect();
        svg.polyline(
            &line_px,
            &format!(r#"stroke="{}" stroke-width="2""#, viridis(0.3)),
        );
        if let Some(model) = model {
            let px: Vec<(f64, f64)> = model.iter().map(|&(a, b)| (x.at(a), y.at(b))).collect();
            svg.polyline(&px, MODEL_STYLE);
        }
        for &(a, b) in measured {
            svg.circle(
                x.at(a),
                y.at(b),
                3.5,
                &format!(r#"fill="white" stroke="{INK}" stroke-width="1.5""#),
            );
        }
    }
    // Legend, left to right.
    let mut lx = 60.0;
    let mut entry = |svg: &mut Svg, swatch: &dyn Fn(&mut Svg, f64), text: &str| {
        swatch(svg, lx);
        svg.text(lx + 24.0, 253.0, Anchor::Start, "", text);
        lx += 24.0 + text_width(text, 11.0) + 14.0;
    };
    let line_style = format!(r#"stroke="{}" stroke-width="2""#, viridis(0.3));
    entry(
        &mut svg,
        &|svg, x| svg.line(x, 250.0, x + 20.0, 250.0, &line_style),
        &format!("{} interpolation", curve.method.name()),
    );
    entry(
        &mut svg,
        &|svg, x| {
            svg.circle(
                x + 10.0,
                250.0,
                3.5,
                &format!(r#"fill="white" stroke="{INK}""#),
            )
        },
        "measured",
    );
    if let Some((label, _)) = &curve.calibrated {
        entry(
            &mut svg,
            &|svg, x| svg.line(x, 250.0, x + 20.0, 250.0, MODEL_STYLE),
            label,
        );
    }
    svg.text(
        lx,
        253.0,
        Anchor::Start,
        "",
        "lines: #k predicted, original (dashed), best (bold)",
    );
    svg.finish(&format!(
        "{} scalability: SYPD and CHSY against PEs",
        curve.name
    ))
}

/// The letter of the `i`-th winner of the TTS_w intervals (A, B, ..., then numbers).
pub fn winner_letter(i: usize) -> String {
    match u8::try_from(i) {
        Ok(k) if k < 26 => char::from(b'A' + k).to_string(),
        _ => (i + 1).to_string(),
    }
}

/// The cost axis's title for a cost column header.
fn cost_axis(header: &str) -> String {
    match header {
        "CHSY" => "CHSY (core hours per simulated year)".into(),
        "NHSY" => "NHSY (node hours per simulated year)".into(),
        "kWh/SY" => "kWh per simulated year".into(),
        other => other.into(),
    }
}

/// SYPD against the cost of the speed/cost front (CHSY, or the machine's bill the front was
/// computed on), the winners lettered and the one at the report's TTS_w filled.
pub fn front(f: &super::FrontSection) -> String {
    let (w, h) = (720.0, 300.0);
    let mut svg = Svg::new(w, h);
    let xs = f.front.iter().map(|c| c.cost());
    let ys = f.front.iter().map(|c| c.sypd);
    let (xlo, xhi) = padded(
        xs.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
        0.06,
    );
    let (ylo, yhi) = padded(
        ys.clone().fold(f64::INFINITY, f64::min),
        ys.fold(f64::NEG_INFINITY, f64::max),
        0.08,
    );
    let axes = Axes {
        x: Scale::new(xlo.max(0.0), xhi, 70.0, 690.0),
        y: Scale::new(ylo.max(0.0), yhi, 250.0, 20.0),
    };
    axes.draw(&mut svg, &cost_axis(&f.cost), "SYPD");
    let px: Vec<(f64, f64)> = f
        .front
        .iter()
        .map(|c| (axes.x.at(c.cost()), axes.y.at(c.sypd)))
        .collect();
    svg.polyline(&px, r##"stroke="#999" stroke-dasharray="3 3""##);
    for &(x, y) in &px {
        svg.circle(
            x,
            y,
            3.0,
            &format!(r#"fill="white" stroke="{}""#, viridis(0.3)),
        );
    }
    let current = f.current();
    for (i, win) in f.winners.iter().enumerate() {
        let (x, y) = (axes.x.at(win.config.cost()), axes.y.at(win.config.sypd));
        let fill = if Some(i) == current { INK } else { "white" };
        svg.circle(
            x,
            y,
            5.0,
            &format!(r#"fill="{fill}" stroke="{INK}" stroke-width="1.5""#),
        );
        svg.text(
            x + 7.0,
            y - 6.0,
            Anchor::Start,
            r#"font-weight="bold""#,
            &winner_letter(i),
        );
    }
    svg.finish("Speed against cost of the Pareto front, with the TTS_w winners")
}

/// Most rows or columns the matrix draws; larger axes show every k-th candidate (plus the
/// marked ones), which keeps the page small for fine candidate steps.
pub const MATRIX_MAX_AXIS: usize = 80;

/// Candidate indices to draw along an axis: every k-th of `indices` plus the `keep` ones.
pub fn thin_axis(indices: &[usize], keep: &[usize]) -> (Vec<usize>, usize) {
    let stride = indices.len().div_ceil(MATRIX_MAX_AXIS).max(1);
    let mut v: Vec<usize> = indices.iter().copied().step_by(stride).collect();
    v.extend(keep.iter().copied());
    v.sort_unstable();
    v.dedup();
    (v, stride)
}

/// The fittingness matrix: rows down, columns across, viridis by FN, grey where worse than
/// the base case, blank over the budget (rows and columns entirely over it are left out); the
/// marks drawn as outlines with their labels in a column beside the matrix. Returns the SVG and
/// the thinning stride (1 when every candidate is drawn).
pub fn matrix(m: &MatrixSection) -> (String, usize) {
    let g = &m.grid;
    let (nr, nc) = (g.row_nproc.len(), g.col_nproc.len());
    let feasible = |r: usize, c: usize| g.cell(r, c) != Cell::OverBudget;
    let live_rows: Vec<usize> = (0..nr)
        .filter(|&r| (0..nc).any(|c| feasible(r, c)))
        .collect();
    let live_cols: Vec<usize> = (0..nc)
        .filter(|&c| (0..nr).any(|r| feasible(r, c)))
        .collect();
    let (rows, rs) = thin_axis(&live_rows, &m.marks.iter().map(|x| x.0).collect::<Vec<_>>());
    let (cols, cs) = thin_axis(&live_cols, &m.marks.iter().map(|x| x.1).collect::<Vec<_>>());
    let cell = (520.0 / cols.len().max(rows.len()).max(1) as f64).clamp(4.0, 28.0);
    let (x0, y0) = (70.0, 20.0);
    let (pw, ph) = (cell * cols.len() as f64, cell * rows.len() as f64);
    let label_col = x0 + pw + 34.0;
    let bx = label_col + 90.0;
    let (w, h) = (bx + 110.0, y0 + ph.max(330.0) + 50.0);
    let mut svg = Svg::new(w, h);
    let levels = 64.0;
    svg.raw("<g shape-rendering=\"crispEdges\">\n");
    for (ri, &r) in rows.iter().enumerate() {
        // Runs of equal colour in a row become one rectangle: fewer shapes, same picture.
        let mut run: Option<(usize, String)> = None;
        let y = y0 + ri as f64 * cell;
        let flush = |svg: &mut Svg, start: usize, end: usize, fill: &str| {
            if !fill.is_empty() {
                let x = x0 + start as f64 * cell;
                svg.rect(
                    x,
                    y,
                    (end - start) as f64 * cell,
                    cell,
                    &format!(r#"fill="{fill}""#),
                );
            }
        };
        for (ci, &c) in cols.iter().enumerate() {
            let fill = match g.cell(r, c) {
                Cell::OverBudget => String::new(),
                Cell::WorseThanBase { .. } => "#bbb".to_string(),
                Cell::Scored { fittingness, .. } => {
                    viridis((fittingness * levels).round() / levels)
                }
            };
            match &run {
                Some((_, f)) if *f == fill => {}
                Some((start, f)) => {
                    flush(&mut svg, *start, ci, f);
                    run = Some((ci, fill));
                }
                None => run = Some((ci, fill)),
            }
        }
        if let Some((start, f)) = run {
            flush(&mut svg, start, cols.len(), &f);
        }
    }
    svg.raw("</g>\n");
    svg.rect(x0, y0, pw, ph, &format!(r#"fill="none" stroke="{INK}""#));
    // Axis labels: about 10 per axis.
    let every = |n: usize| n.div_ceil(10).max(1);
    for (ri, &r) in rows.iter().enumerate().step_by(every(rows.len())) {
        let y = y0 + (ri as f64 + 0.5) * cell + 3.5;
        svg.text(x0 - 4.0, y, Anchor::End, "", &g.row_nproc[r].to_string());
    }
    for (ci, &c) in cols.iter().enumerate().step_by(every(cols.len())) {
        let x = x0 + (ci as f64 + 0.5) * cell;
        svg.text(
            x,
            y0 + ph + 14.0,
            Anchor::Middle,
            "",
            &g.col_nproc[c].to_string(),
        );
    }
    svg.text(
        x0 + pw / 2.0,
        y0 + ph + 30.0,
        Anchor::Middle,
        "",
        &format!("{} PEs", m.col_name),
    );
    svg.vtext(
        x0 - 42.0,
        y0 + ph / 2.0,
        Anchor::Middle,
        "",
        &format!("{} PEs", m.row_name),
    );
    // Marks: outlines on the cells, labels (merged per cell) in a column with leader lines.
    let mut at: BTreeMap<(usize, usize), Vec<&Mark>> = BTreeMap::new();
    for (r, c, mark) in &m.marks {
        if let (Some(ri), Some(ci)) = (
            rows.iter().position(|x| x == r),
            cols.iter().position(|x| x == c),
        ) {
            at.entry((ri, ci)).or_default().push(mark);
        }
    }
    let wants: Vec<f64> = at
        .keys()
        .map(|(ri, _)| y0 + (*ri as f64 + 0.5) * cell)
        .collect();
    let placed = spread(&wants, &vec![13.0; wants.len()], y0, y0 + ph.max(330.0));
    for (((ri, ci), marks), &ly) in at.iter().zip(&placed) {
        let (x, y) = (x0 + *ci as f64 * cell, y0 + *ri as f64 * cell);
        let dash = if marks.iter().all(|m| m.kind == MarkKind::Original) {
            r#" stroke-dasharray="3 2""#
        } else {
            ""
        };
        svg.rect(
            x,
            y,
            cell,
            cell,
            &format!(r#"fill="none" stroke="white" stroke-width="3"{dash}"#),
        );
        svg.rect(
            x,
            y,
            cell,
            cell,
            &format!(r#"fill="none" stroke="{INK}" stroke-width="1.5"{dash}"#),
        );
        let label = marks
            .iter()
            .map(|m| m.label())
            .collect::<Vec<_>>()
            .join(" ");
        svg.line(
            x + cell,
            y + cell / 2.0,
            label_col - 3.0,
            ly,
            r##"stroke="#555" stroke-width="0.8""##,
        );
        svg.text(
            label_col,
            ly + 3.5,
            Anchor::Start,
            r#"font-size="10" font-weight="bold""#,
            &label,
        );
    }
    // Colour bar.
    let (by, bh) = (y0, 240.0);
    for i in 0..32 {
        let t = 1.0 - f64::from(i) / 32.0;
        svg.rect(
            bx,
            by + f64::from(i) * bh / 32.0,
            14.0,
            bh / 32.0 + 0.5,
            &format!(r#"fill="{}""#, viridis(t)),
        );
    }
    svg.rect(bx, by, 14.0, bh, &format!(r#"fill="none" stroke="{INK}""#));
    svg.text(bx + 18.0, by + 8.0, Anchor::Start, "", "FN 1");
    svg.text(bx + 18.0, by + bh, Anchor::Start, "", "0");
    svg.rect(bx, by + bh + 10.0, 14.0, 10.0, r##"fill="#bbb""##);
    svg.text(bx + 18.0, by + bh + 19.0, Anchor::Start, "", "worse than");
    svg.text(bx + 18.0, by + bh + 31.0, Anchor::Start, "", "base case");
    svg.rect(
        bx,
        by + bh + 40.0,
        14.0,
        10.0,
        &format!(r#"fill="white" stroke="{INK}""#),
    );
    svg.text(bx + 18.0, by + bh + 49.0, Anchor::Start, "", "over budget");
    let stride = rs.max(cs);
    (
        svg.finish(&format!(
            "Fittingness of {} x {} configurations at TTS_w {:.2}",
            m.row_name, m.col_name, m.tts_w
        )),
        stride,
    )
}

/// The metric a campaign panel shows.
#[derive(Debug, Clone, Copy)]
enum Metric {
    Sypd,
    Chsy,
    Cpl,
    Fn,
}

impl Metric {
    fn title(self) -> &'static str {
        match self {
            Metric::Sypd => "SYPD",
            Metric::Chsy => "CHSY",
            Metric::Cpl => "coupling cost %",
            Metric::Fn => "FN",
        }
    }

    fn format(self, v: f64) -> String {
        match self {
            Metric::Sypd => format!("{v:.2}"),
            Metric::Chsy => format!("{v:.0}"),
            Metric::Cpl => format!("{v:.1}"),
            Metric::Fn => format!("{v:.2}"),
        }
    }

    fn of_test(self, t: &TestView) -> Option<f64> {
        match self {
            Metric::Sypd => t.sypd,
            Metric::Chsy => t.chsy,
            Metric::Cpl => t.coupling_cost.map(|c| 100.0 * c),
            Metric::Fn => t.fittingness,
        }
    }

    fn of_run(self, r: &crate::campaign::RunView) -> Option<f64> {
        match self {
            Metric::Sypd => r.sypd,
            Metric::Chsy => r.chsy,
            Metric::Cpl => r.coupling_cost.map(|c| 100.0 * c),
            Metric::Fn => None,
        }
    }
}

/// The campaign as the paper's Fig. 8: four panels (SYPD, CHSY, coupling cost, FN), one group
/// of bars per lb-iteration, one bar per test (its mean; dots for the single runs). The best is
/// starred and outlined; a test whose runs all failed is a hatched "failed" bar; failed runs
/// are crosses on the axis; pending or running tests are dashed outlines. Below the panels,
/// each bar's move: donor -> recipient and the PEs moved.
pub fn campaign(s: &Status) -> String {
    let slots: Vec<(u32, &TestView)> = s
        .iterations
        .iter()
        .flat_map(|it| it.tests.iter().map(move |t| (it.iteration, t)))
        .collect();
    let groups = s.iterations.len().max(1);
    let n_tests = slots
        .iter()
        .map(|(_, t)| t.test)
        .max()
        .map_or(1, |m| m as usize + 1);
    // Bars share 820 px but are never wider than 45 px; a short campaign gets a narrower
    // figure (at least 420 px, room for the legend) with its bars centred.
    let x0 = 64.0;
    let gap = 1.0;
    let units = slots.len() as f64 + gap * groups as f64;
    let unit = (820.0 / units).min(56.0);
    let plot_w = (unit * units).max(420.0);
    let bar = unit * 0.8;
    let (panel_h, panel_gap, top) = (110.0, 22.0, 34.0);
    let metrics = [Metric::Sypd, Metric::Chsy, Metric::Cpl, Metric::Fn];
    let moves_h = 92.0;
    // Legend entries (test colour and origin), wrapped to the plot's width.
    let mut tests: Vec<(u32, &str)> = slots
        .iter()
        .map(|(_, t)| (t.test, t.origin.as_str()))
        .collect();
    tests.sort_unstable();
    tests.dedup();
    let mut legend = Vec::with_capacity(tests.len());
    let (mut lx, mut row) = (x0, 0usize);
    for (id, origin) in &tests {
        let label = format!("test {id} ({origin})");
        let width = 13.0 + text_width(&label, 11.0) + 14.0;
        if lx + width > x0 + plot_w && lx > x0 {
            (lx, row) = (x0, row + 1);
        }
        legend.push((lx, row, *id, label));
        lx += width;
    }
    let legend_h = 16.0 * (row as f64 + 1.0);
    let h = top + metrics.len() as f64 * (panel_h + panel_gap) + moves_h + 14.0 + legend_h;
    let mut svg = Svg::new(x0 + plot_w + 20.0, h);
    // Bar centres.
    let mut xs = Vec::with_capacity(slots.len());
    let mut group_spans: Vec<(u32, f64, f64)> = Vec::new();
    let mut cursor = x0 + (plot_w - unit * units) / 2.0 + unit * gap / 2.0;
    for it in &s.iterations {
        let start = cursor;
        for _ in &it.tests {
            xs.push(cursor + unit / 2.0);
            cursor += unit;
        }
        group_spans.push((it.iteration, start, cursor));
        cursor += unit * gap;
    }
    let best = s.best.as_ref().map(|b| (b.iteration, b.test));
    for (k, metric) in metrics.iter().enumerate() {
        let py0 = top + k as f64 * (panel_h + panel_gap);
        let values = slots.iter().flat_map(|(_, t)| {
            metric
                .of_test(t)
                .into_iter()
                .chain(t.runs.iter().filter_map(|r| metric.of_run(r)))
        });
        let vmax = values.fold(0.0_f64, f64::max);
        let vmax = if vmax > 0.0 { vmax * 1.25 } else { 1.0 };
        let y = Scale::new(0.0, vmax, py0 + panel_h, py0);
        for t in y.ticks(3) {
            svg.line(x0, y.at(t), x0 + plot_w, y.at(t), r##"stroke="#ddd""##);
            svg.text(x0 - 4.0, y.at(t) + 3.5, Anchor::End, "", &tick_label(t));
        }
        svg.vtext(
            x0 - 40.0,
            py0 + panel_h / 2.0,
            Anchor::Middle,
            "",
            metric.title(),
        );
        for ((iteration, t), &cx) in slots.iter().zip(&xs) {
            let colour = category(t.test as usize, n_tests);
            let left = cx - bar / 2.0;
            let base = py0 + panel_h;
            match (t.state, metric.of_test(t)) {
                (TestState::Failed, _) => {
                    svg.rect(
                        left,
                        py0 + 4.0,
                        bar,
                        panel_h - 4.0,
                        r##"fill="url(#failed)" stroke="#666""##,
                    );
                    if k == 0 {
                        svg.vtext(
                            cx + 3.5,
                            base - 4.0,
                            Anchor::Start,
                            r#"font-size="9""#,
                            "failed",
                        );
                    }
                }
                (_, Some(v)) => {
                    let is_best = best == Some((*iteration, t.test));
                    let stroke = if is_best {
                        format!(r#"stroke="{INK}" stroke-width="2.5""#)
                    } else {
                        String::new()
                    };
                    svg.rect(
                        left,
                        y.at(v),
                        bar,
                        base - y.at(v),
                        &format!(r#"fill="{colour}" {stroke}"#),
                    );
                    // Values on the bars when there is room: differences of a few per cent
                    // must be readable without a ruler.
                    let highest = t
                        .runs
                        .iter()
                        .filter_map(|r| metric.of_run(r))
                        .fold(v, f64::max);
                    let mut top_y = y.at(highest) - 5.0;
                    if bar >= 24.0 {
                        svg.text(
                            cx,
                            top_y,
                            Anchor::Middle,
                            r#"font-size="9""#,
                            &metric.format(v),
                        );
                        top_y -= 10.0;
                    }
                    if is_best {
                        svg.text(cx, top_y, Anchor::Middle, r#"font-size="12""#, "★");
                    }
                }
                (_, None) => {
                    svg.rect(
                        left,
                        base - 12.0,
                        bar,
                        12.0,
                        r##"fill="none" stroke="#666" stroke-dasharray="2 2""##,
                    );
                }
            }
            for r in &t.runs {
                if let Some(v) = metric.of_run(r) {
                    svg.circle(
                        cx,
                        y.at(v),
                        (bar / 6.0).clamp(1.2, 2.5),
                        &format!(r#"fill="white" stroke="{INK}" stroke-width="0.8""#),
                    );
                } else if r.state == RunState::Failed {
                    svg.text(
                        cx,
                        base - 2.0,
                        Anchor::Middle,
                        r#"font-size="10" font-weight="bold""#,
                        "×",
                    );
                }
            }
        }
        svg.rect(
            x0,
            py0,
            plot_w,
            panel_h,
            &format!(r#"fill="none" stroke="{INK}""#),
        );
    }
    // Iteration labels above, separators through all panels.
    let bottom = top + metrics.len() as f64 * (panel_h + panel_gap) - panel_gap;
    for (i, (iteration, a, b)) in group_spans.iter().enumerate() {
        svg.text(
            (a + b) / 2.0,
            top - 8.0,
            Anchor::Middle,
            r#"font-weight="bold""#,
            &format!("lb-iter {iteration}"),
        );
        if i > 0 {
            let x = a - unit * gap / 2.0;
            svg.line(
                x,
                top,
                x,
                bottom,
                r##"stroke="#999" stroke-dasharray="4 3""##,
            );
        }
    }
    // Test ids and moves under the bars.
    let label_size = (bar * 0.9).clamp(6.0, 10.0);
    for ((_, t), &cx) in slots.iter().zip(&xs) {
        svg.text(
            cx,
            bottom + 12.0,
            Anchor::Middle,
            &format!(r#"font-size="{label_size:.0}""#),
            &t.test.to_string(),
        );
        let text = match (&t.donor, &t.recipient) {
            (Some(d), Some(r)) => match t.next_step {
                Some(step) => format!("{d}→{r} {step}"),
                None => format!("{d}→{r} (stop)"),
            },
            _ => match t.state {
                TestState::Failed => "failed".into(),
                TestState::Pending | TestState::Running => "…".into(),
                _ => String::new(),
            },
        };
        if !text.is_empty() {
            svg.vtext(
                cx + label_size / 3.0,
                bottom + 18.0,
                Anchor::End,
                &format!(r#"font-size="{label_size:.0}""#),
                &text,
            );
        }
    }
    svg.text(
        x0 - 4.0,
        bottom + 12.0,
        Anchor::End,
        r#"font-size="9""#,
        "test",
    );
    // Legend: test colours.
    let ly0 = h - legend_h + 8.0;
    for (lx, row, id, label) in &legend {
        let ly = ly0 + 16.0 * *row as f64;
        svg.rect(
            *lx,
            ly - 9.0,
            10.0,
            10.0,
            &format!(r#"fill="{}""#, category(*id as usize, n_tests)),
        );
        svg.text(lx + 13.0, ly, Anchor::Start, "", label);
    }
    svg.raw(concat!(
        r##"<defs><pattern id="failed" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">"##,
        r##"<rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#666" stroke-width="2"/></pattern></defs>"##,
        "\n"
    ));
    svg.finish("The campaign: SYPD, CHSY, coupling cost and fittingness per lb-iteration and test")
}
