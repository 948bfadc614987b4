//! Synthetic cases for judging a performance model on data whose truth we know but did not
//! choose: random components whose standalone scalability curve is measured (with noise) and
//! whose *coupled-mode* speed, the one the stand-in model actually runs at, is that standalone
//! speed times a random smooth slowdown with occasional dips (bad decompositions).
//!
//! A prediction sees only [`SyntheticComponent::standalone`] (the noisy measured points, like a
//! real scalability curve measured outside the coupled set-up). The stand-in model runs with
//! [`SyntheticComponent::coupled_truth`], a dense curve of the true coupled-mode speed, so runs
//! of the stand-in ([`SyntheticCase::simulate`], or a campaign with the `sim` executor and
//! [`SyntheticCase::sim_settings`] after [`SyntheticCase::write_curves`]) measure what a real
//! coupled run would: slower than the standalone curve says, by an amount that varies with nproc.
//!
//! Everything is drawn from one seed, so a case is reproducible from `(seed, components)`.
//! Shapes:
//! * standalone wall time per simulated year `t(p) = a/p + b + c * p^g` (perfectly parallel
//!   work, a serial part and a communication term that grows with p), with random `a, b, c, g`,
//!   so curves flatten or even turn down at the end like measured ones do;
//! * slowdown `r(p) = base * exp(sum_k A_k sin(w_k ln p + phi_k)) * prod_dips (1 - d_j * bump_j(p))`
//!   with `base` in [0.6, 0.97], two or three random sinusoids in `ln p` (amplitudes up to
//!   0.06) and, with probability 1/2 per component, one or two dips of depth 5-20 % and width
//!   3-8 % of p at random PE counts inside the measured range.
//!
//! That is the plain family ([`SyntheticCase::generate`]), the one the campaign rules were
//! designed on. [`Family`] adds what it lacks, so a rule can be judged on shapes it was not
//! tuned to ([`SyntheticCase::unseen`] draws them from the seed): dips and plateaus in the
//! standalone curve (decompositions), speed that falls past a count, a coupled-mode slowdown
//! with a trend in PEs, heavy steps, interpolation growing with PEs, a share of slow runs, and
//! 2 to 4 components.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{SimComponent, SimError, SimOutcome, SimRun, SimSettings};
use crate::curve::{Curve, Point};

mod family;

pub use family::Family;

/// Names given to synthetic components, in order (EC-Earth-like; the first is the atmosphere,
/// which gets the stand-in model's heavy radiation steps by default).
pub const NAMES: [&str; 5] = ["IFS", "NEMO", "LIM", "LPJG", "TM5"];

/// Relative standard deviation of the noise on the standalone curve's measured points.
pub const CURVE_NOISE: f64 = 0.02;

/// Distance in PEs between the points of the dense coupled-mode truth curve.
const TRUTH_SPACING: u32 = 4;

/// One synthetic component.
#[derive(Debug, Clone)]
pub struct SyntheticComponent {
    /// The component's name (`IFS`, `NEMO`, `LIM`, `LPJG`, `TM5`, in that order).
    pub name: String,
    /// The measured standalone curve the prediction sees (noisy points).
    pub standalone: Curve,
    /// The noise-free standalone speed at every `TRUTH_SPACING`-th PE count.
    pub standalone_truth: Curve,
    /// The true coupled-mode speed (`standalone_truth * slowdown`), same PE counts: what the
    /// stand-in model runs at.
    pub coupled_truth: Curve,
    shape: Shape,
}

/// The hidden shape of one component (kept to evaluate the truth at any PE count).
#[derive(Debug, Clone)]
struct Shape {
    a: f64,
    b: f64,
    c: f64,
    g: f64,
    base: f64,
    waves: Vec<(f64, f64, f64)>,
    dips: Vec<(f64, f64, f64)>,
    /// What an unseen family adds ([`Family`]); nothing for [`SyntheticCase::generate`].
    extra: family::Extra,
}

