//! A screen of the app as a self-contained HTML page, colours and modifiers kept: the source of
//! each picture of the app in the README and the guide (`docs/src/images/NAME.html`).
//!
//! Why HTML: it is text, so a picture's source diffs line by line in review and a test can hold
//! it equal to the app's screen (`picture_tests`); and a browser turns it into the PNG Markdown
//! shows (`docs/pictures.sh`, headless Chromium), with the fonts a terminal would use.
//!
//! The page is one `<pre>`, a line per screen row, with a `<span style>` per run of cells of
//! one style (run-length merged, so a recolour shows as a small diff). Colours are resolved here
//! to `#rrggbb` for a dark terminal: the 16 named colours as xterm draws them, the 256-colour
//! cube and grey ramp, RGB as it is; reversed, hidden and dim are applied, as a terminal does.
//!
//! A picture must keep the terminal's grid. Box drawing and block elements are in every
//! monospace font and fill their cell; Braille, sextants, arrows, stars often come from a
//! fallback font of another width, which would shift the rest of the line. So each of those sits
//! in a box exactly as wide as its cells (`ch` is one cell of the page's font). Test-only: the
//! app never writes HTML.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use ratatui::text::Span;

type Rgb = (u8, u8, u8);

/// Default foreground and background of the terminal drawn (a dark one).
pub const FOREGROUND: Rgb = (0xd0, 0xd0, 0xd0);
pub const BACKGROUND: Rgb = (0x1c, 0x1c, 0x1c);

/// The 16 named colours as xterm draws them, in ANSI order (black, red, ..., white).
const ANSI: [Rgb; 16] = [
    (0x00, 0x00, 0x00),
    (0xcd, 0x00, 0x00),
    (0x00, 0xcd, 0x00),
    (0xcd, 0xcd, 0x00),
    (0x00, 0x00, 0xee),
    (0xcd, 0x00, 0xcd),
    (0x00, 0xcd, 0xcd),
    (0xe5, 0xe5, 0xe5),
    (0x7f, 0x7f, 0x7f),
    (0xff, 0x00, 0x00),
    (0x00, 0xff, 0x00),
    (0xff, 0xff, 0x00),
    (0x5c, 0x5c, 0xff),
    (0xff, 0x00, 0xff),
    (0x00, 0xff, 0xff),
    (0xff, 0xff, 0xff),
];

/// Font size of the page in CSS pixels, about 14, chosen for DejaVu Sans Mono (the font the page
/// asks for first; a cell is 1233/2048 em) drawn at 2 device pixels per CSS pixel, as
/// `docs/pictures.sh` draws it. Chromium sizes a font in steps of 1/64 device pixel and
/// lays a box out in whole 1/64 CSS pixels, flooring its width: at 14 px a one-cell box is
/// 0.007 px narrower than a cell of text, and a row of Braille drifts by a pixel. At 13.785 px
/// the font is 1764/128 px, a cell of text 8.29702 px and its box 8.29688 px, and the grid
/// holds (`tests/it/pictures.rs` measures the drift when it makes the PNGs).
const FONT_PX: &str = "13.785";
/// Row height in CSS pixels: a hair under the font's height (1.164 em, 16.04 px), so box lines
/// join and coloured backgrounds leave no seam between rows.
const ROW_PX: u32 = 16;

/// The whole page: the screen of `buf` titled `title`, with `note` (what made it) as a
/// comment at the top.
pub fn page(buf: &Buffer, title: &str, note: &str) -> String {
    let (cols, rows) = (buf.area.width, buf.area.height);
    let bg = hex(BACKGROUND);
    let mut out = format!(
        "<!DOCTYPE html>\n\
         <!-- {note} -->\n\
         <html lang=\"en\">\n\
         <head>\n\
         <meta charset=\"utf-8\">\n\
         <title>{title}</title>\n\
         <style>\n\
         body {{ margin: 0; background: {bg}; }}\n\
         pre {{ display: inline-block; margin: 0; padding: 8px 10px; width: {cols}ch; height: {height}px; \
         color: {fg}; background: {bg}; font: {FONT_PX}px/{ROW_PX}px \"DejaVu Sans Mono\", monospace; }}\n\
         .g {{ display: inline-block; width: 1ch; height: {ROW_PX}px; vertical-align: top; }}\n\
         .g2 {{ display: inline-block; width: 2ch; height: {ROW_PX}px; vertical-align: top; }}\n\
         </style>\n\
         </head>\n\
         <body>\n\
         <pre data-cols=\"{cols}\" data-rows=\"{rows}\">\n",
        title = escape(title),
        note = note.replace("--", "- -"),
        height = u32::from(rows) * ROW_PX,
        fg = hex(FOREGROUND),
    );
    for row in 0..rows {
        out.push_str(&html_row(buf, row));
        out.push('\n');
    }
    out.push_str("</pre>\n</body>\n</html>\n");
    out
}

