//! Hand-made SVG: a string builder, linear scales with round ticks, and the viridis colour map.
//!
//! The report's figures are a few hundred shapes each; writing them directly keeps the page
//! small (no embedded fonts, no path-per-glyph text) and the text selectable and searchable.

use std::fmt::Write;

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as SVG writes it: one decimal is finer than a printed pixel.
fn n(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Text anchors: which point of a text its `x` is (SVG's `text-anchor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// `x` is where the text begins (left-aligned).
    Start,
    /// `x` is the text's centre.
    Middle,
    /// `x` is where the text ends (right-aligned, as tick labels left of an axis).
    End,
}

impl Anchor {
    fn as_str(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// An SVG document being written.
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
}

impl Svg {
    /// An empty document of `width` x `height` pixels.
    pub fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    /// Appends raw markup (already escaped).
    pub fn raw(&mut self, markup: &str) {
        self.body.push_str(markup);
    }

    /// A line from `(x1, y1)` to `(x2, y2)`; `style` is raw attributes (`stroke="#ddd"`).
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, style: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" {style}/>"#,
            n(x1),
            n(y1),
            n(x2),
            n(y2)
        );
    }

    /// A rectangle with top-left corner `(x, y)`, `w` wide and `h` high (negative sizes
    /// drawn as 0); `style` is raw attributes.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, style: &str) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" {style}/>"#,
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        );
    }

    /// A circle of radius `r` centred on `(x, y)`; `style` is raw attributes.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, style: &str) {
        let _ = writeln!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" {style}/>"#,
            n(x),
            n(y),
            n(r)
        );
    }

    /// A polyline through the points; nothing for fewer than two.
    pub fn polyline(&mut self, points: &[(f64, f64)], style: &str) {
        if points.len() < 2 {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        let _ = writeln!(
            self.body,
            r#"<polyline points="{}" fill="none" {style}/>"#,
            pts.join(" ")
        );
    }

    /// `text` (escaped here) at `(x, y)`, `y` being its baseline; `style` is raw attributes.
    pub fn text(&mut self, x: f64, y: f64, anchor: Anchor, style: &str, text: &str) {
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" text-anchor="{}" {style}>{}</text>"#,
            n(x),
            n(y),
            anchor.as_str(),
            escape(text)
        );
    }

    /// Text turned 90 degrees counter-clockwise about its anchor point (axis titles).
    pub fn vtext(&mut self, x: f64, y: f64, anchor: Anchor, style: &str, text: &str) {
        let _ = writeln!(
            self.body,
            r#"<text transform="translate({},{}) rotate(-90)" text-anchor="{}" {style}>{}</text>"#,
            n(x),
            n(y),
            anchor.as_str(),
            escape(text)
        );
    }

    /// The finished document. `label` becomes its accessible name.
    pub fn finish(self, label: &str) -> String {
        format!(
            concat!(
                r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" "#,
                r#"viewBox="0 0 {w} {h}" role="img" aria-label="{label}" "#,
                r#"font-family="sans-serif" font-size="11">"#,
                "\n<title>{label}</title>\n{body}</svg>"
            ),
            w = n(self.width),
            h = n(self.height),
            label = escape(label),
            body = self.body
        )
    }
}

/// A linear map from data to pixels.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// The data value mapped to `p0`.
    pub d0: f64,
    /// The data value mapped to `p1`.
    pub d1: f64,
    /// The pixel `d0` lands on.
    pub p0: f64,
    /// The pixel `d1` lands on (smaller than `p0` on a y axis, whose pixels grow downwards).
    pub p1: f64,
}

impl Scale {
    /// Maps `[d0, d1]` onto `[p0, p1]`; a zero-width domain is widened so nothing divides by 0.
    pub fn new(d0: f64, d1: f64, p0: f64, p1: f64) -> Scale {
        let (d0, d1) = if (d1 - d0).abs() < f64::EPSILON * d0.abs().max(1.0) {
            (d0 - 0.5 * d0.abs().max(1.0), d1 + 0.5 * d1.abs().max(1.0))
        } else {
            (d0, d1)
        };
        Scale { d0, d1, p0, p1 }
    }

    /// The pixel of data value `v` (outside the domain it extrapolates; nothing clamps).
    pub fn at(&self, v: f64) -> f64 {
        self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0)
    }

    /// Round tick values inside the domain (about `count` of them).
    pub fn ticks(&self, count: usize) -> Vec<f64> {
        nice_ticks(self.d0.min(self.d1), self.d0.max(self.d1), count)
    }
}

/// Round numbers (1, 2, 5 x 10^k apart) between `lo` and `hi`.
pub fn nice_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo || count == 0 {
        return Vec::new();
    }
    let raw = (hi - lo) / count as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A domain padded by `frac` of its width on both sides (and never empty).
pub fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    let w = (hi - lo).abs().max(hi.abs().max(1.0) * 1e-3);
    (lo - w * frac, hi + w * frac)
}

