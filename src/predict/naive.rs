//! The obvious prediction: enumerate every configuration, filter, normalise, sort.
//!
//! This is the reference the fast search is held to (property tests) and the baseline of the
//! benchmark. It is what the public reference script does, without the meshgrid memory.

use super::{rank_order, Problem, Scored};
use crate::metrics::{self, Bounds};

/// What the naive enumeration finds; compare with [`Problem`]'s figures and [`Problem::rank`].
#[derive(Debug, Clone, PartialEq)]
pub struct NaiveResult {
    /// Feasible configurations (within the budget, and the queue when there is one).
    pub configurations: u64,
    /// Kept configurations: feasible and at least as good as the base case.
    pub considered: u64,
    /// Min and max coupled SYPD over the kept configurations (FN's normalisation).
    pub sypd_bounds: Bounds,
    /// Min and max of the chosen cost over the kept configurations (CHSY without a machine).
    pub cost_bounds: Bounds,
    /// The best kept configurations by FN, in rank order, at most `top` of them.
    pub top: Vec<Scored>,
}

/// Enumerates every configuration of `problem`'s candidates. Cost: the product of the candidate
/// counts, so keep it for small problems.
pub fn enumerate(problem: &Problem, tts_w: f64, top: usize) -> NaiveResult {
    enumerate_with(problem, tts_w, top, &|index: &[usize]| {
        super::coupled_sypd(
            &index
                .iter()
                .zip(&problem.components)
                .map(|(&i, c)| c.sypd[i])
                .collect::<Vec<_>>(),
        )
    })
}

/// [`enumerate`] with another coupled speed than the min of the candidates' speeds
/// (`coupled(candidate indices)`), e.g. the irregular-steps model, which has no bottleneck
/// structure for the fast search to use. The base case is scored with `coupled` too.
pub fn enumerate_with(
    problem: &Problem,
    tts_w: f64,
    top: usize,
    coupled: &dyn Fn(&[usize]) -> f64,
) -> NaiveResult {
    let sizes: Vec<usize> = problem.components.iter().map(|c| c.nproc.len()).collect();
    let base_total = problem.used_weight(&problem.baseline_nproc);
    let base_sypd = coupled(&vec![0; sizes.len()]);
    let mut feasible = 0u64;
    // (index, sypd, chsy) of every kept configuration
    let mut kept: Vec<(Vec<usize>, f64, f64)> = Vec::new();
    let mut index = vec![0usize; sizes.len()];
    loop {
        let sypd = coupled(&index);
        let nproc: Vec<u32> = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        if problem.fits(&nproc) && problem.fits_queue(&nproc, sypd) {
            feasible += 1;
            // PEs with the extras; with resources, units in CPU-core equivalents.
            let total = problem.used_weight(&nproc);
            if metrics::beats_base_case(sypd, total, base_sypd, base_total) {
                let cost = metrics::chsy(problem.weight_of(&nproc), sypd);
                kept.push((index.clone(), sypd, cost));
            }
        }
        if !advance(&mut index, &sizes) {
            break;
        }
    }
    // Without a queue the base case is always kept; with one, Problem::build refuses a problem
    // where nothing fits, so the set is never empty here.
    let sypd_bounds = Bounds::of(kept.iter().map(|k| k.1)).expect("a kept configuration");
    let cost_bounds = Bounds::of(kept.iter().map(|k| k.2)).expect("a kept configuration");
    let mut scored: Vec<Scored> = kept
        .iter()
        .map(|(index, sypd, cost)| {
            let mut c = problem.score(index, tts_w);
            // The coupled speed may differ from the min of the candidates' (`coupled`): CHSY
            // and the bill follow it; FN weighs the billed cost (CHSY without a machine).
            c.sypd = *sypd;
            c.chsy = metrics::chsy(problem.used_weight(&c.nproc), *sypd);
            c.billing = problem
                .cost_model
                .billing(&c.nproc, problem.settings.extra_pes, *sypd);
            c.fittingness =
                metrics::fittingness_in(tts_w, *sypd, *cost, &sypd_bounds, &cost_bounds);
            c
        })
        .collect();
    scored.sort_by(rank_order);
    scored.truncate(top);
    NaiveResult {
        configurations: feasible,
        considered: kept.len() as u64,
        sypd_bounds,
        cost_bounds,
        top: scored,
    }
}

