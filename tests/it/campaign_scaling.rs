//! Standalone scaling campaigns (`[scaling] design = "standalone"`) to the end, on the stand-in
//! model as the `sim` executor and behind a shell script run by the `command` executor, each
//! killed with SIGKILL half-way and resumed. The truths are random ([`SyntheticCase`]), and the
//! curves the campaign writes must be good enough to balance with: a prediction from them picks
//! a configuration whose FN on the true curves is within [`FN_TOLERANCE`] of the best.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use autolb::campaign::{RunMetrics, RunState, State};
use autolb::curve::Curve;
use autolb::predict::{ComponentInput, Problem, Settings};
use autolb::sim::synthetic::{write_curve_csv, SyntheticCase, SyntheticComponent};
use serde_json::Value;

use crate::common::autolb_path;
use crate::common::processes::wait_with_timeout;
use crate::common::{autolb, spawn_campaign_run};

/// How far (in FN) the configuration chosen from measured curves may be from the best one.
const FN_TOLERANCE: f64 = 0.01;
/// Coupling steps of a standalone stand-in run: short, with the LUCIA window still valid.
pub(crate) const STEPS: u32 = 12;
/// Real seconds per modelled second: slow enough that a kill lands half-way.
pub(crate) const COMPRESSION: f64 = 0.03;

/// Writes the case's standalone truths as `standalone_NAME.csv` into `dir`.
pub(crate) fn write_truths(case: &SyntheticCase, dir: &Path) {
    for c in &case.components {
        write_curve_csv(
            &c.standalone_truth,
            &dir.join(format!("standalone_{}.csv", c.name)),
        )
        .unwrap();
        write_curve_csv(&c.coupled_truth, &dir.join(format!("truth_{}.csv", c.name))).unwrap();
    }
}

/// The `[[component]]` tables and `[scaling]` of a case (each component's range: its
/// standalone curve's).
fn components_and_scaling(case: &SyntheticCase) -> String {
    let mut text = String::new();
    for c in &case.components {
        text.push_str(&format!(
            "[[component]]\nname = \"{}\"\nmin_nproc = {}\nmax_nproc = {}\n\n",
            c.name,
            c.standalone.first_nproc(),
            c.standalone.last_nproc()
        ));
    }
    text.push_str("[scaling]\ndesign = \"standalone\"\ncounts = 5\n\n");
    text
}

/// A scaling campaign on the `sim` executor: coupled runs would follow the coupled truth,
/// standalone runs follow `standalone_curves`.
pub(crate) fn sim_campaign(case: &SyntheticCase, tmp: &Path) -> PathBuf {
    let mut text = components_and_scaling(case);
    text.push_str(&format!(
        "[executor]\nkind = \"sim\"\njobs = 3\n\n[executor.sim]\nsteps = {STEPS}\ncompression = {COMPRESSION}\nseed = {}\n\n",
        case.seed
    ));
    let mut curves = String::from("[executor.sim.curves]\n");
    let mut alone = String::from("[executor.sim.standalone_curves]\n");
    for c in &case.components {
        curves.push_str(&format!("{0} = \"truth_{0}.csv\"\n", c.name));
        alone.push_str(&format!("{0} = \"standalone_{0}.csv\"\n", c.name));
    }
    text.push_str(&format!("{curves}\n{alone}"));
    init(tmp, &text)
}

/// A scaling campaign on the `command` executor: a shell script standing in for the model
/// runs `autolb simulate --standalone` for the component and PEs it is given (the
/// environment), writing LUCIA files that the campaign reads.
fn command_campaign(case: &SyntheticCase, tmp: &Path) -> PathBuf {
    let script = tmp.join("run-standalone.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nset -e\nseed=$(printf '%s' \"$AUTOLB_RUN\" | cksum | cut -d' ' -f1)\n\
             exec {autolb:?} simulate --standalone --comp \"$AUTOLB_COMPONENT=$AUTOLB_NPROC\" \
             --curve \"$AUTOLB_COMPONENT=$1/standalone_$AUTOLB_COMPONENT.csv\" --steps {STEPS} --compress {COMPRESSION} \
             --seed \"$seed\" --out \"$AUTOLB_RUN_DIR\" >/dev/null\n",
            autolb = autolb_path().display().to_string()
        ),
    )
    .unwrap();
    let mut text = components_and_scaling(case);
    text.push_str(&format!(
        "[executor]\nkind = \"command\"\njobs = 3\ncommand = [\"sh\", {:?}, {:?}]\nperiod_s = 2700\n",
        script.display().to_string(),
        tmp.display().to_string()
    ));
    // period_s belongs to the top level: move it there.
    let text = format!("period_s = 2700\n{}", text.replace("period_s = 2700\n", ""));
    init(tmp, &text)
}

