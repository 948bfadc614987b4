//! The driver's side: the heartbeat thread that writes `driver.json` every [`BEAT_INTERVAL`]
//! while the driver holds its lock, and marks it ended when the driver stops.

use super::*;

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
