//! One answer, computed once: for finished campaigns of every kind (Algorithm 1, guided, a cold
//! start, a scaling campaign, hybrid OpenMP threads, whole-node billing), `campaign status
//! --json`, `campaign best --json`, the report's recommendation and the app's best line name
//! the same configuration and SYPD, and a prediction shown beside the answer is labelled as
//! one, with its model and its comparison with the answer.

use std::path::{Path, PathBuf};

use autolb::config::CampaignFile;
use autolb::sim::synthetic::SyntheticCase;
use serde_json::Value;

use crate::campaign_cold_start::cold_start_file;
use crate::campaign_scaling::{sim_campaign, write_truths};
use crate::common::autolb;
use crate::tui_e2e::Session;

/// `campaign init DIR --config FILE` then `campaign run DIR`, both successful.
fn init_and_run(file: &Path, dir: &Path) {
    autolb()
        .args(["campaign", "init"])
        .arg(dir)
        .arg("--config")
        .arg(file)
        .stdout_ok();
    autolb().args(["campaign", "run"]).arg(dir).stdout_ok();
}

/// The demo's inputs (curves, allowed list, campaign file) in `tmp/inputs`, the campaign file
/// edited by `edit`, run to the end in `tmp/NAME`.
fn demo_kind(tmp: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let seed = tmp.join(format!("{name}-seed"));
    autolb()
        .args(["campaign", "init", "--demo"])
        .arg(&seed)
        .stdout_ok();
    let inputs = seed.join("inputs");
    let text = std::fs::read_to_string(inputs.join("demo-campaign.toml")).unwrap();
    let file = inputs.join(format!("{name}.toml"));
    std::fs::write(&file, edit(text)).unwrap();
    let dir = tmp.join(name);
    init_and_run(&file, &dir);
    dir
}

