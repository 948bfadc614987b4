//! Prediction (paper section 4.1, the guide's `method/prediction.md`): score every combination of
//! PE counts within a budget with fittingness and propose the top N.
//!
//! The work is split in two so that moving the TTS_w slider is cheap:
//! * [`Problem::new`] validates the inputs, builds each component's candidate PE counts with their
//!   interpolated SYPD, and computes everything that does not depend on TTS_w: the base case, the
//!   number of feasible and kept configurations, and the min-max bounds of SYPD and CHSY over the
//!   kept ones (the normalisation of fittingness).
//! * [`Problem::rank`] finds the top N for one TTS_w; [`Problem::grid`] scores a 2-D slice for the
//!   terminal app's matrix.
//!
//! Both are exact: [`naive`] enumerates every configuration the obvious way and property tests
//! hold the fast search ([`search`]) to its answers.

pub mod at_threads;
mod candidates;
pub mod emit_ecearth4;
pub mod front;
pub mod full_model;
pub mod naive;
pub mod node_groups;
pub mod on_layout;
pub mod packing;
mod placed;
mod resources;
pub mod search;
mod sweep;
mod text;
mod types;

use serde::Serialize;

use crate::curve::Curve;
use crate::interp::{Interpolant, Method};
pub use crate::limits::{
    MAX_CANDIDATES, MAX_COMPONENTS, MAX_GRID_CELLS, MAX_SEARCH_WORK, MAX_TOP, MAX_TOTAL_PES,
};
use crate::machine::{Billing, CostKind, CostModel, MachineError};
use crate::metrics::{self, Bounds};
use crate::model::Model;
use candidates::{component_candidates, validate};
pub use text::ConfigurationText;
pub use types::{
    Candidates, Cell, ComponentInput, Grid, PredictError, Prediction, Scored, Settings,
};

/// What [`Problem::build`] takes beside the inputs and settings; each part left `None` is the
/// plain case.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProblemOptions<'a> {
    /// Where each candidate's speed comes from; `None`: the standalone curves.
    pub model: Option<&'a Model>,
    /// How configurations are billed and which queue they must fit ([`crate::machine`]);
    /// `None`: CHSY over the used PEs, no queue.
    pub cost_model: Option<&'a CostModel>,
}

/// Everything about a prediction that does not depend on TTS_w or top N.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The validated settings the problem was built with (budget, step, extra PEs, ...).
    pub settings: Settings,
    /// How configurations are billed and which queue they must fit ([`crate::machine`]).
    pub cost_model: CostModel,
    /// Each component's candidate PE counts with their speeds (adjusted by the model when one is
    /// calibrated), in input order.
    pub components: Vec<Candidates>,
    /// PEs of the base case, every component at its first candidate (the guide's
    /// `method/prediction.md`, step 5).
    pub baseline_nproc: Vec<u32>,
    /// Coupled SYPD of the base case (the slowest component's at its first candidate).
    pub baseline_sypd: f64,
    /// Feasible configurations (PE sum within the budget).
    pub configurations: u64,
    /// Kept configurations (feasible and at least as good as the base case).
    pub considered: u64,
    /// Min-max bounds of the coupled SYPD over the kept configurations, the normalisation of
    /// fittingness.
    pub sypd_bounds: Bounds,
    /// Bounds of the chosen cost over the kept configurations (CHSY without a machine).
    pub cost_bounds: Bounds,
    /// Bottleneck groups with kept configurations (see [`search`]), computed once.
    pub(crate) groups: Vec<search::Group>,
}

impl Problem {
    /// Validates the inputs and prepares the search (the expensive, TTS_w-independent part):
    /// standalone speeds, CHSY, no queue. [`Problem::build`] takes a model and a cost model.
    pub fn new(inputs: &[ComponentInput], settings: &Settings) -> Result<Problem, PredictError> {
        Problem::build(inputs, settings, ProblemOptions::default())
    }

