//! A campaign's result, computed once: the answer (the best measured configuration with the
//! means of every run that measured it), each test's row, the prediction's top N with the
//! model that made it, and how each predicted configuration compares with the answer.
//!
//! `campaign status`, `campaign best`, the report and the terminal app render this value and
//! derive none of it themselves: when each view chose its own best or ranked its own top N,
//! they disagreed in ways nobody could see (a prediction's #1 shown beside the measured best,
//! on another FN scale, with no word that it was never run). Every predicted configuration
//! here carries the model that predicted it and its comparison with the answer, so a view
//! that shows one beside the other has the words at hand.

use std::path::Path;

mod rerun;
pub use rerun::rerun_file;

use serde::{Deserialize, Serialize};

use super::status::{NameMap, Status, TestView};
use super::{CampaignError, State};
use crate::curve::Curve;
use crate::model::Model;
use crate::predict::{ComponentInput, Prediction, Problem, ProblemOptions, Settings};

/// A campaign's whole result: its rows, its answer and its prediction
/// (`campaign status --json`: the status's keys, then `answer` and `predicted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignAnswer {
    /// Every test's row, the counts and the driver: the iteration table.
    #[serde(flatten)]
    pub status: Status,
    /// The best measured configuration (`None` before any run succeeded, and in a scaling
    /// campaign, whose runs are no configurations).
    #[serde(default)]
    pub answer: Option<Answer>,
    /// The prediction's top N with its model, each compared with the answer; `None` while the
    /// campaign has no curve to predict from.
    #[serde(default)]
    pub predicted: Option<PredictedTop>,
    /// Why there is no prediction, when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The campaign's answer: the best measured configuration and the means of every run that
/// measured it (`campaign best --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The configuration as every view writes it: `oifs 191x4 + nemo 259`.
    pub config: String,
    /// Cores per component (ranks x threads), as `campaign status --json` counts them.
    pub nproc: NameMap<u32>,
    /// MPI ranks per component.
    pub ranks: NameMap<u32>,
    /// OpenMP threads per rank of each component (1 for pure MPI).
    pub threads: NameMap<u32>,
    /// Mean coupled SYPD over every run that measured it.
    pub sypd: f64,
    /// Mean CHSY over those runs.
    pub chsy: f64,
    /// Mean coupling cost over those runs, a fraction.
    pub coupling_cost: f64,
    /// Its FN on the campaign's one scale (see `fn_scale`).
    pub fittingness: f64,
    /// What the FN is normalised over.
    pub fn_scale: String,
    /// All its cores, the extra PEs included.
    pub total_nproc: u32,
    /// How many runs its means rest on.
    pub runs: u32,
    /// Those runs' ids, first to last.
    pub run_ids: Vec<String>,
    /// Every row whose runs the means pool, as `[iteration, test]`.
    pub measured_in: Vec<[u32; 2]>,
    /// Where it was measured, in words (`iteration 1, test 4`, or `mean of 3 runs in ...`).
    pub where_measured: String,
    /// The campaign still runs: the answer may change.
    pub provisional: bool,
}

/// The prediction's top N, the model that made it, and the scale of its FN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedTop {
    /// The model in words: `the calibrated model (fitted on 12 measured runs)`, or `the curves
    /// alone (standalone model)`.
    pub model: String,
    /// The TTS_w it ranked at (the campaign's).
    pub tts_w: f64,
    /// What its FN is normalised over: the prediction's own landscape, not the campaign's
    /// measured configurations, so its FN is never compared with the answer's.
    pub fn_scale: String,
    /// Best first.
    pub configs: Vec<PredictedConfig>,
}

/// One predicted configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedConfig {
    /// Its rank in the top N (1-based).
    pub rank: u32,
    /// As every view writes it: `oifs 191x4 + nemo 259`.
    pub config: String,
    /// Cores per component.
    pub nproc: NameMap<u32>,
    /// Predicted coupled SYPD.
    pub sypd: f64,
    /// Predicted CHSY.
    pub chsy: f64,
    /// Its FN on the prediction's scale ([`PredictedTop::fn_scale`]).
    pub fittingness_predicted: f64,
    /// All its cores, the extra PEs included.
    pub total_nproc: u32,
    /// How it compares with the answer (`None` without one).
    pub against: Option<Against>,
}

