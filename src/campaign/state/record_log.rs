//! How the campaign state reaches the disk so that recording a run costs what the run adds, not
//! what the campaign holds: `campaign.json` is a snapshot, and `campaign.records.jsonl` beside it
//! an append-only log of what changed since (a run started or recorded, a test decided, an
//! iteration planned, the campaign cancelled). [`State::load`] reads the snapshot and folds the
//! log into it; [`State::commit`] appends what changed since the last load or save as one line;
//! [`State::save`] writes the whole state (atomically) and starts a new log. `commit` saves
//! the whole state instead once the log would grow past [`MAX_LOG_BYTES`], so that a load reads
//! the snapshot and at most that much more, and a record, which reads only its run's slice of
//! the snapshot and the log ([`State::run_slice`]), reads a bounded amount however large the
//! campaign. A large campaign's snapshot is then rewritten once every thousand records or so.
//!
//! Each line is `{"crc":"XXXXXXXX","record":{...}}\n`, the CRC-32 of the record's bytes as
//! written, and holds every change of one commit: a commit lands whole or not at all (a test's
//! decisions never land without the iteration they plan). A line cut by a kill (no newline, or
//! a checksum that does not match) at the end of the log is ignored, never misread, and the
//! next append cuts it; a damaged line with good records after it is an error, since records
//! would be lost.
//!
//! Exactly once: every record carries the snapshot's epoch (a random number written anew by
//! every whole save) and its sequence number in that epoch. A record of another epoch belongs
//! to a snapshot already replaced (a kill between writing the new snapshot and removing the old
//! log leaves such a log) and is skipped; a record whose number was already folded (the same
//! record appended twice) is skipped; a missing number is an error. Every change sets a value
//! at a position (a run, a decision) or adds the next element of a list, so folding is a pure
//! function of the snapshot and the records.
//!
//! Readers take no lock: `load` opens the log before it reads the snapshot, and a whole save
//! renames the new snapshot into place before it removes the log, so a reader sees either the
//! old snapshot with (a prefix of) its log, or the new snapshot, whose epoch makes it skip the
//! old log's records. Writers hold the campaign's lock ([`super::Lock`]).

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Decision, Iteration, Run, RunPos, State, TestRecord, STATE_FILE, STATE_FORMAT};
use crate::campaign::CampaignError;

/// Name of the log of changes beside the state file.
pub const LOG_FILE: &str = "campaign.records.jsonl";

/// The log is folded into the state file once it would be longer than this: about a thousand
/// records, read by every record's slice ([`State::run_slice`]) and by every load. Small enough that
/// reading it stays a few milliseconds, large enough that a small campaign's snapshot is not
/// rewritten at every record and a large one's only every thousand records.
pub const MAX_LOG_BYTES: u64 = 256 << 10;

/// What [`State::load`] and [`State::save`] know about the files a state came from, and what
/// changed in it since, so that [`State::commit`] writes only that. Not part of what the
/// campaign knows: two states that differ only here are equal. In the state file it is one
/// number, the `epoch` the log's records must carry.
#[derive(Clone, Default)]
pub struct Journal {
    /// The snapshot's epoch; 0 for a state never saved (or saved before the log existed).
    epoch: u64,
    /// The files as this state last read or wrote them.
    disk: Option<OnDisk>,
    /// Runs changed (through [`State::run_mut`]) since then.
    runs: BTreeSet<RunPos>,
    /// Decisions taken ([`State::decide`]) since then.
    decisions: BTreeSet<(usize, usize)>,
    /// The state as last read or written, to check in debug builds that every change since
    /// went through the journal (a field changed behind its back would be lost at the next
    /// load).
    #[cfg(debug_assertions)]
    saved: Option<std::sync::Arc<State>>,
}

/// The files as a state last read or wrote them.
#[derive(Clone, Debug, PartialEq)]
struct OnDisk {
    /// The campaign directory.
    dir: PathBuf,
    /// The last record folded or appended (0: none in this epoch).
    seq: u64,
    /// Bytes of the log up to the end of its last whole line: where the next record goes.
    log_len: u64,
    /// Bytes of the state file.
    state_len: u64,
    /// How many tests, iterations there were, and whether the campaign was cancelled: what
    /// was added or changed since is compared against these.
    tests: usize,
    iterations: usize,
    cancelled: bool,
}

