//! EC-Earth4 on a new machine, end to end: a cold start with OpenIFS at 4 OpenMP threads per
//! rank and no curves, on the stand-in model writing EC-Earth4 run directories, runs to one
//! answer that `campaign best --emit ecearth4`, `campaign best --json` and `campaign status
//! --json` all give; the guide's page walks that path, and its commands and outputs are run here.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::autolb;
use crate::readme_examples::normalise;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The guide's page that walks the path.
const PAGE: &str = "docs/src/campaigns/ecearth4-new-machine.md";

/// The example campaign file of the path.
fn example() -> PathBuf {
    repo().join("assets/examples/ecearth4-mn5/cold-start-sim.toml")
}

/// `(line, command, expected output)` of every `$ ` line in the page's ```console blocks: the
/// lines after a command, up to the next command or the block's end, are its output.
fn console_steps(text: &str) -> Vec<(usize, String, String)> {
    let mut steps: Vec<(usize, String, Vec<&str>)> = Vec::new();
    let mut inside = false;
    for (k, line) in text.lines().enumerate() {
        match (inside, line.trim_end()) {
            (false, "```console") => inside = true,
            (true, "```") => inside = false,
            (true, l) => match l.strip_prefix("$ ") {
                Some(command) => steps.push((k + 1, command.to_string(), Vec::new())),
                None => {
                    if let Some(last) = steps.last_mut() {
                        last.2.push(line);
                    }
                }
            },
            _ => {}
        }
    }
    steps
        .into_iter()
        .map(|(line, command, out)| (line, command, out.join("\n")))
        .collect()
}

