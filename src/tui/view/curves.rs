//! The curves pane: SYPD and CHSY against PEs per component; measured points marked, the
//! interpolation drawn as a line, the cursor configuration's PEs as vertical lines. ratatui has
//! no log axis, so the log scale plots log2(PEs) and writes PE labels.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};

use crate::tui::theme::{ColorDepth, Theme};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType};
use ratatui::Frame;

use super::fit::{fit, Item};
use super::pane_block;
use crate::tui::app::App;
use crate::tui::calibration::BandPoint;
use crate::tui::campaign_view::ScalingPoint;
use crate::tui::pane::Pane;
use crate::tui::ranking::CurveSeries;

/// Which quantity a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Sypd,
    Chsy,
}

/// Below this height the pane shows the SYPD chart alone (zoom shows both).
const BOTH_FROM: u16 = 14;

/// Below this chart height the calibrated band is left out (its dots would cover the curves).
const BAND_FROM: u16 = 16;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    if area.height < BOTH_FROM {
        chart(app, frame, area, Quantity::Sypd);
        return;
    }
    let [sypd_area, chsy_area] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    chart(app, frame, sypd_area, Quantity::Sypd);
    chart(app, frame, chsy_area, Quantity::Chsy);
}

fn chart(app: &App, frame: &mut Frame, area: Rect, q: Quantity) {
    let scale = if app.ui.log_scale { "log2 PEs" } else { "PEs" };
    let what = match q {
        Quantity::Sypd => "SYPD",
        Quantity::Chsy => "CHSY",
    };
    // The legend sits in the title (a border cell before the corner), beside the plot, never
    // on a curve; a narrow pane keeps the components' glyphs and drops the words first.
    let long = match q {
        Quantity::Sypd => format!("Curves: {what} vs {scale}"),
        Quantity::Chsy => format!("{what} vs {scale}"),
    };
    let mut items = vec![Item::new(long, 4).or_short(what)];
    for (i, c) in app.ranking.curves.iter().enumerate() {
        items.push(Item::styled(
            format!("{} {}", glyph(&app.ui.theme, i), c.name),
            app.ui.theme.fg(app.ui.theme.component(i)),
            9,
        ));
    }
    let scaling = &app.table.campaign.scaling;
    if !scaling.is_empty() {
        items.push(Item::new(format!("{ERROR_BAR_GLYPH} sd"), 3).or_short(ERROR_BAR_GLYPH));
        let any = |f: &dyn Fn(&ScalingPoint) -> bool| scaling.iter().flat_map(|c| &c.points).any(f);
        if any(&|p| !p.outliers.is_empty()) {
            items.push(Item::new(format!("{OUTLIER_GLYPH} outlier"), 3).or_short(OUTLIER_GLYPH));
        }
        if any(&|p| p.sypd.is_none() && p.queued > 0) {
            items.push(Item::new(format!("{QUEUED_GLYPH} queued"), 3).or_short(QUEUED_GLYPH));
        }
    }
    if app.ranking.calibration.is_some() {
        items.push(
            Item::new(format!("{} coupled", coupled_glyph(&app.ui.theme)), 6)
                .or_short(coupled_glyph(&app.ui.theme)),
        );
        let glyphs = (0..app.ranking.curves.len())
            .map(calibrated_glyph)
            .collect::<Vec<_>>()
            .join("");
        items.push(Item::new(format!("{glyphs} calibrated"), 5).or_short(glyphs));
    }
    let mut spans = fit(items, " ", usize::from(area.width).saturating_sub(5)).spans;
    spans.insert(0, Span::raw(" "));
    spans.push(Span::raw(" "));
    let title = Line::from(spans);
    let block = pane_block(&app.ui, Pane::Curves, title);
    let x = |p: f64| {
        if app.ui.log_scale {
            p.max(1.0).log2()
        } else {
            p
        }
    };
    let y = |p: f64, sypd: f64| match q {
        Quantity::Sypd => sypd,
        Quantity::Chsy => 24.0 * p / sypd,
    };
    // Points live here, before the datasets that borrow them.
    let lines: Vec<Vec<(f64, f64)>> = app
        .ranking
        .curves
        .iter()
        .map(|c| c.line.iter().map(|&(p, s)| (x(p), y(p, s))).collect())
        .collect();
    let measured: Vec<Vec<(f64, f64)>> = app
        .ranking
        .curves
        .iter()
        .map(|c| c.measured.iter().map(|&(p, s)| (x(p), y(p, s))).collect())
        .collect();
    // The calibrated model's side: each component's speed in the measured coupled runs, the
    // calibrated curve, and its band's edges (only where it is legible: colour and room).
    let calibrated: Vec<Vec<BandPoint>> = match &app.ranking.calibration {
        Some(cal) => app
            .ranking
            .curves
            .iter()
            .map(|c| {
                if cal.model.learned_curve(&c.name) {
                    cal.learned_line(&c.name, c.span)
                } else {
                    cal.calibrated_line(&c.name, &c.line)
                }
            })
            .collect(),
        None => Vec::new(),
    };
    let coupled: Vec<Vec<(f64, f64)>> = match &app.ranking.calibration {
        Some(cal) => app
            .ranking
            .curves
            .iter()
            .map(|c| {
                cal.coupled_points(&c.name)
                    .into_iter()
                    .map(|(p, s)| (x(p), y(p, s)))
                    .collect()
            })
            .collect(),
        None => Vec::new(),
    };
    // A scaling campaign's points: each kept mean's spread as a vertical bar (one sd either
    // side), the runs left out as outliers where they fell, and the counts queued but not yet
    // measured on the curve as it stands.
    // Per drawn curve, what `f` makes of its scaling points (nothing without them).
    let per_curve = |f: &PointsOf| -> Vec<Vec<(f64, f64)>> {
        app.ranking
            .curves
            .iter()
            .map(|c| match scaling.iter().find(|s| s.name == c.name) {
                Some(s) => f(c, &s.points),
                None => Vec::new(),
            })
            .collect()
    };
    // Each bar as its two ends, in pairs.
    let bar_ends = per_curve(&|_, points| {
        points
            .iter()
            .filter(|pt| pt.runs >= 2 && pt.sd > 0.0)
            .filter_map(|pt| {
                let (p, m) = (f64::from(pt.nproc), pt.sypd?);
                let low = (m - pt.sd).max(m * 0.05);
                Some([(x(p), y(p, low)), (x(p), y(p, m + pt.sd))])
            })
            .flatten()
            .collect()
    });
    let bars: Vec<Vec<[(f64, f64); 2]>> = bar_ends
        .iter()
        .map(|ends| ends.chunks_exact(2).map(|e| [e[0], e[1]]).collect())
        .collect();
    let outliers = per_curve(&|_, points| {
        points
            .iter()
            .flat_map(|pt| {
                let p = f64::from(pt.nproc);
                pt.outliers.iter().map(move |(_, v)| (x(p), y(p, *v)))
            })
            .collect()
    });
    let queued = per_curve(&|c, points| {
        points
            .iter()
            .filter(|pt| pt.sypd.is_none() && pt.queued > 0)
            .filter_map(|pt| {
                let p = f64::from(pt.nproc);
                Some((x(p), y(p, on_line(&c.line, p)?)))
            })
            .collect()
    });
    let show_band = area.height >= BAND_FROM && app.ui.theme.depth != ColorDepth::Mono;
    let cal_lines: Vec<Vec<(f64, f64)>> = calibrated
        .iter()
        .map(|c| c.iter().map(|b| (x(b.nproc), y(b.nproc, b.sypd))).collect())
        .collect();
    let band: Vec<Vec<(f64, f64)>> = calibrated
        .iter()
        .map(|c| {
            if !show_band {
                return Vec::new();
            }
            // Every fourth sample: the edges read as dotted lines, not a filled area.
            c.iter()
                .step_by(4)
                .flat_map(|b| {
                    [
                        (x(b.nproc), y(b.nproc, b.low)),
                        (x(b.nproc), y(b.nproc, b.high)),
                    ]
                })
                .collect()
        })
        .collect();
    let all = lines
        .iter()
        .chain(&measured)
        .chain(&coupled)
        .chain(&cal_lines)
        .chain(&band)
        .chain(&outliers)
        .chain(&queued)
        .flatten()
        .chain(bars.iter().flatten().flatten());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(a, b) in all {
        if a.is_finite() && b.is_finite() {
            x0 = x0.min(a);
            x1 = x1.max(a);
            y0 = y0.min(b);
            y1 = y1.max(b);
        }
    }
    if x0 > x1 {
        frame.render_widget(block, area);
        return;
    }
    let y0 = (y0 * 0.95).max(0.0);
    let y1 = y1 * 1.05;
    let cursor = app.cursor_nproc();
    let markers: Vec<[(f64, f64); 2]> = cursor
        .iter()
        .map(|&p| [(x(f64::from(p)), y0), (x(f64::from(p)), y1)])
        .collect();

    let mut datasets = Vec::new();
    for i in 0..app.ranking.curves.len() {
        let style = app.ui.theme.fg(app.ui.theme.component(i));
        datasets.push(
            Dataset::default()
                .marker(line_marker(&app.ui.theme, i))
                .graph_type(GraphType::Line)
                .style(style)
                .data(&lines[i]),
        );
        for bar in bars.get(i).into_iter().flatten() {
            datasets.push(
                Dataset::default()
                    .marker(Marker::Custom(ERROR_BAR_CHAR))
                    .graph_type(GraphType::Line)
                    .style(style)
                    .data(bar),
            );
        }
        datasets.push(
            Dataset::default()
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(style.add_modifier(Modifier::BOLD))
                .data(&measured[i]),
        );
        for (points, marker) in [(&outliers, OUTLIER_CHAR), (&queued, QUEUED_CHAR)] {
            if let Some(p) = points.get(i).filter(|p| !p.is_empty()) {
                datasets.push(
                    Dataset::default()
                        .marker(Marker::Custom(marker))
                        .graph_type(GraphType::Scatter)
                        .style(style.add_modifier(Modifier::BOLD))
                        .data(p),
                );
            }
        }
        if let Some(l) = cal_lines.get(i) {
            datasets.push(
                Dataset::default()
                    .marker(Marker::Custom(CALIBRATED_CHARS[i % CALIBRATED_CHARS.len()]))
                    .graph_type(GraphType::Line)
                    .style(style)
                    .data(l),
            );
        }
        if let Some(b) = band.get(i) {
            datasets.push(
                Dataset::default()
                    // Quadrants: with colour no line, point or vertical uses them.
                    .marker(Marker::Quadrant)
                    .graph_type(GraphType::Scatter)
                    .style(style)
                    .data(b),
            );
        }
        if let Some(c) = coupled.get(i) {
            datasets.push(
                Dataset::default()
                    .marker(coupled_marker(&app.ui.theme))
                    .graph_type(GraphType::Scatter)
                    .style(style.add_modifier(Modifier::BOLD))
                    .data(c),
            );
        }
        if let Some(m) = markers.get(i) {
            datasets.push(
                Dataset::default()
                    .marker(cursor_marker(&app.ui.theme))
                    .graph_type(GraphType::Line)
                    .style(style)
                    .data(m),
            );
        }
    }
    let pe_label = |v: f64| {
        let pes = if app.ui.log_scale { v.exp2() } else { v };
        Span::raw(format!("{pes:.0}"))
    };
    let y_label = |v: f64| match q {
        Quantity::Sypd => Span::raw(format!("{v:.1}")),
        Quantity::Chsy => Span::raw(format!("{v:.0}")),
    };
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .bounds([x0, x1])
                .style(Style::default())
                .labels(vec![pe_label(x0), pe_label((x0 + x1) / 2.0), pe_label(x1)]),
        )
        .y_axis(Axis::default().bounds([y0, y1]).labels(vec![
            y_label(y0),
            y_label((y0 + y1) / 2.0),
            y_label(y1),
        ]))
        .legend_position(None);
    frame.render_widget(chart, area);
}

