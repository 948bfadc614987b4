//! The log of changes: torn tails, duplicates, stale logs, old states, compaction, and a
//! property test that any sequence of changes and crashes folds to the state the changes make
//! when applied once.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;

use super::state::{
    run_id, Decision, Iteration, Journal, Outcome, RunMetrics, RunPos, RunState, State, TestRecord,
    LOG_FILE, MAX_LOG_BYTES, STATE_FILE,
};

/// The demo campaign's state, made once (its init runs a prediction).
fn demo_state() -> State {
    static DEMO: OnceLock<(tempfile::TempDir, State)> = OnceLock::new();
    let (_, state) = DEMO.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = super::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
        let state = State::load(&dir).unwrap();
        (tmp, state)
    });
    let mut state = state.clone();
    state.journal = Journal::default();
    state
}

/// A campaign directory holding the demo's state, and that state as loaded from it.
fn demo_dir() -> (tempfile::TempDir, PathBuf, State) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    std::fs::create_dir(&dir).unwrap();
    demo_state().save(&dir).unwrap();
    let state = State::load(&dir).unwrap();
    (tmp, dir, state)
}

fn metrics(state: &State, sypd: f64) -> RunMetrics {
    RunMetrics {
        sypd,
        chsy: 1000.0 + sypd,
        coupling_cost: 0.125,
        partial_coupling_cost: vec![0.0625; state.components.len()],
    }
}

/// Records run `pos` as done at `sypd`, as `campaign record` does.
fn record_done(state: &mut State, pos: RunPos, sypd: f64) {
    let m = metrics(state, sypd);
    let run = state.run_mut(pos);
    run.state = RunState::Done;
    run.attempts = run.attempts.max(1);
    run.metrics = Some(m);
    run.failure = None;
}

/// Records the first `n` runs done, one commit each.
fn commit_first_runs(state: &mut State, dir: &Path, n: usize) {
    for (k, pos) in first_runs(state, n).into_iter().enumerate() {
        record_done(state, pos, 10.0 + k as f64);
        state.commit(dir).unwrap();
    }
}

fn log_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(LOG_FILE)).unwrap_or_default()
}

fn first_runs(state: &State, n: usize) -> Vec<RunPos> {
    state.run_positions().take(n).collect()
}

#[test]
fn a_record_appends_one_line_and_leaves_the_snapshot_alone() {
    let (_tmp, dir, mut state) = demo_dir();
    let snapshot = std::fs::read(dir.join(STATE_FILE)).unwrap();
    let pos = first_runs(&state, 1)[0];
    record_done(&mut state, pos, 12.5);
    state.commit(&dir).unwrap();
    assert_eq!(std::fs::read(dir.join(STATE_FILE)).unwrap(), snapshot);
    let log = log_bytes(&dir);
    assert_eq!(log.iter().filter(|&&b| b == b'\n').count(), 1);
    assert!(log.len() < 2048, "{} bytes for one run", log.len());
    assert_eq!(State::load(&dir).unwrap(), state);
    // Nothing changed: nothing written.
    state.commit(&dir).unwrap();
    assert_eq!(log_bytes(&dir), log);
}

