//! Watching a directory tree (a campaign's runs) for new and growing files, on a laptop and on an
//! HPC login node.
//!
//! On a local filesystem the kernel's notifications (notify) say at once that something
//! changed. On GPFS, Lustre, NFS and friends they never fire for files written by compute
//! nodes, yet registering a watch still succeeds; there the [`poller`] is the only source of
//! truth. The design therefore makes the poller the source of truth everywhere: notify events
//! only wake it early, and a slow safety poll runs even in native mode. Which one runs is chosen
//! per root from `/proc/self/mountinfo` ([`WatchMode::Auto`]) unless the user forces it.

pub mod poller;

use std::path::Path;
use std::str::FromStr;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

pub use poller::{CompletePredicate, Poller, ScanOutcome};

/// How to watch, as the user asks for it (`--watch auto|native|poll`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WatchMode {
    /// Poll on network and parallel filesystems, native notifications elsewhere.
    #[default]
    Auto,
    /// Kernel notifications (plus a slow safety poll), even where they may miss writes.
    Native,
    /// Polling only, even on a local filesystem.
    Poll,
}

impl FromStr for WatchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<WatchMode, String> {
        match s {
            "auto" => Ok(WatchMode::Auto),
            "native" => Ok(WatchMode::Native),
            "poll" => Ok(WatchMode::Poll),
            other => Err(format!(
                "unknown watch mode {other:?}; use auto, native or poll"
            )),
        }
    }
}

/// How a watcher actually watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveMode {
    /// Kernel notifications plus a slow safety poll.
    Native,
    /// Polling only.
    Poll,
}

impl ActiveMode {
    /// `native` or `poll`, as the status line shows it.
    pub fn name(self) -> &'static str {
        match self {
            ActiveMode::Native => "native",
            ActiveMode::Poll => "poll",
        }
    }
}

/// Filesystem types on which inotify misses writes from other hosts.
const REMOTE_FILESYSTEMS: &[&str] = &[
    "nfs",
    "nfs4",
    "lustre",
    "gpfs",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "beegfs",
    "9p",
    "afs",
    "panfs",
    "orangefs",
    "glusterfs",
];

/// Whether notifications cannot be trusted on a filesystem of this type.
pub fn is_remote_filesystem(fstype: &str) -> bool {
    fstype.starts_with("fuse") || REMOTE_FILESYSTEMS.contains(&fstype)
}

/// The filesystem type of the mount holding `path`, from `/proc/self/mountinfo`; `None` when
/// that file is unavailable (not Linux) or the path cannot be resolved.
pub fn filesystem_type(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let path = std::fs::canonicalize(path).ok()?;
    filesystem_type_in(&text, &path)
}

/// [`filesystem_type`] on given mountinfo text: the mount with the longest mount point that
/// contains `path` wins (later lines win ties: they are mounted over earlier ones).
pub fn filesystem_type_in(mountinfo: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount_point) = left.split(' ').nth(4) else {
            continue;
        };
        let Some(fstype) = right.split(' ').next() else {
            continue;
        };
        let mount_point = unescape_mountinfo(mount_point);
        if path.starts_with(&mount_point) {
            let depth = Path::new(&mount_point).components().count();
            if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
                best = Some((depth, fstype.to_string()));
            }
        }
    }
    best.map(|(_, fstype)| fstype)
}

