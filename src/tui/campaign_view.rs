//! The iteration table's view model: rows, the best one, who drives the campaign, and each
//! row's fittingness. A measured row has one FN, the one the campaign chooses its best by
//! (normalised over every measured configuration, at the campaign's TTS_w), on every screen:
//! table, best line, detail view, `campaign status` and the report. The [`loader`] fills it
//! from a watched directory.

mod loader;

use std::path::PathBuf;
use std::time::SystemTime;

use super::calibration::Calibration;

use autolb::campaign::status::progress::Progress;
use autolb::campaign::status::{runs_summary, STOPPED_WITH_DRIVER};
use autolb::campaign::strategy::algorithm1::{fittingness_and_best, Measured};
use autolb::campaign::{DriverState, RunState};

pub use loader::{Loader, LoaderComponent};

/// One run (a repetition) of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub repetition: u32,
    pub state: String,
    pub sypd: Option<f64>,
    pub chsy: Option<f64>,
    pub coupling_cost: Option<f64>,
    pub run_dir: PathBuf,
    pub job: Option<String>,
    pub note: Option<String>,
}

/// One row of the iteration table: a test in one lb-iteration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IterRow {
    pub iteration: u32,
    pub test: u32,
    /// The run directory's name, for directories of runs without campaign positions
    /// (`240IFS_144NEMO`); the table shows it instead of iteration/test.
    pub label: Option<String>,
    /// PEs per component, in component order (0 when unknown).
    pub nproc: Vec<u32>,
    pub sypd: Option<f64>,
    pub chsy: Option<f64>,
    /// Fraction.
    pub coupling_cost: Option<f64>,
    pub partial_coupling_cost: Vec<Option<f64>>,
    /// The campaign's fittingness: normalised over its measured configurations, at its
    /// TTS_w; it chooses the best. Every view shows this one.
    pub fittingness: Option<f64>,
    pub donor: Option<String>,
    pub recipient: Option<String>,
    pub step: Option<u32>,
    /// The state with its runs, e.g. `done 1/2 ✗1`.
    pub state: String,
    /// The state once the driver took the row's running runs along (`stopped with the driver
    /// 0/2`, see [`CampaignView::settle_driver`]); `None` when it has no running run.
    pub stopped_state: Option<String>,
    /// Runs that failed (their reasons are in `runs`).
    pub failed: usize,
    pub job: Option<String>,
    pub runs: Vec<RunRow>,
    /// Why the campaign's strategy runs this test (the guided model's choice, a
    /// donor/recipient move, a repetition, or the prediction rank it started from).
    pub reason: Option<String>,
}

/// The iteration table and the campaign's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignView {
    pub dir: Option<PathBuf>,
    /// `running`, `done`, `done: no successful run`, `waiting for runs`, ...
    pub state: String,
    /// Who drives the campaign (campaign directories only).
    pub driver: Option<DriverReading>,
    /// The fittingness weight of the campaign (or of the app, for plain run directories).
    pub tts_w: Option<f64>,
    /// When the best rests on fewer runs than asked: `1 of 2 runs`.
    pub best_caveat: Option<String>,
    pub components: Vec<String>,
    pub rows: Vec<IterRow>,
    /// Index into `rows` of the best configuration so far.
    pub best: Option<usize>,
    /// The campaign's answer as `campaign status` and `campaign best` give it: its means over
    /// all its runs, where its row holds one iteration's runs only. `None` without a campaign
    /// state.
    pub answer: Option<autolb::campaign::Answer>,
    /// Every configuration the campaign measured with its pooled means, so that a predicted
    /// configuration shown beside the answer says whether it was measured and how it did.
    pub measured: Vec<(Vec<u32>, autolb::campaign::answer::MeasuredFigures)>,
    /// Runs whose output is still being written ("incoming").
    pub pending_runs: usize,
    pub error: Option<String>,
    /// Where the campaign stands (campaign directories only).
    pub progress: Option<Progress>,
    /// The calibrated model refitted on the campaign's measured runs (campaign directories
    /// only; `None` until a run is usable or when nothing changed since the last fit).
    pub fitted: Option<Calibration>,
    /// A scaling campaign's measured curves (`DIR/curves/NAME.csv`), in component order, when
    /// every component has one and they changed since the last load; `None` otherwise.
    pub curves: Option<Vec<autolb::curve::Curve>>,
    /// A scaling campaign's measured points per component, in component order, with their
    /// spread, outliers and queued runs (empty for a balancing campaign): the curves pane draws
    /// them and the detail view opens them.
    pub scaling: Vec<ScalingCurve>,
    /// OpenMP threads per rank of each component, in component order (empty for pure MPI): a
    /// hybrid component's PEs are written `ranks x threads` as `campaign status` writes them.
    pub threads: Vec<u32>,
    /// A cold start's phase in one line (`phase scaling: ...`, `phase balancing: ...`).
    pub phase: Option<String>,
    /// The campaign's executor kind as `campaign status` names it (`sim`, `command`, ...,
    /// `external`); campaign directories only.
    pub executor: Option<String>,
    /// Notes on curve files that disagree with what the campaign's state measured (campaign
    /// status says them in full); the app draws and ranks from the state either way.
    pub curve_notes: Vec<String>,
}

