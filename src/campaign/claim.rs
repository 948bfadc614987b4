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
//! A claim whose holder died is recovered (removed, and what its command left running is
//! ended through the [`CLAIM_VAR`] marker) by the next process that takes the lock and looks
//! at it, as the driver recovers its own runs. On the holder's host "died" means its pid is
//! gone, a zombie, or a different process (another start time); from another host it cannot
//! be asked, so there the holder's heartbeat decides: a claim not touched for
//! [`CLAIM_STALE`] is dead. The holder touches it every [`CLAIM_HEARTBEAT`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::state::{write_atomically, State};
use super::CampaignError;
use crate::executor::command::reap;

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

/// A claim held by this process; dropping it releases it (removes the file if it is still
/// this claim's).
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    record: ClaimRecord,
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

    /// Touches the claim file so that hosts that cannot ask for the pid see it is alive.
    pub fn heartbeat(&self) {
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.path) {
            let _ = f.set_modified(SystemTime::now());
        }
    }

    /// Removes the claim file if it is still this claim (`record` removes it under the lock
    /// once the run is recorded; this is for the ways out without a record).
    fn release(&self) {
        if matches!(read_claim(&self.path), Some(Ok(r)) if r.token == self.record.token) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release();
    }
}

/// The claim file of run `run_id`.
pub fn claim_path(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(CLAIMS_DIR).join(format!("{run_id}.json"))
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

/// The live claim on run `run_id`, if any (read only: a dead one is left for a lock holder
/// to recover).
pub fn live_claim(dir: &Path, run_id: &str) -> Option<ClaimRecord> {
    let path = claim_path(dir, run_id);
    match read_claim(&path)? {
        Ok(r) if is_live(&r, &path) => Some(r),
        _ => None,
    }
}

/// Whether the holder of a claim may still be running its command.
fn is_live(record: &ClaimRecord, path: &Path) -> bool {
    if record.host == hostname() {
        return process_alive(record.pid, record.pid_start);
    }
    let touched = std::fs::metadata(path).and_then(|m| m.modified());
    match touched {
        Ok(t) => SystemTime::now()
            .duration_since(t)
            .map(|age| age < CLAIM_STALE)
            .unwrap_or(true),
        Err(_) => false,
    }
}

/// For a caller holding the campaign lock: the live claim on `run_id`, after recovering a
/// dead (or unreadable) one. Recovering ends every process still marked with its token and
/// removes the file; the returned note says so.
pub(crate) fn recover_claim(
    dir: &Path,
    run_id: &str,
) -> Result<(Option<ClaimRecord>, Option<String>), CampaignError> {
    let path = claim_path(dir, run_id);
    let note = match read_claim(&path) {
        None => return Ok((None, None)),
        Some(Ok(r)) if is_live(&r, &path) => return Ok((Some(r), None)),
        Some(Ok(r)) => {
            let ended = reap::kill_by_env(CLAIM_VAR, &r.token);
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
    Ok((None, Some(note)))
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

/// For a caller holding the campaign lock that checked the run is waiting and unclaimed:
/// takes the claim on `run_id`.
pub(crate) fn create_claim(dir: &Path, run_id: &str) -> Result<Claim, CampaignError> {
    let claims = dir.join(CLAIMS_DIR);
    std::fs::create_dir_all(&claims)
        .map_err(|e| CampaignError::io(format!("cannot create {}", claims.display()), e))?;
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
    let text = serde_json::to_string_pretty(&record).map_err(|e| CampaignError::BadState {
        file: path.clone(),
        reason: e.to_string(),
    })?;
    write_atomically(&path, text.as_bytes())?;
    Ok(Claim { path, record })
}

/// For a caller holding the campaign lock, after recording run `run_id`: removes its claim
/// when it is `token`'s (the recorder's own) or dead.
pub(crate) fn release_recorded(dir: &Path, run_id: &str, token: Option<&str>) {
    let path = claim_path(dir, run_id);
    if let Some(Ok(r)) = read_claim(&path) {
        if Some(r.token.as_str()) == token || !is_live(&r, &path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// For a driver that took the campaign lock: refuses to drive while a claimed run is being
/// run by `exec`, recovers dead claims, and removes claims of runs that are recorded (a
/// holder killed between its record and its release) or gone. Returns notes on what it
/// recovered.
pub fn check_before_driving(dir: &Path, state: &State) -> Result<Vec<String>, CampaignError> {
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join(CLAIMS_DIR)) else {
        return Ok(notes);
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    for run_id in names {
        let waiting = state
            .find_run(&run_id)
            .is_some_and(|pos| !state.run(pos).state.is_terminal());
        if !waiting {
            remove(&claim_path(dir, &run_id))?;
            continue;
        }
        let (live, note) = recover_claim(dir, &run_id)?;
        if let Some(holder) = live {
            return Err(CampaignError::Claimed {
                run: run_id,
                holder: holder.describe(),
            });
        }
        notes.extend(note);
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

/// This machine's host name (empty when it cannot be read).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
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
    fn a_claim_from_another_host_lives_by_its_heartbeat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, "{}").unwrap();
        let other = record(1, "another-host-that-is-not-this-one", None);
        assert!(is_live(&other, &path), "just touched");
        let old = SystemTime::now() - CLAIM_STALE - Duration::from_secs(1);
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_modified(old).unwrap();
        assert!(!is_live(&other, &path), "not touched for too long");
        let here = record(std::process::id(), &hostname(), None);
        assert!(is_live(&here, &path), "on this host the pid decides");
    }

    #[test]
    fn a_claim_is_released_only_by_its_own_holder() {
        let dir = tempfile::tempdir().unwrap();
        let claim = create_claim(dir.path(), "i00-t00-r1").unwrap();
        let path = claim_path(dir.path(), "i00-t00-r1");
        assert_eq!(
            live_claim(dir.path(), "i00-t00-r1").unwrap().token,
            claim.token()
        );
        // Someone else's claim in its place (ours was recovered meanwhile) stays.
        let mut theirs = record(std::process::id(), &hostname(), None);
        theirs.token = "theirs".into();
        std::fs::write(&path, serde_json::to_string(&theirs).unwrap()).unwrap();
        drop(claim);
        assert!(path.exists());
        release_recorded(dir.path(), "i00-t00-r1", Some("theirs"));
        assert!(!path.exists());
    }

    #[test]
    fn a_dead_or_unreadable_claim_is_recovered_and_a_live_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let claim = create_claim(dir.path(), "i00-t00-r1").unwrap();
        let (live, note) = recover_claim(dir.path(), "i00-t00-r1").unwrap();
        assert_eq!(live.unwrap().token, claim.token());
        assert_eq!(note, None);
        std::mem::forget(claim);
        let path = claim_path(dir.path(), "i00-t00-r1");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = record(child.id(), &hostname(), None);
        child.wait().unwrap();
        std::fs::write(&path, serde_json::to_string(&dead).unwrap()).unwrap();
        let (live, note) = recover_claim(dir.path(), "i00-t00-r1").unwrap();
        assert_eq!(live, None);
        assert!(note.unwrap().contains("which is gone"));
        assert!(!path.exists());
        std::fs::write(&path, "{ cut").unwrap();
        let (live, note) = recover_claim(dir.path(), "i00-t00-r1").unwrap();
        assert_eq!(live, None);
        assert!(note.unwrap().contains("unreadable"));
        assert!(!path.exists());
    }
}
