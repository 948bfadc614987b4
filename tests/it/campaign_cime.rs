//! A campaign on a CESM-shaped layout tree (`ocn | (atm ; (ice | lnd))`) run end to end on the
//! stand-in model, which writes CIME timing summaries: it balances to the end, writes the
//! answer as `./xmlchange` lines, and a driver killed mid-campaign resumes to the same answer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use autolb::campaign::{RunState, State};
use rand::Rng;

use crate::common::autolb;
use crate::common::processes::wait_with_timeout;

/// The example's inputs copied into `tmp/NAME`, its `[executor.sim]` section amended by
/// `sim_extra`; returns the campaign file.
fn example(tmp: &Path, name: &str, sim_extra: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/cesm");
    let dst = tmp.join(name);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    let file = dst.join("balance.toml");
    let text = std::fs::read_to_string(&file).unwrap() + sim_extra;
    std::fs::write(&file, text).unwrap();
    file
}

/// `autolb campaign VERB DIR ARGS...`, which must succeed: its stdout.
fn campaign(verb: &str, dir: &Path, args: &[&str]) -> String {
    autolb()
        .args(["campaign", verb])
        .arg(dir)
        .args(args)
        .timeout(Duration::from_secs(300))
        .stdout_ok()
}

fn init(file: &Path, dir: &Path) {
    campaign("init", dir, &["--config", file.to_str().unwrap()]);
}

fn run_to_end(dir: &Path) {
    campaign("run", dir, &[]);
}

fn best_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&campaign("best", dir, &["--json"])).unwrap()
}

/// `(name, tasks)` of the answer.
fn tasks(best: &serde_json::Value) -> Vec<(String, u64)> {
    // NameMap serialises as an object in component order.
    best["ranks"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_else(|| {
            best["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
                .collect()
        })
}

#[test]
fn a_cesm_shaped_campaign_balances_to_the_end_and_writes_its_xmlchange_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let file = example(tmp.path(), "inputs", "");
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    run_to_end(&dir);

    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert_eq!(
        state.settings.layout.as_deref(),
        Some("ocn | (atm ; (ice | lnd))")
    );
    let names = state.component_names();
    let tree = autolb::layout::Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
    let ocn = names.iter().position(|n| n == "ocn").unwrap();
    let mut moved_to_ocean = false;
    for (i, it) in state.iterations.iter().enumerate() {
        for (t, test) in it.tests.iter().enumerate() {
            // Every configuration stays within the budget the layout spans.
            let span = autolb::campaign::tree::width(&tree, &names, &test.nproc);
            assert!(span <= 256, "{:?} spans {span}", test.nproc);
            for (r, run) in test.runs.iter().enumerate() {
                assert_eq!(run.state, RunState::Done, "{}: {:?}", run.id, run.failure);
                let run_dir = state.request(&dir, i, t, r).run_dir;
                let timing: Vec<_> = std::fs::read_dir(run_dir.join("timing"))
                    .unwrap()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("cesm_timing."))
                    .collect();
                assert_eq!(timing.len(), 1, "{}", run.id);
            }
            if let Some(d) = &test.decision {
                if d.recipient.is_some()
                    && d.next.as_ref().is_some_and(|n| n[ocn] > test.nproc[ocn])
                {
                    moved_to_ocean = true;
                }
            }
        }
    }
    // The ocean's truth is 40 % slower than its curve: the campaign gives it PEs.
    assert!(moved_to_ocean, "no move gave the ocean PEs");
    let first_ocean = state.iterations[0].tests[0].nproc[ocn];
    let best = best_json(&dir);
    let answer: Vec<(String, u64)> = tasks(&best);
    let best_ocean = answer.iter().find(|(n, _)| n == "ocn").unwrap().1;
    assert!(
        best_ocean > u64::from(first_ocean),
        "best ocean {best_ocean} tasks, first test {first_ocean}"
    );

    // The answer as a CIME case's settings: every class, ride-along classes on the
    // atmosphere's PEs, and the reset the case needs.
    let text = campaign("best", &dir, &["--emit", "cime"]);
    assert!(text.ends_with("./case.setup --reset\n"), "{text}");
    let setting = |key: &str| -> u64 {
        text.split(|c: char| c == ',' || c.is_whitespace())
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {text}"))
            .parse()
            .unwrap()
    };
    let of = |n: &str| answer.iter().find(|(c, _)| c == n).unwrap().1;
    assert_eq!(setting("NTASKS_OCN"), of("ocn"));
    assert_eq!(setting("ROOTPE_OCN"), 0);
    assert_eq!(setting("ROOTPE_ATM"), of("ocn"));
    assert_eq!(setting("ROOTPE_ICE"), of("ocn"));
    assert_eq!(setting("ROOTPE_LND"), of("ocn") + of("ice"));
    for class in ["CPL", "ROF", "GLC", "WAV"] {
        assert_eq!(setting(&format!("ROOTPE_{class}")), of("ocn"), "{class}");
        assert!(setting(&format!("NTASKS_{class}")) >= of("atm"), "{class}");
        assert_eq!(setting(&format!("NTHRDS_{class}")), 1);
    }

    // The answer as a campaign file runs it again on the same layout, as its one first test.
    let again = tmp.path().join("again.toml");
    std::fs::write(&again, campaign("best", &dir, &["--emit", "toml"])).unwrap();
    let second = tmp.path().join("again");
    init(&again, &second);
    let state = State::load(&second).unwrap();
    assert_eq!(
        state.settings.layout.as_deref(),
        Some("ocn | (atm ; (ice | lnd))")
    );
    let first: Vec<(String, u64)> = names
        .iter()
        .cloned()
        .zip(
            state.iterations[0].tests[0]
                .nproc
                .iter()
                .map(|&p| u64::from(p)),
        )
        .collect();
    assert_eq!(state.iterations[0].tests.len(), 1);
    let mut sorted_answer = answer.clone();
    sorted_answer.sort();
    let mut sorted_first = first;
    sorted_first.sort();
    assert_eq!(sorted_first, sorted_answer);
}

