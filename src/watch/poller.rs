//! The polling half of the watcher: lists directories, stats only files that are not complete
//! yet, and retires a file for good once it stopped changing and its directory reads as complete.
//!
//! Why not notify's `PollWatcher`: it stats every file on every poll (a stat storm on a parallel
//! filesystem's metadata servers) and compares modification times at whole seconds, so a
//! same-second append goes unseen. Here a file is compared on size, modification time in
//! nanoseconds and inode (a file replaced by rename keeps its size but changes inode).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file counts as stable once its metadata stayed the same over this many successive polls.
pub const STABLE_POLLS: u32 = 2;

/// Deepest directory level listed below the root (a campaign is `iter-II/test-TT/rep-R/`).
pub const MAX_DEPTH: usize = 8;

/// What the poller remembers of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    inode: u64,
}

#[derive(Debug, Clone)]
struct Tracked {
    stamp: Stamp,
    /// Successive polls that saw `stamp` unchanged.
    unchanged: u32,
    /// Never stat'ed again once set.
    complete: bool,
}

/// Decides whether a directory whose incomplete files have all become stable holds finished
/// output (e.g. "the run's timing files parse"). Called at most once per directory per scan.
pub type CompletePredicate = dyn FnMut(&Path, &[PathBuf]) -> bool + Send;

/// What one scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// Files that are new or changed since the previous scan.
    pub changed: Vec<PathBuf>,
    /// Files that became complete in this scan (reported exactly once).
    pub completed: Vec<PathBuf>,
    /// Files that disappeared.
    pub removed: Vec<PathBuf>,
    /// Directories that could not be listed (permissions, I/O errors); files vanishing between
    /// listing and stat are normal and not reported.
    pub errors: Vec<String>,
    /// Files seen but not complete yet (half-written or waiting for their directory).
    pub pending: usize,
    /// Files complete (no longer stat'ed).
    pub complete: usize,
    /// Pending files still settling: changing, or not yet unchanged for [`STABLE_POLLS`]
    /// polls, or waiting for their directory to be asked. Files of refused directories (a dead
    /// run's half-written output, the campaign root) are pending but not settling: nothing is
    /// expected of them until they change, so they do not keep the watcher polling fast.
    pub settling: usize,
    /// Number of `stat` calls this scan made.
    pub stats: usize,
}

impl ScanOutcome {
    /// Whether anything changed on disk.
    pub fn is_quiet(&self) -> bool {
        self.changed.is_empty() && self.completed.is_empty() && self.removed.is_empty()
    }
}

/// Polls one directory tree.
#[derive(Debug)]
pub struct Poller {
    root: PathBuf,
    /// Hash maps, not B-trees: comparing paths component by component made a scan of 3,000
    /// run directories cost a third of a second in a debug build, most of the idle app's CPU.
    files: HashMap<PathBuf, Tracked>,
    /// Directories whose stable files the predicate refused: not asked again until one of
    /// their files changes (a dead run's half-written output is not re-parsed every poll).
    refused: HashSet<PathBuf>,
    /// Directory listings of the last scan, reused while a directory is unchanged.
    listings: HashMap<PathBuf, Listing>,
}

impl Poller {
    /// A poller of the tree under `root` that has seen nothing yet: its first scan reports
    /// every file as changed.
    pub fn new(root: impl Into<PathBuf>) -> Poller {
        Poller {
            root: root.into(),
            files: HashMap::new(),
            refused: HashSet::new(),
            listings: HashMap::new(),
        }
    }

    /// The directory whose tree it polls.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `path` was retired as complete.
    pub fn is_complete(&self, path: &Path) -> bool {
        self.files.get(path).is_some_and(|t| t.complete)
    }