fn json(args: &[&str], dir: &Path) -> Value {
    let out = autolb().args(args).arg(dir).arg("--json").stdout_ok();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// The report of `dir` as Markdown.
fn report(dir: &Path) -> String {
    let out = dir.with_extension("report.md");
    autolb()
        .arg("report")
        .arg(dir)
        .arg("--markdown")
        .arg("--out")
        .arg(&out)
        .stdout_ok();
    std::fs::read_to_string(&out).unwrap()
}

/// The app's best line (the line with `★ best` or, without a best, the line under the panes
/// that says why), once the app has read the campaign.
fn app_best_line(dir: &Path, home: &Path, pred: impl Fn(&str) -> bool) -> String {
    let mut s = Session::watching(dir, home);
    let screen = s.wait_for("the best line", |sc| sc.lines().any(&pred));
    s.send("q");
    assert!(s.wait_exit().success());
    screen.lines().find(|l| pred(l)).unwrap().trim().to_string()
}

/// `campaign best DIR` on a campaign without an answer: exit 2 and one line, returned.
fn best_refused(dir: &Path) -> String {
    let out = autolb()
        .args(["campaign", "best"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    err
}

/// Every view of a finished balancing campaign names one configuration and one SYPD; the
/// predicted #1 beside it is labelled with its model and compared with it, in the status and
/// in the report alike.
fn check_one_answer(dir: &Path, home: &Path) -> Value {
    let status = json(&["campaign", "status"], dir);
    assert_eq!(status["state"], "done", "{status:#}");
    let best = &status["best"];
    let answer = &status["answer"];
    assert!(best.is_object() && answer.is_object(), "{status:#}");
    // `campaign best --json` is the status's answer, and its best's configuration and means.
    let from_best = json(&["campaign", "best"], dir);
    assert_eq!(&from_best, answer);
    // Both read back as the library's types.
    let whole: autolb::campaign::CampaignAnswer = serde_json::from_value(status.clone()).unwrap();
    assert_eq!(
        whole.answer,
        Some(serde_json::from_value::<autolb::campaign::Answer>(from_best.clone()).unwrap())
    );
    assert_eq!(from_best["nproc"], best["nproc"]);
    assert_eq!(from_best["sypd"], best["sypd"]);
    assert_eq!(from_best["chsy"], best["chsy"]);
    assert_eq!(from_best["fittingness"], best["fittingness"]);
    assert_eq!(from_best["runs"], best["runs"]);
    assert_eq!(from_best["measured_in"], best["measured_in"]);
    // Ranks x threads is cores, component by component.
    for (name, cores) in from_best["nproc"].as_object().unwrap() {
        let (r, t) = (&from_best["ranks"][name], &from_best["threads"][name]);
        assert_eq!(
            r.as_u64().unwrap() * t.as_u64().unwrap(),
            cores.as_u64().unwrap()
        );
    }
    let config = answer["config"].as_str().unwrap().to_string();
    let sypd = format!("{:.2}", answer["sypd"].as_f64().unwrap());
    // The run ids are the rows' measured runs, as many as the means rest on.
    assert_eq!(
        answer["run_ids"].as_array().unwrap().len() as u64,
        answer["runs"].as_u64().unwrap()
    );

    let md = report(dir);
    let headline = md
        .lines()
        .find(|l| l.contains("The recommended configuration is"))
        .unwrap_or_else(|| panic!("no recommendation in the report:\n{md}"));
    assert!(
        headline.contains(&format!("is {config} (")) && headline.contains(&format!("{sypd} SYPD")),
        "status: {config} at {sypd} SYPD; report: {headline}"
    );

    let line = app_best_line(dir, home, |l| l.contains("★ best "));
    assert!(
        line.contains(&format!("★ best {config} · SYPD {sypd}")),
        "status: {config} at {sypd} SYPD; app: {line}"
    );

    // The prediction beside the answer: labelled, with its model, compared, in both views.
    let p = &status["predicted"];
    let first = &p["configs"][0];
    let model = p["model"].as_str().unwrap();
    let against = &first["against"];
    assert!(against.is_object(), "{p:#}");
    let text = autolb()
        .args(["campaign", "status"])
        .arg(dir)
        .env("COLUMNS", "2000")
        .stdout_ok();
    let predicted_line = text
        .lines()
        .find(|l| l.starts_with("predicted #1 by "))
        .unwrap_or_else(|| panic!("no predicted line:\n{text}"));
    assert!(predicted_line.contains(model), "{predicted_line}");
    let words = if against["is_answer"].as_bool().unwrap() {
        "the best measured itself".to_string()
    } else {
        let measured = if against["measured"].is_null() {
            "not measured"
        } else {
            "measured: "
        };
        assert!(
            predicted_line.contains("the best measured") && predicted_line.contains(measured),
            "{predicted_line}"
        );
        measured.to_string()
    };
    assert!(predicted_line.contains(&words), "{predicted_line}");
    let in_report = format!("P{}.", &predicted_line[1..]);
    // Markdown escapes the `#` of `#1`.
    assert!(
        md.replace("\\#", "#").contains(&in_report),
        "the report's predicted line differs from status's:\n{predicted_line}\n{md}"
    );
    // The prediction's table says what each row is against the answer.
    assert!(md.contains("| against the best measured |"), "{md}");
    status
}

#[test]
fn algorithm1_guided_and_node_billed_campaigns_show_one_answer_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let guided = demo_kind(tmp.path(), "guided", |t| t);
    check_one_answer(&guided, tmp.path());
    let algorithm1 = demo_kind(tmp.path(), "algorithm1", |t| {
        t.replace("strategy = \"guided\"", "strategy = \"algorithm1\"")
    });
    check_one_answer(&algorithm1, tmp.path());
    // Whole nodes billed: FN weighs node-hours, and every view still names one answer.
    let nodes = demo_kind(tmp.path(), "nodes", |t| {
        format!("cost = \"node-hours\"\n{t}\n[machine]\ncores_per_node = 48\n")
    });
    let status = check_one_answer(&nodes, tmp.path());
    assert!(status["cost_model"].is_object(), "{status:#}");
}

#[test]
fn a_hybrid_campaign_shows_one_answer_and_writes_it_as_ecearth4_and_a_campaign_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/examples/ecearth4-mn5/campaign-sim.toml");
    let dir = tmp.path().join("hybrid");
    init_and_run(&file, &dir);
    let status = check_one_answer(&dir, tmp.path());
    let answer = &status["answer"];
    assert_eq!(answer["threads"]["oifs"], 4, "{answer:#}");
    assert!(answer["config"].as_str().unwrap().contains("x4"));

    // EC-Earth4's YAML: the answer's ranks, threads and nothing else.
    let yaml = autolb()
        .args(["campaign", "best"])
        .arg(&dir)
        .args(["--emit", "ecearth4"])
        .stdout_ok();
    let doc: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
    for name in ["oifs", "nemo"] {
        let job = &doc["job"][name];
        assert_eq!(
            job["ntasks"].as_u64(),
            answer["ranks"][name].as_u64(),
            "{yaml}"
        );
        let threads = answer["threads"][name].as_u64().unwrap();
        assert_eq!(job["omp_num_threads"].as_u64().unwrap_or(1), threads);
    }

    // The campaign file runs the answer again, alone: its one first test is the answer.
    let toml_text = autolb()
        .args(["campaign", "best"])
        .arg(&dir)
        .args(["--emit", "toml"])
        .stdout_ok();
    let again_file = tmp.path().join("again.toml");
    std::fs::write(&again_file, &toml_text).unwrap();
    let parsed = CampaignFile::parse(&toml_text, "again.toml").unwrap();
    assert_eq!(parsed.start.as_ref().map(Vec::len), Some(1), "{toml_text}");
    let again = tmp.path().join("again");
    autolb()
        .args(["campaign", "init"])
        .arg(&again)
        .arg("--config")
        .arg(&again_file)
        .stdout_ok();
    let first = json(&["campaign", "status"], &again);
    let test = &first["iterations"][0]["tests"][0];
    assert_eq!(test["nproc"], answer["nproc"], "{first:#}");
    assert_eq!(
        first["iterations"][0]["tests"].as_array().unwrap().len(),
        1,
        "{first:#}"
    );
}

#[test]
fn a_cold_start_shows_one_answer_everywhere() {
    let case = SyntheticCase::generate(7, 2);
    let tmp = tempfile::tempdir().unwrap();
    let mut file = cold_start_file(&case, tmp.path());
    // As fast as the stand-in goes: only the answer matters here.
    let sim = file.executor.as_mut().unwrap().sim.as_mut().unwrap();
    sim.compression = Some(0.0);
    let path = tmp.path().join("cold.toml");
    std::fs::write(&path, toml::to_string(&file).unwrap()).unwrap();
    let dir = tmp.path().join("cold");
    init_and_run(&path, &dir);
    let status = check_one_answer(&dir, tmp.path());
    // A cold start's FN is on the model's landscape, and the answer says so.
    assert!(
        status["answer"]["fn_scale"]
            .as_str()
            .unwrap()
            .contains("model's predicted landscape"),
        "{status:#}"
    );
}

#[test]
fn a_scaling_campaign_has_no_answer_in_any_view() {
    let case = SyntheticCase::generate(7, 2);
    let tmp = tempfile::tempdir().unwrap();
    write_truths(&case, tmp.path());
    let dir = sim_campaign(&case, tmp.path());
    autolb().args(["campaign", "run"]).arg(&dir).stdout_ok();

    let status = json(&["campaign", "status"], &dir);
    assert!(
        status["best"].is_null() && status["answer"].is_null(),
        "{status:#}"
    );
    // Its curves predict; the prediction is labelled, with nothing measured to compare with.
    let first = &status["predicted"]["configs"][0];
    assert!(first["against"].is_null(), "{status:#}");
    let err = best_refused(&dir);
    assert!(err.contains("measures curves, not configurations"), "{err}");
    let md = report(&dir);
    assert!(!md.contains("The recommended configuration is"), "{md}");
    assert!(md.contains("The predicted best configuration is"), "{md}");
    let line = app_best_line(&dir, tmp.path(), |l| l.contains("curves: "));
    assert!(line.contains("(predicted)"), "{line}");
}

#[test]
fn a_campaign_without_a_successful_run_has_no_best_and_says_so_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    autolb()
        .args(["campaign", "init", "--demo"])
        .arg(&dir)
        .stdout_ok();
    let err = best_refused(&dir);
    assert!(err.contains("no successful run yet"), "{err}");
}
