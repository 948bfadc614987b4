//! The iteration table's view model: rows, the best one, who drives the campaign, and each
//! row's fittingness. A measured row has one FN, the one the campaign chooses its best by
//! (normalised over every measured configuration, at the campaign's TTS_w), on every screen:
//! table, best line, detail view, `campaign status` and the report. The [`loader`] fills it
//! from a watched directory.

mod loader;

use std::path::PathBuf;
use std::time::Duration;

use super::calibration::Calibration;

use autolb::campaign::status::runs_summary;
use autolb::campaign::strategy::algorithm1::{fittingness_and_best, Measured};

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
    /// Whether a driver holds the campaign (campaign directories only).
    pub driver: Driver,
    /// The fittingness weight of the campaign (or of the app, for plain run directories).
    pub tts_w: Option<f64>,
    /// When the best rests on fewer runs than asked: `1 of 2 runs`.
    pub best_caveat: Option<String>,
    pub components: Vec<String>,
    pub rows: Vec<IterRow>,
    /// Index into `rows` of the best configuration so far.
    pub best: Option<usize>,
    /// Runs whose output is still being written ("incoming").
    pub pending_runs: usize,
    pub error: Option<String>,
    /// The calibrated model refitted on the campaign's measured runs (campaign directories
    /// only; `None` until a run is usable or when nothing changed since the last fit).
    pub fitted: Option<Calibration>,
}

/// Who drives a watched campaign, from its lock.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Driver {
    /// Not a campaign directory (or not read yet).
    #[default]
    Unknown,
    /// No process holds the lock: nothing starts or records runs until `campaign run`
    /// (or `next` / `record`) is used.
    None,
    /// A driver holds the lock (`pid 1234`).
    Running(String),
    /// A driver holds the lock, runs are queued, and nothing has moved for `minutes`.
    Stalled { holder: String, minutes: u64 },
}

/// How long a campaign with queued runs may show no progress before the app says so. Progress
/// is the driver saving the state (it does whenever it starts, records or retries a run) or a
/// running run writing its output. A quarter of an hour of neither deserves a look (a Slurm
/// queue that long, a driver stuck on a hung `sacct`, jobs lost to a node failure).
pub const STALL_AFTER: Duration = Duration::from_secs(15 * 60);

/// What the lock and the time since the last progress say about the driver; `queued` when
/// runs are pending or running.
pub fn driver_of(holder: Option<String>, queued: bool, idle_for: Duration) -> Driver {
    match holder {
        None => Driver::None,
        Some(holder) if queued && idle_for >= STALL_AFTER => Driver::Stalled {
            holder,
            minutes: idle_for.as_secs() / 60,
        },
        Some(holder) => Driver::Running(holder),
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
    let word = if done == row.runs.len() && done > 0 {
        "done"
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
    fn the_driver_is_none_running_or_stalled() {
        let minute = Duration::from_secs(60);
        assert_eq!(driver_of(None, true, 60 * minute), Driver::None);
        assert_eq!(
            driver_of(Some("pid 7".into()), false, 60 * minute),
            Driver::Running("pid 7".into()),
            "nothing queued: nothing to wait for"
        );
        assert_eq!(
            driver_of(Some("pid 7".into()), true, 3 * minute),
            Driver::Running("pid 7".into())
        );
        assert_eq!(
            driver_of(Some("pid 7".into()), true, 20 * minute),
            Driver::Stalled {
                holder: "pid 7".into(),
                minutes: 20
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
