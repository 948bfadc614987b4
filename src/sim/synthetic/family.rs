//! Families of synthetic truths beyond the plain one: the shapes and run effects that real
//! models show and the plain generator does not, so a campaign rule is judged on cases it was
//! not designed on.
//!
//! Every value a family could use is drawn whether or not its trait is on, from a stream of
//! its own: switching one trait on or off leaves every other shape and effect of the case as
//! it was, so a trait's effect on a rule can be seen alone.

use std::fmt;
use std::str::FromStr;

use rand::rngs::StdRng;
use rand::Rng;

use super::{Shape, NAMES};
use crate::sim::SimSettings;

/// Which shapes and run effects a synthetic case has, on top of the plain family's smooth
/// standalone curve and coupled-mode slowdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Family {
    /// Dips (speed drops for a few counts, then recovers) and plateaus (speed stays flat over
    /// a range of counts) in the standalone curve, as changes of the domain decomposition
    /// make them.
    pub decompositions: bool,
    /// Speed that peaks inside the range and falls past that count (communication takes over).
    pub falling_speed: bool,
    /// A coupled-mode slowdown with a trend in PEs: coupling costs more (or less) of the
    /// standalone speed as PEs grow, not only wiggles around a level.
    pub slowdown_trend: bool,
    /// Heavy steps: every 2nd to 6th step of the atmosphere (and in half the cases of the
    /// ocean too) computes 2 to 3.5 times as long as the others.
    pub heavy_steps: bool,
    /// Interpolation that grows with the sender's PEs (10-60 µs per PE, per field and step,
    /// 1 to 3 fields).
    pub growing_interpolation: bool,
    /// One run in four is three times slow (a bad node, a busy file system).
    pub slow_runs: bool,
}

/// The traits' names, as [`Family`]'s `Display` and `FromStr` write and read them.
const TRAITS: [&str; 6] = [
    "decompositions",
    "falling",
    "trend",
    "heavy",
    "interp",
    "slow",
];

impl Family {
    /// The plain family: none of the traits ([`super::SyntheticCase::generate`]).
    pub const PLAIN: Family = Family {
        decompositions: false,
        falling_speed: false,
        slowdown_trend: false,
        heavy_steps: false,
        growing_interpolation: false,
        slow_runs: false,
    };

    /// Every trait at once.
    pub const ALL: Family = Family {
        decompositions: true,
        falling_speed: true,
        slowdown_trend: true,
        heavy_steps: true,
        growing_interpolation: true,
        slow_runs: true,
    };

    /// A random family: each shape and run trait with probability 1/2 (at least one of the
    /// shape traits), slow runs with probability 1/3.
    pub fn draw(rng: &mut StdRng) -> Family {
        let mut f = Family {
            decompositions: rng.random_bool(0.5),
            falling_speed: rng.random_bool(0.5),
            slowdown_trend: rng.random_bool(0.5),
            heavy_steps: rng.random_bool(0.5),
            growing_interpolation: rng.random_bool(0.5),
            slow_runs: rng.random_bool(1.0 / 3.0),
        };
        if !(f.decompositions || f.falling_speed || f.slowdown_trend) {
            f.decompositions = true;
        }
        f
    }

    fn flags(&self) -> [bool; 6] {
        [
            self.decompositions,
            self.falling_speed,
            self.slowdown_trend,
            self.heavy_steps,
            self.growing_interpolation,
            self.slow_runs,
        ]
    }