#[test]
fn the_guide_walks_from_no_curves_to_the_ecearth4_yaml_with_the_outputs_it_shows() {
    let text = std::fs::read_to_string(repo().join(PAGE)).unwrap();
    let steps = console_steps(&text);
    let commands: Vec<&str> = steps.iter().map(|(_, c, _)| c.as_str()).collect();
    assert!(
        commands
            .first()
            .is_some_and(|c| c.contains("campaign init"))
            && commands
                .last()
                .is_some_and(|c| c.contains("campaign best") && c.contains("--emit ecearth4")),
        "the page goes from `campaign init` to `campaign best --emit ecearth4`: {commands:?}"
    );
    // Where a user of the installed binary stands: the examples written out, nothing else.
    let tmp = tempfile::tempdir().unwrap();
    autolb()
        .args(["example", "--out"])
        .arg(tmp.path())
        .stdout_ok();
    let mut failures = Vec::new();
    for (line, command, expected) in &steps {
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"autolb"), "{PAGE} line {line}");
        let out = autolb()
            .args(&words[1..])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{PAGE} line {line}: `{command}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = normalise(&String::from_utf8_lossy(&out.stdout));
        if got != normalise(expected) {
            failures.push(format!(
                "{PAGE} line {line}: `{command}` prints something else now; paste its output:\n{got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn json(args: &[&str], dir: &Path) -> Value {
    let out = autolb().args(args).arg(dir).arg("--json").stdout_ok();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// Runs the campaign file `file` in `dir` to its end.
fn run(file: &Path, dir: &Path) {
    autolb()
        .args(["campaign", "init", "--config"])
        .arg(file)
        .arg(dir)
        .stdout_ok();
    autolb().args(["campaign", "run"]).arg(dir).stdout_ok();
}

#[test]
fn a_cold_start_at_four_threads_gives_one_answer_as_yaml_as_json_and_in_the_status() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ec4-cold");
    run(&example(), &dir);

    let status = json(&["campaign", "status"], &dir);
    assert_eq!(status["state"], "done", "{status:#}");
    assert_eq!(status["threads"]["oifs"], 4, "{status:#}");
    assert_eq!(status["threads"]["nemo"], 1, "{status:#}");
    let phase = status["cold_start"]["phase"].as_str().unwrap();
    assert!(phase.starts_with("phase balancing"), "{phase}");
    // Every run moved whole OpenIFS ranks of 4 threads within its limits (16..224 ranks), and
    // every configuration kept to the budget of 1024 cores; each run left an EC-Earth4 run
    // directory that was measured.
    let mut runs = 0;
    for it in status["iterations"].as_array().unwrap() {
        for test in it["tests"].as_array().unwrap() {
            let oifs = test["nproc"]["oifs"].as_u64().unwrap();
            let nemo = test["nproc"]["nemo"].as_u64().unwrap();
            assert!(oifs % 4 == 0 && (64..=896).contains(&oifs), "{test:#}");
            assert!(oifs + nemo <= 1024, "{test:#}");
            for r in test["runs"].as_array().unwrap() {
                assert_eq!(r["state"], "done", "{r:#}");
                let run_dir = PathBuf::from(r["run_dir"].as_str().unwrap());
                assert!(run_dir.join("load_balancing_info.txt").is_file());
                assert!(run_dir.join("log/001/timing.log").is_file());
                runs += 1;
            }
        }
    }
    assert!(runs >= 6, "{runs} runs");

    // `campaign best --json` is the status's answer, and the status's best.
    let best = json(&["campaign", "best"], &dir);
    assert_eq!(best, status["answer"]);
    assert_eq!(best["nproc"], status["best"]["nproc"]);
    assert_eq!(best["sypd"], status["best"]["sypd"]);
    assert_eq!(best["threads"]["oifs"], 4);
    assert_eq!(best["threads"]["nemo"], 1);
    for name in ["oifs", "nemo"] {
        let cores = best["nproc"][name].as_u64().unwrap();
        let ranks = best["ranks"][name].as_u64().unwrap();
        let threads = best["threads"][name].as_u64().unwrap();
        assert_eq!(ranks * threads, cores, "{best:#}");
    }
    let config = best["config"].as_str().unwrap();
    let oifs_ranks = best["ranks"]["oifs"].as_u64().unwrap();
    assert!(config.contains(&format!("oifs {oifs_ranks}x4")), "{config}");

    // The YAML writes exactly that configuration: ranks as ntasks, threads as omp_num_threads.
    let yaml = autolb()
        .args(["campaign", "best"])
        .arg(&dir)
        .args(["--emit", "ecearth4"])
        .stdout_ok();
    let doc: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
    let job = doc["job"].as_mapping().unwrap();
    let components: Vec<&str> = job
        .keys()
        .filter_map(|k| k.as_str())
        .filter(|k| *k != "launch")
        .collect();
    assert_eq!(components, ["oifs", "nemo"], "{yaml}");
    for name in ["oifs", "nemo"] {
        let entry = &doc["job"][name];
        assert_eq!(
            entry["ntasks"].as_u64(),
            best["ranks"][name].as_u64(),
            "{yaml}"
        );
        assert_eq!(
            entry["omp_num_threads"].as_u64().unwrap_or(1),
            best["threads"][name].as_u64().unwrap(),
            "{yaml}"
        );
    }
    assert_eq!(doc["job"]["oifs"]["omp_num_threads"].as_u64(), Some(4));
    // 112-core nodes hold 28 ranks of 4 threads.
    assert_eq!(doc["job"]["oifs"]["ntasks_per_node"].as_u64(), Some(28));

    // The campaign file that runs it again, written elsewhere, starts from that configuration
    // (its stand-in's truth curves by absolute path).
    let again = autolb()
        .args(["campaign", "best"])
        .arg(&dir)
        .args(["--emit", "toml"])
        .stdout_ok();
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("again.toml");
    std::fs::write(&file, again).unwrap();
    let rerun = elsewhere.path().join("again");
    autolb()
        .args(["campaign", "init", "--config"])
        .arg(&file)
        .arg(&rerun)
        .stdout_ok();
    let first = json(&["campaign", "status"], &rerun);
    let tests = first["iterations"][0]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{first:#}");
    assert_eq!(tests[0]["nproc"], best["nproc"], "{first:#}");
    assert_eq!(first["threads"]["oifs"], 4, "{first:#}");
}

#[test]
fn a_hybrid_cold_start_reads_lucia_files_by_mpi_process_and_its_model_learns_from_every_run() {
    // The same campaign with raw LUCIA output: one file per sampled MPI rank, so a hybrid
    // component's run is checked against its ranks, not its cores.
    let tmp = tempfile::tempdir().unwrap();
    let inputs = repo().join("assets/examples/ecearth4-mn5");
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("output = \"oasis5\"", "output = \"lucia\"");
    assert!(text.contains("output = \"lucia\""));
    for f in ["oifs.csv", "nemo.csv", "nemo_ocean.output"] {
        std::fs::copy(inputs.join(f), tmp.path().join(f)).unwrap();
    }
    let file = tmp.path().join("lucia.toml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp.path().join("camp");
    run(&file, &dir);
    let status = json(&["campaign", "status"], &dir);
    let failed = status["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| it["tests"].as_array().unwrap())
        .flat_map(|t| t["runs"].as_array().unwrap())
        .filter(|r| r["state"] != "done")
        .count();
    assert_eq!(failed, 0, "{status:#}");
    assert_eq!(status["answer"]["threads"]["oifs"], 4, "{status:#}");
    // The model beside the answer is fitted on every run, read again from its LUCIA files.
    let runs = status["counts"]["done"].as_u64().unwrap();
    let model = status["predicted"]["model"].as_str().unwrap();
    assert!(
        model.contains(&format!("fitted on the campaign's {runs} measured runs")),
        "{model}"
    );
}

/// `campaign init` of `text` (written beside the example's inputs): its one-line error.
fn init_error(tmp: &Path, text: &str) -> String {
    let inputs = repo().join("assets/examples/ecearth4-mn5");
    for f in ["oifs.csv", "nemo.csv", "nemo_ocean.output"] {
        std::fs::copy(inputs.join(f), tmp.join(f)).unwrap();
    }
    let file = tmp.join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let out = autolb()
        .args(["campaign", "init", "--config"])
        .arg(&file)
        .arg(tmp.join("camp"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn threads_without_a_curve_are_refused_where_no_run_measures_them() {
    let tmp = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(example()).unwrap();
    // A list: the cold start keeps one thread count.
    let err = init_error(
        tmp.path(),
        &example.replace("threads = [4]", "threads = [2, 4]"),
    );
    assert!(
        err.contains("line ") && err.contains("keeps one thread count per rank"),
        "{err}"
    );
    // More threads than a node's cores.
    let err = init_error(
        tmp.path(),
        &example.replace("threads = [4]", "threads = [128]"),
    );
    assert!(err.contains("more than a node's 112 cores"), "{err}");
    // A campaign that starts from the prediction has no run to learn the speed at 4 threads.
    let err = init_error(
        tmp.path(),
        &example.replace("strategy = \"guided\"", "strategy = \"algorithm1\""),
    );
    assert!(
        err.contains("threads other than 1 need a curve with a threads column")
            && err.contains("cold start"),
        "{err}"
    );
}

#[test]
fn a_coupled_scaling_campaign_learns_a_hybrid_curve_in_whole_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = repo().join("assets/examples/ecearth4-mn5");
    for f in ["oifs.csv", "nemo.csv", "nemo_ocean.output"] {
        std::fs::copy(inputs.join(f), tmp.path().join(f)).unwrap();
    }
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("strategy = \"guided\"", "")
        .replace(
            "\n[original]",
            "\n[scaling]\ndesign = \"coupled\"\nrepetitions = 1\nmax_runs = 10\n\n[original]",
        );
    let file = tmp.path().join("scaling.toml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp.path().join("camp");
    run(&file, &dir);
    let status = json(&["campaign", "status"], &dir);
    assert_eq!(status["threads"]["oifs"], 4, "{status:#}");
    let points = status["curves"]["oifs"].as_array().unwrap();
    assert!(points.len() >= 3, "{status:#}");
    for p in points {
        assert_eq!(p["nproc"].as_u64().unwrap() % 4, 0, "{p:#}");
    }
    // The curve file counts cores and says so; the curve reader takes it.
    let csv = dir.join("curves/oifs.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.contains("# nproc counts cores: MPI ranks x 4 OpenMP threads per rank"),
        "{text}"
    );
    let curve = autolb::curve::Curve::load("oifs", &csv).unwrap();
    assert_eq!(curve.points().len(), points.len());
}