impl PartialEq for Journal {
    /// Bookkeeping, not campaign content: never makes two states differ.
    fn eq(&self, _: &Journal) -> bool {
        true
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("epoch", &self.epoch)
            .field("disk", &self.disk)
            .field("runs", &self.runs.len())
            .field("decisions", &self.decisions.len())
            .finish_non_exhaustive()
    }
}

impl Serialize for Journal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.epoch)
    }
}

impl<'de> Deserialize<'de> for Journal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Journal, D::Error> {
        Ok(Journal {
            epoch: u64::deserialize(d)?,
            ..Journal::default()
        })
    }
}

impl Journal {
    /// The snapshot's epoch.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A journal of the same snapshot that knows nothing else.
    pub(super) fn clone_epoch(&self) -> Journal {
        Journal {
            epoch: self.epoch,
            ..Journal::default()
        }
    }

    /// Notes that run `pos` changed.
    pub(super) fn run_changed(&mut self, pos: RunPos) {
        self.runs.insert(pos);
    }

    /// Notes that test `t` of iteration `i` was decided.
    pub(super) fn decided(&mut self, i: usize, t: usize) {
        self.decisions.insert((i, t));
    }
}

/// One commit: every change since the previous one.
#[derive(Serialize, Deserialize)]
pub(super) struct Record<'a> {
    epoch: u64,
    seq: u64,
    changes: Vec<Change<'a>>,
}

/// One change: a value set at a position, or the next element of a list (`at` = its length).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Change<'a> {
    Test {
        at: usize,
        test: std::borrow::Cow<'a, TestRecord>,
    },
    Iteration {
        at: usize,
        iteration: std::borrow::Cow<'a, Iteration>,
    },
    Decision {
        at: (usize, usize),
        decision: std::borrow::Cow<'a, Option<Decision>>,
    },
    Run {
        at: RunPos,
        run: std::borrow::Cow<'a, Run>,
    },
    Cancelled,
}

/// Sets `list[at]`, or adds it when `at` is the list's length.
pub(super) fn set_or_push<T>(
    list: &mut Vec<T>,
    at: usize,
    value: T,
    what: &str,
) -> Result<(), String> {
    match at.cmp(&list.len()) {
        std::cmp::Ordering::Less => list[at] = value,
        std::cmp::Ordering::Equal => list.push(value),
        std::cmp::Ordering::Greater => {
            return Err(format!(
                "sets {what} {at} of {}, which does not exist",
                list.len()
            ))
        }
    }
    Ok(())
}

impl Change<'_> {
    /// Applies the change to `state`; an error says what it names that the state lacks.
    fn apply(self, state: &mut State) -> Result<(), String> {
        match self {
            Change::Test { at, test } => {
                set_or_push(&mut state.tests, at, test.into_owned(), "test")
            }
            Change::Iteration { at, iteration } => set_or_push(
                &mut state.iterations,
                at,
                iteration.into_owned(),
                "iteration",
            ),
            Change::Decision {
                at: (i, t),
                decision,
            } => {
                let test = state
                    .iterations
                    .get_mut(i)
                    .and_then(|it| it.tests.get_mut(t))
                    .ok_or_else(|| {
                        format!("decides test {t} of iteration {i}, which does not exist")
                    })?;
                test.decision = decision.into_owned();
                Ok(())
            }
            Change::Run { at: (i, t, r), run } => {
                let test = state
                    .iterations
                    .get_mut(i)
                    .and_then(|it| it.tests.get_mut(t))
                    .ok_or_else(|| {
                        format!("sets a run of test {t} of iteration {i}, which does not exist")
                    })?;
                set_or_push(&mut test.runs, r, run.into_owned(), "run")
            }
            Change::Cancelled => {
                state.cancelled = true;
                Ok(())
            }
        }
    }
}

/// The start of every line, up to the checksum's 8 hex digits, and what follows them.
const LINE_START: &[u8] = b"{\"crc\":\"";
const AFTER_CRC: &[u8] = b"\",\"record\":";

