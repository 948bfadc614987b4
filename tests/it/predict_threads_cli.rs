//! `autolb predict` with a hybrid MPI/OpenMP component: its curve carries a `threads` column,
//! and the outputs show ranks, threads and cores.

use std::path::{Path, PathBuf};

use crate::common::autolb;
use serde_json::Value;

fn fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/threads")
        .join(file)
}

fn args(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "predict".into(),
        "--curve".into(),
        format!("OIFS={}", fixture("oifs.csv").display()),
        "--curve".into(),
        format!("NEMO={}", fixture("nemo.csv").display()),
        "--max-nproc".into(),
        "384".into(),
        "--step".into(),
        "8".into(),
        "--tts-w".into(),
        "0.7".into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn json_gives_ranks_threads_and_cores_of_each_component() {
    let out = autolb().args(args(&["--json"])).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let top = json["top"].as_array().unwrap();
    assert!(!top.is_empty());
    for c in top {
        let (cores, ranks, threads) = (&c["nproc"], &c["ranks"], &c["threads"]);
        let oifs = cores["OIFS"].as_u64().unwrap();
        assert_eq!(
            ranks["OIFS"].as_u64().unwrap() * threads["OIFS"].as_u64().unwrap(),
            oifs
        );
        assert_eq!(threads["NEMO"], 1);
        let nemo = cores["NEMO"].as_u64().unwrap();
        assert!(oifs + nemo <= 384, "{c}");
        assert_eq!(c["total_nproc"].as_u64().unwrap(), oifs + nemo);
    }
    // At 4 threads OpenIFS scales further than at 1: the best proposal uses them.
    assert_eq!(top[0]["threads"]["OIFS"], 4, "{}", top[0]);
}

#[test]
fn the_table_writes_ranks_x_threads_and_says_what_it_counts() {
    let out = autolb().args(args(&[])).output().expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("x4="), "{text}");
    assert!(
        text.contains("each component: MPI ranks x OpenMP threads per rank = cores"),
        "{text}"
    );
    // One thread only: the table looks as it does for a pure-MPI prediction.
    let out = autolb()
        .args(args(&["--threads", "OIFS=1"]))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains("x1=") && !text.contains("threads per rank"),
        "{text}"
    );
    let out = autolb()
        .args(args(&["--threads", "OIFS=1", "--json"]))
        .output()
        .expect("runs");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["top"][0].get("threads").is_none() && json["top"][0].get("ranks").is_none());
}

#[test]
fn bad_thread_lists_and_curves_are_one_line_errors() {
    let out = autolb()
        .args(args(&["--threads", "OIFS=2,x"]))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--threads OIFS=2,x: \"x\" is not a positive thread count"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let out = autolb()
        .args(args(&["--threads", "OIFS=8"]))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("threads 8 is allowed but its curve measures only 1, 2, 4 thread(s)"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "nproc,threads,SYPD\n8,4,1\n16,four,2\n").unwrap();
    let out = autolb()
        .args([
            "predict",
            "--curve",
            &format!("OIFS={}", bad.display()),
            "--max-nproc",
            "100",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.csv: line 3: threads \"four\" is not a positive integer"),
        "{err}"
    );
}
