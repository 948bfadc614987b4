//! A report to share: one self-contained HTML page (or Markdown with SVG files beside it) with
//! the paper's views of a prediction and a campaign.
//!
//! * the settings;
//! * the scalability curves, SYPD and CHSY against PEs per component (paper Figs. 7, 9, 12),
//!   with the measured points, the interpolation and the chosen configurations marked;
//! * the fittingness matrix of two components with the top N marked (Fig. 5);
//! * the campaign as lb-iteration x test panels of SYPD, CHSY, coupling cost and FN, with the
//!   best marked, failed runs shown as failed and the donor -> recipient moves (Figs. 8, 10, 11);
//! * the recommendation against the original configuration in the paper's terms.
//!
//! Shape: [`build`] turns what is known into a [`Report`], an ordered list of optional
//! [`Section`]s. Each section renders to neutral [`Block`]s (headings, paragraphs, tables,
//! figures), and the HTML and Markdown writers only serialise blocks, so both formats carry the
//! same content by construction. A new view (a speed/cost front, a calibrated curve) is a new
//! section variant and one function that turns it into blocks.

pub mod figures;
pub mod model_view;
pub mod recommend;
pub mod render;
pub mod source;
pub mod svg;

use serde::Serialize;

use crate::campaign::{Answer, PredictedTop, Status, TestState};
use crate::interp::{Interpolant, Method};
use crate::metrics;
use crate::model::EstimateRequest;
use crate::predict::front::Winner;
use crate::predict::{ComponentInput, ConfigurationText, Grid, Prediction, Problem, Scored};
pub use model_view::{ModelSection, ReportModel};
pub use recommend::{Basis, Figures, Recommendation};

/// Default length of the production experiment the savings are counted over: a CMIP-style
/// historical plus scenario run of one member is about 250 simulated years.
pub const DEFAULT_YEARS: f64 = 250.0;

/// A component's scalability curve as the report draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveData {
    /// The component's name.
    pub name: String,
    /// Measured points (PEs, SYPD).
    pub measured: Vec<(f64, f64)>,
    /// The interpolation (PEs, SYPD), sampled densely between the measured ends.
    pub line: Vec<(f64, f64)>,
    /// The interpolation the line was drawn with.
    pub method: Method,
    /// A calibrated model's curve (label, points (PEs, SYPD)), drawn dashed beside the
    /// interpolation when a model has been fitted; `None` draws only the interpolation.
    pub calibrated: Option<(String, Vec<(f64, f64)>)>,
}

impl CurveData {
    /// Samples a component's interpolation at 200 points between its measured ends (nothing
    /// for a component without a curve).
    pub fn sample(input: &ComponentInput, method: Method) -> CurveData {
        let (xs, ys) = input
            .curve
            .as_ref()
            .map_or((Vec::new(), Vec::new()), |c| (c.xs(), c.ys()));
        let line = match &input.curve {
            Some(curve) => {
                let interpolant = Interpolant::new(method, &xs, &ys);
                let (lo, hi) = (
                    f64::from(curve.first_nproc()),
                    f64::from(curve.last_nproc()),
                );
                (0..=200)
                    .map(|i| lo + (hi - lo) * f64::from(i) / 200.0)
                    .map(|x| (x, interpolant.eval(x)))
                    .filter(|(_, y)| y.is_finite() && *y > 0.0)
                    .collect()
            }
            None => Vec::new(),
        };
        CurveData {
            name: input.name().to_string(),
            measured: xs.into_iter().zip(ys).collect(),
            line,
            method,
            calibrated: None,
        }
    }
}

/// What a marked configuration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// The prediction's k-th proposal (1-based).
    Predicted(usize),
    /// The user's current configuration (the campaign file's `[original]`).
    Original,
    /// The best configuration a campaign measured.
    Best,
}

/// A configuration marked on the curves and the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    /// What the configuration is (a proposal, the original, the campaign's best).
    pub kind: MarkKind,
    /// PEs per component, in component order.
    pub nproc: Vec<u32>,
}

impl Mark {
    /// The mark's text on the figures: `#k`, `original` or `best`.
    pub fn label(&self) -> String {
        match self.kind {
            MarkKind::Predicted(k) => format!("#{k}"),
            MarkKind::Original => "original".into(),
            MarkKind::Best => "best".into(),
        }
    }
}