/// How a predicted configuration compares with the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// It is the answer's configuration.
    pub is_answer: bool,
    /// Its predicted SYPD against the answer's measured SYPD, per cent (positive: predicted
    /// faster).
    pub sypd_pct: f64,
    /// Its predicted CHSY against the answer's measured CHSY, per cent (positive: predicted
    /// dearer).
    pub chsy_pct: f64,
    /// What the campaign measured of it, when it ran it.
    pub measured: Option<MeasuredFigures>,
    /// Its measured SYPD against the answer's, per cent, when it ran.
    #[serde(default)]
    pub measured_sypd_pct: Option<f64>,
}

/// The pooled means of a configuration the campaign ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasuredFigures {
    /// Mean SYPD over its measured runs.
    pub sypd: f64,
    /// Mean CHSY over them.
    pub chsy: f64,
    /// How many runs.
    pub runs: u32,
}

impl Answer {
    /// The answer of a status: its best, with ranks, threads and the runs it pools.
    pub fn of(status: &Status) -> Option<Answer> {
        let b = status.best.as_ref()?;
        let threads: Vec<u32> = (0..status.components.len())
            .map(|c| status.threads_of(c))
            .collect();
        let nproc: Vec<u32> = b.nproc.values().copied().collect();
        let run_ids = b
            .measured_in
            .iter()
            .filter_map(|&[i, t]| row(status, i, t))
            .flat_map(|t| t.runs.iter())
            .filter(|r| r.sypd.is_some() && r.state == super::RunState::Done)
            .map(|r| r.run.clone())
            .collect();
        Some(Answer {
            config: status.configuration_text(&nproc, " + "),
            ranks: NameMap::zip(
                &status.components,
                nproc.iter().zip(&threads).map(|(&p, &t)| p / t.max(1)),
            ),
            threads: NameMap::zip(&status.components, threads),
            nproc: b.nproc.clone(),
            sypd: b.sypd,
            chsy: b.chsy,
            coupling_cost: b.coupling_cost,
            fittingness: b.fittingness,
            fn_scale: fn_scale(status),
            total_nproc: b.total_nproc,
            runs: b.runs,
            run_ids,
            measured_in: b.measured_in.clone(),
            where_measured: b.measured_in_text(),
            provisional: !status.done,
        })
    }

    /// Cores per component, in component order.
    pub fn cores(&self) -> Vec<u32> {
        self.nproc.values().copied().collect()
    }

    /// How a configuration predicted at `sypd` and `chsy` compares with the answer; what the
    /// campaign measured of it comes from `status`.
    pub fn against(&self, status: &Status, nproc: &[u32], sypd: f64, chsy: f64) -> Against {
        self.compare(nproc, sypd, chsy, measured_figures(status, nproc))
    }

    /// [`Answer::against`] with what the campaign measured of the configuration given (a
    /// viewer that keeps [`measured_configurations`] rather than the whole status).
    pub fn compare(
        &self,
        nproc: &[u32],
        sypd: f64,
        chsy: f64,
        measured: Option<MeasuredFigures>,
    ) -> Against {
        Against {
            is_answer: nproc == self.cores().as_slice(),
            sypd_pct: 100.0 * (sypd / self.sypd - 1.0),
            chsy_pct: 100.0 * (chsy / self.chsy - 1.0),
            measured_sypd_pct: measured.map(|m| 100.0 * (m.sypd / self.sypd - 1.0)),
            measured,
        }
    }

    /// The answer as EC-Earth4's experiment-configuration fragment (the het-job form
    /// `predict --emit ecearth4` writes: each component's `ntasks`, `ntasks_per_node` on the
    /// campaign's machine and `omp_num_threads`); an error for a component name YAML would not
    /// read back as a string.
    pub fn ecearth4(&self, status: &Status) -> Result<String, String> {
        use crate::predict::emit_ecearth4::{fragment, resources};
        let cores_per_node = status
            .cost_model
            .as_ref()
            .and_then(|m| m.machine.as_ref())
            .map(|m| m.cores_per_node);
        // The resources `predict --emit ecearth4` and the app's `y` write, from the same code.
        let names: Vec<String> = self.ranks.0.iter().map(|(name, _)| name.clone()).collect();
        let threads: Vec<u32> = self.threads.values().copied().collect();
        let cores: Vec<u32> = self
            .ranks
            .0
            .iter()
            .zip(&threads)
            .map(|((_, ranks), t)| ranks * t)
            .collect();
        let components = resources(&names, &cores, &threads, cores_per_node);
        let comment = format!(
            "autolb campaign: the best configuration measured, {}\n\
             {:.2} SYPD, {:.0} CHSY: the mean of {} run{} ({})",
            self.config,
            self.sypd,
            self.chsy,
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.where_measured
        );
        fragment(&components, &comment)
    }

