//! The iteration bound a campaign states is the one it keeps: `max_iterations` (default 12;
//! guided 24, a cold start 48) ends every test, `campaign plan` and its Autosubmit numbers say
//! it, and the repetitions and PE counts `plan` states are the runs that happen.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::{autolb, status_json};

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn plan_json(file: &Path) -> Value {
    serde_json::from_str(&plan_text(file, &["--json"])).unwrap()
}

fn plan_text(file: &Path, flags: &[&str]) -> String {
    autolb()
        .args(["campaign", "plan"])
        .args(flags)
        .arg("--config")
        .arg(file)
        .stdout_ok()
}

#[test]
fn the_plan_states_the_enforced_bound_not_a_worst_case_of_hundreds() {
    let file = repo("assets/examples/ecearth4-mn5/campaign-sim.toml");
    let plan = plan_json(&file);
    assert_eq!(plan["max_iterations"], 12, "{plan}");
    assert_eq!(plan["bound_proven"], true);
    let text = plan_text(&file, &[]);
    assert!(text.contains("lb-iterations: at most 12\n"), "{text}");
    assert!(text.contains("set by max_iterations = 12"), "{text}");
    assert!(text.contains("NUMCHUNKS: 12 "), "{text}");
}

#[test]
fn a_campaign_ends_at_max_iterations_with_the_reason_on_each_test() {
    let tmp = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(repo("assets/campaign-example.toml")).unwrap();
    // The example's files are relative to its own directory.
    let text = example
        .replace("curves/", &format!("{}/", repo("assets/curves").display()))
        .replace(
            "\"nemo_orca1",
            &format!("\"{}/nemo_orca1", repo("assets").display()),
        );
    let file = tmp.path().join("c.toml");
    let text = text.replace("max_iterations = 12 ", "max_iterations = 2 ");
    assert!(text.contains("max_iterations = 2 "));
    std::fs::write(&file, text).unwrap();
    assert_eq!(plan_json(&file)["max_iterations"], 2);
    let dir = tmp.path().join("camp");
    autolb()
        .args(["campaign", "init", "--config"])
        .arg(&file)
        .arg(&dir)
        .timeout(Duration::from_secs(60))
        .stdout_ok();
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .stdout_ok();
    let status = status_json(&dir);
    assert_eq!(status["done"], true, "{status}");
    let iterations = status["iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 2, "{status}");
    let last = iterations.last().unwrap().to_string();
    assert!(last.contains("max_iterations = 2 reached"), "{last}");
    assert!(status["best"].is_object(), "{status}");
}

#[test]
fn a_cold_start_plan_says_its_first_tests_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture =
        std::fs::read_to_string(repo("tests/fixtures/campaigns/cold_start.toml")).unwrap();
    let file = tmp.path().join("cold.toml");
    // Only one key of [scaling]: the cold start's defaults fill in the rest.
    std::fs::write(&file, format!("{fixture}\n[scaling]\nrepetitions = 1\n")).unwrap();
    let plan = plan_json(&file);
    assert_eq!(plan["first_repetitions"], 1, "{plan}");
    assert_eq!(plan["max_iterations"], 48, "{plan}");
    let text = plan_text(&file, &[]);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("x 1 run in the first iteration (later: up to 2 runs of a test)"),
        "{text}"
    );
}

#[test]
fn whole_nodes_never_shrink_a_curve_silently() {
    // NEMO's ORCA1 list holds two multiples of 48 (48 and 1008): five counts are asked for.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("scaling.toml");
    std::fs::write(
        &file,
        format!(
            "[machine]\ncores_per_node = 48\n\n[[component]]\nname = \"IFS\"\nmin_nproc = 48\nmax_nproc = 960\n\n[[component]]\nname = \"NEMO\"\nallowed = \"{}\"\nmin_nproc = 48\nmax_nproc = 1008\n\n[scaling]\ndesign = \"standalone\"\ncounts = 5\n",
            repo("assets/nemo_orca1_allowed_nproc.txt").display()
        ),
    )
    .unwrap();
    let plan = plan_json(&file);
    let counts = |k: usize| -> Vec<u64> {
        let mut v: Vec<u64> = plan["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["nproc"].as_object().unwrap().values().nth(k)?.as_u64())
            .filter(|&p| p > 0)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert_eq!(counts(0).len(), 5, "IFS {:?}", counts(0));
    assert!(counts(0).iter().all(|p| p % 48 == 0), "{:?}", counts(0));
    let nemo = counts(1);
    assert_eq!(nemo.len(), 5, "NEMO {nemo:?}");
    let notes = plan["notes"].as_array().expect("a note on NEMO's counts");
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = notes[0].as_str().unwrap();
    assert!(
        note.starts_with("NEMO: ") && note.contains("48-core node"),
        "{note}"
    );
    let text = plan_text(&file, &[]);
    assert!(text.contains(&format!("note: {note}\n")), "{text}");
}
