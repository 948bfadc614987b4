//! One fit of the calibrated model ([`super::Model::fit`]): which measured runs it can use, the
//! fixed cost per run by its profile likelihood ([`super::run_length`]), and for each candidate
//! cost the scaling laws of the components without a curve ([`super::scaling_law`]), the
//! components' ratio smoothers ([`super::gp`]) and the coupling overhead with its coupling
//! times per step ([`super::overhead`], [`super::coupling_time`]).

use std::collections::BTreeMap;

use super::gp::Gp;
use super::scaling_law::{Observation, ScalingLaw};
use super::{
    coupling_time, overhead, robust_law, run_length, steps, Calibrated, ComponentCurve,
    ComponentModel, CoupledFactor, FitOptions, LawChoice, MeasuredComponent, MeasuredRun, Model,
    DEFAULT_COUPLED_SD, DEFAULT_NOISE_SD, LEVEL_PRIOR_SD, NOISE_SD_RANGE, NOT_PACE_SETTING_SD,
    SLOPE_PRIOR_SD,
};
use crate::curve::Curve;
use crate::interp::{Interpolant, Method};

/// [`super::Model::fit_with_steps`], with the components' coupling times per step tried
/// (`coupling_time`) or not.
pub(super) fn calibrate<C: ComponentCurve>(
    components: &[C],
    interp: Method,
    runs: &[MeasuredRun],
    steps: &steps::Steps,
    coupling_time: bool,
    options: &FitOptions,
) -> (Model, Vec<String>) {
    let mut notes = Vec::new();
    let names: Vec<String> = components.iter().map(|c| c.name().to_string()).collect();
    let curves: Vec<Option<&Curve>> = components.iter().map(|c| c.standalone()).collect();
    let interpolants: Vec<Option<Interpolant>> = curves
        .iter()
        .map(|c| c.map(|c| Interpolant::new(interp, &c.xs(), &c.ys())))
        .collect();
    let mut used: Vec<(&MeasuredRun, Vec<&MeasuredComponent>)> = Vec::new();
    for run in runs {
        match usable(run, &curves, &names) {
            Err(why) => notes.push(format!("{}: not used: {why}", run.path)),
            Ok(parts) => used.push((run, parts)),
        }
    }
    if used.is_empty() {
        return (Model::Standalone, notes);
    }
    let only_runs: Vec<&MeasuredRun> = used.iter().map(|(r, _)| *r).collect();
    let fit = Fit {
        names: &names,
        interpolants: &interpolants,
        interp,
        used: &used,
        steps,
        typical: run_length::typical(&only_runs),
        coupling_time,
        options,
    };
    // The fixed cost by its profile likelihood, with the smoothers' hyperparameters held
    // where the fit without a fixed cost put them (one factorisation per candidate), then
    // the full fit at the chosen cost.
    let Some(first) = fit.at(0.0, None) else {
        return (Model::Standalone, notes);
    };
    let candidates = run_length::candidates(&only_runs);
    if candidates.len() < 2 {
        return (Model::Calibrated(first.0), notes);
    }
    let hyper: Vec<(f64, f64)> = first
        .0
        .components
        .iter()
        .map(|c| (c.ratio.data().ell, c.ratio.data().sf))
        .collect();
    let fixed_s = candidates
        .into_iter()
        .filter_map(|f| Some((f, fit.at(f, Some(&hyper))?.1)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0.0, |(f, _)| f);
    let best = if fixed_s > 0.0 {
        fit.at(fixed_s, None)
    } else {
        Some(first)
    };
    match best {
        Some((model, _)) => (Model::Calibrated(model), notes),
        None => (Model::Standalone, notes),
    }
}

/// What one fit of the calibrated model works on (the fixed cost aside).
struct Fit<'a> {
    names: &'a [String],
    /// Per component, its standalone curve's interpolant (`None`: learned from the runs).
    interpolants: &'a [Option<Interpolant>],
    interp: Method,
    used: &'a [(&'a MeasuredRun, Vec<&'a MeasuredComponent>)],
    steps: &'a steps::Steps,
    typical: Option<f64>,
    /// Whether the components' coupling times per step are tried ([`coupling_time`]).
    coupling_time: bool,
    /// The reported decompositions and how a component without a curve is learned.
    options: &'a FitOptions,
}

