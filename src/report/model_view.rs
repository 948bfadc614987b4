//! Which model ranked a report's prediction, and how it does on the runs it knows.
//!
//! A report travels: colleagues read its SYPD without the command that made it. Standalone
//! curves often overstate the coupled speed (EC-Earth3 on MareNostrum 4: by 25-50 % where the
//! prediction recommends), so the report names the model that ranked, gives each proposal's
//! band under the calibrated model, and sets both models' predictions against every measured
//! run, so a reader sees how far to trust the numbers.

use serde::Serialize;

use crate::interp::Method;
use crate::model::{EstimateRequest, MeasuredRun, Model, ModelKind};
use crate::predict::{ComponentInput, Prediction};

/// The model behind a report's prediction views: the model, where it came from, and the
/// measured runs to set its predictions against.
#[derive(Debug, Clone, Copy)]
pub struct ReportModel<'a> {
    /// The model that ranks the prediction views (calibrated or standalone).
    pub model: &'a Model,
    /// Where the model came from: `fitted on the campaign's measured runs`, `from model.json`.
    pub source: &'a str,
    /// The measured runs to check its predictions against (those it was fitted on, if any).
    pub runs: &'a [MeasuredRun],
}

/// One proposal with the calibrated model's band.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    /// The proposal's rank in the top N, 1-based.
    pub rank: usize,
    /// PEs per balanced component, in component order.
    pub nproc: Vec<u32>,
    /// The calibrated model's coupled SYPD.
    pub sypd: f64,
    /// Lower end of the band: a new run's SYPD lies in `[low, high]` with about 90 %
    /// probability.
    pub low: f64,
    /// Upper end of the band.
    pub high: f64,
}

/// One measured run against both models.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The run's directory.
    pub run: String,
    /// The run's PEs per balanced component, in component order.
    pub nproc: Vec<u32>,
    /// The coupled SYPD the run measured.
    pub measured_sypd: f64,
    /// The standalone model: the slowest component's curve speed.
    pub standalone_sypd: f64,
    /// The report's model (calibrated, or standalone again), with its band.
    pub predicted_sypd: f64,
    /// Lower end of the report's model's band for this run (its length taken into account).
    pub low: f64,
    /// Upper end of that band.
    pub high: f64,
}

impl Check {
    /// Error of a prediction in per cent of the measured speed.
    pub fn error_pct(&self, predicted: f64) -> f64 {
        100.0 * (predicted - self.measured_sypd) / self.measured_sypd
    }

    /// Whether the measured speed lies in the band.
    pub fn inside(&self) -> bool {
        (self.low..=self.high).contains(&self.measured_sypd)
    }
}

/// The report's model section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSection {
    /// The model that ranked the prediction views.
    pub kind: ModelKind,
    /// One sentence on the model and where it came from.
    pub ranked_by: String,
    /// The top N with their bands (calibrated model only).
    pub bands: Vec<Band>,
    /// Every measured run whose PEs lie on the curves, against both models.
    pub checks: Vec<Check>,
}

impl ModelSection {
    /// Median absolute error of the report's model and of the standalone model, in per cent.
    pub fn median_errors(&self) -> Option<(f64, f64)> {
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            (n > 0).then(|| {
                if n % 2 == 1 {
                    v[n / 2]
                } else {
                    (v[n / 2 - 1] + v[n / 2]) / 2.0
                }
            })
        };
        let own = median(
            self.checks
                .iter()
                .map(|c| c.error_pct(c.predicted_sypd).abs())
                .collect(),
        )?;
        let alone = median(
            self.checks
                .iter()
                .map(|c| c.error_pct(c.standalone_sypd).abs())
                .collect(),
        )?;
        Some((own, alone))
    }
}

/// The section for `model` (`None`: the standalone model, no runs known).
pub fn section(
    model: Option<&ReportModel>,
    inputs: &[ComponentInput],
    interp: Method,
    prediction: Option<&Prediction>,
) -> ModelSection {
    let standalone = Model::Standalone;
    let chosen = model.map_or(&standalone, |m| m.model);
    let curves = inputs;
    let names: Vec<String> = curves.iter().map(|c| c.name().to_string()).collect();
    let runs = model.map_or(&[][..], |m| m.runs);
    let ranked_by = match (model, chosen) {
        (Some(m), Model::Calibrated(_)) => format!(
            "Ranked by the calibrated model ({}): each component's coupled-mode speed is its curve's, scaled by what the measured runs showed, and the coupled speed carries the coupling overhead they showed; bands hold a new run's SYPD with about 90 % probability.",
            m.source
        ),
        (Some(m), Model::Standalone) => format!(
            "Ranked by the standalone model: no measured run could calibrate one ({}), so the coupled speed is the slowest component's curve speed, which coupled runs often do not reach.",
            m.source
        ),
        (None, _) => "Ranked by the standalone model: the coupled speed is the slowest component's curve speed. Coupled runs often do not reach it; give measured runs (--measured) or a fitted model (--model) to calibrate.".into(),
    };
    let bands = match (chosen, prediction) {
        (Model::Calibrated(_), Some(p)) => p
            .top
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let e = chosen.estimate(&EstimateRequest::curves(curves, interp, &c.nproc));
                Band {
                    rank: i + 1,
                    nproc: c.nproc.clone(),
                    sypd: e.sypd,
                    low: e.low,
                    high: e.high,
                }
            })
            .collect(),
        _ => Vec::new(),
    };
    let on_curves = |nproc: &[u32]| {
        curves.iter().zip(nproc).all(|(c, &p)| {
            c.curve
                .as_ref()
                .is_none_or(|c| (c.first_nproc()..=c.last_nproc()).contains(&p))
        })
    };
    let checks = runs
        .iter()
        .filter_map(|run| {
            let nproc = run.nproc_of(&names)?;
            if !(on_curves(&nproc) && run.coupled_sypd.is_finite() && run.coupled_sypd > 0.0) {
                return None;
            }
            let own = chosen.estimate(
                &EstimateRequest::curves(curves, interp, &nproc).for_run(run.simulated_s),
            );
            let alone = standalone.estimate(&EstimateRequest::curves(curves, interp, &nproc));
            Some(Check {
                run: run.path.clone(),
                nproc,
                measured_sypd: run.coupled_sypd,
                standalone_sypd: alone.sypd,
                predicted_sypd: own.sypd,
                low: own.low,
                high: own.high,
            })
        })
        .collect();
    ModelSection {
        kind: chosen.kind(),
        ranked_by,
        bands,
        checks,
    }
}
