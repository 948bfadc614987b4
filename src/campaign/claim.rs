//! One claim per run attempt, so that a run is started once whoever starts it: a driver
//! (`campaign run`), `campaign exec` from a workflow manager, or the same job retried or
//! duplicated by that workflow manager.
//!
//! A claim is the file `DIR/claims/<run id>.json` (holder's pid, host, process start time,
//! start time and a token unique to the claim), written atomically while the campaign lock is
//! held, after checking under that lock that the run is still waiting and unclaimed. So of any
//! number of `exec` of one run, one creates the claim and starts the command; the others find
//! it and start nothing. A driver holds the campaign lock for as long as it runs, which is its
//! claim on every run: no `exec` claims anything meanwhile, and a driver does not start while
//! a live claim exists.
//!
//! The holder also keeps an exclusive `flock` on `DIR/claims/<run id>.lock` for as long as it
//! lives ([`super::liveness`]): that lock, not the file's content, says the claim is live, so
//! a claim file cut, emptied or deleted under a running `exec` still keeps every other
//! process out, and a holder in another PID namespace or stopped by SIGSTOP is alive. Only a
//! free lock of a holder on this host means the holder died; a claim from another host (whose
//! lock this host may not see) lives while this host sees it touched: the holder touches it
//! every [`CLAIM_HEARTBEAT`], and one this host has seen unchanged for [`CLAIM_STALE`] is
//! dead, whatever date it carries.
//!
//! A dead holder's claim is recovered by the next process that takes the lock and looks at
//! it, once what the holder started is gone: while the run's supervisor still holds its lock
//! in the run directory (it stops the command within its grace time when the holder died),
//! the run is still ending and nobody starts it; processes still marked with the claim's
//! [`CLAIM_VAR`] are ended, and if some cannot be, the claim stays.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::liveness::{probe, HeldLock, Probe};
use super::state::{write_atomically, State};
use super::CampaignError;
use crate::executor::command::{reap, supervisor::RUNNING_LOCK_FILE};

/// The directory of the claim files inside a campaign directory.
pub const CLAIMS_DIR: &str = "claims";

/// Environment variable carrying the claim's token into the command `exec` starts, so that
/// what a dead holder's command left running can be found and ended.
pub const CLAIM_VAR: &str = "AUTOLB_CLAIM";

/// How often the holder of a claim touches it.
pub const CLAIM_HEARTBEAT: Duration = Duration::from_secs(60);

/// A claim from another host not touched for this long is taken as dead (its node was lost):
/// ten heartbeats, so a busy file system delaying a few does not free a live run.
pub const CLAIM_STALE: Duration = Duration::from_secs(600);

/// How long `exec`'s command may take to end after the signal that stops it, before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// What a claim file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    /// The claimed run's id (`iII-tTT-rR`).
    pub run: String,
    /// Unique to this claim: releasing checks it, so nobody removes another's claim.
    pub token: String,
    /// The holder's process id on `host`.
    pub pid: u32,
    /// The host name of the holder's machine: only there can its pid be checked.
    pub host: String,
    /// The holder's start time in clock ticks since boot (Linux), to tell a reused pid.
    #[serde(default)]
    pub pid_start: Option<u64>,
    /// When the claim was taken, seconds since the Unix epoch.
    pub started: f64,
}

impl ClaimRecord {
    /// For messages: `` `autolb campaign exec`, pid 1234 on host node7, claimed 12 s ago ``.
    pub fn describe(&self) -> String {
        let ago = now_s() - self.started;
        format!(
            "`autolb campaign exec`, pid {} on host {}, claimed {:.0} s ago",
            self.pid,
            self.host,
            ago.max(0.0)
        )
    }
}

/// Who holds a live claim, as far as its file tells.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimHolder {
    /// The claim file names it.
    Known(ClaimRecord),
    /// A live process holds the claim's lock, but its claim file is missing or unreadable
    /// (cut or deleted under it); `why` says which.
    Unnamed {
        /// What is wrong with the claim file.
        why: String,
    },
}

