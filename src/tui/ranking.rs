//! The ranking part of the app: the problem shown, the model behind it, TTS_w and the top N it
//! is ranked at, and the curves it comes from. Everything else on screen (the matrix, the
//! front, the table's FN) is derived from this part.

use autolb::interp::Interpolant;
use autolb::model::Model;
use autolb::predict::packing::{self, Packing, PinnedHelper, RankedPackings, ScoredPacking};
use autolb::predict::{ComponentInput, ConfigurationText, Prediction, Problem, Scored};

use super::calibration::Calibration;

/// How deep `w` looks for the global rank of a marked configuration.
pub const RANK_LIMIT: usize = 5000;

pub use autolb::model::ModelKind;

/// A component's curves, sampled once for drawing.
#[derive(Debug, Clone)]
pub struct CurveSeries {
    pub name: String,
    /// Measured points (PEs, SYPD).
    pub measured: Vec<(f64, f64)>,
    /// The interpolated curve (PEs, SYPD), densely sampled between the measured ends; empty
    /// for a component without a curve.
    pub line: Vec<(f64, f64)>,
    /// The PEs the component may take (its curve's ends, or its range without one): where
    /// a curve the calibrated model learned is drawn.
    pub span: (f64, f64),
}

/// The problem, its model and its ranking.
pub struct Ranking {
    pub problem: Problem,
    /// The components' inputs (curves, limits), kept for rebuilding the problem and the report.
    pub inputs: Vec<ComponentInput>,
    /// The model behind `problem`.
    pub model: ModelKind,
    /// The other model's problem, when a calibrated model was given (`M` swaps them).
    pub other_model: Option<(Problem, ModelKind)>,
    /// The calibrated model and the runs it learned from, when there is one (from
    /// `--measured`/`--model`, or refitted as a watched campaign's runs land).
    pub calibration: Option<Calibration>,
    pub curves: Vec<CurveSeries>,
    /// TTS_w in hundredths, so stepping never drifts (0.05 steps land on 0.05 exactly).
    pub tts_w_pct: u8,
    pub top: usize,
    pub prediction: Prediction,
    /// The entry of the top N selected in the slider pane.
    pub top_selected: usize,
    /// OpenMP threads per rank of each component in the watched campaign (1 for pure MPI;
    /// empty without one). A campaign's curve copies count cores, so its hybrid components'
    /// candidates are cores at that fixed thread count: they are written `ranks x threads`,
    /// as the campaign's table writes them.
    pub campaign_threads: Vec<u32>,
    /// With `placement = "groups"`: the node packings, ranked as `predict` ranks them. The
    /// matrix and the top N stay PE counts; the recommendation is the best packing.
    pub groups: Option<Groups>,
}

/// A file with `placement = "groups"`: its pinned helpers and its node packings at the
/// ranking's TTS_w, top N and budget.
#[derive(Debug, Clone)]
pub struct Groups {
    /// The pinned helpers (XIOS, the runoff mapper) as the campaign file pins them.
    pub helpers: Vec<PinnedHelper>,
    /// Cores of one node.
    pub cores_per_node: u32,
    /// The model the packings are ranked with: the standalone curves, or the calibrated model
    /// fitted as `predict --measured` fits it for packings.
    pub model: Model,
    /// The packings [`packing::rank_node_packings`] ranks, as `predict` does, or why there are
    /// none (a component without a curve, a budget under one node).
    pub packings: Result<RankedPackings, String>,
    /// TTS_w in hundredths, top N and budget the packings were ranked at (`None`: not yet).
    ranked_at: Option<(u8, usize, u32)>,
}

impl Groups {
    /// Helpers and node size for a file with `placement = "groups"`; ranked by
    /// [`Ranking::rerank`].
    pub fn new(helpers: Vec<PinnedHelper>, cores_per_node: u32) -> Groups {
        Groups {
            helpers,
            cores_per_node,
            model: Model::Standalone,
            packings: Err("not ranked yet".into()),
            ranked_at: None,
        }
    }

