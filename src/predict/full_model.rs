//! The top N by the full calibrated model, exactly.
//!
//! The search ranks a calibrated model by its balance-free bound (the balance slowdown left
//! out), which is never below the full estimate. `predict` and the app show the full model's
//! numbers, so their top N is re-scored here, on a shortlist widened until no configuration
//! outside it can enter.

use super::{rank_order, ComponentInput, Prediction, Problem};
use crate::metrics;
use crate::model::{EstimateRequest, Model};

/// The top N by the full calibrated model. The search ranks with the balance-free bound
/// ([`Model::adjust`], at least the full estimate: the balance slowdown is >= 1), so a
/// shortlist by the bound is re-scored with [`Model::estimate`] (same normalisation
/// bounds, cost scaled with 1 / SYPD) and widened until the N-th re-scored fittingness is at
/// least the last shortlisted bound fittingness: nothing outside the shortlist can then beat
/// it, since a configuration's full score is at most its bound score. The standalone model's
/// bound is the model itself.
pub fn rank(
    problem: &Problem,
    model: &Model,
    inputs: &[ComponentInput],
    tts_w: f64,
    top: usize,
) -> Prediction {
    if !model.is_calibrated() {
        return problem.rank(tts_w, top);
    }
    let settings = &problem.settings;
    let mut shortlist = (4 * top).max(32);
    loop {
        let mut p = problem.rank(tts_w, shortlist);
        if p.top.is_empty() {
            p.top.truncate(top);
            return p;
        }
        let last_bound = p.top.last().map_or(f64::INFINITY, |c| c.fittingness);
        // Every kept configuration is in the shortlist.
        let complete = p.top.len() < shortlist || p.top.len() as u64 >= p.considered;
        for c in &mut p.top {
            let e = model.estimate(&EstimateRequest::curves(inputs, settings.interp, &c.nproc));
            let slower = c.sypd / e.sypd;
            c.sypd = e.sypd;
            c.chsy *= slower;
            if let Some(b) = c.billing.as_mut() {
                b.cost *= slower;
            }
            let pairs: Vec<(f64, f64)> = c
                .nproc
                .iter()
                .zip(&e.components)
                .map(|(&n, &s)| (f64::from(n), s))
                .collect();
            c.coupling_cost = metrics::predicted_coupling_cost(c.sypd, &pairs);
            c.fittingness =
                metrics::fittingness_in(tts_w, c.sypd, c.cost(), &p.sypd_bounds, &p.cost_bounds);
        }
        p.top.sort_by(rank_order);
        let exact = complete
            || p.top
                .get(top.saturating_sub(1))
                .is_some_and(|c| c.fittingness >= last_bound);
        if exact {
            p.top.truncate(top);
            return p;
        }
        shortlist *= 4;
    }
}