pub(crate) fn init(tmp: &Path, text: &str) -> PathBuf {
    let file = tmp.join("scaling.toml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp.join("camp");
    let out = autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

pub(crate) fn done_runs(dir: &Path) -> BTreeMap<String, RunMetrics> {
    let state = State::load(dir).unwrap();
    let mut out = BTreeMap::new();
    for it in &state.iterations {
        for t in &it.tests {
            for r in t.runs.iter().filter(|r| r.state == RunState::Done) {
                out.insert(r.id.clone(), r.metrics.clone().unwrap());
            }
        }
    }
    out
}

/// Runs the campaign, kills its driver with SIGKILL once a third of the first series has
/// landed, checks nothing measured was lost, and runs it again to the end.
pub(crate) fn kill_half_way_and_resume(dir: &Path) {
    let first_series = State::load(dir).unwrap().iterations[0]
        .tests
        .iter()
        .map(|t| t.runs.len())
        .sum::<usize>();
    let mut child = spawn_campaign_run(dir);
    let start = Instant::now();
    while done_runs(dir).len() < first_series / 3 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the driver ended before the kill"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no run landed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = done_runs(dir);
    let state = State::load(dir).unwrap();
    assert!(!state.is_done(), "killed after the end: no resume tested");
    // The curves written so far are whole files the curve reader takes.
    for c in &state.components {
        let path = dir.join(&c.curve);
        if path.exists() {
            // A curve of one count so far is whole too; the reader wants two.
            match Curve::load(c.name.clone(), &path) {
                Ok(_) | Err(autolb::curve::CurveError::TooFewPoints { .. }) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }
    let mut child = autolb()
        .args(["campaign", "run"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success(), "resumed driver: {status:?}");
    let after = done_runs(dir);
    for (id, m) in &before {
        assert_eq!(after.get(id), Some(m), "run {id} changed or was lost");
    }
    assert!(State::load(dir).unwrap().is_done());
}

/// The FN gap, on the true curves `truth` gives each component (standalone or coupled-mode),
/// between the best configuration and the one a prediction from the campaign's curves picks,
/// with a budget of 60 % of the ranges' tops.
pub(crate) fn fn_gap(
    case: &SyntheticCase,
    dir: &Path,
    truth: fn(&SyntheticComponent) -> Curve,
) -> f64 {
    let state = State::load(dir).unwrap();
    let budget = (case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum::<u32>() as f64
        * 0.6) as u32;
    let settings = Settings {
        max_nproc: budget,
        step: 4,
        ..Settings::default()
    };
    let inputs = |curve: &dyn Fn(usize) -> Curve| -> Vec<ComponentInput> {
        case.components
            .iter()
            .enumerate()
            .map(|(k, c)| ComponentInput {
                name: c.name.clone(),
                curve: Some(curve(k)),
                allowed: None,
                min_nproc: Some(state.components[k].low),
                max_nproc: Some(state.components[k].high),
                thread_curves: Vec::new(),
            })
            .collect()
    };
    let measured = inputs(&|k| {
        Curve::load(
            case.components[k].name.clone(),
            &dir.join(&state.components[k].curve),
        )
        .unwrap()
    });
    let truth = inputs(&|k| truth(&case.components[k]));
    let chosen = autolb::predict::predict(&measured, &settings).unwrap().top[0].clone();
    let problem = Problem::new(&truth, &settings).unwrap();
    let best = problem.rank(settings.tts_w, 1).top[0].clone();
    let index: Vec<usize> = chosen
        .nproc
        .iter()
        .enumerate()
        .map(|(c, &p)| problem.candidate_index(c, p).unwrap())
        .collect();
    let picked = problem.score(&index, settings.tts_w);
    eprintln!(
        "best {:?} FN {:.4}; from the campaign's curves {:?} FN {:.4}",
        best.nproc, best.fittingness, picked.nproc, picked.fittingness
    );
    best.fittingness - picked.fittingness
}

/// A component's true standalone curve (what a standalone scaling campaign measures).
fn standalone_truth(c: &SyntheticComponent) -> Curve {
    c.standalone_truth.clone()
}

/// `campaign status --json` has every component's curve, as written.
fn check_status(dir: &Path) {
    let out = autolb()
        .args(["campaign", "status", "--json"])
        .arg(dir)
        .stdout_ok();
    let status: Value = serde_json::from_str(&out).unwrap();
    let state = State::load(dir).unwrap();
    for c in &state.components {
        let points = status["curves"][&c.name].as_array().unwrap();
        let written = Curve::load(c.name.clone(), &dir.join(&c.curve)).unwrap();
        assert_eq!(points.len(), written.points().len());
        for (p, w) in points.iter().zip(written.points()) {
            assert_eq!(p["nproc"].as_u64(), Some(u64::from(w.nproc)));
            assert!(p["runs"].as_u64().unwrap() >= 1 && p["sd"].as_f64().is_some());
        }
    }
    let text = autolb().args(["campaign", "status"]).arg(dir).stdout_ok();
    assert!(text.contains("counts measured"), "{text}");
    let csv = std::fs::read_to_string(dir.join(&state.components[0].curve)).unwrap();
    assert!(
        csv.starts_with('#') && csv.contains("standalone mode"),
        "{csv}"
    );
    assert!(csv.contains("nproc,SYPD,sd,runs"), "{csv}");
}

#[test]
fn a_sim_scaling_campaign_survives_a_kill_and_its_curves_pick_a_near_best_configuration() {
    for seed in [7, 42] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        write_truths(&case, tmp.path());
        let dir = sim_campaign(&case, tmp.path());
        kill_half_way_and_resume(&dir);
        check_status(&dir);
        let gap = fn_gap(&case, &dir, standalone_truth);
        assert!(gap <= FN_TOLERANCE, "seed {seed}: FN gap {gap}");
    }
}

#[test]
fn a_command_scaling_campaign_survives_a_kill_and_its_curves_pick_a_near_best_configuration() {
    let case = SyntheticCase::generate(19, 2);
    let tmp = tempfile::tempdir().unwrap();
    write_truths(&case, tmp.path());
    let dir = command_campaign(&case, tmp.path());
    kill_half_way_and_resume(&dir);
    check_status(&dir);
    let gap = fn_gap(&case, &dir, standalone_truth);
    assert!(gap <= FN_TOLERANCE, "FN gap {gap}");
}

/// `timing = "wall"`: a command whose wall time is known (a sleep of `0.2 + 40 / nproc`
/// seconds) is measured at `simulated_days / 365` years over that time, start-up of the shell
/// included: the wall time back from each point's SYPD is the sleep and a little more.
#[test]
fn wall_timing_turns_the_commands_wall_time_into_sypd() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[[component]]\nname = \"X\"\nmin_nproc = 20\nmax_nproc = 200\n\n\
                [scaling]\ndesign = \"standalone\"\ncounts = 3\nrepetitions = 2\nmax_runs = 8\n\
                simulated_days = 1\ntiming = \"wall\"\n\n\
                [executor]\nkind = \"command\"\njobs = 8\n\
                command = [\"sh\", \"-c\", \"sleep $(awk \\\"BEGIN {{ print 0.2 + 40 / {nproc} }}\\\")\"]\n";
    let dir = init(tmp.path(), text);
    let status = autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let state = State::load(&dir).unwrap();
    let curve = Curve::load("X", &dir.join(&state.components[0].curve)).unwrap();
    assert_eq!(
        curve.points().iter().map(|p| p.nproc).collect::<Vec<_>>()[..2],
        [20, 63]
    );
    for p in curve.points() {
        let sleep = 0.2 + 40.0 / f64::from(p.nproc);
        // The wall time back from SYPD: simulated years / (wall days).
        let wall = (1.0 / 365.0) / p.sypd * 86_400.0;
        // Never shorter than the sleep; longer by the start-up of sh and awk (and the
        // machine's load), well under a second.
        assert!(
            (sleep - 0.005..sleep + 0.5).contains(&wall),
            "{} PEs: {wall} s for a sleep of {sleep} s",
            p.nproc
        );
    }
    let runs: usize = state.run_count();
    assert!(runs <= 8, "max_runs: {runs}");
}

/// Driven from outside: `campaign next --json` names the component of each standalone run,
/// `autolb simulate --standalone` runs it as a workflow manager's job would, `campaign
/// record` measures it; to the end.
#[test]
fn an_outside_scaling_campaign_runs_by_next_and_record() {
    let case = SyntheticCase::generate(23, 2);
    let tmp = tempfile::tempdir().unwrap();
    write_truths(&case, tmp.path());
    let mut text = format!("period_s = 2700\n{}", components_and_scaling(&case));
    text = text.replace(
        "counts = 5\n",
        "counts = 4\nrepetitions = 2\nmax_runs = 24\n",
    );
    let dir = init(tmp.path(), &text);
    let mut rounds = 0;
    loop {
        let out = autolb()
            .args(["campaign", "next", "--json"])
            .arg(&dir)
            .stdout_ok();
        let runs: Vec<Value> = serde_json::from_str(&out).unwrap();
        if runs.is_empty() {
            break;
        }
        for run in runs {
            let id = run["run"].as_str().unwrap();
            let component = run["component"].as_str().unwrap();
            let nproc = run["nproc"].as_object().unwrap();
            assert_eq!(nproc.len(), 1, "{run}");
            assert!(nproc.contains_key(component), "{run}");
            let curve = tmp.path().join(format!("standalone_{component}.csv"));
            // Each run its own noise, as repetitions of a real run differ.
            let seed = id
                .bytes()
                .fold(17u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
                .to_string();
            autolb()
                .args(["simulate", "--standalone", "--steps", "12", "--seed", &seed])
                .arg("--comp")
                .arg(format!("{component}={}", nproc[component]))
                .arg("--curve")
                .arg(format!("{component}={}", curve.display()))
                .arg("--out")
                .arg(run["run_dir"].as_str().unwrap())
                .stdout_ok();
            autolb()
                .args(["campaign", "record"])
                .arg(&dir)
                .args(["--run", id])
                .stdout_ok();
        }
        rounds += 1;
        assert!(rounds < 20, "no end");
    }
    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    for (k, c) in case.components.iter().enumerate() {
        let curve = Curve::load(c.name.clone(), &dir.join(&state.components[k].curve)).unwrap();
        for p in curve.points() {
            let truth = c.standalone_sypd(p.nproc);
            assert!(
                ((p.sypd - truth) / truth).abs() < 0.03,
                "{} at {}: {} vs {truth}",
                c.name,
                p.nproc,
                p.sypd
            );
        }
    }
}

#[test]
fn the_app_on_a_scaling_campaign_without_curves_yet_says_where_to_look() {
    let case = SyntheticCase::generate(3, 2);
    let tmp = tempfile::tempdir().unwrap();
    write_truths(&case, tmp.path());
    let dir = sim_campaign(&case, tmp.path());
    let out = autolb()
        .args(["tui", "--campaign"])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has not measured")
            && err.contains("campaign status")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// A two-component sim scaling campaign on truths of `seed`, run to its end in `tmp`.
fn ran_sim_campaign(seed: u64, tmp: &Path) -> (SyntheticCase, PathBuf) {
    let case = SyntheticCase::generate(seed, 2);
    write_truths(&case, tmp);
    let dir = sim_campaign(&case, tmp);
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .stdout_ok();
    (case, dir)
}

#[test]
fn the_report_says_where_each_curve_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let (case, dir) = ran_sim_campaign(11, tmp.path());
    let status: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(&dir)
            .stdout_ok(),
    )
    .unwrap();
    let out = tmp.path().join("report.md");
    autolb()
        .args(["report", "--markdown", "--out"])
        .arg(&out)
        .arg(&dir)
        .stdout_ok();
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.starts_with("# Scaling campaign"), "{md}");
    // Its own settings and words, none of a balancing campaign's.
    for own in ["| design | standalone", "| repetitions per PE count |"] {
        assert!(md.contains(own), "{own:?} not in\n{md}");
    }
    for foreign in [
        "initial step",
        "minimum step",
        "repetitions per test",
        "donor",
    ] {
        assert!(!md.contains(foreign), "{foreign:?} in\n{md}");
    }
    let section = md
        .split("## Where the curves came from")
        .nth(1)
        .expect("the section is there")
        .split("\n## ")
        .next()
        .unwrap();
    assert!(section.contains("standalone mode"));
    // Every measured point of `status --json` is a row of the section, with the same numbers.
    for c in &case.components {
        let points = status["curves"][&c.name].as_array().unwrap();
        assert!(points.len() >= 2, "{}", c.name);
        for p in points {
            let row = format!(
                "| {} | {:.3} | {:.3} |",
                p["nproc"],
                p["sypd"].as_f64().unwrap(),
                p["sd"].as_f64().unwrap()
            );
            assert!(section.contains(&row), "{row} not in\n{section}");
        }
    }
}

/// The `## Recommendation` section of a Markdown report, its notes left out.
fn recommendation(md: &str) -> String {
    md.split("## Recommendation")
        .nth(1)
        .expect("a recommendation")
        .split("\n## ")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.contains("Note:") && l.trim() != ">")
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_curve_file_edited_after_the_campaign_changes_no_answer_and_is_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, dir) = ran_sim_campaign(11, tmp.path());
    let report = |name: &str| {
        let out = tmp.path().join(name);
        autolb()
            .args(["report", "--markdown", "--out"])
            .arg(&out)
            .arg(&dir)
            .stdout_ok();
        std::fs::read_to_string(&out).unwrap()
    };
    let before = report("before.md");
    assert!(!before.contains("disagrees"), "{before}");

    // By hand: the first two measured counts of the first component get absurd speeds.
    let state = autolb::campaign::State::load(&dir).unwrap();
    let file = dir.join(&state.components[0].curve);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut edited = Vec::new();
    let mut rows = 0;
    let mut changed = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells[0].parse::<u32>().is_ok() && rows < 2 {
            let sypd = ["999", "1e300"][rows];
            changed.push((cells[0].to_string(), sypd));
            edited.push(format!("{},{sypd}", cells[0]));
            rows += 1;
        } else if cells[0].parse::<u32>().is_ok() {
            edited.push(cells[..2].join(","));
        } else if line.starts_with("nproc") {
            edited.push("nproc,SYPD".into());
        } else {
            edited.push(line.to_string());
        }
    }
    assert_eq!(rows, 2, "{text}");
    std::fs::write(&file, edited.join("\n") + "\n").unwrap();

    let after = report("after.md");
    // The answer comes from the state: the recommendation reads as before.
    assert_eq!(recommendation(&before), recommendation(&after));
    let curve = state.components[0].curve.display().to_string();
    for (nproc, sypd) in &changed {
        let shown = if *sypd == "999" { "999.00" } else { "1e300" };
        let said = format!("at {nproc} PEs the file has {shown} SYPD, the state ");
        assert!(after.contains(&said), "{said:?} not in\n{after}");
    }
    let note = format!("Note: {curve} disagrees with the campaign's state");
    let head = after.split("\n## ").nth(1).unwrap();
    assert!(
        head.contains(&note),
        "{note:?} not in the recommendation:\n{head}"
    );

    let json: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(&dir)
            .stdout_ok(),
    )
    .unwrap();
    let notes = json["curve_notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].as_str().unwrap().starts_with(&curve), "{notes:?}");
    let text = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!("note: {curve} disagrees")),
        "{text}"
    );
}
