//! Bad input from an adversarial trial of the CLI: every case is refused up front with one
//! plain line on stderr (no colours when stderr is not a terminal) and exit code 2, never a
//! panic, a hang, gigabytes of memory or a silently wrong value.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;

/// How long autolb may take before it is killed and the test failed: bad input must never
/// hang it.
const HANG_LIMIT: Duration = Duration::from_secs(120);

/// Runs autolb with `args` and expects exit code 2 and one plain line holding every needle.
fn refuses(args: &[&str], needles: &[&str]) {
    let out = common::autolb()
        .timeout(HANG_LIMIT)
        .args(args)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line: {stderr}"
    );
    assert!(!stderr.contains('\x1b'), "{args:?}: no ANSI: {stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: {stderr:?} lacks {needle:?}"
        );
    }
}

fn curve(name: &str) -> String {
    let file = match name {
        "IFS" => "mn4_sr_cmip6_ifs.csv",
        _ => "mn4_sr_cmip6_nemo.csv",
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/curves")
        .join(file);
    format!("{name}={}", path.display())
}

#[test]
fn predict_sizes_are_bounded() {
    let (ifs, nemo) = (curve("IFS"), curve("NEMO"));
    let base = [
        "predict",
        "--curve",
        &ifs,
        "--curve",
        &nemo,
        "--max-nproc",
        "672",
    ];
    let with = |extra: &[&'static str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>, needles: &[&str]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refuses(&args, needles);
    };
    // The trial: a total of 95 PEs from a wrapped u32.
    run(
        with(&["--extra-pes", "4294967295"]),
        &["--extra-pes 4294967295", "100000000"],
    );
    // The trial: an abort allocating the top list.
    run(with(&["--top", "500000000"]), &["top 500000000", "10000"]);
    // Repeated flags do not silently let the last win.
    run(
        with(&["--allowed", "NEMO=48,96", "--allowed", "NEMO=144"]),
        &["--allowed NEMO", "twice"],
    );
    run(
        vec![
            "predict".into(),
            "--curve".into(),
            ifs.clone(),
            "--curve".into(),
            ifs.clone(),
            "--max-nproc".into(),
            "672".into(),
        ],
        &["--curve IFS", "twice"],
    );
    // A device is refused, not read for ever.
    run(
        vec![
            "predict".into(),
            "--curve".into(),
            "IFS=/dev/zero".into(),
            "--max-nproc".into(),
            "672".into(),
        ],
        &["/dev/zero", "not a regular file"],
    );
}

#[test]
fn a_typo_in_a_curve_is_refused_or_fast() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.csv");
    std::fs::write(&typo, "nproc,SYPD\n48,2\n96,4\n480000000,20\n").unwrap();
    let typo = format!("IFS={}", typo.display());
    let nemo = curve("NEMO");
    // A budget as large as the typo: refused at once.
    refuses(
        &[
            "predict",
            "--curve",
            &typo,
            "--curve",
            &nemo,
            "--max-nproc",
            "480000000",
        ],
        &["--extra-pes 0", "100000000"],
    );
    refuses(
        &[
            "predict",
            "--curve",
            &typo,
            "--curve",
            &nemo,
            "--max-nproc",
            "90000000",
        ],
        &["IFS", "candidate PE counts", "typo"],
    );
    // A budget of 100,000 PEs at step 1: 100,000 candidates, answered in well under a minute
    // (the trial: 5 minutes and 6-7 GB before it was killed).
    let started = Instant::now();
    common::autolb()
        .timeout(HANG_LIMIT)
        .args([
            "predict",
            "--curve",
            &typo,
            "--curve",
            &nemo,
            "--max-nproc",
            "100000",
        ])
        .assert()
        .success();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn durations_and_steps_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    let sim = |extra: &[&str], needles: &[&str]| {
        let mut args = vec![
            "simulate", "--comp", "IFS=48", "--comp", "NEMO=48", "--out", out,
        ];
        args.extend(extra);
        refuses(&args, needles);
    };
    sim(
        &["--steps", "4294967295"],
        &["--steps 4294967295", "100000"],
    );
    sim(&["--period", "1e308"], &["--period", "86400"]);
    sim(&["--compress", "1e300"], &["--compress", "1000"]);
    sim(&["--comp", "IFS=96"], &["--comp IFS", "twice"]);
    // The app refuses before it needs a terminal.
    for (flag, value) in [
        ("--poll-interval", "1e308"),
        ("--demo-compression", "1e308"),
        ("--period", "1e308"),
    ] {
        let out = common::autolb()
            .timeout(HANG_LIMIT)
            .args(["tui", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("limit"), "{flag}: {stderr}");
    }
    refuses(
        &["tui", "--keys", "/missing.toml"],
        &["--keys /missing.toml", "no such file"],
    );
}

#[test]
fn timing_refuses_fifos_and_repeated_nproc() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refuses(&["timing", fifo.to_str().unwrap()], &["FIFO"]);
    let table = common::fixtures().join("ecearth3/lucia_lite/240IFS_144NEMO/table.csv");
    let table = table.to_str().unwrap();
    refuses(
        &[
            "timing",
            table,
            "--nproc",
            "ATMIFS=240",
            "--nproc",
            "ATMIFS=408",
        ],
        &["--nproc ATMIFS", "twice"],
    );
    refuses(
        &["timing", table, "--nproc", "ATMIFS=408"],
        &["ATMIFS", "240", "408"],
    );
    // Output to a full disk is the user's to fix too.
    let out = common::autolb()
        .args(["timing", table])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn campaign_commands_on_a_missing_or_unwritable_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    let missing = missing.to_str().unwrap();
    for cmd in [
        &["campaign", "run", missing][..],
        &["campaign", "cancel", missing],
        &[
            "campaign",
            "record",
            missing,
            "--run",
            "i00-t00-r1",
            "--failed",
        ],
    ] {
        refuses(cmd, &["missing: no such directory; check the path"]);
    }
    // A mistyped path is "no such directory"; a directory without campaign state is "no
    // campaign.json".
    let empty = tmp.path().to_str().unwrap();
    for (dir, says) in [
        (missing, "missing: no such directory; check the path"),
        (empty, "not a campaign directory (no campaign.json)"),
    ] {
        refuses(&["tui", "--campaign", dir], &[says]);
        refuses(&["campaign", "status", dir], &[says]);
    }
    // Under a file (the system refuses: ENOTDIR), and a 100,000-character name.
    refuses(
        &["campaign", "init", "/etc/passwd/c", "--demo"],
        &["/etc/passwd/c", "Not a directory"],
    );
    let long = tmp.path().join("x".repeat(100_000));
    refuses(
        &["campaign", "init", long.to_str().unwrap(), "--demo"],
        &["too long"],
    );
    refuses(
        &["campaign", "run", missing, "--jobs", "0"],
        &["--jobs", "at least 1"],
    );
}

