//! The measurement of one coupled run and the CPMIP metrics derived from it (the guide's
//! `method/prediction.md`, *Metrics*). A value that the input cannot tell is `None`, never a guess.

use serde::{Deserialize, Serialize};

use super::step_series::StepRow;
use super::Format;
use crate::metrics;

/// What one component did in the analysed window of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentTiming {
    /// The component's name as the timing output writes it (e.g. `ATMIFS`, `oceanx`).
    pub name: String,
    /// PEs (MPI processes); `None` when neither the file nor the caller said.
    pub nproc: Option<u32>,
    /// Coupling steps in the analysed window (each worth one coupling period of model time).
    pub steps: u64,
    /// Seconds spent computing (outside coupling events).
    pub compute_s: f64,
    /// Seconds spent waiting for other components' fields.
    pub wait_s: f64,
    /// Seconds spent interpolating fields before sending them.
    pub interp_s: Option<f64>,
    /// Seconds spent in the sending (put) calls themselves.
    pub send_s: Option<f64>,
    /// Load imbalance between the sampled ranks: the sum over events of the spread (max - min
    /// over ranks) of their start times.
    pub jitter_s: Option<f64>,
    /// Rank files read for this component (raw LUCIA only).
    pub sampled_ranks: Option<u32>,
    /// The computing time as the file wrote it, when the reader replaced it: a helper that
    /// waits nearly the whole run can come out below zero through clock spread, and is read
    /// as computing 0 s (see the measurement's notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_as_written_s: Option<f64>,
}

impl ComponentTiming {
    /// A component with the given compute and waiting seconds and nothing else known.
    pub fn new(name: impl Into<String>, steps: u64, compute_s: f64, wait_s: f64) -> Self {
        ComponentTiming {
            name: name.into(),
            nproc: None,
            steps,
            compute_s,
            wait_s,
            interp_s: None,
            send_s: None,
            jitter_s: None,
            sampled_ranks: None,
            compute_as_written_s: None,
        }
    }

    /// Seconds in coupling events (eq. 5's T_c,cpl): waiting + interpolation + sending, when
    /// all three are known.
    pub fn coupling_s(&self) -> Option<f64> {
        Some(self.wait_s + self.interp_s? + self.send_s?)
    }
}

/// A component's per-step timings, kept step by step (the `steps` format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSeries {
    /// The component's name, from the file name (the file itself does not name it).
    pub component: String,
    /// PEs, from the file name or `--nproc`; `None` when neither says.
    pub nproc: Option<u32>,
    /// The coupling steps in file order (the final exchange, which has no values, left out).
    pub rows: Vec<StepRow>,
}

/// The measurement of one coupled run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The format it was read from.
    pub format: Format,
    /// Per component, what it did in the analysed window, in the order the output lists them.
    pub components: Vec<ComponentTiming>,
    /// Coupled wall-clock seconds of the analysed window (T_M).
    pub wall_s: Option<f64>,
    /// Simulated seconds of the analysed window.
    pub sim_s: Option<f64>,
    /// The coupling period used for `sim_s`, when known.
    pub period_s: Option<f64>,
    /// `Some(reason)` when only the complete part of a half-written output was measured.
    pub partial: Option<String>,
    /// Per-step series (only the `steps` format has them).
    pub series: Vec<StepSeries>,
    /// Things the reader noticed that do not make the measurement partial (e.g. "nproc of
    /// ATMIFS unknown: pass --nproc ATMIFS=N").
    pub notes: Vec<String>,
    /// What a CIME run's timing file says beyond the above (PE ranges, threads, coupler and
    /// communication times, the file's own cost); `None` for other formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cime: Option<Box<super::cime::CimeRun>>,
}

impl Measurement {
    /// An empty measurement of `format`, to be filled by a reader.
    pub fn new(format: Format) -> Measurement {
        Measurement {
            format,
            components: Vec::new(),
            wall_s: None,
            sim_s: None,
            period_s: None,
            partial: None,
            series: Vec::new(),
            notes: Vec::new(),
            cime: None,
        }
    }

    /// The component called `name`: as in the timing output, or cut there to the format's width
    /// ([`Format::same_name`]).
    pub fn component(&self, name: &str) -> Option<&ComponentTiming> {
        self.component_index(name).map(|i| &self.components[i])
    }

    /// Index of the component called `name` (see [`Measurement::component`]); an exact name wins
    /// over a cut one.
    pub fn component_index(&self, name: &str) -> Option<usize> {
        self.components
            .iter()
            .position(|c| c.name == name)
            .or_else(|| {
                self.components
                    .iter()
                    .position(|c| self.format.same_name(&c.name, name))
            })
    }

    /// PEs of all components together (P_M), when every component's is known (and the sum
    /// fits: a damaged file can claim absurd PE counts). A CIME run's components share PEs:
    /// there it is the PEs the file's cost counts, or else the cores CIME's rule gives.
    pub fn total_nproc(&self) -> Option<u32> {
        if let Some(run) = &self.cime {
            return run
                .cost_pes
                .or_else(|| run.cores().and_then(|c| u32::try_from(c).ok()));
        }
        if self.components.is_empty() {
            return None;
        }
        self.components
            .iter()
            .try_fold(0u32, |total, c| total.checked_add(c.nproc?))
    }

