//! Whether a driver or an `exec` is alive, from what the operating system knows rather than
//! from pids or clocks.
//!
//! * **On one host** a live holder keeps an exclusive `flock` on a lock file of its own
//!   ([`HeldLock`]) for as long as it lives; the kernel drops it the instant the holder dies,
//!   whatever killed it. [`probe`] asks for it without waiting. A pid cannot answer this: a
//!   process in another PID namespace has another pid there, and a stopped process (SIGSTOP)
//!   is alive but silent. A clock cannot either: a stopped driver beats no more.
//!   The lock file is never replaced or removed while in use: a holder that rewrites its
//!   claim or heartbeat atomically (a rename) gets a new inode each time, and a lock on that
//!   inode would be lost with the first rewrite.
//! * **From another host** a lock may not be visible (file systems that keep `flock` local to
//!   the client), so a free lock there proves nothing; the holder's file must keep changing.
//!   How long it has been unchanged is measured with this host's clock only ([`unchanged_for`]):
//!   the first look, and every change seen, counts as "now", so a date written by another
//!   host's clock (ahead by a year, or behind) never decides.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// What [`probe`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A live process holds the lock.
    Held,
    /// Nobody holds it (or the lock file does not exist).
    Free,
    /// The file system cannot say (it refuses locks).
    Unknown,
}

/// Whether someone holds an exclusive lock on `path`, without waiting. Takes a shared lock for
/// an instant when it is free, so a holder taking the lock retries briefly ([`HeldLock::take`]).
pub fn probe(path: &Path) -> Probe {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Probe::Free,
        Err(_) => return Probe::Unknown,
    };
    match fs4::FileExt::try_lock_shared(&file) {
        Ok(()) => {
            let _ = fs4::FileExt::unlock(&file);
            Probe::Free
        }
        Err(fs4::TryLockError::WouldBlock) => Probe::Held,
        Err(fs4::TryLockError::Error(_)) => Probe::Unknown,
    }
}

/// An exclusive `flock` on a lock file, held while the value lives (and by nothing else: the
/// descriptor is closed on exec, so the commands a holder starts do not keep it).
#[derive(Debug)]
pub struct HeldLock {
    _file: File,
    path: std::path::PathBuf,
}

impl HeldLock {
    /// Takes the lock on `path` (creating the file, never truncating or replacing it), retrying
    /// for up to `linger` while a [`probe`] holds it for an instant. `Ok(None)`: someone else
    /// holds it. A file system that refuses locks is an error: liveness could not be shown.
    ///
    /// A holder removes its lock file when it lets go (so that lock files do not pile up); a
    /// lock taken on a file removed meanwhile would guard nothing, so the lock is taken again
    /// on the file now at `path` until the two are the same.
    pub fn take(path: &Path, linger: Duration) -> std::io::Result<Option<HeldLock>> {
        use std::os::unix::fs::MetadataExt;
        let deadline = std::time::Instant::now() + linger;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {
                    let held = file.metadata()?;
                    let same = std::fs::metadata(path)
                        .is_ok_and(|m| m.ino() == held.ino() && m.dev() == held.dev());
                    if same {
                        return Ok(Some(HeldLock {
                            _file: file,
                            path: path.to_path_buf(),
                        }));
                    }
                }
                Err(fs4::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(fs4::TryLockError::WouldBlock) => return Ok(None),
                Err(fs4::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    /// Removes the lock file, still holding the lock (released when the value drops): a
    /// process that opened it before sees it removed once it gets the lock and tries again.
    pub fn remove_file(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Directory of the per-host memories [`unchanged_for`] keeps, inside a campaign directory.
pub const SEEN_DIR: &str = "seen";

/// What this host remembers of one watched file: what it looked like and when, by this
/// host's clock, it was first seen so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Seen {
    fingerprint: String,
    since: u64,
}

/// How long `file` (a path relative to the campaign directory `dir`) has looked the same to
/// this host: size, modification time as stored, inode and content. The first look and every
/// change count as now. The memory is `DIR/seen/<host>.json`, one per host so that each host
/// compares only readings of its own clock; when it cannot be written (a reader without
/// write access), every look is a first look, which errs on the side of alive. `None` when
/// the file cannot be read.
pub fn unchanged_for(dir: &Path, file: &str, now: SystemTime) -> Option<Duration> {
    let fingerprint = fingerprint(&dir.join(file))?;
    let now_s = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let memory = dir.join(SEEN_DIR).join(format!("{}.json", host_name()));
    let mut seen: BTreeMap<String, Seen> = crate::fsutil::read_small_text(&memory)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(s) = seen.get(file).filter(|s| s.fingerprint == fingerprint) {
        // A clock stepped back since: as if it changed now.
        return Some(Duration::from_secs(now_s.saturating_sub(s.since)));
    }
    seen.insert(
        file.to_string(),
        Seen {
            fingerprint,
            since: now_s,
        },
    );
    // Forget files that are gone (released claims), so the memory stays small.
    seen.retain(|name, _| dir.join(name).exists());
    if let Ok(text) = serde_json::to_string(&seen) {
        let _ = std::fs::create_dir_all(dir.join(SEEN_DIR));
        let _ = crate::fsutil::write_atomically(&memory, text.as_bytes());
    }
    Some(Duration::ZERO)
}

/// This host's name (`gethostname`), `localhost` when the system gives none.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    if name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

/// Size, stored modification time, inode and a hash of the content of `path`.
fn fingerprint(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let bytes = crate::fsutil::read_regular_file(path, crate::limits::MAX_SMALL_FILE_BYTES).ok()?;
    let hash = crate::executor::fnv1a(bytes.iter().copied());
    Some(format!(
        "{}:{}.{}:{}:{hash:016x}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ino()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_seen_held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        assert_eq!(probe(&path), Probe::Free, "no file: nobody");
        let held = HeldLock::take(&path, Duration::ZERO).unwrap().unwrap();
        assert_eq!(probe(&path), Probe::Held);
        assert!(HeldLock::take(&path, Duration::from_millis(50))
            .unwrap()
            .is_none());
        drop(held);
        assert_eq!(probe(&path), Probe::Free);
    }

    #[test]
    fn age_counts_from_when_this_host_saw_a_change_never_from_the_date_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("driver.json");
        std::fs::write(&file, "a").unwrap();
        // Dated a year ahead: the first look is now, and it ages from there.
        let year = Duration::from_secs(365 * 86_400);
        let f = File::options().write(true).open(&file).unwrap();
        f.set_modified(SystemTime::now() + year).unwrap();
        let t0 = SystemTime::now();
        assert_eq!(
            unchanged_for(dir.path(), "driver.json", t0),
            Some(Duration::ZERO)
        );
        let later = t0 + Duration::from_secs(30);
        assert_eq!(
            unchanged_for(dir.path(), "driver.json", later),
            Some(Duration::from_secs(30))
        );
        // A change (here: dated a year back) is seen now, whatever its date says.
        f.set_modified(SystemTime::now() - year).unwrap();
        assert_eq!(
            unchanged_for(dir.path(), "driver.json", later),
            Some(Duration::ZERO)
        );
        assert_eq!(unchanged_for(dir.path(), "gone.json", later), None);
    }
}
