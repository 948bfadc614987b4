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

/// `job.<key>.<field>` whole numbers of an emitted fragment, read by indentation: the shape
/// `--emit ecearth4` writes (two-space nesting, `key: value` lines, `#` comments).
fn fragment_numbers(text: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    let mut section = String::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let indent = line.len() - line.trim_start().len();
        let (key, value) = line.trim().split_once(':').expect("key: value");
        let key = key.trim_matches('"');
        match (indent, value.trim()) {
            (2, "") => section = key.to_string(),
            (4, v) if !v.is_empty() => {
                if let Ok(n) = v.parse() {
                    out.insert(format!("{section}.{key}"), n);
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn emit_ecearth4_writes_yaml_whose_counts_reproduce_the_prediction() {
    let machine = ["--cores-per-node", "112"];
    let out = autolb()
        .args(args(&[&["--emit", "ecearth4"][..], &machine[..]].concat()))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    let json_out = autolb()
        .args(args(&[&["--json"][..], &machine[..]].concat()))
        .output()
        .expect("runs");
    let json: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let best = &json["top"][0];
    let numbers = fragment_numbers(&yaml);
    for (name, key) in [("OIFS", "oifs"), ("NEMO", "nemo")] {
        let ranks = best["ranks"][name].as_u64().unwrap();
        let threads = best["threads"][name].as_u64().unwrap();
        assert_eq!(numbers[&format!("{key}.ntasks")], ranks, "{yaml}");
        let omp = numbers.get(&format!("{key}.omp_num_threads")).copied();
        assert_eq!(omp.unwrap_or(1), threads, "{yaml}");
        assert_eq!(
            ranks * threads,
            best["nproc"][name].as_u64().unwrap(),
            "cores"
        );
        let per_node = numbers[&format!("{key}.ntasks_per_node")];
        assert!(per_node * threads <= 112 && per_node <= ranks, "{yaml}");
    }
    assert!(
        yaml.contains("job:\n  launch:\n    method: slurm-hetjob\n"),
        "{yaml}"
    );
    // A real YAML parser reads it the same way, where PyYAML (EC-Earth4's own) is installed.
    let python = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = python {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(yaml.as_bytes())
            .unwrap();
        let parsed = child.wait_with_output().unwrap();
        if parsed.status.success() {
            let doc: Value = serde_json::from_slice(&parsed.stdout).unwrap();
            assert_eq!(doc["job"]["launch"]["method"], "slurm-hetjob");
            assert_eq!(doc["job"]["oifs"]["ntasks"], best["ranks"]["OIFS"]);
            assert_eq!(
                doc["job"]["oifs"]["omp_num_threads"],
                best["threads"]["OIFS"]
            );
            assert_eq!(doc["job"]["nemo"]["ntasks"], best["ranks"]["NEMO"]);
        } else {
            eprintln!("python3 without PyYAML: the fragment was checked by its shape only");
        }
    }
}

#[test]
fn the_campaign_file_chooses_thread_counts_and_a_campaign_keeps_one() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("c.toml");
    let write = |threads: &str| {
        std::fs::write(
            &file,
            format!(
                "max_nproc = 384\nstep = 8\ntts_w = 0.7\n\n[[component]]\nname = \"OIFS\"\n\
                 curve = {:?}\n{threads}\n[[component]]\nname = \"NEMO\"\ncurve = {:?}\n",
                fixture("oifs.csv"),
                fixture("nemo.csv")
            ),
        )
        .unwrap();
    };
    let top_threads = || {
        let out = autolb()
            .args(["predict", "--json", "--config"])
            .arg(&file)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        json["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["threads"]["OIFS"].as_u64().unwrap_or(1))
            .collect::<Vec<_>>()
    };
    write("threads = [1, 2]");
    let threads = top_threads();
    assert!(
        threads.iter().all(|&t| t <= 2) && threads.contains(&2),
        "{threads:?}"
    );
    write("");
    assert_eq!(top_threads()[0], 4);
    // --threads wins over the file.
    write("threads = [1, 2]");
    let out = autolb()
        .args(["predict", "--json", "--threads", "OIFS=1", "--config"])
        .arg(&file)
        .output()
        .expect("runs");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["top"][0].get("threads").is_none(), "{json}");
    write("threads = [0]");
    let out = autolb()
        .args(["predict", "--config"])
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("threads = [0] must list positive thread counts"),
        "{err}"
    );
    // A campaign keeps one thread count per component: the one the prediction chose.
    write("");
    let predicted: Value = serde_json::from_slice(
        &autolb()
            .args(["predict", "--json", "--config"])
            .arg(&file)
            .output()
            .expect("runs")
            .stdout,
    )
    .unwrap();
    let out = autolb()
        .args(["campaign", "init"])
        .arg(tmp.path().join("camp"))
        .arg("--config")
        .arg(&file)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state = autolb::campaign::State::load(&tmp.path().join("camp")).unwrap();
    let chosen = predicted["top"][0]["threads"]["OIFS"].as_u64().unwrap_or(1) as u32;
    assert_eq!(state.components[0].threads, chosen);
}

#[test]
fn runs_that_do_not_say_their_thread_count_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(args(&["--measured"]))
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("OIFS: its curve measures 1, 2, 4 threads per rank and the measured runs do not say which"),
        "{err}"
    );
}

#[test]
fn the_report_of_a_threaded_prediction_writes_ranks_x_threads() {
    let mut report_args = args(&["--out", "-"]);
    report_args[0] = "report".into();
    let out = autolb().args(&report_args).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(
        html.contains("x4="),
        "no ranks x threads cell in the report"
    );
    assert!(html.contains("MPI ranks x OpenMP threads per rank = cores"));
}
