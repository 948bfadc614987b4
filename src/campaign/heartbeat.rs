//! The driver's heartbeat and lock, and the one answer every view gives to "is a driver
//! running?".
//!
//! A driver holds an exclusive `flock` on `DIR/driver.lock` for as long as it lives
//! ([`super::liveness`]). On its host that lock is the answer: held is alive, even when the
//! driver runs in another PID namespace (its pid means nothing here) or is stopped (SIGSTOP:
//! alive, silent); free is gone, at once, however it died. The campaign lock cannot serve:
//! short writers (`record`, `exec`) take it too.
//!
//! The driver also writes `DIR/driver.json` (pid, host, start time, last beat) every
//! [`BEAT_INTERVAL`] and marks it ended when it stops cleanly: the pid and host for messages,
//! and, for a viewer on another host of a shared file system (whose locks it may not see),
//! the only sign of life. There a driver whose heartbeat this host has seen unchanged for
//! [`LOST_AFTER`] is lost; the date written in it is never compared with this host's clock
//! (another host's clock may be ahead or behind).
//!
//! [`driver_state`] reads both, with the campaign's state for "done" and for the stall rule
//! ([`STALL_AFTER`]); the terminal app, `campaign status` and `campaign next` all show its
//! [`DriverState::text`], so they never disagree.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use super::liveness::host_name;
use super::liveness::{probe, HeldLock, Probe};
use super::state::{write_atomically, RunState, State, STATE_FILE};
use super::CampaignError;

/// Name of the heartbeat file inside a campaign directory.
pub const HEARTBEAT_FILE: &str = "driver.json";

/// Name of the lock file a live driver holds inside a campaign directory (never replaced:
/// the heartbeat is rewritten by renames, which would lose a lock on it).
pub const DRIVER_LOCK_FILE: &str = "driver.lock";

/// The executor kind whose runs are threads of the driver's own process (see
/// [`DriverState::took_runs_with_it`]), as `campaign status` names executors.
pub const SIM_EXECUTOR: &str = "sim";

/// The executor name of a campaign without an `[executor]`: a workflow manager (Cylc,
/// Autosubmit, a job chain) starts its runs through `campaign next` / `exec` / `record`.
pub const EXTERNAL_EXECUTOR: &str = "external";

/// How often a live driver beats.
pub const BEAT_INTERVAL: Duration = Duration::from_secs(2);

/// A driver on another host whose heartbeat this host has seen unchanged for this long is gone:
/// five missed beats, so a busy login node or a slow parallel file system does not make a live
/// driver look lost. (On its own host its lock decides, at once.)
pub const LOST_AFTER: Duration = Duration::from_secs(10);

/// How long a campaign with queued runs may show no progress before its driver counts as
/// stalled. Progress is the driver saving the state (it does whenever it starts, records or
/// retries a run) or a running run writing its output. A quarter of an hour of neither deserves
/// a look (a Slurm queue that long, a driver stuck on a hung `sacct`, jobs lost to a node
/// failure).
pub const STALL_AFTER: Duration = Duration::from_secs(15 * 60);

/// What `driver.json` holds. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// The driver's process id on `host`.
    pub pid: u32,
    /// The host name of the driver's machine: only there can its pid be checked.
    pub host: String,
    /// When the driver started.
    pub started: u64,
    /// The last beat.
    pub beat: u64,
    /// Set when the driver stopped cleanly: when and how (`done`, `stopped`, `cancelled`,
    /// `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ended>,
}

/// How a driver ended cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    /// When it ended, unix seconds.
    pub at: u64,
    /// `done`, `stopped`, `cancelled` or `failed`.
    pub how: String,
}

impl Heartbeat {
    /// A first beat of this process on this host, now.
    pub fn of_this_process() -> Heartbeat {
        let now = unix_now();
        Heartbeat {
            pid: std::process::id(),
            host: host_name(),
            started: now,
            beat: now,
            ended: None,
        }
    }

