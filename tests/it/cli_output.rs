//! Output that cannot be written, and flags checked before anything runs, end to end.
//!
//! A full disk (`/dev/full`) is one line on stderr and exit code 2; a reader that goes away
//! (`| head`) ends quietly, never with a panic (exit 101). Model flags that contradict each
//! other are one line naming the flag and exit code 2.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{autolb, autolb_path};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn asset(path: &str) -> String {
    root().join("assets").join(path).display().to_string()
}

fn measured() -> String {
    root()
        .join("tests/fixtures/lucia_lite")
        .display()
        .to_string()
}

fn curve_args() -> Vec<String> {
    vec![
        "--curve".into(),
        format!("IFS={}", asset("curves/mn4_sr_reduced_ifs.csv")),
        "--curve".into(),
        format!("NEMO={}", asset("curves/mn4_sr_reduced_nemo.csv")),
    ]
}

/// A demo campaign (stand-in model) in a fresh directory, for the campaign commands.
fn demo_campaign() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    autolb()
        .args(["campaign", "init", "--demo"])
        .arg(&dir)
        .assert()
        .success();
    (tmp, dir)
}

/// Every command that writes to stdout, as (label, arguments); `dir` is a demo campaign and
/// `fresh` a directory `campaign init` may create.
fn commands(dir: &Path, fresh: &Path) -> Vec<(&'static str, Vec<String>)> {
    let d = dir.display().to_string();
    let example = asset("campaign-example.toml");
    vec![
        (
            "predict --config",
            vec!["predict".into(), "--config".into(), example.clone()],
        ),
        (
            "predict --json",
            vec![
                "predict".into(),
                "--json".into(),
                "--config".into(),
                example.clone(),
            ],
        ),
        (
            "predict --front --csv",
            vec![
                "predict".into(),
                "--front".into(),
                "--csv".into(),
                "--config".into(),
                example.clone(),
            ],
        ),
        (
            "campaign status",
            vec!["campaign".into(), "status".into(), d.clone()],
        ),
        (
            "campaign next",
            vec!["campaign".into(), "next".into(), d.clone()],
        ),
        (
            "campaign plan",
            vec![
                "campaign".into(),
                "plan".into(),
                "--config".into(),
                example.clone(),
            ],
        ),
        (
            "campaign init",
            vec![
                "campaign".into(),
                "init".into(),
                fresh.display().to_string(),
                "--config".into(),
                example,
            ],
        ),
        (
            "example --out --force",
            vec![
                "example".into(),
                "--out".into(),
                fresh.with_extension("example").display().to_string(),
                "--force".into(),
            ],
        ),
        (
            "completions bash",
            vec!["completions".into(), "bash".into()],
        ),
        ("man", vec!["man".into()]),
        (
            "report --out -",
            vec!["report".into(), d, "--out".into(), "-".into()],
        ),
    ]
}

#[test]
fn a_full_disk_is_one_line_and_exit_code_2() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here; skipped");
        return;
    }
    let (_tmp, dir) = demo_campaign();
    let fresh = tempfile::tempdir().unwrap();
    for (label, args) in commands(&dir, &fresh.path().join("new")) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(autolb_path())
            .args(&args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{label}: {stderr}");
        assert_eq!(
            stderr, "autolb: error writing output: No space left on device\n",
            "{label}"
        );
    }
}

