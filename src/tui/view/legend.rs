//! The key table and the glyph legend as rows, from the things that draw them: the keys from
//! `BINDINGS` (crate::tui::keys) (through the key table in use), the glyphs from the
//! functions and constants the panes draw with, in colour and without. The `?` help shows
//! these rows, and `docs/src/app/keys.md` is their Markdown ([`markdown`]), so the help and the
//! docs cannot drift from the app.

use crate::tui::ranking::ModelKind;
use crate::tui::theme::{ColorDepth, Theme};
use crate::tui::trade_off::winner_label;
use autolb::watch::ActiveMode;

use super::curves::{
    calibrated_glyph, coupled_glyph, cursor_glyph, glyph, BAND_GLYPH, ERROR_BAR_GLYPH,
    MEASURED_GLYPH, OUTLIER_GLYPH, QUEUED_GLYPH,
};
use super::matrix::{rank_label, shade, NO_QUEUE_GLYPH, WORSE_GLYPH};
use super::status::{model_badge, watch_badge};

/// One glyph: what it looks like with colour, without, and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlyphRow {
    pub colour: String,
    pub mono: String,
    pub meaning: &'static str,
}

fn row(colour: &str, mono: &str, meaning: &'static str) -> GlyphRow {
    GlyphRow {
        colour: colour.to_string(),
        mono: mono.to_string(),
        meaning,
    }
}

/// Every glyph the panes and the status line draw, with its meaning.
pub fn glyph_rows() -> Vec<GlyphRow> {
    let colour = Theme::new(ColorDepth::TrueColor);
    let mono = Theme::new(ColorDepth::Mono);
    let shades: String = [0.0, 0.25, 0.5, 0.75].into_iter().map(shade).collect();
    let lines = |t: &Theme| (0..3).map(|i| glyph(t, i)).collect::<Vec<_>>().join(" ");
    let calibrated = (0..3).map(calibrated_glyph).collect::<Vec<_>>().join(" ");
    vec![
        row(
            &lines(&colour),
            &lines(&mono),
            "curves: each component's line (in its colour with colour)",
        ),
        row(
            cursor_glyph(&colour),
            cursor_glyph(&mono),
            "curves: the cursor's PEs (verticals)",
        ),
        row(
            coupled_glyph(&colour),
            coupled_glyph(&mono),
            "curves: a component's speed in a measured coupled run (quarter blocks without colour)",
        ),
        row(
            MEASURED_GLYPH,
            MEASURED_GLYPH,
            "curves: a measured point of a curve",
        ),
        row(
            &calibrated,
            &calibrated,
            "curves: each component's calibrated curve (1st, 2nd, 3rd component, then again)",
        ),
        row(
            BAND_GLYPH,
            "not drawn",
            "curves: the calibrated curve's 90 % band (quarter blocks, on charts of 16 lines or more)",
        ),
        row(
            ERROR_BAR_GLYPH,
            ERROR_BAR_GLYPH,
            "curves: a scaling campaign's spread at a count (one sd either side of the mean)",
        ),
        row(
            OUTLIER_GLYPH,
            OUTLIER_GLYPH,
            "curves: a scaling run left out as an outlier",
        ),
        row(
            QUEUED_GLYPH,
            QUEUED_GLYPH,
            "curves: a scaling count queued, not measured yet",
        ),
        row("red → green background", &shades, "matrix: FN from 0 to 1"),
        row(
            "grey background",
            WORSE_GLYPH,
            "matrix: worse than the base case",
        ),
        row(
            "dark grey background",
            NO_QUEUE_GLYPH,
            "matrix: fits no queue",
        ),
        row("blank", "blank", "matrix: over the budget"),
        row("1", "1", "matrix: top-N rank"),
        row(
            &rank_label(&[1, 3]).unwrap_or_default(),
            &rank_label(&[1, 3]).unwrap_or_default(),
            "matrix: rank 1 and more of the top N in one cell",
        ),
        row(
            "*",
            "*",
            "matrix, trade-off: marked (`1*`: a marked ranked cell)",
        ),
        row(
            "[] @ underlined reverse",
            "[] @ reverse",
            "matrix: the cursor (@ in narrow cells, reverse on a ranked cell)",
        ),
        row(
            "▸408-456",
            "▸408-456",
            "matrix: the row holding the cursor and the PEs it covers",
        ),
        row(
            "⣿ (faint)",
            "⣿",
            "trade-off: the configurations kept (Braille dots) and the front joined (Braille line)",
        ),
        row("•", "•", "trade-off: the speed/cost front"),
        row(
            &format!("{} {}", winner_label(0, false), winner_label(0, true)),
            &format!("{} {}", winner_label(0, false), winner_label(0, true)),
            "trade-off: wins some TTS_w (upper case: now), as in the strip under the slider",
        ),
        row("@", "@", "trade-off: the cursor (the matrix's)"),
        row("M", "M", "trade-off: a measured run"),
        row(
            model_badge(ModelKind::Standalone),
            model_badge(ModelKind::Standalone),
            "status: the standalone model ranks (M switches)",
        ),
        row(
            model_badge(ModelKind::Calibrated),
            model_badge(ModelKind::Calibrated),
            "status: the calibrated model ranks (M switches)",
        ),
        row(
            watch_badge(ActiveMode::Native),
            watch_badge(ActiveMode::Native),
            "status: watching with native notifications",
        ),
        row(
            watch_badge(ActiveMode::Poll),
            watch_badge(ActiveMode::Poll),
            "status: watching by polling (network file systems)",
        ),
        row(
            "★",
            "★",
            "best so far; ⚠ when it rests on fewer runs than asked",
        ),
    ]
}