/// The marker of component `i`'s line: Braille with colour (the finest); without colour each
/// component has its own glyph so the curves differ (`⣿`, `•`, `▄`, then Braille again).
fn line_marker(theme: &Theme, i: usize) -> Marker {
    if theme.depth != ColorDepth::Mono {
        return Marker::Braille;
    }
    match i % 3 {
        0 => Marker::Braille,
        1 => Marker::Dot,
        _ => Marker::HalfBlock,
    }
}

/// The cursor's verticals: dots with colour; without colour bars (`▄`), as the second
/// component's line uses dots.
fn cursor_marker(theme: &Theme) -> Marker {
    if theme.depth == ColorDepth::Mono {
        Marker::Bar
    } else {
        Marker::Dot
    }
}

/// The legend's sample of the cursor's verticals.
pub fn cursor_glyph(theme: &Theme) -> &'static str {
    match cursor_marker(theme) {
        Marker::Bar => "▄",
        _ => "•",
    }
}

/// Chart points made from one drawn curve and its scaling points.
type PointsOf<'a> = dyn Fn(&CurveSeries, &[ScalingPoint]) -> Vec<(f64, f64)> + 'a;

/// A scaling campaign's error bar (one sd either side of a count's mean), its outlier runs
/// and its queued counts: characters of their own, legible without colour.
const ERROR_BAR_CHAR: char = '│';
const OUTLIER_CHAR: char = '×';
const QUEUED_CHAR: char = '○';
/// The legend's samples of the three.
pub const ERROR_BAR_GLYPH: &str = "│";
pub const OUTLIER_GLYPH: &str = "×";
pub const QUEUED_GLYPH: &str = "○";