#[test]
fn a_killed_cesm_campaign_resumes_to_the_same_answer() {
    let tmp = tempfile::tempdir().unwrap();
    // The reference: the same campaign, never interrupted, its summaries in MCT's flavour (the
    // same numbers under another header).
    let plain = example(tmp.path(), "plain", "");
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(text.contains("output = \"cmeps\""));
    std::fs::write(
        &plain,
        text.replace("output = \"cmeps\"", "output = \"mct\""),
    )
    .unwrap();
    let reference = tmp.path().join("reference");
    init(&plain, &reference);
    run_to_end(&reference);
    let summary = |dir: &Path| {
        let run_dir = State::load(dir).unwrap().request(dir, 0, 0, 0).run_dir;
        let timing = run_dir.join("timing");
        let file = std::fs::read_dir(&timing)
            .unwrap()
            .flatten()
            .next()
            .unwrap();
        std::fs::read_to_string(file.path()).unwrap()
    };
    assert!(!summary(&reference).contains("Driver"));

    // Slow runs, so that kills land while runs are under way.
    let slow = example(tmp.path(), "slow", "compression = 0.02\n");
    let dir = tmp.path().join("killed");
    init(&slow, &dir);
    let mut rng = rand::rng();
    let mut kills = 0;
    for _ in 0..6 {
        let mut child = crate::common::spawn_campaign_run(&dir);
        std::thread::sleep(Duration::from_millis(rng.random_range(200..900)));
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
    }
    assert!(
        kills >= 2,
        "only {kills} kills landed; the campaign ran too fast"
    );
    let mut child = crate::common::spawn_campaign_run(&dir);
    let status = wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success());

    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert!(summary(&dir).contains("Driver      : CMEPS"));
    let (a, b) = (best_json(&reference), best_json(&dir));
    assert_eq!(tasks(&a), tasks(&b));
    assert_eq!(a["sypd"], b["sypd"]);
    // Every run of the resumed campaign measured what the uninterrupted one did.
    let reference_state = State::load(&reference).unwrap();
    let runs = |s: &State| -> Vec<(String, Vec<u32>, Option<f64>)> {
        s.iterations
            .iter()
            .flat_map(|it| {
                it.tests.iter().flat_map(|t| {
                    t.runs.iter().map(|r| {
                        (
                            r.id.clone(),
                            t.nproc.clone(),
                            r.metrics.as_ref().map(|m| m.sypd),
                        )
                    })
                })
            })
            .collect()
    };
    assert_eq!(runs(&state), runs(&reference_state));
}

