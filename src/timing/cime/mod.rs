//! CIME runs (CESM, E3SM, NorESM): the `cesm_timing.*` / `e3sm_timing.*` summary a run writes
//! into its case's `timing/` folder, and the `ESMF_Profile.summary` of NUOPC runs.
//!
//! Both are read into a [`CimeRun`]: each component class (`atm`, `lnd`, `ice`, `ocn`, ...) with
//! its tasks, threads and PEs where the file states them and its run time (the largest over its
//! PEs of its own run timer), and the run as a whole: the driver's run loop (TOT), the
//! mediator's and the communication times, the simulated days and the file's own SYPD and cost.
//! A summary states every component's PE range, so the layout follows from it
//! ([`crate::layout::infer`]) and with it the layout model's time for TOT from the components'
//! times alone ([`CimeRun::predicted_run_s`]). An ESMF summary states task counts only.
//!
//! The run is also given as a [`Measurement`] (each class computing for its run time, the TOT
//! as the coupled wall time) so that everything that reads measurements reads CIME runs too.
//!
//! A file cut while being written (or copied) is read up to its last whole line: what is
//! missing makes the reading partial, or [`Reading::Incomplete`] when the run times are not
//! there at all. A number on a cut line is never taken.

pub mod curves;
pub mod esmf;
pub mod overhead;
pub mod summary;

use serde::{Deserialize, Serialize};

use super::{ComponentTiming, Format, Measurement, Reading};
use crate::layout::{self, Layout, PeRange};

/// One component class of a CIME run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CimeComponent {
    /// The class in lower case: `cpl`, `atm`, `lnd`, `ice`, `ocn`, `rof`, `glc`, `wav`, `esp`,
    /// `iac`, ...
    pub name: String,
    /// The model behind the class (`cam`, `blom`, `sesp`), when the file names it.
    pub model: Option<String>,
    /// MPI tasks.
    pub nproc: u32,
    /// Threads per task, when the file states them.
    pub threads: Option<u32>,
    /// The first PE, when the file states it.
    pub root_pe: Option<u32>,
    /// PEs between consecutive tasks, when the file states it.
    pub stride: Option<u32>,
    /// Run time in seconds: the largest over its PEs of its run timer.
    pub run_s: Option<f64>,
}

impl CimeComponent {
    /// The component's PEs, when the file states where they start.
    pub fn range(&self) -> Option<PeRange> {
        Some(PeRange {
            tasks: self.nproc,
            threads: self.threads.unwrap_or(1),
            root_pe: self.root_pe?,
            stride: self.stride.unwrap_or(1),
        })
    }

    /// Whether the class runs a stub model (`satm`, `sesp`, ...: CIME's placeholder that does
    /// nothing), which takes no part in the layout.
    pub fn is_stub(&self) -> bool {
        self.model
            .as_deref()
            .is_some_and(|m| m.eq_ignore_ascii_case(&format!("s{}", self.name)))
    }
}

/// What a CIME run's timing file says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CimeRun {
    /// The coupling driver: `CMEPS` or `MCT` (a summary without a `Driver` line is MCT's),
    /// `NUOPC` for an ESMF profile.
    pub driver: String,
    /// The case name, when the file gives it.
    pub case: Option<String>,
    /// The component classes in file order.
    pub components: Vec<CimeComponent>,
    /// The driver's run loop (TOT) in seconds.
    pub run_s: Option<f64>,
    /// Simulated days of the run (the atmosphere's).
    pub sim_days: Option<f64>,
    /// Simulated years per day as the file states it.
    pub sypd: Option<f64>,
    /// Model cost in core hours per simulated year as the file states it.
    pub chsy: Option<f64>,
    /// The PEs the file's cost counts (`pe count for cost estimate`).
    pub cost_pes: Option<u32>,
    /// The coupler's (mediator's) own run time in seconds.
    pub cpl_run_s: Option<f64>,
    /// Time in communication between components and coupler, in seconds.
    pub cpl_comm_s: Option<f64>,
    /// Initialisation seconds.
    pub init_s: Option<f64>,
}

impl CimeRun {
    /// A run of `driver` with nothing read yet.
    pub fn new(driver: &str) -> CimeRun {
        CimeRun {
            driver: driver.to_string(),
            case: None,
            components: Vec::new(),
            run_s: None,
            sim_days: None,
            sypd: None,
            chsy: None,
            cost_pes: None,
            cpl_run_s: None,
            cpl_comm_s: None,
            init_s: None,
        }
    }

