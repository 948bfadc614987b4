//! Scalability curves from CIME runs at several layouts.
//!
//! Every run's summary gives each component class its cores (tasks x threads) and its own run
//! time over the simulated days, so each run is one point of each class's curve: its simulated
//! years per day at those cores. Runs at the same cores measure the same point again; their mean
//! is the point and their spread (min-max) says how much one run can be trusted. The class's
//! time, not the coupled TOT, is what a curve needs: the layout model puts the classes together
//! again, side by side or one after the other.
//!
//! Stubs (`satm`, `sesp`, ...) and classes with no run time take no part. A class whose model
//! changes between runs (`blom` in one, the data ocean `docn` in another) is not one curve.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::CimeRun;
use crate::metrics::{self, SECONDS_PER_DAY};

/// One point of a class's curve: every run at these cores.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// Cores: tasks x threads per task.
    pub cores: u64,
    /// Each run's label (its file) and the class's SYPD in it, in the order given.
    pub runs: Vec<(String, f64)>,
}

impl CurvePoint {
    /// The point's SYPD: the mean over its runs.
    pub fn sypd(&self) -> f64 {
        self.runs.iter().map(|(_, s)| s).sum::<f64>() / self.runs.len() as f64
    }

    /// The smallest and largest SYPD of its runs.
    pub fn spread(&self) -> (f64, f64) {
        self.runs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, s)| {
                (lo.min(*s), hi.max(*s))
            })
    }
}

/// A component class's curve over the runs given.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassCurve {
    /// The class in lower case (`atm`, `ocn`, ...).
    pub name: String,
    /// The models the runs name for it, without repeats, in the order met.
    pub models: Vec<String>,
    /// The points by cores, fewest first.
    pub points: Vec<CurvePoint>,
}

impl ClassCurve {
    /// Why these points are not a curve, if they are not: two models, or fewer than the two
    /// core counts a curve file needs.
    pub fn problem(&self) -> Option<String> {
        if self.models.len() > 1 {
            return Some(format!(
                "its model differs between runs ({}); runs of one model make a curve",
                self.models.join(", ")
            ));
        }
        if self.points.len() < 2 {
            return Some(format!(
                "{} core count{} measured; a curve needs runs at 2 or more",
                self.points.len(),
                if self.points.len() == 1 { "" } else { "s" }
            ));
        }
        None
    }

    /// Runs over all points.
    pub fn run_count(&self) -> usize {
        self.points.iter().map(|p| p.runs.len()).sum()
    }

    /// The curve file (`nproc,SYPD`, nproc the cores), with one comment line per point naming
    /// its runs and their spread.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# {} ({}) from {} CIME runs: SYPD of its own run time, nproc = tasks x threads; \
             the mean where cores repeat",
            self.name,
            self.models.join(", "),
            self.run_count()
        );
        for p in &self.points {
            let (lo, hi) = p.spread();
            let labels: Vec<&str> = p.runs.iter().map(|(l, _)| l.as_str()).collect();
            let sypd = if p.runs.len() == 1 {
                format!("1 run, SYPD {lo:.4}")
            } else {
                format!("{} runs, SYPD {lo:.4}-{hi:.4}", p.runs.len())
            };
            let _ = writeln!(out, "# {} cores: {sypd}: {}", p.cores, labels.join(" "));
        }
        out.push_str("nproc,SYPD\n");
        for p in &self.points {
            let _ = writeln!(out, "{},{}", p.cores, p.sypd());
        }
        out
    }
}

/// Why runs give no curves.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurvesError {
    /// A run does not say how many days it simulated or how long it ran.
    #[error("{label}: the summary gives no {what}; a curve point needs it")]
    Missing {
        /// The run's label (its file).
        label: String,
        /// What is missing.
        what: &'static str,
    },
}