/// The record as one log line, or `None` when it would take more than `cap` bytes (the caller
/// then saves the whole state instead).
fn frame(record: &Record<'_>, cap: u64) -> Result<Option<Vec<u8>>, serde_json::Error> {
    /// A buffer that refuses to grow past its cap, so a huge change is given up early.
    struct Capped {
        bytes: Vec<u8>,
        cap: usize,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.bytes.len() + b.len() > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            self.bytes.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let head = LINE_START.len() + 8 + AFTER_CRC.len();
    let mut out = Capped {
        bytes: Vec::with_capacity(1024),
        cap: usize::try_from(cap).unwrap_or(usize::MAX),
    };
    out.bytes.extend_from_slice(LINE_START);
    out.bytes.extend_from_slice(b"00000000");
    out.bytes.extend_from_slice(AFTER_CRC);
    match serde_json::to_writer(&mut out, record) {
        Ok(()) => {}
        Err(e) if e.is_io() => return Ok(None),
        Err(e) => return Err(e),
    }
    let crc = format!("{:08x}", crc32fast::hash(&out.bytes[head..]));
    out.bytes[LINE_START.len()..LINE_START.len() + 8].copy_from_slice(crc.as_bytes());
    out.bytes.extend_from_slice(b"}\n");
    Ok((out.bytes.len() as u64 <= cap).then_some(out.bytes))
}

/// The record's bytes in a line (without its newline), or why the line is not whole.
fn unframe(line: &[u8]) -> Result<&[u8], &'static str> {
    let rest = line
        .strip_prefix(LINE_START)
        .ok_or("does not start as a record")?;
    let (hex, rest) = rest.split_at_checked(8).ok_or("is cut short")?;
    let record = rest
        .strip_prefix(AFTER_CRC)
        .and_then(|r| r.strip_suffix(b"}"))
        .ok_or("is not a whole record")?;
    let crc = std::str::from_utf8(hex)
        .ok()
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or("has no checksum")?;
    if crc32fast::hash(record) != crc {
        return Err("does not match its checksum");
    }
    Ok(record)
}

/// What folding a log gave.
#[derive(Clone, Copy, Debug)]
pub(super) struct Folded {
    /// The last record applied (0: none).
    pub(super) seq: u64,
    /// Bytes up to the end of the last whole line.
    pub(super) len: u64,
}

/// Folds the log's records of snapshot `epoch` in order, once each, through `apply` (which says
/// what a change names that the state lacks). `bytes` is the log from `from.len` on, with the
/// records up to `from.seq` folded already (the whole log: from the start, none).
pub(super) fn fold(
    epoch: u64,
    bytes: &[u8],
    path: &Path,
    from: Folded,
    mut apply: impl FnMut(Change<'_>) -> Result<(), String>,
) -> Result<Folded, CampaignError> {
    let bad = |line: usize, reason: String| CampaignError::BadState {
        file: path.to_path_buf(),
        reason: format!("line {line}: {reason}"),
    };
    let mut folded = from;
    let start = folded.len;
    // The first line that is not whole: harmless at the end (a torn append), an error when
    // whole records follow it.
    let mut damaged: Option<(usize, &str)> = None;
    let mut offset = 0;
    for (k, piece) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let line_no = k + 1;
        offset += piece.len();
        let Some(line) = piece.strip_suffix(b"\n") else {
            break; // The last line, cut before its newline.
        };
        let record = match unframe(line) {
            Ok(r) => r,
            Err(why) => {
                damaged.get_or_insert((line_no, why));
                continue;
            }
        };
        if let Some((n, why)) = damaged {
            return Err(bad(
                n,
                format!("the record {why}, and whole records follow it; the log is damaged: restore it from a backup, or remove {LOG_FILE} to go back to the state file alone (the records in the log are then lost)"),
            ));
        }
        let record: Record<'_> = serde_json::from_slice(record).map_err(|e| {
            bad(
                line_no,
                format!(
                    "a record this autolb cannot read ({e}); use the autolb version that wrote it"
                ),
            )
        })?;
        folded.len = start + offset as u64;
        if record.epoch != epoch || record.seq <= folded.seq {
            continue; // Of a replaced snapshot, or folded already.
        }
        if record.seq != folded.seq + 1 {
            return Err(bad(
                line_no,
                format!(
                    "record {} follows record {}: records between them are missing; restore the log from a backup",
                    record.seq, folded.seq
                ),
            ));
        }
        for change in record.changes {
            apply(change).map_err(|e| bad(line_no, format!("the record {e}")))?;
        }
        folded.seq = record.seq;
    }
    Ok(folded)
}

