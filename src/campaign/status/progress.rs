//! Where a campaign stands, in one line a watcher glances at: the lb-iteration of at most N,
//! the runs done, running and queued, the time since the first run started, an ETA for the
//! iteration from the runs' own wall times, and the best FN after each iteration.

use serde::Serialize;

use super::Status;
use crate::campaign::state::RunState;

/// The campaign's progress (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// The lb-iteration running (or the last one), 0-based.
    pub iteration: Option<u32>,
    /// An upper bound on the lb-iterations (see [`crate::campaign::bound`]).
    pub iterations_at_most: Option<u32>,
    /// Whether that bound is proven (two components) or an estimate (more).
    pub bound_proven: bool,
    /// Runs that ended with a measurement, over the whole campaign.
    pub done: usize,
    /// Runs started and not ended.
    pub running: usize,
    /// Runs waiting to be started.
    pub queued: usize,
    /// Runs that ended without a measurement.
    pub failed: usize,
    /// Runs a cancel ended before they started.
    pub cancelled: usize,
    /// Runs the state file has as running that died with their lost driver (see
    /// [`super::RunCounts::stopped_with_driver`]).
    pub stopped_with_driver: usize,
    /// When the first run started, unix seconds (elapsed time counts from it); `None` when no
    /// run carries a start time.
    pub first_start: Option<f64>,
    /// The last run's end, for a campaign that has ended (elapsed stops there).
    pub last_end: Option<f64>,
    /// Mean wall seconds of the runs that ended with a known start and end.
    pub mean_run_s: Option<f64>,
    /// Runs of the current iteration still to end.
    pub iteration_left: usize,
    /// The best FN measured up to each lb-iteration, on the campaign's FN of today.
    pub best_fn_by_iteration: Vec<f64>,
    /// Nothing more will run: the campaign is done or cancelled.
    pub finished: bool,
}

impl Progress {
    /// The progress of a campaign from its status (run start and end times included).
    pub fn of(status: &Status) -> Progress {
        let c = &status.counts;
        let runs = status
            .iterations
            .iter()
            .flat_map(|it| it.tests.iter())
            .flat_map(|t| t.runs.iter());
        let (mut first_start, mut last_end, mut walls) = (None::<f64>, None::<f64>, Vec::new());
        for r in runs {
            if let Some(s) = r.started_at {
                first_start = Some(first_start.map_or(s, |f| f.min(s)));
                if let (Some(e), true) = (r.ended_at, r.state.is_terminal()) {
                    walls.push((e - s).max(0.0));
                }
            }
            if let Some(e) = r.ended_at {
                last_end = Some(last_end.map_or(e, |l| l.max(e)));
            }
        }
        let iteration_left = status
            .iterations
            .last()
            .map(|it| {
                it.tests
                    .iter()
                    .flat_map(|t| &t.runs)
                    .filter(|r| matches!(r.state, RunState::Pending | RunState::Running))
                    .count()
            })
            .unwrap_or(0);
        Progress {
            iteration: status.iteration,
            iterations_at_most: status.iterations_at_most,
            bound_proven: status.bound_proven,
            done: c.done,
            running: c.running,
            queued: c.pending,
            failed: c.failed,
            cancelled: c.cancelled,
            stopped_with_driver: c.stopped_with_driver,
            first_start,
            last_end,
            mean_run_s: (!walls.is_empty()).then(|| walls.iter().sum::<f64>() / walls.len() as f64),
            iteration_left,
            best_fn_by_iteration: best_by_iteration(status),
            finished: status.done,
        }
    }

    /// The runs per state, to write as every view writes them ([`super::RunCounts::text`]).
    pub fn counts(&self) -> super::RunCounts {
        super::RunCounts {
            pending: self.queued,
            running: self.running,
            done: self.done,
            failed: self.failed,
            cancelled: self.cancelled,
            stopped_with_driver: self.stopped_with_driver,
        }
    }

    /// Seconds from the first start to `now` (to the last end once finished).
    pub fn elapsed_s(&self, now: f64) -> Option<f64> {
        let end = if self.finished { self.last_end? } else { now };
        Some((end - self.first_start?).max(0.0))
    }

