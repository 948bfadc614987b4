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
