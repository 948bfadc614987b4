//! Validating the prediction's inputs and building each component's candidate PE counts (the
//! guide's `method/prediction.md`, step 1), each with its interpolated speed, within the documented
//! limits. A component without a curve takes its range from its limits or allowed list and its
//! speeds from the calibrated model's learned law ([`Model::reference_sypd`]).

use super::*;

pub(super) fn validate(inputs: &[ComponentInput], settings: &Settings) -> Result<(), PredictError> {
    if inputs.is_empty() {
        return Err(PredictError::NoComponents);
    }
    if inputs.len() > MAX_COMPONENTS {
        return Err(PredictError::TooManyComponents(inputs.len()));
    }
    for (i, c) in inputs.iter().enumerate() {
        if inputs[..i].iter().any(|o| o.name() == c.name()) {
            return Err(PredictError::DuplicateComponent(c.name().to_string()));
        }
    }
    if settings.step == 0 {
        return Err(PredictError::ZeroStep);
    }
    if !(0.0..=1.0).contains(&settings.tts_w) {
        return Err(PredictError::TtsWOutOfRange(settings.tts_w));
    }
    if settings.top == 0 {
        return Err(PredictError::ZeroTop);
    }
    if settings.top > MAX_TOP {
        return Err(PredictError::TopTooLarge(settings.top));
    }
    // Every total (balanced sum + extra PEs) is at most this, so u32 arithmetic cannot wrap.
    if settings
        .max_nproc
        .checked_add(settings.extra_pes)
        .is_none_or(|t| t > MAX_TOTAL_PES)
    {
        return Err(PredictError::TotalTooLarge {
            max_nproc: settings.max_nproc,
            extra_pes: settings.extra_pes,
            max: MAX_TOTAL_PES,
        });
    }
    Ok(())
}

