//! Half-written and damaged timing output: a measurement of the complete part
//! marked partial, or Incomplete, never a panic and never a wrong number passed off as complete.

use std::path::{Path, PathBuf};

use autolb::timing::{self, lucia_log, lucia_raw, oasis5, step_series, table};
use autolb::timing::{Format, Measurement, ReadOptions, Reading, TimingError};
use proptest::prelude::*;

use crate::common;
use crate::common::{complete_is_whole, fixtures, sr_options};

fn raw_sample() -> PathBuf {
    fixtures().join("ecearth3/lucia_raw/240IFS_144NEMO")
}

fn opts_240_144() -> ReadOptions {
    let mut o = ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    };
    o.nproc.insert("ATMIFS".into(), 240);
    o.nproc.insert("oceanx".into(), 144);
    o
}

/// A copy of the raw sample in a temp dir, to damage.
fn copy_raw() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(raw_sample()).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("lucia.")
        {
            std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    dir
}

fn measured(r: Result<Reading, TimingError>) -> Measurement {
    match r {
        Ok(Reading::Measured(m)) => m,
        other => panic!("expected a measurement, got {other:?}"),
    }
}

fn full() -> Measurement {
    measured(timing::read(&raw_sample(), &opts_240_144()))
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

fn lines_kept(path: &Path, keep: usize) {
    edit(path, |t| {
        t.lines().take(keep).map(|l| format!("{l}\n")).collect()
    });
}

#[test]
fn raw_tabs_and_crlf_read_exactly_like_the_original() {
    let dir = copy_raw();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        edit(&e.unwrap().path(), |t| {
            t.replace("Balance: ", "Balance:\t").replace('\n', "\r\n")
        });
    }
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    assert_eq!(m, full());
}

#[test]
fn raw_cut_mid_line_measures_the_complete_part() {
    let dir = copy_raw();
    let f = dir.path().join("lucia.01.000012");
    // Keep 100 whole lines and half of the next (inside a time value).
    edit(&f, |t| {
        let mut kept: String = t.lines().take(100).map(|l| format!("{l}\n")).collect();
        kept.push_str("Balance: 002 After  MPI get 17000000");
        kept
    });
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    let why = m.partial.as_deref().expect("a cut file is partial");
    assert!(
        why.contains("lucia.01.000012") && why.contains("middle of line 101"),
        "{why}"
    );
    // 100 lines = 4 header + 16 exchanges of 6 lines: 16 exchanges, 12 analysed steps.
    assert_eq!(m.components[0].steps, 12);
    assert!(m
        .components
        .iter()
        .all(|c| c.compute_s > 0.0 && c.wait_s >= 0.0));
    assert!(timing::read(dir.path(), &opts_240_144())
        .unwrap()
        .complete()
        .is_none());
}

#[test]
fn many_cut_rank_files_make_one_compact_note() {
    let dir = copy_raw();
    let mut cut = 0;
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("lucia.02.") {
            edit(&e.path(), |t| {
                let mut kept: String = t.lines().take(100).map(|l| format!("{l}\n")).collect();
                kept.push_str("Balance: 002 After  MPI get 17000000");
                kept
            });
            cut += 1;
        }
    }
    assert!(cut >= 3, "the sample has {cut} NEMO rank files");
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    let why = m.partial.unwrap();
    assert!(
        why.contains(&format!("rank files; {cut} cut: lucia.02.000000, ")),
        "{why}"
    );
    assert!(why.contains(" ... (first: "), "{why}");
    assert_eq!(
        why.matches("lucia.02.").count(),
        3,
        "each file named once at most: {why}"
    );
}

#[test]
fn raw_before_without_after_is_partial() {
    let dir = copy_raw();
    let f = dir.path().join("lucia.02.000000");
    // 4 header lines + 20 exchanges, then a Before get with no After.
    lines_kept(&f, 4 + 20 * 6 + 5);
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    let why = m.partial.unwrap();
    assert!(why.contains("Before with no After"), "{why}");
    assert_eq!(m.components[1].steps, 20 - 4);
}