/// The scalability curves with the chosen configurations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvesSection {
    /// One curve per component, in component order.
    pub curves: Vec<CurveData>,
    /// The configurations to mark on each curve.
    pub marks: Vec<Mark>,
}

/// A 2-D slice of the fittingness of every configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixSection {
    /// Name of the component whose PEs run down the rows.
    pub row_name: String,
    /// Name of the component whose PEs run across the columns.
    pub col_name: String,
    /// The cells: over budget, worse than the base case, or scored.
    pub grid: Grid,
    /// The components held fixed, e.g. `LPJG 64, TM5 128` (empty with two components).
    pub fixed: String,
    /// The TTS_w the cells' fittingness is computed at, in [0, 1].
    pub tts_w: f64,
    /// Marks in this slice: (row index, column index, mark).
    pub marks: Vec<(usize, usize, Mark)>,
    /// The base case as text (`IFS 48 + NEMO 48`), for the caption of the grey cells.
    pub base_case: String,
}

/// The speed/cost trade-off: the Pareto front and which configuration wins for which TTS_w.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontSection {
    /// The components' names, in the order of each configuration's PEs.
    pub components: Vec<String>,
    /// In ascending SYPD (and CHSY).
    pub front: Vec<Scored>,
    /// In ascending TTS_w.
    pub winners: Vec<Winner>,
    /// The TTS_w of the report (its winner is the recommendation).
    pub tts_w: f64,
    /// The cost axis: the cost FN weighs (`CHSY`, or with a machine `NHSY` or `kWh/SY`), the
    /// cost the front was computed on.
    pub cost: String,
}

impl FrontSection {
    /// Index of the winner at the report's TTS_w.
    pub fn current(&self) -> Option<usize> {
        self.winners
            .iter()
            .enumerate()
            .position(|(i, w)| w.holds_at(self.tts_w, i == 0))
    }
}

/// The cost the front's configurations carry: the machine's bill when they have one
/// ([`crate::predict::Scored::cost`]), else CHSY.
fn front_cost(problem: &Problem, front: &[Scored]) -> &'static str {
    match front.first().and_then(|c| c.billing.as_ref()) {
        Some(_) => problem.cost_model.cost.header(),
        None => "CHSY",
    }
}

/// The prediction's top N, and, beside a campaign, how each compares with its answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictionSection {
    /// The ranking.
    pub prediction: Prediction,
    /// The same configurations compared with the campaign's answer, with the model named;
    /// `None` without a campaign.
    pub against: Option<PredictedTop>,
}

/// The settings table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings(pub Vec<(String, String)>);

/// One part of the report; every part is optional.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "section", rename_all = "snake_case")]
pub enum Section {
    /// The configuration to run, what it saves and on what it rests.
    Recommendation(Recommendation),
    /// The settings the report was made with.
    Settings(Settings),
    /// The scalability curves with the marked configurations.
    Curves(CurvesSection),
    /// A 2-D slice of the fittingness.
    Matrix(MatrixSection),
    /// The speed/cost front and the TTS_w intervals of each winner.
    Front(FrontSection),
    /// Which model ranked, its bands and its predictions against the measured runs.
    Model(ModelSection),
    /// The prediction's top N and its counts, each compared with the campaign's answer.
    Prediction(PredictionSection),
    /// The campaign's iteration table and best configuration.
    Campaign(Box<Status>),
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The report's title (the page title and first heading).
    pub title: String,
    /// Where the data came from (a campaign directory, a campaign file, the terminal app).
    pub source: String,
    /// Its parts, in the order they are written.
    pub sections: Vec<Section>,
}