/// Appends one record holding `changes` to the log of snapshot `epoch` in `dir`, whose records
/// up to `from` the writer has read; returns the log's new length. `None` when the log has no
/// room for it ([`MAX_LOG_BYTES`]) or is shorter than the writer read (removed or cut by
/// hand): the caller then writes the whole state instead. The caller holds the campaign's lock.
pub(super) fn append_record(
    dir: &Path,
    epoch: u64,
    from: Folded,
    changes: Vec<Change<'_>>,
) -> Result<Option<u64>, CampaignError> {
    let record = Record {
        epoch,
        seq: from.seq + 1,
        changes,
    };
    let room = MAX_LOG_BYTES.saturating_sub(from.len);
    let log_path = dir.join(LOG_FILE);
    let line = frame(&record, room).map_err(|e| CampaignError::BadState {
        file: log_path.clone(),
        reason: e.to_string(),
    })?;
    let Some(line) = line else {
        return Ok(None);
    };
    match crate::fsutil::append_at(&log_path, from.len, &line) {
        Ok(()) => Ok(Some(from.len + line.len() as u64)),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(CampaignError::io(
            format!("cannot append to {}", log_path.display()),
            e,
        )),
    }
}

impl State {
    /// Reads `DIR/campaign.json` and folds `DIR/campaign.records.jsonl` into it (see the
    /// module docs); a state written before the log existed reads as it always did.
    pub fn load(dir: &Path) -> Result<State, CampaignError> {
        let path = dir.join(STATE_FILE);
        let log_path = dir.join(LOG_FILE);
        // Opened before the snapshot is read: a whole save renames its snapshot into place
        // before it removes the log, so this log belongs to the snapshot read below or to an
        // older one, whose records that snapshot's epoch skips.
        let log = match std::fs::File::open(&log_path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(CampaignError::io(
                    format!("cannot read {}", log_path.display()),
                    e,
                ))
            }
        };
        let bytes = std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CampaignError::missing_state(dir)
            } else {
                CampaignError::io(format!("cannot read {}", path.display()), e)
            }
        })?;
        let state_len = bytes.len() as u64;
        let mut state: State =
            serde_json::from_slice(&bytes).map_err(|e| CampaignError::BadState {
                file: path.clone(),
                reason: e.to_string(),
            })?;
        drop(bytes);
        if state.format != STATE_FORMAT {
            return Err(CampaignError::BadState {
                file: path,
                reason: format!(
                    "state format {} is not the supported {STATE_FORMAT}; use the autolb version that created it",
                    state.format
                ),
            });
        }
        let folded = match log {
            Some(mut file) => {
                let mut log_bytes = Vec::new();
                file.read_to_end(&mut log_bytes).map_err(|e| {
                    CampaignError::io(format!("cannot read {}", log_path.display()), e)
                })?;
                let epoch = state.journal.epoch;
                fold(
                    epoch,
                    &log_bytes,
                    &log_path,
                    Folded { seq: 0, len: 0 },
                    |c| c.apply(&mut state),
                )?
            }
            None => Folded { seq: 0, len: 0 },
        };
        state
            .check_shape()
            .and_then(|()| state.check_limits())
            .map_err(|reason| CampaignError::BadState {
                file: if folded.seq > 0 { log_path } else { path },
                reason,
            })?;
        state.journal.disk = Some(OnDisk {
            dir: dir.to_path_buf(),
            seq: folded.seq,
            log_len: folded.len,
            state_len,
            tests: state.tests.len(),
            iterations: state.iterations.len(),
            cancelled: state.cancelled,
        });
        state.keep_saved();
        Ok(state)
    }

    /// Brings a state read from `dir` earlier up to what is on disk now, for a writer that read
    /// it before taking the lock (to measure outside the lock) and must write on top of what
    /// others wrote since. When the snapshot is still the one it read (same epoch and size),
    /// only the records appended to the log since are read, so a record costs one reading of
    /// the state, not two; otherwise, or when this state was changed meanwhile, the whole state
    /// is read again. After an error the state is not to be used.
    pub fn refresh(&mut self, dir: &Path) -> Result<(), CampaignError> {
        if self.refresh_from_log(dir) != Some(true) {
            *self = State::load(dir)?;
        }
        Ok(())
    }

    /// [`State::refresh`] from the log alone: `Some(true)` when that was possible and done.
    fn refresh_from_log(&mut self, dir: &Path) -> Option<bool> {
        let disk = self.journal.disk.clone()?;
        let untouched = disk.dir == dir
            && self.journal.runs.is_empty()
            && self.journal.decisions.is_empty()
            && (self.tests.len(), self.iterations.len(), self.cancelled)
                == (disk.tests, disk.iterations, disk.cancelled);
        if !untouched || self.journal.epoch == 0 {
            return Some(false);
        }
        let log_path = dir.join(LOG_FILE);
        // Opened before the snapshot is looked at, as in `load`.
        let log = std::fs::File::open(&log_path);
        if snapshot_epoch(&dir.join(STATE_FILE), disk.state_len) != Some(self.journal.epoch) {
            return Some(false);
        }
        let tail = match log {
            Ok(mut file) => {
                use std::io::Seek;
                if file.metadata().ok()?.len() < disk.log_len {
                    return Some(false);
                }
                file.seek(std::io::SeekFrom::Start(disk.log_len)).ok()?;
                let mut tail = Vec::new();
                file.read_to_end(&mut tail).ok()?;
                tail
            }
            Err(_) if disk.log_len == 0 => Vec::new(),
            Err(_) => return Some(false),
        };
        let from = Folded {
            seq: disk.seq,
            len: disk.log_len,
        };
        // Any trouble (a damaged record): the state is read whole instead, and that load
        // reports it with its line.
        let epoch = self.journal.epoch;
        let folded = fold(epoch, &tail, &log_path, from, |c| c.apply(self)).ok()?;
        self.check_shape().ok()?;
        self.journal.disk = Some(OnDisk {
            seq: folded.seq,
            log_len: folded.len,
            tests: self.tests.len(),
            iterations: self.iterations.len(),
            cancelled: self.cancelled,
            ..disk
        });
        self.keep_saved();
        Some(true)
    }

    /// Writes the whole state to `DIR/campaign.json` atomically (temp file, fsync, rename,
    /// fsync of the directory), under a new epoch, and removes the log it now holds: a kill at
    /// any moment leaves either the old state with its log or the new one (with the old log's
    /// records skipped as another epoch's).
    pub fn save(&mut self, dir: &Path) -> Result<(), CampaignError> {
        let path = dir.join(STATE_FILE);
        let previous = std::mem::replace(&mut self.journal.epoch, fresh_epoch());
        let this = &*self;
        let mut layout = None;
        let written = crate::fsutil::write_atomically_with(&path, |w| {
            layout = Some(this.write_snapshot(w)?);
            Ok(())
        });
        let state_len = match written {
            Ok(n) => n,
            Err(e) => {
                // The old snapshot stays, and with it the epoch its log's records carry.
                self.journal.epoch = previous;
                return Err(CampaignError::io(
                    format!("cannot write {}", path.display()),
                    e,
                ));
            }
        };
        // Its records are in the snapshot now; a log left by a kill here is skipped as of
        // another epoch, and cut by the next append.
        let _ = std::fs::remove_file(dir.join(LOG_FILE));
        // The layout is a cache that names the snapshot it describes: one not written (a kill,
        // a full disk) leaves the old one, which no longer matches and is not used.
        if let Some(layout) = layout {
            layout.write(dir);
        }
        self.journal.disk = Some(OnDisk {
            dir: dir.to_path_buf(),
            seq: 0,
            log_len: 0,
            state_len,
            tests: self.tests.len(),
            iterations: self.iterations.len(),
            cancelled: self.cancelled,
        });
        self.journal.runs.clear();
        self.journal.decisions.clear();
        self.keep_saved();
        Ok(())
    }

    /// Writes what changed since this state was loaded from or saved to `dir`: one line
    /// appended to the log, made durable before this returns. Saves the whole state instead
    /// when the state did not come from `dir`, was written before the log existed, changed in
    /// a way no record describes, or the log would grow past its bound.
    ///
    /// The caller holds the campaign's lock, as for [`State::save`].
    pub fn commit(&mut self, dir: &Path) -> Result<(), CampaignError> {
        let disk = match &self.journal.disk {
            Some(d) if d.dir == dir && self.journal.epoch != 0 => d.clone(),
            _ => return self.save(dir),
        };
        let Some(changes) = self.changes_since(&disk) else {
            return self.save(dir);
        };
        if changes.is_empty() {
            return Ok(());
        }
        let from = Folded {
            seq: disk.seq,
            len: disk.log_len,
        };
        #[cfg(debug_assertions)]
        self.check_journal(
            self.changes_since(&disk)
                .expect("the changes were just listed"),
        );
        let Some(log_len) = append_record(dir, self.journal.epoch, from, changes)? else {
            // No room in the log, or not the log this state read (removed or cut by hand):
            // the state in memory is whole, so it is written whole.
            return self.save(dir);
        };
        self.journal.disk = Some(OnDisk {
            seq: disk.seq + 1,
            log_len,
            tests: self.tests.len(),
            iterations: self.iterations.len(),
            cancelled: self.cancelled,
            ..disk
        });
        self.journal.runs.clear();
        self.journal.decisions.clear();
        self.keep_saved();
        Ok(())
    }

    /// The changes since the files were as `disk` says, or `None` when a change has no record
    /// (a list grew shorter, a cancel undone, a position that no longer exists).
    fn changes_since(&self, disk: &OnDisk) -> Option<Vec<Change<'_>>> {
        use std::borrow::Cow::Borrowed;
        if self.tests.len() < disk.tests
            || self.iterations.len() < disk.iterations
            || (disk.cancelled && !self.cancelled)
        {
            return None;
        }
        let mut changes: Vec<Change<'_>> = (disk.tests..self.tests.len())
            .map(|at| Change::Test {
                at,
                test: Borrowed(&self.tests[at]),
            })
            .collect();
        // Runs and decisions inside an iteration added since travel with it.
        let old = |i: usize| i < disk.iterations;
        for &(i, t) in self.journal.decisions.iter().filter(|(i, _)| old(*i)) {
            let test = self.iterations.get(i)?.tests.get(t)?;
            changes.push(Change::Decision {
                at: (i, t),
                decision: Borrowed(&test.decision),
            });
        }
        for &(i, t, r) in self.journal.runs.iter().filter(|(i, _, _)| old(*i)) {
            let run = self.iterations.get(i)?.tests.get(t)?.runs.get(r)?;
            changes.push(Change::Run {
                at: (i, t, r),
                run: Borrowed(run),
            });
        }
        changes.extend(
            (disk.iterations..self.iterations.len()).map(|at| Change::Iteration {
                at,
                iteration: Borrowed(&self.iterations[at]),
            }),
        );
        if self.cancelled && !disk.cancelled {
            changes.push(Change::Cancelled);
        }
        Some(changes)
    }

    /// Remembers the state as written, for [`State::check_journal`] (debug builds only).
    fn keep_saved(&mut self) {
        #[cfg(debug_assertions)]
        {
            let mut copy = self.clone();
            copy.journal = Journal::default();
            self.journal.saved = Some(std::sync::Arc::new(copy));
        }
    }

    /// Checks that the state as last written with `changes` applied is this state: a field
    /// changed without going through the journal would otherwise be lost at the next load.
    #[cfg(debug_assertions)]
    fn check_journal(&self, changes: Vec<Change<'_>>) {
        let Some(saved) = &self.journal.saved else {
            return;
        };
        let mut replayed = State::clone(saved);
        for change in changes {
            change
                .apply(&mut replayed)
                .expect("a change of this state applies to it");
        }
        assert!(
            replayed == *self,
            "the campaign state changed without going through its journal \
             (State::run_mut, State::decide): the change would be lost at the next load"
        );
    }
}

/// The epoch a snapshot of `len` bytes at `path` ends with, read from its last bytes (the
/// `epoch` key is the last one [`State::save`] writes); `None` when the file has another size
/// or does not end so (edited by hand: then it is read whole).
pub(crate) fn snapshot_epoch(path: &Path, len: u64) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() != len {
        return None;
    }
    let tail_len = len.min(64);
    file.seek(SeekFrom::Start(len - tail_len)).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let tail = std::str::from_utf8(&tail).ok()?;
    let rest = &tail[tail.rfind("\"epoch\":")? + "\"epoch\":".len()..];
    let rest = rest.trim_start();
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    // Only the object's end may follow: an `epoch` inside a nested object is followed by two.
    (rest[digits..].trim() == "}").then(|| rest[..digits].parse().ok())?
}

/// A new snapshot's epoch: random, never 0 (the epoch of states written before the log).
fn fresh_epoch() -> u64 {
    rand::random::<u64>().max(1)
}