#[test]
fn raw_overflowed_times_end_the_complete_part() {
    let dir = copy_raw();
    let f = dir.path().join("lucia.01.000000");
    edit(&f, |t| {
        let mut lines: Vec<String> = t.lines().map(String::from).collect();
        lines[4 + 30 * 6 + 1] = "Balance: 001 After  interpo ****************".into();
        lines.join("\n") + "\n"
    });
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    assert!(m.partial.unwrap().contains("overflowed"));
    assert_eq!(m.components[0].steps, 30 - 4);
}

#[test]
fn raw_three_digit_field_overflow_is_read() {
    // `***` field ids (ids above 999) still count as one field per exchange.
    let dir = copy_raw();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        edit(&e.unwrap().path(), |t| {
            t.replace("SN 0001", "SN 1001")
                .replace("RC 0001", "RC 1001")
                .replace("Balance: 001 ", "Balance: *** ")
        });
    }
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    assert_eq!(m, Measurement { ..full() });
}

#[test]
fn raw_missing_rank_files_are_partial() {
    let dir = copy_raw();
    std::fs::remove_file(dir.path().join("lucia.01.000024")).unwrap();
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    assert!(m.partial.unwrap().contains("lucia.01.000024"));
    // Without nproc, the gap in the rank sequence is noticed too.
    let m = measured(timing::read(dir.path(), &ReadOptions::default()));
    assert!(m.partial.unwrap().contains("lucia.01.000024"));
    // A rank file beyond the given nproc is a wrong --nproc, said clearly.
    let mut o = opts_240_144();
    o.nproc.insert("ATMIFS".into(), 200);
    let e = timing::read(dir.path(), &o).unwrap_err().to_string();
    assert!(
        e.contains("lucia.01.000204") && e.contains("ATMIFS=200"),
        "{e}"
    );
}

#[test]
fn raw_empty_files_and_directories_are_incomplete() {
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        timing::read(empty.path(), &ReadOptions::default()),
        Ok(Reading::Incomplete { .. })
    ));
    let dir = copy_raw();
    std::fs::write(dir.path().join("lucia.02.000007"), "").unwrap();
    assert!(matches!(
        timing::read(dir.path(), &opts_240_144()),
        Ok(Reading::Incomplete { .. })
    ));
    // Too few exchanges for the window (skip 2 + last 1).
    let dir = copy_raw();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        lines_kept(&e.unwrap().path(), 4 + 4 * 6);
    }
    match timing::read(dir.path(), &opts_240_144()).unwrap() {
        Reading::Incomplete { reason } => assert!(reason.contains("only 4"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn raw_ranks_behind_the_others_bound_the_window() {
    let dir = copy_raw();
    lines_kept(&dir.path().join("lucia.02.000140"), 4 + 25 * 6);
    let m = measured(timing::read(dir.path(), &opts_240_144()));
    assert!(m.partial.unwrap().contains("disagree"));
    assert!(m.components.iter().all(|c| c.steps == 25 - 4));
}

#[test]
fn raw_without_nproc_or_period_leaves_those_metrics_out() {
    let m = measured(timing::read(&raw_sample(), &ReadOptions::default()));
    assert_eq!(m.partial, None);
    assert_eq!(m.components[0].nproc, None);
    assert_eq!(m.components[0].sampled_ranks, Some(20));
    assert!(m.chsy().is_none() && m.coupling_cost().is_none() && m.coupled_sypd().is_none());
    assert!(m.notes.iter().any(|n| n.contains("--nproc ATMIFS=N")));
}

#[test]
fn tables_tolerate_tabs_crlf_and_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let original =
        std::fs::read_to_string(fixtures().join("ecearth3/lucia_lite/240IFS_144NEMO/table.csv"))
            .unwrap();
    let opts = ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    };
    let reference = measured(table::read_table(
        original.as_bytes(),
        Path::new("t"),
        &opts,
    ));
    let tabbed = original.replace(',', ",\t").replace('\n', "\r\n");
    assert_eq!(
        measured(table::read_table(tabbed.as_bytes(), Path::new("t"), &opts)),
        reference
    );
    // Cut inside the Coupled row before its exec_time is whole: no wall time, incomplete.
    let cut = &original[..original.find("Coupled,385,225,158").unwrap() + 18];
    let m = measured(table::read_table(cut.as_bytes(), Path::new("t"), &opts));
    assert!(m.partial.is_some() && m.wall_s.is_none() && m.coupled_sypd().is_none());
    // Cut before the Coupled row: incomplete.
    let cut = &original[..original.find("Coupled").unwrap()];
    assert!(matches!(
        table::read_table(cut.as_bytes(), Path::new("t"), &opts),
        Ok(Reading::Incomplete { .. })
    ));
    // Empty file: incomplete, through `read` too.
    let empty = dir.path().join("table.csv");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        timing::read(&empty, &opts),
        Ok(Reading::Incomplete { .. })
    ));
    // Overflowed exec_time: that component is left out, marked partial.
    let starred = original.replace("138.170", "*******");
    let m = measured(table::read_table(starred.as_bytes(), Path::new("t"), &opts));
    assert!(m.partial.is_some() && m.component("ATMIFS").is_none());
    // Garbage in a number column is an error naming file, line and value.
    let bad = original.replace("138.170", "13x.170");
    let e = table::read_table(bad.as_bytes(), Path::new("t.csv"), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.csv: line 3") && e.contains("13x.170"), "{e}");
}