/// One component's measured points in a scaling campaign.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScalingCurve {
    pub name: String,
    /// `standalone` or `coupled`: how the points were measured (the curve file says it too).
    pub mode: String,
    /// Ascending by PE count; counts with runs queued and none measured yet included.
    pub points: Vec<ScalingPoint>,
}

/// One PE count of a scaling campaign as the app shows it: the library's measured point
/// ([`autolb::campaign::strategy::scaling::points_of`]) with the outliers' own SYPD, so they
/// can be drawn where they fell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScalingPoint {
    /// The scaling test that measures it (the iteration table's `t`).
    pub test: u32,
    pub nproc: u32,
    /// Mean SYPD of the runs kept; `None` before one is measured.
    pub sypd: Option<f64>,
    /// Standard deviation of the runs kept (0 with one run).
    pub sd: f64,
    /// Runs kept in the mean.
    pub runs: u32,
    /// Runs left out as outliers: run id and the SYPD it measured.
    pub outliers: Vec<(String, f64)>,
    /// Runs that ended without a measurement.
    pub failed: u32,
    /// Runs not ended yet.
    pub queued: u32,
}

impl ScalingCurve {
    /// The point at `nproc` PEs, if this component has one.
    pub fn point_at(&self, nproc: u32) -> Option<&ScalingPoint> {
        self.points.iter().find(|p| p.nproc == nproc)
    }
}

impl CampaignView {
    /// Whether the driver, as read and aged to `now`, took the runs it left running along
    /// ([`DriverState::took_runs_with_it`], the `sim` executor's runs).
    pub fn runs_stopped_with_driver(&self, now: SystemTime) -> bool {
        match (&self.driver, &self.executor) {
            (Some(d), Some(executor)) => d.at(now).took_runs_with_it(executor),
            _ => false,
        }
    }

    /// Shows the rows' running runs as stopped with the driver once it took them along at
    /// `now`: a driver killed after the last load changes nothing in the directory, so no new
    /// load would show it. A new driver writes the state, and the load that follows shows
    /// its runs as they are.
    pub fn settle_driver(&mut self, now: SystemTime) {
        if !self.runs_stopped_with_driver(now) {
            return;
        }
        let mut stopped = 0;
        for row in &mut self.rows {
            let Some(state) = row.stopped_state.take() else {
                continue;
            };
            row.state = state;
            for run in row
                .runs
                .iter_mut()
                .filter(|r| r.state == RunState::Running.as_str())
            {
                run.state = STOPPED_WITH_DRIVER.into();
                stopped += 1;
            }
        }
        if let Some(p) = &mut self.progress {
            p.running = p.running.saturating_sub(stopped);
            p.stopped_with_driver += stopped;
        }
    }

    /// Component `k`'s `cores` as the campaign runs them: `RxT` for a hybrid component (as
    /// [`autolb::campaign::Status::pes_text`] writes it), the count otherwise.
    pub fn pes_text(&self, k: usize, cores: u32) -> String {
        match self.threads.get(k) {
            Some(&t) if t > 1 => format!("{}x{t}", cores / t),
            _ => cores.to_string(),
        }
    }

    /// A configuration as `NAME PES + ...`, hybrid components as `RxT`.
    pub fn describe(&self, nproc: &[u32]) -> String {
        self.components
            .iter()
            .zip(nproc)
            .enumerate()
            .map(|(k, (n, &p))| format!("{n} {}", self.pes_text(k, p)))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// The scaling points a table row measures: each component the row runs (one in a
    /// standalone run, every one in a coupled run) with its point at the row's count. Empty
    /// for a balancing campaign.
    pub fn scaling_points(&self, row: &IterRow) -> Vec<(&ScalingCurve, &ScalingPoint)> {
        self.scaling
            .iter()
            .filter_map(|c| {
                let at = self.components.iter().position(|n| *n == c.name)?;
                let p = row.nproc.get(at).copied().filter(|&p| p > 0)?;
                Some((c, c.point_at(p)?))
            })
            .collect()
    }
}

/// Who drives a watched campaign, as the loader read it from the heartbeat
/// ([`autolb::campaign::driver_state`]), and when.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverReading {
    pub state: DriverState,
    pub at: SystemTime,
}

