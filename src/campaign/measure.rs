//! From a run's timing output to the few numbers the campaign keeps ([`RunMetrics`]).
//!
//! The metrics are computed over the balanced components only, with the campaign's own PE
//! counts: CHSY counts the balanced PEs plus `extra_pes` (as the prediction does), and coupling
//! costs use the balanced components' core time, so components the timing output shows but
//! the campaign does not balance (e.g. the runoff mapper, whose PE count LUCIA does not tell)
//! never make a run unmeasurable.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::metrics;
use crate::timing::{self, Measurement, ReadOptions, Reading};

/// What one run measured, reduced to what the algorithm and the status need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    /// Coupled SYPD.
    pub sypd: f64,
    /// Core-hours per simulated year of the run, extra PEs included (CPU core equivalents with
    /// resources).
    pub chsy: f64,
    /// Coupling cost: the share of the balanced components' core time that no component spent
    /// computing, a fraction (the guide's `method/prediction.md`, *Metrics*).
    pub coupling_cost: f64,
    /// Per balanced component, in component order.
    pub partial_coupling_cost: Vec<f64>,
}

/// Why a run's timing output gives no measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmeasured {
    /// Not all written yet (a run still going); for a run that has ended, a failure.
    Incomplete(String),
    /// Unreadable, partial, or missing what the campaign needs.
    Unreadable(String),
}

impl std::fmt::Display for Unmeasured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmeasured::Incomplete(r) => write!(f, "unreadable timing output: incomplete: {r}"),
            Unmeasured::Unreadable(r) => write!(f, "unreadable timing output: {r}"),
        }
    }
}

/// Anything that knows a balanced component's name in the timing output: the campaign's
/// components, or the timing names themselves.
pub trait TimingName {
    /// The component's name in the timing output (e.g. `ATMIFS`, `oceanx`).
    fn timing_name(&self) -> &str;

    /// OpenMP threads per MPI rank (1 for pure MPI). The campaign counts a component's cores;
    /// timing output counts its MPI processes (LUCIA writes a file per sampled rank, OASIS
    /// counts ranks), so the run's cores are divided by this before they are checked against it.
    fn threads(&self) -> u32 {
        1
    }
}

/// A timing name with the component's threads per rank, where no campaign component is at hand
/// (a status read back from JSON).
impl TimingName for (String, u32) {
    fn timing_name(&self) -> &str {
        &self.0
    }

    fn threads(&self) -> u32 {
        self.1
    }
}

/// The MPI processes of a component run on `cores` cores, as timing output counts them.
fn processes<C: TimingName>(component: &C, cores: u32) -> u32 {
    cores / component.threads().max(1)
}

impl TimingName for String {
    fn timing_name(&self) -> &str {
        self
    }
}

/// Reads the timing output at `path` and reduces it. `Err` says why the run cannot count as
/// measured (the caller records the run as failed, or refuses a `record`).
pub fn measure<C: TimingName>(
    path: &Path,
    components: &[C],
    nproc: &[u32],
    extra_pes: u32,
    period_s: Option<f64>,
) -> Result<RunMetrics, Unmeasured> {
    measure_billed(path, components, nproc, extra_pes, period_s, None)
}

/// [`measure`] with the campaign's cost model: with `[[resource]]` tables each unit's core time
/// counts at its `unit_cost` (CPU core-hour equivalents) in CHSY and in the (partial) coupling
/// costs, so a waiting GPU weighs what it costs, not what one core would.
pub fn measure_billed<C: TimingName>(
    path: &Path,
    components: &[C],
    nproc: &[u32],
    extra_pes: u32,
    period_s: Option<f64>,
    cost_model: Option<&crate::machine::CostModel>,
) -> Result<RunMetrics, Unmeasured> {
    let opts = ReadOptions {
        period_s,
        nproc: processes_by_timing_name(components, nproc),
        ..ReadOptions::default()
    };
    let m = read_whole(path, &opts)?;
    reduce_billed(&m, components, nproc, extra_pes, cost_model).map_err(Unmeasured::Unreadable)
}

/// Each component's MPI processes by its timing name, as the readers check them.
pub(crate) fn processes_by_timing_name<C: TimingName>(
    components: &[C],
    nproc: &[u32],
) -> BTreeMap<String, u32> {
    components
        .iter()
        .zip(nproc)
        .map(|(c, &p)| (c.timing_name().to_string(), processes(c, p)))
        .collect()
}

/// Reads the timing output at `path` whole: output not all written yet is incomplete, and a
/// partial reading (a file cut short) is refused, never measured as if it were whole.
pub(crate) fn read_whole(path: &Path, opts: &ReadOptions) -> Result<Measurement, Unmeasured> {
    let reading = timing::read(path, opts).map_err(|e| Unmeasured::Unreadable(e.to_string()))?;
    let m = match reading {
        Reading::Measured(m) => m,
        Reading::Incomplete { reason } => return Err(Unmeasured::Incomplete(reason)),
    };
    match &m.partial {
        Some(reason) => Err(Unmeasured::Unreadable(format!("partial: {reason}"))),
        None => Ok(m),
    }
}