/// Neutral content, serialised by the HTML and Markdown writers.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A section heading.
    Heading(String),
    /// A paragraph of text.
    Paragraph(String),
    /// The text a reader must not miss (the recommendation).
    Callout(Vec<String>),
    /// A table with a header row.
    Table {
        /// The column headers.
        header: Vec<String>,
        /// The rows, each as wide as the header.
        rows: Vec<Vec<String>>,
    },
    /// Name-value pairs (the settings), read left to right.
    Pairs(Vec<(String, String)>),
    /// Text to copy as it is (a configuration fragment), in a fixed-width block.
    Code(String),
    /// An SVG figure with its caption.
    Figure {
        /// File stem for the Markdown form, e.g. `curves-IFS`.
        id: String,
        /// The figure, a whole SVG document.
        svg: String,
        /// The caption under it.
        caption: String,
    },
}

/// Everything [`build`] can use; leave out what is not known.
pub struct ReportRequest<'a> {
    /// The report's title.
    pub title: String,
    /// Where the data came from (a campaign directory, a campaign file, the terminal app).
    pub source: String,
    /// The prediction problem; with it: curves, matrix and top N.
    pub problem: Option<&'a Problem>,
    /// The components' inputs (curves), in component order.
    pub inputs: &'a [ComponentInput],
    /// The TTS_w to rank and recommend at, in [0, 1].
    pub tts_w: f64,
    /// How many proposals to list.
    pub top: usize,
    /// Components down the rows and across the columns of the matrix.
    pub axes: (usize, usize),
    /// Candidate indices for the components not on the matrix axes (default: the top #1).
    pub fixed: Option<Vec<usize>>,
    /// The user's current configuration, PEs in component order.
    pub original: Option<Vec<u32>>,
    /// A campaign's status, for its table, best configuration and marks.
    pub campaign: Option<&'a Status>,
    /// Simulated years the savings are counted over.
    pub years: f64,
    /// The model `problem` was ranked with (`None`: the standalone model) and the runs to
    /// check it on.
    pub model: Option<ReportModel<'a>>,
}

/// Builds the report from what is known.
pub fn build(req: &ReportRequest) -> Report {
    let names: Vec<String> = match (req.problem, req.campaign) {
        (Some(p), _) => p.names(),
        (None, Some(s)) => s.components.clone(),
        _ => req.inputs.iter().map(|c| c.name().to_string()).collect(),
    };
    // A calibrated model's top N re-scored with its full estimate (the coupling overhead
    // included), as `predict --measured` ranks them.
    let prediction = req
        .problem
        .map(|p| match req.model.filter(|m| m.model.is_calibrated()) {
            Some(m) => {
                crate::predict::full_model::rank(p, m.model, req.inputs, req.tts_w, req.top.max(1))
            }
            None => p.rank(req.tts_w, req.top.max(1)),
        });
    let best = req.campaign.and_then(|s| s.best.as_ref()).map(|b| Mark {
        kind: MarkKind::Best,
        nproc: b.nproc.values().copied().collect(),
    });
    let original = req.original.clone().map(|nproc| Mark {
        kind: MarkKind::Original,
        nproc,
    });
    let mut marks: Vec<Mark> = prediction
        .iter()
        .flat_map(|p| p.top.iter().enumerate())
        .map(|(i, c)| Mark {
            kind: MarkKind::Predicted(i + 1),
            nproc: c.nproc.clone(),
        })
        .collect();
    marks.extend(original.clone());
    marks.extend(best);

    let mut sections = Vec::new();
    if let Some(r) = recommendation(req, &names, prediction.as_ref()) {
        sections.push(Section::Recommendation(r));
    }
    sections.push(Section::Settings(settings(req)));
    if !req.inputs.is_empty() {
        let method = req.problem.map(|p| p.settings.interp).unwrap_or_default();
        sections.push(Section::Curves(CurvesSection {
            curves: req
                .inputs
                .iter()
                .map(|c| {
                    let mut data = CurveData::sample(c, method);
                    if let Some(m) = req.model.filter(|m| m.model.is_calibrated()) {
                        data.calibrated = Some(calibrated_curve(m.model, &data));
                    }
                    data
                })
                .collect(),
            marks: marks.clone(),
        }));
    }
    if let (Some(problem), Some(p)) = (req.problem, prediction.as_ref()) {
        if let Some(m) = matrix(problem, req, p, &marks) {
            sections.push(Section::Matrix(m));
        }
        let (front, winners) = problem.trade_off(req.tts_w);
        if !front.is_empty() {
            sections.push(Section::Front(FrontSection {
                components: names.clone(),
                cost: front_cost(problem, &front).into(),
                front,
                winners,
                tts_w: req.tts_w,
            }));
        }
        sections.push(Section::Model(model_view::section(
            req.model.as_ref(),
            req.inputs,
            problem.settings.interp,
            Some(p),
        )));
        sections.push(Section::Prediction(PredictionSection {
            against: predicted_top(req, Some(p)),
            prediction: p.clone(),
        }));
    }
    if let Some(status) = req.campaign {
        sections.push(Section::Campaign(Box::new(status.clone())));
    }
    Report {
        title: req.title.clone(),
        source: req.source.clone(),
        sections,
    }
}