    /// `oifs 191x4 + nemo 259, 11.30 SYPD, 912 CHSY, FN 0.962`.
    pub fn text(&self) -> String {
        format!(
            "{}, {:.2} SYPD, {:.0} CHSY, FN {:.3}",
            self.config, self.sypd, self.chsy, self.fittingness
        )
    }
}

impl Against {
    /// `predicted 3.2 % slower and 1.0 % cheaper than the best measured; not measured`, or,
    /// for a configuration the campaign ran, what it measured; `the best measured itself` for
    /// the answer's own configuration.
    pub fn text(&self) -> String {
        if self.is_answer {
            return "the best measured itself".into();
        }
        let speed = pct_word(self.sypd_pct, "faster", "slower", "as fast");
        let cost = pct_word(-self.chsy_pct, "cheaper", "dearer", "as cheap");
        let compared = compared_words(&speed, &cost);
        let measured = match &self.measured {
            None => "not measured".to_string(),
            Some(m) => format!(
                "measured: {:.2} SYPD, {:.0} CHSY over {} run{} ({}, a lower FN)",
                m.sypd,
                m.chsy,
                m.runs,
                if m.runs == 1 { "" } else { "s" },
                compared_words(
                    &pct_word(
                        self.measured_sypd_pct.unwrap_or(0.0),
                        "faster",
                        "slower",
                        "as fast"
                    ),
                    ""
                ),
            ),
        };
        format!("predicted {compared}; {measured}")
    }

    /// The short form for a narrow line: `pred. -3.2 % SYPD, not measured`.
    pub fn short_text(&self) -> String {
        if self.is_answer {
            return "= best measured".into();
        }
        let measured = match &self.measured {
            None => "not measured".to_string(),
            Some(m) => format!("measured {:.2}", m.sypd),
        };
        format!("pred. {:+.1} % SYPD vs best, {measured}", self.sypd_pct)
    }
}

impl PredictedConfig {
    /// `predicted #1 by the calibrated model (...): oifs 838 + nemo 274, 10.94 SYPD, 1012
    /// CHSY, FN 0.887 on the prediction's scale; predicted 3.2 % slower ...`.
    pub fn text(&self, model: &str) -> String {
        let mut s = format!(
            "predicted #{} by {model}: {}, {:.2} SYPD, {:.0} CHSY, FN {:.3} on the prediction's scale",
            self.rank, self.config, self.sypd, self.chsy, self.fittingness_predicted
        );
        if let Some(a) = &self.against {
            s.push_str("; ");
            s.push_str(&a.text());
        }
        s
    }
}

/// `3.2 % slower and 1.0 % cheaper than the best measured`, with `as` where a figure is the
/// same (`as fast as the best measured and 1.0 % cheaper`); `cost` may be empty.
fn compared_words(speed: &str, cost: &str) -> String {
    const BEST: &str = "the best measured";
    let same = |w: &str| w.starts_with("as ");
    match (same(speed), cost) {
        (true, "") => format!("{speed} as {BEST}"),
        (false, "") => format!("{speed} than {BEST}"),
        (true, c) if same(c) => format!("{speed} and {c} as {BEST}"),
        (true, c) => format!("{speed} as {BEST} and {c}"),
        (false, c) if same(c) => format!("{speed} than {BEST} and {c}"),
        (false, c) => format!("{speed} and {c} than {BEST}"),
    }
}

fn pct_word(v: f64, up: &str, down: &str, same: &str) -> String {
    if v.abs() < 0.05 {
        same.to_string()
    } else if v > 0.0 {
        format!("{v:.1} % {up}")
    } else {
        format!("{:.1} % {down}", -v)
    }
}

