//! A component's domain decomposition, where the run says it (NEMO's `ocean.output`), as the
//! calibrated model uses it.
//!
//! NEMO splits its grid into `jpni x jpnj` rectangles and removes those that hold only land,
//! so it runs on fewer MPI processes than rectangles, and every process works on one
//! rectangle. What sets its step time is the largest rectangle, not the process count: two
//! neighbouring counts can split the grid very differently (one count leaves 20 land-only
//! rectangles out of 140, the next 8 out of 132), so the speed per process jumps between
//! them, up or down. A law in the process count alone takes those jumps as noise.
//!
//! The model therefore measures a decomposed component's parallel work in *effective
//! processes*: the grid's size over its largest rectangle's (with halos when the grid's size is
//! known, else `jpni * jpnj`, the number of rectangles land included). Where a run said the
//! decomposition at a count, the law is evaluated at that count's effective processes; at a
//! count no run reported, at the count times the median ratio of effective to real processes
//! of the reported ones, with the spread of that ratio added to the band.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::MeasuredRun;
use crate::timing::ecearth4::{self, NemoDecomposition};

/// One decomposition as a run reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decomposition {
    /// Rectangles along the first (west-east) axis.
    pub jpni: u32,
    /// Rectangles along the second (south-north) axis.
    pub jpnj: u32,
    /// Land-only rectangles removed (`jpni * jpnj` minus the processes that work).
    pub land_removed: u32,
    /// The global grid with halos (`jpiglo`, `jpjglo`), when the run printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global: Option<(u32, u32)>,
    /// Halo width (`nn_hls`), when known; 1 (NEMO's default) otherwise.
    #[serde(default = "default_halo")]
    pub halo: u32,
}

fn default_halo() -> u32 {
    1
}

impl Decomposition {
    /// The decomposition an `ocean.output` reports, once its split is known.
    pub fn from_ocean_output(d: &NemoDecomposition) -> Option<Decomposition> {
        let (jpni, jpnj) = (d.jpni.filter(|&n| n > 0)?, d.jpnj.filter(|&n| n > 0)?);
        Some(Decomposition {
            jpni,
            jpnj,
            land_removed: d.land_subdomains_removed()?,
            global: d.global.filter(|&(i, j)| i > 0 && j > 0),
            halo: d.halo.unwrap_or(1),
        })
    }

    /// Effective processes: how many of its largest rectangle the grid holds (see the module
    /// doc). Larger is faster.
    pub fn effective_nproc(&self) -> f64 {
        let (ni, nj) = (self.jpni.max(1), self.jpnj.max(1));
        match self.global {
            Some((gi, gj)) if gi > 2 * self.halo && gj > 2 * self.halo => {
                let halo = f64::from(self.halo);
                let side = |g: u32, n: u32| {
                    (f64::from(g - 2 * self.halo) / f64::from(n)).ceil() + 2.0 * halo
                };
                let largest = side(gi, ni) * side(gj, nj);
                f64::from(gi) * f64::from(gj) / largest
            }
            _ => f64::from(ni) * f64::from(nj),
        }
    }

    /// Processes that work: rectangles minus the land-only ones removed.
    pub fn processes(&self) -> u32 {
        (self.jpni * self.jpnj).saturating_sub(self.land_removed)
    }
}

/// The decompositions the runs reported, per component (model name) and process count. A
/// decomposition is a property of the count (NEMO chooses it from the count and the grid), so
/// one per count is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layouts {
    /// By component, by process count.
    #[serde(with = "count_keys")]
    pub components: BTreeMap<String, BTreeMap<u32, Decomposition>>,
}

/// The process counts as the JSON object keys they are written as (`"15"`), read back whatever
/// reads them: a model file read through a buffered (flattened or untagged) value hands map keys
/// over as text, which a plain `u32` key refuses.
mod count_keys {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Decomposition;

    type ByCount = BTreeMap<String, BTreeMap<u32, Decomposition>>;

    pub fn serialize<S: Serializer>(m: &ByCount, s: S) -> Result<S::Ok, S::Error> {
        let text: BTreeMap<&String, BTreeMap<String, &Decomposition>> = m
            .iter()
            .map(|(name, by)| (name, by.iter().map(|(n, d)| (n.to_string(), d)).collect()))
            .collect();
        text.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ByCount, D::Error> {
        let text = BTreeMap::<String, BTreeMap<String, Decomposition>>::deserialize(d)?;
        text.into_iter()
            .map(|(name, by)| {
                let by = by
                    .into_iter()
                    .map(|(n, d)| match n.parse::<u32>() {
                        Ok(count) => Ok((count, d)),
                        Err(_) => Err(serde::de::Error::custom(format!(
                            "decomposition of {name} at {n:?} processes: not a whole number"
                        ))),
                    })
                    .collect::<Result<_, _>>()?;
                Ok((name, by))
            })
            .collect()
    }
}

impl Layouts {
    /// Whether no run reported a decomposition.
    pub fn is_empty(&self) -> bool {
        self.components.values().all(BTreeMap::is_empty)
    }

