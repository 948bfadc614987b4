//! Records made on a run's slice of the state ([`State::run_slice`]) against records made on
//! the whole state: the same state, the same answers, whichever way a record goes.

use std::path::Path;
use std::time::Duration;

use super::external::SLICE_RECORDS;
use super::state::{State, TestIteration, LAYOUT_FILE, LOG_FILE, STATE_FILE};

/// The demo campaign, made by its init (curves and all, so that its iterations can be planned).
fn demo_dir() -> (tempfile::TempDir, std::path::PathBuf, State) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = super::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let state = State::load(&dir).unwrap();
    (tmp, dir, state)
}

fn slice_records() -> usize {
    SLICE_RECORDS.with(|n| n.get())
}

/// The state in `dir` with every run's end time and the campaign's directory cleared (what
/// two campaigns recorded alike, in two places and at two moments, differ in).
fn timeless(dir: &Path) -> State {
    let mut state = State::load(dir).unwrap();
    state.base_dir = std::path::PathBuf::new();
    for i in 0..state.iterations.len() {
        for test in &mut state.iterations[i].tests {
            for run in &mut test.runs {
                run.ended_at = None;
            }
        }
    }
    state
}

/// Every run id of the campaign's last iteration, in order.
fn last_iteration_runs(dir: &Path) -> Vec<String> {
    let state = State::load(dir).unwrap();
    let it = state.iterations.last().unwrap();
    it.tests
        .iter()
        .flat_map(|t| t.runs.iter().map(|r| r.id.clone()))
        .collect()
}

#[test]
fn each_test_of_the_snapshot_is_a_line_the_layout_points_at() {
    let (_tmp, dir, state) = demo_dir();
    let bytes = std::fs::read(dir.join(STATE_FILE)).unwrap();
    let layout: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(LAYOUT_FILE)).unwrap()).unwrap();
    assert_eq!(layout["state_len"].as_u64().unwrap(), bytes.len() as u64);
    let by_iteration = layout["by_iteration"].as_array().unwrap();
    assert_eq!(by_iteration.len(), state.iterations.len());
    for (it, laid) in state.iterations.iter().zip(by_iteration) {
        let tests = laid["tests"].as_array().unwrap();
        assert_eq!(tests.len(), it.tests.len());
        for (test, range) in it.tests.iter().zip(tests) {
            let (id, from, to) = (
                range[0].as_u64().unwrap(),
                range[1].as_u64().unwrap(),
                range[2].as_u64().unwrap(),
            );
            assert_eq!(id, u64::from(test.test));
            let line = &bytes[from as usize..to as usize];
            let read: TestIteration = serde_json::from_slice(line).unwrap();
            assert_eq!(&read, test);
            assert!(!line.contains(&b'\n'), "one line per test");
        }
    }
    // What the snapshot says is the state, and it is JSON any reader takes.
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let again: State = serde_json::from_value(value).unwrap();
    assert_eq!(again, state);
}

#[test]
fn records_on_slices_end_where_records_on_the_whole_state_do() {
    let (_a_tmp, a, _) = demo_dir();
    let (_b_tmp, b, _) = demo_dir();
    let wait = Duration::from_secs(5);
    let runs = last_iteration_runs(&a);
    assert!(
        runs.len() >= 3,
        "the demo's first iteration has several runs"
    );
    let before = slice_records();
    for (k, id) in runs.iter().enumerate() {
        // Without a layout every record reads the whole state.
        let _ = std::fs::remove_file(b.join(LAYOUT_FILE));
        let why = format!("node {k} lost");
        let on_slice = super::record(&a, id, None, Some(&why), wait).unwrap();
        let on_whole = super::record(&b, id, None, Some(&why), wait).unwrap();
        assert_eq!(
            (
                on_slice.state,
                on_slice.done,
                on_slice.advance.new_iteration
            ),
            (
                on_whole.state,
                on_whole.done,
                on_whole.advance.new_iteration
            ),
            "record of {id}"
        );
        assert_eq!(timeless(&a), timeless(&b), "after recording {id}");
    }
    // Every record but the iteration's last went on a slice; the last planned what follows.
    assert_eq!(slice_records() - before, runs.len() - 1);
    // A record again of the same outcome changes nothing, either way.
    let again = super::record(&a, &runs[0], None, Some("node 0 lost"), wait).unwrap();
    assert!(again.again);
}

#[test]
fn a_layout_of_another_snapshot_is_not_used() {
    let (_tmp, dir, _) = demo_dir();
    let runs = last_iteration_runs(&dir);
    let stale = std::fs::read(dir.join(LAYOUT_FILE)).unwrap();
    // The same state written again: a new epoch, so the old layout names another snapshot.
    let mut state = State::load(&dir).unwrap();
    state.save(&dir).unwrap();
    std::fs::write(dir.join(LAYOUT_FILE), &stale).unwrap();
    let before = slice_records();
    super::record(&dir, &runs[0], None, Some("lost"), Duration::from_secs(5)).unwrap();
    assert_eq!(slice_records(), before, "read whole");
    // A snapshot rewritten by hand (pretty, other offsets) with its layout left: read whole.
    let value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(STATE_FILE)).unwrap()).unwrap();
    let mut text = serde_json::to_string_pretty(&value).unwrap();
    text.push('\n');
    std::fs::write(dir.join(STATE_FILE), text).unwrap();
    super::record(&dir, &runs[1], None, Some("lost"), Duration::from_secs(5)).unwrap();
    assert_eq!(slice_records(), before, "read whole");
    let state = State::load(&dir).unwrap();
    assert!(state
        .run(state.find_run(&runs[1]).unwrap())
        .state
        .is_terminal());
}

#[test]
fn a_slice_folds_the_log_and_cuts_a_torn_line() {
    let (_tmp, dir, _) = demo_dir();
    let runs = last_iteration_runs(&dir);
    let wait = Duration::from_secs(5);
    let before = slice_records();
    super::record(&dir, &runs[0], None, Some("first"), wait).unwrap();
    // A torn line at the end of the log, as a kill mid-append leaves it.
    let mut log = std::fs::read(dir.join(LOG_FILE)).unwrap();
    let whole = log.len();
    log.extend_from_slice(b"{\"crc\":\"0000");
    std::fs::write(dir.join(LOG_FILE), &log).unwrap();
    super::record(&dir, &runs[1], None, Some("second"), wait).unwrap();
    assert_eq!(slice_records() - before, 2);
    let log = std::fs::read(dir.join(LOG_FILE)).unwrap();
    assert!(log.ends_with(b"\n") && log.len() > whole);
    let state = State::load(&dir).unwrap();
    for (id, why) in [(&runs[0], "first"), (&runs[1], "second")] {
        let run = state.run(state.find_run(id).unwrap());
        assert_eq!(run.failure.as_deref(), Some(why));
    }
    // The first run's record is in the slice the second read: recording it again as
    // something else is a conflict, not a second result.
    let e = super::record(&dir, &runs[0], None, Some("other"), wait);
    assert!(e.is_ok_and(|r| r.again), "failed again is the same outcome");
}