/// What the campaign's FN is normalised over, in words.
fn fn_scale(status: &Status) -> String {
    match status.cold_start.as_ref().and_then(|c| c.normalisation) {
        Some(_) => format!(
            "normalised over the model's predicted landscape the cold start compared on, at TTS_w {:.2}",
            status.tts_w
        ),
        None => format!(
            "normalised over every configuration the campaign measured, at TTS_w {:.2}",
            status.tts_w
        ),
    }
}

/// The row of iteration `i`, test `t`.
fn row(status: &Status, i: u32, t: u32) -> Option<&TestView> {
    status
        .iterations
        .iter()
        .find(|it| it.iteration == i)?
        .tests
        .iter()
        .find(|r| r.test == t)
}

/// Every configuration the campaign measured, with the means over all its runs.
pub fn measured_configurations(status: &Status) -> Vec<(Vec<u32>, MeasuredFigures)> {
    let mut out: Vec<(Vec<u32>, MeasuredFigures)> = Vec::new();
    for t in status.iterations.iter().flat_map(|it| &it.tests) {
        let nproc: Vec<u32> = t.nproc.values().copied().collect();
        if out.iter().any(|(n, _)| *n == nproc) {
            continue;
        }
        if let Some(m) = measured_figures(status, &nproc) {
            out.push((nproc, m));
        }
    }
    out
}

/// The means over every measured run of a configuration, whichever rows ran it.
pub fn measured_figures(status: &Status, nproc: &[u32]) -> Option<MeasuredFigures> {
    let (mut runs, mut sypd, mut chsy) = (0u32, 0.0, 0.0);
    for t in status.iterations.iter().flat_map(|it| &it.tests) {
        if !t.nproc.values().copied().eq(nproc.iter().copied()) {
            continue;
        }
        for r in &t.runs {
            if let (super::RunState::Done, Some(s), Some(c)) = (r.state, r.sypd, r.chsy) {
                runs += 1;
                sypd += s;
                chsy += c;
            }
        }
    }
    (runs > 0).then(|| MeasuredFigures {
        sypd: sypd / f64::from(runs),
        chsy: chsy / f64::from(runs),
        runs,
    })
}

/// A campaign's prediction: the curves it predicts from (the copies in its directory), the
/// settings frozen at `init`, the model fitted on its measured runs, and the ranking.
pub struct CampaignPrediction {
    /// Per balanced component: its curve (the campaign's copy) and the PE limits of the campaign.
    pub inputs: Vec<ComponentInput>,
    /// The prediction settings frozen at `init` (budget, step, TTS_w, top N, interpolation).
    pub settings: Settings,
    /// The model: calibrated on the campaign's measured runs, or standalone while none is
    /// usable.
    pub model: Model,
    /// The model in words.
    pub model_text: String,
    /// The measured runs the model was fitted on.
    pub runs: Vec<crate::model::MeasuredRun>,
    /// Why runs were left out, and what the fit noticed.
    pub notes: Vec<String>,
}

/// The prediction inputs of a campaign: each component's curve with the campaign's limits (the
/// curve its state measured in a scaling campaign or a cold start, else its copy in `DIR`),
/// and the settings frozen at `init` (states written before they were kept: the step is half
/// the initial step, the campaign's default relation).
pub fn campaign_inputs(
    state: &State,
    dir: &Path,
) -> Result<(Vec<ComponentInput>, Settings), crate::curve::CurveError> {
    let mut inputs = Vec::new();
    for (i, c) in state.components.iter().enumerate() {
        // A campaign that measures its curves predicts from what its state measured; the
        // file is its copy for other tools, and may be stale or edited.
        let curve = match super::strategy::scaling::output::measured_curve(state, i) {
            Some(curve) => curve,
            None => Curve::load(c.name.clone(), &dir.join(&c.curve))?,
        };
        inputs.push(ComponentInput {
            name: c.name.clone(),
            curve: Some(curve),
            allowed: c.allowed.clone(),
            min_nproc: Some(c.low),
            max_nproc: Some(c.high),
            thread_curves: Vec::new(),
        });
    }
    let s = &state.settings;
    let settings = Settings {
        max_nproc: s.max_nproc,
        step: s.step.unwrap_or((s.initial_step / 2).max(1)),
        tts_w: s.tts_w,
        top: s.top.unwrap_or(Settings::default().top),
        interp: s.interp.unwrap_or_default(),
        extra_pes: s.extra_pes,
    };
    Ok((inputs, settings))
}

