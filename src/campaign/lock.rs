//! The campaign's lock: one driver (or `campaign record`, `init`, `exec`) writes the state at a
//! time, and a killed holder never blocks the next one.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::CampaignError;

/// Name of the lock file inside a campaign directory.
pub const LOCK_FILE: &str = "campaign.lock";

/// How long [`Lock::acquire`] retries before it reports the holder.
pub const LOCK_LINGER: std::time::Duration = std::time::Duration::from_millis(500);

/// An exclusive OS lock on the campaign, held while the value lives.
///
/// It is a `flock` on the campaign directory itself (and, for older autolb versions, on
/// `DIR/campaign.lock`): a directory cannot be deleted and recreated under a driver the way a
/// lock file can, so deleting `campaign.lock` mid-run lets no second driver in. The OS releases
/// the lock when the holder dies, so a lock left by a killed driver never blocks (the "stale
/// lock" case); the holder's pid is written into `campaign.lock` for the message others see.
#[derive(Debug)]
pub struct Lock {
    _dir: File,
    _file: File,
}

impl Lock {
    /// Takes the lock or fails, naming the process that holds it. It tries for up to
    /// [`LOCK_LINGER`]: a driver killed while starting a run leaves the lock held for that
    /// instant by the half-started child (a forked process holds its parent's descriptors until
    /// it closes them), which must not make a restart fail.
    pub fn acquire(dir: &Path) -> Result<Lock, CampaignError> {
        Lock::acquire_wait(dir, LOCK_LINGER)
    }

    /// Takes the lock, waiting up to `timeout` for its holder to let go (for short writers such
    /// as `campaign record` next to a running driver); then fails like [`Lock::acquire`].
    pub fn acquire_wait(dir: &Path, timeout: std::time::Duration) -> Result<Lock, CampaignError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(lock) = Lock::try_acquire(dir)? {
                return Ok(lock);
            }
            if std::time::Instant::now() >= deadline {
                return Err(CampaignError::Locked {
                    dir: dir.to_path_buf(),
                    holder: holder_text(dir),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The lock, `None` when someone else holds it.
    fn try_acquire(dir: &Path) -> Result<Option<Lock>, CampaignError> {
        let dir_file = File::open(dir)
            .map_err(|e| CampaignError::io(format!("cannot open {}", dir.display()), e))?;
        if !try_lock(&dir_file, dir)? {
            return Ok(None);
        }
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| CampaignError::io(format!("cannot open {}", path.display()), e))?;
        if !try_lock(&file, &path)? {
            return Ok(None);
        }
        // Record who holds it; a stale pid from a dead holder is simply overwritten.
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = writeln!(file, "pid {}", std::process::id());
        let _ = file.sync_all();
        Ok(Some(Lock {
            _dir: dir_file,
            _file: file,
        }))
    }

    /// Who holds the campaign's lock (`pid 1234`), or `None` when nobody does. Takes a shared
    /// lock on the directory for an instant (drivers retry briefly, see [`Lock::acquire`]), so
    /// a deleted `campaign.lock` does not hide a holder. Viewers ask the heartbeat instead
    /// ([`super::driver_state`]): a killed driver's children can hold the lock after it died.
    pub fn holder(dir: &Path) -> Option<String> {
        let dir_file = File::open(dir).ok()?;
        match fs4::FileExt::try_lock_shared(&dir_file) {
            Ok(()) => {
                let _ = fs4::FileExt::unlock(&dir_file);
                None
            }
            Err(fs4::TryLockError::WouldBlock) => {
                let holder = holder_text(dir);
                Some(if holder.is_empty() {
                    "another process".into()
                } else {
                    holder
                })
            }
            // Cannot tell (e.g. a filesystem without locks): say nothing rather than guess.
            Err(fs4::TryLockError::Error(_)) => None,
        }
    }

    /// The pid the holder of the campaign's lock (or its last holder) wrote in `campaign.lock`.
    pub fn holder_pid(dir: &Path) -> Option<u32> {
        holder_text(dir).strip_prefix("pid ")?.trim().parse().ok()
    }
}

/// A non-blocking exclusive `flock`: true when taken, false when someone holds it.
fn try_lock(file: &File, path: &Path) -> Result<bool, CampaignError> {
    match fs4::FileExt::try_lock(file) {
        Ok(()) => Ok(true),
        Err(fs4::TryLockError::WouldBlock) => Ok(false),
        Err(fs4::TryLockError::Error(e)) => Err(CampaignError::io(
            format!("cannot lock {}", path.display()),
            e,
        )),
    }
}

/// Who holds the lock, as written in `campaign.lock` (empty when unknown; a note when the
/// file was deleted under its holder, which then cannot say who it is).
fn holder_text(dir: &Path) -> String {
    let mut text = String::new();
    match File::open(dir.join(LOCK_FILE)) {
        Ok(mut f) => {
            let _ = f.read_to_string(&mut text);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return format!("pid unknown: {LOCK_FILE} was deleted while it held the lock");
        }
        Err(_) => {}
    }
    text.trim().to_string()
}
