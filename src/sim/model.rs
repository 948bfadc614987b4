//! The coupling simulation: who computes how long, who waits for whom.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::{defaults, is_atmosphere, SimError, SimRun};
use crate::interp::{Interpolant, Method};
use crate::timing::lucia_raw;

/// Model time of the global barrier (`Balance: IT`): any plausible MPI_Wtime epoch.
pub(crate) const EPOCH: f64 = 1_700_000_000.0;
/// Seconds of initialisation before the first exchange.
const INIT_S: f64 = 1.0;
/// Bookkeeping between a component's last put and its first get.
const GAP_S: f64 = 0.0001;
/// Seconds to deliver a field once it is there.
const TRANSFER_S: f64 = 0.0001;

/// What the model did (the analysis window is the one LUCIA's analysis uses).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimOutcome {
    /// Per component, in the run's order.
    pub components: Vec<ComponentOutcome>,
    /// Exchanges written per rank file (coupling steps + 1), fewer when the run failed.
    pub exchanges: u32,
    /// Coupling steps in the analysis window.
    pub window_steps: u32,
    /// Modelled wall seconds of the analysis window (T_M).
    pub window_wall_s: f64,
    /// Simulated seconds of the analysis window.
    pub window_sim_s: f64,
    /// Modelled wall seconds from the barrier to the last exchange.
    pub total_wall_s: f64,
    /// `Some(reason)` when the run failed (as the settings asked).
    pub failed: Option<String>,
}

/// One component's share of the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentOutcome {
    /// The component's timing name.
    pub name: String,
    /// MPI ranks it ran on.
    pub nproc: u32,
    /// OpenMP threads per rank (left out of the JSON for a pure-MPI component).
    #[serde(skip_serializing_if = "is_one")]
    pub threads: u32,
    /// How many rank files it wrote (the ranks LUCIA samples at `nproc` PEs).
    pub sampled_ranks: u32,
    /// SYPD of the truth curve at `nproc`, times the hidden thread efficiency of a hybrid
    /// component (the component's own speed).
    pub truth_sypd: f64,
    /// Compute seconds in the analysis window.
    pub compute_s: f64,
    /// Waiting seconds in the analysis window.
    pub wait_s: f64,
}

fn is_one(threads: &u32) -> bool {
    *threads == 1
}

/// One component ready to simulate.
pub(crate) struct CompPlan {
    pub name: String,
    /// OASIS component id (the `CC` of the file names), 1-based.
    pub cc: u32,
    pub nproc: u32,
    pub threads: u32,
    pub ranks: Vec<u32>,
    /// Per sampled rank: how much faster than the slowest rank it computes (0 for one rank).
    imbalance: Vec<f64>,
    /// Field ids this component sends.
    pub sends: Vec<u16>,
    /// Field ids it receives, with the index of the sending component.
    pub receives: Vec<(u16, usize)>,
    truth_sypd: f64,
    mean_step_s: f64,
    heavy: bool,
    /// Interpolation seconds per sent field and step (grows with the PE count).
    pub interp_s: f64,
}

impl CompPlan {
    /// Multiplies its speed by `factor` (NEMO's decomposition in an EC-Earth4 run,
    /// [`super::ec4_runs::standin_split`]).
    pub fn scale_speed(&mut self, factor: f64) {
        self.truth_sypd *= factor;
        self.mean_step_s /= factor;
    }
}

/// Events of one rank in one exchange.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankEvents {
    /// `(field, interp before, interp after, put before, put after)`.
    pub sends: Vec<(u16, f64, f64, f64, f64)>,
    /// `(field, get before, get after)`.
    pub gets: Vec<(u16, f64, f64)>,
}

/// Everything ready to run.
pub(crate) struct Plan {
    pub components: Vec<CompPlan>,
    pub exchanges: u32,
    pub period_s: f64,
    noise: f64,
    put_s: f64,
    heavy_every: u32,
    heavy_factor: f64,
    pub compression: f64,
    /// Exchange at which the run fails, if it does.
    pub fail_at: Option<u32>,
    seed: u64,
}