/// Where a campaign's calibrated model comes from, in words.
pub fn fitted_on(runs: usize) -> String {
    format!("fitted on the campaign's {runs} measured runs")
}

/// A model in words, as every view names the model beside a prediction: `the calibrated model
/// (SOURCE)`, or `the curves alone (standalone model)`.
pub fn model_text(model: &Model, source: &str) -> String {
    if model.is_calibrated() {
        format!("the calibrated model ({source})")
    } else {
        "the curves alone (standalone model)".into()
    }
}

impl CampaignPrediction {
    /// The campaign's curves and settings with the model fitted on its measured runs.
    pub fn load(state: &State, dir: &Path) -> Result<CampaignPrediction, crate::curve::CurveError> {
        let (inputs, settings) = campaign_inputs(state, dir)?;
        let (runs, mut notes) = super::measured::campaign_runs_of(state, dir);
        let (model, fit_notes) = Model::fit(&inputs, settings.interp, &runs);
        notes.extend(fit_notes);
        let model_text = model_text(&model, &fitted_on(runs.len()));
        Ok(CampaignPrediction {
            inputs,
            settings,
            model,
            model_text,
            runs,
            notes,
        })
    }

    /// The problem over the campaign's curves with its model.
    pub fn problem(&self) -> Result<Problem, crate::predict::PredictError> {
        Problem::build(
            &self.inputs,
            &self.settings,
            ProblemOptions {
                model: Some(&self.model),
                cost_model: None,
            },
        )
    }

    /// The top N at TTS_w `tts_w`: a calibrated model ranks with its full estimate (the
    /// coupling overhead included), as `predict --measured` ranks.
    pub fn rank(&self, problem: &Problem, tts_w: f64, top: usize) -> Prediction {
        crate::predict::full_model::rank(problem, &self.model, &self.inputs, tts_w, top.max(1))
    }
}

impl PredictedTop {
    /// The prediction `p` (ranked by `model`) compared with the answer of `status`.
    pub fn of(p: &Prediction, model: &str, status: &Status, answer: Option<&Answer>) -> Self {
        PredictedTop {
            model: model.to_string(),
            tts_w: p.tts_w,
            fn_scale: "normalised over the predicted configurations within the budget (the prediction's scale, not the campaign's)".into(),
            configs: p
                .top
                .iter()
                .enumerate()
                .map(|(i, c)| PredictedConfig {
                    rank: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    config: status.configuration_text(&c.nproc, " + "),
                    nproc: NameMap::zip(&status.components, c.nproc.iter().copied()),
                    sypd: c.sypd,
                    chsy: c.chsy,
                    fittingness_predicted: c.fittingness,
                    total_nproc: c.total_nproc,
                    against: answer.map(|a| a.against(status, &c.nproc, c.sypd, c.chsy)),
                })
                .collect(),
        }
    }

    /// The first predicted configuration that is not the answer's, for the line beside it.
    pub fn first(&self) -> Option<&PredictedConfig> {
        self.configs.first()
    }
}

impl CampaignAnswer {
    /// The answer of a status with no prediction.
    pub fn of_status(status: Status) -> CampaignAnswer {
        CampaignAnswer {
            answer: Answer::of(&status),
            status,
            predicted: None,
            notes: Vec::new(),
        }
    }

    /// The answer of a status with the campaign's prediction (from its state and directory):
    /// the top N at the campaign's TTS_w, each compared with the answer.
    pub fn with_prediction(status: Status, state: &State, dir: &Path) -> CampaignAnswer {
        let mut out = CampaignAnswer::of_status(status);
        // The calibrated model ranks components side by side; a layout tree is not priced by
        // it yet, so no prediction is shown rather than one for another layout.
        if state.settings.layout.is_some() {
            return out;
        }
        match CampaignPrediction::load(state, dir) {
            Ok(cp) => match cp.problem() {
                Ok(problem) => {
                    let p = cp.rank(&problem, cp.settings.tts_w, cp.settings.top);
                    out.predicted = Some(PredictedTop::of(
                        &p,
                        &cp.model_text,
                        &out.status,
                        out.answer.as_ref(),
                    ));
                }
                Err(e) => out.notes.push(format!("no prediction: {e}")),
            },
            // A cold start has no curve until its scaling phase wrote one.
            Err(e) => out.notes.push(format!("no prediction yet: {e}")),
        }
        out
    }