/// A tick label: few digits, no trailing zeros.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.1}"))
    } else {
        trim(format!("{v:.2}"))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Spreads labels along one axis so none overlaps: `want` are the preferred centres, `size`
/// each label's extent, `[lo, hi]` the room. Returns centres in the same order, each as close
/// to its wish as the others allow (a forward pass pushes apart, a backward pass pulls back in).
pub fn spread(want: &[f64], size: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..want.len()).collect();
    order.sort_by(|&a, &b| want[a].total_cmp(&want[b]));
    let mut pos = vec![0.0; want.len()];
    let mut edge = lo;
    for &i in &order {
        let c = want[i].max(edge + size[i] / 2.0);
        pos[i] = c;
        edge = c + size[i] / 2.0;
    }
    let mut edge = hi;
    for &i in order.iter().rev() {
        let c = pos[i].min(edge - size[i] / 2.0);
        pos[i] = c;
        edge = c - size[i] / 2.0;
    }
    pos
}

/// Rough width of a label in pixels at `font_px` (sans-serif averages about 0.6 em).
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars().count() as f64 * font_px * 0.6
}

/// Viridis (matplotlib's perceptually uniform, colour-blind-safe map) at nine anchors.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x48, 0x28, 0x78),
    (0x3e, 0x49, 0x89),
    (0x31, 0x68, 0x8e),
    (0x26, 0x82, 0x8e),
    (0x1f, 0x9e, 0x89),
    (0x35, 0xb7, 0x79),
    (0x6e, 0xce, 0x58),
    (0xfd, 0xe7, 0x25),
];

/// The viridis colour at `t` in [0, 1] (clamped), as `#rrggbb`.
pub fn viridis(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// Colour of the `i`-th of `n` categories: viridis without its palest end, so every colour
/// stands out on white paper.
pub fn category(i: usize, n: usize) -> String {
    if n <= 1 {
        return viridis(0.0);
    }
    viridis(0.85 * i as f64 / (n - 1) as f64)
}

/// Axis frame with ticks and labels for a plot area `[x0, x1] x [y0, y1]` (pixels, y0 top).
pub struct Axes {
    /// The horizontal scale: `p0` is the plot area's left edge, `p1` its right.
    pub x: Scale,
    /// The vertical scale: `p0` is the plot area's bottom edge, `p1` its top.
    pub y: Scale,
}

impl Axes {
    /// Draws the frame, grid lines, tick labels and axis titles.
    pub fn draw(&self, svg: &mut Svg, x_title: &str, y_title: &str) {
        let (x0, x1) = (self.x.p0, self.x.p1);
        let (y0, y1) = (self.y.p1, self.y.p0);
        for t in self.y.ticks(4) {
            let y = self.y.at(t);
            svg.line(x0, y, x1, y, r##"stroke="#ddd""##);
            svg.text(x0 - 4.0, y + 3.5, Anchor::End, "", &tick_label(t));
        }
        for t in self.x.ticks(6) {
            let x = self.x.at(t);
            svg.line(x, y1, x, y1 + 4.0, r##"stroke="#333""##);
            svg.text(x, y1 + 15.0, Anchor::Middle, "", &tick_label(t));
        }
        svg.rect(x0, y0, x1 - x0, y1 - y0, r##"fill="none" stroke="#333""##);
        svg.text((x0 + x1) / 2.0, y1 + 29.0, Anchor::Middle, "", x_title);
        svg.vtext(x0 - 38.0, (y0 + y1) / 2.0, Anchor::Middle, "", y_title);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let t = nice_ticks(13.2, 17.9, 5);
        assert!(t.iter().all(|v| (13.2..=17.9).contains(v)));
        assert_eq!(t, vec![14.0, 15.0, 16.0, 17.0]);
        assert!(nice_ticks(1.0, 1.0, 4).is_empty());
        assert!(nice_ticks(f64::NAN, 1.0, 4).is_empty());
    }

    #[test]
    fn spread_labels_do_not_overlap_and_stay_in_room() {
        let p = spread(&[10.0, 11.0, 12.0, 50.0], &[10.0; 4], 0.0, 100.0);
        for w in [(0, 1), (1, 2)] {
            assert!(p[w.1] - p[w.0] >= 10.0 - 1e-9, "{p:?}");
        }
        assert_eq!(p[3], 50.0);
        let q = spread(&[98.0, 99.0], &[10.0, 10.0], 0.0, 100.0);
        assert!(q[1] <= 95.0 && q[1] - q[0] >= 10.0 - 1e-9, "{q:?}");
    }

    #[test]
    fn viridis_ends_and_clamps() {
        assert_eq!(viridis(0.0), "#440154");
        assert_eq!(viridis(1.0), "#fde725");
        assert_eq!(viridis(7.0), "#fde725");
        assert_eq!(viridis(f64::NAN), "#440154");
        assert_eq!(viridis(0.5), "#26828e");
    }

    #[test]
    fn text_is_escaped() {
        let mut s = Svg::new(10.0, 10.0);
        s.text(0.0, 0.0, Anchor::Start, "", "a<b & \"c\"");
        let out = s.finish("x & y");
        assert!(out.contains("a&lt;b &amp; &quot;c&quot;"));
        assert!(out.contains(r#"aria-label="x &amp; y""#));
    }

    #[test]
    fn scales_map_and_survive_empty_domains() {
        let s = Scale::new(0.0, 10.0, 100.0, 200.0);
        assert_eq!(s.at(5.0), 150.0);
        let z = Scale::new(3.0, 3.0, 0.0, 10.0);
        assert!(z.at(3.0).is_finite());
    }
}