/// mountinfo escapes space, tab, newline and backslash as three octal digits (`\040`).
/// Works on bytes: a backslash followed by anything else (multi-byte text included) is kept.
fn unescape_mountinfo(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if let Some(v) = octal_escape(&bytes[i..]) {
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The byte of a `\NNN` octal escape at the start of `bytes`, if there is one.
fn octal_escape(bytes: &[u8]) -> Option<u8> {
    let [b'\\', digits @ ..] = bytes else {
        return None;
    };
    let digits = digits.get(..3)?;
    if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
        return None;
    }
    let v = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
    u8::try_from(v).ok()
}

/// Chooses how to watch `root`, and says why (shown in the status line).
pub fn choose_mode(requested: WatchMode, root: &Path) -> (ActiveMode, String) {
    match requested {
        WatchMode::Native => (ActiveMode::Native, "forced by --watch native".into()),
        WatchMode::Poll => (ActiveMode::Poll, "forced by --watch poll".into()),
        WatchMode::Auto => match filesystem_type(root) {
            Some(fs) if is_remote_filesystem(&fs) => (
                ActiveMode::Poll,
                format!("{fs}: notifications miss remote writes"),
            ),
            Some(fs) => (ActiveMode::Native, format!("{fs}: local filesystem")),
            None => (ActiveMode::Poll, "filesystem type unknown".into()),
        },
    }
}

/// Timing of the watcher.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchOptions {
    /// How the user asked to watch; [`choose_mode`] turns it into an [`ActiveMode`].
    pub mode: WatchMode,
    /// Time between polls while files are pending or changing.
    pub poll_interval: Duration,
    /// Polls back off up to this interval while nothing changes (poll mode).
    pub max_poll_interval: Duration,
    /// Safety poll in native mode while nothing is pending.
    pub safety_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            mode: WatchMode::Auto,
            poll_interval: Duration::from_secs(2),
            max_poll_interval: Duration::from_secs(8),
            safety_interval: Duration::from_secs(30),
        }
    }
}

/// What a watcher reports.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    /// A scan found new, changed, completed or removed files.
    Changes(ScanOutcome),
    /// A scan found nothing new (sent so the user sees "last scan N s ago" move).
    Quiet {
        /// Files seen but not complete yet ([`ScanOutcome::pending`]).
        pending: usize,
        /// Files retired as complete ([`ScanOutcome::complete`]).
        complete: usize,
    },
    /// Which mode runs and why; sent once at the start and again if the mode changes.
    Mode {
        /// The mode now running.
        mode: ActiveMode,
        /// Why (the filesystem type, a `--watch` flag, notifications that failed to start).
        reason: String,
    },
    /// Something the user should know; watching goes on.
    Error(String),
}

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The root to watch is missing, unreadable or not a directory.
    #[error("{path}: cannot watch: {reason}")]
    NotADirectory {
        /// The root as given.
        path: String,
        /// `not a directory`, or the operating system's error.
        reason: String,
    },
    /// The operating system refused to start the watcher's thread.
    #[error("cannot start the watcher thread: {0}")]
    Thread(String),
}

enum Wake {
    Notified,
    Stop,
}