    /// Reads `DIR/driver.json`; `None` when there is none (no driver ever ran here) or it is
    /// not a heartbeat (it is written atomically, so only a hand edit makes it so).
    pub fn load(dir: &Path) -> Option<Heartbeat> {
        let text = crate::fsutil::read_small_text(&dir.join(HEARTBEAT_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes `DIR/driver.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), CampaignError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| {
            CampaignError::io(
                format!("cannot write {}", dir.join(HEARTBEAT_FILE).display()),
                std::io::Error::other(e),
            )
        })?;
        write_atomically(&dir.join(HEARTBEAT_FILE), text.as_bytes())
    }
}

/// Who drives a campaign, as every view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverState {
    /// No driver: none ever ran, or the last one stopped cleanly before the end. Nothing
    /// starts or records runs until `campaign run` (or `next` / `record`) is used.
    None,
    /// A driver beats; its last beat was `seen_s` seconds ago.
    Running {
        /// The driver's process id.
        pid: u32,
        /// The driver's host.
        host: String,
        /// Seconds since its last beat.
        seen_s: u64,
    },
    /// A driver beats, runs are queued, and for `idle_s` seconds (at least [`STALL_AFTER`])
    /// neither it nor any running run wrote anything.
    Stalled {
        /// The driver's process id.
        pid: u32,
        /// The driver's host.
        host: String,
        /// Seconds since its last beat.
        seen_s: u64,
        /// Seconds since the driver last saved the state or a running run last wrote output.
        idle_s: u64,
    },
    /// The driver died without ending cleanly; its last beat was `gone_s` seconds ago.
    Lost {
        /// The dead driver's process id.
        pid: u32,
        /// The dead driver's host.
        host: String,
        /// Seconds since its last beat.
        gone_s: u64,
    },
    /// The campaign is over (done or cancelled): no driver is needed.
    Done,
}

impl DriverState {
    /// A driver is alive (running or stalled).
    pub fn alive(&self) -> bool {
        matches!(
            self,
            DriverState::Running { .. } | DriverState::Stalled { .. }
        )
    }

    /// Seconds since the driver's last beat, when there is a driver to speak of.
    pub fn last_seen_s(&self) -> Option<u64> {
        match self {
            DriverState::Running { seen_s, .. } | DriverState::Stalled { seen_s, .. } => {
                Some(*seen_s)
            }
            DriverState::Lost { gone_s, .. } => Some(*gone_s),
            DriverState::None | DriverState::Done => None,
        }
    }

    /// The driver's pid, when there is a driver to speak of.
    pub fn pid(&self) -> Option<u32> {
        match self {
            DriverState::Running { pid, .. }
            | DriverState::Stalled { pid, .. }
            | DriverState::Lost { pid, .. } => Some(*pid),
            DriverState::None | DriverState::Done => None,
        }
    }

    /// One word: `none`, `running`, `stalled`, `lost`, `done`.
    pub fn name(&self) -> &'static str {
        match self {
            DriverState::None => "none",
            DriverState::Running { .. } => "running",
            DriverState::Stalled { .. } => "stalled",
            DriverState::Lost { .. } => "lost",
            DriverState::Done => "done",
        }
    }

    /// The state `by` later, with no new beat read: a running driver's beat ages and, past
    /// [`LOST_AFTER`], a driver on another host is lost. A viewer that reads the heartbeat only
    /// when the directory changes (a killed driver changes nothing) still reports it lost in
    /// time; on this host [`DriverState::rechecked`] asks its lock instead.
    pub fn aged(&self, by: Duration) -> DriverState {
        // Rounded up: the beat's age in whole seconds is never less than a fresh reading's
        // would be, so the aged state turns lost no later than a new reading would.
        let by = by.as_secs() + u64::from(by.subsec_nanos() > 0);
        match self.clone() {
            DriverState::Running { pid, host, seen_s }
            | DriverState::Stalled {
                pid, host, seen_s, ..
            } if seen_s + by >= LOST_AFTER.as_secs() && host != host_name() => DriverState::Lost {
                pid,
                host,
                gone_s: seen_s + by,
            },
            DriverState::Running { pid, host, seen_s } => DriverState::Running {
                pid,
                host,
                seen_s: seen_s + by,
            },
            DriverState::Stalled {
                pid,
                host,
                seen_s,
                idle_s,
            } => DriverState::Stalled {
                pid,
                host,
                seen_s: seen_s + by,
                idle_s: idle_s + by,
            },
            DriverState::Lost { pid, host, gone_s } => DriverState::Lost {
                pid,
                host,
                gone_s: gone_s + by,
            },
            other => other,
        }
    }

    /// The state with the lock of the driver of the campaign in `dir` asked again: a driver on
    /// this host that no longer holds it is lost now, without waiting for its beat to age (a
    /// viewer can ask this every second; it is two system calls).
    pub fn rechecked(&self, dir: &Path) -> DriverState {
        match self {
            DriverState::Running { pid, host, seen_s }
            | DriverState::Stalled {
                pid, host, seen_s, ..
            } if *host == host_name() && !alive_here(dir, *pid) => DriverState::Lost {
                pid: *pid,
                host: host.clone(),
                gone_s: *seen_s,
            },
            other => other.clone(),
        }
    }

    /// The state in words, as every view shows it: `running (driver pid 12, seen 2 s ago)`,
    /// `driver lost (pid 12 gone 40 s ago; runs may still be queued; resume with autolb
    /// campaign run DIR)`, `no driver running`, `stalled (...)`, `done`. A driver on another
    /// host is named with its host.
    pub fn text(&self, dir: &Path) -> String {
        match self {
            DriverState::None => "no driver running".into(),
            // Only its lock can keep a driver that stopped beating alive: stopped (SIGSTOP) or
            // stuck, but not gone.
            DriverState::Running { pid, host, seen_s } if *seen_s >= LOST_AFTER.as_secs() => {
                format!(
                    "running (driver pid {pid}{} holds its lock, but has not beaten for {seen_s} s: stopped or busy)",
                    on_host(host)
                )
            }
            DriverState::Running { pid, host, seen_s } => format!(
                "running (driver pid {pid}{}, seen {seen_s} s ago)",
                on_host(host)
            ),
            DriverState::Stalled {
                pid, host, idle_s, ..
            } => format!(
                "stalled (driver pid {pid}{}; no progress for {} min while runs are queued)",
                on_host(host),
                idle_s / 60
            ),
            DriverState::Lost { pid, host, gone_s } => format!(
                "driver lost (pid {pid}{} gone {gone_s} s ago; runs may still be queued; \
                 resume with autolb campaign run {})",
                on_host(host),
                dir.display()
            ),
            DriverState::Done => "done".into(),
        }
    }

    /// Whether the runs the state file has as running died with this driver, for a campaign
    /// run by `executor` (its kind's name, `sim`, `command`, ...): only when the driver is lost
    /// and its executor ran the runs inside the driver's own process (`sim`: the stand-in
    /// model's threads). A `command` run is a process of its own and a Slurm or workflow
    /// manager's job outlives its driver, so theirs may still be going. Every view asks this
    /// one question before it says `stopped with the driver`; a resume runs such runs again.
    pub fn took_runs_with_it(&self, executor: &str) -> bool {
        matches!(self, DriverState::Lost { .. }) && executor == SIM_EXECUTOR
    }

    /// [`DriverState::text`] for a campaign run by `executor`: a lost driver that took its
    /// runs with it ([`DriverState::took_runs_with_it`]) says so, `driver lost (pid 12 gone 40
    /// s ago; runs of the sim executor ended with it; resume with autolb campaign run DIR to
    /// run them again)`, instead of "runs may still be queued".
    ///
    /// A campaign a workflow manager drives has no driver: its runs wait for the workflow
    /// manager, which says so (`workflow manager starts the runs; those waiting: autolb campaign
    /// next DIR`) instead of "no driver running".
    pub fn text_for(&self, dir: &Path, executor: &str) -> String {
        match self {
            DriverState::None if executor == EXTERNAL_EXECUTOR => format!(
                "workflow manager starts the runs; those waiting: autolb campaign next {}",
                dir.display()
            ),
            DriverState::Lost { pid, host, gone_s } if self.took_runs_with_it(executor) => {
                format!(
                    "driver lost (pid {pid}{} gone {gone_s} s ago; runs of the {executor} \
                     executor ended with it; resume with autolb campaign run {} to run them \
                     again)",
                    on_host(host),
                    dir.display()
                )
            }
            other => other.text(dir),
        }
    }

    /// [`DriverState::short_text`] for a campaign run by `executor`: `workflow manager` for a
    /// campaign without a driver of its own ([`EXTERNAL_EXECUTOR`]).
    pub fn short_text_for(&self, executor: &str) -> String {
        match self {
            DriverState::None if executor == EXTERNAL_EXECUTOR => "workflow manager".into(),
            other => other.short_text(),
        }
    }

    /// [`DriverState::text`] for a narrow line: the state and the pid only.
    pub fn short_text(&self) -> String {
        match self {
            DriverState::Running { pid, .. } => format!("running (pid {pid})"),
            DriverState::Stalled { pid, .. } => format!("stalled (pid {pid})"),
            DriverState::Lost { pid, gone_s, .. } => {
                format!("driver lost (pid {pid} gone {gone_s} s ago)")
            }
            DriverState::None => "no driver".into(),
            DriverState::Done => "done".into(),
        }
    }

    /// The form `campaign status --json` gives.
    pub fn view(&self) -> DriverView {
        DriverView {
            state: self.name().to_string(),
            pid: self.pid(),
            host: match self {
                DriverState::Running { host, .. }
                | DriverState::Stalled { host, .. }
                | DriverState::Lost { host, .. } => Some(host.clone()),
                DriverState::None | DriverState::Done => None,
            },
            alive: self.alive(),
            last_seen_s: self.last_seen_s(),
        }
    }
}

/// `campaign status --json`'s `"driver"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverView {
    /// `none`, `running`, `stalled`, `lost` or `done`.
    pub state: String,
    /// The driver's process id, when there is a driver to speak of (running, stalled, lost).
    pub pid: Option<u32>,
    /// The driver's host, likewise.
    pub host: Option<String>,
    /// Whether a driver is alive (running or stalled).
    pub alive: bool,
    /// Seconds since the driver's last beat.
    pub last_seen_s: Option<u64>,
}

/// ` on HOST` for a driver on another host than this one, else nothing.
fn on_host(host: &str) -> String {
    if host == host_name() {
        String::new()
    } else {
        format!(" on {host}")
    }
}

/// Who drives the campaign in `dir` now.
pub fn driver_state(dir: &Path) -> Result<DriverState, CampaignError> {
    let dir = super::absolute_dir(dir)?;
    let state = State::load(&dir)?;
    Ok(driver_state_of(&state, &dir, SystemTime::now()))
}

/// Who drives the campaign in `dir` (whose state is `state`) at `now`: done when nothing more
/// will run; else from the heartbeat and the driver's lock: none without a heartbeat or after
/// a clean end; lost when a driver on this host no longer holds its lock, or when this host
/// has seen the heartbeat of a driver on another host unchanged for [`LOST_AFTER`] (and its
/// lock is not held); stalled when runs are queued and nothing moved for [`STALL_AFTER`];
/// else running.
pub fn driver_state_of(state: &State, dir: &Path, now: SystemTime) -> DriverState {
    if state.is_done() {
        return DriverState::Done;
    }
    let lock = probe(&dir.join(DRIVER_LOCK_FILE));
    let Some(beat) = Heartbeat::load(dir) else {
        // A heartbeat deleted or cut under a live driver (it writes a whole one at its next
        // beat, unless it is stopped): its lock still says it lives.
        return match lock {
            Probe::Held => DriverState::Running {
                pid: super::lock::Lock::holder_pid(dir).unwrap_or(0),
                host: host_name(),
                seen_s: 0,
            },
            Probe::Free | Probe::Unknown => DriverState::None,
        };
    };
    if beat.ended.is_some() {
        return DriverState::None;
    }
    let here = beat.host == host_name();
    // This host's own clock wrote a heartbeat of this host (a date ahead of now counts as
    // now); another host's is aged by this host's memory of when it last changed.
    let seen_s = if here {
        unix_seconds(now).saturating_sub(beat.beat)
    } else {
        super::liveness::unchanged_for(dir, HEARTBEAT_FILE, now)
            .unwrap_or_default()
            .as_secs()
    };
    let alive = match lock {
        Probe::Held => true,
        Probe::Free if here => false,
        Probe::Unknown if here => process_exists(beat.pid) && seen_s < LOST_AFTER.as_secs(),
        _ => seen_s < LOST_AFTER.as_secs(),
    };
    if !alive {
        return DriverState::Lost {
            pid: beat.pid,
            host: beat.host,
            gone_s: seen_s,
        };
    }
    match idle_for(state, dir, now) {
        Some(idle) if idle >= STALL_AFTER => DriverState::Stalled {
            pid: beat.pid,
            host: beat.host,
            seen_s,
            idle_s: idle.as_secs(),
        },
        _ => DriverState::Running {
            pid: beat.pid,
            host: beat.host,
            seen_s,
        },
    }
}

/// Whether the driver of the campaign in `dir`, on this host with pid `pid`, is alive: it holds
/// its lock (or, on a file system without locks, its pid exists).
fn alive_here(dir: &Path, pid: u32) -> bool {
    match probe(&dir.join(DRIVER_LOCK_FILE)) {
        Probe::Held => true,
        Probe::Free => false,
        Probe::Unknown => process_exists(pid),
    }
}

/// Time since the campaign last moved, while runs are queued (`None` when none is): since the
/// state was saved or recorded to, or a running run's directory last changed, whichever is later.
fn idle_for(state: &State, dir: &Path, now: SystemTime) -> Option<Duration> {
    let queued = state
        .run_positions()
        .any(|pos| !state.run(pos).state.is_terminal());
    if !queued {
        return None;
    }
    let running = state
        .run_positions()
        .filter(|&pos| state.run(pos).state == RunState::Running)
        .filter_map(|(i, t, r)| age_of(&state.request(dir, i, t, r).run_dir, now));
    // A record lands in the log; a whole save rewrites the state file (and removes the log).
    let saved = [STATE_FILE, super::state::LOG_FILE]
        .into_iter()
        .filter_map(|name| age_of(&dir.join(name), now))
        .min();
    std::iter::once(saved.unwrap_or_default())
        .chain(running)
        .min()
}

/// Time since `path` (a file, or the newest file directly in a directory) last changed.
fn age_of(path: &Path, now: SystemTime) -> Option<Duration> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest = if path.is_dir() {
        std::fs::read_dir(path)
            .ok()?
            .flatten()
            .filter_map(|e| modified(&e.path()))
            .max()
    } else {
        modified(path)
    }?;
    Some(now.duration_since(newest).unwrap_or_default())
}

/// Whether a process with this pid exists on this host (`kill(pid, 0)`; a process of another
/// user exists too).
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn unix_now() -> u64 {
    unix_seconds(SystemTime::now())
}

/// A running heartbeat: a thread that beats every [`BEAT_INTERVAL`] until [`Beating::end`]
/// (or drop, which records `ended`), so a driver busy starting runs or waiting on a slow
/// scheduler still beats.
#[derive(Debug)]
pub struct Beating {
    /// Released after the end is marked (fields drop after `Drop::drop`).
    _lock: HeldLock,
    dir: PathBuf,
    beat: Arc<Mutex<Heartbeat>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Beating {
    /// Takes the driver's lock, writes the first beat now (an error if it cannot be written:
    /// the driver could not save its state either) and starts beating. For a caller holding
    /// the campaign lock: no other driver lives, so the lock is free but for a viewer's probe
    /// or, for an instant, a half-started child of a driver just killed.
    pub fn start(dir: &Path) -> Result<Beating, CampaignError> {
        let path = dir.join(DRIVER_LOCK_FILE);
        let lock = HeldLock::take(&path, Duration::from_secs(2))
            .map_err(|e| CampaignError::io(format!("cannot lock {}", path.display()), e))?
            .ok_or_else(|| CampaignError::Locked {
                dir: dir.to_path_buf(),
                holder: format!("a process holding {DRIVER_LOCK_FILE}"),
            })?;
        let first = Heartbeat::of_this_process();
        first.save(dir)?;
        let beat = Arc::new(Mutex::new(first));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = {
            let (dir, beat, stop) = (dir.to_path_buf(), Arc::clone(&beat), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("autolb-heartbeat".into())
                .spawn(move || beat_until_stopped(&dir, &beat, &stop))
                .map_err(|e| CampaignError::io("cannot start the heartbeat thread", e))?
        };
        Ok(Beating {
            _lock: lock,
            dir: dir.to_path_buf(),
            beat,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops beating and marks the heartbeat ended (`how`: `done`, `stopped`, ...).
    pub fn end(mut self, how: &str) {
        self.finish(how);
    }

    fn finish(&mut self, how: &str) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        {
            let (flag, wake) = &*self.stop;
            if let Ok(mut stopped) = flag.lock() {
                *stopped = true;
            }
            wake.notify_all();
        }
        let _ = thread.join();
        if let Ok(mut beat) = self.beat.lock() {
            let now = unix_now();
            beat.beat = now;
            beat.ended = Some(Ended {
                at: now,
                how: how.to_string(),
            });
            // A heartbeat that cannot be written now shows as lost in ten seconds: the truth
            // an unwritable directory allows.
            let _ = beat.save(&self.dir);
        }
    }
}

impl Drop for Beating {
    fn drop(&mut self) {
        self.finish("ended");
    }
}

fn beat_until_stopped(dir: &Path, beat: &Mutex<Heartbeat>, stop: &(Mutex<bool>, Condvar)) {
    let (flag, wake) = stop;
    let Ok(mut stopped) = flag.lock() else {
        return;
    };
    loop {
        let Ok((guard, _)) = wake.wait_timeout_while(stopped, BEAT_INTERVAL, |s| !*s) else {
            return;
        };
        stopped = guard;
        if *stopped {
            return;
        }
        if let Ok(mut b) = beat.lock() {
            b.beat = unix_now();
            // A beat that fails (a file system refusing a write for a moment) is retried at
            // the next; only a long silence makes the driver look lost.
            let _ = b.save(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo(tmp: &Path) -> (PathBuf, State) {
        let dir = crate::campaign::demo::init_demo(tmp, Some(0.0)).unwrap();
        let state = State::load(&dir).unwrap();
        (dir, state)
    }

    fn beat_at(dir: &Path, pid: u32, host: &str, beat_ago: u64, ended: bool) -> SystemTime {
        let now = SystemTime::now();
        let now_s = unix_seconds(now);
        Heartbeat {
            pid,
            host: host.into(),
            started: now_s - beat_ago - 100,
            beat: now_s - beat_ago,
            ended: ended.then(|| Ended {
                at: now_s - beat_ago,
                how: "stopped".into(),
            }),
        }
        .save(dir)
        .unwrap();
        now
    }

    #[test]
    fn no_heartbeat_is_no_driver() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        let s = driver_state_of(&state, &dir, SystemTime::now());
        assert_eq!(s, DriverState::None);
        assert!(!s.alive());
        assert_eq!(s.text(&dir), "no driver running");
    }

    /// The driver's lock, as a live driver holds it.
    fn hold(dir: &Path) -> HeldLock {
        HeldLock::take(&dir.join(DRIVER_LOCK_FILE), Duration::ZERO)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_fresh_beat_of_a_live_process_is_running() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        let _lock = hold(&dir);
        let now = beat_at(&dir, std::process::id(), &host_name(), 2, false);
        let s = driver_state_of(&state, &dir, now);
        assert_eq!(
            s,
            DriverState::Running {
                pid: std::process::id(),
                host: host_name(),
                seen_s: 2
            }
        );
        assert!(s.alive());
        assert_eq!(s.last_seen_s(), Some(2));
        assert_eq!(
            s.text(&dir),
            format!("running (driver pid {}, seen 2 s ago)", std::process::id())
        );
    }

    #[test]
    fn another_hosts_beat_is_lost_once_this_host_saw_it_unchanged_whatever_its_date() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        // Dated a year ahead by that host's clock: its date decides nothing.
        let year = 365 * 86_400;
        let t0 = SystemTime::now();
        Heartbeat {
            pid: 4242,
            host: "some-other-node".into(),
            started: unix_seconds(t0) + year,
            beat: unix_seconds(t0) + year,
            ended: None,
        }
        .save(&dir)
        .unwrap();
        let s = driver_state_of(&state, &dir, t0);
        assert!(s.alive(), "first seen now: {s:?}");
        let s = driver_state_of(&state, &dir, t0 + Duration::from_secs(40));
        assert_eq!(
            s,
            DriverState::Lost {
                pid: 4242,
                host: "some-other-node".into(),
                gone_s: 40
            }
        );
        assert!(!s.alive());
        let text = s.text(&dir);
        assert!(
            text.starts_with("driver lost (pid 4242 on some-other-node gone 40 s ago; runs may still be queued; resume with autolb campaign run "),
            "{text}"
        );
        // Dated a year back, as a clock behind would: a change seen now, so alive.
        let t1 = t0 + Duration::from_secs(41);
        Heartbeat {
            pid: 4242,
            host: "some-other-node".into(),
            started: unix_seconds(t0) - year,
            beat: unix_seconds(t0) - year,
            ended: None,
        }
        .save(&dir)
        .unwrap();
        assert!(driver_state_of(&state, &dir, t1).alive());
        // A lock held (a file system whose locks reach across hosts) keeps it alive.
        let _lock = hold(&dir);
        assert!(driver_state_of(&state, &dir, t1 + Duration::from_secs(60)).alive());
    }

    #[test]
    fn a_heartbeat_deleted_under_a_driver_holding_its_lock_is_a_running_driver() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        let lock = hold(&dir);
        assert!(!dir.join(HEARTBEAT_FILE).exists());
        assert_eq!(
            driver_state_of(&state, &dir, SystemTime::now()).name(),
            "running"
        );
        drop(lock);
        assert_eq!(
            driver_state_of(&state, &dir, SystemTime::now()),
            DriverState::None
        );
    }

    #[test]
    fn a_beat_on_this_host_is_alive_by_the_lock_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        // This process is alive, but holds no lock: a driver that died, its pid reused.
        let now = beat_at(&dir, std::process::id(), &host_name(), 1, false);
        let s = driver_state_of(&state, &dir, now);
        assert!(matches!(s, DriverState::Lost { gone_s: 1, .. }), "{s:?}");
        // A driver in another PID namespace (pid 1 there), or stopped for a minute: alive.
        Heartbeat {
            pid: 1,
            ..Heartbeat::of_this_process()
        }
        .save(&dir)
        .unwrap();
        let lock = hold(&dir);
        let later = SystemTime::now() + Duration::from_secs(60);
        let s = driver_state_of(&state, &dir, later);
        assert!(s.alive(), "{s:?}");
        assert_eq!(s.rechecked(&dir), s);
        assert!(
            s.text(&dir)
                .contains("holds its lock, but has not beaten for"),
            "{}",
            s.text(&dir)
        );
        drop(lock);
        assert_eq!(s.rechecked(&dir).name(), "lost");
        assert_eq!(driver_state_of(&state, &dir, later).name(), "lost");
    }

    #[test]
    fn an_ended_heartbeat_is_no_driver_and_a_finished_campaign_is_done() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = demo(tmp.path());
        let now = beat_at(&dir, std::process::id(), &host_name(), 1, true);
        assert_eq!(driver_state_of(&state, &dir, now), DriverState::None);
        state.cancelled = true;
        let s = driver_state_of(&state, &dir, now);
        assert_eq!(s, DriverState::Done);
        assert_eq!(s.view().state, "done");
    }

    #[test]
    fn queued_runs_and_nothing_moving_for_a_quarter_hour_is_stalled() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        // The state was saved 40 minutes ago as seen from `now`; the driver still beats.
        let _lock = hold(&dir);
        let later = SystemTime::now() + Duration::from_secs(40 * 60);
        Heartbeat {
            beat: unix_seconds(later) - 1,
            ..Heartbeat::of_this_process()
        }
        .save(&dir)
        .unwrap();
        let s = driver_state_of(&state, &dir, later);
        match &s {
            DriverState::Stalled { idle_s, seen_s, .. } => {
                assert!((39 * 60..=41 * 60).contains(idle_s), "{idle_s}");
                assert_eq!(*seen_s, 1);
            }
            other => panic!("{other:?}"),
        }
        assert!(s.alive());
        assert!(
            s.text(&dir).contains("no progress for 40 min"),
            "{}",
            s.text(&dir)
        );
        // Ten minutes is not a stall.
        let sooner = SystemTime::now() + Duration::from_secs(10 * 60);
        Heartbeat {
            beat: unix_seconds(sooner),
            ..Heartbeat::of_this_process()
        }
        .save(&dir)
        .unwrap();
        assert!(matches!(
            driver_state_of(&state, &dir, sooner),
            DriverState::Running { .. }
        ));
    }

    #[test]
    fn a_running_state_ages_into_lost() {
        let s = DriverState::Running {
            pid: 7,
            host: "h".into(),
            seen_s: 2,
        };
        assert_eq!(s.aged(Duration::from_secs(3)).last_seen_s(), Some(5));
        assert!(s.aged(Duration::from_secs(3)).alive());
        assert_eq!(
            s.aged(Duration::from_secs(8)),
            DriverState::Lost {
                pid: 7,
                host: "h".into(),
                gone_s: 10
            }
        );
        assert_eq!(
            DriverState::Done.aged(Duration::from_secs(60)),
            DriverState::Done
        );
        // A part of a second counts as one: never younger than a new reading would say.
        assert_eq!(s.aged(Duration::from_millis(7_100)).name(), "lost");
    }

    #[test]
    fn only_another_hosts_driver_ages_into_lost_and_a_recheck_asks_the_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let running = |host: String| DriverState::Running {
            pid: 7,
            host,
            seen_s: 3,
        };
        let here = running(host_name());
        assert!(
            here.aged(Duration::from_secs(60)).alive(),
            "its lock decides"
        );
        let lock = hold(tmp.path());
        assert_eq!(here.rechecked(tmp.path()), here);
        drop(lock);
        assert_eq!(
            here.rechecked(tmp.path()),
            DriverState::Lost {
                pid: 7,
                host: host_name(),
                gone_s: 3
            }
        );
        let afar = running("some-other-node".into());
        assert_eq!(
            afar.rechecked(tmp.path()),
            afar,
            "another host's lock may not be seen"
        );
    }

    #[test]
    fn beating_writes_beats_and_marks_the_end() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, state) = demo(tmp.path());
        let beating = Beating::start(&dir).unwrap();
        let first = Heartbeat::load(&dir).unwrap();
        assert_eq!(first.pid, std::process::id());
        assert_eq!(first.ended, None);
        assert!(driver_state_of(&state, &dir, SystemTime::now()).alive());
        std::thread::sleep(BEAT_INTERVAL + Duration::from_millis(1200));
        let later = Heartbeat::load(&dir).unwrap();
        assert!(later.beat > first.beat, "{first:?} then {later:?}");
        beating.end("stopped");
        let end = Heartbeat::load(&dir).unwrap();
        assert_eq!(end.ended.as_ref().map(|e| e.how.as_str()), Some("stopped"));
        assert_eq!(
            driver_state_of(&state, &dir, SystemTime::now()),
            DriverState::None
        );
    }