/// A component's coupled-mode curve under a calibrated model, on the interpolation's points.
fn calibrated_curve(model: &crate::model::Model, data: &CurveData) -> (String, Vec<(f64, f64)>) {
    let points = data
        .line
        .iter()
        .map(|&(p, s)| (p, model.adjust(&data.name, p.round() as u32, s)))
        .filter(|(_, s)| s.is_finite() && *s > 0.0)
        .collect();
    ("calibrated (coupled mode)".into(), points)
}

fn settings(req: &ReportRequest) -> Settings {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut push = |k: &str, v: String| rows.push((k.to_string(), v));
    if let Some(p) = req.problem {
        let s = &p.settings;
        push("budget (balanced PEs)", s.max_nproc.to_string());
        push("candidate step", format!("{} PEs", s.step));
        push("TTS_w", format!("{:.2}", req.tts_w));
        push("top N", req.top.to_string());
        push("interpolation", s.interp.name().to_string());
        push("extra PEs (not balanced)", s.extra_pes.to_string());
        push(
            "ranked by",
            match req.model.filter(|m| m.model.is_calibrated()) {
                Some(m) => format!("the calibrated model ({})", m.source),
                None => "the standalone model (the curves alone)".into(),
            },
        );
    }
    if let Some(st) = req.campaign {
        match &st.scaling_settings {
            // A scaling campaign measures curves: it has no FN, no steps and no tests to
            // repeat, only its own design and budget.
            Some(sc) => scaling_settings(sc, &mut push),
            None => {
                if req.problem.is_none() {
                    push("TTS_w", format!("{:.2}", st.tts_w));
                    push("extra PEs (not balanced)", st.extra_pes.to_string());
                } else if (st.tts_w - req.tts_w).abs() > 1e-9 {
                    push(
                        "campaign TTS_w (its FN and best)",
                        format!("{:.2}", st.tts_w),
                    );
                }
                push("initial step", format!("{} PEs", st.initial_step));
                push("minimum step", format!("{} PEs", st.minimum_step));
                push("repetitions per test", st.repetitions.to_string());
            }
        }
        push("executor", st.executor.clone());
        if let Some(p) = st.period_s {
            push("coupling period", format!("{p} s"));
        }
        push("campaign state", st.state.as_str().to_string());
        let c = st.counts;
        push(
            "runs",
            format!(
                "{} done, {} failed, {} cancelled, {} running, {} pending",
                c.done, c.failed, c.cancelled, c.running, c.pending
            ),
        );
    }
    for c in req.inputs {
        let mut v = match &c.curve {
            Some(curve) => format!(
                "{} measured points, {}..{} PEs",
                curve.points().len(),
                curve.first_nproc(),
                curve.last_nproc()
            ),
            None => "no curve: learned from the measured runs".to_string(),
        };
        if let Some(a) = &c.allowed {
            v.push_str(&format!(", {} allowed PE counts", a.len()));
        }
        if let (Some(lo), Some(hi)) = (c.min_nproc, c.max_nproc) {
            v.push_str(&format!(", limits {lo}..{hi}"));
        }
        push(&format!("component {}", c.name()), v);
    }
    if let Some(o) = &req.original {
        let names: Vec<String> = req.inputs.iter().map(|c| c.name().to_string()).collect();
        push(
            "original configuration",
            ConfigurationText::new(&names, o).to_string(),
        );
    }
    push(
        "savings counted over",
        format!("{} simulated years", req.years),
    );
    Settings(rows)
}