impl Shape {
    fn standalone_sypd(&self, p: f64) -> f64 {
        // A plateau holds the speed of its first count up to its end.
        let q = self.extra.plateau_start(p);
        // t is wall days per simulated year.
        let t = self.a / q + self.b + self.c * q.powf(self.g);
        self.extra.decomposition_factor(p) / t
    }

    fn slowdown(&self, p: f64) -> f64 {
        let lp = p.ln();
        let wave: f64 = self
            .waves
            .iter()
            .map(|&(amp, w, phi)| amp * (w * lp + phi).sin())
            .sum();
        let dips: f64 = self
            .dips
            .iter()
            .map(|&(at, depth, width)| {
                let z = (p - at) / (width * at);
                1.0 - depth * (-0.5 * z * z).exp()
            })
            .product();
        (self.base * wave.exp() * dips * self.extra.slowdown_trend(p)).min(1.0)
    }
}

impl SyntheticComponent {
    /// True coupled-mode slowdown at `nproc`: coupled speed / standalone speed, in (0, 1].
    pub fn slowdown(&self, nproc: u32) -> f64 {
        self.shape.slowdown(f64::from(nproc))
    }

    /// The noise-free standalone SYPD at `nproc`.
    pub fn standalone_sypd(&self, nproc: u32) -> f64 {
        self.shape.standalone_sypd(f64::from(nproc))
    }

    /// The true coupled-mode SYPD at `nproc` (what the stand-in model computes at).
    pub fn coupled_sypd(&self, nproc: u32) -> f64 {
        self.standalone_sypd(nproc) * self.slowdown(nproc)
    }
}

/// A whole synthetic case: 1 to 5 components drawn from one seed.
#[derive(Debug, Clone)]
pub struct SyntheticCase {
    /// The seed the case was drawn from; the same seed draws the same case.
    pub seed: u64,
    /// Its components (1 to 5).
    pub components: Vec<SyntheticComponent>,
    /// The families of shapes and run effects it was drawn with ([`Family::PLAIN`] for
    /// [`SyntheticCase::generate`]).
    pub family: Family,
    /// The stand-in settings its family asks for (heavy steps, interpolation growing with
    /// PEs, slow runs); empty for the plain family.
    run_effects: SimSettings,
}

impl SyntheticCase {
    /// Draws a case with `components` components (clamped to 1..=5) from `seed`: the plain
    /// family (smooth standalone curves, a coupled-mode slowdown with occasional dips).
    pub fn generate(seed: u64, components: usize) -> SyntheticCase {
        SyntheticCase::generate_family(seed, components, Family::PLAIN)
    }

