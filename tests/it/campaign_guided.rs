//! Guided campaigns (`strategy = "guided"`) to the end: driven from outside through
//! `campaign next` / `campaign record`, and by the `command` executor, with the stand-in model
//! as the model. Each checks the strategy's rules on the final state: every test has its
//! reason, no configuration runs more than `repetitions` times, no configuration the strategy
//! chose lies within `minimum_step` PEs of an earlier one, limits, allowed lists and budget hold, and the campaign
//! ends saying why.

use crate::common;
use crate::common::{autolb, autolb_path, CampaignToml};

use std::path::{Path, PathBuf};

use autolb::campaign::state::Outcome;
use autolb::campaign::{RunState, State};
use serde_json::Value;

/// Runs `autolb ARGS DIR`, which must succeed; its JSON output with `--json`, else its text.
fn on_campaign(args: &[&str], dir: &Path) -> Value {
    let out = autolb().args(args).arg(dir).stdout_ok();
    if args.contains(&"--json") {
        serde_json::from_str(&out).unwrap()
    } else {
        Value::String(out)
    }
}

/// A guided campaign of three predicted tests from the original IFS 384 / NEMO 242, with
/// `executor` (the tables of the executor, if any).
fn init(tmp: &Path, executor: &str) -> PathBuf {
    let campaign = CampaignToml::default()
        .set("top", 3)
        .set("minimum_step", 12)
        .set_str("strategy", "guided")
        .table("\n[original]\nIFS = 384\nNEMO = 242\n")
        .table(executor);
    common::init_demo_campaign(tmp, "camp", &campaign)
}

/// The best's means pool every measured row of its configuration, and its line says so: one
/// row by its iteration and test, several as a mean over them (a guided campaign repeats its best
/// in a later iteration).
fn check_best_names_its_rows(dir: &Path) {
    let status = on_campaign(&["campaign", "status", "--json"], dir);
    let best = &status["best"];
    let measured: Vec<Value> = status["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| {
            it["tests"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["nproc"] == best["nproc"] && t["sypd"].is_number())
                .map(|t| serde_json::json!([it["iteration"], t["test"]]))
        })
        .collect();
    assert_eq!(best["measured_in"].as_array().unwrap(), &measured, "{best}");
    let text = on_campaign(&["campaign", "status"], dir);
    let text = text.as_str().unwrap().replace("\n  ", " ");
    let said = match measured.as_slice() {
        [one] => format!("(iteration {}, test {}", one[0], one[1]),
        _ => format!("(mean of {} runs in iterations", best["runs"]),
    };
    assert!(text.contains(&said), "{said:?} not in {text}");
}