/// A scaling campaign's `[scaling]` settings, as the campaign file names them.
fn scaling_settings(sc: &crate::config::ScalingSettings, push: &mut impl FnMut(&str, String)) {
    use crate::config::{ScalingDesign, ScalingTiming};
    push(
        "design",
        match sc.design {
            ScalingDesign::Standalone => "standalone (each component alone)",
            ScalingDesign::Coupled => "coupled (configurations near balance)",
        }
        .into(),
    );
    push(
        "PE counts per component (first series)",
        sc.counts.to_string(),
    );
    push("repetitions per PE count", sc.repetitions.to_string());
    if let Some(m) = sc.max_runs {
        push("max_runs", m.to_string());
    }
    if let Some(h) = sc.max_core_hours {
        push("max_core_hours", format!("{h}"));
    }
    if let Some(d) = sc.simulated_days {
        push("simulated days per run", format!("{d}"));
    }
    push(
        "timing",
        match sc.timing {
            ScalingTiming::Output => "the runs' timing output",
            ScalingTiming::Wall => "the runs' wall time",
        }
        .into(),
    );
}

/// Where the answer was measured, in the report's words (lb-iteration, as the paper says):
/// `lb-iteration 1, test 4`, or `mean of 3 runs in lb-iterations 1 and 13, test 4`.
fn answer_source(a: &crate::campaign::Answer) -> String {
    if a.measured_in.len() > 1 {
        a.where_measured.replace(" iterations", " lb-iterations")
    } else {
        format!("lb-{}", a.where_measured)
    }
}

/// The prediction's top N compared with the campaign's answer, as `campaign status` compares
/// them ([`crate::campaign::PredictedTop::of`]); `None` without a campaign or a prediction.
fn predicted_top(req: &ReportRequest, prediction: Option<&Prediction>) -> Option<PredictedTop> {
    let status = req.campaign?;
    let p = prediction?;
    let model = match req.model.filter(|m| m.model.is_calibrated()) {
        Some(m) => crate::campaign::answer::model_text(m.model, m.source),
        None => crate::campaign::answer::model_text(&crate::model::Model::Standalone, ""),
    };
    let answer = Answer::of(status);
    Some(PredictedTop::of(p, &model, status, answer.as_ref()))
}

fn recommendation(
    req: &ReportRequest,
    names: &[String],
    prediction: Option<&Prediction>,
) -> Option<Recommendation> {
    if let Some(status) = req.campaign {
        if let Some(a) = Answer::of(status) {
            let original = status
                .iterations
                .iter()
                .flat_map(|it| it.tests.iter().map(move |t| (it.iteration, t)))
                .find(|(_, t)| t.origin == "original" && t.sypd.is_some() && t.chsy.is_some())
                .map(|(i, t)| Figures {
                    label: format!("measured in lb-iteration {i}, test {}", t.test),
                    config: status
                        .configuration_text(&t.nproc.values().copied().collect::<Vec<_>>(), " + "),
                    sypd: t.sypd.unwrap_or(f64::NAN),
                    chsy: t.chsy.unwrap_or(f64::NAN),
                    coupling_cost: t.coupling_cost,
                    total_nproc: t.total_nproc,
                });
            return Some(Recommendation {
                basis: Basis::Measured,
                chosen: Figures {
                    label: answer_source(&a),
                    config: a.config.clone(),
                    sypd: a.sypd,
                    chsy: a.chsy,
                    coupling_cost: Some(a.coupling_cost),
                    total_nproc: a.total_nproc,
                },
                original,
                years: req.years,
                provisional: a.provisional
                    || status.iterations.iter().any(|it| {
                        it.tests
                            .iter()
                            .any(|t| matches!(t.state, TestState::Pending | TestState::Running))
                    }),
                predicted: predicted_top(req, prediction)
                    .and_then(|p| p.first().map(|c| c.text(&p.model))),
            });
        }
    }
    let p = prediction?;
    let top = p.top.first()?;
    let original = req
        .original
        .as_ref()
        .and_then(|o| predicted_figures(req, names, o));
    Some(Recommendation {
        basis: Basis::Predicted,
        chosen: config_figures("predicted #1", names, top),
        original,
        years: req.years,
        provisional: false,
        predicted: None,
    })
}