/// Measures a standalone run of component `index` (a scaling campaign): its speed from the
/// timing output holding that one component (`timing = "output"`), or from the run's wall time
/// and `simulated_days` (`timing = "wall"`, see [`crate::executor::wall_seconds`]). CHSY counts
/// its PEs; a standalone run has no coupling, so its coupling costs are 0.
pub fn measure_standalone<C: TimingName>(
    path: &Path,
    component: &C,
    index: usize,
    nproc: &[u32],
    scaling: &crate::config::ScalingSettings,
    period_s: Option<f64>,
) -> Result<RunMetrics, Unmeasured> {
    let p = nproc[index];
    let ranks = processes(component, p);
    let name = component.timing_name();
    let sypd = match scaling.timing {
        crate::config::ScalingTiming::Output => {
            let opts = ReadOptions {
                period_s,
                nproc: BTreeMap::from([(name.to_string(), ranks)]),
                ..ReadOptions::default()
            };
            let m = read_whole(path, &opts)?;
            let t = m.component(name).ok_or_else(|| {
                let found: Vec<&str> = m.components.iter().map(|c| c.name.as_str()).collect();
                Unmeasured::Unreadable(format!(
                    "no component {name:?}; it has {}",
                    found.join(", ")
                ))
            })?;
            if let Some(measured) = t.nproc.filter(|&n| n != ranks) {
                return Err(Unmeasured::Unreadable(format!(
                    "{name} ran on {measured} PEs by the timing output, but the run has {ranks}; this output belongs to another run"
                )));
            }
            m.coupled_sypd()
                .ok_or_else(|| Unmeasured::Unreadable(no_sypd(&m)))?
        }
        crate::config::ScalingTiming::Wall => {
            let wall = crate::executor::wall_seconds(path).map_err(Unmeasured::Unreadable)?;
            let years = scaling.simulated_years().ok_or_else(|| {
                Unmeasured::Unreadable("timing = \"wall\" needs simulated_days".into())
            })?;
            years / (wall / metrics::SECONDS_PER_DAY)
        }
    };
    if !(sypd.is_finite() && sypd > 0.0) {
        return Err(Unmeasured::Unreadable(format!(
            "SYPD {sypd} is not a positive number"
        )));
    }
    Ok(RunMetrics {
        sypd,
        chsy: metrics::chsy(f64::from(p), sypd),
        coupling_cost: 0.0,
        partial_coupling_cost: vec![0.0; nproc.len()],
    })
}

/// Why a measurement gives no coupled SYPD, with the campaign file's fix when the coupling
/// period is what is missing.
fn no_sypd(m: &Measurement) -> String {
    let why = m
        .why_no_coupled_sypd()
        .unwrap_or_else(|| "no coupled SYPD".into());
    if m.sim_s.is_none() {
        format!("no coupled SYPD: {why}; set `period_s` (the coupling period in simulated seconds, e.g. period_s = 2700) at the top of the campaign file")
    } else {
        format!("no coupled SYPD: {why}")
    }
}

/// The campaign's metrics of one measurement (see the module doc).
pub fn reduce<C: TimingName>(
    m: &Measurement,
    components: &[C],
    nproc: &[u32],
    extra_pes: u32,
) -> Result<RunMetrics, String> {
    reduce_billed(m, components, nproc, extra_pes, None)
}