/// The guided strategy's rules, on a finished campaign.
fn check_rules(dir: &Path) {
    let state = State::load(dir).unwrap();
    assert!(state.is_done());
    let s = &state.settings;
    assert_eq!(s.strategy.name(), "guided");
    let nemo_allowed = state.components[1].allowed.clone().unwrap();
    let mut configs: Vec<(Vec<u32>, u32)> = Vec::new();
    for (i, it) in state.iterations.iter().enumerate() {
        for t in &it.tests {
            let reason = t.reason.clone().unwrap_or_default();
            if i > 0 {
                assert!(
                    [
                        "model: upper band ",
                        "donor/recipient: ",
                        "neighbour: ",
                        "repetition: "
                    ]
                    .iter()
                    .any(|p| reason.starts_with(p)),
                    "iteration {i} test {}: reason {reason:?}",
                    t.test
                );
            }
            assert!(t.nproc.iter().sum::<u32>() <= s.max_nproc);
            for (c, &p) in state.components.iter().zip(&t.nproc) {
                assert!((c.low..=c.high).contains(&p), "{} {p}", c.name);
            }
            assert!(nemo_allowed.contains(&t.nproc[1]), "NEMO {}", t.nproc[1]);
            match configs.iter_mut().find(|(n, _)| *n == t.nproc) {
                Some((_, runs)) => {
                    assert!(reason.starts_with("repetition: "), "{reason}");
                    *runs += t.runs.len() as u32;
                }
                None => {
                    // The starting configurations are the prediction's (with allowed lists
                    // they may lie closer); every later one keeps its distance.
                    for (n, _) in configs.iter().filter(|_| i > 0) {
                        let far = n
                            .iter()
                            .zip(&t.nproc)
                            .any(|(a, b)| a.abs_diff(*b) >= s.minimum_step);
                        assert!(far, "{:?} within minimum_step of {n:?}", t.nproc);
                    }
                    configs.push((t.nproc.clone(), t.runs.len() as u32));
                }
            }
        }
    }
    for (n, runs) in &configs {
        assert!(*runs <= s.repetitions, "{n:?} ran {runs} times");
    }
    let last = state.iterations.last().unwrap();
    let stopped = last.tests.iter().any(|t| {
        matches!(&t.decision.as_ref().unwrap().outcome,
            Outcome::Finished { reason } if reason.contains("no unmeasured configuration can beat"))
    });
    assert!(stopped, "the campaign does not say why it ended");
    let runs: usize = state.run_count();
    eprintln!(
        "{} iterations, {} configurations, {runs} runs",
        state.iterations.len(),
        configs.len()
    );
    assert!(state.iterations.len() >= 2, "the model chose nothing");

    // `campaign status --json` carries the strategy and every test's reason.
    let status = on_campaign(&["campaign", "status", "--json"], dir);
    assert_eq!(status["strategy"], "guided");
    assert_eq!(status["state"], "done");
    for it in status["iterations"].as_array().unwrap() {
        for t in it["tests"].as_array().unwrap() {
            assert!(t["reason"].is_string(), "no reason in {t}");
        }
    }
    assert!(status["best"]["sypd"].as_f64().unwrap() > 10.0);
}

#[test]
fn a_guided_campaign_runs_to_the_end_through_next_and_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init(tmp.path(), "");
    let mut iterations = 0;
    loop {
        let runs = on_campaign(&["campaign", "next", "--json"], &dir);
        let runs = runs.as_array().unwrap().clone();
        if runs.is_empty() {
            break;
        }
        iterations += 1;
        assert!(iterations < 30, "the campaign does not end");
        if iterations == 1 {
            // The guided strategy runs each starting configuration once.
            assert_eq!(runs.len(), 4);
        }
        for r in &runs {
            let id = r["run"].as_str().unwrap();
            let out = tmp.path().join(format!("timing-{id}"));
            let status = autolb()
                .args(["simulate", "--out"])
                .arg(&out)
                .arg(format!("--comp=ATMIFS={}", r["nproc"]["IFS"]))
                .arg(format!("--comp=oceanx={}", r["nproc"]["NEMO"]))
                .args([
                    "--seed",
                    &(iterations * 10 + r["test"].as_u64().unwrap()).to_string(),
                ])
                .output()
                .unwrap();
            assert!(status.status.success());
            let out = autolb()
                .args(["campaign", "record"])
                .arg(&dir)
                .args(["--run", id, "--timing"])
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    check_rules(&dir);
}

#[test]
fn a_guided_campaign_runs_to_the_end_with_the_command_executor() {
    let tmp = tempfile::tempdir().unwrap();
    let executor = format!(
        r#"
[executor]
kind = "command"
jobs = 2
command = ["{bin}", "simulate", "--out", ".", "--comp", "ATMIFS={{nproc.IFS}}", "--comp", "oceanx={{nproc.NEMO}}", "--seed", "{{test}}{{repetition}}"]
"#,
        bin = autolb_path().display()
    );
    let dir = init(tmp.path(), &executor);
    let table = on_campaign(&["campaign", "run"], &dir);
    assert!(
        table.as_str().unwrap().contains("best so far: IFS "),
        "{table}"
    );
    check_best_names_its_rows(&dir);
    let state = State::load(&dir).unwrap();
    for it in &state.iterations {
        for t in &it.tests {
            assert!(t.runs.iter().all(|r| r.state == RunState::Done));
        }
    }
    check_rules(&dir);
}
