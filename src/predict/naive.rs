//! The obvious prediction: enumerate every configuration, filter, normalise, sort.
//!
//! This is the reference the fast search is held to (property tests) and the baseline of the
//! benchmark. It is what the public reference script does, without the meshgrid memory.

use super::{rank_order, Config, Problem};
use crate::metrics::{self, Bounds};

/// What the naive enumeration finds; compare with [`Problem`]'s figures and [`Problem::rank`].
#[derive(Debug, Clone, PartialEq)]
pub struct NaiveResult {
    pub candidates: u64,
    pub considered: u64,
    pub sypd_bounds: Bounds,
    pub chsy_bounds: Bounds,
    pub top: Vec<Config>,
}

/// Enumerates every configuration of `problem`'s candidates. Cost: the product of the candidate
/// counts, so keep it for small problems.
pub fn enumerate(problem: &Problem, tts_w: f64, top: usize) -> NaiveResult {
    let sizes: Vec<usize> = problem.components.iter().map(|c| c.nproc.len()).collect();
    let base_total = f64::from(problem.total_nproc(problem.baseline_nproc.iter().sum()));
    let mut feasible = 0u64;
    // (index, sypd, chsy) of every kept configuration
    let mut kept: Vec<(Vec<usize>, f64, f64)> = Vec::new();
    let mut index = vec![0usize; sizes.len()];
    loop {
        let sum: u32 = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.nproc[i])
            .sum();
        let sypd = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.sypd[i])
            .fold(f64::INFINITY, f64::min);
        let nproc: Vec<u32> = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        if sum <= problem.settings.max_nproc && problem.fits_queue(&nproc, sypd) {
            feasible += 1;
            let total = f64::from(problem.total_nproc(sum));
            if metrics::beats_base_case(sypd, total, problem.baseline_sypd, base_total) {
                let cost = metrics::chsy(problem.weight_of(&nproc), sypd);
                kept.push((index.clone(), sypd, cost));
            }
        }
        if !advance(&mut index, &sizes) {
            break;
        }
    }
    // Without a queue the base case is always kept; with one, Problem::billed refuses a problem
    // where nothing fits, so the set is never empty here.
    let sypd_bounds = Bounds::of(kept.iter().map(|k| k.1)).expect("a kept configuration");
    let chsy_bounds = Bounds::of(kept.iter().map(|k| k.2)).expect("a kept configuration");
    let mut scored: Vec<Config> = kept
        .iter()
        .map(|(index, sypd, chsy)| {
            let mut c = problem.score(index, tts_w);
            c.fittingness =
                metrics::fittingness_in(tts_w, *sypd, *chsy, &sypd_bounds, &chsy_bounds);
            c
        })
        .collect();
    scored.sort_by(rank_order);
    scored.truncate(top);
    NaiveResult {
        candidates: feasible,
        considered: kept.len() as u64,
        sypd_bounds,
        chsy_bounds,
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