impl ClaimHolder {
    /// For messages, as [`ClaimRecord::describe`]; an unnamed holder is described by its lock.
    pub fn describe(&self) -> String {
        match self {
            ClaimHolder::Known(r) => r.describe(),
            ClaimHolder::Unnamed { why } => {
                format!("`autolb campaign exec` (it holds the claim's lock; its claim file {why})")
            }
        }
    }

    /// The claim's token, when its file could be read.
    pub fn token(&self) -> Option<&str> {
        match self {
            ClaimHolder::Known(r) => Some(&r.token),
            ClaimHolder::Unnamed { .. } => None,
        }
    }
}

/// A claim held by this process: its record and the lock that makes it live. Dropping it
/// releases it (removes the file if it is still this claim's; the lock goes with the value).
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    record: ClaimRecord,
    _lock: HeldLock,
    /// Set by [`Claim::keep`]: dropping it leaves the file.
    kept: bool,
}

impl Claim {
    /// The claim's unique token: a record that carries it may record the claimed run while the
    /// claim lives, and the command's environment carries it in [`CLAIM_VAR`] so that what the
    /// command leaves running can be ended.
    pub fn token(&self) -> &str {
        &self.record.token
    }

    /// The id of the claimed run.
    pub fn run(&self) -> &str {
        &self.record.run
    }

    /// Touches the claim file so that hosts that cannot see its lock see it is alive, and
    /// writes it again when it was cut or deleted under this process (one that holds another
    /// claim's token is left alone).
    pub fn heartbeat(&self) {
        match read_claim(&self.path) {
            Some(Ok(r)) if r.token != self.record.token => {}
            Some(Ok(_)) => {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.path) {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
            None | Some(Err(_)) => {
                let _ = write_record(&self.path, &self.record);
            }
        }
    }

    /// Keeps the claim file when this process ends: what its command started could not be
    /// ended, and a retry must find the claim (its holder gone, the processes still marked
    /// with its token) and wait rather than start the run beside them.
    pub fn keep(mut self) {
        self.kept = true;
    }

    /// Removes the claim file if it is still this claim (`record` removes it under the lock
    /// once the run is recorded; this is for the ways out without a record).
    fn release(&self) {
        match read_claim(&self.path) {
            Some(Ok(r)) if r.token != self.record.token => {}
            _ => {
                let _ = std::fs::remove_file(&self.path);
                self._lock.remove_file();
            }
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.kept {
            self.release();
        }
    }
}

/// The claim file of run `run_id`.
pub fn claim_path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(CLAIMS_DIR).join(format!("{run_id}.json"))
}

/// The lock file of run `run_id`'s claim: never replaced while a holder uses it.
pub fn claim_lock_path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(CLAIMS_DIR).join(format!("{run_id}.lock"))
}

/// The claim file's content; `None` without one, `Some(Err)` when it cannot be read as one.
fn read_claim(path: &Path) -> Option<Result<ClaimRecord, String>> {
    let bytes = match crate::fsutil::read_regular_file(path, crate::limits::MAX_SMALL_FILE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(e.to_string())),
    };
    Some(serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
}

