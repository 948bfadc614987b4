//! Predicting one configuration with a model: what [`Model::estimate`] is asked
//! ([`EstimateRequest`]) and how it answers. One request type covers the three ways a caller
//! knows the standalone speeds (given, from curves, from curves with irregular steps) and the
//! run's length, so there is one estimate to read and to test instead of a family of variants.

use super::{run_length, steps::Steps, ComponentCurve, Estimate, Factor, Model};
use crate::curve::Curve;
use crate::interp::{Interpolant, Method};

/// One configuration to predict: its PEs per component, where the standalone speeds come
/// from, and how long the run is. `C` is how the components are given with their curves
/// ([`ComponentCurve`]: plain curves, or the prediction's inputs, some without a curve).
#[derive(Debug)]
pub struct EstimateRequest<'a, C = Curve> {
    /// PEs per component, in the order of the speeds' components.
    pub nproc: &'a [u32],
    /// Where the components' reference speeds come from.
    pub speeds: Speeds<'a, C>,
    /// Simulated seconds of the run; `None`: as long as the typical run the model learned from.
    pub simulated_s: Option<f64>,
}

/// Where an estimate's reference speeds come from: each component's standalone speed, or for
/// a component without a curve the law the calibrated model learned
/// ([`Model::reference_sypd`]).
#[derive(Debug)]
pub enum Speeds<'a, C = Curve> {
    /// Each component's reference SYPD at its PE count, already known.
    Known {
        /// The components' names.
        names: &'a [String],
        /// Their reference speeds (SYPD) at their PEs.
        standalone: &'a [f64],
    },
    /// Interpolated from each component's curve with `interp` (a component without one:
    /// [`Model::reference_sypd`]). With `steps`, the coupled SYPD is the step-sum of
    /// [`Steps::coupled_sypd`] over the model's speeds (which needs the curves, as it
    /// evaluates other PE counts), the band scaled alike.
    Curves {
        /// The components, with their curves where they have one.
        curves: &'a [C],
        /// How the curves are interpolated.
        interp: Method,
        /// Per-step series, if any.
        steps: Option<&'a Steps>,
    },
}

// By hand: a derive would ask `C: Copy`, and only references to `C` are held.
impl<C> Clone for EstimateRequest<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for EstimateRequest<'_, C> {}

impl<C> Clone for Speeds<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Speeds<'_, C> {}

impl<'a> EstimateRequest<'a> {
    /// `standalone[k]` is component `names[k]`'s reference SYPD at `nproc[k]` PEs.
    pub fn known(names: &'a [String], nproc: &'a [u32], standalone: &'a [f64]) -> Self {
        EstimateRequest {
            nproc,
            speeds: Speeds::Known { names, standalone },
            simulated_s: None,
        }
    }
}

impl<'a, C: ComponentCurve> EstimateRequest<'a, C> {
    /// The standalone speeds interpolated from `curves` with `interp`.
    pub fn curves(curves: &'a [C], interp: Method, nproc: &'a [u32]) -> Self {
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
    pub fn stepped(curves: &'a [C], interp: Method, nproc: &'a [u32], steps: &'a Steps) -> Self {
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

/// A component's reference speed at any PE count: its curve's interpolant, or (`None`) the
/// calibrated model's learned law.
struct Reference<'m> {
    model: &'m Model,
    name: String,
    interpolant: Option<Interpolant>,
}

impl Reference<'_> {
    /// The reference SYPD at `nproc` PEs (NaN when the component has no curve and the model
    /// learned none for it).
    fn sypd(&self, nproc: u32) -> f64 {
        match &self.interpolant {
            Some(f) => f.eval(f64::from(nproc)),
            None => self
                .model
                .reference_sypd(&self.name, nproc)
                .unwrap_or(f64::NAN),
        }
    }
}

impl Model {
    /// Predicts the configuration `request` describes: each component's speed from
    /// [`Model::speed`], the coupled SYPD their minimum slowed by the balance slowdown, and the
    /// run's fixed cost spread over its length ([`run_length`]). A component without a curve
    /// that the model did not learn gives a SYPD that is not a number.
    pub fn estimate<C: ComponentCurve>(&self, request: &EstimateRequest<C>) -> Estimate {
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
                let names: Vec<String> = curves.iter().map(|c| c.name().to_string()).collect();
                let references: Vec<Reference> = curves
                    .iter()
                    .map(|c| Reference {
                        model: self,
                        name: c.name().to_string(),
                        interpolant: c
                            .standalone()
                            .map(|c| Interpolant::new(interp, &c.xs(), &c.ys())),
                    })
                    .collect();
                let standalone: Vec<f64> = references
                    .iter()
                    .zip(nproc)
                    .map(|(f, &p)| f.sypd(p))
                    .collect();
                if standalone.iter().any(|s| s.is_nan()) {
                    // A component with no reference speed: no prediction (a min would skip it).
                    return Estimate {
                        sypd: f64::NAN,
                        low: f64::NAN,
                        high: f64::NAN,
                        components: vec![f64::NAN; standalone.len()],
                    };
                }
                let e = self.estimate_known(&names, nproc, &standalone, request.simulated_s);
                match steps {
                    Some(steps) if !steps.is_empty() => {
                        self.with_steps(e, &names, &references, nproc, steps, request.simulated_s)
                    }
                    _ => e,
                }
            }
        }
    }

    /// The coupled SYPD [`Model::estimate`] predicts (its `sypd`, without the band) for a run
    /// of `simulated_s` simulated seconds (`None`: typical) whose components go at the
    /// long-run speeds `steady` ([`Model::steady_adjust`] of each): for a search that scores
    /// many configurations from speeds it computed once per candidate. The same number as
    /// the estimate's, to the last bit.
    pub fn coupled_sypd(&self, steady: &[f64], simulated_s: Option<f64>) -> f64 {
        run_length::lengthen(
            crate::metrics::coupled_sypd(steady) / self.slowdown(steady),
            self.penalty(simulated_s),
        )
    }

    /// A component's speed in [`Estimate::components`] given its long-run speed `steady`, for
    /// a run of `simulated_s` simulated seconds (`None`: typical).
    pub fn component_sypd(&self, steady: f64, simulated_s: Option<f64>) -> f64 {
        run_length::lengthen(steady, self.penalty(simulated_s))
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
        references: &[Reference],
        nproc: &[u32],
        steps: &Steps,
        simulated_s: Option<f64>,
    ) -> Estimate {
        let speed = |c: usize, p: u32| self.steady_adjust(&names[c], p, references[c].sypd(p));
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
