//! The stand-in model on a layout tree: a CIME run (CESM, E3SM, NorESM) and the
//! `cesm_timing.CASE.LID` summary it writes.
//!
//! Each component computes for the time its truth curve gives at its task count, with the
//! run's noise: `days / 365 x 86400 / SYPD(tasks) x (1 + noise x N(0, 1))`. The tree combines
//! them (the slowest part of `|`, the sum of `;`), and the driver adds a small overhead the
//! tree leaves out: the coupler's own time ([`CPL_SHARE`] of the tree's time, on the PEs of
//! the part that holds the atmosphere) and the communication ([`COMM_SHARE`]). The summary
//! is written in MCT's flavour (no `Driver` line) or CMEPS's (`Driver : CMEPS`), with the
//! component table, the throughput and cost, and the run-time block, so that autolb's own
//! reader ([`crate::timing::cime`]) reads it back as it reads a real case's. Classes the tree
//! leaves out (`cpl`, `rof`, `glc`, `wav`, `esp`) sit on the PEs of that part, as CIME's
//! defaults put them, the coupler running and the others as stubs.
//!
//! The file goes into `timing/` of the run directory, written under a temporary name and
//! renamed, as a case's `timing/` folder holds it once the run has ended.

use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use super::model::{standard_normal, truth_sypd};
use super::SimError;
use crate::curve::Curve;
use crate::layout::emit::host_span;
use crate::layout::place::place;
use crate::layout::Layout;

/// The coupler's own run time, as a share of the tree's time.
pub const CPL_SHARE: f64 = 0.01;
/// Communication between components and coupler, as a share of the tree's time.
pub const COMM_SHARE: f64 = 0.005;

/// Which driver's summary is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Flavour {
    /// MCT's cpl7: no `Driver` line.
    Mct,
    /// The NUOPC mediator: `Driver : CMEPS`.
    Cmeps,
}

/// One component of the tree: its class (the tree's name), tasks and truth curve.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeComponent {
    /// The class, as the tree names it (`atm`, `ocn`, ...).
    pub class: String,
    /// MPI tasks.
    pub tasks: u32,
    /// How fast it computes at each task count.
    pub curve: Curve,
}

/// A run of a layout tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRun {
    /// The case name written into the file.
    pub case: String,
    /// The layout.
    pub tree: Layout,
    /// Every component of the tree.
    pub components: Vec<TreeComponent>,
    /// Simulated days.
    pub days: f64,
    /// Relative standard deviation of each component's time.
    pub noise: f64,
    /// Which summary is written.
    pub flavour: Flavour,
    /// The run's seed.
    pub seed: u64,
}

/// What a tree run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeOutcome {
    /// The driver's run loop (TOT), seconds.
    pub tot_s: f64,
    /// Simulated years per day.
    pub sypd: f64,
    /// PEs the layout spans.
    pub pes: u32,
    /// `(class, run seconds)` of every component of the tree.
    pub components: Vec<(String, f64)>,
    /// The summary written, when it was.
    pub file: Option<PathBuf>,
}

/// Model names CIME shows for the usual classes (the table's `atm = cam`).
fn model_of(class: &str) -> String {
    match class {
        "atm" => "cam",
        "lnd" => "clm",
        "ice" => "cice",
        "ocn" => "pop",
        "rof" => "mosart",
        "glc" => "cism",
        "wav" => "ww3",
        "cpl" => "cpl",
        other => other,
    }
    .to_string()
}

/// Runs the model: each component's time, the tree's, and the run's TOT.
pub fn run_tree(run: &TreeRun) -> Result<TreeOutcome, SimError> {
    if !(run.days.is_finite() && run.days > 0.0) {
        return Err(SimError::Settings(format!(
            "a tree run needs a positive number of simulated days, not {}",
            run.days
        )));
    }
    let mut rng = StdRng::seed_from_u64(run.seed);
    let mut times = Vec::new();
    for c in &run.components {
        if c.tasks == 0 {
            return Err(SimError::Component {
                name: c.class.clone(),
                reason: "0 tasks".into(),
            });
        }
        let sypd = truth_sypd(&c.curve, c.tasks);
        if !(sypd.is_finite() && sypd > 0.0) {
            return Err(SimError::Component {
                name: c.class.clone(),
                reason: format!(
                    "truth speed {sypd} SYPD at {} tasks is not positive",
                    c.tasks
                ),
            });
        }
        let factor = (1.0 + run.noise * standard_normal(&mut rng)).max(0.05);
        times.push((
            c.class.clone(),
            run.days / 365.0 * crate::metrics::SECONDS_PER_DAY / sypd * factor,
        ));
    }
    let time = |n: &str| times.iter().find(|(c, _)| c == n).map(|(_, t)| *t);
    let tree_s = run
        .tree
        .run_time(&time)
        .map_err(|name| SimError::Component {
            name,
            reason: "is in the layout but not among the run's components".into(),
        })?;
    let tasks = |n: &str| {
        run.components
            .iter()
            .find(|c| c.class == n)
            .map(|c| c.tasks)
    };
    let pes = place(&run.tree, &tasks)
        .map_err(|name| SimError::Component {
            name,
            reason: "has no task count".into(),
        })?
        .width;
    let tot_s = tree_s * (1.0 + CPL_SHARE + COMM_SHARE);
    Ok(TreeOutcome {
        tot_s,
        sypd: run.days / 365.0 / (tot_s / crate::metrics::SECONDS_PER_DAY),
        pes,
        components: times,
        file: None,
    })
}