fn write_record(path: &Path, record: &ClaimRecord) -> Result<(), CampaignError> {
    let text = serde_json::to_string_pretty(record).map_err(|e| CampaignError::BadState {
        file: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_atomically(path, text.as_bytes())
}

/// The live claim on run `run_id`, if any (read only: a dead one is left for a lock holder
/// to recover). A held claim lock is a live claim whatever its file says.
pub fn live_claim(dir: &Path, run_id: &str) -> Option<ClaimHolder> {
    let path = claim_path(dir, run_id);
    let lock = probe(&claim_lock_path(dir, run_id));
    match read_claim(&path) {
        Some(Ok(r)) if lock == Probe::Held || is_live(dir, &r, lock) => Some(ClaimHolder::Known(r)),
        None if lock == Probe::Held => Some(ClaimHolder::Unnamed {
            why: "is missing".into(),
        }),
        Some(Err(why)) if lock == Probe::Held => Some(ClaimHolder::Unnamed {
            why: format!("is unreadable: {why}"),
        }),
        _ => None,
    }
}

/// Whether the holder of a readable claim may still be running its command, its lock found
/// `lock`: held is alive; free on this host is dead; from another host (whose locks this host
/// may not see), alive while this host has seen the claim touched within [`CLAIM_STALE`];
/// on a file system without locks, the pid decides on this host.
fn is_live(dir: &Path, record: &ClaimRecord, lock: Probe) -> bool {
    let here = record.host == hostname();
    match lock {
        Probe::Held => true,
        Probe::Free if here => false,
        Probe::Unknown if here => process_alive(record.pid, record.pid_start),
        _ => {
            let file = format!("{CLAIMS_DIR}/{}.json", record.run);
            super::liveness::unchanged_for(dir, &file, SystemTime::now())
                .is_some_and(|age| age < CLAIM_STALE)
        }
    }
}

/// Where the claim on a run stands for a process holding the campaign lock
/// ([`recover_claim`]).
#[derive(Debug)]
pub(crate) enum Recovery {
    /// Nobody runs it: it may be claimed. The note tells of a dead holder's claim that was
    /// recovered (and what it left running that was ended), if any.
    Free {
        /// What was recovered, for the user.
        note: Option<String>,
    },
    /// A live holder runs it.
    Live(ClaimHolder),
    /// Its holder is gone, but what it started has not ended yet (the run's supervisor is
    /// stopping it, or processes marked with the claim's token would not die): the claim
    /// stays until it has. The text says what still runs.
    Ending(String),
}

/// For a caller holding the campaign lock: where the claim on `run_id` (whose run directory
/// is `run_dir`) stands, after recovering a dead (or unreadable) holder's claim once what it
/// started is gone. Recovering ends every process still marked with its token and removes
/// the file; the note says so.
pub(crate) fn recover_claim(
    dir: &Path,
    run_id: &str,
    run_dir: &Path,
) -> Result<Recovery, CampaignError> {
    if let Some(holder) = live_claim(dir, run_id) {
        return Ok(Recovery::Live(holder));
    }
    let path = claim_path(dir, run_id);
    // A holder that died leaves its run's supervisor stopping the command (within its grace
    // time), or writing the status of a command that finished: let it end first.
    if probe(&run_dir.join(RUNNING_LOCK_FILE)) == Probe::Held {
        return Ok(Recovery::Ending(format!(
            "the command an earlier attempt started is still ending in {}",
            run_dir.display()
        )));
    }
    let note = match read_claim(&path) {
        None => return Ok(Recovery::Free { note: None }),
        Some(Ok(r)) => {
            // The cgroup `exec` made for the command (where there is one) holds even what
            // left its process group and environment.
            if let Some(cgroup) = reap::run_cgroup_path(&reap::campaign_key(dir), &r.token) {
                if cgroup.exists() {
                    reap::end_cgroup(&cgroup);
                }
            }
            let ended = reap::kill_by_env(CLAIM_VAR, &r.token);
            if !ended.is_empty() && !gone(CLAIM_VAR, &r.token, Duration::from_secs(2)) {
                return Ok(Recovery::Ending(format!(
                    "processes of the command that pid {} on host {} started do not end: {:?}",
                    r.pid,
                    r.host,
                    reap::processes_by_env(CLAIM_VAR, &r.token)
                )));
            }
            format!(
                "recovered the claim on run {run_id} left by pid {} on host {}, which is gone{}",
                r.pid,
                r.host,
                if ended.is_empty() {
                    String::new()
                } else {
                    format!(" (ended {} process(es) it left running)", ended.len())
                }
            )
        }
        Some(Err(reason)) => format!("removed the unreadable claim on run {run_id} ({reason})"),
    };
    remove(&path)?;
    remove(&claim_lock_path(dir, run_id))?;
    Ok(Recovery::Free { note: Some(note) })
}

/// Waits up to `limit` for every process marked `var=value` to be gone (after a SIGKILL they
/// go within milliseconds, unless stuck in the kernel); true when they are.
pub fn gone(var: &str, value: &str, limit: Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if reap::processes_by_env(var, value).is_empty() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn remove(path: &Path) -> Result<(), CampaignError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(CampaignError::io(
            format!("cannot remove {}", path.display()),
            e,
        )),
    }
}

/// For a caller holding the campaign lock that found the run waiting and its claim free
/// ([`Recovery::Free`]): takes the claim on `run_id`, its lock first.
pub(crate) fn create_claim(dir: &Path, run_id: &str) -> Result<Claim, CampaignError> {
    let claims = dir.join(CLAIMS_DIR);
    std::fs::create_dir_all(&claims)
        .map_err(|e| CampaignError::io(format!("cannot create {}", claims.display()), e))?;
    let lock_path = claim_lock_path(dir, run_id);
    // A probe holds the lock for an instant; a live holder was ruled out under the lock.
    let lock = HeldLock::take(&lock_path, super::state::LOCK_LINGER)
        .map_err(|e| CampaignError::io(format!("cannot lock {}", lock_path.display()), e))?
        .ok_or_else(|| CampaignError::Claimed {
            run: run_id.to_string(),
            holder: ClaimHolder::Unnamed {
                why: "appeared meanwhile".into(),
            }
            .describe(),
        })?;
    let pid = std::process::id();
    let started = now_s();
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let record = ClaimRecord {
        run: run_id.to_string(),
        token: format!("{pid}-{nanos:x}"),
        pid,
        host: hostname(),
        pid_start: process_start(pid).map(|(_, start)| start),
        started,
    };
    let path = claim_path(dir, run_id);
    write_record(&path, &record)?;
    Ok(Claim {
        path,
        record,
        _lock: lock,
        kept: false,
    })
}

/// For a caller holding the campaign lock, after recording run `run_id`: removes its claim
/// when it is `token`'s (the recorder's own) or dead, and the claim's lock file when nobody
/// else holds it (nobody claims a recorded run again, so it is not needed any more).
pub(crate) fn release_recorded(dir: &Path, run_id: &str, token: Option<&str>) {
    let path = claim_path(dir, run_id);
    let lock = claim_lock_path(dir, run_id);
    let own = match read_claim(&path) {
        Some(Ok(r)) => Some(r.token.as_str()) == token,
        // Cut or deleted under its holder: the recorder holding a claim is that holder.
        _ => token.is_some(),
    };
    if own || live_claim(dir, run_id).is_none() {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&lock);
    }
}