#[test]
fn a_reader_that_goes_away_never_makes_a_panic() {
    let (_tmp, dir) = demo_campaign();
    let fresh = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let target = fresh.path().join(format!("new{round}"));
        // The campaign commands are quick, so they race the close 20 times; the slower
        // predictions and the report a few times.
        let quick = |label: &str| label.starts_with("campaign");
        for (label, args) in commands(&dir, &target) {
            if round >= 3 && !quick(label) {
                continue;
            }
            let mut child = std::process::Command::new(autolb_path())
                .args(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The read end closes before (or while) the command writes.
            drop(child.stdout.take());
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let status = child.wait().unwrap();
            assert!(
                matches!(status.code(), Some(0) | Some(141)),
                "{label}: {status:?} {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{label}: {stderr}");
            assert!(
                stderr.is_empty(),
                "{label}: a closed pipe is quiet: {stderr}"
            );
        }
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_141() {
    let (_tmp, dir) = demo_campaign();
    let fresh = tempfile::tempdir().unwrap();
    for (label, args) in commands(&dir, &fresh.path().join("new")) {
        // The read end is closed before the command starts: its first write fails.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(autolb_path())
            .args(&args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{label}: {stderr}");
        assert!(stderr.is_empty(), "{label}: {stderr}");
    }
}

/// Runs `predict` with the reduced EC-Earth3 curves and `extra`, expecting a one-line error
/// (exit 2) that holds every needle.
fn refuses(extra: &[&str], needles: &[&str]) {
    let out = autolb()
        .arg("predict")
        .args(curve_args())
        .args(["--max-nproc", "600", "--step", "48"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{extra:?}: one line: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{extra:?}: {n:?} not in {stderr}");
    }
    assert!(out.stdout.is_empty());
}

#[test]
fn a_component_given_two_timing_names_is_refused() {
    refuses(
        &[
            "--measured",
            &measured(),
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "IFS=X",
        ],
        &["--timing-name", "IFS=ATMIFS", "IFS=X"],
    );
}

#[test]
fn two_components_given_one_timing_name_are_refused() {
    refuses(
        &[
            "--measured",
            &measured(),
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "NEMO=ATMIFS",
        ],
        &["--timing-name", "IFS", "NEMO", "\"ATMIFS\""],
    );
}

#[test]
fn a_timing_name_shared_with_the_campaign_file_is_refused() {
    // The file says IFS is ATMIFS in the timing output; the flag gives NEMO the same name.
    let out = autolb()
        .args(["predict", "--config"])
        .arg(asset("campaign-example.toml"))
        .args(["--measured", &measured(), "--timing-name", "NEMO=ATMIFS"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\"ATMIFS\""), "{stderr}");
}

fn predict_json(extra: &[&str]) -> (serde_json::Value, String) {
    let out = autolb()
        .arg("predict")
        .args(curve_args())
        .args([
            "--max-nproc",
            "600",
            "--step",
            "48",
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "NEMO=oceanx",
            "--json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{extra:?}: {stderr}");
    (serde_json::from_slice(&out.stdout).expect("JSON"), stderr)
}

#[test]
fn a_measured_path_given_twice_is_read_once() {
    let m = measured();
    let (once, _) = predict_json(&["--measured", &m]);
    let (twice, stderr) = predict_json(&["--measured", &m, "--measured", &format!("{m}/")]);
    // The same runs, so the same fit, ranking and bands.
    assert_eq!(once, twice);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("given twice"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].starts_with("autolb: note: --measured "),
        "{stderr}"
    );
}

#[test]
fn a_measured_path_inside_another_is_refused() {
    let m = measured();
    let inner = format!("{m}/240IFS_144NEMO");
    refuses(
        &[
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "NEMO=oceanx",
            "--measured",
            &m,
            "--measured",
            &inner,
        ],
        &["--measured", "240IFS_144NEMO", "is inside", "lucia_lite"],
    );
}

#[test]
fn predict_json_echoes_its_settings() {
    let (json, _) = predict_json(&["--tts-w", "0.7", "--top", "3", "--interp", "linear"]);
    let s = &json["settings"];
    assert_eq!(s["tts_w"], 0.7);
    assert_eq!(s["max_nproc"], 600);
    assert_eq!(s["step"], 48);
    assert_eq!(s["interp"], "linear");
    assert_eq!(s["model"], "standalone");
    assert_eq!(s["top"], 3);
    assert_eq!(json["top"].as_array().unwrap().len(), 3);

    let (json, _) = predict_json(&["--measured", &measured()]);
    assert_eq!(json["settings"]["model"], "calibrated");
    assert_eq!(json["model"], "calibrated");
}

#[test]
fn report_to_stdout_is_the_html_page() {
    let (_tmp, dir) = demo_campaign();
    let out = autolb()
        .arg("report")
        .arg(&dir)
        .args(["--out", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.trim_start().starts_with("<!DOCTYPE html>") || page.contains("<html"));
    assert!(!dir.join("-").exists() && !Path::new("-").exists());

    let out = autolb()
        .arg("report")
        .arg(&dir)
        .args(["--out", "-", "--markdown"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out -"));
}

#[test]
fn the_top_level_help_says_how_long_the_demo_lasts_and_how_to_speed_it_up() {
    let out = autolb().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("about 2 minutes"), "{text}");
    assert!(text.contains("--demo-compression 0.2"), "{text}");
}

/// `autolb ARGS` is one line on stderr, exit code 2, that holds `needle`.
fn usage_error_says(args: &[&str], needle: &str) {
    let out = autolb().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {needle:?} not in {stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_mistyped_command_or_flag_gets_a_did_you_mean() {
    usage_error_says(&["campain", "status", "x"], "did you mean 'campaign'");
    usage_error_says(&["predict", "--curves", "x"], "did you mean '--curve'");
    // Nested commands too.
    usage_error_says(&["campaign", "stauts", "x"], "did you mean 'status'");
}