/// A demo campaign file with `edit` applied, in `dir`.
fn demo_file(dir: &Path, edit: impl FnOnce(String) -> String) -> PathBuf {
    let path = autolb::campaign::demo::write_demo_inputs(dir).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(&path, edited).unwrap();
    path
}

#[test]
fn campaign_file_validation_gaps_name_the_key() {
    // (text replaced in the demo campaign file, by what, what the error must say)
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "timing_name = \"ATMIFS\"",
            "timing_name = \"\"",
            vec!["timing_name", "empty"],
        ),
        (
            "timing_name = \"ATMIFS\"",
            "timing_name = \"ATM\\nIFS\"",
            vec!["timing_name", "'\\n'"],
        ),
        (
            "timing_name = \"oceanx\"",
            "timing_name = \"ATMIFS\"",
            vec!["timing_name", "ATMIFS", "IFS and NEMO"],
        ),
        (
            "NEMO = 242",
            "NEMO = 240",
            vec!["[original]", "NEMO = 240", "allowed", "229 and 242"],
        ),
        (
            "NEMO = 242",
            "NEMO = 4294967295",
            vec!["[original]", "NEMO = 4294967295", "limits"],
        ),
        (
            "IFS = 384",
            "IFS = 4000",
            vec!["[original]", "IFS = 4000", "limits"],
        ),
        (
            "repetitions = 2",
            "repetitions = 4294967295",
            vec!["repetitions", "100"],
        ),
        (
            "repetitions = 2",
            "repetitions = 1000000",
            vec!["repetitions", "100"],
        ),
        (
            "period_s = 2700",
            "period_s = 1e308",
            vec!["period_s", "86400", " 1e308 "],
        ),
        ("jobs = 4", "jobs = 0", vec!["jobs", "0"]),
        ("jobs = 4", "jobs = 100000", vec!["`jobs` = 100000", "4096"]),
        (
            "jobs = 4",
            "jobs = 4\nretries = 4294967295",
            vec!["`retries` = 4294967295", "limit of 100"],
        ),
        (
            "compression = 0.01",
            "compression = 1e300",
            vec!["compression", "1000"],
        ),
    ];
    for (k, (from, to, needles)) in cases.into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let file = demo_file(tmp.path(), |t| t.replace(from, to));
        let dir = tmp.path().join("c");
        let (file, dir) = (file.to_str().unwrap(), dir.to_str().unwrap());
        let out = common::autolb()
            .timeout(HANG_LIMIT)
            .args(["campaign", "init", dir, "--config", file])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {k}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "case {k}: {stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "case {k}: {stderr:?} lacks {needle:?}"
            );
        }
        assert!(!Path::new(dir).join("campaign.json").exists(), "case {k}");
    }
}