/// [`reduce`] weighing each component's units by its resource's `unit_cost` (see
/// [`measure_billed`]); the plain model (or `None`) weighs every PE 1.
pub fn reduce_billed<C: TimingName>(
    m: &Measurement,
    components: &[C],
    nproc: &[u32],
    extra_pes: u32,
    cost_model: Option<&crate::machine::CostModel>,
) -> Result<RunMetrics, String> {
    let unit = |c: usize| cost_model.map_or(1.0, |model| model.unit_cost_of(c));
    let sypd = m.coupled_sypd().ok_or_else(|| no_sypd(m))?;
    let wall = m
        .wall_s
        .filter(|w| w.is_finite() && *w > 0.0)
        .ok_or("no coupled wall time")?;
    let balanced: f64 = nproc
        .iter()
        .enumerate()
        .map(|(c, &p)| unit(c) * f64::from(p))
        .sum();
    let mut parts = Vec::new();
    let mut partial = Vec::new();
    for (k, (c, &p)) in components.iter().zip(nproc).enumerate() {
        let weighted = unit(k) * f64::from(p);
        let t = m.component(c.timing_name()).ok_or_else(|| {
            let found: Vec<&str> = m.components.iter().map(|c| c.name.as_str()).collect();
            format!(
                "no component {:?}; it has {}",
                c.timing_name(),
                found.join(", ")
            )
        })?;
        // The readers refuse a file whose PEs are not the run's; a measurement made elsewhere
        // (or by a reader that cannot tell) is checked here too, so no path records another
        // run's output.
        let ranks = processes(c, p);
        if let Some(measured) = t.nproc.filter(|&n| n != ranks) {
            return Err(format!(
                "{} ran on {measured} PEs by the timing output, but the run has {ranks}; this \
                 output belongs to another run",
                c.timing_name()
            ));
        }
        parts.push((t.compute_s, weighted));
        let coupling_s = t.coupling_s().unwrap_or(wall - t.compute_s);
        partial.push(metrics::partial_coupling_cost(
            coupling_s, weighted, wall, balanced,
        ));
    }
    let coupling_cost = metrics::coupling_cost(wall, balanced, &parts);
    let used = match cost_model {
        Some(model) => model.used_weight(nproc, extra_pes),
        None => balanced + f64::from(extra_pes),
    };
    let chsy = metrics::chsy(used, sypd);
    if !(coupling_cost.is_finite() && chsy.is_finite() && partial.iter().all(|v| v.is_finite())) {
        return Err("metrics are not finite numbers".into());
    }
    Ok(RunMetrics {
        sypd,
        chsy,
        coupling_cost,
        partial_coupling_cost: partial,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{ComponentTiming, Format};

    #[test]
    fn reduces_by_timing_name_and_ignores_unbalanced_components() {
        let mut m = Measurement::new(Format::LuciaRaw);
        m.components = vec![
            ComponentTiming::new("ATMIFS", 10, 90.0, 10.0),
            ComponentTiming::new("oceanx", 10, 60.0, 40.0),
            ComponentTiming::new("RNFMAP", 10, 1.0, 99.0),
        ];
        m.wall_s = Some(100.0);
        m.sim_s = Some(metrics::SECONDS_PER_YEAR / 10.0);
        let comps = ["ATMIFS".to_string(), "oceanx".to_string()];
        let r = reduce(&m, &comps, &[100, 100], 56).unwrap();
        assert!((r.sypd - 86.4).abs() < 1e-9);
        assert!((r.chsy - 24.0 * 256.0 / 86.4).abs() < 1e-9);
        // (100*200 - 90*100 - 60*100) / (100*200) = 0.25
        assert!((r.coupling_cost - 0.25).abs() < 1e-12);
        // interp/send unknown: wall - compute; 10 s and 40 s on 100 of 200 PEs.
        assert!((r.partial_coupling_cost[0] - 0.05).abs() < 1e-12);
        assert!((r.partial_coupling_cost[1] - 0.2).abs() < 1e-12);
        let e = reduce(&m, &["fesom".to_string()], &[10], 0).unwrap_err();
        assert!(e.contains("fesom") && e.contains("ATMIFS"), "{e}");
    }

    #[test]
    fn raw_lucia_without_a_coupling_period_names_the_key_that_fixes_it() {
        let mut m = Measurement::new(Format::LuciaRaw);
        m.components = vec![
            ComponentTiming::new("ATMIFS", 10, 90.0, 10.0),
            ComponentTiming::new("oceanx", 10, 60.0, 40.0),
        ];
        m.wall_s = Some(100.0);
        let comps = ["ATMIFS".to_string(), "oceanx".to_string()];
        let e = reduce(&m, &comps, &[100, 100], 0).unwrap_err();
        assert!(
            e.contains("no simulated time") && e.contains("period_s = 2700"),
            "{e}"
        );
        m.sim_s = Some(metrics::SECONDS_PER_YEAR / 10.0);
        m.wall_s = None;
        let e = reduce(&m, &comps, &[100, 100], 0).unwrap_err();
        assert!(
            e.contains("no coupled wall time") && !e.contains("period_s"),
            "{e}"
        );
    }

    #[test]
    fn a_measurement_of_other_pes_is_refused_naming_both() {
        let mut m = Measurement::new(Format::Table);
        let mut atm = ComponentTiming::new("ATMIFS", 10, 90.0, 10.0);
        atm.nproc = Some(960);
        let mut oce = ComponentTiming::new("oceanx", 10, 60.0, 40.0);
        oce.nproc = Some(144);
        m.components = vec![atm, oce];
        m.wall_s = Some(100.0);
        m.sim_s = Some(metrics::SECONDS_PER_YEAR / 10.0);
        let comps = ["ATMIFS".to_string(), "oceanx".to_string()];
        let e = reduce(&m, &comps, &[408, 240], 0).unwrap_err();
        assert!(
            e.contains("ATMIFS") && e.contains("960") && e.contains("408"),
            "{e}"
        );
        assert!(reduce(&m, &comps, &[960, 144], 0).is_ok());
    }

    #[test]
    fn measuring_a_table_of_another_run_is_refused() {
        // The trial: `record` of a 408/240 run accepted a 960/144 table.
        let dir = tempfile::tempdir().unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/timing/ecearth3/lucia_lite/960IFS_411NEMO/table.csv");
        std::fs::copy(&src, dir.path().join("table.csv")).unwrap();
        let comps = ["ATMIFS".to_string(), "oceanx".to_string()];
        let e = measure(dir.path(), &comps, &[408, 240], 0, Some(2700.0)).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("960") && text.contains("408"), "{text}");
        // The sample's directory says 411 NEMO PEs, its table says 144: the table is believed.
        assert!(measure(dir.path(), &comps, &[960, 144], 0, Some(2700.0)).is_ok());
    }
}