    /// Records component `name`'s decomposition at `nproc` processes (the first one kept).
    pub fn insert(&mut self, name: &str, nproc: u32, d: Decomposition) {
        self.components
            .entry(name.to_string())
            .or_default()
            .entry(nproc)
            .or_insert(d);
    }

    /// Whether component `name` has any reported decomposition.
    pub fn knows(&self, name: &str) -> bool {
        self.components.get(name).is_some_and(|m| !m.is_empty())
    }

    /// The ln of effective over real processes at every reported count of `name`.
    fn log_ratios(&self, name: &str) -> Vec<f64> {
        self.components
            .get(name)
            .map(|m| {
                m.iter()
                    .map(|(&p, d)| (d.effective_nproc() / f64::from(p.max(1))).ln())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Component `name`'s effective processes at `nproc`, with the variance of its ln (0 where
    /// a run reported the decomposition; the spread of the reported ratios elsewhere). A
    /// component without any reported decomposition: `nproc` itself, variance 0.
    pub fn effective(&self, name: &str, nproc: u32) -> (f64, f64) {
        let p = f64::from(nproc.max(1));
        let Some(known) = self.components.get(name).filter(|m| !m.is_empty()) else {
            return (p, 0.0);
        };
        if let Some(d) = known.get(&nproc) {
            return (d.effective_nproc(), 0.0);
        }
        let mut r = self.log_ratios(name);
        r.sort_by(f64::total_cmp);
        let mid = super::check::median_sorted(&r);
        let var = if r.len() > 1 {
            r.iter().map(|x| (x - mid).powi(2)).sum::<f64>() / (r.len() - 1) as f64
        } else {
            // One reported count says nothing of the spread: a typical land-removal spread.
            UNREPORTED_SD * UNREPORTED_SD
        };
        (p * mid.exp(), var)
    }
}

/// The decompositions `runs` report: for each run whose path is an EC-Earth4 run directory
/// with an `ocean.output` that gives the split, the component that ran on as many processes
/// as NEMO did (`jpnij`; a component named like NEMO when two did). Runs without one, and
/// unreadable files, add nothing: the model then counts processes as they are.
pub fn layouts_of(runs: &[MeasuredRun]) -> Layouts {
    let mut layouts = Layouts::default();
    for run in runs {
        let Some(path) = ecearth4::ocean_output(std::path::Path::new(&run.path)) else {
            continue;
        };
        let Ok(read) = ecearth4::read_ocean_output(&path) else {
            continue;
        };
        let (Some(d), Some(jpnij)) = (Decomposition::from_ocean_output(&read), read.jpnij) else {
            continue;
        };
        let same: Vec<_> = run.components.iter().filter(|c| c.nproc == jpnij).collect();
        let nemo = match same.as_slice() {
            [one] => Some(*one),
            many => many.iter().copied().find(|c| {
                let n = c.name.to_ascii_lowercase();
                n.contains("nemo") || n.starts_with("ocean")
            }),
        };
        if let Some(c) = nemo {
            layouts.insert(&c.name, c.nproc, d);
        }
    }
    layouts
}

/// Spread (ln units) of effective over real processes assumed where only one count was
/// reported: land removal changes the work per process by about this much between counts.
pub const UNREPORTED_SD: f64 = 0.06;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_processes_follow_the_largest_rectangle() {
        let d = Decomposition {
            jpni: 12,
            jpnj: 10,
            land_removed: 16,
            global: None,
            halo: 1,
        };
        assert_eq!(d.processes(), 104);
        assert_eq!(d.effective_nproc(), 120.0);
        // 360 x 331 inner points, halo 1: rectangles of 30+2 by 34+2.
        let g = Decomposition {
            global: Some((362, 333)),
            ..d
        };
        assert!((g.effective_nproc() - 362.0 * 333.0 / (32.0 * 36.0)).abs() < 1e-9);
        let mut l = Layouts::default();
        l.insert("nemo", 104, d);
        l.insert(
            "nemo",
            200,
            Decomposition {
                jpni: 16,
                jpnj: 16,
                land_removed: 56,
                global: None,
                halo: 1,
            },
        );
        assert_eq!(l.effective("nemo", 104), (120.0, 0.0));
        let (e, v) = l.effective("nemo", 150);
        assert!(e > 150.0 && v > 0.0, "{e} {v}");
        assert_eq!(l.effective("oifs", 150), (150.0, 0.0));
    }
}
