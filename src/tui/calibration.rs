//! What the app shows of the calibrated model: the model itself and the measured coupled runs it
//! was fitted on. Everything here asks the library's model ([`autolb::model::Model`]) through
//! its public API; no formula of the model is repeated in the app.

use autolb::interp::Method;
use autolb::model::check::rel_error;
use autolb::model::{Estimate, EstimateRequest, MeasuredRun, Model};
use autolb::predict::ComponentInput;

/// The calibrated model and its training runs (empty when it came from `--model FILE`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calibration {
    pub model: Model,
    pub runs: Vec<MeasuredRun>,
}

/// One point of the calibrated curve: PEs, the calibrated SYPD and its band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandPoint {
    pub nproc: f64,
    pub sypd: f64,
    pub low: f64,
    pub high: f64,
}

impl Calibration {
    /// The speed component `name` actually ran at in each measured run (PEs, SYPD).
    pub fn coupled_points(&self, name: &str) -> Vec<(f64, f64)> {
        self.runs
            .iter()
            .filter_map(|r| r.component(name))
            .filter(|c| c.sypd.is_finite() && c.sypd > 0.0)
            .map(|c| (f64::from(c.nproc), c.sypd))
            .collect()
    }

    /// The calibrated curve of component `name` along its standalone `line` (PEs, SYPD).
    pub fn calibrated_line(&self, name: &str, line: &[(f64, f64)]) -> Vec<BandPoint> {
        line.iter()
            .filter(|(p, s)| p.is_finite() && s.is_finite() && *p >= 1.0)
            .map(|&(p, s)| {
                let f = self.model.speed(name, p.round() as u32, s);
                BandPoint {
                    nproc: p,
                    sypd: f.mid,
                    low: f.low,
                    high: f.high,
                }
            })
            .collect()
    }

    /// The curve the model learned for component `name` (one without a standalone curve),
    /// with its band, sampled across `span` (its PE range); empty when it learned none.
    pub fn learned_line(&self, name: &str, span: (f64, f64)) -> Vec<BandPoint> {
        const SAMPLES: usize = 200;
        let (a, b) = span;
        (0..=SAMPLES)
            .filter_map(|i| {
                let p = (a + (b - a) * i as f64 / SAMPLES as f64).round().max(1.0);
                let reference = self.model.reference_sypd(name, p as u32)?;
                let f = self.model.speed(name, p as u32, reference);
                Some(BandPoint {
                    nproc: p,
                    sypd: f.mid,
                    low: f.low,
                    high: f.high,
                })
            })
            .collect()
    }

    /// Coupled SYPDs of the training runs that ran exactly `nproc` of `names`.
    pub fn measured_at(&self, names: &[String], nproc: &[u32]) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.nproc_of(names).as_deref() == Some(nproc))
            .map(|r| r.coupled_sypd)
            .filter(|s| s.is_finite() && *s > 0.0)
            .collect()
    }
}

/// The prediction of `model` for `nproc` PEs of `inputs` (in their order); `None` when a PE
/// count lies outside its curve and the prediction is not a number.
pub fn estimate(
    model: &Model,
    inputs: &[ComponentInput],
    interp: Method,
    nproc: &[u32],
) -> Option<Estimate> {
    if nproc.len() != inputs.len() || nproc.contains(&0) {
        return None;
    }
    let e = model.estimate(&EstimateRequest::curves(inputs, interp, nproc));
    (e.sypd.is_finite() && e.sypd > 0.0).then_some(e)
}

/// Signed error of `model`'s prediction against a measured coupled SYPD, in per cent.
pub fn error_pct(
    model: &Model,
    inputs: &[ComponentInput],
    interp: Method,
    nproc: &[u32],
    measured: f64,
) -> Option<f64> {
    if !(measured.is_finite() && measured > 0.0) {
        return None;
    }
    estimate(model, inputs, interp, nproc).map(|e| 100.0 * rel_error(e.sypd, measured))
}