#[test]
fn lucia_log_fixture() {
    let path = fixtures().join("lucia.log");
    let m = measured(timing::read(&path, &ReadOptions::default()));
    assert_eq!(m.format, Format::LuciaLog);
    let fesom = m.component("fesom").unwrap();
    assert_eq!(
        (fesom.compute_s, fesom.wait_s, fesom.steps),
        (1616.47, 45.08, 4377)
    );
    assert_eq!((fesom.interp_s, fesom.jitter_s), (Some(3.21), Some(0.55)));
    // Wall = the largest calculations + waiting.
    assert!((m.wall_s.unwrap() - (1616.47 + 45.08)).abs() < 1e-9);
    assert!(m.coupled_sypd().is_none());
    // Names cut to 6 characters take the full name from --nproc.
    let log = "  Component -  Calculations - Waiting time (s) - # cpl step :\n  oceanx   100.0  5.0  40\n  ATMIFS   90.0  15.0  40\n";
    let mut o = ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    };
    o.nproc.insert("oceanxyz".into(), 144);
    o.nproc.insert("ATMIFS".into(), 240);
    let m = measured(lucia_log::read(log.as_bytes(), Path::new("l"), &o));
    assert_eq!(m.components[0].name, "oceanxyz");
    assert_eq!(m.components[0].nproc, Some(144));
    assert!(m.chsy().is_some());
    // Cut: partial; nothing yet: incomplete.
    let m = measured(lucia_log::read(
        &log.as_bytes()[..log.len() - 6],
        Path::new("l"),
        &o,
    ));
    assert!(m.partial.is_some() && m.components.len() == 1);
    assert!(matches!(
        lucia_log::read(b"  Component -  Calculations - Waiting", Path::new("l"), &o),
        Ok(Reading::Incomplete { .. })
    ));
}