/// Candidates of one component over ranks and threads: each thread count's curve gives its
/// candidate rank counts as [`candidates`] does for a pure-MPI curve (with the budget in ranks
/// at that thread count), each candidate then takes ranks x threads cores, and the lists are
/// merged by cores (then threads). A thread count larger than a node (`cores_per_node`) is left
/// out: a rank's threads share its node. A pure-MPI component takes [`candidates`] unchanged.
pub(super) fn component_candidates(
    input: &ComponentInput,
    settings: &Settings,
    model: &Model,
    cores_per_node: Option<u32>,
) -> Result<Candidates, PredictError> {
    if input.thread_curves.is_empty() && input.curve.as_ref().is_none_or(|c| c.threads() == 1) {
        return candidates(input, settings, model);
    }
    let name = input.name();
    let fits_node = |t: u32| cores_per_node.is_none_or(|n| t <= n);
    let series: Vec<&Curve> = input.series().filter(|c| fits_node(c.threads())).collect();
    if series.is_empty() {
        let all: Vec<String> = input.series().map(|c| c.threads().to_string()).collect();
        return Err(PredictError::ThreadsExceedNode {
            name: name.to_string(),
            threads: all.join(", "),
            cores_per_node: cores_per_node.unwrap_or(0),
        });
    }
    let mut merged: Vec<(u32, u32, f64)> = Vec::new();
    let mut first_error = None;
    for curve in series {
        let t = curve.threads();
        let one = ComponentInput {
            curve: Some(curve.clone()),
            thread_curves: Vec::new(),
            ..input.clone()
        };
        let own = Settings {
            max_nproc: settings.max_nproc / t,
            ..settings.clone()
        };
        match candidates(&one, &own, model) {
            Ok(c) => merged.extend(
                c.nproc
                    .iter()
                    .zip(&c.sypd)
                    .filter_map(|(&ranks, &s)| Some((ranks.checked_mul(t)?, t, s))),
            ),
            // A thread count whose ranks the limits exclude leaves the others to search.
            Err(e @ PredictError::NoCandidates { .. }) => {
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    if merged.is_empty() {
        return Err(first_error.unwrap_or(PredictError::NoCandidates {
            name: name.to_string(),
            low: 0,
            high: settings.max_nproc,
            why: String::new(),
        }));
    }
    if merged.len() as u64 > MAX_CANDIDATES {
        return Err(PredictError::TooManyCandidates {
            name: name.to_string(),
            count: merged.len() as u64,
            low: merged.iter().map(|m| m.0).min().unwrap_or(0),
            high: merged.iter().map(|m| m.0).max().unwrap_or(0),
            step: settings.step,
        });
    }
    merged.sort_by_key(|&(cores, threads, _)| (cores, threads));
    Ok(Candidates {
        name: name.to_string(),
        nproc: merged.iter().map(|m| m.0).collect(),
        sypd: merged.iter().map(|m| m.2).collect(),
        threads: merged.iter().map(|m| m.1).collect(),
    })
}

/// Candidates of one component (the guide's `method/prediction.md`, step 1): its allowed list
/// restricted to the measured range, or first, first+step, ... up to the last measured point; then
/// the component's own limits (and the budget, when the curve reaches so far beyond it that the
/// candidates would be too many). More than [`MAX_CANDIDATES`] within the budget is refused before
/// any is built. A candidate whose interpolated SYPD is not a positive number (a quadratic spline
/// can dip below zero between wild points) is dropped: no run goes at zero speed.
pub(super) fn candidates(
    input: &ComponentInput,
    settings: &Settings,
    model: &Model,
) -> Result<Candidates, PredictError> {
    let name = input.name();
    let no_curve = |why: &str| PredictError::NoCurve {
        name: name.to_string(),
        why: why.to_string(),
    };
    // The measured range (a curve's), or the whole range a component without one may take.
    let (first, last) = match &input.curve {
        Some(curve) => (curve.first_nproc(), curve.last_nproc()),
        None => input.range().ok_or_else(|| {
            no_curve(&format!(
                "no PE range: give its range (--component {name}=MIN-MAX, or min_nproc and \
                 max_nproc in its [[component]] table) or its allowed list"
            ))
        })?,
    };
    if input.curve.is_none() && !model.learned_curve(name) {
        return Err(no_curve(&format!(
            "no measured run to learn its curve from: pass --measured runs that include it, \
             or its curve with --curve {name}=PATH"
        )));
    }
    let low = first.max(input.min_nproc.unwrap_or(0));
    let own_high = last.min(input.max_nproc.unwrap_or(u32::MAX));
    let high = own_high.min(settings.max_nproc);
    // Candidates above the budget are never feasible; they are kept for display (the app
    // greys them as over budget) unless there are too many of them, as with a typo in a curve.
    let count_up_to = |top: u32| match &input.allowed {
        Some(list) => list
            .iter()
            .filter(|&&p| p >= low && p <= top && p <= last)
            .count() as u64,
        None if top >= low => {
            let step = u64::from(settings.step);
            let start = u64::from(low - first).div_ceil(step) * step + u64::from(first);
            u64::from(top).saturating_sub(start) / step + u64::from(start <= u64::from(top))
        }
        None => 0,
    };
    let high = if count_up_to(own_high) <= MAX_CANDIDATES {
        own_high
    } else {
        high
    };
    let count = count_up_to(high);
    if count > MAX_CANDIDATES {
        return Err(PredictError::TooManyCandidates {
            name: name.to_string(),
            count,
            low,
            high,
            step: settings.step,
        });
    }
    let mut raw: Vec<u32> = match &input.allowed {
        Some(list) => {
            let mut v: Vec<u32> = list
                .iter()
                .copied()
                .filter(|&p| p >= first && p <= last && p <= high)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => {
            // Grid points first + k*step from the first at or above `low`.
            let step = u64::from(settings.step);
            let start = u64::from(low - first).div_ceil(step) * step + u64::from(first);
            match u32::try_from(start) {
                Ok(start) => (start..=last.min(high))
                    .step_by(settings.step as usize)
                    .collect(),
                Err(_) => Vec::new(),
            }
        }
    };
    if !raw.iter().any(|&p| p >= low) {
        // Nothing within the budget: keep the smallest candidate so that the budget check
        // says how far the budget is below the base case.
        let smallest = match &input.allowed {
            Some(list) => list
                .iter()
                .copied()
                .filter(|&p| p >= low.max(first) && p <= own_high.min(last))
                .min(),
            None => {
                let step = u64::from(settings.step);
                let k = u64::from(low - first).div_ceil(step);
                u32::try_from(u64::from(first) + k * step)
                    .ok()
                    .filter(|&p| p <= own_high)
            }
        };
        raw = smallest.into_iter().collect();
    }
    let high = if raw.iter().any(|&p| p > high) {
        own_high
    } else {
        high
    };
    let interpolant = input
        .curve
        .as_ref()
        .map(|c| Interpolant::new(settings.interp, &c.xs(), &c.ys()));
    let (mut nproc, mut sypd) = (Vec::new(), Vec::new());
    for p in raw.into_iter().filter(|&p| p >= low && p <= high) {
        let s = match &interpolant {
            Some(f) => f.eval(f64::from(p)),
            None => model.reference_sypd(name, p).unwrap_or(f64::NAN),
        };
        if s.is_finite() && s > 0.0 {
            nproc.push(p);
            sypd.push(s);
        }
    }
    if nproc.is_empty() {
        let why = if input.allowed.is_some() {
            " in its allowed list"
        } else {
            ""
        };
        return Err(PredictError::NoCandidates {
            name: name.to_string(),
            low,
            high,
            why: why.to_string(),
        });
    }
    Ok(Candidates {
        name: name.to_string(),
        threads: vec![1; nproc.len()],
        nproc,
        sypd,
    })
}