fn config_figures(label: &str, names: &[String], c: &Scored) -> Figures {
    Figures {
        label: label.into(),
        config: ConfigurationText::new(names, &c.nproc).to_string(),
        sypd: c.sypd,
        chsy: c.chsy,
        coupling_cost: Some(c.coupling_cost),
        total_nproc: c.total_nproc,
    }
}

/// The original configuration's figures from the curves (the prediction's own model: the
/// coupled speed is the slowest component's).
fn predicted_figures(req: &ReportRequest, names: &[String], nproc: &[u32]) -> Option<Figures> {
    let problem = req.problem?;
    if nproc.len() != req.inputs.len() {
        return None;
    }
    let model = req
        .model
        .filter(|m| m.model.is_calibrated())
        .map_or(&crate::model::Model::Standalone, |m| m.model);
    // Each component's reference speed: its curve's, or the model's learned law.
    let speeds: Vec<f64> = req
        .inputs
        .iter()
        .zip(nproc)
        .map(|(c, &p)| match &c.curve {
            Some(curve) => Interpolant::new(problem.settings.interp, &curve.xs(), &curve.ys())
                .eval(f64::from(p)),
            None => model.reference_sypd(c.name(), p).unwrap_or(f64::NAN),
        })
        .collect();
    let sypd = model
        .estimate(&EstimateRequest::known(names, nproc, &speeds))
        .sypd;
    if !(sypd.is_finite() && sypd > 0.0) {
        return None;
    }
    let total = problem.total_nproc(nproc.iter().sum());
    let pairs: Vec<(f64, f64)> = nproc
        .iter()
        .zip(&speeds)
        .map(|(&p, &s)| (f64::from(p), s))
        .collect();
    Some(Figures {
        label: match req.model.filter(|m| m.model.is_calibrated()) {
            Some(_) => "predicted by the calibrated model".into(),
            None => "predicted from the curves".into(),
        },
        config: ConfigurationText::new(names, nproc).to_string(),
        sypd,
        chsy: metrics::chsy(f64::from(total), sypd),
        coupling_cost: Some(metrics::predicted_coupling_cost(sypd, &pairs)),
        total_nproc: total,
    })
}

/// The matrix slice: the chosen axes, other components at `fixed` (default: the top #1's).
fn matrix(
    problem: &Problem,
    req: &ReportRequest,
    p: &Prediction,
    marks: &[Mark],
) -> Option<MatrixSection> {
    let n = problem.components.len();
    if n < 2 {
        return None;
    }
    let (r, c) = req.axes;
    if r >= n || c >= n || r == c {
        return None;
    }
    let fixed = req
        .fixed
        .clone()
        .filter(|f| f.len() == n)
        .or_else(|| problem.index_of(p.top.first()?))
        .unwrap_or_else(|| vec![0; n]);
    let grid = problem.grid(r, c, &fixed, req.tts_w);
    let names = problem.names();
    let fixed_nproc: Vec<u32> = (0..n)
        .map(|i| problem.components[i].nproc[fixed[i]])
        .collect();
    let in_slice =
        |m: &Mark| (0..n).all(|i| i == r || i == c || m.nproc.get(i) == Some(&fixed_nproc[i]));
    let slice_marks = marks
        .iter()
        .filter(|m| m.nproc.len() == n && in_slice(m))
        .filter_map(|m| {
            let row = grid.row_nproc.binary_search(&m.nproc[r]).ok()?;
            let col = grid.col_nproc.binary_search(&m.nproc[c]).ok()?;
            Some((row, col, m.clone()))
        })
        .collect();
    let fixed_desc = (0..n)
        .filter(|&i| i != r && i != c)
        .map(|i| format!("{} {}", names[i], fixed_nproc[i]))
        .collect::<Vec<_>>()
        .join(", ");
    Some(MatrixSection {
        row_name: names[r].clone(),
        col_name: names[c].clone(),
        grid,
        fixed: fixed_desc,
        tts_w: req.tts_w,
        marks: slice_marks,
        base_case: ConfigurationText::new(&names, &problem.baseline_nproc).to_string(),
    })
}

#[cfg(test)]
mod tests;