    #[test]
    fn a_campaign_made_again_with_force_forgets_the_last_ones_driver() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, _) = demo(tmp.path());
        beat_at(&dir, 4242, "some-other-node", 60, false);
        let file = tmp.path().join("demo-campaign.toml");
        crate::campaign::demo::init_demo_at(&dir, &file, Some(0.0), true).unwrap();
        assert_eq!(driver_state(&dir).unwrap(), DriverState::None);
    }

    #[test]
    fn only_a_lost_sim_driver_took_its_runs_along() {
        let dir = Path::new("/c");
        let lost = DriverState::Lost {
            pid: 9,
            host: host_name(),
            gone_s: 12,
        };
        assert!(lost.took_runs_with_it("sim"));
        assert_eq!(
            lost.text_for(dir, "sim"),
            "driver lost (pid 9 gone 12 s ago; runs of the sim executor ended with it; resume with autolb campaign run /c to run them again)"
        );
        // Processes of their own and batch jobs may outlive their driver.
        for executor in ["command", "slurm", "external"] {
            assert!(!lost.took_runs_with_it(executor), "{executor}");
            assert_eq!(lost.text_for(dir, executor), lost.text(dir));
        }
        let alive = DriverState::Running {
            pid: 9,
            host: host_name(),
            seen_s: 1,
        };
        for state in [alive, DriverState::None, DriverState::Done] {
            assert!(!state.took_runs_with_it("sim"), "{state:?}");
            assert_eq!(state.text_for(dir, "sim"), state.text(dir));
        }
    }

    #[test]
    fn a_campaign_without_a_driver_of_its_own_waits_for_its_workflow_manager() {
        let dir = Path::new("/c");
        let none = DriverState::None;
        assert_eq!(
            none.text_for(dir, EXTERNAL_EXECUTOR),
            "workflow manager starts the runs; those waiting: autolb campaign next /c"
        );
        assert_eq!(none.short_text_for(EXTERNAL_EXECUTOR), "workflow manager");
        // A campaign with an executor needs `campaign run`; a lost driver is lost whoever
        // runs the runs.
        assert_eq!(none.text_for(dir, "command"), "no driver running");
        assert_eq!(none.short_text_for("slurm"), "no driver");
        let lost = DriverState::Lost {
            pid: 9,
            host: "n1".into(),
            gone_s: 12,
        };
        assert_eq!(lost.short_text_for(EXTERNAL_EXECUTOR), lost.short_text());
    }

    #[test]
    fn the_json_view_names_state_pid_alive_and_last_seen() {
        let s = DriverState::Lost {
            pid: 9,
            host: "n1".into(),
            gone_s: 12,
        };
        let v = serde_json::to_value(s.view()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"state": "lost", "pid": 9, "host": "n1", "alive": false, "last_seen_s": 12})
        );
    }
}