/// Runs the model and writes its summary into `out_dir/timing/`.
pub fn simulate_tree(run: &TreeRun, out_dir: &Path) -> Result<TreeOutcome, SimError> {
    let mut outcome = run_tree(run)?;
    let dir = out_dir.join("timing");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SimError::Io { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let lid = format!("{}.000000-000000", run.seed % 10_000_000);
    let file = dir.join(format!("cesm_timing.{}.{lid}", run.case));
    let tmp = dir.join(format!(".cesm_timing.{}.{lid}.tmp", run.case));
    std::fs::write(&tmp, summary_text(run, &outcome, &lid)).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &file).map_err(io(&file))?;
    outcome.file = Some(file);
    Ok(outcome)
}

/// Where the classes the tree leaves out run: `(first PE, PEs)` of its host part.
fn host_range(run: &TreeRun) -> (u32, u32) {
    let tasks = |n: &str| {
        run.components
            .iter()
            .find(|c| c.class == n)
            .map(|c| c.tasks)
    };
    place(&run.tree, &tasks).map_or((0, 1), |placed| {
        let (root, n, _) = host_span(&run.tree, &placed.placements, placed.width);
        (root, n)
    })
}

/// The summary's text.
pub fn summary_text(run: &TreeRun, outcome: &TreeOutcome, lid: &str) -> String {
    let tasks = |n: &str| {
        run.components
            .iter()
            .find(|c| c.class == n)
            .map(|c| c.tasks)
    };
    let placed = place(&run.tree, &tasks).ok();
    let (host_root, host_tasks) = host_range(run);
    let mut rows: Vec<(String, String, u32, u32)> = Vec::new();
    let in_tree = |c: &str| run.components.iter().any(|t| t.class == c);
    if !in_tree("cpl") {
        rows.push(("cpl".into(), "cpl".into(), host_root, host_tasks));
    }
    for c in &run.components {
        let root = placed
            .as_ref()
            .and_then(|p| p.root_pe(&c.class))
            .unwrap_or(0);
        rows.push((c.class.clone(), model_of(&c.class), root, c.tasks));
    }
    for stub in ["rof", "glc", "wav", "esp"] {
        if !in_tree(stub) {
            rows.push((stub.into(), format!("s{stub}"), host_root, host_tasks));
        }
    }
    let mut out = String::from("---------------- TIMING PROFILE ---------------------\n");
    out.push_str(&format!(
        "  Case        : {}\n  LID         : {lid}\n",
        run.case
    ));
    out.push_str("  Machine     : autolb-stand-in\n");
    if run.flavour == Flavour::Cmeps {
        out.push_str("  Driver      : CMEPS\n");
    }
    out.push_str("  run type    : startup, continue_run = FALSE (inittype = TRUE)\n");
    out.push_str(&format!(
        "  stop option : ndays, stop_n = {days}\n  run length  : {days} days ({days} for ocean)\n\n",
        days = run.days
    ));
    out.push_str("  component       comp_pes    root_pe   tasks  x threads instances (stride) \n");
    out.push_str("  ---------        ------     -------   ------   ------  ---------  ------  \n");
    for (class, model, root, n) in &rows {
        out.push_str(&format!(
            "  {class} = {model:<8} {n:<10} {root:<8} {n:<6} x 1       1      (1     ) \n"
        ));
    }
    let pes = outcome.pes;
    let cost = 24.0 * f64::from(pes) / outcome.sypd;
    out.push_str(&format!(
        "\n  total pes active           : {pes} \n  mpi tasks per node         : 128 \n  pe count for cost estimate : {pes} \n\n"
    ));
    out.push_str(&format!(
        "  Overall Metrics: \n    Model Cost:         {cost:10.2}   pe-hrs/simulated_year \n    Model Throughput:   {:10.2}   simulated_years/day \n\n",
        outcome.sypd
    ));
    out.push_str(&format!(
        "    Init Time   :      10.000 seconds \n    Run Time    : {:11.3} seconds {:12.3} seconds/day \n    Final Time  :       0.100 seconds \n\n",
        outcome.tot_s,
        outcome.tot_s / run.days
    ));
    out.push_str("Runs Time in total seconds, seconds/model-day, and model-years/wall-day \n\n");
    let line = |label: &str, s: f64| {
        let per_day = s / run.days;
        let years = if s > 0.0 {
            run.days / 365.0 / (s / crate::metrics::SECONDS_PER_DAY)
        } else {
            0.0
        };
        format!("    {label:<14}{s:11.3} seconds {per_day:12.3} seconds/mday {years:12.2} myears/wday \n")
    };
    let tree_s = outcome.tot_s / (1.0 + CPL_SHARE + COMM_SHARE);
    out.push_str(&line("TOT Run Time:", outcome.tot_s));
    for (class, ..) in &rows {
        let s = if class == "cpl" && !in_tree("cpl") {
            tree_s * CPL_SHARE
        } else {
            outcome
                .components
                .iter()
                .find(|(c, _)| c == class)
                .map_or(0.0, |(_, t)| *t)
        };
        out.push_str(&line(
            &format!("{} Run Time:", class.to_ascii_uppercase()),
            s,
        ));
    }
    out.push_str(&line("CPL COMM Time:", tree_s * COMM_SHARE));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{self, ReadOptions, Reading};

    fn curve(name: &str, work: f64) -> Curve {
        let points: Vec<crate::curve::Point> = [8u32, 16, 32, 64, 128]
            .iter()
            .map(|&n| crate::curve::Point {
                nproc: n,
                sypd: f64::from(n) / work,
            })
            .collect();
        Curve::from_points(name, "test", &points).unwrap()
    }

    fn run(flavour: Flavour) -> TreeRun {
        let comp = |class: &str, tasks: u32, work: f64| TreeComponent {
            class: class.into(),
            tasks,
            curve: curve(class, work),
        };
        TreeRun {
            case: "b.stand-in".into(),
            tree: Layout::parse("ocn | (atm ; (ice | lnd))").unwrap(),
            components: vec![
                comp("ocn", 32, 4.0),
                comp("atm", 64, 8.0),
                comp("ice", 24, 1.0),
                comp("lnd", 40, 1.5),
            ],
            days: 5.0,
            noise: 0.02,
            flavour,
            seed: 7,
        }
    }

    #[test]
    fn the_reader_reads_back_what_the_model_wrote_in_both_flavours() {
        for flavour in [Flavour::Mct, Flavour::Cmeps] {
            let dir = tempfile::tempdir().unwrap();
            let r = run(flavour);
            let outcome = simulate_tree(&r, dir.path()).unwrap();
            let Reading::Measured(m) = timing::read(dir.path(), &ReadOptions::default()).unwrap()
            else {
                panic!("incomplete");
            };
            assert_eq!(m.partial, None, "{flavour:?}");
            let cime = m.cime.as_ref().unwrap();
            assert_eq!(
                cime.driver,
                if flavour == Flavour::Mct {
                    "MCT"
                } else {
                    "CMEPS"
                }
            );
            assert!((cime.run_s.unwrap() - outcome.tot_s).abs() < 1e-3);
            assert!((cime.sypd.unwrap() - outcome.sypd).abs() < 0.01);
            for (class, t) in &outcome.components {
                let c = cime.components.iter().find(|c| &c.name == class).unwrap();
                assert!((c.run_s.unwrap() - t).abs() < 1e-3, "{class}");
                assert_eq!(
                    c.nproc,
                    r.components
                        .iter()
                        .find(|x| &x.class == class)
                        .unwrap()
                        .tasks
                );
            }
            // The PE ranges give back the tree, and the coupler rides on the atmosphere's PEs.
            assert_eq!(
                cime.layout().unwrap().to_string(),
                "ocn | (cpl ; atm ; (ice | lnd))",
                "{flavour:?}"
            );
            let cpl = cime.components.iter().find(|c| c.name == "cpl").unwrap();
            assert_eq!((cpl.root_pe, cpl.nproc), (Some(32), 64));
            assert_eq!(cime.cores(), Some(96));
        }
    }

    #[test]
    fn a_cut_summary_is_partial_or_incomplete_never_complete() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(Flavour::Cmeps);
        let outcome = run_tree(&r).unwrap();
        let text = summary_text(&r, &outcome, "1.2");
        let path = dir.path().join("cesm_timing.b.stand-in.1.2");
        for cut in (0..text.len()).step_by(37) {
            std::fs::write(&path, &text[..cut]).unwrap();
            match timing::read(&path, &ReadOptions::default()) {
                Ok(Reading::Measured(m)) => assert!(m.partial.is_some(), "cut at {cut}"),
                Ok(Reading::Incomplete { .. }) | Err(_) => {}
            }
        }
    }
}
