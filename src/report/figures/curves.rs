//! The scalability curves (paper Figs. 7, 9, 12): measured points, the interpolation, the
//! model and the marked configurations of one component.

use super::*;

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
