//! The trade-off pane's state: the speed/cost front, who wins which TTS_w, the cursor on the
//! front, and a thinned cloud of the kept configurations to draw faintly behind it.
//!
//! All of it depends on the problem only (the budget, the curves, the model, the cost), never on
//! TTS_w, so it is computed when the app starts and whenever the problem changes (budget `{`/`}`,
//! cost `$`, model `M`, a refitted calibration), not on every key. The cost axis is the cost FN
//! weighs: CHSY, or the machine's bill.

use autolb::metrics;
use autolb::model::MeasuredRun;
use autolb::predict::front::Winner;
use autolb::predict::{Problem, Scored};

/// A configuration measured by a campaign, as a point of the scatter.
///
/// The app fills [`TradeOffState::measured`] from the calibrated model's training runs
/// ([`measured_points`]) and the pane draws them in their own glyph (`M`).
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    pub nproc: Vec<u32>,
    pub sypd: f64,
    /// The cost on the pane's cost axis: CHSY, or the machine's bill once the app reprices it.
    pub chsy: f64,
}

/// The measured runs as scatter points: PEs in the problem's component order, the coupled SYPD
/// they ran at, and CHSY over those PEs plus the extra PEs. Runs missing a component of the
/// problem, or without a positive speed, are left out.
pub fn measured_points(
    runs: &[MeasuredRun],
    names: &[String],
    extra_pes: u32,
) -> Vec<MeasuredPoint> {
    runs.iter()
        .filter(|r| r.coupled_sypd.is_finite() && r.coupled_sypd > 0.0)
        .filter_map(|r| {
            let nproc: Vec<u32> = names.iter().map(|n| r.nproc(n)).collect::<Option<_>>()?;
            let total = nproc.iter().map(|&p| f64::from(p)).sum::<f64>() + f64::from(extra_pes);
            Some(MeasuredPoint {
                sypd: r.coupled_sypd,
                chsy: metrics::chsy(total, r.coupled_sypd),
                nproc,
            })
        })
        .collect()
}

/// Most cloud points drawn (the kept set of a step-1 problem holds millions).
const CLOUD_CELLS: usize = 160;

#[derive(Debug, Clone, Default)]
pub struct TradeOffState {
    /// The front in ascending SYPD (and CHSY).
    pub front: Vec<Scored>,
    /// Contiguous TTS_w intervals from 0 to 1 and their top-1.
    pub winners: Vec<Winner>,
    /// Index into `front` of the cursor.
    pub selected: usize,
    /// (cost, SYPD) of kept configurations in the matrix slice, thinned to a lattice.
    pub cloud: Vec<(f64, f64)>,
    /// Measured configurations (empty until a calibrated model provides them).
    pub measured: Vec<MeasuredPoint>,
}

impl TradeOffState {
    /// The front and winners of `problem`, with `kept` the (cost, SYPD) of the kept
    /// configurations of the matrix slice (see [`super::slice::cloud_points_of`]).
    pub fn new(problem: &Problem, kept: Vec<(f64, f64)>) -> TradeOffState {
        let (front, winners) = problem.trade_off(problem.settings.tts_w);
        TradeOffState {
            cloud: cloud(kept, &front),
            front,
            winners,
            selected: 0,
            measured: Vec::new(),
        }
    }

    /// Puts the cursor on the front point of `nproc`, if it is one.
    pub fn select(&mut self, nproc: &[u32]) {
        if let Some(i) = self.front.iter().position(|c| c.nproc == nproc) {
            self.selected = i;
        }
    }

    /// Puts the cursor on the front point nearest `sypd` in speed.
    pub fn select_nearest(&mut self, sypd: f64) {
        if let Some((i, _)) = self
            .front
            .iter()
            .enumerate()
            .min_by(|a, b| (a.1.sypd - sypd).abs().total_cmp(&(b.1.sypd - sypd).abs()))
        {
            self.selected = i;
        }
    }

    /// Moves the cursor `by` points along the front (positive: faster and dearer).
    pub fn walk(&mut self, by: isize) {
        let last = self.front.len().saturating_sub(1) as isize;
        self.selected = (self.selected as isize + by).clamp(0, last) as usize;
    }

    pub fn selected_config(&self) -> Option<&Scored> {
        self.front.get(self.selected)
    }

    /// Index into `winners` of the interval holding `w`.
    pub fn winner_at(&self, w: f64) -> Option<usize> {
        self.winners
            .iter()
            .enumerate()
            .position(|(k, win)| win.holds_at(w, k == 0))
    }

    /// Index into `winners` of `nproc`'s interval, if it wins one.
    pub fn winner_of(&self, nproc: &[u32]) -> Option<usize> {
        self.winners.iter().position(|w| w.config.nproc == nproc)
    }

    /// The measured points' cost, billed like `problem`.
    pub fn reprice_measured(&mut self, problem: &Problem) {
        let extras = problem.settings.extra_pes;
        let model = &problem.cost_model;
        for m in &mut self.measured {
            m.chsy = metrics::chsy(model.weight_of(&m.nproc, extras), m.sypd);
        }
    }

    /// The refreshed cloud after the matrix slice changed.
    pub fn recloud(&mut self, kept: Vec<(f64, f64)>) {
        self.cloud = cloud(kept, &self.front);
    }
}

/// The name of the `k`-th winner, as the report names it
/// ([`autolb::report::figures::winner_letter`]: `A` to `Z`, then `AA`, ...), in lower case
/// unless it is the current one: `a`, `b`, ..., `aa`; `A` when current.
pub fn winner_label(k: usize, current: bool) -> String {
    let name = autolb::report::figures::winner_letter(k);
    if current {
        name
    } else {
        name.to_ascii_lowercase()
    }
}

/// The `k`-th winner in one cell of the winners strip: its name when that is one letter, `+`
/// past `z` (the trade-off pane and the report give its whole name), so a letter in the strip
/// never stands for two configurations.
pub fn winner_cell(k: usize) -> char {
    let name = winner_label(k, false);
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c,
        _ => '+',
    }
}

/// The kept cells of the slice, one per cell of a `CLOUD_CELLS` x `CLOUD_CELLS` lattice over
/// the slice's (cost, SYPD) range, so drawing costs the same whatever the step.
fn cloud(kept: Vec<(f64, f64)>, front: &[Scored]) -> Vec<(f64, f64)> {
    let all = kept
        .iter()
        .copied()
        .chain(front.iter().map(|c| (c.cost(), c.sypd)));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let n = CLOUD_CELLS as f64;
    let cell = |v: f64, lo: f64, hi: f64| {
        if hi > lo {
            (((v - lo) / (hi - lo)) * (n - 1.0)).round() as usize
        } else {
            0
        }
    };
    let mut seen = vec![false; CLOUD_CELLS * CLOUD_CELLS];
    let mut out = Vec::new();
    for (x, y) in kept {
        let k = cell(x, x0, x1) * CLOUD_CELLS + cell(y, y0, y1);
        if !seen[k] {
            seen[k] = true;
            out.push((x, y));
        }
    }
    out
}