    /// Seconds until the current iteration's runs have ended: those left, in waves of the
    /// runs running at once (at least one), each wave a mean run's wall time; the wave under
    /// way counts half.
    pub fn iteration_eta_s(&self) -> Option<f64> {
        if self.finished || self.iteration_left == 0 {
            return None;
        }
        let at_once = self.running.max(1) as f64;
        let mean = self.mean_run_s?;
        let queued = self.iteration_left.saturating_sub(self.running) as f64;
        Some(mean * ((queued / at_once).ceil() + if self.running > 0 { 0.5 } else { 0.0 }))
    }

    /// `iteration 2 (at most 9 in all)` (`about 9` when the bound is an estimate); the
    /// iterations are numbered from 0, as in the table.
    pub fn iteration_text(&self) -> Option<String> {
        let i = self.iteration?;
        Some(match self.iterations_at_most {
            Some(n) if self.bound_proven => format!("iteration {i} (at most {n} in all)"),
            Some(n) => format!("iteration {i} (about {n} at most)"),
            None => format!("iteration {i}"),
        })
    }

    /// The best FN per iteration as block characters (`▂▅▇█`), on the FN scale 0..1.
    pub fn sparkline(&self) -> String {
        const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
        self.best_fn_by_iteration
            .iter()
            .map(|f| BARS[((f.clamp(0.0, 1.0) * 7.0).round()) as usize])
            .collect()
    }
}

/// The best FN measured up to the end of each iteration, each on today's FN (normalised over
/// every configuration measured so far, as the table shows it), so the line never disagrees
/// with the table and only rises.
fn best_by_iteration(status: &Status) -> Vec<f64> {
    let mut best: Option<f64> = None;
    let mut out = Vec::new();
    for it in &status.iterations {
        for f in it.tests.iter().filter_map(|t| t.fittingness) {
            best = Some(best.map_or(f, |b| b.max(f)));
        }
        if let Some(b) = best {
            out.push(b);
        }
    }
    out
}

/// `1 h 02 min`, `3 min 10 s`, `42 s`.
pub fn duration_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo_status() -> Status {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = super::super::demo_state(tmp.path());
        let mut status = Status::from_state(&state, &dir);
        let names = status.components.clone();
        // A first iteration of four tests, two runs each: two measured (100 s and 140 s), one
        // running, the rest queued.
        let runs = status.iterations[0]
            .tests
            .iter_mut()
            .flat_map(|t| t.runs.iter_mut());
        for (k, r) in runs.enumerate() {
            match k {
                0 | 1 => {
                    r.state = RunState::Done;
                    r.started_at = Some(1000.0);
                    r.ended_at = Some(1100.0 + 40.0 * k as f64);
                    r.sypd = Some(15.0 + k as f64);
                    r.chsy = Some(1000.0 - k as f64);
                    r.coupling_cost = Some(0.05);
                    r.partial_coupling_cost = super::super::NameMap::zip(&names, vec![0.02, 0.03]);
                }
                2 => {
                    r.state = RunState::Running;
                    r.started_at = Some(1140.0);
                }
                _ => {}
            }
        }
        status.recompute();
        status
    }

    #[test]
    fn the_eta_comes_from_the_runs_wall_times_and_the_runs_left() {
        let status = demo_status();
        let p = Progress::of(&status);
        assert_eq!((p.done, p.running), (2, 1));
        assert_eq!(p.iteration_left, p.running + p.queued);
        assert_eq!(p.mean_run_s, Some(120.0));
        assert_eq!(p.elapsed_s(1200.0), Some(200.0));
        // One run at a time: every queued run is a wave, the running one half a wave.
        let waves = p.queued as f64 + 0.5;
        assert_eq!(p.iteration_eta_s(), Some(120.0 * waves));
        assert!(
            p.iteration_text().unwrap().starts_with("iteration 0 ("),
            "{:?}",
            p.iteration_text()
        );
        assert_eq!(p.best_fn_by_iteration.len(), 1);
        assert_eq!(p.sparkline().chars().count(), 1);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_text(42.4), "42 s");
        assert_eq!(duration_text(190.0), "3 min 10 s");
        assert_eq!(duration_text(3720.0), "1 h 02 min");
    }
}