/// Each class's curve over `runs` (a label, its file, with the run), classes in the order they
/// first appear. A class is a point of a run when it is no stub and has a positive run time.
pub fn class_curves(runs: &[(String, &CimeRun)]) -> Result<Vec<ClassCurve>, CurvesError> {
    let mut order: Vec<String> = Vec::new();
    let mut by_class: BTreeMap<String, (Vec<String>, BTreeMap<u64, CurvePoint>)> = BTreeMap::new();
    for (label, run) in runs {
        let sim_days = run.sim_days.ok_or_else(|| CurvesError::Missing {
            label: label.clone(),
            what: "simulated days",
        })?;
        for c in &run.components {
            let Some(run_s) = c.run_s.filter(|t| *t > 0.0) else {
                continue;
            };
            if c.is_stub() {
                continue;
            }
            let sypd = metrics::sypd(sim_days * SECONDS_PER_DAY, run_s);
            let cores = u64::from(c.nproc) * u64::from(c.threads.unwrap_or(1));
            let (models, points) = by_class.entry(c.name.clone()).or_insert_with(|| {
                order.push(c.name.clone());
                Default::default()
            });
            let model = c.model.clone().unwrap_or_else(|| c.name.clone());
            if !models.contains(&model) {
                models.push(model);
            }
            points
                .entry(cores)
                .or_insert_with(|| CurvePoint {
                    cores,
                    runs: Vec::new(),
                })
                .runs
                .push((label.clone(), sypd));
        }
    }
    Ok(order
        .into_iter()
        .map(|name| {
            let (models, points) = by_class.remove(&name).unwrap_or_default();
            ClassCurve {
                name,
                models,
                points: points.into_values().collect(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::cime::CimeComponent;

    fn run(days: Option<f64>, parts: &[(&str, &str, u32, u32, Option<f64>)]) -> CimeRun {
        let mut r = CimeRun::new("MCT");
        r.sim_days = days;
        for &(name, model, nproc, threads, run_s) in parts {
            r.components.push(CimeComponent {
                name: name.into(),
                model: Some(model.into()),
                nproc,
                threads: Some(threads),
                root_pe: Some(0),
                stride: Some(1),
                run_s,
            });
        }
        r
    }

    #[test]
    fn points_group_by_cores_with_mean_and_spread() {
        // 365 days in 86400 s is 1 SYPD; in 43200 s, 2.
        let a = run(
            Some(365.0),
            &[
                ("atm", "cam", 64, 2, Some(86_400.0)),
                ("ocn", "pop", 32, 1, Some(43_200.0)),
            ],
        );
        let b = run(
            Some(365.0),
            &[
                ("atm", "cam", 128, 1, Some(43_200.0)),
                ("ocn", "pop", 64, 1, Some(28_800.0)),
            ],
        );
        let c = run(
            Some(730.0),
            &[
                ("atm", "cam", 256, 1, Some(43_200.0)),
                ("ocn", "pop", 32, 1, Some(43_200.0)),
            ],
        );
        let runs = [("a".to_string(), &a), ("b".into(), &b), ("c".into(), &c)];
        let curves = class_curves(&runs).unwrap();
        let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["atm", "ocn"]);
        let atm = &curves[0];
        // 64 x 2 and 128 x 1 are the same 128 cores: one point measured twice.
        assert_eq!(atm.points.len(), 2);
        assert_eq!(atm.points[0].cores, 128);
        assert_eq!(atm.points[0].runs, [("a".into(), 1.0), ("b".into(), 2.0)]);
        assert_eq!(atm.points[0].sypd(), 1.5);
        assert_eq!(atm.points[0].spread(), (1.0, 2.0));
        assert_eq!(atm.points[1].cores, 256);
        assert_eq!(atm.points[1].sypd(), 4.0);
        assert_eq!(atm.problem(), None);
        let ocn = &curves[1];
        assert_eq!(ocn.points[0].cores, 32);
        assert_eq!(ocn.points[0].sypd(), 3.0);
        assert_eq!(ocn.points[1].sypd(), 3.0);
        let csv = atm.to_csv();
        assert!(csv.ends_with("nproc,SYPD\n128,1.5\n256,4\n"), "{csv}");
        assert!(
            csv.contains("# 128 cores: 2 runs, SYPD 1.0000-2.0000: a b\n"),
            "{csv}"
        );
    }

    #[test]
    fn stubs_and_classes_without_time_take_no_part() {
        let a = run(
            Some(10.0),
            &[
                ("esp", "sesp", 8, 1, Some(5.0)),
                ("wav", "ww", 8, 1, Some(0.0)),
                ("rof", "mosart", 8, 1, None),
                ("atm", "cam", 8, 1, Some(5.0)),
            ],
        );
        let curves = class_curves(&[("a".to_string(), &a)]).unwrap();
        assert_eq!(curves.len(), 1);
        assert_eq!(curves[0].name, "atm");
        assert_eq!(
            curves[0].problem().unwrap(),
            "1 core count measured; a curve needs runs at 2 or more"
        );
    }

    #[test]
    fn two_models_of_one_class_are_no_curve() {
        let a = run(Some(10.0), &[("ocn", "blom", 8, 1, Some(5.0))]);
        let b = run(Some(10.0), &[("ocn", "docn", 16, 1, Some(1.0))]);
        let curves = class_curves(&[("a".to_string(), &a), ("b".into(), &b)]).unwrap();
        assert!(curves[0].problem().unwrap().contains("(blom, docn)"));
    }

    #[test]
    fn a_run_without_simulated_days_is_refused_by_name() {
        let a = run(None, &[("atm", "cam", 8, 1, Some(5.0))]);
        let err = class_curves(&[("x/cesm_timing.a".to_string(), &a)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x/cesm_timing.a: the summary gives no simulated days; a curve point needs it"
        );
    }
}