/// Odometer increment over `sizes`; false once every combination was visited.
fn advance(index: &mut [usize], sizes: &[usize]) -> bool {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < sizes[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

/// One option of one component in [`enumerate_ranks_threads`]: cores, threads per rank, speed.
type RankThreadOption = (u32, u32, f64);

/// The reference for hybrid MPI/OpenMP components, built from the inputs rather than from a
/// [`Problem`]'s merged candidates: every component takes every rank count `first + k * step`
/// of every thread count's curve (up to its last point) at that count's interpolated speed,
/// and every combination of these (ranks, threads) options is enumerated; cores are ranks x
/// threads, the budget and CHSY count cores. The base case is the option of fewest cores
/// (fewest threads on a tie) of each component. Plain cost only, and no allowed lists or
/// limits. `None` when the base case is over the budget (the search refuses it too).
pub fn enumerate_ranks_threads(
    inputs: &[super::ComponentInput],
    settings: &super::Settings,
) -> Option<NaiveResult> {
    let options: Vec<Vec<RankThreadOption>> = inputs
        .iter()
        .map(|input| {
            let mut all = Vec::new();
            for curve in input.series() {
                let t = curve.threads();
                let f = crate::interp::Interpolant::new(settings.interp, &curve.xs(), &curve.ys());
                let mut ranks = curve.first_nproc();
                while ranks <= curve.last_nproc() {
                    let s = f.eval(f64::from(ranks));
                    if s.is_finite() && s > 0.0 {
                        all.push((ranks * t, t, s));
                    }
                    ranks += settings.step;
                }
            }
            all.sort_by_key(|&(cores, threads, _)| (cores, threads));
            all
        })
        .collect();
    if options.iter().any(Vec::is_empty) {
        return None;
    }
    let extra = f64::from(settings.extra_pes);
    let base_cores: u32 = options.iter().map(|o| o[0].0).sum();
    if base_cores > settings.max_nproc {
        return None;
    }
    let base_sypd = options.iter().map(|o| o[0].2).fold(f64::INFINITY, f64::min);
    let base_total = f64::from(base_cores) + extra;
    // Past the budget an option is in no feasible configuration (the base case is read above).
    let options: Vec<Vec<RankThreadOption>> = options
        .into_iter()
        .map(|o| {
            o.into_iter()
                .filter(|p| p.0 <= settings.max_nproc)
                .collect()
        })
        .collect();
    let sizes: Vec<usize> = options.iter().map(Vec::len).collect();
    let mut index = vec![0usize; sizes.len()];
    let mut feasible = 0u64;
    let mut kept: Vec<(Vec<usize>, f64, f64)> = Vec::new();
    loop {
        let cores: u32 = index.iter().zip(&options).map(|(&i, o)| o[i].0).sum();
        if cores <= settings.max_nproc {
            feasible += 1;
            let sypd = index
                .iter()
                .zip(&options)
                .map(|(&i, o)| o[i].2)
                .fold(f64::INFINITY, f64::min);
            let total = f64::from(cores) + extra;
            if metrics::beats_base_case(sypd, total, base_sypd, base_total) {
                kept.push((index.clone(), sypd, metrics::chsy(total, sypd)));
            }
        }
        if !advance(&mut index, &sizes) {
            break;
        }
    }
    let sypd_bounds = Bounds::of(kept.iter().map(|k| k.1))?;
    let cost_bounds = Bounds::of(kept.iter().map(|k| k.2))?;
    let mut scored: Vec<Scored> = kept
        .iter()
        .map(|(index, sypd, chsy)| {
            let picked: Vec<RankThreadOption> =
                index.iter().zip(&options).map(|(&i, o)| o[i]).collect();
            let nproc: Vec<u32> = picked.iter().map(|p| p.0).collect();
            let pairs: Vec<(f64, f64)> = picked.iter().map(|p| (f64::from(p.0), p.2)).collect();
            Scored {
                total_nproc: nproc.iter().sum::<u32>() + settings.extra_pes,
                nproc,
                threads: picked.iter().map(|p| p.1).collect(),
                sypd: *sypd,
                chsy: *chsy,
                coupling_cost: metrics::predicted_coupling_cost(*sypd, &pairs),
                fittingness: metrics::fittingness_in(
                    settings.tts_w,
                    *sypd,
                    *chsy,
                    &sypd_bounds,
                    &cost_bounds,
                ),
                billing: None,
            }
        })
        .collect();
    scored.sort_by(rank_order);
    scored.truncate(settings.top);
    Some(NaiveResult {
        configurations: feasible,
        considered: kept.len() as u64,
        sypd_bounds,
        cost_bounds,
        top: scored,
    })
}