/// SYPD of `curve` at `nproc`: interpolated inside the measured range; below it, perfect
/// scaling from the first point; above it, the last point's speed (no invented speed-up).
pub(crate) fn truth_sypd(curve: &crate::curve::Curve, nproc: u32) -> f64 {
    let (first, last) = (curve.first_nproc(), curve.last_nproc());
    let p = f64::from(nproc);
    if nproc < first {
        curve.points()[0].sypd * p / f64::from(first)
    } else if nproc > last {
        curve.points()[curve.points().len() - 1].sypd
    } else {
        Interpolant::new(Method::Pchip, &curve.xs(), &curve.ys()).eval(p)
    }
}

impl Plan {
    pub fn new(run: &SimRun) -> Result<Plan, SimError> {
        let s = &run.settings;
        if run.components.is_empty() {
            return Err(SimError::Settings(
                "a run needs at least one component".into(),
            ));
        }
        if run.components.len() > 99 {
            return Err(SimError::Settings(
                "at most 99 components (OASIS ids are 2 digits)".into(),
            ));
        }
        let seed = run.seed ^ s.seed.unwrap_or(0).rotate_left(29) ^ 0x5eed_a770_1b00_0001;
        let mut rng = StdRng::seed_from_u64(seed);
        let period_s = s.period();
        let imbalance_max = s.rank_imbalance.unwrap_or(defaults::RANK_IMBALANCE);
        let fields = s.fields.unwrap_or(1) as u16;
        let interp_s = s.interp_s.unwrap_or(defaults::INTERP_S);
        let interp_s_per_pe = s.interp_s_per_pe.unwrap_or(0.0);
        let mut components = Vec::with_capacity(run.components.len());
        for (i, c) in run.components.iter().enumerate() {
            crate::curve::validate_component_name(&c.name).map_err(|reason| {
                SimError::Component {
                    name: c.name.clone(),
                    reason,
                }
            })?;
            if c.nproc == 0 {
                return Err(SimError::Component {
                    name: c.name.clone(),
                    reason: "needs at least one PE".into(),
                });
            }
            // The hidden cost of threads in a coupled run: a factor per doubling.
            let thread_factor = s
                .thread_efficiency
                .unwrap_or(defaults::THREAD_EFFICIENCY)
                .powf(f64::from(c.threads.max(1)).log2());
            let sypd = truth_sypd(&c.curve, c.nproc) * thread_factor;
            if !(sypd.is_finite() && sypd > 0.0) {
                return Err(SimError::Component {
                    name: c.name.clone(),
                    reason: format!("its truth curve gives SYPD {sypd} at {} PEs", c.nproc),
                });
            }
            let ranks = lucia_raw::sampled_ranks(c.nproc);
            let slowest = rng.random_range(0..ranks.len());
            let imbalance = (0..ranks.len())
                .map(|r| {
                    if r == slowest {
                        0.0
                    } else {
                        rng.random::<f64>() * imbalance_max
                    }
                })
                .collect();
            let heavy = match &s.heavy_components {
                Some(names) => names.iter().any(|n| n == &c.name),
                None => is_atmosphere(&c.name),
            };
            components.push(CompPlan {
                name: c.name.clone(),
                cc: i as u32 + 1,
                nproc: c.nproc,
                threads: c.threads.max(1),
                ranks,
                imbalance,
                sends: (0..fields).map(|f| i as u16 * fields + f + 1).collect(),
                receives: Vec::new(),
                truth_sypd: sypd,
                // Wall seconds per coupling step at this speed: period / (SYPD * 365).
                mean_step_s: period_s / (sypd * 365.0),
                heavy,
                interp_s: interp_s + interp_s_per_pe * f64::from(c.nproc),
            });
        }
        // Everyone receives every field the others send.
        let sent: Vec<(usize, Vec<u16>)> = components
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.sends.clone()))
            .collect();
        for (i, c) in components.iter_mut().enumerate() {
            c.receives = sent
                .iter()
                .filter(|(j, _)| *j != i)
                .flat_map(|(j, ids)| ids.iter().map(move |&id| (id, *j)))
                .collect();
        }
        // A slow run (a bad node): drawn from its own stream so that runs which are never
        // slow draw the same noise as without the setting.
        let slow_share = s.slow_runs.unwrap_or(0.0);
        if slow_share > 0.0
            && StdRng::seed_from_u64(seed ^ 0x510e_b0de_0000_0003).random::<f64>() < slow_share
        {
            let factor = s.slow_factor.unwrap_or(defaults::SLOW_FACTOR);
            for c in &mut components {
                c.mean_step_s *= factor;
            }
        }
        let steps = s.steps();
        // A failing run always stops before its last step.
        let fail_step = match (s.fail_after, s.fail_probability) {
            (Some(n), _) => Some(n.min(steps - 1)),
            (None, Some(p)) if rng.random::<f64>() < p => Some(rng.random_range(0..steps)),
            _ => None,
        };
        Ok(Plan {
            components,
            exchanges: steps + 1,
            period_s,
            noise: s.noise.unwrap_or(defaults::NOISE),
            put_s: s.put_s.unwrap_or(defaults::PUT_S),
            heavy_every: s.heavy_every.unwrap_or(defaults::HEAVY_EVERY),
            heavy_factor: s.heavy_factor.unwrap_or(defaults::HEAVY_FACTOR),
            compression: s.compression.unwrap_or(0.0),
            // Failing "after n steps" means exchange n + 1 never completes.
            fail_at: fail_step.map(|n| n + 1),
            seed,
        })
    }

    /// Compute seconds of component `c` for the step that ends at exchange `e` (e >= 1).
    fn step_compute(&self, c: &CompPlan, e: u32, rng: &mut StdRng) -> f64 {
        let h = self.heavy_every;
        let heavy = c.heavy && h > 1 && self.heavy_factor > 1.0;
        // Keep the mean on the curve: ordinary steps are a bit faster than the mean.
        let (base, factor) = if heavy {
            let base = c.mean_step_s * f64::from(h) / (f64::from(h - 1) + self.heavy_factor);
            (
                base,
                if e.is_multiple_of(h) {
                    self.heavy_factor
                } else {
                    1.0
                },
            )
        } else {
            (c.mean_step_s, 1.0)
        };
        let z = standard_normal(rng);
        base * factor * (1.0 + self.noise * z).max(0.1)
    }

    /// Runs every exchange, handing each one's events to `emit` (component-major, then rank).
    /// Stops early at the failure exchange, if any.
    pub fn simulate_all(
        &self,
        mut emit: impl FnMut(&Exchange) -> Result<(), SimError>,
    ) -> Result<SimOutcome, SimError> {
        let mut rng = StdRng::seed_from_u64(self.seed.wrapping_add(1));
        let n = self.components.len();
        // Common clock of each component: the end of its last get (all ranks leave together).
        let mut clock = vec![EPOCH + INIT_S; n];
        let mut exchange = Exchange {
            events: self
                .components
                .iter()
                .map(|c| vec![RankEvents::default(); c.ranks.len()])
                .collect(),
            compute: vec![0.0; n],
            wait: vec![0.0; n],
            end: vec![0.0; n],
        };
        let mut history: Vec<Recorded> = Vec::new();
        let last = self.fail_at.unwrap_or(self.exchanges).min(self.exchanges);
        for e in 0..last {
            // Compute, interpolate and put: each rank from the common start of the step.
            let mut available = vec![0.0f64; n];
            for (ci, c) in self.components.iter().enumerate() {
                let compute = if e == 0 {
                    0.0
                } else {
                    self.step_compute(c, e, &mut rng)
                };
                exchange.compute[ci] = compute;
                for (ri, ev) in exchange.events[ci].iter_mut().enumerate() {
                    let mut t = clock[ci] + compute * (1.0 - c.imbalance[ri]);
                    ev.sends.clear();
                    for &f in &c.sends {
                        let ib = t;
                        let ia = ib + c.interp_s;
                        let pa = ia + self.put_s;
                        ev.sends.push((f, ib, ia, ia, pa));
                        t = pa;
                    }
                    available[ci] = available[ci].max(t);
                }
            }
            // Get: each field returns once its sender has put it; fields one after another.
            for (ci, c) in self.components.iter().enumerate() {
                let ready: Vec<f64> = exchange.events[ci]
                    .iter()
                    .map(|ev| ev.sends.last().map_or(clock[ci], |s| s.4) + GAP_S)
                    .collect();
                let mut before_max = ready.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mut wait = 0.0;
                for ev in exchange.events[ci].iter_mut() {
                    ev.gets.clear();
                }
                let mut end = before_max;
                for &(f, from) in &c.receives {
                    let after = before_max.max(available[from]) + TRANSFER_S;
                    for (ri, ev) in exchange.events[ci].iter_mut().enumerate() {
                        let before = if ev.gets.is_empty() {
                            ready[ri]
                        } else {
                            before_max
                        };
                        ev.gets.push((f, before, after));
                    }
                    wait += after - before_max;
                    before_max = after;
                    end = after;
                }
                exchange.wait[ci] = wait;
                exchange.end[ci] = end;
            }
            clock.clone_from(&exchange.end);
            history.push(Recorded {
                compute: exchange.compute.clone(),
                wait: exchange.wait.clone(),
                end: exchange.end.clone(),
            });
            emit(&exchange)?;
        }
        Ok(self.outcome(&history, last))
    }

    fn outcome(&self, history: &[Recorded], written: u32) -> SimOutcome {
        let n = history.len();
        let first = lucia_raw::SKIP_FIRST;
        let window_ok = n >= lucia_raw::MIN_EXCHANGES;
        let lastx = n.saturating_sub(1 + lucia_raw::SKIP_LAST);
        let sum = |ci: usize, pick: fn(&Recorded) -> &Vec<f64>| -> f64 {
            if !window_ok {
                return 0.0;
            }
            history[first + 1..=lastx].iter().map(|h| pick(h)[ci]).sum()
        };
        let components = self
            .components
            .iter()
            .enumerate()
            .map(|(ci, c)| ComponentOutcome {
                name: c.name.clone(),
                nproc: c.nproc,
                threads: c.threads,
                sampled_ranks: c.ranks.len() as u32,
                truth_sypd: c.truth_sypd,
                compute_s: sum(ci, |h| &h.compute),
                wait_s: sum(ci, |h| &h.wait),
            })
            .collect();
        let end_of = |k: usize| {
            history[k]
                .end
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let window_steps = if window_ok { (lastx - first) as u32 } else { 0 };
        SimOutcome {
            components,
            exchanges: written,
            window_steps,
            window_wall_s: if window_ok {
                end_of(lastx) - end_of(first)
            } else {
                0.0
            },
            window_sim_s: f64::from(window_steps) * self.period_s,
            total_wall_s: if n > 0 { end_of(n - 1) - EPOCH } else { 0.0 },
            failed: self.fail_at.map(|f| {
                format!(
                    "the stand-in model failed after {} coupling step(s), as the settings asked",
                    f - 1
                )
            }),
        }
    }
}

/// What one exchange did per component, kept for the outcome.
struct Recorded {
    compute: Vec<f64>,
    wait: Vec<f64>,
    end: Vec<f64>,
}

/// One exchange's events, handed to the writer.
pub(crate) struct Exchange {
    /// Per component, per sampled rank.
    pub events: Vec<Vec<RankEvents>>,
    compute: Vec<f64>,
    wait: Vec<f64>,
    /// Per component: the end of its last get (its clock after this exchange).
    pub end: Vec<f64>,
}

/// A standard normal deviate (Box-Muller; `rand_distr` is not worth a dependency for this).
pub(crate) fn standard_normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
