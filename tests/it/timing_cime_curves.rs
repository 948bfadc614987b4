//! `autolb timing --curves`: the real CIME runs give each class's curve with the SYPD each
//! file's own reading gives, repeated core counts their mean and spread, and the files written
//! are curves `predict` reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{autolb, fixtures};

const SECONDS_PER_YEAR: f64 = 365.0 * 86_400.0;

fn summaries() -> Vec<PathBuf> {
    let cime = fixtures().join("cime");
    let mut files: Vec<PathBuf> = ["noresm3", "cesm2"]
        .iter()
        .flat_map(|d| std::fs::read_dir(cime.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("cesm_timing.")
        })
        .collect();
    files.sort();
    files
}

/// class -> cores -> every run's SYPD, from each file's `autolb timing FILE --json`.
fn expected(files: &[PathBuf]) -> BTreeMap<String, BTreeMap<u64, Vec<f64>>> {
    let mut out: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for file in files {
        let text = autolb().args(["timing", "--json"]).arg(file).stdout_ok();
        let v: Value = serde_json::from_str(&text).unwrap();
        let sim_s = v["coupled"]["sim_s"].as_f64().unwrap();
        for c in v["components"].as_array().unwrap() {
            let name = c["name"].as_str().unwrap();
            let run_s = c["run_s"].as_f64().unwrap();
            let stub = c["model"].as_str() == Some(&format!("s{name}"));
            if stub || run_s <= 0.0 {
                continue;
            }
            let cores = c["nproc"].as_u64().unwrap() * c["threads"].as_u64().unwrap_or(1);
            let sypd = (sim_s / SECONDS_PER_YEAR) / (run_s / 86_400.0);
            out.entry(name.to_string())
                .or_default()
                .entry(cores)
                .or_default()
                .push(sypd);
        }
    }
    out
}