/// The SYPD of a drawn curve (`(PEs, SYPD)` samples, ascending) at `p` PEs, linearly between
/// samples; `None` outside them.
fn on_line(line: &[(f64, f64)], p: f64) -> Option<f64> {
    let k = line.partition_point(|&(q, _)| q < p);
    let hi = line.get(k)?;
    if hi.0 == p {
        return Some(hi.1);
    }
    let lo = line.get(k.checked_sub(1)?)?;
    Some(lo.1 + (hi.1 - lo.1) * (p - lo.0) / (hi.0 - lo.0))
}

/// The calibrated curve of each component, one cell per character: `+`, `~`, `=`, then again.
/// A character of its own per component, so the components' calibrated curves differ without
/// colour too, and ASCII, which every terminal font has. (ratatui's sextants are finer, but
/// sit in a Unicode block of 2020 that many fonts of SSH clients and login nodes lack, and
/// look the same for every component.)
const CALIBRATED_CHARS: [char; 3] = ['+', '~', '='];

/// The legend's sample of component `i`'s calibrated curve.
pub fn calibrated_glyph(i: usize) -> &'static str {
    ["+", "~", "="][i % CALIBRATED_CHARS.len()]
}

/// The legend's sample of a measured point (ratatui's block marker).
pub const MEASURED_GLYPH: &str = "█";

/// The legend's sample of the calibrated curve's band (quadrants, drawn with colour only).
pub const BAND_GLYPH: &str = "▖";

/// The measured coupled-mode points: bars (`▄`) with colour; without colour quadrants (`▗`), as
/// the cursor's verticals use bars there.
fn coupled_marker(theme: &Theme) -> Marker {
    if theme.depth == ColorDepth::Mono {
        Marker::Quadrant
    } else {
        Marker::Bar
    }
}

/// The legend's sample of the coupled-mode points.
pub fn coupled_glyph(theme: &Theme) -> &'static str {
    match coupled_marker(theme) {
        Marker::Bar => "▄",
        _ => "▗",
    }
}

/// The legend's sample of component `i`'s line.
pub fn glyph(theme: &Theme, i: usize) -> &'static str {
    match line_marker(theme, i) {
        Marker::Dot => "•",
        Marker::HalfBlock => "▀",
        _ => "⣿",
    }
}