/// One screen row as HTML: runs of equal style merged into one span, unstyled trailing blanks
/// dropped (the `<pre>` has the screen's width).
pub fn html_row(buf: &Buffer, row: u16) -> String {
    let area = buf.area;
    let y = area.y + row;
    // (style, text) runs.
    let mut runs: Vec<(String, String)> = Vec::new();
    let mut x = area.x;
    while x < area.right() {
        let cell = &buf[(x, y)];
        let symbol = cell.symbol();
        // A wide symbol covers the cells after it, as the terminal draws it.
        let width = Span::raw(symbol).width().clamp(1, 2) as u16;
        let style = css(cell.fg, cell.bg, cell.modifier);
        let text = glyph(symbol, width);
        match runs.last_mut() {
            Some((s, t)) if *s == style => t.push_str(&text),
            _ => runs.push((style, text)),
        }
        x += width;
    }
    if let Some((style, text)) = runs.last_mut() {
        if style.is_empty() {
            text.truncate(text.trim_end_matches(' ').len());
        }
    }
    runs.into_iter()
        .map(|(style, text)| {
            if style.is_empty() {
                text
            } else {
                format!("<span style=\"{style}\">{text}</span>")
            }
        })
        .collect()
}

/// A symbol as HTML: escaped, and in a box of its cells' width unless it is sure to be one
/// cell wide in a monospace font (ASCII, Latin-1, box drawing, block elements).
fn glyph(symbol: &str, width: u16) -> String {
    let fits = symbol
        .chars()
        .all(|c| matches!(u32::from(c), 0x20..=0x7e | 0xa0..=0xff | 0x2500..=0x259f));
    if fits && width == 1 {
        escape(symbol)
    } else {
        let class = if width == 2 { "g2" } else { "g" };
        format!("<span class=\"{class}\">{}</span>", escape(symbol))
    }
}

/// Text escaped for HTML content.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The inline CSS of a cell's style: only what differs from the page's defaults, so an
/// unstyled cell has none.
pub fn css(fg: Color, bg: Color, modifier: Modifier) -> String {
    let mut fore = rgb(fg, FOREGROUND);
    let mut back = rgb(bg, BACKGROUND);
    if modifier.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fore, &mut back);
    }
    if modifier.contains(Modifier::DIM) {
        fore = mix(fore, back);
    }
    if modifier.contains(Modifier::HIDDEN) {
        fore = back;
    }
    let mut parts = Vec::new();
    if fore != FOREGROUND {
        parts.push(format!("color:{}", hex(fore)));
    }
    if back != BACKGROUND {
        parts.push(format!("background:{}", hex(back)));
    }
    if modifier.contains(Modifier::BOLD) {
        parts.push("font-weight:bold".into());
    }
    if modifier.contains(Modifier::ITALIC) {
        parts.push("font-style:italic".into());
    }
    let lines: Vec<&str> = [
        (Modifier::UNDERLINED, "underline"),
        (Modifier::CROSSED_OUT, "line-through"),
    ]
    .iter()
    .filter(|(m, _)| modifier.contains(*m))
    .map(|(_, l)| *l)
    .collect();
    if !lines.is_empty() {
        parts.push(format!("text-decoration:{}", lines.join(" ")));
    }
    parts.join(";")
}

/// The colour a dark xterm shows for `color`; `default` for `Reset`.
pub fn rgb(color: Color, default: Rgb) -> Rgb {
    match color {
        Color::Reset => default,
        Color::Black => ANSI[0],
        Color::Red => ANSI[1],
        Color::Green => ANSI[2],
        Color::Yellow => ANSI[3],
        Color::Blue => ANSI[4],
        Color::Magenta => ANSI[5],
        Color::Cyan => ANSI[6],
        Color::Gray => ANSI[7],
        Color::DarkGray => ANSI[8],
        Color::LightRed => ANSI[9],
        Color::LightGreen => ANSI[10],
        Color::LightYellow => ANSI[11],
        Color::LightBlue => ANSI[12],
        Color::LightMagenta => ANSI[13],
        Color::LightCyan => ANSI[14],
        Color::White => ANSI[15],
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => indexed(i),
    }
}

