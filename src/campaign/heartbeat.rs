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

mod beating;
mod words;
pub use beating::Beating;
pub use words::DriverView;

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

#[cfg(test)]
mod tests;