    /// Draws a case of `family` with `components` components (clamped to 1..=5) from `seed`.
    /// The base shapes are those [`SyntheticCase::generate`] draws from the same seed; the
    /// family's features are drawn from a stream of their own on top of them.
    pub fn generate_family(seed: u64, components: usize, family: Family) -> SyntheticCase {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5717_7e71_c0a5_e000);
        let mut extra_rng = StdRng::seed_from_u64(seed ^ 0xfa31_1e5d_0000_0007);
        let n = components.clamp(1, NAMES.len());
        let components = (0..n)
            .map(|i| draw_component(NAMES[i], &mut rng, &family, &mut extra_rng))
            .collect();
        let run_effects = family.run_effects(&mut extra_rng);
        SyntheticCase {
            seed,
            components,
            family,
            run_effects,
        }
    }

    /// A case nobody designed a rule on: its family ([`Family::draw`]) and its number of
    /// components (2 to 4) are drawn from `seed` too.
    pub fn unseen(seed: u64) -> SyntheticCase {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x0e5e_e000_0000_0011);
        let family = Family::draw(&mut rng);
        let components = rng.random_range(2..=4usize);
        SyntheticCase::generate_family(seed, components, family)
    }

    /// The components' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.components.iter().map(|c| c.name.clone()).collect()
    }

    /// The standalone curves a prediction sees, in component order.
    pub fn standalone_curves(&self) -> Vec<Curve> {
        self.components
            .iter()
            .map(|c| c.standalone.clone())
            .collect()
    }

    /// The stand-in model's components for a configuration (PEs in component order): each
    /// runs at its true coupled-mode curve.
    pub fn sim_components(&self, nproc: &[u32]) -> Vec<SimComponent> {
        self.components
            .iter()
            .zip(nproc)
            .map(|(c, &p)| SimComponent {
                name: c.name.clone(),
                nproc: p,
                curve: c.coupled_truth.clone(),
                threads: 1,
            })
            .collect()
    }

    /// Simulation settings for this case: the stand-in's defaults (2 % step noise, IFS
    /// radiation steps) with a per-case seed and what the case's family sets (heavier steps,
    /// interpolation growing with PEs, slow runs). `curves` is left empty; see
    /// [`SyntheticCase::sim_settings`] for a campaign's `[executor.sim]`.
    pub fn base_settings(&self) -> SimSettings {
        SimSettings {
            seed: Some(self.seed),
            ..self.run_effects.clone()
        }
    }

    /// Runs the stand-in model on a configuration in memory (no files) and returns what it
    /// measured. `run_seed` distinguishes repetitions.
    pub fn simulate(&self, nproc: &[u32], run_seed: u64) -> Result<SimOutcome, SimError> {
        self.simulate_with(&self.base_settings(), nproc, run_seed)
    }

    /// [`SyntheticCase::simulate`] with other stand-in settings (e.g. a longer interpolation
    /// per coupling step); their `curves` are ignored, the case's truth is used.
    pub fn simulate_with(
        &self,
        settings: &SimSettings,
        nproc: &[u32],
        run_seed: u64,
    ) -> Result<SimOutcome, SimError> {
        let run = SimRun::new(settings, self.sim_components(nproc), run_seed);
        super::simulate_in_memory(&run)
    }

    /// The coupled SYPD the stand-in goes at on a configuration with `settings` but without
    /// noise, rank imbalance or failures: the true speed of that configuration, heavy steps and
    /// coupling overheads included (with heavy steps the coupled run is slower than its slowest
    /// component's mean speed, because a heavy step's wait is not made up by the others).
    pub fn noise_free_sypd(&self, settings: &SimSettings, nproc: &[u32]) -> Result<f64, SimError> {
        let quiet = SimSettings {
            noise: Some(0.0),
            rank_imbalance: Some(0.0),
            fail_after: None,
            fail_probability: None,
            slow_runs: None,
            compression: None,
            ..settings.clone()
        };
        let out = self.simulate_with(&quiet, nproc, 0)?;
        Ok(crate::metrics::sypd(out.window_sim_s, out.window_wall_s))
    }

    /// Runs the stand-in on a configuration and reduces what it measured to a
    /// [`crate::model::MeasuredRun`] (component SYPD from compute seconds, coupled SYPD from
    /// the coupled wall time of the analysed window), as timing output of a real run would be.
    pub fn measured_run(
        &self,
        nproc: &[u32],
        run_seed: u64,
    ) -> Result<crate::model::MeasuredRun, SimError> {
        self.measured_run_with(&self.base_settings(), nproc, run_seed)
    }

    /// [`SyntheticCase::measured_run`] with other stand-in settings
    /// ([`SyntheticCase::simulate_with`]).
    pub fn measured_run_with(
        &self,
        settings: &SimSettings,
        nproc: &[u32],
        run_seed: u64,
    ) -> Result<crate::model::MeasuredRun, SimError> {
        let out = self.simulate_with(settings, nproc, run_seed)?;
        let sim_s = out.window_sim_s;
        let components = out
            .components
            .iter()
            .map(|c| crate::model::MeasuredComponent {
                name: c.name.clone(),
                nproc: c.nproc,
                sypd: crate::metrics::sypd(sim_s, c.compute_s),
                wait_s: Some(c.wait_s),
                interp_s: None,
                send_s: None,
            })
            .collect();
        Ok(crate::model::MeasuredRun {
            path: format!(
                "synthetic-{}/{}",
                self.seed,
                nproc
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join("_")
            ),
            components,
            coupled_sypd: crate::metrics::sypd(sim_s, out.window_wall_s),
            simulated_s: Some(sim_s),
        })
    }

    /// `count` random configurations inside every component's measured range (PEs multiples
    /// of 8), drawn from `seed`.
    pub fn random_configurations(&self, count: usize, seed: u64) -> Vec<Vec<u32>> {
        let mut rng = StdRng::seed_from_u64(seed ^ 0xc0f1_6000);
        (0..count)
            .map(|_| {
                self.components
                    .iter()
                    .map(|c| {
                        let (lo, hi) = (c.standalone.first_nproc(), c.standalone.last_nproc());
                        let f: f64 = rng.random();
                        let p =
                            (f64::from(lo).ln() + f * (f64::from(hi) / f64::from(lo)).ln()).exp();
                        ((p / 8.0).round() as u32 * 8).clamp(lo, hi)
                    })
                    .collect()
            })
            .collect()
    }

    /// Writes `standalone_NAME.csv` (what the prediction may see) and `truth_NAME.csv` (the
    /// coupled-mode truth the stand-in runs at) into `dir`; returns the paths by name as
    /// `(standalone, truth)`.
    pub fn write_curves(
        &self,
        dir: &Path,
    ) -> Result<BTreeMap<String, (PathBuf, PathBuf)>, SimError> {
        std::fs::create_dir_all(dir).map_err(|source| SimError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut out = BTreeMap::new();
        for c in &self.components {
            let sa = dir.join(format!("standalone_{}.csv", c.name));
            let tr = dir.join(format!("truth_{}.csv", c.name));
            write_curve_csv(&c.standalone, &sa)?;
            write_curve_csv(&c.coupled_truth, &tr)?;
            out.insert(c.name.clone(), (sa, tr));
        }
        Ok(out)
    }

    /// `[executor.sim]` settings that make a campaign's stand-in runs follow the true
    /// coupled-mode curves written by [`SyntheticCase::write_curves`] into `dir` (paths are
    /// absolute, so the campaign file may live anywhere).
    pub fn sim_settings(&self, dir: &Path) -> SimSettings {
        let curves = self
            .components
            .iter()
            .map(|c| (c.name.clone(), dir.join(format!("truth_{}.csv", c.name))))
            .collect();
        SimSettings {
            curves: Some(curves),
            ..self.base_settings()
        }
    }
}