    /// One poll: list every directory, stat the files not complete yet, and ask `is_complete`
    /// about directories whose pending files all stayed unchanged for [`STABLE_POLLS`] polls.
    pub fn scan<F>(&mut self, is_complete: &mut F) -> ScanOutcome
    where
        F: FnMut(&Path, &[PathBuf]) -> bool + ?Sized,
    {
        let mut out = ScanOutcome::default();
        let mut listed: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
        let mut old = std::mem::take(&mut self.listings);
        let capacity = old.len();
        let mut walk = Walk {
            old: &mut old,
            // Sized as the last scan's: growing it again on every poll was a tenth of the idle
            // cost of watching thousands of runs.
            new: HashMap::with_capacity(capacity),
            listed: &mut listed,
            gone: Vec::new(),
            errors: &mut out.errors,
        };
        walk.list(&self.root, 0);
        let (new, mut gone) = (walk.new, walk.gone);
        self.listings = new;
        // Directories not reached any more (removed, or their parent was): their files are gone.
        gone.extend(old.into_values().flat_map(|l| l.files));
        gone.retain(|p| self.files.contains_key(p));
        gone.sort();
        for path in gone {
            self.files.remove(&path);
            if let Some(dir) = path.parent() {
                self.refused.remove(dir);
            }
            out.removed.push(path);
        }

        for (dir, names) in &listed {
            let mut dir_pending: Vec<PathBuf> = Vec::new();
            let mut dir_all_stable = true;
            for path in names {
                if self.is_complete(path) {
                    continue;
                }
                out.stats += 1;
                let stamp = match fs::metadata(path) {
                    Ok(meta) => stamp_of(&meta),
                    // Removed between listing and stat (a temp file renamed away): normal.
                    Err(_) => continue,
                };
                let unchanged = match self.files.get_mut(path) {
                    Some(t) if t.stamp == stamp => {
                        t.unchanged = t.unchanged.saturating_add(1);
                        t.unchanged
                    }
                    Some(t) => {
                        t.stamp = stamp;
                        t.unchanged = 0;
                        self.refused.remove(dir);
                        out.changed.push(path.clone());
                        0
                    }
                    None => {
                        self.refused.remove(dir);
                        self.files.insert(
                            path.clone(),
                            Tracked {
                                stamp,
                                unchanged: 0,
                                complete: false,
                            },
                        );
                        out.changed.push(path.clone());
                        0
                    }
                };
                dir_all_stable &= unchanged >= STABLE_POLLS;
                dir_pending.push(path.clone());
            }
            if dir_pending.is_empty() || !dir_all_stable || self.refused.contains(dir) {
                continue;
            }
            if is_complete(dir, &dir_pending) {
                for path in dir_pending {
                    if let Some(t) = self.files.get_mut(&path) {
                        t.complete = true;
                    }
                    out.completed.push(path);
                }
            } else {
                self.refused.insert(dir.clone());
            }
        }
        for (dir, names) in &listed {
            if let Some(l) = self.listings.get_mut(dir) {
                l.finished = l.reusable
                    && l.subdirs.is_empty()
                    && !names.is_empty()
                    && names
                        .iter()
                        .all(|p| self.files.get(p).is_some_and(|t| t.complete));
            }
        }
        out.complete = self.files.values().filter(|t| t.complete).count();
        out.pending = self.files.len() - out.complete;
        out.settling = self
            .files
            .iter()
            .filter(|(path, t)| {
                !t.complete && !path.parent().is_some_and(|d| self.refused.contains(d))
            })
            .count();
        out
    }
}

fn stamp_of(meta: &fs::Metadata) -> Stamp {
    Stamp {
        size: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        inode: meta.ino(),
    }
}

/// A directory's listing, kept between scans.
#[derive(Debug, Clone)]
struct Listing {
    /// The directory's modification time (ns) and inode when it was listed.
    stamp: (i128, u64),
    /// Whether the listing may be reused while `stamp` stays the same: only when the
    /// directory's mtime was at least [`RACY_NS`] older than the listing, so an entry created in
    /// the same clock tick as the listing cannot hide behind an unchanged mtime (git's "racy
    /// timestamp" rule).
    reusable: bool,
    /// Every file complete and no subdirectories: a finished run's directory. Its listing is
    /// reused without even a `stat`: its output was read and is never read again, so nothing
    /// that happens in it can change what is shown (the directory's own removal shows in its
    /// parent's listing).
    finished: bool,
    files: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
}

/// See [`Listing::reusable`].
const RACY_NS: i128 = 2_000_000_000;

