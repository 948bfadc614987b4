//! EC-Earth4-like sets of measured coupled runs, to judge the calibrated model without curves on
//! shapes it was not designed on.
//!
//! A set is what a user's sweep on a new machine gives: 20-32 runs of OpenIFS and NEMO on 1-4
//! nodes of 128 cores (one XIOS rank a node and the runoff mapper take the rest), OpenIFS on
//! 28-336 ranks, NEMO on 41-387, some configurations run twice. What decides the speeds is
//! drawn per set from a *family* (a machine's shape and a way of choosing NEMO's counts),
//! with a seed:
//! - each component's wall days per simulated year `serial + parallel / p + growth * p`, the
//!   family's shape jittered by the seed, and a slowdown as a run spans more nodes;
//! - NEMO's parallel work is its largest subdomain: a land mask drawn from the seed on a
//!   360 x 331 grid (eORCA1's inner size), split as NEMO does (the `jpni x jpnj` with the
//!   smallest largest rectangle among those with at most as many ocean rectangles as
//!   processes, land-only rectangles removed), so the work per process jumps between
//!   neighbouring counts. A family either picks NEMO's counts from the counts NEMO lists as
//!   good (`ln_listonly`) or takes any count (NEMO then keeps useless land rectangles);
//! - the coupled run goes at the slowest component slowed by step irregularity (the balance
//!   slowdown of [`crate::model::overhead`]) and a coupling factor;
//! - run-to-run noise for the whole run and per component, and now and then a slow run (a
//!   bad node: 8-20 % slower, as a repeated real EC-Earth4 layout gave 28.9 and 23.1 SYPD).
//!
//! Each run's NEMO decomposition is reported as `ocean.output` would ([`RunSet::layouts`]),
//! so a model can be judged with and without it.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::model::decomposition::{Decomposition, Layouts};
use crate::model::{MeasuredComponent, MeasuredRun};

/// Cores per node of the machines the sets are measured on.
pub const CORES_PER_NODE: u32 = 128;
/// eORCA1's inner grid (NEMO's `Ni0glo x Nj0glo`).
pub const GRID: (u32, u32) = (360, 331);
/// Simulated seconds of every run: one month, EC-Earth4's usual leg.
pub const LEG_S: f64 = 31.0 * 86_400.0;
/// NEMO's halo width.
const HALO: u32 = 1;
/// OpenIFS's and NEMO's process ranges in the sets.
pub const OIFS_RANGE: (u32, u32) = (28, 336);
/// NEMO's process range.
pub const NEMO_RANGE: (u32, u32) = (41, 387);

/// A family of run sets: a machine's shape and how NEMO's counts are chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Its name in tables.
    pub name: &'static str,
    /// OpenIFS's days per simulated year: serial, parallel (times ranks), growth (per rank).
    pub oifs: [f64; 3],
    /// NEMO's, the parallel part over effective processes (see the module doc).
    pub nemo: [f64; 3],
    /// NEMO's north-fold exchange: days per simulated year per subdomain column (`jpni`),
    /// which changes irregularly between neighbouring counts.
    pub fold: f64,
    /// Relative slowdown per extra node a run spans (inter-node communication).
    pub per_node: f64,
    /// Step irregularity (the balance slowdown's sigma).
    pub irregularity: f64,
    /// The coupled run's speed over its slowest component's, without the balance slowdown.
    pub coupling: f64,
    /// Run-to-run noise (sd of ln speed) of the whole run; each component adds half as much.
    pub noise_sd: f64,
    /// Probability that a run is a slow one (8-20 % slower).
    pub slow_run: f64,
    /// Whether NEMO's counts come from its list of good counts.
    pub listed_counts: bool,
    /// Seconds of start-up and wind-down per run, in the coupled run's elapsed time but not in
    /// the components' computing time (OASIS's window leaves them out).
    pub startup_s: f64,
}

