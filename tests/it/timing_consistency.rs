//! Complete means right: waiting, compute and wall times checked against each other, with a
//! tolerance for clock spread that the real EC-Earth4 negatives pass; a recovered period that
//! is no divisor of a day, and a label a reader expects and does not find, are never complete.

use std::path::{Path, PathBuf};

use autolb::timing::{self, ReadOptions, Reading, TimingError};

use crate::common::fixtures;

/// A fixture file with `from` replaced by `to`, written as `name` into a temp dir.
fn edited(fixture: &str, name: &str, from: &str, to: &str) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(fixtures().join(fixture)).unwrap();
    assert!(text.contains(from), "{fixture} has no {from:?}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    (dir, path)
}

fn period() -> ReadOptions {
    ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    }
}

fn error(path: &Path, o: &ReadOptions) -> String {
    match timing::read(path, o) {
        Err(e @ TimingError::Inconsistent { .. }) => e.to_string(),
        other => panic!("{}: expected an error, got {other:?}", path.display()),
    }
}

const TABLE: &str = "ecearth3/lucia_lite/384IFS_144NEMO/table.csv";
const SUMMARY: &str = "ecearth3/lucia_lite/912IFS_665NEMO/summary";

#[test]
fn a_negative_waiting_time_beyond_clock_noise_is_an_error() {
    let (_d, table) = edited(TABLE, "table.csv", "13.650", "-17.410");
    let e = error(&table, &period());
    assert!(
        e.contains("waiting time of oceanx is -17.41 s, negative beyond clock noise"),
        "{e}"
    );
    let (_d, summary) = edited(
        SUMMARY,
        "summary",
        "Waiting time: 22.895",
        "Waiting time: -17.410",
    );
    let e = error(&summary, &period());
    assert!(e.contains("waiting time of ATMIFS is -17.41 s"), "{e}");
}

#[test]
fn a_compute_time_above_the_coupled_wall_time_is_an_error() {
    let (_d, table) = edited(
        TABLE,
        "table.csv",
        "oceanx,144,225,126.570",
        "oceanx,144,225,999.0",
    );
    let e = error(&table, &period());
    assert!(
        e.contains("computing time of oceanx (999 s) is above the coupled wall time (140.402 s)"),
        "{e}"
    );
    // Compute and waiting together past the wall time: the same.
    let (_d, table) = edited(TABLE, "table.csv", "103.033,35.035", "103.033,95.035");
    let e = error(&table, &period());
    assert!(e.contains("of ATMIFS add up to 198.068 s"), "{e}");
}

#[test]
fn the_real_ec_earth4_clock_noise_negatives_still_read_complete_with_a_note() {
    // The runoff mapper's computing times from EC-Earth4 on HPC2020; runs of hours (here a
    // 10,800 s window) spread the ranks' clocks by more than that.
    for negative in ["-0.092", "-13.561"] {
        let text = std::fs::read_to_string(fixtures().join("load_balancing_info.txt"))
            .unwrap()
            .replacen("1705.213", "10800.000", 1)
            .replacen(
                "       fesom /   1616.470",
                &format!("       fesom /   {negative:>8}"),
                1,
            );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("load_balancing_info.txt");
        std::fs::write(&path, text).unwrap();
        let m = match timing::read(&path, &period()).unwrap() {
            Reading::Measured(m) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(m.partial, None, "{negative}");
        let fesom = m.component("fesom").unwrap();
        assert_eq!(fesom.compute_s, negative.parse::<f64>().unwrap());
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("computing time of fesom") && n.contains("within clock noise")),
            "{negative}: {:?}",
            m.notes
        );
        assert!(m.coupled_sypd().is_some());
    }
    // A small negative in a short table passes too (2 % of 140 s is 2.8 s).
    let (_d, table) = edited(
        TABLE,
        "table.csv",
        "RNFMAP,1,224,0.397",
        "RNFMAP,1,224,-0.092",
    );
    let m = match timing::read(&table, &period()).unwrap() {
        Reading::Measured(m) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(m.partial, None);
}

#[test]
fn a_recovered_period_that_divides_no_day_is_a_guess_not_complete() {
    let fixture = std::fs::read_to_string(fixtures().join(TABLE)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.csv");
    std::fs::write(&path, &fixture).unwrap();
    let m = match timing::read(&path, &ReadOptions::default()).unwrap() {
        Reading::Measured(m) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(m.period_s, Some(2700.0), "snapped to a divisor of a day");
    assert_eq!(m.partial, None);
    // The file's own SYPD damaged so that it implies some 21,330 s: no divisor of a day.
    let damaged = fixture
        .replacen("4176.081", "32991.040", 1)
        .replacen("16.082", "127.048", 1)
        .replacen("13.091", "103.419", 1)
        .replacen("11.802", "93.236", 1);
    std::fs::write(&path, damaged).unwrap();
    let m = match timing::read(&path, &ReadOptions::default()).unwrap() {
        Reading::Measured(m) => m,
        other => panic!("{other:?}"),
    };
    let partial = m
        .partial
        .as_deref()
        .expect("a guessed period is not complete");
    assert!(partial.contains("no divisor of a day"), "{partial}");
    // With --period the file is complete as before.
    let m = match timing::read(&path, &period()).unwrap() {
        Reading::Measured(m) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(m.partial, None);
}

#[test]
fn a_label_the_summary_reader_expects_and_does_not_find_makes_it_partial() {
    for (from, to, label) in [
        (
            "Number of processes: 912",
            "Numbr of processes: 912",
            "Number of processes",
        ),
        (
            "Number of processes: 912",
            "Number of processes: x912",
            "Number of processes",
        ),
        (
            "Component execution time: 551.386",
            "Component executon time: 551.386",
            "Component execution time",
        ),
        (
            "Waiting time: 22.895",
            "Wating time: 22.895",
            "Waiting time",
        ),
    ] {
        let (_d, path) = edited(SUMMARY, "summary", from, to);
        let m = match timing::read(&path, &period()).unwrap() {
            Reading::Measured(m) => m,
            other => panic!("{to}: {other:?}"),
        };
        let partial = m
            .partial
            .as_deref()
            .unwrap_or_else(|| panic!("{to}: read as complete"));
        assert!(
            partial.contains("ATMIFS") && partial.contains(label),
            "{to}: {partial}"
        );
    }
    // The table: an empty PE count in a whole row.
    let (_d, table) = edited(TABLE, "table.csv", "ATMIFS,384,", "ATMIFS,,");
    match timing::read(&table, &period()) {
        Ok(Reading::Measured(m)) => assert!(m.partial.is_some(), "{m:?}"),
        Ok(other) => panic!("{other:?}"),
        // The Coupled row's PE sum no longer matches: an error is fine too.
        Err(_) => {}
    }
}
