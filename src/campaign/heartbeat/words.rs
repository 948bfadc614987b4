//! What every view says of the driver: [`DriverState`]'s words (long, short, for a row's
//! runs) and `campaign status --json`'s `"driver"`. One place, so `campaign status`, `campaign
//! next` and the terminal app never word the same state two ways.

use super::*;

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