/// The families the check draws from: six machine shapes.
pub fn families() -> Vec<Family> {
    vec![
        Family {
            name: "hpc2020-like",
            oifs: [0.006, 5.5, 2e-5],
            nemo: [0.008, 7.0, 1e-5],
            fold: 1e-4,
            per_node: 0.02,
            irregularity: 0.05,
            coupling: 0.96,
            noise_sd: 0.03,
            slow_run: 0.04,
            listed_counts: true,
            startup_s: 60.0,
        },
        Family {
            name: "comm-bound",
            oifs: [0.004, 5.0, 8e-5],
            nemo: [0.006, 6.0, 6e-5],
            fold: 2e-4,
            per_node: 0.05,
            irregularity: 0.08,
            coupling: 0.94,
            noise_sd: 0.03,
            slow_run: 0.04,
            listed_counts: false,
            startup_s: 40.0,
        },
        Family {
            name: "serial-heavy",
            oifs: [0.018, 5.0, 0.0],
            nemo: [0.014, 6.5, 0.0],
            fold: 0.0,
            per_node: 0.0,
            irregularity: 0.04,
            coupling: 0.97,
            noise_sd: 0.02,
            slow_run: 0.0,
            listed_counts: true,
            startup_s: 90.0,
        },
        Family {
            name: "noisy",
            oifs: [0.006, 6.0, 3e-5],
            nemo: [0.008, 7.5, 2e-5],
            fold: 3e-4,
            per_node: 0.03,
            irregularity: 0.1,
            coupling: 0.95,
            noise_sd: 0.05,
            slow_run: 0.08,
            listed_counts: false,
            startup_s: 60.0,
        },
        Family {
            name: "near-ideal",
            oifs: [0.002, 5.5, 0.0],
            nemo: [0.003, 7.0, 5e-6],
            fold: 0.0,
            per_node: 0.01,
            irregularity: 0.03,
            coupling: 0.98,
            noise_sd: 0.02,
            slow_run: 0.02,
            listed_counts: false,
            startup_s: 20.0,
        },
        Family {
            name: "jumpy",
            oifs: [0.005, 5.5, 4e-5],
            nemo: [0.006, 7.0, 3e-5],
            fold: 6e-4,
            per_node: 0.08,
            irregularity: 0.12,
            coupling: 0.93,
            noise_sd: 0.05,
            slow_run: 0.1,
            listed_counts: false,
            startup_s: 120.0,
        },
    ]
}

/// One generated set.
#[derive(Debug, Clone)]
pub struct RunSet {
    /// The family it was drawn from.
    pub family: &'static str,
    /// The seed it was drawn with (printed, so that a set can be drawn again).
    pub seed: u64,
    /// The runs (components `oifs` and `nemo`).
    pub runs: Vec<MeasuredRun>,
    /// NEMO's decomposition at each of its counts, as `ocean.output` reports it.
    pub layouts: Layouts,
}

/// A land mask and NEMO's decompositions of it.
pub struct Ocean {
    width: usize,
    height: usize,
    /// Summed-area table of ocean points, `(width + 1) x (height + 1)`.
    ocean_sum: Vec<u32>,
}

impl Ocean {
    /// A land mask drawn from `rng`: Antarctica along the south edge, a few continents as
    /// ellipses, about a third of the points land.
    pub fn draw(rng: &mut StdRng) -> Ocean {
        let (w, h) = (GRID.0 as usize, GRID.1 as usize);
        let mut land = vec![false; w * h];
        let antarctica = rng.random_range(25..45);
        let continents: Vec<(f64, f64, f64, f64)> = (0..rng.random_range(5..9))
            .map(|_| {
                (
                    rng.random_range(0.0..w as f64),
                    rng.random_range(antarctica as f64..h as f64),
                    rng.random_range(15.0..60.0),
                    rng.random_range(20.0..70.0),
                )
            })
            .collect();
        for j in 0..h {
            for i in 0..w {
                let wobble = 6.0 * ((i as f64) / 17.0).sin();
                let mut is_land = (j as f64) < antarctica as f64 + wobble;
                for &(cx, cy, rx, ry) in &continents {
                    let dx = (i as f64 - cx).abs().min(w as f64 - (i as f64 - cx).abs());
                    let dy = j as f64 - cy;
                    if (dx / rx).powi(2) + (dy / ry).powi(2) < 1.0 {
                        is_land = true;
                    }
                }
                land[j * w + i] = is_land;
            }
        }
        let mut ocean_sum = vec![0u32; (w + 1) * (h + 1)];
        for j in 0..h {
            for i in 0..w {
                ocean_sum[(j + 1) * (w + 1) + i + 1] = u32::from(!land[j * w + i])
                    + ocean_sum[j * (w + 1) + i + 1]
                    + ocean_sum[(j + 1) * (w + 1) + i]
                    - ocean_sum[j * (w + 1) + i];
            }
        }
        Ocean {
            width: w,
            height: h,
            ocean_sum,
        }
    }

