//! Colours, chosen for what the terminal can show.
//!
//! Truecolor is not universal over ssh and tmux, and crossterm does not downgrade `Color::Rgb`:
//! an unsupported RGB colour comes out as garbage. So the depth is detected (`NO_COLOR`,
//! `COLORTERM`, `TERM`) and every colour goes through [`Theme::rgb`], which maps it to the
//! xterm 256-colour cube or drops it. Without colour the matrix stays readable through glyphs
//! (shades, rank digits, marks), never through colour alone.

use ratatui::style::{Color, Modifier, Style};

/// What the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Mono,
}

impl ColorDepth {
    /// Detects the depth from the environment; `no_color` is the `--no-color` flag.
    pub fn detect(no_color: bool, env: impl Fn(&str) -> Option<String>) -> ColorDepth {
        if no_color || env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorDepth::Mono;
        }
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorDepth::TrueColor;
        }
        let term = env("TERM").unwrap_or_default();
        if term == "dumb" {
            return ColorDepth::Mono;
        }
        ColorDepth::Ansi256
    }

    pub fn name(self) -> &'static str {
        match self {
            ColorDepth::TrueColor => "truecolor",
            ColorDepth::Ansi256 => "256 colours",
            ColorDepth::Mono => "no colour",
        }
    }
}

/// Palette of the app at one colour depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub depth: ColorDepth,
}

/// Red -> yellow -> green (ColorBrewer RdYlGn ends and middle): low to high fittingness.
const FN_LOW: (u8, u8, u8) = (215, 48, 39);
const FN_MID: (u8, u8, u8) = (254, 224, 139);
const FN_HIGH: (u8, u8, u8) = (26, 152, 80);
const GREY: (u8, u8, u8) = (118, 118, 118);
/// Darker than [`GREY`]: a configuration no queue accepts.
const DARK_GREY: (u8, u8, u8) = (58, 58, 58);
/// Component colours in the curves (distinct in 256 colours as well).
const COMPONENT: [(u8, u8, u8); 5] = [
    (95, 175, 255),
    (255, 135, 95),
    (175, 135, 255),
    (95, 215, 135),
    (255, 215, 95),
];

impl Theme {
    pub fn new(depth: ColorDepth) -> Theme {
        Theme { depth }
    }

    /// An RGB colour at this depth: itself, its nearest xterm-256 entry, or none.
    pub fn rgb(&self, (r, g, b): (u8, u8, u8)) -> Option<Color> {
        match self.depth {
            ColorDepth::TrueColor => Some(Color::Rgb(r, g, b)),
            ColorDepth::Ansi256 => Some(Color::Indexed(xterm256(r, g, b))),
            ColorDepth::Mono => None,
        }
    }

    /// Background of a scored matrix cell: red (FN 0) through yellow to green (FN 1).
    pub fn fittingness(&self, fittingness: f64) -> Option<Color> {
        let t = if fittingness.is_finite() {
            fittingness.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let rgb = if t < 0.5 {
            lerp(FN_LOW, FN_MID, t * 2.0)
        } else {
            lerp(FN_MID, FN_HIGH, (t - 0.5) * 2.0)
        };
        self.rgb(rgb)
    }

    /// Background of a configuration worse than the base case.
    pub fn worse(&self) -> Option<Color> {
        self.rgb(GREY)
    }

    /// Background of a configuration that fits no queue.
    pub fn no_queue(&self) -> Option<Color> {
        self.rgb(DARK_GREY)
    }

    pub fn component(&self, i: usize) -> Option<Color> {
        self.rgb(COMPONENT[i % COMPONENT.len()])
    }

    /// Style with an optional foreground.
    pub fn fg(&self, color: Option<Color>) -> Style {
        color.map_or(Style::default(), |c| Style::default().fg(c))
    }

    /// The focused pane's border.
    pub fn focused(&self) -> Style {
        match self.depth {
            ColorDepth::Mono => Style::default().add_modifier(Modifier::BOLD),
            _ => Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        }
    }

    /// The best row of the iteration table.
    pub fn best(&self) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        match self.rgb(FN_HIGH) {
            Some(c) => s.fg(c),
            None => s,
        }
    }

    /// The selected row of a list or table.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    pub fn dim(&self) -> Style {
        match self.depth {
            ColorDepth::Mono => Style::default(),
            _ => Style::default().fg(Color::DarkGray),
        }
    }

    pub fn error(&self) -> Style {
        match self.depth {
            ColorDepth::Mono => Style::default().add_modifier(Modifier::BOLD),
            _ => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        }
    }
}

fn lerp(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> (u8, u8, u8) {
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Nearest entry of the xterm 6x6x6 colour cube or its grey ramp.
pub fn xterm256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest_level = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (nearest_level(r), nearest_level(g), nearest_level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let mean = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_i = ((mean.saturating_sub(8)) / 10).min(23);
    let grey = 8 + 10 * grey_i;
    let dist = |(x, y, z): (u32, u32, u32)| {
        let d = |a: u32, b: u8| (i64::from(a) - i64::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    let cube_d = dist((u32::from(cube.0), u32::from(cube.1), u32::from(cube.2)));
    let grey_d = dist((grey, grey, grey));
    if grey_d < cube_d {
        (232 + grey_i) as u8
    } else {
        cube_index as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn depth_detection() {
        assert_eq!(
            ColorDepth::detect(false, env(&[("COLORTERM", "truecolor")])),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::detect(false, env(&[("TERM", "screen-256color")])),
            ColorDepth::Ansi256
        );
        assert_eq!(
            ColorDepth::detect(false, env(&[("COLORTERM", "truecolor"), ("NO_COLOR", "1")])),
            ColorDepth::Mono
        );
        assert_eq!(ColorDepth::detect(true, env(&[])), ColorDepth::Mono);
    }

    #[test]
    fn xterm_mapping_hits_exact_cube_and_grey_entries() {
        assert_eq!(xterm256(0, 0, 0), 16);
        assert_eq!(xterm256(255, 0, 0), 196);
        assert_eq!(xterm256(0, 255, 0), 46);
        assert_eq!(xterm256(118, 118, 118), 243);
    }

    #[test]
    fn fittingness_runs_red_to_green() {
        let t = Theme::new(ColorDepth::TrueColor);
        assert_eq!(t.fittingness(0.0), Some(Color::Rgb(215, 48, 39)));
        assert_eq!(t.fittingness(1.0), Some(Color::Rgb(26, 152, 80)));
        assert_eq!(t.fittingness(f64::NAN), Some(Color::Rgb(215, 48, 39)));
        assert_eq!(Theme::new(ColorDepth::Mono).fittingness(0.7), None);
        assert!(matches!(
            Theme::new(ColorDepth::Ansi256).fittingness(1.0),
            Some(Color::Indexed(_))
        ));
    }
}