impl Fit<'_> {
    /// The model fitted with a fixed cost of `fixed_s` seconds per run, and the negative log
    /// likelihood of the measured speeds under it (the profile that chooses the fixed cost;
    /// `None` if the cost would exceed a run).
    /// With `hyper`, each smoother's (length scale, signal sd) are these, not searched.
    fn at(&self, fixed_s: f64, hyper: Option<&[(f64, f64)]>) -> Option<(Calibrated, f64)> {
        let names = self.names;
        // Per component: (PEs, long-run speed, extra variance) of every run; per run:
        // (ln coupled, speeds) and its PEs.
        let mut measured: Vec<Vec<(u32, f64, f64)>> = vec![Vec::new(); names.len()];
        let mut coupled = Vec::new();
        let mut run_nproc: Vec<Vec<u32>> = Vec::new();
        // ln speed of the pace-setter's repeats, by component and PEs: the run-to-run noise.
        let mut replicate: BTreeMap<(usize, u32), Vec<f64>> = BTreeMap::new();
        // Sum of ln(d ln steady / d ln measured) over every transformed value.
        let mut log_jacobian = 0.0;
        for (run, parts) in self.used {
            let phi = run_length::penalty(fixed_s, run.simulated_s);
            let speeds: Vec<f64> = parts
                .iter()
                .map(|c| run_length::steady(c.sypd, phi))
                .collect::<Option<_>>()?;
            let run_sypd = run_length::steady(run.coupled_sypd, phi)?;
            log_jacobian += (run_sypd / run.coupled_sypd).ln();
            let pace_setter = speeds.iter().copied().fold(f64::INFINITY, f64::min);
            for (i, (c, &x)) in parts.iter().zip(&speeds).enumerate() {
                log_jacobian += (x / c.sypd).ln();
                let sets_pace = x <= pace_setter;
                let extra = if sets_pace {
                    0.0
                } else {
                    NOT_PACE_SETTING_SD * NOT_PACE_SETTING_SD
                };
                measured[i].push((c.nproc, x, extra));
                if sets_pace {
                    replicate.entry((i, c.nproc)).or_default().push(x.ln());
                }
            }
            run_nproc.push(parts.iter().map(|c| c.nproc).collect());
            coupled.push((run_sypd.ln(), speeds));
        }
        let noise_sd = pooled_sd(replicate.values())
            .unwrap_or(DEFAULT_NOISE_SD)
            .clamp(NOISE_SD_RANGE.0, NOISE_SD_RANGE.1);
        // Each component's reference speed: its curve, or a law learned from its speeds, over
        // its effective processes where the runs reported its decomposition.
        let layouts = &self.options.layouts;
        let effective = |i: usize, nproc: u32| layouts.effective(&names[i], nproc).0;
        let mut scatter: Vec<Option<f64>> = vec![None; names.len()];
        let laws: Vec<Option<ScalingLaw>> = self
            .interpolants
            .iter()
            .zip(&measured)
            .enumerate()
            .map(|(i, (f, m))| match (f, self.options.laws) {
                (Some(_), _) => None,
                (None, LawChoice::Aic) => ScalingLaw::fit(
                    &m.iter()
                        .map(|&(nproc, sypd, extra)| Observation {
                            nproc,
                            sypd,
                            log_var: noise_sd * noise_sd + extra,
                        })
                        .collect::<Vec<_>>(),
                ),
                (None, LawChoice::LeaveOneOut) => {
                    let points: Vec<robust_law::Point> = m
                        .iter()
                        .map(|&(nproc, sypd, extra)| {
                            (effective(i, nproc), sypd, noise_sd * noise_sd + extra)
                        })
                        .collect();
                    let fitted = robust_law::fit(&points)?;
                    scatter[i] = fitted.scatter_sd.map(|s| s.max(noise_sd));
                    Some(fitted.law)
                }
            })
            .collect();
        // Per component: (ln nproc, ln ratio, extra variance).
        let mut data: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> =
            vec![(Vec::new(), Vec::new(), Vec::new()); names.len()];
        for (i, m) in measured.iter().enumerate() {
            for &(nproc, x, extra) in m {
                let reference = match (&self.interpolants[i], &laws[i]) {
                    (Some(f), _) => f.eval(f64::from(nproc)),
                    (None, Some(law)) => law.sypd(effective(i, nproc)),
                    (None, None) => return None,
                };
                data[i].0.push(f64::from(nproc).ln());
                data[i].1.push((x / reference).ln());
                data[i].2.push(extra);
            }
        }
        // The level components with a curve share (a law is already centred on its data).
        let with_curves: Vec<f64> = data
            .iter()
            .zip(&laws)
            .filter(|(_, law)| law.is_none())
            .flat_map(|(d, _)| d.1.iter().copied())
            .collect();
        let global = mean(&with_curves);
        let mut components: Vec<ComponentModel> = names
            .iter()
            .zip(&data)
            .zip(laws)
            .enumerate()
            .map(|(i, ((name, (xs, ys, extra)), law))| {
                // A law is centred on the component's own data, and with its three terms fitted
                // it holds the trend and its uncertainty; with fewer counts the smoother's
                // drift widens the band instead.
                let (prior_mean, slope_sd) = match &law {
                    None => (global, SLOPE_PRIOR_SD),
                    Some(l) if l.counts < 3 => (0.0, SLOPE_PRIOR_SD),
                    Some(_) => (0.0, 0.0),
                };
                let fit_at = |sn: f64| match hyper {
                    Some(h) => Gp::fit_with(
                        xs,
                        ys,
                        extra,
                        prior_mean,
                        LEVEL_PRIOR_SD,
                        slope_sd,
                        sn,
                        h[i],
                    ),
                    None => Gp::fit_trend(xs, ys, extra, prior_mean, LEVEL_PRIOR_SD, slope_sd, sn),
                };
                // The smoother's noise: the run-to-run noise, or the law's scatter at left-out
                // counts (decomposition jumps no smooth function follows), whichever the runs'
                // marginal likelihood prefers: a smooth misfit is followed, jumps are not
                // chased into the neighbouring counts.
                let ratio = match scatter[i] {
                    Some(sd) if sd > noise_sd => {
                        let (smooth, jumpy) = (fit_at(noise_sd), fit_at(sd));
                        if jumpy.nll() < smooth.nll() {
                            jumpy
                        } else {
                            smooth
                        }
                    }
                    _ => fit_at(noise_sd),
                };
                ComponentModel {
                    name: name.clone(),
                    ratio,
                    law,
                    coupling_s_per_day: 0.0,
                    scatter_sd: scatter[i],
                }
            })
            .collect();
        let n = coupled.len();
        // The pace a run's components set, at speeds `e` (its coupling times added).
        let step_sum =
            |i: usize, e: &[f64]| self.steps.coupled_sypd(names, &run_nproc[i], |c, _| e[c]);
        let pace: &dyn Fn(usize, &[f64]) -> f64 = if self.steps.is_empty() {
            &overhead::slowest
        } else {
            &step_sum
        };
        let grid = if self.coupling_time {
            coupling_time::grid(coupled.iter().map(|(_, s)| s.as_slice()))
        } else {
            Vec::new()
        };
        let fitted = overhead::fit(&coupled, pace, &grid);
        for (c, &tau) in components.iter_mut().zip(&fitted.coupling) {
            c.coupling_s_per_day = coupling_time::per_day(tau);
        }
        let (log_mean, irregularity, resid_sd) =
            (fitted.log_k0, fitted.irregularity, fitted.resid_sd);
        let spread = if n >= 3 { resid_sd } else { DEFAULT_COUPLED_SD };
        let log_sd = (spread * spread * (1.0 + 1.0 / n as f64)).sqrt();
        // Gaussian residuals of the overhead at their fitted spread: n ln sd (+ constants).
        let overhead_nll = n as f64 * resid_sd.max(1e-4).ln();
        let nll =
            components.iter().map(|c| c.ratio.nll()).sum::<f64>() + overhead_nll - log_jacobian;
        let model = Calibrated {
            runs: n,
            interp: self.interp,
            global_log_ratio: global,
            noise_sd,
            components,
            coupled: CoupledFactor {
                log_mean,
                irregularity,
                log_sd,
                runs: n,
            },
            fixed_s,
            typical_simulated_s: self.typical,
            layouts: layouts.clone(),
        };
        Some((model, nll))
    }
}