/// For a driver that took the campaign lock: refuses to drive while a claimed run is being
/// run by `exec` (or what a dead `exec` started is still ending), recovers dead claims, and
/// removes claims of runs that are recorded (a holder killed between its record and its
/// release) or gone. Returns notes on what it recovered.
pub fn check_before_driving(dir: &Path, state: &State) -> Result<Vec<String>, CampaignError> {
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join(CLAIMS_DIR)) else {
        return Ok(notes);
    };
    // Claim files and lock files: a claim file deleted under its holder leaves the lock.
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|n| {
            n.strip_suffix(".json")
                .or_else(|| n.strip_suffix(".lock"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    for run_id in names {
        let Some((i, t, r)) = state
            .find_run(&run_id)
            .filter(|&pos| !state.run(pos).state.is_terminal())
        else {
            if live_claim(dir, &run_id).is_none() {
                remove(&claim_path(dir, &run_id))?;
                remove(&claim_lock_path(dir, &run_id))?;
            }
            continue;
        };
        let run_dir = state.request(dir, i, t, r).run_dir;
        match recover_claim(dir, &run_id, &run_dir)? {
            Recovery::Free { note } => notes.extend(note),
            Recovery::Live(holder) => {
                return Err(CampaignError::Claimed {
                    run: run_id,
                    holder: holder.describe(),
                })
            }
            Recovery::Ending(what) => return Err(CampaignError::Ending { run: run_id, what }),
        }
    }
    Ok(notes)
}

/// For `campaign cancel`, holding the lock: ends the commands of the live claims on this
/// host's unfinished runs (through [`CLAIM_VAR`]). Returns what it did, and the claims of
/// other hosts it cannot reach, as warnings.
pub(crate) fn end_claimed_commands(dir: &Path, state: &State) -> Vec<String> {
    let mut out = Vec::new();
    let here = hostname();
    for pos in state.run_positions() {
        let run = state.run(pos);
        if run.state.is_terminal() {
            continue;
        }
        let Some(holder) = live_claim(dir, &run.id) else {
            continue;
        };
        let ClaimHolder::Known(holder) = holder else {
            out.push(format!(
                "run {} is being run by {}: its processes cannot be found without the claim's token",
                run.id,
                holder.describe()
            ));
            continue;
        };
        if holder.host == here {
            let ended = reap::kill_by_env(CLAIM_VAR, &holder.token);
            out.push(format!(
                "ended the command of run {} that {} ran ({} process(es))",
                run.id,
                holder.describe(),
                ended.len()
            ));
        } else {
            out.push(format!(
                "run {} is being run by {}: cancel that job too",
                run.id,
                holder.describe()
            ));
        }
    }
    out
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// This machine's host name, as claims and heartbeats record it.
pub fn hostname() -> String {
    super::liveness::host_name()
}

/// A process's state letter and start time (clock ticks since boot) from `/proc/PID/stat`.
fn process_start(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// Whether `pid` is a live process, and the one that started at `start` when that is known.
fn process_alive(pid: u32, start: Option<u64>) -> bool {
    let Ok(pid_t) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks for the process; no memory is involved.
    let rc = unsafe { libc::kill(pid_t, 0) };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return false;
    }
    match process_start(pid) {
        Some((state, _)) if state == 'Z' || state == 'X' => false,
        Some((_, now)) => start.is_none_or(|s| s == now),
        // No /proc: kill said it exists.
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: u32, host: &str, pid_start: Option<u64>) -> ClaimRecord {
        ClaimRecord {
            run: "i00-t00-r1".into(),
            token: "t".into(),
            pid,
            host: host.into(),
            pid_start,
            started: now_s(),
        }
    }

    #[test]
    fn this_process_is_alive_and_a_reused_or_gone_pid_is_not() {
        let me = std::process::id();
        let start = process_start(me).map(|(_, s)| s);
        assert!(start.is_some(), "Linux has /proc");
        assert!(process_alive(me, start));
        assert!(process_alive(me, None));
        assert!(
            !process_alive(me, start.map(|s| s + 1)),
            "another start time"
        );
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid, None), "reaped: gone");
    }

    #[test]
    fn a_claim_lives_by_its_lock_here_and_by_changes_seen_from_another_host() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(CLAIMS_DIR)).unwrap();
        let path = claim_path(dir.path(), "i00-t00-r1");
        std::fs::write(&path, "{}").unwrap();
        // Dated a year ahead, as another host's clock or a hand edit may leave it.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() + Duration::from_secs(365 * 86_400))
            .unwrap();
        let other = record(1, "another-host-that-is-not-this-one", None);
        assert!(
            is_live(dir.path(), &other, Probe::Free),
            "first seen: alive"
        );
        // Unchanged as this host saw it for longer than CLAIM_STALE: dead, its date ignored.
        let seen = dir.path().join(super::super::liveness::SEEN_DIR);
        let memory = seen.join(format!("{}.json", super::super::liveness::host_name()));
        let text = std::fs::read_to_string(&memory).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let since = v["claims/i00-t00-r1.json"]["since"].as_u64().unwrap();
        v["claims/i00-t00-r1.json"]["since"] = (since - CLAIM_STALE.as_secs() - 1).into();
        std::fs::write(&memory, v.to_string()).unwrap();
        assert!(
            !is_live(dir.path(), &other, Probe::Free),
            "unchanged too long"
        );
        assert!(is_live(dir.path(), &other, Probe::Held), "its lock is held");
        // On this host the lock alone decides: not the pid (this process is alive).
        let here = record(std::process::id(), &hostname(), None);
        assert!(!is_live(dir.path(), &here, Probe::Free));
        assert!(is_live(dir.path(), &here, Probe::Held));
        assert!(
            is_live(dir.path(), &here, Probe::Unknown),
            "no locks: the pid"
        );
    }

    #[test]
    fn a_claim_is_released_only_by_its_own_holder() {
        let dir = tempfile::tempdir().unwrap();
        let claim = create_claim(dir.path(), "i00-t00-r1").unwrap();
        let path = claim_path(dir.path(), "i00-t00-r1");
        assert_eq!(
            live_claim(dir.path(), "i00-t00-r1").unwrap().token(),
            Some(claim.token())
        );
        // Someone else's claim in its place (ours was recovered meanwhile) stays.
        let mut theirs = record(std::process::id(), &hostname(), None);
        theirs.token = "theirs".into();
        std::fs::write(&path, serde_json::to_string(&theirs).unwrap()).unwrap();
        drop(claim);
        assert!(path.exists());
        release_recorded(dir.path(), "i00-t00-r1", Some("theirs"));
        assert!(!path.exists());
        assert!(!claim_lock_path(dir.path(), "i00-t00-r1").exists());
    }

    #[test]
    fn a_cut_or_deleted_claim_whose_lock_is_held_is_busy_and_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        let claim = create_claim(dir.path(), "i00-t00-r1").unwrap();
        let path = claim_path(dir.path(), "i00-t00-r1");
        for attack in ["cut", "deleted"] {
            if attack == "cut" {
                std::fs::write(&path, "{ \"run\": \"i00").unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
            match recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap() {
                Recovery::Live(ClaimHolder::Unnamed { why }) => {
                    assert!(
                        why.contains(if attack == "cut" {
                            "unreadable"
                        } else {
                            "missing"
                        }),
                        "{why}"
                    )
                }
                other => panic!("{attack}: {other:?}"),
            }
            assert!(create_claim(dir.path(), "i00-t00-r1").is_err(), "{attack}");
            claim.heartbeat();
            assert_eq!(
                live_claim(dir.path(), "i00-t00-r1").unwrap().token(),
                Some(claim.token()),
                "{attack}: the holder wrote it again"
            );
        }
    }

    #[test]
    fn a_dead_or_unreadable_claim_is_recovered_and_a_live_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        let claim = create_claim(dir.path(), "i00-t00-r1").unwrap();
        match recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap() {
            Recovery::Live(holder) => assert_eq!(holder.token(), Some(claim.token())),
            other => panic!("{other:?}"),
        }
        // Its holder dies: the lock goes, the file stays.
        claim.keep();
        let path = claim_path(dir.path(), "i00-t00-r1");
        assert!(path.exists());
        match recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap() {
            Recovery::Free { note } => assert!(note.unwrap().contains("which is gone")),
            other => panic!("{other:?}"),
        }
        assert!(!path.exists());
        std::fs::write(&path, "{ cut").unwrap();
        match recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap() {
            Recovery::Free { note } => assert!(note.unwrap().contains("unreadable")),
            other => panic!("{other:?}"),
        }
        assert!(!path.exists());
    }

    #[test]
    fn a_run_whose_supervisor_still_holds_its_directory_is_ending() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        std::fs::create_dir_all(&run_dir).unwrap();
        let supervisor = HeldLock::take(&run_dir.join(RUNNING_LOCK_FILE), Duration::ZERO)
            .unwrap()
            .unwrap();
        assert!(matches!(
            recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap(),
            Recovery::Ending(_)
        ));
        drop(supervisor);
        assert!(matches!(
            recover_claim(dir.path(), "i00-t00-r1", &run_dir).unwrap(),
            Recovery::Free { note: None }
        ));
    }
}