    /// Draws the family's features of one component into `shape` (measured range
    /// `first..=last` PEs).
    pub(super) fn shape(&self, shape: &mut Shape, first: f64, last: f64, rng: &mut StdRng) {
        let log_between = |rng: &mut StdRng, lo: f64, hi: f64| -> f64 {
            (lo.ln() + rng.random::<f64>() * (hi / lo).ln()).exp()
        };
        // Decompositions: one to three features, each a dip or a plateau.
        let features: Vec<(bool, f64, f64, f64)> = (0..rng.random_range(1..=3))
            .map(|_| {
                (
                    rng.random_bool(0.6),
                    log_between(rng, first * 1.4, last * 0.85),
                    rng.random_range(0.15..0.4),
                    rng.random_range(0.03..0.08),
                )
            })
            .collect();
        let plateau_length = rng.random_range(1.1..1.4);
        // Falling speed: the peak at a log-fraction 0.45-0.8 of the range.
        let peak = (first.ln() + rng.random_range(0.45..0.8) * (last / first).ln()).exp();
        let g = rng.random_range(1.0..2.0);
        // Slowdown trend: -0.12 to 0.12 in ln(slowdown) per unit of ln(p), at least 0.04.
        let k = rng.random_range(0.04..0.12) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        if self.decompositions {
            for &(dip, at, depth, width) in &features {
                if dip {
                    shape.extra.dips.push((at, depth, width));
                } else {
                    shape.extra.plateaus.push((at, at * plateau_length));
                }
            }
        }
        if self.falling_speed {
            // t(p) = a/p + b + c p^g has its minimum (the speed's peak) where a/p^2 = g c p^(g-1).
            shape.g = g;
            shape.c = shape.a / (g * peak.powf(g + 1.0));
        }
        if self.slowdown_trend {
            shape.extra.trend = k;
            shape.extra.trend_centre = (first * last).sqrt();
        }
    }

    /// The stand-in settings of the family's run effects (empty for none).
    pub(super) fn run_effects(&self, rng: &mut StdRng) -> SimSettings {
        let heavy_every = rng.random_range(2..=6u32);
        let heavy_factor = rng.random_range(2.0..3.5);
        let ocean_too = rng.random_bool(0.5);
        let interp_s_per_pe = rng.random_range(1e-5..6e-5);
        let fields = rng.random_range(1..=3u32);
        let mut s = SimSettings::default();
        if self.heavy_steps {
            s.heavy_every = Some(heavy_every);
            s.heavy_factor = Some(heavy_factor);
            let n = if ocean_too { 2 } else { 1 };
            s.heavy_components = Some(NAMES[..n].iter().map(|n| n.to_string()).collect());
        }
        if self.growing_interpolation {
            s.interp_s_per_pe = Some(interp_s_per_pe);
            s.fields = Some(fields);
        }
        if self.slow_runs {
            s.slow_runs = Some(0.25);
            s.slow_factor = Some(3.0);
        }
        s
    }
}

impl fmt::Display for Family {
    /// The traits that are on, joined by `+`, or `plain`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on: Vec<&str> = TRAITS
            .iter()
            .zip(self.flags())
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect();
        if on.is_empty() {
            f.write_str("plain")
        } else {
            f.write_str(&on.join("+"))
        }
    }
}

impl FromStr for Family {
    type Err = String;

    /// `plain`, `all`, or traits joined by `+` or `,` (`decompositions`, `falling`, `trend`,
    /// `heavy`, `interp`, `slow`).
    fn from_str(text: &str) -> Result<Family, String> {
        match text.trim() {
            "plain" => return Ok(Family::PLAIN),
            "all" => return Ok(Family::ALL),
            _ => {}
        }
        let mut f = Family::PLAIN;
        for word in text.split(['+', ',']).map(str::trim) {
            let flag = match word {
                "decompositions" => &mut f.decompositions,
                "falling" => &mut f.falling_speed,
                "trend" => &mut f.slowdown_trend,
                "heavy" => &mut f.heavy_steps,
                "interp" => &mut f.growing_interpolation,
                "slow" => &mut f.slow_runs,
                other => {
                    return Err(format!(
                        "unknown family trait {other:?}: use plain, all, or some of {} joined by +",
                        TRAITS.join(", ")
                    ))
                }
            };
            *flag = true;
        }
        Ok(f)
    }
}