/// The run's components in the model's order, or why it cannot be used.
fn usable<'a>(
    run: &'a MeasuredRun,
    curves: &[Option<&Curve>],
    names: &[String],
) -> Result<Vec<&'a MeasuredComponent>, String> {
    if !(run.coupled_sypd.is_finite() && run.coupled_sypd > 0.0) {
        return Err("no coupled SYPD".into());
    }
    let mut parts = Vec::with_capacity(names.len());
    for (name, curve) in names.iter().zip(curves) {
        let c = run
            .component(name)
            .ok_or_else(|| format!("it has no component {name}"))?;
        if c.nproc == 0 {
            return Err(format!("{name} ran on 0 PEs"));
        }
        let Some(curve) = curve else {
            if !(c.sypd.is_finite() && c.sypd > 0.0) {
                return Err(format!("{name} has no SYPD"));
            }
            parts.push(c);
            continue;
        };
        if c.nproc < curve.first_nproc() || c.nproc > curve.last_nproc() {
            return Err(format!(
                "{name} ran on {} PEs, outside its curve ({}..{})",
                c.nproc,
                curve.first_nproc(),
                curve.last_nproc()
            ));
        }
        if !(c.sypd.is_finite() && c.sypd > 0.0) {
            return Err(format!("{name} has no SYPD"));
        }
        parts.push(c);
    }
    Ok(parts)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Pooled within-group standard deviation (groups of one say nothing); `None` without at
/// least two degrees of freedom.
fn pooled_sd<'a>(groups: impl Iterator<Item = &'a Vec<f64>>) -> Option<f64> {
    let (mut ss, mut df) = (0.0, 0usize);
    for g in groups.filter(|g| g.len() > 1) {
        let m = mean(g);
        ss += g.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        df += g.len() - 1;
    }
    (df >= 2).then(|| (ss / df as f64).sqrt())
}