    fn ocean_in(&self, i0: usize, i1: usize, j0: usize, j1: usize) -> u32 {
        let s = |i: usize, j: usize| self.ocean_sum[j * (self.width + 1) + i];
        s(i1, j1) + s(i0, j0) - s(i0, j1) - s(i1, j0)
    }

    /// Rectangles of `ni x nj` holding some ocean.
    fn ocean_rectangles(&self, ni: usize, nj: usize) -> u32 {
        let cut = |n: usize, k: usize, len: usize| len * k / n;
        let mut count = 0;
        for b in 0..nj {
            for a in 0..ni {
                let (i0, i1) = (cut(ni, a, self.width), cut(ni, a + 1, self.width));
                let (j0, j1) = (cut(nj, b, self.height), cut(nj, b + 1, self.height));
                if self.ocean_in(i0, i1, j0, j1) > 0 {
                    count += 1;
                }
            }
        }
        count
    }

    /// Every split NEMO could use for up to `most` processes: `(jpni, jpnj, ocean
    /// rectangles, largest rectangle with halos)`.
    fn splits(&self, most: u32) -> Vec<(u32, u32, u32, u32)> {
        let mut out = Vec::new();
        let limit = (2 * most as usize).max(4);
        for ni in 1..=limit.min(self.width / 3) {
            for nj in 1..=limit.min(self.height / 3) {
                if ni * nj > limit {
                    continue;
                }
                let side = |g: u32, n: usize| g.div_ceil(n as u32) + 2 * HALO;
                out.push((
                    ni as u32,
                    nj as u32,
                    self.ocean_rectangles(ni, nj),
                    side(GRID.0, ni) * side(GRID.1, nj),
                ));
            }
        }
        out
    }
}

/// NEMO's choice for `nproc` processes among `splits`: the smallest largest rectangle among
/// splits with at most `nproc` ocean rectangles (fewer rectangles on a tie).
fn best_split(splits: &[(u32, u32, u32, u32)], nproc: u32) -> Option<(u32, u32, u32, u32)> {
    splits
        .iter()
        .copied()
        .filter(|s| s.2 <= nproc)
        .min_by_key(|s| (s.3, s.0 * s.1))
}

