//! The real Cylc 8 drives a campaign with the workflow in assets/cylc, as `autolb example`
//! writes it: the guide's commands run as written, the scheduler survives a SIGKILL and a
//! restart, and a run whose job dies with its process group (a lost node) is run again and
//! recorded once. Each ends where `campaign run` ends on the same campaign file.
//!
//! Needs Cylc 8 and rsync (see [`site`]); without them the tests skip with a
//! message, and `AUTOLB_REQUIRE_CYLC=1` (set by CI) makes them fail instead. Each test has its
//! own HOME, so its own `~/cylc-run`, `global.cylc` and scheduler ports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{autolb, status_json as status};
mod site;

use site::{alive, assert_same_end, cylc_or_skip, kill, reference_status, run_ids, Site};

const GUIDE: &str = "docs/src/campaigns/cylc.md";
const WORKFLOW: &str = "lb";

fn guide() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(GUIDE)).unwrap()
}

/// The fenced blocks of `lang` in `text`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == format!("```{lang}") => current = Some(Vec::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => out.push(current.take().unwrap().join("\n")),
            Some(lines) => lines.push(line),
        }
    }
    out
}

/// The guide's first `sh` block under the heading `heading`.
fn guide_commands(heading: &str) -> String {
    let text = guide();
    let start = text
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("{GUIDE} has no section {heading:?}"));
    blocks(&text[start..], "sh")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{GUIDE}: no sh block under {heading:?}"))
}

