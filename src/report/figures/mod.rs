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

mod campaign;
mod curves;
mod front;
mod matrix;

pub use campaign::campaign;
pub use curves::curves;
pub use front::front;
pub use matrix::{matrix, thin_axis, MATRIX_MAX_AXIS};

/// Points (x, y) of one series.
type Series = Vec<(f64, f64)>;

/// The name of the `i`-th winner of the TTS_w intervals, in ascending TTS_w: `A` to `Z`, then
/// `AA`, `AB`, ... as spreadsheet columns are named, so no two winners share a name however
/// many there are. The report and the app (in lower case, the current one in capitals) name
/// winners this one way.
pub fn winner_letter(i: usize) -> String {
    let mut n = i + 1;
    let mut letters = Vec::new();
    while n > 0 {
        n -= 1;
        letters.push(char::from(b'A' + (n % 26) as u8));
        n /= 26;
    }
    letters.iter().rev().collect()
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

#[cfg(test)]
mod winner_tests {
    use super::winner_letter;

    #[test]
    fn winners_are_named_like_spreadsheet_columns_and_never_twice() {
        let names: Vec<String> = (0..3000).map(winner_letter).collect();
        assert_eq!(
            [
                &names[0],
                &names[25],
                &names[26],
                &names[51],
                &names[52],
                &names[701],
                &names[702]
            ],
            ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]
        );
        let unique: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }
}