    /// The best packing, when there is one.
    pub fn best(&self) -> Option<&ScoredPacking> {
        self.packings.as_ref().ok().and_then(|p| p.top.first())
    }

    /// The ranked packing of exactly these ranks and threads per component, if any.
    pub fn ranked(&self, ranks: &[u32], threads: &[u32]) -> Option<&Packing> {
        let p = self.packings.as_ref().ok()?;
        p.top
            .iter()
            .map(|s| &s.packing)
            .find(|p| p.ranks == ranks && p.threads == threads)
    }
}

impl Ranking {
    /// The standalone ranking of `problem` at its own TTS_w and top N.
    pub fn new(problem: Problem, inputs: &[ComponentInput]) -> Ranking {
        let tts_w_pct = (problem.settings.tts_w * 100.0).round().clamp(0.0, 100.0) as u8;
        let top = problem.settings.top.max(1);
        let curves = inputs
            .iter()
            .map(|c| sample_curve(c, problem.settings.interp))
            .collect();
        let prediction = problem.rank(f64::from(tts_w_pct) / 100.0, top);
        Ranking {
            problem,
            inputs: inputs.to_vec(),
            model: ModelKind::Standalone,
            other_model: None,
            calibration: None,
            curves,
            tts_w_pct,
            top,
            prediction,
            top_selected: 0,
            campaign_threads: Vec::new(),
            groups: None,
        }
    }

    /// Ranks node packings as well, for a file with `placement = "groups"` and these
    /// helpers; the recommendation becomes the best packing.
    pub fn set_groups(&mut self, helpers: Vec<PinnedHelper>, cores_per_node: u32) {
        self.groups = Some(Groups::new(helpers, cores_per_node));
        self.rank_groups();
    }

    /// Ranks the node packings with `model` from now on (the calibrated model `predict
    /// --measured` fits for packings).
    pub fn set_packing_model(&mut self, model: Model) {
        if let Some(g) = &mut self.groups {
            g.model = model;
            g.ranked_at = None;
        }
        self.rank_groups();
    }

    /// Ranks the node packings again when TTS_w, the top N or the budget moved since they
    /// were ranked (the search is the costly part, so only then).
    fn rank_groups(&mut self) {
        let at = (self.tts_w_pct, self.top, self.problem.settings.max_nproc);
        let Some(g) = self.groups.as_mut().filter(|g| g.ranked_at != Some(at)) else {
            return;
        };
        let settings = autolb::predict::Settings {
            tts_w: f64::from(self.tts_w_pct) / 100.0,
            top: self.top,
            ..self.problem.settings.clone()
        };
        g.packings = packing::rank_node_packings(
            &self.inputs,
            g.helpers.clone(),
            &settings,
            g.cores_per_node,
            &g.model,
        )
        .map_err(|e| e.to_string());
        g.ranked_at = Some(at);
    }

    /// Candidate indices of the recommendation: the best node packing's ranks and threads with
    /// node groups (when it is on the matrix), else the top of the ranking.
    pub fn recommended_index(&self) -> Option<Vec<usize>> {
        if let Some(best) = self.groups.as_ref().and_then(Groups::best) {
            let p = &best.packing;
            let at: Option<Vec<usize>> = (0..p.ranks.len())
                .map(|c| {
                    let t = p.threads[c];
                    self.problem.candidate_index_at(c, p.ranks[c] * t, t)
                })
                .collect();
            if at.is_some() {
                return at;
            }
        }
        self.recommended().and_then(|c| self.problem.index_of(c))
    }