/// Writes a curve as `nproc,SYPD` CSV.
pub fn write_curve_csv(curve: &Curve, path: &Path) -> Result<(), SimError> {
    let mut text = String::from("nproc,SYPD\n");
    for p in curve.points() {
        text.push_str(&format!("{},{:.6}\n", p.nproc, p.sypd));
    }
    std::fs::write(path, text).map_err(|source| SimError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn draw_component(
    name: &str,
    rng: &mut StdRng,
    family: &Family,
    extra_rng: &mut StdRng,
) -> SyntheticComponent {
    // Measured range: first point 24-96 PEs, last 8-30 times that.
    let first = 24 * rng.random_range(1..=4u32);
    let last = (f64::from(first) * rng.random_range(8.0..30.0)) as u32 / 8 * 8;
    // Standalone: speed at `first` between 2 and 10 SYPD; a serial fraction of 0.2-3 % of
    // the time at `first`; communication that costs 5-40 % of the time at `last`.
    let s_first = rng.random_range(2.0..10.0);
    let t_first = 1.0 / s_first;
    let pf = f64::from(first);
    let pl = f64::from(last);
    let serial = rng.random_range(0.002..0.03);
    let g = rng.random_range(0.3..1.0);
    let b = serial * t_first;
    let a = (t_first - b) * pf;
    let t_last_ideal = a / pl + b;
    let comm_share = rng.random_range(0.05..0.4);
    let c = comm_share * t_last_ideal / (1.0 - comm_share) / pl.powf(g);
    let waves = (0..rng.random_range(2..=3))
        .map(|_| {
            (
                rng.random_range(0.0..0.06),
                rng.random_range(0.8..4.0),
                rng.random_range(0.0..std::f64::consts::TAU),
            )
        })
        .collect();
    let dips = if rng.random_bool(0.5) {
        (0..rng.random_range(1..=2))
            .map(|_| {
                (
                    rng.random_range(pf..pl),
                    rng.random_range(0.05..0.2),
                    rng.random_range(0.03..0.08),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut shape = Shape {
        a,
        b,
        c,
        g,
        base: rng.random_range(0.6..0.97),
        waves,
        dips,
        extra: family::Extra::default(),
    };
    family.shape(&mut shape, pf, pl, extra_rng);
    // Measured standalone points: 6-12 PE counts spread in log scale, multiples of 8, noisy.
    let n_points = rng.random_range(6..=12usize);
    let mut nprocs: Vec<u32> = (0..n_points)
        .map(|i| {
            let f = i as f64 / (n_points - 1) as f64;
            let p = (pf.ln() + f * (pl.ln() - pf.ln())).exp();
            ((p / 8.0).round() as u32 * 8).clamp(first, last)
        })
        .collect();
    nprocs.dedup();
    let points: Vec<Point> = nprocs
        .iter()
        .map(|&p| Point {
            nproc: p,
            sypd: shape.standalone_sypd(f64::from(p)) * (1.0 + CURVE_NOISE * normal(rng)),
        })
        .collect();
    let grid: Vec<u32> = (first..=last).step_by(TRUTH_SPACING as usize).collect();
    let truth_points = |f: &dyn Fn(f64) -> f64| -> Vec<Point> {
        grid.iter()
            .map(|&p| Point {
                nproc: p,
                sypd: f(f64::from(p)),
            })
            .collect()
    };
    let file = format!("synthetic {name}");
    let standalone = Curve::from_points(name, &file, &points).expect("valid synthetic curve");
    let standalone_truth =
        Curve::from_points(name, &file, &truth_points(&|p| shape.standalone_sypd(p)))
            .expect("valid synthetic curve");
    let coupled_truth = Curve::from_points(
        name,
        &file,
        &truth_points(&|p| shape.standalone_sypd(p) * shape.slowdown(p)),
    )
    .expect("valid synthetic curve");
    SyntheticComponent {
        name: name.to_string(),
        standalone,
        standalone_truth,
        coupled_truth,
        shape,
    }
}

fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_case_other_seed_other_case() {
        let a = SyntheticCase::generate(7, 2);
        let b = SyntheticCase::generate(7, 2);
        let c = SyntheticCase::generate(8, 2);
        assert_eq!(a.components[0].standalone, b.components[0].standalone);
        assert_ne!(a.components[0].standalone, c.components[0].standalone);
    }

    #[test]
    fn coupled_truth_is_slower_than_standalone_and_varies_with_nproc() {
        for seed in 0..20 {
            let case = SyntheticCase::generate(seed, 3);
            for c in &case.components {
                let ratios: Vec<f64> = c
                    .coupled_truth
                    .points()
                    .iter()
                    .map(|p| p.sypd / c.standalone_sypd(p.nproc))
                    .collect();
                assert!(ratios.iter().all(|&r| r > 0.3 && r <= 1.0 + 1e-12));
                let (lo, hi) = ratios
                    .iter()
                    .fold((f64::INFINITY, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
                assert!(hi - lo > 0.005, "seed {seed}: slowdown is flat");
            }
        }
    }

    #[test]
    fn a_stand_in_run_goes_at_the_coupled_truth_not_the_standalone_curve() {
        let case = SyntheticCase::generate(3, 2);
        let nproc: Vec<u32> = case
            .components
            .iter()
            .map(|c| c.standalone.first_nproc() * 2)
            .collect();
        let out = case.simulate(&nproc, 1).unwrap();
        for (o, c) in out.components.iter().zip(&case.components) {
            let p = o.nproc;
            let truth = c.coupled_sypd(p);
            assert!(
                (o.truth_sypd / truth - 1.0).abs() < 0.01,
                "{}: {} vs {}",
                c.name,
                o.truth_sypd,
                truth
            );
        }
    }

    #[test]
    fn the_noise_free_speed_is_the_slowest_component_without_heavy_steps_and_below_it_with_them() {
        let case = SyntheticCase::generate(5, 3);
        let nproc: Vec<u32> = case
            .components
            .iter()
            .map(|c| c.standalone.first_nproc() * 3)
            .collect();
        let slowest = case
            .components
            .iter()
            .zip(&nproc)
            .map(|(c, &p)| c.coupled_sypd(p))
            .fold(f64::INFINITY, f64::min);
        let plain = SimSettings {
            heavy_every: Some(0),
            interp_s: Some(0.0),
            put_s: Some(0.0),
            ..case.base_settings()
        };
        let s = case.noise_free_sypd(&plain, &nproc).unwrap();
        assert!((s / slowest - 1.0).abs() < 0.002, "{s} vs {slowest}");
        let heavy = SimSettings {
            heavy_every: Some(4),
            ..plain.clone()
        };
        let h = case.noise_free_sypd(&heavy, &nproc).unwrap();
        assert!(h < s * 0.999, "heavy steps {h} vs none {s}");
        // The same run twice: no noise, the same speed.
        assert_eq!(h, case.noise_free_sypd(&heavy, &nproc).unwrap());
    }

    #[test]
    fn interpolation_that_grows_with_pes_slows_large_configurations_more() {
        let case = SyntheticCase::generate(9, 2);
        let small: Vec<u32> = case
            .components
            .iter()
            .map(|c| c.standalone.first_nproc())
            .collect();
        let large: Vec<u32> = case
            .components
            .iter()
            .map(|c| c.standalone.last_nproc())
            .collect();
        let flat = SimSettings {
            heavy_every: Some(0),
            ..case.base_settings()
        };
        let growing = SimSettings {
            interp_s_per_pe: Some(2e-5),
            ..flat.clone()
        };
        let loss = |nproc: &[u32]| {
            1.0 - case.noise_free_sypd(&growing, nproc).unwrap()
                / case.noise_free_sypd(&flat, nproc).unwrap()
        };
        assert!(loss(&small) > 0.0);
        assert!(
            loss(&large) > 2.0 * loss(&small),
            "{} vs {}",
            loss(&large),
            loss(&small)
        );
        // A standalone run has no coupling, so no interpolation at all.
        assert_eq!(growing.standalone().interp_s_per_pe, Some(0.0));
    }

    #[test]
    fn curves_written_for_a_campaign_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let case = SyntheticCase::generate(11, 2);
        let paths = case.write_curves(dir.path()).unwrap();
        let settings = case.sim_settings(dir.path());
        for c in &case.components {
            let (sa, tr) = &paths[&c.name];
            assert_eq!(
                Curve::load(&c.name, sa).unwrap().points().len(),
                c.standalone.points().len()
            );
            assert_eq!(
                Curve::load(&c.name, tr).unwrap().first_nproc(),
                c.coupled_truth.first_nproc()
            );
            assert_eq!(settings.curves.as_ref().unwrap()[&c.name], *tr);
        }
    }
}
