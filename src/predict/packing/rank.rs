//! Ranking node counts: the best packing of each, scored by fittingness (speed against billed
//! node-hours), with the model's SYPD and band.

use serde::Serialize;

use super::{best_packing, Packing, PackingError, PackingProblem, PinnedHelper};
use crate::curve::{Curve, Point};
use crate::interp::Interpolant;
use crate::metrics::{self, Bounds};
use crate::model::{EstimateRequest, Model, ModelKind};
use crate::predict::{ComponentInput, Settings};

/// A packing scored against the others of a node range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredPacking {
    /// The packing; its `sypd` is the model's coupled SYPD.
    pub packing: Packing,
    /// Billed core-hours per simulated year, whole nodes (NHSY, as `cost = "node-hours"` counts it).
    pub nhsy: f64,
    /// Fittingness among the best packings of the node range, at the ranking's TTS_w.
    pub fittingness: f64,
    /// Lower end of the model's band on the SYPD (about 90 %); the SYPD itself with the
    /// standalone curves, which carry no uncertainty of their own.
    pub sypd_low: f64,
    /// Upper end of the band.
    pub sypd_high: f64,
}

/// Node packings ranked for a view: what `predict` prints and the app shows for a file whose
/// `[machine]` packs nodes ([`rank_node_packings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RankedPackings {
    /// The problem searched (the components' and helpers' order of every packing's lists).
    pub problem: PackingProblem,
    /// Node counts searched: 1 to this (the budget's whole nodes).
    pub max_nodes: u32,
    /// Which model gave the speeds.
    pub model: ModelKind,
    /// Measured runs the calibrated model learned from (0 for the standalone curves).
    pub runs: usize,
    /// The best packing of each node count, best first, at most the settings' `top`.
    pub top: Vec<ScoredPacking>,
}

impl RankedPackings {
    /// What ranked the packings, in lines of at most 90 characters to print next to them:
    /// with the standalone curves it warns that they are not corrected by measured runs, since
    /// coupled runs go slower than the curves promise.
    pub fn basis(&self) -> Vec<String> {
        match self.model {
            ModelKind::Calibrated => vec![
                format!(
                    "ranked by the calibrated model, fitted on {} measured run(s);",
                    self.runs
                ),
                "SYPD band: the model's 90 % interval".to_string(),
            ],
            ModelKind::Standalone => vec![
                "ranked by the standalone curves only, not corrected by measured runs:".to_string(),
                "coupled runs go slower than the curves say (about 5 % on a cold start's own runs)"
                    .to_string(),
            ],
        }
    }
}