#[test]
fn what_a_tree_campaign_does_not_do_is_refused_in_one_line_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 4] = [
        ("guided", "strategy = \"guided\"\n", "strategy = \"guided\""),
        (
            "start",
            "start = [{ atm = 200, ocn = 100, ice = 100, lnd = 100 }]\n",
            "spans 300 PEs",
        ),
        ("queue", "", "[[queue]]"),
        (
            "original",
            "",
            "original: atm 200 / ocn 100 / ice 100 / lnd 100 spans 300 PEs",
        ),
    ];
    for (name, top, words) in cases {
        let file = example(tmp.path(), name, "");
        let mut text = format!("{top}{}", std::fs::read_to_string(&file).unwrap());
        if name == "queue" {
            text.push_str("\n[machine]\ncores_per_node = 64\n\n[[queue]]\nname = \"normal\"\nmax_nodes = 10\n");
        }
        if name == "original" {
            text.push_str("\n[original]\natm = 200\nocn = 100\nice = 100\nlnd = 100\n");
        }
        std::fs::write(&file, text).unwrap();
        let out = autolb()
            .args(["campaign", "init"])
            .arg(tmp.path().join(format!("camp-{name}")))
            .arg("--config")
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: accepted");
        assert!(stderr.contains(words), "{name}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: {stderr}");
    }
}

#[test]
fn a_tree_campaign_driven_from_outside_gives_each_run_its_first_pes() {
    let tmp = tempfile::tempdir().unwrap();
    let file = example(tmp.path(), "outside", "");
    let text = std::fs::read_to_string(&file).unwrap();
    let without_executor = &text[..text.find("[executor]").unwrap()];
    std::fs::write(&file, without_executor).unwrap();
    let dir = tmp.path().join("camp");
    init(&file, &dir);
    let env = campaign(
        "next",
        &dir,
        &[
            "--env",
            "--iteration",
            "0",
            "--test",
            "0",
            "--repetition",
            "1",
        ],
    );
    // The first test: ocn 72 on PEs 0-71, atm 184 after it, ice with atm, land after ice.
    for line in [
        "export AUTOLB_ROOTPE_OCN='0'",
        "export AUTOLB_ROOTPE_ATM='72'",
        "export AUTOLB_ROOTPE_LND='184'",
        "export AUTOLB_NTASKS_CPL='184'",
        "export AUTOLB_TOTAL_NPROC='256'",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} not in\n{env}");
    }
}

#[test]
fn the_app_refuses_a_tree_campaign_in_one_line_rather_than_rank_it_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let file = example(tmp.path(), "app", "");
    let dir = tmp.path().join("app-campaign");
    init(&file, &dir);
    let out = autolb()
        .args(["tui", "--campaign"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("balances the layout tree"), "{err}");
    assert!(err.contains("campaign status"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn a_tree_campaigns_report_shows_what_it_measured_and_no_side_by_side_prediction() {
    let tmp = tempfile::tempdir().unwrap();
    let file = example(tmp.path(), "report", "");
    let dir = tmp.path().join("report-campaign");
    init(&file, &dir);
    run_to_end(&dir);
    let page = tmp.path().join("report.html");
    autolb()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(&page)
        .timeout(Duration::from_secs(300))
        .stdout_ok();
    let html = std::fs::read_to_string(&page).unwrap();
    let best = best_json(&dir);
    let config = tasks(&best)
        .iter()
        .map(|(_, n)| n.to_string())
        .collect::<Vec<_>>()
        .join("/");
    assert!(
        html.contains(&config),
        "the answer {config} is in the report"
    );
    assert!(
        !html.contains("by the calibrated model"),
        "no side-by-side prediction beside a tree's answer"
    );
}