    /// [`Problem::new`] with `options`: each candidate's speed from a model (its adjusted
    /// curve: the search is the same, only the candidate speeds differ), and a machine, a cost
    /// and queues (FN weighs the chosen cost, and with a chosen queue only the configurations
    /// that fit it are feasible).
    pub fn build(
        inputs: &[ComponentInput],
        settings: &Settings,
        options: ProblemOptions,
    ) -> Result<Problem, PredictError> {
        let standalone = Model::Standalone;
        let plain = CostModel::default();
        let model = options.model.unwrap_or(&standalone);
        let cost_model = options.cost_model.unwrap_or(&plain);
        validate(inputs, settings)?;
        cost_model.validate()?;
        if cost_model.has_resources() && cost_model.component_resource.len() != inputs.len() {
            return Err(PredictError::ResourceCount {
                components: inputs.len(),
                assigned: cost_model.component_resource.len(),
            });
        }
        // Each component's candidates stop at its own resource's budget.
        let mut components: Vec<Candidates> = inputs
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let own = Settings {
                    max_nproc: cost_model.budget_of(k, settings.max_nproc),
                    ..settings.clone()
                };
                component_candidates(
                    c,
                    &own,
                    model,
                    cost_model.machine.as_ref().map(|m| m.cores_per_node),
                )
            })
            .collect::<Result<_, _>>()?;
        if model.is_calibrated() {
            for c in &mut components {
                for (p, s) in c.nproc.iter().zip(c.sypd.iter_mut()) {
                    *s = model.adjust(&c.name, *p, *s);
                }
            }
        }
        let baseline_nproc: Vec<u32> = components.iter().map(|c| c.nproc[0]).collect();
        // Each candidate is within the budget, and there are at most MAX_COMPONENTS of them,
        // so the sum fits in u64; compared before narrowing.
        let base_sum64: u64 = baseline_nproc.iter().map(|&p| u64::from(p)).sum();
        let base_sum = u32::try_from(base_sum64).unwrap_or(u32::MAX);
        if cost_model.has_resources() {
            resources::check_base(&components, cost_model, settings.max_nproc)?;
        } else if base_sum64 > u64::from(settings.max_nproc) {
            let names: Vec<String> = components.iter().map(|c| c.name.clone()).collect();
            let detail = ConfigurationText::new(&names, &baseline_nproc).to_string();
            return Err(PredictError::BudgetBelowBase {
                budget: settings.max_nproc,
                base: base_sum,
                detail,
            });
        }
        let baseline_sypd = components
            .iter()
            .map(|c| c.sypd[0])
            .fold(f64::INFINITY, f64::min);
        let mut problem = Problem {
            settings: settings.clone(),
            cost_model: cost_model.clone(),
            components,
            baseline_nproc,
            baseline_sypd,
            configurations: 0,
            considered: 0,
            sypd_bounds: Bounds {
                min: baseline_sypd,
                max: baseline_sypd,
            },
            cost_bounds: Bounds { min: 0.0, max: 0.0 },
            groups: Vec::new(),
        };
        search::check_work(&problem)?;
        let summary = search::summarise(&problem);
        if summary.kept == 0 {
            let queue = cost_model.queue.clone().unwrap_or_default();
            return Err(PredictError::NothingFitsQueue(queue));
        }
        problem.configurations = summary.feasible;
        problem.considered = summary.kept;
        problem.sypd_bounds = summary.sypd_bounds;
        problem.cost_bounds = summary.cost_bounds;
        problem.groups = summary.groups;
        Ok(problem)
    }

    /// The components' names, in input order.
    pub fn names(&self) -> Vec<String> {
        self.components.iter().map(|c| c.name.clone()).collect()
    }

    /// Total PEs of a configuration given its balanced PEs.
    pub fn total_nproc(&self, balanced_sum: u32) -> u32 {
        balanced_sum + self.settings.extra_pes
    }

    /// The largest balanced PE sum a configuration may have: the budget, lowered by the chosen
    /// queue's core or node limit when the cost follows the PE sum (packed nodes or no machine;
    /// per-component node limits are checked per configuration).
    pub fn sum_cap(&self) -> u32 {
        let budget = self.settings.max_nproc;
        let model = &self.cost_model;
        let Some(queue) = model.chosen_queue() else {
            return budget;
        };
        if !model.cost_follows_sum() {
            return budget;
        }
        let extras = self.settings.extra_pes;
        let fits = |sum: u32| {
            queue.fits(
                model.allocated(sum, 0, extras),
                model.nodes(sum, 0, extras),
                f64::INFINITY,
            )
        };
        // Allocated cores and nodes never fall as the sum grows: walk down to the first fit.
        let mut s = budget;
        while s > 0 && !fits(s) {
            s -= 1;
        }
        s
    }

    /// Whether a coupled speed meets the chosen queue's wall-time limit.
    pub fn sypd_fits_queue(&self, sypd: f64) -> bool {
        self.cost_model
            .chosen_queue()
            .and_then(|q| q.min_sypd())
            .is_none_or(|m| sypd >= m)
    }

    /// The cost weight at a balanced PE sum, for models whose cost follows the sum.
    pub fn weight_at_sum(&self, sum: u32) -> f64 {
        self.cost_model.weight(sum, 0, self.settings.extra_pes)
    }

    /// The largest balanced PE sum a configuration of coupled speed `sypd` may have and still be
    /// kept: within the budget and at least as good as the base case. Computed with the same
    /// floating-point expression as the filter itself, so the fast search and the naive
    /// enumeration agree to the last configuration.
    pub fn kept_sum_limit(&self, sypd: f64) -> Option<u32> {
        let extra = f64::from(self.settings.extra_pes);
        let base_total = f64::from(self.total_nproc(self.baseline_nproc.iter().sum()));
        let keeps = |sum: u32| {
            metrics::beats_base_case(sypd, f64::from(sum) + extra, self.baseline_sypd, base_total)
        };
        let budget = self.settings.max_nproc;
        if keeps(budget) {
            return Some(budget);
        }
        // keeps() is monotone: true up to some sum, false after. Estimate, then settle exactly.
        let ratio = sypd / self.baseline_sypd;
        let estimate = (ratio * ratio * base_total - extra).floor();
        let mut s = if estimate.is_finite() {
            estimate.clamp(0.0, f64::from(budget)) as u32
        } else {
            0
        };
        while s > 0 && !keeps(s) {
            s -= 1;
        }
        if !keeps(s) {
            return None;
        }
        while s < budget && keeps(s + 1) {
            s += 1;
        }
        Some(s)
    }

    /// Scores one configuration (given by candidate indices) against this problem's bounds.
    pub fn score(&self, index: &[usize], tts_w: f64) -> Scored {
        let nproc: Vec<u32> = index
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        let speeds: Vec<f64> = index
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| c.sypd[i])
            .collect();
        let mut scored = self.score_values(&nproc, &speeds, tts_w);
        scored.threads = index
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| c.threads[i])
            .collect();
        scored
    }

    /// Whether any component has a candidate with more than one thread per rank; outputs show
    /// ranks, threads and cores then, and look as they did before threads otherwise.
    pub fn is_threaded(&self) -> bool {
        self.components
            .iter()
            .any(|c| !types::all_single(&c.threads))
    }

    fn score_values(&self, nproc: &[u32], speeds: &[f64], tts_w: f64) -> Scored {
        let sypd = coupled_sypd(speeds);
        let total = self.total_nproc(nproc.iter().sum());
        let resources = self.cost_model.has_resources();
        let chsy = if resources {
            metrics::chsy(self.used_weight(nproc), sypd)
        } else {
            metrics::chsy(f64::from(total), sypd)
        };
        let billing = self
            .cost_model
            .billing(nproc, self.settings.extra_pes, sypd);
        let cost = billing.as_ref().map_or(chsy, |b| b.cost);
        // Core time in CPU core-hour equivalents: a waiting GPU wastes what it costs.
        let pairs: Vec<(f64, f64)> = if resources {
            nproc
                .iter()
                .zip(speeds)
                .enumerate()
                .map(|(c, (&p, &s))| (self.cost_model.unit_cost_of(c) * f64::from(p), s))
                .collect()
        } else {
            nproc
                .iter()
                .zip(speeds)
                .map(|(&p, &s)| (f64::from(p), s))
                .collect()
        };
        Scored {
            nproc: nproc.to_vec(),
            threads: vec![1; nproc.len()],
            total_nproc: total,
            sypd,
            chsy,
            coupling_cost: metrics::predicted_coupling_cost(sypd, &pairs),
            fittingness: metrics::fittingness_in(
                tts_w,
                sypd,
                cost,
                &self.sypd_bounds,
                &self.cost_bounds,
            ),
            billing,
        }
    }

    /// The chosen cost's weight `W` of a configuration (cost = 24 W / SYPD; see
    /// [`crate::machine`]).
    pub fn weight_of(&self, nproc: &[u32]) -> f64 {
        self.cost_model.weight_of(nproc, self.settings.extra_pes)
    }

    /// Whether a configuration fits every budget: the balanced PE sum within `max_nproc`, or
    /// with `[[resource]]` tables each resource's units within its own budget.
    pub fn fits(&self, nproc: &[u32]) -> bool {
        self.cost_model.fits_budgets(nproc, self.settings.max_nproc)
    }

    /// The units a configuration uses in CPU-core equivalents (its PEs with the extras without
    /// resources); CHSY is `24 *` this `/ SYPD`.
    pub fn used_weight(&self, nproc: &[u32]) -> f64 {
        self.cost_model.used_weight(nproc, self.settings.extra_pes)
    }

    /// Whether a configuration at coupled speed `sypd` is at least as good as the base case
    /// (the guide's `method/prediction.md`, step 5), comparing [`Problem::used_weight`]s.
    pub fn keeps(&self, sypd: f64, nproc: &[u32]) -> bool {
        self.keeps_weight(sypd, self.used_weight(nproc))
    }

    /// [`Problem::keeps`] for a configuration of used weight `weight`.
    pub fn keeps_weight(&self, sypd: f64, weight: f64) -> bool {
        metrics::beats_base_case(
            sypd,
            weight,
            self.baseline_sypd,
            self.used_weight(&self.baseline_nproc),
        )
    }

    /// Whether a configuration fits the chosen queue (always without one).
    pub fn fits_queue(&self, nproc: &[u32], sypd: f64) -> bool {
        self.cost_model.fits(nproc, self.settings.extra_pes, sypd)
    }

    /// The base case, scored.
    pub fn baseline(&self, tts_w: f64) -> Scored {
        self.score(&vec![0; self.components.len()], tts_w)
    }

    /// The top `top` configurations for `tts_w`, with the TTS_w-independent figures.
    pub fn rank(&self, tts_w: f64, top: usize) -> Prediction {
        let top = search::top_n(self, tts_w, top)
            .into_iter()
            .map(|index| self.score(&index, tts_w))
            .collect();
        Prediction {
            components: self.names(),
            configurations: self.configurations,
            considered: self.considered,
            baseline: self.baseline(tts_w),
            sypd_bounds: self.sypd_bounds,
            cost_bounds: self.cost_bounds,
            tts_w,
            top,
            cost: (!self.cost_model.is_plain()).then_some(self.cost_model.cost),
        }
    }

    /// Cells of the largest 2-D slice over any two components ([`Problem::grid`]); an error
    /// past [`MAX_GRID_CELLS`], for front ends that draw the whole slice.
    pub fn check_grid_size(&self) -> Result<(), String> {
        let sizes: Vec<(u64, &str)> = self
            .components
            .iter()
            .map(|c| (c.nproc.len() as u64, c.name.as_str()))
            .collect();
        for (i, (a, an)) in sizes.iter().enumerate() {
            for (b, bn) in sizes.iter().skip(i + 1) {
                if a * b > MAX_GRID_CELLS {
                    return Err(format!(
                        "the matrix of {an} ({a} candidates) by {bn} ({b} candidates) would have \
                         {} cells, more than the {MAX_GRID_CELLS} drawn at most; raise --step or \
                         lower --max-nproc",
                        a * b
                    ));
                }
            }
        }
        Ok(())
    }

    /// The candidate index of `nproc` in component `component`, if it is a candidate (the one
    /// with the fewest threads per rank when several take `nproc` cores).
    pub fn candidate_index(&self, component: usize, nproc: u32) -> Option<usize> {
        let c = &self.components[component];
        let at = c.nproc.partition_point(|&p| p < nproc);
        (c.nproc.get(at) == Some(&nproc)).then_some(at)
    }

    /// The candidate index of `nproc` cores at `threads` per rank in component `component`.
    pub fn candidate_index_at(&self, component: usize, nproc: u32, threads: u32) -> Option<usize> {
        let c = &self.components[component];
        let at = c.nproc.partition_point(|&p| p < nproc);
        (at..c.nproc.len())
            .take_while(|&i| c.nproc[i] == nproc)
            .find(|&i| c.threads[i] == threads)
    }

    /// The candidate indices of a scored configuration (its PEs and threads).
    pub fn index_of(&self, config: &Scored) -> Option<Vec<usize>> {
        (0..self.components.len())
            .map(|d| {
                let threads = config.threads.get(d).copied().unwrap_or(1);
                self.candidate_index_at(d, *config.nproc.get(d)?, threads)
            })
            .collect()
    }

    /// Scores the 2-D slice with component `rows` down and `cols` across; every other component
    /// stays at its index in `fixed` (the entries for `rows` and `cols` are ignored).
    pub fn grid(&self, rows: usize, cols: usize, fixed: &[usize], tts_w: f64) -> Grid {
        let mut index = fixed.to_vec();
        let (rc, cc) = (&self.components[rows], &self.components[cols]);
        let mut cells = Vec::with_capacity(rc.nproc.len() * cc.nproc.len());
        for r in 0..rc.nproc.len() {
            for c in 0..cc.nproc.len() {
                index[rows] = r;
                index[cols] = c;
                cells.push(self.cell(&index, tts_w));
            }
        }
        Grid {
            rows,
            cols,
            row_nproc: rc.nproc.clone(),
            col_nproc: cc.nproc.clone(),
            cells,
        }
    }

    /// Classifies and scores one configuration.
    pub fn cell(&self, index: &[usize], tts_w: f64) -> Cell {
        let sum: u64 = index
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| u64::from(c.nproc[i]))
            .sum();
        let nproc: Vec<u32> = index
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        let resources = self.cost_model.has_resources();
        if (resources && !self.fits(&nproc))
            || (!resources && sum > u64::from(self.settings.max_nproc))
        {
            return Cell::OverBudget;
        }
        let config = self.score(index, tts_w);
        // Outside the chosen queue is outside what the job may ask for: like over the budget.
        if !self.fits_queue(&config.nproc, config.sypd) {
            return Cell::OverBudget;
        }
        let kept = if resources {
            self.keeps(config.sypd, &nproc)
        } else {
            self.kept_sum_limit(config.sypd)
                .is_some_and(|limit| sum <= u64::from(limit))
        };
        if kept {
            Cell::Scored {
                sypd: config.sypd,
                chsy: config.chsy,
                coupling_cost: config.coupling_cost,
                fittingness: config.fittingness,
            }
        } else {
            Cell::WorseThanBase {
                sypd: config.sypd,
                chsy: config.chsy,
            }
        }
    }
}

