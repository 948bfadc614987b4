//! The cost-speed front: every configuration on it, with the cost axis the prediction used.

use super::*;

/// SYPD against the cost of the speed/cost front (CHSY, or the machine's bill the front was
/// computed on), the winners lettered and the one at the report's TTS_w filled.
pub fn front(f: &crate::report::FrontSection) -> String {
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