#[test]
fn a_torn_last_line_is_ignored_and_cut_by_the_next_append() {
    let (_tmp, dir, mut state) = demo_dir();
    let runs = first_runs(&state, 2);
    record_done(&mut state, runs[0], 10.0);
    state.commit(&dir).unwrap();
    let after_first = state.clone();
    let whole = log_bytes(&dir).len();
    record_done(&mut state, runs[1], 11.0);
    state.commit(&dir).unwrap();
    let full = log_bytes(&dir);
    // Every cut of the second line, including a cut just before its newline and a line whose
    // checksum no longer matches.
    for cut in whole..full.len() {
        std::fs::write(dir.join(LOG_FILE), &full[..cut]).unwrap();
        assert_eq!(State::load(&dir).unwrap(), after_first, "cut at {cut}");
    }
    let mut flipped = full.clone();
    let last = flipped.len() - 10;
    flipped[last] ^= 0x01;
    std::fs::write(dir.join(LOG_FILE), &flipped).unwrap();
    assert_eq!(
        State::load(&dir).unwrap(),
        after_first,
        "a damaged last line"
    );
    // The writer that comes next cuts the torn tail and appends after the whole lines.
    std::fs::write(dir.join(LOG_FILE), &full[..full.len() - 7]).unwrap();
    let mut again = State::load(&dir).unwrap();
    record_done(&mut again, runs[1], 11.0);
    again.commit(&dir).unwrap();
    assert_eq!(log_bytes(&dir), full);
    assert_eq!(State::load(&dir).unwrap(), state);
}

#[test]
fn a_damaged_line_with_records_after_it_is_an_error_naming_the_line() {
    let (_tmp, dir, mut state) = demo_dir();
    commit_first_runs(&mut state, &dir, 2);
    let mut log = log_bytes(&dir);
    log[40] ^= 0x01;
    std::fs::write(dir.join(LOG_FILE), &log).unwrap();
    let e = State::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains(LOG_FILE) && e.contains("line 1:") && e.contains("checksum"),
        "{e}"
    );
}

#[test]
fn a_record_appended_twice_folds_once() {
    let (_tmp, dir, mut state) = demo_dir();
    let runs = first_runs(&state, 2);
    record_done(&mut state, runs[0], 10.0);
    state.commit(&dir).unwrap();
    let line = log_bytes(&dir);
    // A later change of the same run, then the first record replayed after it: the replay is
    // skipped by its number, so the later change stands.
    let run = state.run_mut(runs[0]);
    run.attempts = 7;
    state.commit(&dir).unwrap();
    let mut log = log_bytes(&dir);
    log.extend_from_slice(&line);
    std::fs::write(dir.join(LOG_FILE), &log).unwrap();
    let loaded = State::load(&dir).unwrap();
    assert_eq!(loaded, state);
    assert_eq!(loaded.run(runs[0]).attempts, 7);
    // And the next record goes after the duplicate, still read.
    let mut loaded = loaded;
    record_done(&mut loaded, runs[1], 11.0);
    loaded.commit(&dir).unwrap();
    assert_eq!(State::load(&dir).unwrap(), loaded);
}

#[test]
fn a_missing_record_is_an_error() {
    let (_tmp, dir, mut state) = demo_dir();
    commit_first_runs(&mut state, &dir, 3);
    let log = String::from_utf8(log_bytes(&dir)).unwrap();
    let kept: Vec<&str> = log
        .lines()
        .enumerate()
        .filter(|(k, _)| *k != 1)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(dir.join(LOG_FILE), kept.join("\n") + "\n").unwrap();
    let e = State::load(&dir).unwrap_err().to_string();
    assert!(e.contains("record 3 follows record 1"), "{e}");
}

#[test]
fn a_log_left_by_a_kill_during_a_whole_save_is_skipped() {
    let (_tmp, dir, mut state) = demo_dir();
    let runs = first_runs(&state, 2);
    record_done(&mut state, runs[0], 10.0);
    state.commit(&dir).unwrap();
    let old_log = log_bytes(&dir);
    state.save(&dir).unwrap();
    assert!(!dir.join(LOG_FILE).exists(), "the log is folded in");
    // Killed after the new snapshot was renamed into place, before the log was removed.
    std::fs::write(dir.join(LOG_FILE), &old_log).unwrap();
    let mut loaded = State::load(&dir).unwrap();
    assert_eq!(loaded, state);
    // Appending after the stale records works, and they stay skipped.
    record_done(&mut loaded, runs[1], 11.0);
    loaded.commit(&dir).unwrap();
    assert_eq!(State::load(&dir).unwrap(), loaded);
}

