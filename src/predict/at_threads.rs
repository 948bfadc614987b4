//! A prediction by the calibrated model with hybrid MPI/OpenMP components: each component at
//! the one thread count per rank its measured runs ran.
//!
//! A campaign's runs count a hybrid component's PEs in cores (ranks x threads), so the model
//! fitted on them learns its coupled-mode speed against cores at that thread count. The
//! prediction therefore searches the component in cores too, with its curve at that thread
//! count turned into cores ([`packing::model_components`], the conversion node packings use) and
//! its candidates at whole ranks only; [`label`] then marks the candidates with their thread
//! count so that every output writes `ranks x threads` as a prediction from curves does.

use super::{packing, ComponentInput, Problem};
use crate::limits::MAX_CANDIDATES;

/// The components in cores, one thread count each (`threads`, one per input, in order): a
/// component at 1 thread without a threaded curve is unchanged; a hybrid one takes its curve at
/// that thread count in cores and, as `allowed`, every whole rank count the search would try
/// (its `allowed` list, else its first rank count then every `step` ranks, within its limits)
/// in cores, with its limits in cores. Errors, in one line naming the component, when its curve
/// does not measure that thread count or the rank counts overflow.
pub fn in_cores(
    inputs: &[ComponentInput],
    threads: &[u32],
    step: u32,
) -> Result<Vec<ComponentInput>, String> {
    inputs
        .iter()
        .zip(threads)
        .map(|(input, &t)| {
            if t <= 1 && !input.is_threaded() {
                return Ok(input.clone());
            }
            one_in_cores(input, t, step.max(1))
        })
        .collect()
}

fn one_in_cores(input: &ComponentInput, t: u32, step: u32) -> Result<ComponentInput, String> {
    let name = &input.name;
    let curve = match input.curve {
        Some(_) => packing::model_components(std::slice::from_ref(input), &[t])?
            .pop()
            .and_then(|c| c.curve),
        None => None,
    };
    // The rank range at t threads: the curve's (in ranks), or the limits' without a curve.
    let (first, last) = match (&curve, input.range()) {
        (Some(c), _) => (c.first_nproc() / t, c.last_nproc() / t),
        (None, Some(range)) => range,
        (None, None) => {
            return Err(format!(
                "{name} has no curve and no rank range: give min_nproc and max_nproc (ranks) or its allowed list"
            ))
        }
    };
    let low = first.max(input.min_nproc.unwrap_or(0));
    let high = last.min(input.max_nproc.unwrap_or(u32::MAX));
    let ranks: Vec<u32> = match &input.allowed {
        Some(list) => list
            .iter()
            .copied()
            .filter(|&r| r > 0 && r >= low && r <= high)
            .collect(),
        None => {
            let count = u64::from(high.saturating_sub(first)) / u64::from(step);
            if count > MAX_CANDIDATES {
                return Err(format!(
                    "{name}: {count} rank counts between {first} and {high} at --step {step}; raise --step"
                ));
            }
            (first..=high)
                .step_by(step as usize)
                .filter(|&r| r >= low)
                .collect()
        }
    };
    let cores = |r: u32| {
        r.checked_mul(t)
            .ok_or_else(|| format!("{name}: {r} ranks x {t} threads is too many cores"))
    };
    let allowed = ranks
        .into_iter()
        .map(cores)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ComponentInput {
        name: name.clone(),
        curve,
        min_nproc: Some(cores(low)?),
        max_nproc: Some(cores(high.max(low))?),
        allowed: Some(allowed),
        thread_curves: Vec::new(),
    })
}

/// Marks every candidate of component k with `threads[k]` per rank, after [`Problem::build`] on
/// the inputs of [`in_cores`]: scored configurations then carry ranks x threads, and the
/// outputs (table, JSON, front, EC-Earth4 YAML) write them as they do for a curve's threads.
pub fn label(problem: &mut Problem, threads: &[u32]) {
    for (c, &t) in problem.components.iter_mut().zip(threads) {
        c.threads = vec![t.max(1); c.nproc.len()];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{Curve, Point};

    fn threaded(name: &str, t: u32) -> ComponentInput {
        let points: Vec<Point> = [8u32, 16, 32, 64]
            .iter()
            .map(|&n| Point {
                nproc: n,
                sypd: f64::from(n) / 10.0,
            })
            .collect();
        let curve = Curve::from_points(name, "test", &points)
            .unwrap()
            .with_threads(std::num::NonZeroU32::new(t).unwrap());
        ComponentInput::new(curve)
    }

    #[test]
    fn a_hybrid_component_becomes_whole_ranks_in_cores() {
        let mut input = threaded("oifs", 4);
        input.min_nproc = Some(10);
        let out = in_cores(&[input], &[4], 8).unwrap();
        // First rank 8, then every 8 ranks, from 10 ranks up: 16, 24, ... 64 ranks.
        let allowed = out[0].allowed.clone().unwrap();
        assert_eq!(allowed.first(), Some(&64));
        assert_eq!(allowed.last(), Some(&256));
        assert!(allowed.iter().all(|c| c % 32 == 0), "{allowed:?}");
        let curve = out[0].curve.as_ref().unwrap();
        assert_eq!((curve.first_nproc(), curve.last_nproc()), (32, 256));
        assert_eq!(out[0].min_nproc, Some(40));
    }

    #[test]
    fn without_a_curve_the_limits_count_ranks() {
        let input = ComponentInput::without_curve("oifs", 16, 20);
        let out = in_cores(&[input], &[4], 2).unwrap();
        assert_eq!(out[0].allowed.clone().unwrap(), vec![64, 72, 80]);
        assert_eq!((out[0].min_nproc, out[0].max_nproc), (Some(64), Some(80)));
    }

    #[test]
    fn a_pure_mpi_component_is_unchanged_and_a_missing_thread_count_is_named() {
        let nemo = ComponentInput::without_curve("nemo", 10, 100);
        let out = in_cores(std::slice::from_ref(&nemo), &[1], 5).unwrap();
        assert_eq!(out[0].allowed, None);
        let err = in_cores(&[threaded("oifs", 2)], &[4], 8).unwrap_err();
        assert!(err.contains("oifs") && err.contains('4'), "{err}");
    }
}
