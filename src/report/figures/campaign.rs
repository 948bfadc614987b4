//! The campaign panels (paper Figs. 8, 10, 11): each lb-iteration's tests by metric.

use super::*;

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
                } else if r.state == RunState::Failed && !r.cancelled_before_start() {
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
                TestState::Cancelled => "cancelled".into(),
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