/// Entry `i` of the xterm 256-colour palette: the 16 named colours, the 6x6x6 cube, the grey
/// ramp (the inverse of `theme::xterm256`).
fn indexed(i: u8) -> Rgb {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        0..=15 => ANSI[usize::from(i)],
        16..=231 => {
            let k = usize::from(i - 16);
            (LEVELS[k / 36], LEVELS[k / 6 % 6], LEVELS[k % 6])
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

/// Halfway from `a` to `b`: a dim foreground on its background.
fn mix(a: Rgb, b: Rgb) -> Rgb {
    let m = |x: u8, y: u8| ((u16::from(x) + u16::from(y)) / 2) as u8;
    (m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    fn buffer(lines: &[&str]) -> Buffer {
        Buffer::with_lines(lines.iter().copied())
    }

    #[test]
    fn text_is_escaped() {
        let buf = buffer(&["a<b & c>\"d\""]);
        assert_eq!(html_row(&buf, 0), "a&lt;b &amp; c&gt;&quot;d&quot;");
        assert_eq!(escape("<&>"), "&lt;&amp;&gt;");
    }

    #[test]
    fn equal_styles_merge_into_one_span_and_trailing_blanks_go() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 1));
        let red = Style::default().fg(Color::Red);
        buf.set_string(0, 0, "ab", red);
        buf.set_string(2, 0, "cd", red);
        buf.set_string(4, 0, "e", Style::default());
        buf.set_string(5, 0, "f", red.add_modifier(Modifier::BOLD));
        assert_eq!(
            html_row(&buf, 0),
            "<span style=\"color:#cd0000\">abcd</span>e\
             <span style=\"color:#cd0000;font-weight:bold\">f</span>"
        );
        // Styled blanks at the end stay: they are coloured cells.
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf.set_string(2, 0, " ", Style::default().bg(Color::Blue));
        assert_eq!(
            html_row(&buf, 0),
            "  <span style=\"background:#0000ee\"> </span>"
        );
    }

    #[test]
    fn colours_map_to_the_xterm_palette() {
        assert_eq!(rgb(Color::Reset, FOREGROUND), FOREGROUND);
        assert_eq!(rgb(Color::Cyan, FOREGROUND), (0x00, 0xcd, 0xcd));
        assert_eq!(rgb(Color::DarkGray, FOREGROUND), (0x7f, 0x7f, 0x7f));
        assert_eq!(rgb(Color::Rgb(1, 2, 3), FOREGROUND), (1, 2, 3));
        assert_eq!(rgb(Color::Indexed(9), FOREGROUND), (0xff, 0, 0));
        assert_eq!(rgb(Color::Indexed(16), FOREGROUND), (0, 0, 0));
        assert_eq!(rgb(Color::Indexed(196), FOREGROUND), (255, 0, 0));
        assert_eq!(rgb(Color::Indexed(46), FOREGROUND), (0, 255, 0));
        assert_eq!(rgb(Color::Indexed(231), FOREGROUND), (255, 255, 255));
        assert_eq!(rgb(Color::Indexed(232), FOREGROUND), (8, 8, 8));
        assert_eq!(rgb(Color::Indexed(255), FOREGROUND), (238, 238, 238));
        // The theme's 256-colour choice of an RGB colour comes back within half the cube's
        // widest step (0 to 95) of it.
        for (r, g, b) in [
            (215, 48, 39),
            (26, 152, 80),
            (118, 118, 118),
            (95, 175, 255),
        ] {
            let back = indexed(super::super::theme::xterm256(r, g, b));
            let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).abs();
            assert!(
                d(r, back.0) <= 48 && d(g, back.1) <= 48 && d(b, back.2) <= 48,
                "{:?} came back as {back:?}",
                (r, g, b)
            );
        }
    }

    #[test]
    fn reversed_hidden_dim_and_lines_are_drawn_as_a_terminal_does() {
        assert_eq!(css(Color::Reset, Color::Reset, Modifier::empty()), "");
        assert_eq!(
            css(Color::Reset, Color::Reset, Modifier::REVERSED),
            "color:#1c1c1c;background:#d0d0d0"
        );
        assert_eq!(
            css(Color::Red, Color::Reset, Modifier::REVERSED),
            "color:#1c1c1c;background:#cd0000"
        );
        assert_eq!(
            css(Color::Red, Color::Reset, Modifier::HIDDEN),
            "color:#1c1c1c"
        );
        assert_eq!(
            css(Color::White, Color::Black, Modifier::DIM),
            "color:#7f7f7f;background:#000000"
        );
        assert_eq!(
            css(
                Color::Reset,
                Color::Reset,
                Modifier::UNDERLINED | Modifier::CROSSED_OUT | Modifier::ITALIC
            ),
            "font-style:italic;text-decoration:underline line-through"
        );
    }

    #[test]
    fn symbols_a_fallback_font_may_draw_keep_to_their_cells() {
        let buf = buffer(&["│█⣿★→a"]);
        assert_eq!(
            html_row(&buf, 0),
            "│█<span class=\"g\">⣿</span><span class=\"g\">★</span><span class=\"g\">→</span>a"
        );
        // A wide symbol takes two cells and hides the one after it.
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf.set_string(0, 0, "表x", Style::default());
        assert_eq!(html_row(&buf, 0), "<span class=\"g2\">表</span>x");
    }

    #[test]
    fn the_page_is_the_grid_with_its_size() {
        let buf = buffer(&["ab", "c "]);
        let page = page(&buf, "a <screen>", "made -- by a test");
        assert!(page.contains("<title>a &lt;screen&gt;</title>"));
        assert!(page.contains("<!-- made - - by a test -->"));
        assert!(page.contains("width: 2ch; height: 32px;"));
        assert!(page.contains("<pre data-cols=\"2\" data-rows=\"2\">\nab\nc\n</pre>"));
    }
}