/// What a family adds to one component's shape.
#[derive(Debug, Clone, Default)]
pub(super) struct Extra {
    /// `(first, end)`: from `first` up to `end` PEs the standalone speed stays at `first`'s.
    plateaus: Vec<(f64, f64)>,
    /// `(at, depth, width)`: the standalone speed drops by `depth` at `at` PEs, over a
    /// Gaussian of `width * at` PEs.
    dips: Vec<(f64, f64, f64)>,
    /// The slowdown's trend: it is multiplied by `(p / trend_centre)^trend`.
    trend: f64,
    trend_centre: f64,
}

impl Extra {
    /// The count whose speed `p` PEs go at: the plateau's start inside a plateau, else `p`.
    pub(super) fn plateau_start(&self, p: f64) -> f64 {
        self.plateaus
            .iter()
            .find(|&&(from, to)| from <= p && p < to)
            .map_or(p, |&(from, _)| from)
    }

    /// The share of the speed the dips leave at `p` PEs.
    pub(super) fn decomposition_factor(&self, p: f64) -> f64 {
        self.dips
            .iter()
            .map(|&(at, depth, width)| {
                let z = (p - at) / (width * at);
                1.0 - depth * (-0.5 * z * z).exp()
            })
            .product()
    }

    /// The slowdown's trend factor at `p` PEs (1 without one).
    pub(super) fn slowdown_trend(&self, p: f64) -> f64 {
        if self.trend == 0.0 {
            1.0
        } else {
            (p / self.trend_centre).powf(self.trend)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::SyntheticCase;
    use super::*;

    fn only(trait_name: &str) -> Family {
        trait_name.parse().unwrap()
    }

    #[test]
    fn the_plain_family_is_the_plain_generator() {
        for seed in 0..5 {
            let a = SyntheticCase::generate(seed, 3);
            let b = SyntheticCase::generate_family(seed, 3, Family::PLAIN);
            for (x, y) in a.components.iter().zip(&b.components) {
                assert_eq!(x.standalone, y.standalone);
                assert_eq!(x.coupled_truth, y.coupled_truth);
            }
            assert_eq!(a.base_settings(), b.base_settings());
        }
    }

    #[test]
    fn names_read_back() {
        for f in [
            Family::PLAIN,
            Family::ALL,
            only("falling+slow"),
            only("decompositions,trend"),
        ] {
            assert_eq!(f.to_string().parse::<Family>().unwrap(), f);
        }
        let e = "dips".parse::<Family>().unwrap_err();
        assert!(
            e.contains("\"dips\"") && e.contains("decompositions"),
            "{e}"
        );
    }

    /// Largest drop of the standalone truth from one grid point to a later one within 20 %
    /// more PEs, relative: a dip or a step down shows as a large one, a smooth rising curve as
    /// none.
    fn largest_local_drop(case: &SyntheticCase, k: usize) -> f64 {
        let pts = case.components[k].standalone_truth.points();
        let mut worst = 0.0f64;
        for (i, p) in pts.iter().enumerate() {
            for q in &pts[i + 1..] {
                if f64::from(q.nproc) > 1.2 * f64::from(p.nproc) {
                    break;
                }
                worst = worst.max(1.0 - q.sypd / p.sypd);
            }
        }
        worst
    }

    #[test]
    fn decompositions_put_dips_or_plateaus_into_the_standalone_curve() {
        let family = only("decompositions");
        let (mut dipped, mut flat) = (0, 0);
        for seed in 0..20 {
            let plain = SyntheticCase::generate(seed, 2);
            let case = SyntheticCase::generate_family(seed, 2, family);
            for k in 0..2 {
                dipped += usize::from(largest_local_drop(&case, k) > 0.08);
                assert!(largest_local_drop(&plain, k) < 0.08, "seed {seed}");
                // A plateau: two counts 5 % apart at the same speed, where the plain case rises.
                let pts = case.components[k].standalone_truth.points();
                flat += usize::from(pts.windows(2).any(|w| {
                    w[0].sypd == w[1].sypd
                        && plain.components[k].standalone_sypd(w[1].nproc)
                            > plain.components[k].standalone_sypd(w[0].nproc)
                }));
            }
        }
        assert!(dipped >= 25, "{dipped} of 40 components have a dip");
        assert!(flat >= 5, "{flat} of 40 components have a plateau");
    }

    #[test]
    fn falling_speed_peaks_inside_the_range_and_falls_after() {
        for seed in 0..20 {
            let case = SyntheticCase::generate_family(seed, 2, only("falling"));
            for c in &case.components {
                let pts = c.standalone_truth.points();
                let (peak, best) = pts
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.sypd.total_cmp(&b.1.sypd))
                    .unwrap();
                assert!(
                    peak > 0 && peak < pts.len() - 1,
                    "seed {seed}: peak at an end"
                );
                let end = pts.last().unwrap().sypd;
                assert!(
                    end < 0.95 * best.sypd,
                    "seed {seed}: {end} vs {}",
                    best.sypd
                );
            }
        }
    }

    #[test]
    fn a_slowdown_trend_moves_the_slowdown_between_the_ends_of_the_range() {
        let (mut moved, mut moved_plain) = (0, 0);
        for seed in 0..20 {
            for (family, count) in [
                (only("trend"), &mut moved),
                (Family::PLAIN, &mut moved_plain),
            ] {
                let case = SyntheticCase::generate_family(seed, 1, family);
                let c = &case.components[0];
                let (lo, hi) = (c.standalone.first_nproc(), c.standalone.last_nproc());
                *count += usize::from((c.slowdown(hi) / c.slowdown(lo)).ln().abs() > 0.15);
            }
        }
        assert!(moved >= moved_plain + 5, "{moved} vs plain {moved_plain}");
    }

    #[test]
    fn run_effects_reach_the_stand_in_settings() {
        let case = SyntheticCase::generate_family(4, 3, only("heavy+interp+slow"));
        let s = case.base_settings();
        assert_eq!(s.seed, Some(4));
        assert!(s.heavy_every.is_some_and(|h| (2..=6).contains(&h)));
        assert!(s.heavy_factor.is_some_and(|f| f >= 2.0));
        assert!(s.interp_s_per_pe.is_some_and(|i| i > 0.0));
        assert_eq!(s.slow_runs, Some(0.25));
        assert!(s.validate().is_ok());
        let bad = SimSettings {
            slow_runs: Some(1.5),
            ..s.clone()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("slow_runs"));
        // The quiet speed has no slow run in it; a quarter of measured runs are a third as fast.
        let nproc: Vec<u32> = case
            .components
            .iter()
            .map(|c| c.standalone.first_nproc() * 2)
            .collect();
        let quiet = case.noise_free_sypd(&s, &nproc).unwrap();
        let slow = (0..200)
            .filter(|&r| {
                let run = case.measured_run(&nproc, r).unwrap();
                run.coupled_sypd < 0.5 * quiet
            })
            .count();
        assert!((30..=70).contains(&slow), "{slow} of 200 runs slow");
        // Switching the run effects on leaves the shapes alone.
        let plain = SyntheticCase::generate(4, 3);
        assert_eq!(
            plain.components[1].coupled_truth,
            case.components[1].coupled_truth
        );
    }

    #[test]
    fn unseen_cases_have_two_to_four_components_and_varied_families() {
        let cases: Vec<SyntheticCase> = (100..160).map(SyntheticCase::unseen).collect();
        assert!(cases.iter().all(|c| (2..=4).contains(&c.components.len())));
        for n in 2..=4 {
            assert!(
                cases.iter().any(|c| c.components.len() == n),
                "no case with {n}"
            );
        }
        let families: std::collections::BTreeSet<String> =
            cases.iter().map(|c| c.family.to_string()).collect();
        assert!(families.len() >= 15, "{families:?}");
        assert!(cases.iter().all(|c| c.family != Family::PLAIN));
        // Reproducible from the seed.
        assert_eq!(
            SyntheticCase::unseen(123).components[0].coupled_truth,
            SyntheticCase::unseen(123).components[0].coupled_truth
        );
    }
}