/// One walk over the tree: lists `dir` and its subdirectories (not following symbolic links to
/// directories, so a link loop cannot trap the poller) into `listed` (directory -> its regular
/// files), using the file type that `readdir` returns (no extra `stat` on Linux filesystems).
///
/// A directory whose mtime and inode did not change has the same entries (creating, removing or
/// renaming an entry updates its mtime), so its earlier listing is reused for one `stat`
/// instead of a `readdir`; a finished run's directory ([`Listing::finished`]) is reused
/// without even that, and is left out of `listed`, so each poll costs almost nothing per
/// finished run: the idle cost of watching thousands of them. Files that disappeared from a
/// relisted directory go to `gone`; directories not reached stay in `old`.
struct Walk<'a> {
    old: &'a mut HashMap<PathBuf, Listing>,
    new: HashMap<PathBuf, Listing>,
    listed: &'a mut Vec<(PathBuf, Vec<PathBuf>)>,
    gone: Vec<PathBuf>,
    errors: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn list(&mut self, dir: &Path, depth: usize) {
        let before = match self.old.remove_entry(dir) {
            // Moved, not copied: thousands of finished runs cost a hash lookup each per poll.
            Some((key, l)) if l.finished => {
                self.new.insert(key, l);
                return;
            }
            other => other.map(|(_, l)| l),
        };
        let unreadable = |e: io::Error, walk: &mut Walk, before: Option<Listing>| {
            if e.kind() != io::ErrorKind::NotFound || depth == 0 {
                walk.errors
                    .push(format!("{}: cannot list: {e}", dir.display()));
            }
            if let Some(l) = before {
                walk.old.insert(dir.to_path_buf(), l);
            }
        };
        let meta = match fs::metadata(dir) {
            Ok(meta) => meta,
            Err(e) => return unreadable(e, self, before),
        };
        let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
        let stamp = (mtime_ns, meta.ino());
        let listing = match before {
            Some(l) if l.reusable && l.stamp == stamp => l,
            before => {
                let listed_at = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as i128)
                    .unwrap_or(0);
                let entries = match fs::read_dir(dir) {
                    Ok(entries) => entries,
                    Err(e) => return unreadable(e, self, before),
                };
                let mut files = Vec::new();
                let mut subdirs = Vec::new();
                for entry in entries.flatten() {
                    let Ok(kind) = entry.file_type() else {
                        continue;
                    };
                    if kind.is_dir() {
                        subdirs.push(entry.path());
                    } else if kind.is_file() || kind.is_symlink() {
                        files.push(entry.path());
                    }
                }
                files.sort();
                subdirs.sort();
                if let Some(b) = before {
                    self.gone.extend(
                        b.files
                            .into_iter()
                            .filter(|f| files.binary_search(f).is_err()),
                    );
                }
                Listing {
                    stamp,
                    reusable: mtime_ns + RACY_NS < listed_at,
                    finished: false,
                    files,
                    subdirs,
                }
            }
        };
        // A directory without files (`iter-II/`, `test-TT/`) has nothing to stat or complete.
        if !listing.files.is_empty() {
            self.listed.push((dir.to_path_buf(), listing.files.clone()));
        }
        if depth < MAX_DEPTH {
            for sub in &listing.subdirs {
                self.list(sub, depth + 1);
            }
        }
        self.new.insert(dir.to_path_buf(), listing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn always(_: &Path, _: &[PathBuf]) -> bool {
        true
    }

    #[test]
    fn new_file_is_changed_then_complete_after_two_quiet_polls_then_never_stated() {
        let dir = tempfile::tempdir().unwrap();
        let mut poller = Poller::new(dir.path());
        std::fs::create_dir(dir.path().join("run")).unwrap();
        let file = dir.path().join("run/lucia.01.000000");
        std::fs::write(&file, "Balance: MD ATMIFS\n").unwrap();
        let first = poller.scan(&mut always);
        assert_eq!(first.changed, vec![file.clone()]);
        assert_eq!(first.pending, 1);
        let second = poller.scan(&mut always);
        assert!(second.is_quiet() && second.completed.is_empty());
        let third = poller.scan(&mut always);
        assert_eq!(third.completed, vec![file.clone()]);
        assert_eq!((third.pending, third.complete), (0, 1));
        assert!(poller.is_complete(&file));
        let fourth = poller.scan(&mut always);
        assert_eq!(fourth.stats, 0, "a complete file is never stat'ed again");
        assert!(fourth.completed.is_empty(), "completion is reported once");
    }

    #[test]
    fn an_append_in_the_same_second_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lucia.02.000000");
        std::fs::write(&file, "a").unwrap();
        let mut poller = Poller::new(dir.path());
        poller.scan(&mut always);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(b"b").unwrap();
        drop(f);
        let out = poller.scan(&mut always);
        assert_eq!(out.changed, vec![file]);
    }

    #[test]
    fn replacement_by_rename_is_a_change_even_with_equal_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("campaign.json");
        std::fs::write(&file, "{1}").unwrap();
        let mut poller = Poller::new(dir.path());
        poller.scan(&mut always);
        let tmp = dir.path().join(".campaign.json.tmp");
        std::fs::write(&tmp, "{2}").unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        let out = poller.scan(&mut always);
        assert_eq!(out.changed, vec![file]);
    }

    #[test]
    fn a_refused_directory_stays_pending_and_is_asked_again_only_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("half");
        std::fs::write(&file, "Balance: 001 Before").unwrap();
        let mut poller = Poller::new(dir.path());
        let asked = std::cell::Cell::new(0);
        let mut never = |_: &Path, files: &[PathBuf]| {
            asked.set(asked.get() + 1);
            assert_eq!(files.len(), 1);
            false
        };
        for _ in 0..6 {
            poller.scan(&mut never);
        }
        assert_eq!(
            asked.get(),
            1,
            "a dead run's files are not re-parsed every poll"
        );
        let out = poller.scan(&mut never);
        assert_eq!(
            (out.pending, out.settling),
            (1, 0),
            "a refused directory's files do not keep the watcher busy"
        );
        assert!(!poller.is_complete(&file));
        std::fs::write(&file, "Balance: 001 Before MPI get 1.0\n").unwrap();
        for _ in 0..4 {
            poller.scan(&mut never);
        }
        assert_eq!(
            asked.get(),
            2,
            "asked again once the files changed and settled"
        );
        let out = poller.scan(&mut |_: &Path, _: &[PathBuf]| true);
        assert!(
            out.completed.is_empty(),
            "still refused until the next change"
        );
    }

    #[test]
    fn removed_files_are_reported_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x");
        std::fs::write(&file, "x").unwrap();
        let mut poller = Poller::new(dir.path());
        poller.scan(&mut always);
        std::fs::remove_file(&file).unwrap();
        let out = poller.scan(&mut always);
        assert_eq!(out.removed, vec![file]);
        assert_eq!(out.pending + out.complete, 0);
    }

    #[test]
    fn unchanged_directories_are_not_listed_again_but_new_entries_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("a"), "a").unwrap();
        // Make the directory's mtime old enough to trust.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(&run)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let mut poller = Poller::new(dir.path());
        poller.scan(&mut always);
        assert!(poller.listings[&run].reusable);
        // A new file changes the directory's mtime: seen at the next scan.
        std::fs::write(run.join("b"), "b").unwrap();
        let out = poller.scan(&mut always);
        assert_eq!(out.changed, vec![run.join("b")]);
        // Just listed, with a fresh mtime: not trusted, listed again next time.
        assert!(!poller.listings[&run].reusable);
        std::fs::remove_file(run.join("a")).unwrap();
        let out = poller.scan(&mut always);
        assert_eq!(out.removed, vec![run.join("a")]);
    }

    #[test]
    fn a_finished_run_directory_is_not_even_stated_but_its_removal_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("a"), "a").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(&run)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::File::open(dir.path())
            .unwrap()
            .set_modified(old)
            .unwrap();
        let mut poller = Poller::new(dir.path());
        for _ in 0..4 {
            poller.scan(&mut always);
        }
        assert!(poller.is_complete(&run.join("a")));
        assert!(poller.listings[&run].finished);
        std::fs::remove_dir_all(&run).unwrap();
        let out = poller.scan(&mut always);
        assert_eq!(out.removed, vec![run.join("a")]);
    }

    #[test]
    fn a_missing_root_is_an_error_not_a_panic() {
        let mut poller = Poller::new("/nonexistent/autolb-watch-root");
        let out = poller.scan(&mut always);
        assert_eq!(out.errors.len(), 1);
        assert!(out.errors[0].contains("/nonexistent/autolb-watch-root"));
    }
}
