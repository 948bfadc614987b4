//! The iteration table's view model: rows, the best one, who drives the campaign, and the
//! fittingness the table shows. The [`loader`] fills it from a watched directory.

mod loader;

use std::path::PathBuf;
use std::time::Duration;

use super::calibration::Calibration;

use autolb::campaign::status::runs_summary;
use autolb::metrics::{self, Bounds};

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
    /// The campaign's own fittingness (normalised over the measured configurations; it
    /// chooses the best, method.md).
    pub fittingness: Option<f64>,
    /// The fittingness the table shows: normalised over the prediction's bounds, widened
    /// only by measured values outside them, so it stays put as other rows land. Set by the
    /// app ([`stable_fittingness`]); `None` until then.
    pub shown_fittingness: Option<f64>,
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

/// Fittingness of every measured row, normalised over the measured rows (method.md: the best
/// configuration is chosen over all measured configurations).
pub fn score_rows(rows: &mut [IterRow], tts_w: f64) {
    let measured: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.sypd?, r.chsy?)))
        .collect();
    let (Some(sb), Some(cb)) = (
        Bounds::of(measured.iter().map(|m| m.0)),
        Bounds::of(measured.iter().map(|m| m.1)),
    ) else {
        return;
    };
    for row in rows.iter_mut() {
        if row.fittingness.is_none() {
            if let (Some(s), Some(c)) = (row.sypd, row.chsy) {
                row.fittingness = Some(metrics::fittingness_in(tts_w, s, c, &sb, &cb));
            }
        }
    }
}

/// The fittingness the table shows (see [`IterRow::shown_fittingness`]): normalised over the
/// prediction's bounds, each widened only when a measured value falls outside it.
pub fn stable_fittingness(rows: &mut [IterRow], tts_w: f64, sypd: Bounds, chsy: Bounds) {
    let (mut sb, mut cb) = (sypd, chsy);
    for r in rows.iter() {
        if let (Some(s), Some(c)) = (r.sypd, r.chsy) {
            sb = sb.include(s);
            cb = cb.include(c);
        }
    }
    for r in rows.iter_mut() {
        r.shown_fittingness = match (r.sypd, r.chsy) {
            (Some(s), Some(c)) => Some(metrics::fittingness_in(tts_w, s, c, &sb, &cb)),
            _ => None,
        };
    }
}

/// The row with the highest fittingness (ties: fewer PEs).
pub fn best_row(rows: &[IterRow]) -> Option<usize> {
    rows.iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.fittingness?, r.nproc.iter().sum::<u32>())))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.2.cmp(&a.2)))
        .map(|(i, _, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_fittingness_does_not_move_when_another_row_lands_inside_the_bounds() {
        let row = |s: f64, c: f64| IterRow {
            sypd: Some(s),
            chsy: Some(c),
            ..IterRow::default()
        };
        let sb = Bounds {
            min: 10.0,
            max: 20.0,
        };
        let cb = Bounds {
            min: 800.0,
            max: 1000.0,
        };
        let mut rows = vec![row(15.0, 900.0)];
        stable_fittingness(&mut rows, 0.5, sb, cb);
        assert_eq!(rows[0].shown_fittingness, Some(0.5));
        rows.push(row(19.0, 810.0));
        rows.push(IterRow::default());
        stable_fittingness(&mut rows, 0.5, sb, cb);
        assert_eq!(rows[0].shown_fittingness, Some(0.5), "unchanged");
        assert_eq!(rows[2].shown_fittingness, None, "not measured");
        // A measured value outside the prediction's bounds widens them.
        rows.push(row(30.0, 900.0));
        stable_fittingness(&mut rows, 0.5, sb, cb);
        assert_eq!(rows[0].shown_fittingness, Some(0.5 * 0.25 + 0.5 * 0.5));
        assert_eq!(rows[3].shown_fittingness, Some(0.5 + 0.25));
    }

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
    fn best_is_highest_fittingness() {
        let row = |f: Option<f64>, p: u32| IterRow {
            iteration: 1,
            test: 1,
            nproc: vec![p],
            fittingness: f,
            ..IterRow::default()
        };
        let rows = vec![
            row(Some(0.5), 10),
            row(None, 1),
            row(Some(0.9), 20),
            row(Some(0.9), 15),
        ];
        assert_eq!(best_row(&rows), Some(3));
        assert_eq!(best_row(&rows[..2]), Some(0));
    }
}