/// A model for the tests, written to `root/model.sh`: it notes each start (with the Cylc job
/// running it) and end of a run in `root/marks`, pauses as long as `root/pause/RUN` says
/// (once: the file goes at the first start), then `every` seconds, then runs the workflow's
/// stand-in model.
fn write_model(root: &Path, every: u32) -> PathBuf {
    let model = root.join("model.sh");
    std::fs::create_dir_all(root.join("pause")).unwrap();
    std::fs::write(
        &model,
        format!(
            "#!/bin/sh\nset -e\n\
             echo \"start $AUTOLB_RUN $CYLC_TASK_JOB\" >> '{root}/marks'\n\
             pause='{root}/pause/'\"$AUTOLB_RUN\"\n\
             if [ -f \"$pause\" ]; then s=$(cat \"$pause\"); rm -f \"$pause\"; sleep \"$s\"; fi\n\
             sleep {every}\n\
             stand-in-model > /dev/null\n\
             echo \"end $AUTOLB_RUN\" >> '{root}/marks'\n",
            root = root.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&model, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    model
}

/// The lines of `root/marks`, as (word, run id, Cylc job) triples.
fn marks(root: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(root.join("marks"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace().map(str::to_string);
            (
                w.next().unwrap_or_default(),
                w.next().unwrap_or_default(),
                w.next().unwrap_or_default(),
            )
        })
        .collect()
}

/// How many times each run started and ended.
fn counts(root: &Path) -> BTreeMap<String, (usize, usize)> {
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (word, run, _) in marks(root) {
        let entry = out.entry(run).or_default();
        match word.as_str() {
            "start" => entry.0 += 1,
            "end" => entry.1 += 1,
            other => panic!("unexpected mark {other:?}"),
        }
    }
    out
}

/// `cylc install` of the written example's workflow, then its scheduler in the foreground
/// (`cylc play --no-detach`, its output in `root/play-N.log`) on the campaign in
/// `example/campaign` with the test's model.
fn install_and_play(site: &Site, example: &Path, model: &Path, slots: u32) -> Child {
    let campaign = example.join("campaign");
    crate::common::init(&campaign, &example.join("assets/cylc/campaign.toml"));
    let source = example.join("assets/cylc");
    site.cylc(&[
        "install",
        source.to_str().unwrap(),
        "--workflow-name",
        WORKFLOW,
    ]);
    play(
        site,
        &[
            &format!("CAMPAIGN='{}'", campaign.display()),
            &format!("AUTOLB='{}'", site.root.join("bin/autolb").display()),
            &format!("MODEL='{}'", model.display()),
            &format!("SLOTS={slots}"),
        ],
        1,
    )
}

/// `cylc play WORKFLOW --no-detach` with `--set` for each of `settings`.
fn play(site: &Site, settings: &[&str], n: u32) -> Child {
    let log = std::fs::File::create(site.root.join(format!("play-{n}.log"))).unwrap();
    let mut c = site.command("cylc");
    c.args(["play", WORKFLOW, "--no-detach"]);
    for s in settings {
        c.args(["--set", s]);
    }
    c.stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Waits for the foreground scheduler to end and checks it ended well.
fn wait_success(site: &Site, child: &mut Child) {
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(
                s.success(),
                "cylc play ended with {s}; the scheduler's log ends:\n{}",
                site.log_tail(WORKFLOW)
            );
            return;
        }
        site.check_time(WORKFLOW, "the workflow to end");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Waits until `done(&site)` holds.
fn wait_until(site: &Site, what: &str, done: impl Fn() -> bool) {
    while !done() {
        site.check_time(WORKFLOW, what);
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_guides_commands_run_the_campaign_to_the_end_of_campaign_run() {
    let Some(cylc) = cylc_or_skip() else { return };
    let site = Site::new(&cylc, Duration::from_secs(300));
    let started = Instant::now();
    let commands = guide_commands("Try it on one machine");
    let out = site
        .command("bash")
        .args(["-euo", "pipefail", "-c", &commands])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the guide's commands failed:\n{commands}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // `cylc vip` leaves the scheduler running in the background.
    site.wait_for_scheduler_end(WORKFLOW);
    eprintln!(
        "Cylc ran the guide's campaign in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let log = site.log_tail(WORKFLOW);
    assert!(
        log.contains("Workflow shutting down - AUTOMATIC"),
        "the workflow did not complete:\n{log}"
    );
    let example = site.root.join("lb-example");
    let driven = status(&example.join("campaign"));
    assert_same_end(&driven, &reference_status(&example));
    assert!(example.join("campaign/report.html").is_file());
    // No job needed a second try.
    let jobs = site.run_dir(WORKFLOW).join("log/job");
    for cycle in std::fs::read_dir(&jobs).unwrap().flatten() {
        for task in std::fs::read_dir(cycle.path()).unwrap().flatten() {
            assert!(
                !task.path().join("02").exists(),
                "{} was submitted twice",
                task.path().display()
            );
        }
    }
}

#[test]
fn a_scheduler_killed_mid_campaign_and_played_again_runs_every_run_once() {
    let Some(cylc) = cylc_or_skip() else { return };
    let site = Site::new(&cylc, Duration::from_secs(360));
    let example = site.example();
    let model = write_model(&site.root, 2);
    // Three slots for the campaign's four runs an iteration: an iteration takes two cycles.
    let mut scheduler = install_and_play(&site, &example, &model, 3);
    let in_flight = || {
        counts(&site.root)
            .values()
            .any(|&(started, ended)| started > ended)
    };
    wait_until(&site, "five runs started and one in flight", || {
        counts(&site.root).values().map(|c| c.0).sum::<usize>() >= 5 && in_flight()
    });
    let pid = site.scheduler_pid(WORKFLOW).expect("a running scheduler");
    kill(pid, libc::SIGKILL);
    scheduler.wait().unwrap();
    assert!(!alive(pid));
    // The jobs go on without the scheduler and end while it is down: their messages are lost.
    wait_until(&site, "the runs in flight to end", || !in_flight());
    let killed_at = marks(&site.root).len();
    assert!(
        site.scheduler_pid(WORKFLOW).is_some(),
        "a killed scheduler leaves its contact file"
    );

    // The settings are remembered: a restart names only the workflow.
    let mut scheduler = play(&site, &[], 2);
    wait_success(&site, &mut scheduler);
    let restart_log = site.log(WORKFLOW);
    let driven = status(&example.join("campaign"));
    let runs = counts(&site.root);
    for id in run_ids(&driven) {
        assert_eq!(runs.get(&id), Some(&(1, 1)), "run {id}: (starts, ends)");
    }
    assert_eq!(runs.len(), run_ids(&driven).len(), "{runs:?}");
    assert!(
        marks(&site.root).len() > killed_at,
        "the restarted scheduler ran the rest:\n{restart_log}"
    );
    assert_same_end(&driven, &reference_status(&example));
}

#[test]
fn a_job_killed_with_its_process_group_is_retried_and_its_run_recorded_once() {
    let Some(cylc) = cylc_or_skip() else { return };
    let site = Site::new(&cylc, Duration::from_secs(300));
    let example = site.example();
    let model = write_model(&site.root, 0);
    // The first run of the second lb-iteration waits a minute on its first start: long enough
    // to be seen running and killed.
    let victim = "i01-t00-r1";
    std::fs::write(site.root.join("pause").join(victim), "60").unwrap();
    let mut scheduler = install_and_play(&site, &example, &model, 8);
    wait_until(&site, "the run to start", || {
        counts(&site.root).get(victim).is_some_and(|c| c.0 == 1)
    });
    let job = marks(&site.root)
        .into_iter()
        .find(|(w, r, _)| w == "start" && r == victim)
        .map(|(_, _, job)| job)
        .unwrap();

    // A job that has run for a while: Cylc has heard it start.
    let running = format!("[{job}:submitted] => running");
    wait_until(&site, "Cylc to see the job running", || {
        site.log(WORKFLOW).contains(&running)
    });

    // While it runs, every view says so: the run is running, held by `campaign exec`, and the
    // campaign is a workflow manager's.
    let campaign = example.join("campaign");
    let seen = status(&campaign);
    let run = seen["iterations"][1]["tests"][0]["runs"][0].clone();
    assert_eq!(run["run"], victim);
    assert_eq!(run["state"], "running", "{run}");
    assert!(
        run["job"]
            .as_str()
            .is_some_and(|j| j.starts_with("exec pid ")),
        "{run}"
    );
    assert!(seen["counts"]["running"].as_u64().unwrap() >= 1);
    let text = autolb()
        .args(["campaign", "status"])
        .arg(&campaign)
        .env("COLUMNS", "100")
        .stdout_ok();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("campaign: workflow manager · iteration 1 · "),
        "{text}"
    );
    assert!(!first.contains(" 0 running"), "{text}");
    assert!(
        text.contains("driver: workflow manager starts the runs"),
        "{text}"
    );

    // A node failure: the job's whole process group dies at once.
    let pid = site.job_pid(WORKFLOW, &job);
    kill(-pid, libc::SIGKILL);
    wait_success(&site, &mut scheduler);

    let runs = counts(&site.root);
    assert_eq!(runs.get(victim), Some(&(2, 1)), "{runs:?}");
    let driven = status(&campaign);
    for id in run_ids(&driven).iter().filter(|id| *id != victim) {
        assert_eq!(runs.get(id), Some(&(1, 1)), "run {id}: (starts, ends)");
    }
    // Cylc submitted the job again; the second try recorded the run, the first never did.
    let (cycle_task, _) = job.rsplit_once('/').unwrap();
    let logs = site.run_dir(WORKFLOW).join("log/job").join(cycle_task);
    let first_out = std::fs::read_to_string(logs.join("01/job.out")).unwrap_or_default();
    let second_out = std::fs::read_to_string(logs.join("02/job.out")).unwrap();
    assert!(!first_out.contains("recorded"), "{first_out}");
    assert!(
        second_out.contains(&format!("recorded {victim}: ")),
        "{second_out}"
    );
    assert_same_end(&driven, &reference_status(&example));
}

#[test]
fn the_guides_platform_lines_are_read_by_cylc_and_the_workflow_validates_on_them() {
    let Some(cylc) = cylc_or_skip() else { return };
    let site = Site::new(&cylc, Duration::from_secs(60));
    let text = guide();
    let ini = blocks(&text, "ini");
    let platforms = ini
        .iter()
        .find(|b| b.starts_with("[platforms]"))
        .expect("the guide's global.cylc lines");
    let runtime = ini
        .iter()
        .find(|b| b.starts_with("[runtime]"))
        .expect("the guide's flow.cylc lines");
    let global = site.home.join(".cylc/flow/global.cylc");
    let mut conf = std::fs::read_to_string(&global).unwrap();
    conf.push_str(platforms);
    std::fs::write(&global, conf).unwrap();
    for (platform, runner) in [("hpc_slurm", "slurm"), ("hpc_pbs", "pbs")] {
        let item = format!("[platforms][{platform}]job runner");
        let out = site.cylc(&["config", "-i", &item]);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), runner);
    }

    let example = site.example();
    let flow = example.join("assets/cylc/flow.cylc");
    let mut workflow = std::fs::read_to_string(&flow).unwrap();
    workflow.push_str(runtime);
    std::fs::write(&flow, workflow).unwrap();
    let dir = example.join("assets/cylc");
    let dir = dir.to_str().unwrap();
    let campaign = format!("CAMPAIGN='{}'", example.join("campaign").display());
    let set = ["--set", &campaign, "--set", "PLATFORM='hpc_pbs'"];
    let out = site.cylc(&[&["validate", dir][..], &set].concat());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Valid for cylc-8"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let item = |name: &str| {
        let out = site.cylc(&[&["config", "-i", name, dir][..], &set].concat());
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(item("[runtime][run_01]platform"), "hpc_pbs");
    assert_eq!(item("[runtime][run_01]execution time limit"), "PT2H");
    assert!(item("[runtime][run_01][directives]").contains("--ntasks = 672"));
    // Without a campaign directory the workflow says what to set.
    let out = site
        .command("cylc")
        .args(["validate", dir])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("set CAMPAIGN to the campaign directory"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