    /// The components that take part in the layout: every class but stubs. The coupler is one
    /// of them: its own time is spent on its PEs, one after the others there; what the layout
    /// model leaves out is the communication and any waiting inside the driver's loop.
    fn laid_out(&self) -> impl Iterator<Item = &CimeComponent> {
        self.components.iter().filter(|c| !c.is_stub())
    }

    /// The layout the PE ranges imply, when every component's range is known.
    pub fn layout(&self) -> Option<Layout> {
        let named: Vec<(String, PeRange)> = self
            .laid_out()
            .map(|c| Some((c.name.clone(), c.range()?)))
            .collect::<Option<_>>()?;
        layout::infer(&named)
    }

    /// The layout model's time for TOT: the tree of [`CimeRun::layout`] over the components'
    /// run times.
    pub fn predicted_run_s(&self) -> Option<f64> {
        let time = |name: &str| {
            self.components
                .iter()
                .find(|c| c.name == name)
                .and_then(|c| c.run_s)
        };
        self.layout()?.run_time(&time).ok()
    }

    /// The per-PE sum of the components' run times, the largest over PEs: the simple model the
    /// tree is compared with.
    pub fn per_pe_run_s(&self) -> Option<f64> {
        let parts: Vec<(PeRange, f64)> = self
            .laid_out()
            .map(|c| Some((c.range()?, c.run_s?)))
            .collect::<Option<_>>()?;
        Some(layout::per_pe_time(&parts))
    }

    /// Cores as CIME counts them: the highest PE end times the most threads, when every range
    /// is known.
    pub fn cores(&self) -> Option<u64> {
        let ranges: Vec<PeRange> = self
            .components
            .iter()
            .map(CimeComponent::range)
            .collect::<Option<_>>()?;
        (!ranges.is_empty()).then(|| layout::cores(&ranges))
    }

    /// The run as a [`Measurement`]: each class with a run time computes for it, the TOT is the
    /// coupled wall time; `partial` and `notes` as read.
    pub(crate) fn into_reading(
        self,
        format: Format,
        partial: Option<String>,
        notes: Vec<String>,
    ) -> Reading {
        let mut m = Measurement::new(format);
        for c in &self.components {
            if let Some(run_s) = c.run_s {
                let mut t = ComponentTiming::new(c.name.clone(), 0, run_s, 0.0);
                t.nproc = Some(c.nproc);
                m.components.push(t);
            }
        }
        m.wall_s = self.run_s;
        m.sim_s = self.sim_days.map(|d| d * crate::metrics::SECONDS_PER_DAY);
        m.partial = partial;
        m.notes = notes;
        m.cime = Some(Box::new(self));
        Reading::Measured(m)
    }
}

/// The text's whole lines, numbered from 1: a last line without its newline was cut while
/// being written and is left out (its number could be cut short). Carriage returns go.
pub(crate) fn whole_lines(text: &str) -> (Vec<(usize, &str)>, bool) {
    let cut = !text.is_empty() && !text.ends_with('\n');
    let mut lines: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    lines.pop();
    (lines, cut)
}

/// The newest CIME timing file in `dir` or in its `timing/` folder (a case directory): a
/// summary (`cesm_timing.*`, `e3sm_timing.*`) if there is one, else an ESMF profile summary;
/// only files of `want` when given. A case's `timing/` folder keeps every run's files; the
/// newest by modification time (by name when equal) is the last run.
pub(crate) fn newest_in_dir(
    dir: &std::path::Path,
    want: Option<Format>,
) -> std::io::Result<Option<(Format, std::path::PathBuf)>> {
    for place in [dir.to_path_buf(), dir.join("timing")] {
        if !place.is_dir() {
            continue;
        }
        let mut summaries = Vec::new();
        let mut profiles = Vec::new();
        for entry in std::fs::read_dir(&place)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".gz") || !entry.file_type()?.is_file() {
                continue;
            }
            let modified = entry.metadata()?.modified().ok();
            if summary::is_summary_name(&name) {
                summaries.push((modified, name, entry.path()));
            } else if esmf::is_profile_name(&name) {
                profiles.push((modified, name, entry.path()));
            }
        }
        for (format, mut found) in [(Format::Cime, summaries), (Format::Esmf, profiles)] {
            if want.is_some_and(|w| w != format) {
                continue;
            }
            found.sort();
            if let Some((_, _, path)) = found.pop() {
                return Ok(Some((format, path)));
            }
        }
    }
    Ok(None)
}
