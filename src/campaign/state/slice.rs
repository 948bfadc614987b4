//! One run's slice of the state, read without reading the rest, so that recording a run (the
//! call every job of a campaign makes once) costs the same in a campaign of 100 runs and of a
//! million.
//!
//! [`State::save`] writes the snapshot so that each test of each iteration is one line of
//! `campaign.json`, and writes beside it `campaign.layout.json`: where in the snapshot every
//! test's line is, and how many runs of each iteration were still open. [`State::run_slice`]
//! reads that layout, the snapshot's head (everything but the iterations: settings,
//! components), the one test's line and the log (which [`State::commit`] keeps short, see
//! [`super::record_log`]), and folds into them the log's records that concern them.
//!
//! The layout is a cache, never a source of truth: it names the snapshot's epoch and size, and a
//! layout that does not match the snapshot on disk (a kill between the two writes, a snapshot
//! written by an older autolb or by hand) is not used; the caller then reads the whole state.
//! A slice also refuses what it cannot judge alone (an iteration planned since the snapshot, a
//! test whose line is not the test the layout names): the whole state is read instead.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::record_log::{self, Change, Folded};
use super::{Iteration, Run, RunPos, State, TestIteration, STATE_FILE, STATE_FORMAT};
use crate::campaign::CampaignError;

/// Name of the layout file beside the state file.
pub const LAYOUT_FILE: &str = "campaign.layout.json";

/// Where each test's line is in a snapshot, and what a record needs to know of the rest.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Layout {
    /// The snapshot's epoch and size: a layout of another snapshot is not used.
    epoch: u64,
    state_len: u64,
    /// Byte range of the `iterations` value (its `[` to its `]`, included).
    iterations: (u64, u64),
    /// Per iteration, in order.
    by_iteration: Vec<IterationLayout>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct IterationLayout {
    /// [`Iteration::index`].
    index: u32,
    /// Runs not ended when the snapshot was written.
    open: usize,
    /// Per test, in order: its id and the byte range of its line.
    tests: Vec<(u32, u64, u64)>,
}

impl Layout {
    /// Writes the layout beside the snapshot it describes, atomically. A layout not written
    /// leaves the old one, which names another snapshot and is not used: nothing to report.
    pub(super) fn write(&self, dir: &Path) {
        if let Ok(bytes) = serde_json::to_vec(self) {
            let _ = crate::fsutil::write_atomically(&dir.join(LAYOUT_FILE), &bytes);
        }
    }
}

/// Counts the bytes written through it.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    at: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.at += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Where `needle` starts in `hay`, the last time it occurs.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

impl State {
    /// The state without its iterations: what every run shares.
    fn head(&self) -> State {
        State {
            format: self.format,
            settings: self.settings.clone(),
            components: self.components.clone(),
            executor: self.executor.clone(),
            base_dir: self.base_dir.clone(),
            tests: self.tests.clone(),
            iterations: Vec::new(),
            cancelled: self.cancelled,
            journal: self.journal.clone_epoch(),
        }
    }

    /// Writes the state as JSON to `w`, each test of each iteration on a line of its own, and
    /// returns where those lines are. What it writes reads back as this state (a test keeps
    /// it so); the layout's epoch and size are the caller's to fill in.
    pub(super) fn write_snapshot(&self, w: &mut dyn Write) -> std::io::Result<Layout> {
        let mut head = serde_json::to_vec_pretty(&self.head())?;
        // The `iterations` key comes before `cancelled` and `epoch`, which hold no text of
        // the user's: its last occurrence is the key.
        const EMPTY: &[u8] = b"\"iterations\": []";
        let at = rfind(&head, EMPTY)
            .ok_or_else(|| std::io::Error::other("the state's head has no iterations key"))?;
        let value_at = at + EMPTY.len() - 2;
        let tail = head.split_off(value_at + 2);
        head.truncate(value_at);
        let mut out = Counting { inner: w, at: 0 };
        out.write_all(&head)?;
        let start = out.at;
        out.write_all(b"[")?;
        let mut by_iteration = Vec::with_capacity(self.iterations.len());
        for (k, it) in self.iterations.iter().enumerate() {
            out.write_all(if k == 0 { b"\n" } else { b",\n" })?;
            let shell = serde_json::to_vec(&Iteration {
                index: it.index,
                tests: Vec::new(),
                phase: it.phase,
                normalisation: it.normalisation,
            })?;
            // `index` is a number and comes first: the first `"tests":[]` is the key.
            const TESTS: &[u8] = b"\"tests\":[]";
            let t_at = shell
                .windows(TESTS.len())
                .position(|w| w == TESTS)
                .ok_or_else(|| std::io::Error::other("an iteration has no tests key"))?;
            let split = t_at + TESTS.len() - 1;
            out.write_all(&shell[..split])?;
            let mut tests = Vec::with_capacity(it.tests.len());
            for (j, test) in it.tests.iter().enumerate() {
                out.write_all(if j == 0 { b"\n" } else { b",\n" })?;
                let from = out.at;
                serde_json::to_writer(&mut out, test)?;
                tests.push((test.test, from, out.at));
            }
            out.write_all(b"\n")?;
            out.write_all(&shell[split..])?;
            let open = it
                .tests
                .iter()
                .flat_map(|t| &t.runs)
                .filter(|r| !r.state.is_terminal())
                .count();
            by_iteration.push(IterationLayout {
                index: it.index,
                open,
                tests,
            });
        }
        out.write_all(b"\n]")?;
        let end = out.at;
        out.write_all(&tail)?;
        Ok(Layout {
            epoch: self.journal.epoch(),
            state_len: out.at,
            iterations: (start, end),
            by_iteration,
        })
    }