impl DriverReading {
    /// The state at `now`: the beat aged by the time since it was read, so a killed driver
    /// (which changes nothing in the directory, so nothing is read again) shows as lost in
    /// time.
    pub fn at(&self, now: SystemTime) -> DriverState {
        self.state
            .aged(now.duration_since(self.at).unwrap_or_default())
    }

    /// At a tick: asks the lock of the driver of the campaign in `dir` again
    /// ([`DriverState::rechecked`]), so a driver killed on this host shows as lost at the next
    /// tick.
    pub fn recheck(&mut self, now: SystemTime, dir: &std::path::Path) {
        let aged = self.at(now);
        let checked = aged.rechecked(dir);
        if checked != aged {
            self.state = checked;
            self.at = now;
        }
    }
}

/// Means over the measured runs; the row's state from its runs.
pub fn summarise_row(row: &mut IterRow) {
    let mean = |f: &dyn Fn(&RunRow) -> Option<f64>| {
        let v: Vec<f64> = row.runs.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    row.sypd = mean(&|r| r.sypd);
    row.chsy = mean(&|r| r.chsy);
    row.coupling_cost = mean(&|r| r.coupling_cost);
    let done = row.runs.iter().filter(|r| r.state == "done").count();
    let unreadable = row.runs.iter().any(|r| r.state == "unreadable");
    let incoming = row
        .runs
        .iter()
        .any(|r| r.state != "done" && r.state != "unreadable");
    let word = if done == row.runs.len() && done > 0 {
        "done"
    } else if unreadable && !incoming {
        // Settled output the reader refuses: it will not complete by waiting.
        "unreadable"
    } else {
        // Output still being written (no campaign state says more).
        "incoming"
    };
    row.state = runs_summary(word, done, 0, row.runs.len());
}

/// Scores the measured rows of plain run directories the way a campaign scores its
/// configurations, with the library's own rule (normalised over every measured row; ties go
/// to fewer PEs, then to the PE counts in order): sets each row's FN and returns the best.
pub fn score_rows(rows: &mut [IterRow], tts_w: f64) -> Option<usize> {
    let measured: Vec<(usize, Measured)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            Some((
                i,
                Measured {
                    nproc: r.nproc.clone(),
                    total_nproc: r.nproc.iter().sum(),
                    sypd: r.sypd?,
                    chsy: r.chsy?,
                },
            ))
        })
        .collect();
    let configs: Vec<Measured> = measured.iter().map(|(_, m)| m.clone()).collect();
    let (fns, best) = fittingness_and_best(&configs, tts_w);
    for ((i, _), f) in measured.iter().zip(fns) {
        rows[*i].fittingness = Some(f);
    }
    best.map(|b| measured[b].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_read_running_ages_into_lost_without_a_new_reading() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        let reading = DriverReading {
            state: DriverState::Running {
                pid: 7,
                host: "h".into(),
                seen_s: 1,
            },
            at,
        };
        assert!(reading.at(at + std::time::Duration::from_secs(4)).alive());
        assert_eq!(
            reading.at(at + std::time::Duration::from_secs(30)),
            DriverState::Lost {
                pid: 7,
                host: "h".into(),
                gone_s: 31
            }
        );
    }

    #[test]
    fn rows_are_scored_over_the_measured_ones_and_ties_go_to_fewer_pes() {
        let row = |m: Option<(f64, f64)>, p: u32| IterRow {
            iteration: 1,
            test: 1,
            nproc: vec![p],
            sypd: m.map(|m| m.0),
            chsy: m.map(|m| m.1),
            ..IterRow::default()
        };
        let mut rows = vec![
            row(Some((10.0, 100.0)), 10),
            row(None, 1),
            row(Some((20.0, 100.0)), 20),
            row(Some((20.0, 100.0)), 15),
        ];
        assert_eq!(score_rows(&mut rows, 1.0), Some(3));
        assert_eq!(rows[0].fittingness, Some(0.0));
        assert_eq!(rows[1].fittingness, None, "not measured");
        assert_eq!(rows[2].fittingness, Some(1.0));
        assert_eq!(score_rows(&mut rows[..2], 0.5), Some(0));
    }
}