#[test]
fn a_state_written_before_the_log_loads_and_its_first_commit_writes_it_whole() {
    let (_tmp, dir, _) = demo_dir();
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(STATE_FILE)).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("epoch").unwrap();
    std::fs::write(
        dir.join(STATE_FILE),
        serde_json::to_vec_pretty(&json).unwrap(),
    )
    .unwrap();
    let mut state = State::load(&dir).unwrap();
    assert_eq!(state, demo_state());
    let pos = first_runs(&state, 1)[0];
    record_done(&mut state, pos, 10.0);
    state.commit(&dir).unwrap();
    assert!(!dir.join(LOG_FILE).exists(), "written whole");
    assert_eq!(State::load(&dir).unwrap(), state);
}

#[test]
fn the_log_is_folded_into_the_snapshot_once_it_reaches_its_bound() {
    let (_tmp, dir, mut state) = demo_dir();
    let bound = MAX_LOG_BYTES;
    let pos = first_runs(&state, 1)[0];
    let mut compactions = 0;
    let mut longest = 0;
    for k in 0..4000 {
        state.run_mut(pos).attempts = k;
        state.commit(&dir).unwrap();
        let len = log_bytes(&dir).len() as u64;
        if len < longest {
            compactions += 1;
        }
        longest = len;
        assert!(len <= bound, "{len} > {bound}");
    }
    assert!(compactions >= 1, "the log was never folded in");
    assert_eq!(State::load(&dir).unwrap(), state);
}

#[test]
fn a_new_iteration_and_decisions_land_in_one_record() {
    let (_tmp, dir, mut state) = demo_dir();
    let decision = Decision {
        donor: Some(0),
        recipient: Some(1),
        step: 8,
        next: Some(state.iterations[0].tests[0].nproc.clone()),
        outcome: Outcome::Continue,
        notes: vec!["kept".into()],
    };
    for t in 0..state.iterations[0].tests.len() {
        state.decide(0, t, decision.clone());
    }
    let next = next_iteration(&mut state);
    state.iterations.push(next);
    state.commit(&dir).unwrap();
    assert_eq!(log_bytes(&dir).iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(State::load(&dir).unwrap(), state);
}

/// A copy of the last iteration with every run pending, as a next iteration (and a new test
/// record for its first test, as a strategy that adds a test makes).
fn next_iteration(state: &mut State) -> Iteration {
    let last = state.iterations.last().unwrap();
    let index = last.index + 1;
    let mut next = last.clone();
    next.index = index;
    for test in &mut next.tests {
        test.decision = None;
        for run in &mut test.runs {
            run.id = run_id(index, test.test, run.repetition);
            run.state = RunState::Pending;
            run.metrics = None;
            run.failure = None;
            run.attempts = 0;
        }
    }
    let id = state.tests.iter().map(|t| t.id + 1).max().unwrap_or(0);
    state.tests.push(TestRecord {
        id,
        origin: "original".into(),
    });
    next.tests[0].test = id;
    for run in &mut next.tests[0].runs {
        run.id = run_id(index, id, run.repetition);
    }
    next
}

#[test]
fn commit_to_another_directory_writes_the_state_whole() {
    let (tmp, dir, mut state) = demo_dir();
    let pos = first_runs(&state, 1)[0];
    record_done(&mut state, pos, 10.0);
    state.commit(&dir).unwrap();
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    state.commit(&other).unwrap();
    assert!(!other.join(LOG_FILE).exists());
    assert_eq!(State::load(&other).unwrap(), state);
}

/// What happens between two commits in the property test.
#[derive(Debug, Clone)]
enum Step {
    /// Run `k` (modulo the runs there are) recorded done at `sypd / 4`.
    Done(usize, u16),
    /// Run `k` recorded failed.
    Failed(usize),
    /// Every test of the last iteration decided, and a next iteration planned.
    Advance,
    /// Cancelled: every unfinished run failed.
    Cancel,
    /// The whole state written.
    Compact,
}

/// A crash after a step.
#[derive(Debug, Clone)]
enum Crash {
    None,
    /// The step's append cut at this fraction (in 1/1000) of its line: lost, the state is as
    /// before the step.
    Torn(u16),
    /// The step's line appended a second time (a retry after the append, before its ack).
    Duplicate,
    /// Killed during the step's whole save, after the rename, before the log was removed.
    DuringCompaction,
    /// A restart: the state read again from disk.
    Restart,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (any::<usize>(), 1u16..400).prop_map(|(k, v)| Step::Done(k, v)),
        2 => any::<usize>().prop_map(Step::Failed),
        1 => Just(Step::Advance),
        1 => Just(Step::Cancel),
        1 => Just(Step::Compact),
    ]
}

