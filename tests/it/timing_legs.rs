//! An EC-Earth4 run directory between two legs: OASIS 5's `load_balancing_info.txt` of one leg
//! beside another leg's `timing.log`, or a `timing.log` holding more than one block, reads as
//! partial, never as a complete run with another leg's wall or simulated time. Every byte cut
//! of either file, the other whole, reads as not complete or as the whole run.

use std::path::{Path, PathBuf};

use autolb::timing::{self, ReadOptions, Reading};

use crate::common::complete_is_whole;

fn fixture_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing/ecearth4/run")
}

/// A copy of the fixture run directory (legs 001 and 002, the OASIS file beside them).
fn run_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "load_balancing_info.txt",
        "log/001/timing.log",
        "log/001/ocean.output",
        "log/002/timing.log",
        "log/002/ocean.output",
    ] {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture_run().join(rel), to).unwrap();
    }
    dir
}

fn opts() -> ReadOptions {
    let mut o = ReadOptions::default();
    for (name, n) in [("OpenIFS", 300), ("oceanx", 29), ("RNFMAP", 1)] {
        o.nproc.insert(name.into(), n);
    }
    o
}

fn read(dir: &Path) -> Result<Reading, timing::TimingError> {
    timing::read(dir, &opts())
}

fn partial_reason(r: &Result<Reading, timing::TimingError>) -> String {
    match r {
        Ok(Reading::Measured(m)) => m.partial.clone().unwrap_or_default(),
        other => panic!("not a measurement: {other:?}"),
    }
}

/// Each prefix of `file` (inside `dir`) in turn, the rest of `dir` as it is: no prefix reads
/// as complete unless it reads as `whole` does.
fn every_cut(dir: &Path, file: &str, whole: &Reading) {
    let path = dir.join(file);
    let text = std::fs::read(&path).unwrap();
    for end in 0..=text.len() {
        std::fs::write(&path, &text[..end]).unwrap();
        let r = read(dir);
        complete_is_whole(&r, whole)
            .unwrap_or_else(|e| panic!("{file} cut at byte {end} of {}: {e}", text.len()));
    }
    std::fs::write(&path, &text).unwrap();
}

#[test]
fn every_cut_of_either_file_with_the_other_whole() {
    let dir = run_copy();
    let whole = read(dir.path()).unwrap();
    let m = whole.complete().expect("the fixture run reads complete");
    assert!((m.coupled_sypd().unwrap() - 24.5).abs() < 1e-4);
    every_cut(dir.path(), "load_balancing_info.txt", &whole);
    every_cut(dir.path(), "log/002/timing.log", &whole);
}

/// The fixture's OASIS file with its window and every component's times scaled by `factor`:
/// the file of a leg `factor` times as long.
fn oasis_of_a_leg(factor: f64) -> String {
    let text = std::fs::read_to_string(fixture_run().join("load_balancing_info.txt")).unwrap();
    let scale = |v: &str| format!("{:8.3}", v.trim().parse::<f64>().unwrap() * factor);
    let mut out = String::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split('/').collect();
        let line = if let Some(v) = line.strip_prefix(" Coupled model simulation time (s): ") {
            format!(" Coupled model simulation time (s): {}", scale(v))
        } else if parts.len() == 3 && parts[1].trim().parse::<f64>().is_ok() {
            format!("{}/ {} / {}", parts[0], scale(parts[1]), scale(parts[2]))
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn a_new_legs_oasis_file_beside_the_last_legs_timing_log_is_partial() {
    // Half a leg: the coupling cost would read 53 % with the last leg's wall time; twice a
    // leg: the window would be longer than the run.
    for (factor, needle) in [(0.5, "less than 67 %"), (2.0, "longer than the model's")] {
        let dir = run_copy();
        std::fs::write(
            dir.path().join("load_balancing_info.txt"),
            oasis_of_a_leg(factor),
        )
        .unwrap();
        let r = read(dir.path());
        let reason = partial_reason(&r);
        assert!(
            reason.contains("disagree on the wall time") && reason.contains(needle),
            "{factor}: {reason}"
        );
        assert!(reason.contains("log/002/timing.log"), "{reason}");
        let Ok(Reading::Measured(m)) = r else {
            unreachable!()
        };
        // No speed is made of the two legs' numbers.
        assert_eq!((m.sim_s, m.coupled_sypd()), (None, None), "{factor}");
        // The CLI says so: a PARTIAL line, and "partial" in the JSON.
        let out = crate::common::autolb()
            .arg("timing")
            .arg(dir.path())
            .arg("--json")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["partial"]
                .as_str()
                .is_some_and(|p| p.contains("disagree on the wall time")),
            "{v}"
        );
    }
    // Within clock noise of the leg's own, the same file reads complete.
    let dir = run_copy();
    std::fs::write(
        dir.path().join("load_balancing_info.txt"),
        oasis_of_a_leg(1.004),
    )
    .unwrap();
    assert!(read(dir.path()).unwrap().complete().is_some());
}

const SECOND_LEG_BLOCK: &str = "Run script elapsed time: 1:01:10.200000\n\
    Model elapsed time (no run script overhead): 0:58:46.530612\n\
    Model speed incl overhead:    23.54 SYPD\n\
    Model speed excl overhead:    24.50 SYPD\n";

#[test]
fn a_timing_log_with_a_second_block_is_partial_at_every_cut() {
    let dir = run_copy();
    let log = dir.path().join("log/002/timing.log");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), SECOND_LEG_BLOCK);
    let whole = read(dir.path()).unwrap();
    assert!(whole.complete().is_some());
    // One block and the start of a second: partial, and no simulated time twice a leg's.
    let next = "Run script elapsed time: 2:02:20.400000\n\
        Model elapsed time (no run script overhead): 1:57:33.061224\n\
        Model speed incl overhead:    23.54 SYPD\n\
        Model speed excl overhead:    24.50 SYPD\n";
    std::fs::write(&log, format!("{SECOND_LEG_BLOCK}{}", &next[..40])).unwrap();
    let r = read(dir.path());
    let reason = partial_reason(&r);
    assert!(
        reason.contains("timing.log: line 5 starts a second block"),
        "{reason}"
    );
    let Ok(Reading::Measured(m)) = r else {
        unreachable!()
    };
    assert_eq!(m.sim_s, None);
    // Two whole blocks: partial as well.
    std::fs::write(&log, format!("{SECOND_LEG_BLOCK}{next}")).unwrap();
    assert!(partial_reason(&read(dir.path())).contains("second block"));
    // Every cut of the two blocks: whole only where the second has not begun.
    every_cut(dir.path(), "log/002/timing.log", &whole);
}