/// A running watcher; dropping it stops its thread.
pub struct Watcher {
    tx: mpsc::Sender<Wake>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.tx.send(Wake::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts watching `root` on a thread of its own. `is_complete` decides when a directory's
/// stable files are finished output; `sink` receives events with the time of the scan and
/// returns false to stop the watcher (its receiver is gone).
pub fn spawn(
    root: &Path,
    options: WatchOptions,
    mut is_complete: Box<CompletePredicate>,
    mut sink: Box<dyn FnMut(WatchEvent, SystemTime) -> bool + Send>,
) -> Result<Watcher, WatchError> {
    let unusable = match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some("not a directory".to_string()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(reason) = unusable {
        return Err(WatchError::NotADirectory {
            path: root.display().to_string(),
            reason,
        });
    }
    let (tx, rx) = mpsc::channel::<Wake>();
    let (mut mode, mut reason) = choose_mode(options.mode, root);
    let mut native = None;
    if mode == ActiveMode::Native {
        match start_notify(root, tx.clone()) {
            Ok(w) => native = Some(w),
            Err(e) => {
                mode = ActiveMode::Poll;
                reason = format!("notifications unavailable ({e})");
            }
        }
    }
    let root = root.to_path_buf();
    let thread = std::thread::Builder::new()
        .name("autolb-watch".into())
        .spawn(move || {
            let _native = native;
            if !sink(WatchEvent::Mode { mode, reason }, SystemTime::now()) {
                return;
            }
            run_loop(&root, mode, &options, &rx, &mut *is_complete, &mut *sink);
        })
        .map_err(|e| WatchError::Thread(e.to_string()))?;
    Ok(Watcher {
        tx,
        thread: Some(thread),
    })
}

fn start_notify(
    root: &Path,
    tx: mpsc::Sender<Wake>,
) -> Result<notify::RecommendedWatcher, notify::Error> {
    use notify::Watcher as _;
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if res.is_ok_and(|e| !e.kind.is_access()) {
            let _ = tx.send(Wake::Notified);
        }
    })?;
    watcher.watch(root, notify::RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// Waits for a wake-up or the next poll, scans, reports. Notifications are coalesced for a
/// short while so a burst of writes costs one scan.
fn run_loop(
    root: &Path,
    mode: ActiveMode,
    options: &WatchOptions,
    rx: &mpsc::Receiver<Wake>,
    is_complete: &mut CompletePredicate,
    sink: &mut dyn FnMut(WatchEvent, SystemTime) -> bool,
) {
    const COALESCE: Duration = Duration::from_millis(150);
    let mut poller = Poller::new(root);
    let mut interval = options.poll_interval;
    let mut last_errors: Vec<String> = Vec::new();
    loop {
        let outcome = poller.scan(is_complete);
        let now = SystemTime::now();
        if outcome.errors != last_errors {
            for e in &outcome.errors {
                if !sink(WatchEvent::Error(e.clone()), now) {
                    return;
                }
            }
            last_errors = outcome.errors.clone();
        }
        interval = next_interval(mode, options, interval, &outcome);
        let event = if outcome.is_quiet() {
            WatchEvent::Quiet {
                pending: outcome.pending,
                complete: outcome.complete,
            }
        } else {
            WatchEvent::Changes(outcome)
        };
        if !sink(event, now) {
            return;
        }
        let deadline = Instant::now() + interval;
        match rx.recv_timeout(interval) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Wake::Notified) => {
                // Coalesce a burst, but never wait past the poll that was due anyway.
                let until = (Instant::now() + COALESCE).min(deadline);
                loop {
                    let left = until.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(left) {
                        Ok(Wake::Notified) => continue,
                        Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// The wait before the next poll: the short interval while files are changing or settling
/// (pending files in refused directories do not count: they wait for a change); when idle, the safety interval in native mode (notifications will wake us) or a doubling back-off
/// up to the maximum in poll mode.
pub fn next_interval(
    mode: ActiveMode,
    options: &WatchOptions,
    current: Duration,
    outcome: &ScanOutcome,
) -> Duration {
    let busy = !outcome.is_quiet() || outcome.settling > 0;
    if busy {
        return options.poll_interval;
    }
    match mode {
        ActiveMode::Native => options.safety_interval.max(options.poll_interval),
        ActiveMode::Poll => (current * 2)
            .min(options.max_poll_interval)
            .max(options.poll_interval),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /gpfs/scratch rw,relatime shared:9 - gpfs scratch rw
31 22 0:41 / /home rw shared:10 - nfs4 server:/home rw
32 31 0:42 / /home/with\\040space rw shared:11 - xfs /dev/sdb rw
33 22 0:43 / /mnt/sshfs rw - fuse.sshfs host: rw
";

    #[test]
    fn longest_mount_point_decides_the_filesystem() {
        let fs = |p: &str| filesystem_type_in(MOUNTINFO, Path::new(p));
        assert_eq!(fs("/gpfs/scratch/bsc32/exp").as_deref(), Some("gpfs"));
        assert_eq!(fs("/home/user").as_deref(), Some("nfs4"));
        assert_eq!(fs("/home/with space/x").as_deref(), Some("xfs"));
        assert_eq!(fs("/tmp").as_deref(), Some("ext4"));
        assert_eq!(
            fs("/gpfs/scratchy").as_deref(),
            Some("ext4"),
            "whole components only"
        );
        assert_eq!(fs("/mnt/sshfs/a").as_deref(), Some("fuse.sshfs"));
    }

    #[test]
    fn mount_points_are_unescaped_without_panicking_on_odd_bytes() {
        assert_eq!(unescape_mountinfo("/a\\040b\\011c"), "/a b\tc");
        assert_eq!(unescape_mountinfo("/a\\134b"), "/a\\b");
        // Not escapes: kept as written (a backslash before multi-byte text must not panic).
        assert_eq!(unescape_mountinfo("/x\\éé"), "/x\\éé");
        assert_eq!(unescape_mountinfo("/x\\+12"), "/x\\+12");
        assert_eq!(unescape_mountinfo("/x\\777"), "/x\\777");
        assert_eq!(unescape_mountinfo("/x\\04"), "/x\\04");
    }

    #[test]
    fn remote_filesystems_are_polled() {
        for fs in [
            "nfs",
            "nfs4",
            "lustre",
            "gpfs",
            "cifs",
            "ceph",
            "beegfs",
            "fuse.sshfs",
            "fuse",
        ] {
            assert!(is_remote_filesystem(fs), "{fs}");
        }
        for fs in ["ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs"] {
            assert!(!is_remote_filesystem(fs), "{fs}");
        }
    }

    #[test]
    fn forced_modes_win_and_bad_names_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(choose_mode(WatchMode::Poll, dir.path()).0, ActiveMode::Poll);
        assert_eq!(
            choose_mode(WatchMode::Native, dir.path()).0,
            ActiveMode::Native
        );
        let e = "inotify".parse::<WatchMode>().unwrap_err();
        assert!(e.contains("auto, native or poll"), "{e}");
    }

    #[test]
    fn intervals_back_off_when_idle_and_reset_when_busy() {
        let o = WatchOptions::default();
        let quiet = ScanOutcome::default();
        let s = Duration::from_secs;
        assert_eq!(next_interval(ActiveMode::Poll, &o, s(2), &quiet), s(4));
        assert_eq!(next_interval(ActiveMode::Poll, &o, s(8), &quiet), s(8));
        assert_eq!(next_interval(ActiveMode::Native, &o, s(2), &quiet), s(30));
        let busy = ScanOutcome {
            pending: 1,
            settling: 1,
            ..ScanOutcome::default()
        };
        assert_eq!(next_interval(ActiveMode::Poll, &o, s(8), &busy), s(2));
        let dormant = ScanOutcome {
            pending: 200,
            ..ScanOutcome::default()
        };
        assert_eq!(next_interval(ActiveMode::Poll, &o, s(4), &dormant), s(8));
    }

    fn collect(mode: WatchMode) {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel();
        let options = WatchOptions {
            mode,
            poll_interval: Duration::from_millis(50),
            max_poll_interval: Duration::from_millis(100),
            safety_interval: Duration::from_secs(60),
        };
        let _w = spawn(
            dir.path(),
            options,
            Box::new(|_, _| true),
            Box::new(move |e, _| tx.send(e).is_ok()),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        std::fs::create_dir(dir.path().join("run")).unwrap();
        let file = dir.path().join("run/lucia.01.000000");
        // Written beside the tree and renamed in, so that it appears whole: a scan between
        // `write`'s create and its write would rightly report an empty file, then a change.
        let outside = tempfile::NamedTempFile::new_in(dir.path().parent().unwrap()).unwrap();
        std::fs::write(outside.path(), "Balance: MD ATMIFS\n").unwrap();
        outside.persist(&file).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut changed, mut completed) = (0, 0);
        while Instant::now() < deadline && completed == 0 {
            if let Ok(WatchEvent::Changes(o)) = rx.recv_timeout(Duration::from_millis(100)) {
                changed += o.changed.iter().filter(|p| **p == file).count();
                completed += o.completed.iter().filter(|p| **p == file).count();
            }
        }
        assert_eq!((changed, completed), (1, 1), "{mode:?}");
    }

    #[test]
    fn a_watcher_reports_a_new_file_once_and_its_completion_once() {
        collect(WatchMode::Poll);
        collect(WatchMode::Native);
    }

    #[test]
    fn watching_a_missing_directory_is_a_clear_error() {
        let e = spawn(
            Path::new("/nonexistent/autolb"),
            WatchOptions::default(),
            Box::new(|_, _| true),
            Box::new(|_, _| true),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("/nonexistent/autolb"), "{e}");
    }
}