/// One component's choices on a layout tree ([`crate::layout::ranked`]): its candidates as
/// this search builds them (step 1 of the guide's `method/prediction.md`, at every thread count
/// its curves measure), each as MPI tasks, threads per task and seconds per simulated year.
pub fn layout_choices(
    input: &ComponentInput,
    settings: &Settings,
) -> Result<Vec<crate::layout::ranked::Choice>, PredictError> {
    let c = component_candidates(input, settings, &Model::Standalone, None)?;
    Ok(c.nproc
        .iter()
        .zip(&c.threads)
        .zip(&c.sypd)
        .map(
            |((&cores, &threads), &sypd)| crate::layout::ranked::Choice {
                tasks: cores / threads.max(1),
                threads: threads.max(1),
                run_s: metrics::SECONDS_PER_DAY / sypd,
            },
        )
        .collect())
}

/// The coupled SYPD from the components' speeds; defined beside the other metrics, which the
/// standalone model uses too.
pub use crate::metrics::coupled_sypd;

/// Validates, prepares and ranks in one call.
pub fn predict(inputs: &[ComponentInput], settings: &Settings) -> Result<Prediction, PredictError> {
    let problem = Problem::new(inputs, settings)?;
    Ok(problem.rank(settings.tts_w, settings.top))
}