    /// The slice of run `run_id` as the files in `dir` hold it now, or `None` when it cannot be
    /// read alone (no layout that matches the snapshot, an unknown run, an iteration planned
    /// since the snapshot): then read the whole state. Errors are those of reading the log.
    pub fn run_slice(dir: &Path, run_id: &str) -> Result<Option<RunSlice>, CampaignError> {
        let Some(layout) = std::fs::read(dir.join(LAYOUT_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<Layout>(&b).ok())
        else {
            return Ok(None);
        };
        let Some((iteration, test_id, repetition)) = parse_run_id(run_id) else {
            return Ok(None);
        };
        let Some((i, it)) = layout
            .by_iteration
            .iter()
            .enumerate()
            .find(|(_, it)| it.index == iteration)
        else {
            return Ok(None);
        };
        // Only the last iteration's runs: a record there is what may plan the next one.
        if i + 1 != layout.by_iteration.len() {
            return Ok(None);
        }
        let Some((t, &(_, from, to))) = it
            .tests
            .iter()
            .enumerate()
            .find(|(_, &(id, _, _))| id == test_id)
        else {
            return Ok(None);
        };
        let log_path = dir.join(record_log::LOG_FILE);
        // Opened before the snapshot is looked at, as `State::load` does.
        let log = std::fs::File::open(&log_path);
        let path = dir.join(STATE_FILE);
        if record_log::snapshot_epoch(&path, layout.state_len) != Some(layout.epoch) {
            return Ok(None);
        }
        let Some((head, test)) = read_pieces(&path, &layout, (from, to)) else {
            return Ok(None);
        };
        let Ok(mut head) = serde_json::from_slice::<State>(&head) else {
            return Ok(None);
        };
        let Ok(mut test) = serde_json::from_slice::<TestIteration>(&test) else {
            return Ok(None);
        };
        let n = head.components.len();
        if head.format != STATE_FORMAT
            || head.journal.epoch() != layout.epoch
            || test.test != test_id
            || test.nproc.len() != n
            || test.component.is_some_and(|c| c >= n)
        {
            return Ok(None);
        }
        let log_bytes = match log {
            Ok(mut f) => {
                let mut bytes = Vec::new();
                f.read_to_end(&mut bytes).map_err(|e| {
                    CampaignError::io(format!("cannot read {}", log_path.display()), e)
                })?;
                bytes
            }
            Err(_) => Vec::new(),
        };
        let mut ended = BTreeSet::new();
        let mut planned = false;
        let folded = record_log::fold(
            layout.epoch,
            &log_bytes,
            &log_path,
            Folded { seq: 0, len: 0 },
            |change| {
                match change {
                    Change::Test { .. } => {}
                    Change::Iteration { .. } => planned = true,
                    Change::Decision { at, decision } if at == (i, t) => {
                        test.decision = decision.into_owned();
                    }
                    Change::Decision { .. } => {}
                    Change::Run {
                        at: (ri, rt, rr),
                        run,
                    } if ri == i => {
                        if run.state.is_terminal() {
                            ended.insert((rt, rr));
                        }
                        if rt == t {
                            record_log::set_or_push(&mut test.runs, rr, run.into_owned(), "run")?;
                        }
                    }
                    Change::Run { .. } => {}
                    Change::Cancelled => head.cancelled = true,
                }
                Ok(())
            },
        )?;
        let Some(r) = test
            .runs
            .iter()
            .position(|run| run.id == run_id && run.repetition == repetition)
        else {
            return Ok(None);
        };
        if planned {
            return Ok(None);
        }
        // Runs the log ended may have ended before the snapshot too: counting each as ended
        // since only makes the count of runs still open smaller, never larger.
        let open_after = it.open.saturating_sub(ended.len());
        Ok(Some(RunSlice {
            head,
            iteration,
            pos: (i, t, r),
            test,
            others_open: open_after >= 2,
            folded,
            epoch: layout.epoch,
        }))
    }
}

/// The snapshot's head (with an empty `iterations`) and the test's line, read from `path`.
fn read_pieces(path: &Path, layout: &Layout, (from, to): (u64, u64)) -> Option<(Vec<u8>, Vec<u8>)> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).ok()?;
    let (start, end) = layout.iterations;
    if !(start <= from && from <= to && to <= end && end <= layout.state_len) {
        return None;
    }
    let read = |at: u64, len: u64| -> Option<Vec<u8>> {
        let mut buf = vec![0; usize::try_from(len).ok()?];
        file.read_exact_at(&mut buf, at).ok()?;
        Some(buf)
    };
    let mut head = read(0, start)?;
    head.extend_from_slice(b"[]");
    head.extend(read(end, layout.state_len - end)?);
    Some((head, read(from, to - from)?))
}