/// The best packing of every node count the budget allows (1 to `settings.max_nproc /
/// cores_per_node` whole nodes), ranked by fittingness at `settings.tts_w`, best first, at most
/// `settings.top`: the one ranking every view of node packings calls.
///
/// `model` gives the speeds: [`Model::Standalone`] reads them off the curves; a calibrated
/// model (fitted on measured runs, [`Model::fit`]) corrects them to coupled-mode speeds and
/// gives each packing's SYPD its band. The calibrated model counts a component's PEs in cores
/// (ranks x threads), as a campaign does, so fit it on runs whose PE counts are cores
/// against curves in cores ([`model_components`] gives those curves; for a campaign directory,
/// `campaign::measured::campaign_model` fits the same model, its curve copies counting cores at
/// the campaign's threads). The packing of each node count is the fastest by the model's
/// balance-free speeds (exact for them, [`PackingProblem::with_model`]); its SYPD and band are
/// the full model's ([`Model::estimate`]).
///
/// `helpers` are the file's pinned helpers (`CampaignFile::pinned_helpers`); `inputs` need a
/// curve each. Errors when the budget holds no whole node, when no node count lets every
/// component run, or as [`PackingError`] says.
pub fn rank_node_packings(
    inputs: &[ComponentInput],
    helpers: Vec<PinnedHelper>,
    settings: &Settings,
    cores_per_node: u32,
    model: &Model,
) -> Result<RankedPackings, PackingError> {
    let max_nodes = settings.max_nproc.checked_div(cores_per_node).unwrap_or(0);
    if max_nodes == 0 {
        return Err(PackingError::BudgetBelowOneNode {
            max_nproc: settings.max_nproc,
            cores: cores_per_node,
        });
    }
    let interp = settings.interp;
    let problem =
        PackingProblem::with_model(inputs, helpers, cores_per_node, interp, max_nodes, model)?;
    let names: Vec<String> = inputs.iter().map(|c| c.name.clone()).collect();
    // Each component's curve at each thread count, as the search read it.
    let curves: Vec<Vec<(u32, Interpolant)>> = inputs
        .iter()
        .map(|c| {
            c.series()
                .map(|s| (s.threads(), Interpolant::new(interp, &s.xs(), &s.ys())))
                .collect()
        })
        .collect();
    let mut found = Vec::new();
    for n in 1..=max_nodes {
        let Some(mut packing) = best_packing(&problem, n)? else {
            continue;
        };
        let cores: Vec<u32> = packing
            .ranks
            .iter()
            .zip(&packing.threads)
            .map(|(r, t)| r * t)
            .collect();
        let standalone: Vec<f64> = curves
            .iter()
            .zip(packing.ranks.iter().zip(&packing.threads))
            .map(|(series, (&r, &t))| {
                series
                    .iter()
                    .find(|(threads, _)| *threads == t)
                    .map_or(f64::NAN, |(_, f)| f.eval(f64::from(r)))
            })
            .collect();
        let e = model.estimate(&EstimateRequest::known(&names, &cores, &standalone));
        packing.sypd = e.sypd;
        found.push((packing, (e.low, e.high)));
    }
    let top = score(found, cores_per_node, settings.tts_w, settings.top);
    if top.is_empty() {
        return Err(PackingError::NothingRuns(max_nodes));
    }
    let runs = match model {
        Model::Calibrated(m) => m.runs,
        Model::Standalone => 0,
    };
    Ok(RankedPackings {
        problem,
        max_nodes,
        model: model.kind(),
        runs,
        top,
    })
}

/// The components as the calibrated model learns them for [`rank_node_packings`]: each at the
/// thread count its measured runs ran (`threads`, one per input, in order), with the curve of
/// that thread count in cores (ranks x threads), so that the model counts PEs in cores as the
/// runs of a campaign do. A pure-MPI component is unchanged. Errors, naming the thread counts
/// the curve measures, when one of `threads` has no curve.
pub fn model_components(
    inputs: &[ComponentInput],
    threads: &[u32],
) -> Result<Vec<ComponentInput>, String> {
    inputs
        .iter()
        .zip(threads)
        .map(|(input, &t)| {
            if !input.is_threaded() && t <= 1 {
                return Ok(input.clone());
            }
            let measured: Vec<String> = input.series().map(|c| c.threads().to_string()).collect();
            let Some(curve) = input.series().find(|c| c.threads() == t) else {
                return Err(format!(
                    "{}: the measured runs ran {t} thread(s) per rank, and its curve measures {} only; add rows at {t} threads to its curve",
                    input.name,
                    measured.join(", ")
                ));
            };
            let points: Vec<Point> = curve
                .points()
                .iter()
                .map(|p| Point {
                    nproc: p.nproc.saturating_mul(t),
                    sypd: p.sypd,
                })
                .collect();
            let in_cores = Curve::from_points(input.name.clone(), "a curve in cores", &points)
                .map_err(|e| format!("{}: {e}", input.name))?;
            Ok(ComponentInput::new(in_cores))
        })
        .collect()
}

/// The best packing of every node count in `nodes` at the problem's own speeds, ranked by
/// fittingness at `tts_w` (speed against billed core-hours, both normalised over these
/// packings), best first, at most `top`; each band is the SYPD itself.
pub fn rank_packings(
    problem: &PackingProblem,
    nodes: std::ops::RangeInclusive<u32>,
    tts_w: f64,
    top: usize,
) -> Result<Vec<ScoredPacking>, PackingError> {
    let mut found = Vec::new();
    for n in nodes {
        if let Some(p) = best_packing(problem, n)? {
            let band = (p.sypd, p.sypd);
            found.push((p, band));
        }
    }
    Ok(score(found, problem.cores_per_node, tts_w, top))
}