    /// The predicted configuration shown beside the answer (the top #1) with its label.
    pub fn predicted_line(&self) -> Option<String> {
        let p = self.predicted.as_ref()?;
        Some(p.first()?.text(&p.model))
    }
}

/// [`CampaignAnswer`] of a campaign directory: its status with the driver's state, its answer
/// and its prediction.
pub fn answer(dir: &Path) -> Result<(CampaignAnswer, super::DriverState), CampaignError> {
    let dir = super::absolute_dir(dir)?;
    let state = State::load(&dir)?;
    let (status, driver) = super::status_of_state(&state, &dir);
    Ok((
        CampaignAnswer::with_prediction(status, &state, &dir),
        driver,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Answer {
        let names = ["IFS".to_string(), "NEMO".to_string()];
        Answer {
            config: "IFS 408 + NEMO 258".into(),
            nproc: NameMap::zip(&names, [408, 258]),
            ranks: NameMap::zip(&names, [408, 258]),
            threads: NameMap::zip(&names, [1, 1]),
            sypd: 10.0,
            chsy: 1000.0,
            coupling_cost: 0.05,
            fittingness: 0.95,
            fn_scale: String::new(),
            total_nproc: 762,
            runs: 2,
            run_ids: Vec::new(),
            measured_in: vec![[1, 5]],
            where_measured: "iteration 1, test 5".into(),
            provisional: false,
        }
    }

    #[test]
    fn a_prediction_beside_the_answer_says_how_much_faster_or_slower_and_whether_it_ran() {
        let a = answer();
        let slower = a.compare(&[400, 266], 9.5, 1010.0, None);
        assert!(!slower.is_answer);
        assert!((slower.sypd_pct + 5.0).abs() < 1e-9, "{slower:?}");
        assert_eq!(
            slower.text(),
            "predicted 5.0 % slower and 1.0 % dearer than the best measured; not measured"
        );
        let measured = MeasuredFigures {
            sypd: 9.8,
            chsy: 1005.0,
            runs: 1,
        };
        let ran = a.compare(&[400, 266], 10.4, 990.0, Some(measured));
        assert_eq!(
            ran.text(),
            "predicted 4.0 % faster and 1.0 % cheaper than the best measured; measured: 9.80 SYPD, 1005 CHSY over 1 run (2.0 % slower than the best measured, a lower FN)"
        );
        assert_eq!(ran.short_text(), "pred. +4.0 % SYPD vs best, measured 9.80");
        // A figure within 0.05 % reads "as": as fast as, not as fast than.
        let level = a.compare(&[400, 266], 10.0, 994.0, None);
        assert_eq!(
            level.text(),
            "predicted as fast as the best measured and 0.6 % cheaper; not measured"
        );
        let same = a.compare(&[408, 258], 10.1, 1000.0, None);
        assert!(same.is_answer);
        assert_eq!(same.text(), "the best measured itself");
    }

    #[test]
    fn a_predicted_configuration_is_labelled_with_its_model_and_its_own_fn_scale() {
        let a = answer();
        let c = PredictedConfig {
            rank: 1,
            config: "IFS 400 + NEMO 266".into(),
            nproc: NameMap::default(),
            sypd: 9.5,
            chsy: 1010.0,
            fittingness_predicted: 0.9,
            total_nproc: 762,
            against: Some(a.compare(&[400, 266], 9.5, 1010.0, None)),
        };
        let text = c.text("the curves alone (standalone model)");
        assert!(
            text.starts_with("predicted #1 by the curves alone (standalone model): IFS 400 + NEMO 266, 9.50 SYPD"),
            "{text}"
        );
        assert!(
            text.contains("FN 0.900 on the prediction's scale"),
            "{text}"
        );
        assert!(text.ends_with("not measured"), "{text}");
    }
}
