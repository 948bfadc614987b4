//! Predicting one configuration with a model: what [`Model::estimate`] is asked
//! ([`EstimateRequest`]) and how it answers. One request type covers the three ways a caller
//! knows the standalone speeds (given, from curves, from curves with irregular steps) and the
//! run's length, so there is one estimate to read and to test instead of a family of variants.

use super::{run_length, steps::Steps, Estimate, Factor, Model};
use crate::curve::Curve;
use crate::interp::{Interpolant, Method};

/// One configuration to predict: its PEs per component, where the standalone speeds come
/// from, and how long the run is.
#[derive(Debug, Clone, Copy)]
pub struct EstimateRequest<'a> {
    /// PEs per component, in the order of the speeds' components.
    pub nproc: &'a [u32],
    pub speeds: Speeds<'a>,
    /// Simulated seconds of the run; `None`: as long as the typical run the model learned from.
    pub simulated_s: Option<f64>,
}

/// Where an estimate's standalone speeds come from.
#[derive(Debug, Clone, Copy)]
pub enum Speeds<'a> {
    /// Each component's standalone SYPD at its PE count, already known.
    Known {
        names: &'a [String],
        standalone: &'a [f64],
    },
    /// Interpolated from each component's curve with `interp`. With `steps`, the coupled SYPD
    /// is the step-sum of [`Steps::coupled_sypd`] over the model's speeds (which needs the
    /// curves, as it evaluates other PE counts), the band scaled alike.
    Curves {
        curves: &'a [Curve],
        interp: Method,
        steps: Option<&'a Steps>,
    },
}

impl<'a> EstimateRequest<'a> {
    /// `standalone[k]` is component `names[k]`'s standalone SYPD at `nproc[k]` PEs.
    pub fn known(names: &'a [String], nproc: &'a [u32], standalone: &'a [f64]) -> Self {
        EstimateRequest {
            nproc,
            speeds: Speeds::Known { names, standalone },
            simulated_s: None,
        }
    }

    /// The standalone speeds interpolated from `curves` with `interp`.
    pub fn curves(curves: &'a [Curve], interp: Method, nproc: &'a [u32]) -> Self {
        EstimateRequest {
            nproc,
            speeds: Speeds::Curves {
                curves,
                interp,
                steps: None,
            },
            simulated_s: None,
        }
    }

    /// [`EstimateRequest::curves`] with irregular steps (see [`Speeds::Curves`]).
    pub fn stepped(
        curves: &'a [Curve],
        interp: Method,
        nproc: &'a [u32],
        steps: &'a Steps,
    ) -> Self {
        EstimateRequest {
            nproc,
            speeds: Speeds::Curves {
                curves,
                interp,
                steps: Some(steps),
            },
            simulated_s: None,
        }
    }

    /// The same request for a run of `simulated_s` simulated seconds (`None`: typical).
    pub fn for_run(self, simulated_s: Option<f64>) -> Self {
        EstimateRequest {
            simulated_s,
            ..self
        }
    }
}

impl Model {
    /// Predicts the configuration `request` describes: each component's speed from
    /// [`Model::speed`], the coupled SYPD their minimum slowed by the balance slowdown, and the
    /// run's fixed cost spread over its length ([`run_length`]).
    pub fn estimate(&self, request: &EstimateRequest) -> Estimate {
        let nproc = request.nproc;
        match request.speeds {
            Speeds::Known { names, standalone } => {
                self.estimate_known(names, nproc, standalone, request.simulated_s)
            }
            Speeds::Curves {
                curves,
                interp,
                steps,
            } => {
                let names: Vec<String> = curves.iter().map(|c| c.name.clone()).collect();
                let interpolants: Vec<Interpolant> = curves
                    .iter()
                    .map(|c| Interpolant::new(interp, &c.xs(), &c.ys()))
                    .collect();
                let standalone: Vec<f64> = interpolants
                    .iter()
                    .zip(nproc)
                    .map(|(f, &p)| f.eval(f64::from(p)))
                    .collect();
                let e = self.estimate_known(&names, nproc, &standalone, request.simulated_s);
                match steps {
                    Some(steps) if !steps.is_empty() => {
                        self.with_steps(e, &names, &interpolants, nproc, steps, request.simulated_s)
                    }
                    _ => e,
                }
            }
        }
    }

    fn estimate_known(
        &self,
        names: &[String],
        nproc: &[u32],
        standalone: &[f64],
        simulated_s: Option<f64>,
    ) -> Estimate {
        let speeds: Vec<Factor> = names
            .iter()
            .zip(nproc)
            .zip(standalone)
            .map(|((n, &p), &s)| self.speed(n, p, s))
            .collect();
        let pick = |f: fn(&Factor) -> f64| -> Vec<f64> { speeds.iter().map(f).collect() };
        let (adjusted, low, high) = (pick(|f| f.mid), pick(|f| f.low), pick(|f| f.high));
        let slow = self.slowdown(&adjusted);
        let phi = self.penalty(simulated_s);
        let run =
            |speeds: &[f64]| run_length::lengthen(crate::metrics::coupled_sypd(speeds) / slow, phi);
        Estimate {
            sypd: run(&adjusted),
            low: run(&low),
            high: run(&high),
            components: adjusted
                .iter()
                .map(|&x| run_length::lengthen(x, phi))
                .collect(),
        }
    }

    /// `e` with its SYPD replaced by the step-sum, the band scaled alike.
    fn with_steps(
        &self,
        mut e: Estimate,
        names: &[String],
        interpolants: &[Interpolant],
        nproc: &[u32],
        steps: &Steps,
        simulated_s: Option<f64>,
    ) -> Estimate {
        let speed =
            |c: usize, p: u32| self.steady_adjust(&names[c], p, interpolants[c].eval(f64::from(p)));
        let at_nproc: Vec<f64> = nproc
            .iter()
            .enumerate()
            .map(|(c, &p)| speed(c, p))
            .collect();
        let sypd = run_length::lengthen(
            steps.coupled_sypd(names, nproc, speed) / self.slowdown(&at_nproc),
            self.penalty(simulated_s),
        );
        let scale = sypd / e.sypd;
        e.sypd = sypd;
        e.low *= scale;
        e.high *= scale;
        e
    }
}