fn crash() -> impl Strategy<Value = Crash> {
    prop_oneof![
        4 => Just(Crash::None),
        2 => (0u16..1000).prop_map(Crash::Torn),
        1 => Just(Crash::Duplicate),
        1 => Just(Crash::DuringCompaction),
        1 => Just(Crash::Restart),
    ]
}

/// Applies a step to a state in memory.
fn apply_step(state: &mut State, step: &Step) {
    let positions: Vec<RunPos> = state.run_positions().collect();
    match *step {
        Step::Done(k, v) => record_done(state, positions[k % positions.len()], f64::from(v) / 4.0),
        Step::Failed(k) => {
            let run = state.run_mut(positions[k % positions.len()]);
            run.state = RunState::Failed;
            run.failure = Some(format!("exit status {k}"));
        }
        Step::Advance => {
            let last = state.iterations.len() - 1;
            for t in 0..state.iterations[last].tests.len() {
                let decision = Decision {
                    donor: None,
                    recipient: None,
                    step: t as u32,
                    next: None,
                    outcome: Outcome::Continue,
                    notes: Vec::new(),
                };
                state.decide(last, t, decision);
            }
            let next = next_iteration(state);
            state.iterations.push(next);
        }
        Step::Cancel => {
            for pos in positions {
                if !state.run(pos).state.is_terminal() {
                    let run = state.run_mut(pos);
                    run.state = RunState::Failed;
                    run.failure = Some("cancelled".into());
                }
            }
            state.cancelled = true;
        }
        Step::Compact => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Steps written with `commit` (or `save` for a compaction), with crashes between them,
    /// read back as the steps applied once, in memory, to the state of the steps that landed;
    /// and the log folded into a snapshot reads back the same as a plain save of that state.
    #[test]
    fn any_steps_and_crashes_fold_to_the_steps_applied_once(
        plan in proptest::collection::vec((step(), crash()), 1..24),
    ) {
        let (tmp, dir, mut state) = demo_dir();
        // What the steps that landed make, applied once, in memory only.
        let mut expected = demo_state();
        for (step, crash) in &plan {
            let before = expected.clone();
            let log_before = log_bytes(&dir);
            apply_step(&mut expected, step);
            apply_step(&mut state, step);
            if let (Step::Compact, Crash::DuringCompaction) = (step, crash) {
                state.save(&dir).unwrap();
                std::fs::write(dir.join(LOG_FILE), &log_before).unwrap();
                state = State::load(&dir).unwrap();
            } else if let Step::Compact = step {
                state.save(&dir).unwrap();
            } else {
                state.commit(&dir).unwrap();
            }
            let log_after = log_bytes(&dir);
            let appended = log_after.len() > log_before.len()
                && log_after.starts_with(&log_before);
            match crash {
                Crash::Torn(frac) if appended => {
                    let line = log_after.len() - log_before.len();
                    let cut = log_before.len() + line * usize::from(*frac) / 1000;
                    std::fs::write(dir.join(LOG_FILE), &log_after[..cut]).unwrap();
                    // The step never landed: a restart finds the state as before it.
                    state = State::load(&dir).unwrap();
                    prop_assert_eq!(&state, &before);
                    expected = before;
                }
                Crash::Duplicate if appended => {
                    let mut log = log_after.clone();
                    log.extend_from_slice(&log_after[log_before.len()..]);
                    std::fs::write(dir.join(LOG_FILE), &log).unwrap();
                    state = State::load(&dir).unwrap();
                }
                Crash::Restart => state = State::load(&dir).unwrap(),
                _ => {}
            }
            prop_assert_eq!(&State::load(&dir).unwrap(), &expected);
        }
        prop_assert_eq!(&state, &expected);
        // The log folded into a snapshot and a plain save of the expected state read the same.
        let folded = State::load(&dir).unwrap();
        let (plain, compacted) = (tmp.path().join("plain"), tmp.path().join("compacted"));
        for d in [&plain, &compacted] {
            std::fs::create_dir(d).unwrap();
        }
        expected.clone().save(&plain).unwrap();
        folded.clone().save(&compacted).unwrap();
        let read_plain = State::load(&plain).unwrap();
        prop_assert_eq!(&read_plain, &State::load(&compacted).unwrap());
        prop_assert_eq!(&read_plain, &expected);
    }
}

#[test]
fn a_refresh_reads_what_others_appended_and_falls_back_to_a_whole_read() {
    let (_tmp, dir, mut writer) = demo_dir();
    let runs = first_runs(&writer, 3);
    let mut reader = State::load(&dir).unwrap();
    record_done(&mut writer, runs[0], 10.0);
    writer.commit(&dir).unwrap();
    reader.refresh(&dir).unwrap();
    assert_eq!(reader, writer);
    // The reader writes on top of what it refreshed: one more line, read by everyone.
    record_done(&mut reader, runs[1], 11.0);
    reader.commit(&dir).unwrap();
    assert_eq!(log_bytes(&dir).iter().filter(|&&b| b == b'\n').count(), 2);
    assert_eq!(State::load(&dir).unwrap(), reader);
    // A whole save in between (a new epoch): read whole.
    let mut stale = State::load(&dir).unwrap();
    record_done(&mut reader, runs[2], 12.0);
    reader.save(&dir).unwrap();
    stale.refresh(&dir).unwrap();
    assert_eq!(stale, reader);
    // A state changed since it was read is read whole, not mixed.
    let mut changed = State::load(&dir).unwrap();
    changed.run_mut(runs[0]).attempts = 99;
    changed.refresh(&dir).unwrap();
    assert_eq!(changed, reader);
}

#[test]
fn the_snapshot_epoch_is_read_from_its_end_only_when_it_is_the_last_key() {
    // As `save` writes it: the quick refresh finds the epoch the file holds.
    let (_tmp, campaign, _) = demo_dir();
    let snapshot = std::fs::read(campaign.join(STATE_FILE)).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&snapshot).unwrap();
    let epoch = json["epoch"].as_u64().unwrap();
    assert_ne!(epoch, 0);
    assert_eq!(
        super::state::record_log::snapshot_epoch(&campaign.join(STATE_FILE), snapshot.len() as u64),
        Some(epoch)
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let cases: [(&str, Option<u64>); 5] = [
        ("{\n  \"a\": 1,\n  \"epoch\": 42\n}", Some(42)),
        ("{\"a\":1,\"epoch\":7}", Some(7)),
        ("{\n  \"x\": {\"epoch\": 5}\n}", None),
        ("{\n  \"epoch\": 5,\n  \"a\": 1\n}", None),
        ("{\"epoch\":}", None),
    ];
    for (text, want) in cases {
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            super::state::record_log::snapshot_epoch(&path, text.len() as u64),
            want,
            "{text}"
        );
        assert_eq!(
            super::state::record_log::snapshot_epoch(&path, text.len() as u64 + 1),
            None
        );
    }
}