#[test]
fn a_state_without_iterations_is_refused_not_idled_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let dir_s = dir.to_str().unwrap();
    common::autolb()
        .timeout(HANG_LIMIT)
        .args(["campaign", "init", dir_s, "--demo"])
        .assert()
        .success();
    let state = dir.join("campaign.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    json["iterations"] = serde_json::json!([]);
    std::fs::write(&state, serde_json::to_string(&json).unwrap()).unwrap();
    let started = Instant::now();
    refuses(&["campaign", "run", dir_s], &["iterations", "empty"]);
    assert!(started.elapsed() < Duration::from_secs(60));
    refuses(&["campaign", "status", dir_s], &["iterations"]);
}

/// A hand-edited `campaign.json` is held to the campaign file's limits when it is read: one
/// line naming the key and the limit, never an allocation abort or endless retries.
#[test]
fn a_hand_edited_state_is_checked_against_the_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let dir_s = dir.to_str().unwrap();
    common::autolb()
        .timeout(HANG_LIMIT)
        .args(["campaign", "init", dir_s, "--demo"])
        .assert()
        .success();
    let state = dir.join("campaign.json");
    let original = std::fs::read_to_string(&state).unwrap();
    let cases: Vec<(&str, serde_json::Value, Vec<&str>)> = vec![
        (
            "/settings/repetitions",
            1_000_000_000.into(),
            vec!["`settings.repetitions` = 1000000000", "1 to 100"],
        ),
        (
            "/settings/retries",
            4_294_967_295u32.into(),
            vec!["`settings.retries` = 4294967295", "0 to 100"],
        ),
        (
            "/settings/max_nproc",
            0.into(),
            vec!["`settings.max_nproc` = 0"],
        ),
        (
            "/settings/minimum_step",
            100_000.into(),
            vec!["`settings.minimum_step`"],
        ),
        (
            "/settings/tts_w",
            7.5.into(),
            vec!["`settings.tts_w` = 7.5"],
        ),
        (
            "/settings/period_s",
            1e308.into(),
            vec!["`settings.period_s` 1e308", "86400"],
        ),
        (
            "/executor/jobs",
            100_000.into(),
            vec!["`jobs` = 100000", "4096"],
        ),
        (
            "/executor/retries",
            1000.into(),
            vec!["`retries` = 1000", "limit of 100"],
        ),
    ];
    for (pointer, value, needles) in cases {
        let mut json: serde_json::Value = serde_json::from_str(&original).unwrap();
        *json
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}")) = value;
        std::fs::write(&state, serde_json::to_string(&json).unwrap()).unwrap();
        let mut all = vec!["campaign.json"];
        all.extend(needles);
        let started = Instant::now();
        refuses(&["campaign", "run", dir_s], &all);
        refuses(&["campaign", "status", dir_s], &all);
        assert!(started.elapsed() < Duration::from_secs(60), "{pointer}");
    }
}

/// A 100,000-character name or path is cut in the error line (start, `...`, its length), and
/// a huge number reads as `1e308`.
#[test]
fn huge_values_in_errors_are_shortened() {
    let name = "x".repeat(100_000);
    let huge = format!("{name}=3");
    for args in [
        vec!["timing", "/tmp", "--nproc", huge.as_str()],
        vec!["campaign", "status", name.as_str()],
    ] {
        let out = common::autolb()
            .timeout(HANG_LIMIT)
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            &stderr[..200.min(stderr.len())]
        );
        assert!(
            stderr.len() < 600,
            "{} bytes: {}",
            stderr.len(),
            &stderr[..300]
        );
        assert!(stderr.contains("... (100"), "{stderr}");
    }
    let log = common::fixtures().join("lucia.log");
    refuses(
        &["timing", log.to_str().unwrap(), "--period", "1e308"],
        &["--period 1e308 is more than the limit of 86400"],
    );
}