    /// SYPD of component `i` from its own compute seconds: how fast it would run if it never
    /// waited.
    pub fn component_sypd(&self, i: usize) -> Option<f64> {
        let c = self.components.get(i)?;
        positive(metrics::sypd(self.sim_s?, positive(c.compute_s)?))
    }

    /// Coupled SYPD from the coupled wall time of the analysed window.
    pub fn coupled_sypd(&self) -> Option<f64> {
        positive(metrics::sypd(self.sim_s?, positive(self.wall_s?)?))
    }

    /// Why [`Measurement::coupled_sypd`] has no value, in words (`None` when it has one): the
    /// simulated time is unknown (raw LUCIA files carry none: the reader needs the coupling
    /// period), or the wall time is unknown or not positive.
    pub fn why_no_coupled_sypd(&self) -> Option<String> {
        if self.coupled_sypd().is_some() {
            return None;
        }
        Some(match (self.sim_s, self.wall_s) {
            (None, _) => "no simulated time: the timing output does not give it and no coupling period was given".into(),
            (_, None) => "no coupled wall time in the timing output".into(),
            (Some(sim), Some(wall)) => {
                format!("simulated time {sim} s over wall time {wall} s is not a positive speed")
            }
        })
    }

    /// Core hours per simulated year of the coupled run: `24 * P / SYPD`.
    pub fn chsy(&self) -> Option<f64> {
        let p = self.total_nproc()?;
        Some(metrics::chsy(f64::from(p), self.coupled_sypd()?))
    }

    /// Coupling cost (eq. 4) as a fraction.
    pub fn coupling_cost(&self) -> Option<f64> {
        let wall = positive(self.wall_s?)?;
        let p = self.total_nproc()?;
        let parts: Vec<(f64, f64)> = self
            .components
            .iter()
            .map(|c| Some((c.compute_s, f64::from(c.nproc?))))
            .collect::<Option<_>>()?;
        finite(metrics::coupling_cost(wall, f64::from(p), &parts))
    }

    /// Partial coupling cost (eq. 5) of component `i`, as a fraction. T_c,cpl is waiting +
    /// interpolation + sending when the format gives all three; otherwise the coupled wall time
    /// minus the component's compute time (identical by construction in lucia_lite tables).
    pub fn partial_coupling_cost(&self, i: usize) -> Option<f64> {
        let c = self.components.get(i)?;
        let wall = positive(self.wall_s?)?;
        let coupling = c.coupling_s().unwrap_or(wall - c.compute_s);
        let p = self.total_nproc()?;
        finite(metrics::partial_coupling_cost(
            coupling,
            f64::from(c.nproc?),
            wall,
            f64::from(p),
        ))
    }
}

fn positive(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then_some(v)
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_components() -> Measurement {
        let mut m = Measurement::new(Format::Table);
        let mut a = ComponentTiming::new("A", 10, 90.0, 5.0);
        a.nproc = Some(10);
        a.interp_s = Some(3.0);
        a.send_s = Some(2.0);
        let mut b = ComponentTiming::new("B", 10, 60.0, 40.0);
        b.nproc = Some(20);
        m.components = vec![a, b];
        m.wall_s = Some(100.0);
        m.sim_s = Some(metrics::SECONDS_PER_YEAR / 10.0);
        m
    }

    #[test]
    fn metrics_by_hand() {
        let m = two_components();
        // 0.1 year in 100 s: 0.1 / (100/86400) = 86.4 SYPD.
        assert!((m.coupled_sypd().unwrap() - 86.4).abs() < 1e-9);
        assert!((m.component_sypd(1).unwrap() - 144.0).abs() < 1e-9);
        assert!((m.chsy().unwrap() - 24.0 * 30.0 / 86.4).abs() < 1e-9);
        assert!((m.coupling_cost().unwrap() - 0.3).abs() < 1e-12);
        // A: 5 + 3 + 2 = 10 s on 10 PEs over 3000 core-seconds.
        assert!((m.partial_coupling_cost(0).unwrap() - 100.0 / 3000.0).abs() < 1e-12);
        // B: send/interp unknown: wall - compute = 40 s on 20 PEs.
        assert!((m.partial_coupling_cost(1).unwrap() - 800.0 / 3000.0).abs() < 1e-12);
    }

    #[test]
    fn unknown_inputs_give_none() {
        let mut m = two_components();
        m.components[1].nproc = None;
        assert!(m.chsy().is_none());
        assert!(m.coupling_cost().is_none());
        assert!(m.partial_coupling_cost(0).is_none());
        assert!(m.coupled_sypd().is_some());
        m.sim_s = None;
        assert!(m.coupled_sypd().is_none());
        assert!(m.component_sypd(0).is_none());
        assert!(m.component_sypd(7).is_none());
    }
}