#[test]
fn oasis5_fixtures() {
    let mut o = ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    };
    let m = measured(timing::read(
        &fixtures().join("load_balancing_info.txt"),
        &o,
    ));
    assert_eq!(m.format, Format::Oasis5);
    assert_eq!(m.partial, None);
    let oifs = m.component("oifs").unwrap();
    assert_eq!((oifs.nproc, oifs.steps), (Some(576), 4377));
    assert_eq!((oifs.interp_s, oifs.send_s), (Some(12.4), Some(1.42)));
    assert_eq!(m.wall_s, Some(1705.213));
    assert_eq!(m.sim_s, Some(4377.0 * 2700.0));
    // SYPD recomputed: 4377 * 2700 s in 1705.213 s.
    let sypd = 4377.0 * 2700.0 / (365.0 * 86400.0) / (1705.213 / 86400.0);
    assert!((m.coupled_sypd().unwrap() - sypd).abs() < 1e-9);
    assert!(m.chsy().is_some() && m.coupling_cost().is_some());

    o.nproc.insert("ifs1".into(), 96);
    let m = measured(timing::read(
        &fixtures().join("load_balancing_info_overflow.txt"),
        &o,
    ));
    assert!(m.partial.as_deref().unwrap().contains("nemo4"));
    let ifs1 = m.component_index("ifs1").unwrap();
    assert_eq!(m.components[ifs1].compute_s, -3.25);
    assert_eq!(m.component_sypd(ifs1), None);
    assert!(m.notes.iter().any(|n| n.contains("negative")));
    let ifs2 = m.component("ifs2").unwrap();
    assert_eq!((ifs2.nproc, ifs2.steps), (Some(384), 2920));
}