/// Escapes a table cell (`|` would end it).
#[cfg(test)]
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The keys page: the default key table and the glyph legend, as Markdown.
#[cfg(test)]
pub fn markdown() -> String {
    use crate::tui::keys::{KeyTable, BINDINGS};
    let keys = KeyTable::default();
    let mut out = String::from(
        "# Keys and glyphs\n\n\
         <!-- Generated from the app's key table and drawing code; do not edit. \
         Regenerate with: AUTOLB_UPDATE_DOCS=1 cargo test --bin autolb keys_page -->\n\n\
         The `?` help shows the same rows. Keys can be rebound in `keys.toml` \
         (the action names are the first column).\n\n\
         ## Keys\n\n\
         | action | keys | what it does |\n\
         |---|---|---|\n",
    );
    for b in BINDINGS {
        out.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            b.name,
            cell(&keys.label(b.action)),
            cell(b.description)
        ));
    }
    out.push_str(
        "\n## Glyphs\n\n\
         | with colour | without colour (`--no-color`, `NO_COLOR`) | meaning |\n\
         |---|---|---|\n",
    );
    for g in glyph_rows() {
        out.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            cell(&g.colour),
            cell(&g.mono),
            cell(g.meaning)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::markdown;

    #[test]
    fn every_binding_and_glyph_is_on_the_page() {
        let page = markdown();
        for b in crate::tui::keys::BINDINGS {
            assert!(page.contains(&format!("| `{}` |", b.name)), "{}", b.name);
        }
        for g in super::glyph_rows() {
            assert!(page.contains(g.meaning), "{}", g.meaning);
        }
        assert!(page.contains("░▒▓█"), "the shades without colour");
    }

    /// The committed keys page is the generated one.
    #[test]
    fn keys_page_matches_the_key_table_and_the_glyphs() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/app/keys.md");
        let page = markdown();
        if std::env::var_os("AUTOLB_UPDATE_DOCS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &page).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == page,
            "{} is not the generated keys page; regenerate it with \
             AUTOLB_UPDATE_DOCS=1 cargo test --bin autolb keys_page",
            path.display()
        );
    }
}