    /// Takes new curves for the components they name (a scaling campaign's, as runs land) and
    /// samples them again for the curves pane; the caller rebuilds the problem.
    pub fn set_curves(&mut self, curves: Vec<autolb::curve::Curve>) {
        if let Some(g) = &mut self.groups {
            g.ranked_at = None;
        }
        for curve in curves {
            if let Some(input) = self.inputs.iter_mut().find(|i| i.name == curve.name) {
                input.curve = Some(curve);
            }
        }
        self.curves = self
            .inputs
            .iter()
            .map(|c| sample_curve(c, self.problem.settings.interp))
            .collect();
    }

    pub fn tts_w(&self) -> f64 {
        f64::from(self.tts_w_pct) / 100.0
    }

    /// The recommended configuration: the top of the ranking.
    pub fn recommended(&self) -> Option<&Scored> {
        self.prediction.top.first()
    }

    /// PEs of a configuration given by candidate indices (the inverse of [`index_of`]).
    pub fn nproc_of(&self, index: &[usize]) -> Vec<u32> {
        index
            .iter()
            .zip(&self.problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect()
    }

    /// Whether a configuration (PEs per component) at coupled speed `sypd` fits none of the
    /// `[[queue]]` tables (never without queues; with a chosen queue the others do not count,
    /// and what does not fit it is outside the budget already).
    pub fn fits_no_queue(&self, nproc: &[u32], sypd: f64) -> bool {
        let model = &self.problem.cost_model;
        !model.queues.is_empty()
            && model.chosen_queue().is_none()
            && model
                .smallest_queue(nproc, self.problem.settings.extra_pes, sypd)
                .is_none()
    }

    /// Rank (1-based) of a configuration in the current top N.
    pub fn rank_of(&self, nproc: &[u32]) -> Option<usize> {
        self.prediction
            .top
            .iter()
            .position(|c| c.nproc == nproc)
            .map(|i| i + 1)
    }

    /// Each configuration's rank among all at the current TTS_w (`None` beyond the first
    /// [`RANK_LIMIT`], which is not worth the search).
    pub fn global_ranks(&self, configs: &[Scored]) -> Vec<Option<usize>> {
        let mut ranks: Vec<Option<usize>> =
            configs.iter().map(|c| self.rank_of(&c.nproc)).collect();
        if ranks.iter().any(Option::is_none) {
            let deep = self.problem.rank(self.tts_w(), RANK_LIMIT).top;
            for (r, c) in ranks.iter_mut().zip(configs) {
                if r.is_none() {
                    *r = deep.iter().position(|d| d.nproc == c.nproc).map(|i| i + 1);
                }
            }
        }
        ranks
    }

    /// `IFS 408 + NEMO 240`.
    pub fn describe(&self, nproc: &[u32]) -> String {
        ConfigurationText::new(&self.problem.names(), nproc).to_string()
    }

    /// The candidate at `index` as text, a hybrid component as ranks x threads (the threads its
    /// score chose), as [`Self::describe_scored`].
    pub fn describe_index(&self, index: &[usize]) -> String {
        self.describe_scored(&self.problem.score(index, self.tts_w()))
    }

    /// A scored configuration as text, a hybrid component as ranks x threads per rank
    /// (`oifs 420x4 + nemo 559`, as `predict` writes it); cores otherwise, as [`Self::describe`].
    pub fn describe_scored(&self, c: &Scored) -> String {
        let threads = self.threads_of(c);
        if threads.iter().all(|&t| t <= 1) {
            return self.describe(&c.nproc);
        }
        self.problem
            .names()
            .iter()
            .zip(&c.nproc)
            .zip(&threads)
            .map(|((name, p), &t)| match t {
                1 => format!("{name} {p}"),
                t => format!("{name} {}x{t}", p / t),
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// Threads per rank of each component of `c`: the ones its score chose, else the watched
    /// campaign's where its cores are whole ranks of them, else 1.
    pub fn threads_of(&self, c: &Scored) -> Vec<u32> {
        if c.threads.iter().any(|&t| t > 1) {
            return c.threads.clone();
        }
        c.nproc
            .iter()
            .enumerate()
            .map(|(k, &p)| match self.campaign_threads.get(k).copied() {
                Some(t) if t > 1 && p % t == 0 => t,
                _ => 1,
            })
            .collect()
    }

    /// Whether any candidate may be written `ranks x threads`.
    pub fn is_threaded(&self) -> bool {
        self.problem.is_threaded() || self.campaign_threads.iter().any(|&t| t > 1)
    }

    /// The model that colours the matrix and ranks the top N now.
    pub fn active_model(&self) -> &Model {
        static STANDALONE: Model = Model::Standalone;
        match (&self.calibration, self.model) {
            (Some(c), ModelKind::Calibrated) => &c.model,
            _ => &STANDALONE,
        }
    }

    /// The model of a kind: the calibration's for a calibrated one (when there is one).
    pub fn model_of(&self, kind: ModelKind) -> Model {
        match (&self.calibration, kind) {
            (Some(c), ModelKind::Calibrated) => c.model.clone(),
            _ => Model::Standalone,
        }
    }

    /// Sets TTS_w (in hundredths, clamped to 0..=100); whether it changed.
    pub fn set_tts_w(&mut self, pct: i16) -> bool {
        let pct = pct.clamp(0, 100) as u8;
        let changed = pct != self.tts_w_pct;
        self.tts_w_pct = pct;
        changed
    }

    /// Sets the top N (clamped to 1..=99); whether it changed.
    pub fn set_top(&mut self, top: usize) -> bool {
        let top = top.clamp(1, 99);
        let changed = top != self.top;
        self.top = top;
        changed
    }

    /// Re-ranks at the current TTS_w and top N. With the calibrated model the top N shows the
    /// full model's numbers and order, as `predict --measured` does (the matrix keeps the
    /// search's bound: it scores cells without re-estimating each).
    pub fn rerank(&mut self) {
        self.prediction = autolb::predict::full_model::rank(
            &self.problem,
            self.active_model(),
            &self.inputs,
            self.tts_w(),
            self.top,
        );
        self.top_selected = self
            .top_selected
            .min(self.prediction.top.len().saturating_sub(1));
        self.rank_groups();
    }

    /// Moves the top-N selection one entry up or down, within the list.
    pub fn walk_top(&mut self, up: bool) {
        self.top_selected = if up {
            self.top_selected.saturating_sub(1)
        } else {
            (self.top_selected + 1).min(self.prediction.top.len().saturating_sub(1))
        };
    }
}

/// Candidate indices of a configuration given by PEs.
pub fn index_of(problem: &Problem, nproc: &[u32]) -> Option<Vec<usize>> {
    nproc
        .iter()
        .enumerate()
        .map(|(i, &p)| problem.candidate_index(i, p))
        .collect()
}

/// Samples a curve's interpolation for drawing (the measured points are drawn on top).
fn sample_curve(input: &ComponentInput, method: autolb::interp::Method) -> CurveSeries {
    let Some(curve) = &input.curve else {
        let (lo, hi) = input.range().unwrap_or((1, 1));
        return CurveSeries {
            name: input.name().to_string(),
            measured: Vec::new(),
            line: Vec::new(),
            span: (f64::from(lo), f64::from(hi)),
        };
    };
    let interpolant = Interpolant::new(method, &curve.xs(), &curve.ys());
    let (a, b) = (
        f64::from(curve.first_nproc()),
        f64::from(curve.last_nproc()),
    );
    const SAMPLES: usize = 200;
    let line = (0..=SAMPLES)
        .map(|i| {
            let x = a + (b - a) * i as f64 / SAMPLES as f64;
            (x, interpolant.eval(x))
        })
        .filter(|(_, y)| y.is_finite())
        .collect();
    CurveSeries {
        name: curve.name.clone(),
        measured: curve
            .points()
            .iter()
            .map(|p| (f64::from(p.nproc), p.sypd))
            .collect(),
        line,
        span: (a, b),
    }
}