#[test]
fn step_series_tolerates_crlf_and_cuts() {
    let path = fixtures().join("ecearth3/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let o = ReadOptions::default();
    let reference = measured(step_series::read(text.as_bytes(), &path, &o));
    let crlf = text.replace('\n', "\r\n");
    assert_eq!(
        measured(step_series::read(crlf.as_bytes(), &path, &o)),
        reference
    );
    let cut = &text[..text.len() / 2];
    let m = measured(step_series::read(cut.as_bytes(), &path, &o));
    assert!(m.partial.is_some() && m.series[0].rows.len() < 127);
}

#[test]
fn format_detection_and_override() {
    let lite = fixtures().join("ecearth3/lucia_lite/576IFS_1275NEMO");
    // Unusual names are recognised by their content.
    for (name, format) in [
        ("_t2table.csv", Format::Table),
        ("_t2summary", Format::Summary),
    ] {
        let m = measured(timing::read(&lite.join(name), &ReadOptions::default()));
        assert_eq!(m.format, format, "{name}");
    }
    // --format on a directory picks that format's file.
    let o = ReadOptions {
        format: Some(Format::Summary),
        ..ReadOptions::default()
    };
    assert_eq!(measured(timing::read(&lite, &o)).format, Format::Summary);
    // A file of no known format: an error naming it and saying what to do.
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("notes.txt");
    std::fs::write(&odd, "hello\n").unwrap();
    let e = timing::read(&odd, &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("notes.txt") && e.contains("--format"), "{e}");
    let e = timing::read(&dir.path().join("nope"), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
    assert_eq!("lucia-raw".parse::<Format>(), Ok(Format::LuciaRaw));
    assert!("xml".parse::<Format>().unwrap_err().contains("lucia-raw"));
}

// --- Complete means complete: each damaged file that once passed for complete. ---

fn lite(run: &str, file: &str) -> (PathBuf, Vec<u8>) {
    let path = fixtures().join("ecearth3/lucia_lite").join(run).join(file);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn is_not_complete(r: &Result<Reading, TimingError>) -> bool {
    !matches!(r, Ok(reading) if reading.complete().is_some())
}

#[test]
fn summary_cut_at_byte_1311_is_not_complete() {
    // The trial: read as complete with the oceanx block missing, CHSY 553.9 instead of 884.9.
    let (path, bytes) = lite("240IFS_144NEMO", "summary");
    let o = sr_options();
    let whole = measured(table::read_summary(&bytes, &path, &o));
    assert!(
        (whole.chsy().unwrap() - 884.9).abs() < 0.1,
        "{:?}",
        whole.chsy()
    );
    let r = table::read_summary(&bytes[..1311], &path, &o);
    let m = measured(r);
    assert!(m.component("oceanx").is_none());
    let why = m
        .partial
        .expect("a summary without its run totals is partial");
    assert!(why.contains("Coupled SYPD"), "{why}");
}

#[test]
fn summary_with_a_block_lost_or_damaged_is_an_error() {
    let (path, bytes) = lite("240IFS_144NEMO", "summary");
    let text = String::from_utf8(bytes).unwrap();
    let o = sr_options();
    // The ATMIFS block removed from the middle: the totals say 385 PEs, the blocks 145.
    let start = text.find("ATMIFS\n").unwrap();
    let end = text.find("oceanx\n").unwrap();
    let lost = format!("{}{}", &text[..start], &text[end..]);
    let e = table::read_summary(lost.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("145 PEs") && e.contains("385"), "{e}");
    // One block's PEs damaged.
    let damaged = text.replacen("Number of processes: 144", "Number of processes: 154", 1);
    assert!(table::read_summary(damaged.as_bytes(), &path, &o).is_err());
    // Blocks that disagree on the coupled execution time.
    let disagree = text.replacen(
        "Coupled execution time: 158.685",
        "Coupled execution time: 158.695",
        1,
    );
    let e = table::read_summary(disagree.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("disagree"), "{e}");
    // The older summary (no core-hours line) is checked through CHPY x SYPD / 24.
    let (old_path, old) = lite("432IFS_331NEMO", "summary");
    let old = String::from_utf8(old).unwrap();
    assert!(measured(table::read_summary(old.as_bytes(), &old_path, &o))
        .partial
        .is_none());
    let start = old.find("oceanx\n").unwrap();
    let end = old.find("RNFMAP\n").unwrap();
    let lost = format!("{}{}", &old[..start], &old[end..]);
    assert!(table::read_summary(lost.as_bytes(), &old_path, &o).is_err());
    // ... but the same file cut inside its last line (CHPY) is partial, not an error.
    let cut = &old[..old.len() - 4];
    let m = measured(table::read_summary(cut.as_bytes(), &old_path, &o));
    assert!(m.partial.as_deref().unwrap_or("").contains("CHPSY") || m.partial.is_none());
}

#[test]
fn lucia_log_cut_at_byte_415_is_not_complete() {
    // The trial: CHSY 354.7 instead of 1064.1 from a log cut after its first component.
    let path = fixtures().join("lucia.log");
    let bytes = std::fs::read(&path).unwrap();
    let mut o = sr_options();
    o.nproc.insert("fesom".into(), 288);
    o.nproc.insert("oifs".into(), 576);
    let whole = measured(lucia_log::read(&bytes, &path, &o));
    assert!(
        (whole.chsy().unwrap() - 1064.1).abs() < 0.1,
        "{:?}",
        whole.chsy()
    );
    let m = measured(lucia_log::read(&bytes[..415], &path, &o));
    let why = m
        .partial
        .expect("a component table not yet closed is partial");
    assert!(why.contains("another row may come"), "{why}");
    // The additional informations of one component missing: partial.
    let text = String::from_utf8(bytes).unwrap();
    let end = text.find("  oifs                    12.40").unwrap();
    let m = measured(lucia_log::read(&text.as_bytes()[..end], &path, &o));
    assert!(m.partial.unwrap().contains("oifs"));
    // A row lost from the component table while its additional row stays: an error.
    let lost = text.replace(
        "  oifs                     1263.30                397.72          4377\n",
        "",
    );
    let e = lucia_log::read(lost.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("oifs") && e.contains("lacks"), "{e}");
    // A component twice: an error.
    let twice = text.replace(
        "  oifs                     1263.30",
        "  fesom                    1263.30",
    );
    assert!(lucia_log::read(twice.as_bytes(), &path, &o).is_err());
}

#[test]
fn oasis5_without_every_section_is_not_complete() {
    let path = fixtures().join("load_balancing_info.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let o = sr_options();
    // Cut at the end of each line: only the whole file is complete.
    let whole = oasis5::read(text.as_bytes(), &path, &o).unwrap();
    assert!(whole.complete().is_some());
    // Up to the last line autolb uses (oifs's put time); what follows it is not used.
    let last_used = text.rfind("Total put time").unwrap();
    let ends = text.match_indices('\n').map(|(i, _)| i + 1);
    for end in ends.filter(|&e| e < last_used) {
        let r = oasis5::read(&text.as_bytes()[..end], &path, &o);
        assert!(is_not_complete(&r), "complete at byte {end}: {r:?}");
    }
    // A model line lost from the block while its section stays: an error.
    let lost = text.replace("        oifs /   1263.300 /    397.720\n", "");
    let e = oasis5::read(lost.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("oifs") && e.contains("lacks"), "{e}");
}

#[test]
fn table_with_a_damaged_header_or_row_is_an_error() {
    let (path, bytes) = lite("240IFS_144NEMO", "table.csv");
    let text = String::from_utf8(bytes).unwrap();
    let o = sr_options();
    let whole = measured(table::read_table(text.as_bytes(), &path, &o));
    assert!((whole.coupled_sypd().unwrap() - 10.442).abs() < 0.01);
    // The trial: one byte of the header (`,nproc` -> `Unproc`) shifted every column, SYPD 6.167.
    let unproc = format!("U{}", &text[1..]);
    let e = table::read_table(unproc.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 1") && e.contains("Unproc") && e.contains("header"),
        "{e}"
    );
    // A row with 8 fields.
    let short = text.replace("ATMIFS,240,225,138.170,", "ATMIFS,240,225,");
    let e = table::read_table(short.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") && e.contains("8 fields"), "{e}");
    // A row with 10 fields.
    let long = text.replace("ATMIFS,240,", "ATMIFS,240,1,");
    assert!(table::read_table(long.as_bytes(), &path, &o).is_err());
    // A component row lost: the Coupled row's PEs no longer add up.
    let lost = text.replace(
        "oceanx,144,225,126.328,32.223,0.117,13.117,263.483,7.627\n",
        "",
    );
    let e = table::read_table(lost.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("241 PEs") && e.contains("385"), "{e}");
    // A component twice.
    let twice = text.replace("oceanx,144", "ATMIFS,144");
    assert!(table::read_table(twice.as_bytes(), &path, &o).is_err());
    // A header still being written is no header yet.
    assert!(matches!(
        table::read_table(b",nproc,number_ts,exec", &path, &o),
        Ok(Reading::Incomplete { .. })
    ));
}

#[test]
fn step_series_with_extra_columns_or_unordered_times_is_an_error() {
    let path = fixtures().join("ecearth3/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let o = sr_options();
    let whole = measured(step_series::read(text.as_bytes(), &path, &o));
    assert!(whole.partial.is_none());
    // The trial: `145800` -> `14,800` gave SYPD 1.09 instead of 15.5.
    let comma = text.replace("\n145800,", "\n14,800,");
    let e = step_series::read(comma.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 47") && e.contains("6 columns"), "{e}");
    // A time that goes back, and one that repeats.
    let back = text.replace("\n145800,", "\n14580,");
    let e = step_series::read(back.as_bytes(), &path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 47") && e.contains("must increase"), "{e}");
    let repeat = text.replace("\n145800,", "\n143100,");
    assert!(step_series::read(repeat.as_bytes(), &path, &o).is_err());
    // A header with an extra column.
    let header = text.replacen(",Sending", ",Sending,Extra", 1);
    assert!(step_series::read(header.as_bytes(), &path, &o).is_err());
}

#[test]
fn pe_counts_in_the_file_must_be_the_runs() {
    // The trial: `record` of a 408/240 run accepted a 960/144 table.
    let (path, bytes) = lite("240IFS_144NEMO", "table.csv");
    let mut o = sr_options();
    o.nproc.insert("ATMIFS".into(), 408);
    o.nproc.insert("oceanx".into(), 144);
    let e = table::read_table(&bytes, &path, &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ATMIFS") && e.contains("240") && e.contains("408"),
        "{e}"
    );
    let (spath, sbytes) = lite("240IFS_144NEMO", "summary");
    assert!(matches!(
        table::read_summary(&sbytes, &spath, &o),
        Err(TimingError::NprocMismatch {
            in_file: 240,
            expected: 408,
            ..
        })
    ));
    let steps = fixtures().join("ecearth3/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let mut so = sr_options();
    so.nproc.insert("ifs".into(), 480);
    assert!(timing::read(&steps, &so).is_err());
    let oasis = fixtures().join("load_balancing_info.txt");
    let mut oo = sr_options();
    oo.nproc.insert("oifs".into(), 512);
    let e = timing::read(&oasis, &oo).unwrap_err().to_string();
    assert!(
        e.contains("oifs") && e.contains("576") && e.contains("512"),
        "{e}"
    );
    // The same counts are accepted.
    o.nproc.insert("ATMIFS".into(), 240);
    assert!(measured(table::read_table(&bytes, &path, &o))
        .partial
        .is_none());
}

#[test]
fn a_fifo_or_device_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("table.csv");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = timing::read(&fifo, &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("FIFO"), "{e}");
    let e = timing::read(Path::new("/dev/zero"), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn every_cut_of_every_text_sample_is_whole_or_not_complete() {
    // Short version of the cut-at-every-byte attack: one run of each format, every byte.
    // The long version (all 59 lucia_lite files) is `timing_fuzz::cuts_of_every_sample`.
    for (format, path) in common::text_samples(false) {
        let bytes = std::fs::read(&path).unwrap();
        let o = sr_options();
        let full = format.read(&bytes, &path, &o).unwrap();
        for cut in 0..bytes.len() {
            let r = format.read(&bytes[..cut], &path, &o);
            if let Err(why) = complete_is_whole(&r, &full) {
                panic!("{} cut at byte {cut} ({format:?}): {why}", path.display());
            }
        }
    }
}

/// A reading of arbitrary input must not panic, and a complete one must hold finite numbers.
fn sane(r: Result<Reading, TimingError>) {
    if let Ok(Reading::Measured(m)) = r {
        if m.partial.is_none() {
            for c in &m.components {
                assert!(c.compute_s.is_finite() && c.wait_s.is_finite(), "{c:?}");
            }
        }
        let _ = (m.coupled_sypd(), m.chsy(), m.coupling_cost());
        for i in 0..m.components.len() {
            let _ = (m.component_sypd(i), m.partial_coupling_cost(i));
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(300))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let o = opts_240_144();
        let p = Path::new("x");
        sane(lucia_raw::read_in_memory(&[("lucia.01.000000", &bytes), ("lucia.02.000000", &bytes)], &o));
        sane(table::read_table(&bytes, p, &o));
        sane(table::read_summary(&bytes, p, &o));
        sane(lucia_log::read(&bytes, p, &o));
        sane(oasis5::read(&bytes, p, &o));
        sane(step_series::read(&bytes, p, &o));
    }

    #[test]
    fn arbitrary_lucia_like_lines_never_panic(
        lines in proptest::collection::vec(
            (0u16..1200, any::<bool>(), 0u8..3, 0.0f64..1e11, any::<bool>()), 0..80),
        cut in 0usize..40,
    ) {
        let mut text = String::from("Balance: MD X\nBalance: SN 0001 a\nBalance: RC 1002 b\n");
        for (id, after, kind, t, star) in lines {
            let id = if id > 999 { "***".to_string() } else { format!("{id:03}") };
            let ba = if after { "After " } else { "Before" };
            let k = ["interpo", "MPI put", "MPI get"][kind as usize];
            let time = if star { "****************".to_string() } else { format!("{t:16.5}") };
            text.push_str(&format!("Balance: {id} {ba} {k} {time}\n"));
        }
        let bytes = text.as_bytes();
        let cut_at = bytes.len().saturating_sub(cut);
        sane(lucia_raw::read_in_memory(
            &[("lucia.01.000000", bytes), ("lucia.01.000001", &bytes[..cut_at])],
            &ReadOptions::default(),
        ));
    }
}