/// The counts NEMO lists as good: those whose best split has a smaller largest rectangle than
/// every smaller count's.
fn good_counts(splits: &[(u32, u32, u32, u32)]) -> Vec<u32> {
    let mut counts: Vec<(u32, u32)> = splits.iter().map(|s| (s.2, s.3)).collect();
    counts.sort_unstable();
    let mut out = Vec::new();
    let mut best = u32::MAX;
    for (n, size) in counts {
        if size < best {
            best = size;
            if out.last() != Some(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// NEMO's split of the stand-in model's ocean (a fixed land mask on eORCA1's grid) for one
/// process count, as the stand-in's EC-Earth4 run directories report it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandinSplit {
    /// Rectangles along the first axis.
    pub jpni: u32,
    /// Rectangles along the second axis.
    pub jpnj: u32,
    /// Rectangles holding ocean (at most the processes; the others are removed).
    pub ocean: u32,
    /// The processes NEMO runs on.
    pub nproc: u32,
    /// NEMO's speed at this split over its speed at a typical one: the work of a typical
    /// good count's largest rectangle per process over this split's.
    pub speed_factor: f64,
}

/// Seed of the stand-in model's land mask.
const STANDIN_OCEAN_SEED: u64 = 0x0ce4_0ca1;

/// The stand-in's split for NEMO on `nproc` processes (see [`StandinSplit`]); `None` beyond
/// what the grid can split.
pub fn standin_split(nproc: u32) -> Option<StandinSplit> {
    static OCEAN: std::sync::OnceLock<Ocean> = std::sync::OnceLock::new();
    let ocean = OCEAN.get_or_init(|| Ocean::draw(&mut StdRng::seed_from_u64(STANDIN_OCEAN_SEED)));
    let splits = ocean.splits(nproc.max(NEMO_RANGE.1));
    let (ni, nj, count, largest) = best_split(&splits, nproc)?;
    // Processes times the largest rectangle: the grid for a perfect split, more for a
    // wasteful one; relative to the median over the good counts.
    let cost = |p: u32, largest: u32| f64::from(p) * f64::from(largest);
    let mut typical: Vec<f64> = good_counts(&splits)
        .into_iter()
        .filter_map(|p| best_split(&splits, p).map(|s| cost(p, s.3)))
        .collect();
    typical.sort_by(f64::total_cmp);
    let reference = crate::model::check::median_sorted(&typical);
    Some(StandinSplit {
        jpni: ni,
        jpnj: nj,
        ocean: count,
        nproc,
        speed_factor: reference / cost(nproc, largest),
    })
}

/// Multiplies each of `shape`'s terms by a factor drawn in `[0.75, 1.33]`.
fn jitter(shape: [f64; 3], rng: &mut StdRng) -> [f64; 3] {
    shape.map(|v| v * rng.random_range(-0.29f64..0.29).exp())
}

fn normal(rng: &mut StdRng) -> f64 {
    let (u1, u2): (f64, f64) = (rng.random_range(1e-12..1.0), rng.random_range(0.0..1.0));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Draws a set of `family` with `seed`.
pub fn generate(family: &Family, seed: u64) -> RunSet {
    let mut rng = StdRng::seed_from_u64(seed);
    let ocean = Ocean::draw(&mut rng);
    let splits = ocean.splits(NEMO_RANGE.1);
    let listed: Vec<u32> = good_counts(&splits)
        .into_iter()
        .filter(|n| (NEMO_RANGE.0..=NEMO_RANGE.1).contains(n))
        .collect();
    let oifs = jitter(family.oifs, &mut rng);
    let nemo = jitter(family.nemo, &mut rng);
    let total_cells = f64::from(GRID.0 + 2 * HALO) * f64::from(GRID.1 + 2 * HALO);
    let runs_wanted = rng.random_range(20..=32);
    let mut configs: Vec<(u32, u32, u32)> = Vec::new();
    let mut runs = Vec::new();
    let mut layouts = Layouts::default();
    while runs.len() < runs_wanted {
        let (nodes, p_o, p_n) = match configs.len() {
            n if n > 3 && rng.random_bool(0.15) => configs[rng.random_range(0..n)],
            _ => {
                let nodes = rng.random_range(1..=4u32);
                // One XIOS rank a node and the runoff mapper.
                let free = nodes * CORES_PER_NODE - nodes - 1;
                let share = rng.random_range(0.15..0.85);
                let want = (f64::from(free) * share) as u32;
                let want = want.clamp(NEMO_RANGE.0, NEMO_RANGE.1.min(free - OIFS_RANGE.0));
                let p_n = if family.listed_counts {
                    match listed.iter().rev().find(|&&n| n <= want) {
                        Some(&n) => n,
                        None => continue,
                    }
                } else {
                    want
                };
                let p_o = (free - p_n).min(OIFS_RANGE.1);
                if p_o < OIFS_RANGE.0 {
                    continue;
                }
                (nodes, p_o, p_n)
            }
        };
        let Some((ni, nj, _, largest)) = best_split(&splits, p_n) else {
            continue;
        };
        configs.push((nodes, p_o, p_n));
        layouts.insert(
            "nemo",
            p_n,
            Decomposition {
                jpni: ni,
                jpnj: nj,
                land_removed: (ni * nj).saturating_sub(p_n),
                global: Some((GRID.0 + 2 * HALO, GRID.1 + 2 * HALO)),
                halo: HALO,
            },
        );
        let spread = 1.0 + family.per_node * f64::from(nodes - 1);
        let days_o = spread * (oifs[0] + oifs[1] / f64::from(p_o) + oifs[2] * f64::from(p_o));
        let days_n = spread
            * (nemo[0]
                + nemo[1] * f64::from(largest) / total_cells
                + nemo[2] * f64::from(p_n)
                + family.fold * f64::from(ni));
        let mut whole = (family.noise_sd * normal(&mut rng)).exp();
        if rng.random_bool(family.slow_run) {
            whole *= rng.random_range(1.08..1.2);
        }
        let t_o = days_o * whole * (0.5 * family.noise_sd * normal(&mut rng)).exp();
        let t_n = days_n * whole * (0.5 * family.noise_sd * normal(&mut rng)).exp();
        let speeds = [1.0 / t_o, 1.0 / t_n];
        let window = family.coupling * speeds[0].min(speeds[1])
            / crate::model::overhead::slowdown(&speeds, family.irregularity);
        // Legs of a month: the start-up's share grows with the speed.
        let coupled = crate::model::run_length::lengthen(
            window,
            crate::model::run_length::penalty(family.startup_s, Some(LEG_S)),
        );
        let component =
            |name: &str, nproc: u32, sypd: f64| MeasuredComponent::from_speed(name, nproc, sypd);
        runs.push(MeasuredRun {
            path: format!("{}n_{p_o}oifs_{p_n}nemo_r{}", nodes, runs.len() + 1),
            components: vec![
                component("oifs", p_o, speeds[0]),
                component("nemo", p_n, speeds[1]),
            ],
            coupled_sypd: coupled,
            simulated_s: Some(LEG_S),
        });
    }
    RunSet {
        family: family.name,
        seed,
        runs,
        layouts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_look_like_ecearth4_sweeps() {
        for f in families() {
            let set = generate(&f, 7);
            assert!((20..=32).contains(&set.runs.len()));
            for r in &set.runs {
                let (o, n) = (r.nproc("oifs").unwrap(), r.nproc("nemo").unwrap());
                assert!((OIFS_RANGE.0..=OIFS_RANGE.1).contains(&o), "{o}");
                assert!((NEMO_RANGE.0..=NEMO_RANGE.1).contains(&n), "{n}");
                assert!(o + n < 4 * CORES_PER_NODE);
                assert!(
                    (2.0..40.0).contains(&r.coupled_sypd),
                    "{} {}",
                    f.name,
                    r.coupled_sypd
                );
            }
            assert!(!set.layouts.is_empty());
            // The same seed draws the same set.
            assert_eq!(generate(&f, 7).runs, set.runs);
        }
    }

    #[test]
    fn nemos_work_per_process_jumps_between_neighbouring_counts() {
        let mut rng = StdRng::seed_from_u64(3);
        let splits = Ocean::draw(&mut rng).splits(NEMO_RANGE.1);
        // Work per process times processes: constant for an ideal split, not here.
        let efficiency: Vec<f64> = (100..140)
            .filter_map(|p| best_split(&splits, p).map(|s| f64::from(s.3) * f64::from(p)))
            .collect();
        let (lo, hi) = efficiency
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &e| (a.min(e), b.max(e)));
        assert!(hi / lo > 1.05, "{lo} {hi}");
        assert!(good_counts(&splits).len() > 20);
    }
}