/// The `(nproc, SYPD)` rows of a written curve file.
fn rows(path: &Path) -> Vec<(u64, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("nproc,SYPD"), "{}", path.display());
    lines
        .map(|l| {
            let (n, s) = l.split_once(',').unwrap();
            (n.parse().unwrap(), s.parse().unwrap())
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn real_runs_give_each_class_the_sypd_of_its_own_reading() {
    let files = summaries();
    assert_eq!(files.len(), 4);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("curves");
    let out = autolb()
        .arg("timing")
        .arg("--curves")
        .arg(&out_dir)
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Four cases: a warning, once.
    assert!(
        stderr.contains("warning: the runs are of 4 cases"),
        "{stderr}"
    );
    let want = expected(&files);
    let mut written = Vec::new();
    for (class, points) in &want {
        let file = out_dir.join(format!("{class}.csv"));
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{class}: ")))
            .unwrap_or_else(|| panic!("no line for {class}: {stdout}"));
        // ocn (blom, docn, pop) and glc (dglc, cism) change model between runs; wav is a
        // model in one run only.
        if ["ocn", "glc", "wav"].contains(&class.as_str()) {
            assert!(line.contains("not written"), "{line}");
            assert!(!file.exists(), "{class}");
            continue;
        }
        assert!(
            line.contains(&format!("{} core counts", points.len())),
            "{line}"
        );
        let got = rows(&file);
        assert_eq!(got.len(), points.len(), "{class}");
        for ((n, sypd), (cores, runs)) in got.iter().zip(points) {
            assert_eq!(n, cores, "{class}");
            assert_eq!(runs.len(), 1, "{class}: the fixtures repeat no core count");
            assert!(
                close(*sypd, runs[0]),
                "{class} at {n}: {sypd} vs {}",
                runs[0]
            );
        }
        written.push(class.clone());
    }
    assert_eq!(written, ["atm", "cpl", "ice", "lnd", "rof"]);
    // predict reads every file written as a curve.
    let mut predict = autolb();
    predict.args(["predict", "--max-nproc", "8000", "--step", "128"]);
    for class in &written {
        predict.arg("--curve").arg(format!(
            "{class}={}",
            out_dir.join(format!("{class}.csv")).display()
        ));
    }
    let table = predict.stdout_ok();
    assert!(table.contains("rank"), "{table}");
}

#[test]
fn repeated_core_counts_give_the_mean_and_the_spread() {
    let ne16 = summaries()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("ne16pg3"))
        .unwrap();
    let ne30 = summaries()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("ne30"))
        .unwrap();
    let text = std::fs::read_to_string(&ne16).unwrap();
    let old = "ATM Run Time:   19886.623 seconds";
    assert!(text.contains(old));
    // A second run of the same layout whose atmosphere was 10 % slower.
    let slower = text.replace(old, "ATM Run Time:   21875.285 seconds");
    let case = tempfile::tempdir().unwrap();
    let timing = case.path().join("timing");
    std::fs::create_dir(&timing).unwrap();
    std::fs::write(timing.join("cesm_timing.run.1"), &text).unwrap();
    std::fs::write(timing.join("cesm_timing.run.2"), &slower).unwrap();
    let other = case.path().join("cesm_timing.run.3");
    std::fs::copy(&ne30, &other).unwrap();
    let runs = [
        timing.join("cesm_timing.run.1"),
        timing.join("cesm_timing.run.2"),
        other.clone(),
    ];
    let want = expected(&runs);
    let out_dir = case.path().join("curves");
    // The case directory (its timing/ folder) and a file; the same file twice counts once.
    let stdout = autolb()
        .arg("timing")
        .arg("--curves")
        .arg(&out_dir)
        .arg(case.path())
        .arg(&other)
        .stdout_ok();
    let atm = rows(&out_dir.join("atm.csv"));
    let at1536 = &want["atm"][&1536];
    assert_eq!(at1536.len(), 2);
    let mean = (at1536[0] + at1536[1]) / 2.0;
    assert_eq!(atm[0].0, 1536);
    assert!(close(atm[0].1, mean), "{} vs {mean}", atm[0].1);
    assert!(close(atm[1].1, want["atm"][&1920][0]));
    let (lo, hi) = (at1536[0].min(at1536[1]), at1536[0].max(at1536[1]));
    assert!((hi / lo - 1.1).abs() < 1e-6, "{lo} {hi}");
    let comment =
        format!("# 1536 cores: 2 runs, SYPD {lo:.4}-{hi:.4}: cesm_timing.run.1 cesm_timing.run.2");
    let csv = std::fs::read_to_string(out_dir.join("atm.csv")).unwrap();
    assert!(csv.contains(&comment), "{csv}");
    assert!(
        stdout.contains(&format!("1536:{mean:.3} ({lo:.3}-{hi:.3}, 2 runs)")),
        "{stdout}"
    );
    // lnd ran at 768 cores twice and 1920 once: a curve of 3 runs at 2 counts.
    let lnd = stdout.lines().find(|l| l.starts_with("lnd: ")).unwrap();
    assert!(lnd.contains("(3 runs, 2 core counts)"), "{lnd}");
}

#[test]
fn a_cut_file_or_a_single_layout_is_refused_in_one_line() {
    let files = summaries();
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let cut = tmp.path().join("cesm_timing.cut");
    std::fs::write(&cut, &text[..text.find("OCN Run Time").unwrap()]).unwrap();
    let out = autolb()
        .arg("timing")
        .arg("--curves")
        .arg(tmp.path().join("c"))
        .arg(&files[1])
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("cesm_timing.cut: partial"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!tmp.path().join("c").exists());

    let out = autolb()
        .arg("timing")
        .arg("--curves")
        .arg(tmp.path().join("c"))
        .arg(&files[1])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no class has runs at 2 or more core counts"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn the_guide_shows_the_curve_file_the_command_writes() {
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/timing-cime.md"),
    )
    .unwrap();
    let after = guide
        .split("`target/cime-curves/lnd.csv` then reads:\n\n```\n")
        .nth(1)
        .expect("the guide shows lnd.csv");
    let shown = &after[..after.find("```").unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    autolb()
        .arg("timing")
        .arg("--curves")
        .arg(tmp.path())
        .arg(fixtures().join("cime/noresm3"))
        .stdout_ok();
    let written = std::fs::read_to_string(tmp.path().join("lnd.csv")).unwrap();
    assert_eq!(shown, written);
}