/// `(iteration, test, repetition)` of a run id `iII-tTT-rR` ([`super::run_id`]).
fn parse_run_id(id: &str) -> Option<(u32, u32, u32)> {
    let rest = id.strip_prefix('i')?;
    let (i, rest) = rest.split_once("-t")?;
    let (t, r) = rest.split_once("-r")?;
    let (i, t, r) = (i.parse().ok()?, t.parse().ok()?, r.parse().ok()?);
    (super::run_id(i, t, r) == id).then_some((i, t, r))
}

/// One run's test as the files hold it, with what every run shares: enough to measure the run,
/// end it and write the record, without the rest of the campaign ([`State::run_slice`]).
#[derive(Debug)]
pub struct RunSlice {
    /// The state without its iterations (settings, components, whether it was cancelled).
    pub head: State,
    /// The run's iteration ([`Iteration::index`]).
    pub iteration: u32,
    /// The run's position in the whole state.
    pub pos: RunPos,
    /// The run's test, with the log's changes folded in.
    pub test: TestIteration,
    /// Whether another run of the iteration is surely still open besides this one: then
    /// ending this one plans nothing.
    pub others_open: bool,
    folded: Folded,
    epoch: u64,
}

impl RunSlice {
    /// The run.
    pub fn run(&self) -> &Run {
        &self.test.runs[self.pos.2]
    }

    /// The run, to change before [`RunSlice::commit_run`].
    pub fn run_mut(&mut self) -> &mut Run {
        &mut self.test.runs[self.pos.2]
    }

    /// Appends the run as it is now to the log, as one record. `Ok(false)` when the log has no
    /// room for it (or is not the log this slice read): then the whole state must be read and
    /// committed instead. The caller holds the campaign's lock.
    pub fn commit_run(&self, dir: &Path) -> Result<bool, CampaignError> {
        let change = Change::Run {
            at: self.pos,
            run: std::borrow::Cow::Borrowed(self.run()),
        };
        Ok(record_log::append_record(dir, self.epoch, self.folded, vec![change])?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_parse_back_and_odd_ones_are_refused() {
        assert_eq!(parse_run_id("i00-t03-r1"), Some((0, 3, 1)));
        assert_eq!(parse_run_id("i12-t105-r10"), Some((12, 105, 10)));
        for odd in [
            "",
            "i0-t03-r1",
            "i00-t3-r1",
            "x00-t03-r1",
            "i00-t03-r",
            "i00-t03-r01",
        ] {
            assert_eq!(parse_run_id(odd), None, "{odd}");
        }
    }

    #[test]
    fn rfind_finds_the_last() {
        assert_eq!(rfind(b"abcabc", b"bc"), Some(4));
        assert_eq!(rfind(b"abc", b"x"), None);
    }
}