/// [`predict`] with a machine, a cost and queues ([`Problem::build`]).
pub fn predict_billed(
    inputs: &[ComponentInput],
    settings: &Settings,
    cost_model: &CostModel,
) -> Result<Prediction, PredictError> {
    let problem = Problem::build(
        inputs,
        settings,
        ProblemOptions {
            model: None,
            cost_model: Some(cost_model),
        },
    )?;
    Ok(problem.rank(settings.tts_w, settings.top))
}

/// The ranking order (the guide's `method/prediction.md`, step 6): fittingness descending, then
/// total PEs ascending, then the PE counts in component order ascending, then (equal cores at
/// other thread counts) the threads per rank ascending.
pub fn rank_order(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    b.fittingness
        .total_cmp(&a.fittingness)
        .then(a.total_nproc.cmp(&b.total_nproc))
        .then_with(|| a.nproc.cmp(&b.nproc))
        .then_with(|| a.threads.cmp(&b.threads))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::Point;

    fn input(name: &str, last: u32) -> ComponentInput {
        let points = [
            Point {
                nproc: 10,
                sypd: 1.0,
            },
            Point {
                nproc: last,
                sypd: 20.0,
            },
        ];
        ComponentInput::new(Curve::from_points(name, "t", &points).unwrap())
    }

    #[test]
    fn limits_are_checked_before_any_work() {
        let settings = |max_nproc: u32, extra_pes: u32, top: usize| Settings {
            max_nproc,
            extra_pes,
            top,
            ..Settings::default()
        };
        let two = [input("A", 480_000_000), input("B", 5000)];
        assert!(matches!(
            Problem::new(&two, &settings(480_000_000, 0, 5)),
            Err(PredictError::TotalTooLarge { .. })
        ));
        assert!(matches!(
            Problem::new(&two, &settings(1000, u32::MAX, 5)),
            Err(PredictError::TotalTooLarge { .. })
        ));
        assert!(matches!(
            Problem::new(&two, &settings(1000, 0, 500_000_000)),
            Err(PredictError::TopTooLarge(500_000_000))
        ));
        let e = Problem::new(&two, &settings(90_000_000, 0, 5)).unwrap_err();
        assert!(matches!(e, PredictError::TooManyCandidates { ref name, .. } if name == "A"));
        // Within a budget of 6000 the typo leaves 5991 candidates of A: fine, and the whole
        // curve is not generated (only up to the budget).
        let p = Problem::new(&two, &settings(6000, 0, 5)).unwrap();
        assert_eq!(p.components[0].nproc.last(), Some(&6000));
        // The largest matrix the app would draw: 5991 x 4991 cells is too many.
        assert!(p.check_grid_size().unwrap_err().contains("--step"));
        // Three components: the convolution's work is bounded.
        let three = [input("A", 50_000), input("B", 50_000), input("C", 50_000)];
        assert!(matches!(
            Problem::new(&three, &settings(100_000, 0, 5)),
            Err(PredictError::SearchTooLarge { .. })
        ));
    }

    #[test]
    fn prediction_json_keeps_its_keys_under_the_new_field_names() {
        let inputs = [input("A", 100), input("B", 100)];
        let settings = Settings {
            max_nproc: 150,
            ..Settings::default()
        };
        let problem = Problem::new(&inputs, &settings).unwrap();
        let prediction = problem.rank(0.5, 3);
        let json = serde_json::to_value(&prediction).unwrap();
        assert_eq!(json["candidates"].as_u64(), Some(prediction.configurations));
        assert_eq!(json["chsy_bounds"]["max"], prediction.cost_bounds.max);
        assert!(json.get("configurations").is_none() && json.get("cost_bounds").is_none());
    }

    #[test]
    fn options_left_out_are_the_standalone_model_and_the_plain_cost() {
        let inputs = [input("A", 100), input("B", 100)];
        let settings = Settings {
            max_nproc: 150,
            ..Settings::default()
        };
        let plain = Problem::new(&inputs, &settings).unwrap().rank(0.5, 3);
        let spelled_out = ProblemOptions {
            model: Some(&Model::Standalone),
            cost_model: Some(&CostModel::default()),
        };
        let built = Problem::build(&inputs, &settings, spelled_out).unwrap();
        assert_eq!(built.rank(0.5, 3), plain);
    }
}