/// Packings with their SYPD bands scored by fittingness, best first (then fewer nodes), at
/// most `top`.
fn score(
    found: Vec<(Packing, (f64, f64))>,
    cores_per_node: u32,
    tts_w: f64,
    top: usize,
) -> Vec<ScoredPacking> {
    let sypd = Bounds::of(found.iter().map(|(p, _)| p.sypd));
    let cost = Bounds::of(found.iter().map(|(p, _)| p.nhsy(cores_per_node)));
    let mut scored: Vec<ScoredPacking> = found
        .into_iter()
        .map(|(packing, (sypd_low, sypd_high))| {
            let nhsy = packing.nhsy(cores_per_node);
            let fittingness = match (&sypd, &cost) {
                (Some(s), Some(c)) => metrics::fittingness_in(tts_w, packing.sypd, nhsy, s, c),
                _ => 0.0,
            };
            ScoredPacking {
                packing,
                nhsy,
                fittingness,
                sypd_low,
                sypd_high,
            }
        })
        .collect();
    scored.sort_by(|a, b| {
        b.fittingness
            .total_cmp(&a.fittingness)
            .then(a.packing.nodes.cmp(&b.packing.nodes))
    });
    scored.truncate(top);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Method;
    use crate::model::{MeasuredComponent, MeasuredRun};
    use crate::predict::packing::fixtures::{helper, saturating};
    use crate::predict::packing::{PackedComponent, Pinned};

    #[test]
    fn the_front_trades_nodes_for_speed() {
        let problem = PackingProblem {
            cores_per_node: 16,
            components: vec![
                PackedComponent {
                    name: "a".into(),
                    options: vec![saturating(2, 0.3, 40.0, 400), saturating(1, 0.2, 60.0, 400)],
                },
                PackedComponent {
                    name: "b".into(),
                    options: vec![saturating(1, 0.5, 50.0, 400)],
                },
            ],
            helpers: vec![helper("xios", Pinned::PerNode)],
        };
        let speed = rank_packings(&problem, 1..=12, 1.0, 12).unwrap();
        let cost = rank_packings(&problem, 1..=12, 0.0, 12).unwrap();
        // All speed: the most nodes first (speeds rise with ranks); all cost: the fewest.
        assert_eq!(speed[0].packing.nodes, 12);
        assert_eq!(cost[0].packing.nodes, 1);
        assert!(speed.iter().all(|s| (0.0..=1.0).contains(&s.fittingness)));
    }

    /// A curve of `a * r / (1 + r / knee)` at `threads` threads per rank, 1 to `max` ranks.
    fn curve(name: &str, threads: u32, a: f64, knee: f64, max: u32) -> Curve {
        let points: Vec<Point> = (1..=max)
            .step_by(4)
            .map(|r| Point {
                nproc: r,
                sypd: a * f64::from(r) / (1.0 + f64::from(r) / knee),
            })
            .collect();
        Curve::from_points(name, "test", &points)
            .unwrap()
            .with_threads(std::num::NonZeroU32::new(threads).unwrap())
    }

    /// A hybrid atmosphere measured at 1 and 2 threads per rank and a pure-MPI ocean on
    /// 16-core nodes, with runs at 2 threads per rank that go at 0.8 and 0.9 of the curves.
    #[test]
    fn a_calibrated_model_ranks_packings_at_measured_speeds_with_a_band() {
        let atmosphere = ComponentInput::threaded(
            vec![curve("a", 1, 0.2, 60.0, 400), curve("a", 2, 0.3, 40.0, 400)],
            None,
        )
        .unwrap();
        let inputs = vec![
            atmosphere,
            ComponentInput::new(curve("b", 1, 0.5, 50.0, 400)),
        ];
        let fitted = model_components(&inputs, &[2, 1]).unwrap();
        // The model's atmosphere counts cores: 2 per rank.
        let at2 = inputs[0].series().find(|c| c.threads() == 2).unwrap();
        let in_cores = fitted[0].curve.as_ref().unwrap();
        assert_eq!(in_cores.first_nproc(), 2 * at2.first_nproc());
        assert!(!fitted[0].is_threaded());
        assert!(model_components(&inputs, &[4, 1])
            .unwrap_err()
            .contains("measures 1, 2 only"));
        let interp = Method::Pchip;
        let speed_at =
            |c: &Curve, r: u32| Interpolant::new(interp, &c.xs(), &c.ys()).eval(f64::from(r));
        let b_curve = inputs[1].curve.as_ref().unwrap();
        let runs: Vec<MeasuredRun> = [(20, 30), (30, 50), (40, 40), (50, 70), (60, 60), (35, 80)]
            .iter()
            .enumerate()
            .map(|(i, &(ranks_a, pb))| {
                let sa = 0.8 * speed_at(at2, ranks_a);
                let sb = 0.9 * speed_at(b_curve, pb);
                let component = |name: &str, nproc: u32, sypd: f64| {
                    MeasuredComponent::from_speed(name, nproc, sypd)
                };
                MeasuredRun {
                    path: format!("run{i}"),
                    components: vec![component("a", 2 * ranks_a, sa), component("b", pb, sb)],
                    coupled_sypd: 0.97 * sa.min(sb),
                    simulated_s: None,
                }
            })
            .collect();
        let (model, notes) = Model::fit(&fitted, interp, &runs);
        assert!(model.is_calibrated(), "{notes:?}");
        let settings = Settings {
            max_nproc: 16 * 10,
            top: 10,
            interp,
            ..Settings::default()
        };
        let helpers = vec![helper("xios", Pinned::PerNode)];
        let alone = rank_node_packings(&inputs, helpers.clone(), &settings, 16, &Model::Standalone)
            .unwrap();
        let measured = rank_node_packings(&inputs, helpers, &settings, 16, &model).unwrap();
        assert_eq!(
            (alone.model, measured.model),
            (ModelKind::Standalone, ModelKind::Calibrated)
        );
        assert_eq!((alone.runs, measured.runs), (0, runs.len()));
        assert_eq!(measured.top.len(), 10);
        for s in &alone.top {
            assert_eq!((s.sypd_low, s.sypd_high), (s.packing.sypd, s.packing.sypd));
        }
        for s in &measured.top {
            let p = &s.packing;
            assert!(s.sypd_low < p.sypd && p.sypd < s.sypd_high, "{s:?}");
            // The runs went slower than the curves: so does every packing.
            let curves_only = alone
                .top
                .iter()
                .find(|a| a.packing.nodes == p.nodes)
                .unwrap();
            assert!(
                p.sypd < 0.95 * curves_only.packing.sypd,
                "{p:?} {curves_only:?}"
            );
            // The SYPD is the model's estimate of that packing.
            let cores: Vec<u32> = p.ranks.iter().zip(&p.threads).map(|(r, t)| r * t).collect();
            let curve_of = |c: usize| {
                inputs[c]
                    .series()
                    .find(|s| s.threads() == p.threads[c])
                    .unwrap()
            };
            let reference = [
                speed_at(curve_of(0), p.ranks[0]),
                speed_at(curve_of(1), p.ranks[1]),
            ];
            let names = ["a".to_string(), "b".to_string()];
            let e = model.estimate(&EstimateRequest::known(&names, &cores, &reference));
            assert_eq!((e.sypd, e.low, e.high), (p.sypd, s.sypd_low, s.sypd_high));
        }
        assert!(alone.basis()[0].contains("not corrected by measured runs"));
        assert!(measured.basis()[0].contains("calibrated model, fitted on 6"));
        assert!(measured
            .basis()
            .iter()
            .chain(&alone.basis())
            .all(|l| l.len() <= 90));
    }

    #[test]
    fn a_budget_below_one_node_is_refused_with_the_fix() {
        let inputs = vec![ComponentInput::new(curve("b", 1, 0.5, 50.0, 400))];
        let settings = Settings {
            max_nproc: 15,
            ..Settings::default()
        };
        let e = rank_node_packings(&inputs, vec![], &settings, 16, &Model::Standalone).unwrap_err();
        assert!(
            e.to_string().contains("less than one node of 16 cores"),
            "{e}"
        );
    }
}
