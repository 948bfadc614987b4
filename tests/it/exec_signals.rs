//! `campaign exec` under signals: a cancelled job (SIGTERM) ends the command's whole tree,
//! model grandchildren included, before the claim is released; after a SIGKILL of `exec`, a
//! retry never runs the model beside the orphan of the killed attempt, and an orphan that
//! finished with complete output is recorded, not run again.
//!
//! The job script starts the "model" as a child of its own (so the model is a grandchild of
//! the process `exec` starts) and, told to stop, waits for it; the model writes a line to
//! `events` when it starts and when it ends.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::processes::{eventually, is_zombie, processes_where, wait_with_timeout};
use crate::common::{autolb, autolb_path, campaign_file, init};
use autolb::campaign::claim::{claim_lock_path, claim_path, CLAIM_VAR};
use autolb::campaign::liveness::{probe, Probe};
use autolb::campaign::{RunState, State};

const RUN_ID: &str = "i00-t00-r1";
const RUN: [&str; 6] = ["--iteration", "0", "--test", "0", "--repetition", "1"];

/// The job: starts the model (`$2`, given the marks directory `$1` and the rest) in the
/// background and waits for it; a signal makes it wait for the model to end and exit with
/// the model's status (so a model that finishes all the same is an exit 0).
const JOB: &str = r#"marks="$1"; model="$2"; shift 2
trap 'wait "$child"; exit $?' TERM INT HUP
sh "$model" "$marks" "$@" &
child=$!
wait "$child"
"#;

/// A model that stops when told to, taking a second to do so; else it works while the file
/// `hold` exists (at most 30 s), then writes the stand-in model's timing output (`$2` is
/// autolb, `$3` the campaign).
const MODEL_STOPS: &str = r#"marks="$1"
trap 'sleep 1; echo "end $$ stopped" >> "$marks/events"; exit 1' TERM INT HUP
echo $$ > "$marks/model.pid"
echo "start $$" >> "$marks/events"
i=0
while [ -e "$marks/hold" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$2" simulate --campaign "$3" --run "$AUTOLB_RUN" > /dev/null
echo "end $$ finished" >> "$marks/events"
"#;

/// A model that ignores the signal and finishes its work: two seconds, then the stand-in
/// model's complete timing output (`$2` is autolb, `$3` the campaign).
const MODEL_FINISHES: &str = r#"marks="$1"
trap '' TERM INT HUP
echo $$ > "$marks/model.pid"
echo "start $$" >> "$marks/events"
sleep 2
"$2" simulate --campaign "$3" --run "$AUTOLB_RUN" > /dev/null
echo "end $$ finished" >> "$marks/events"
"#;

struct Setup {
    dir: PathBuf,
    marks: PathBuf,
    job: PathBuf,
}

/// An externally driven campaign with one run, and the job and model scripts.
fn setup(tmp: &Path, model: &str) -> Setup {
    let file = campaign_file(tmp, "IFS", "NEMO", 1, 1);
    let dir = tmp.join("camp");
    init(&dir, &file);
    let marks = tmp.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    std::fs::write(marks.join("hold"), "").unwrap();
    let job = tmp.join("job.sh");
    std::fs::write(&job, JOB).unwrap();
    std::fs::write(tmp.join("model.sh"), model).unwrap();
    Setup { dir, marks, job }
}

fn spawn_exec(s: &Setup) -> Child {
    let model = s.job.with_file_name("model.sh");
    autolb()
        .args(["campaign", "exec"])
        .arg(&s.dir)
        .args(RUN)
        .arg("--")
        .arg("sh")
        .arg(&s.job)
        .arg(&s.marks)
        .arg(&model)
        .arg(autolb_path())
        .arg(&s.dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn events(s: &Setup) -> Vec<String> {
    std::fs::read_to_string(s.marks.join("events"))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn starts(s: &Setup) -> usize {
    events(s).iter().filter(|l| l.starts_with("start")).count()
}

fn model_pid(s: &Setup) -> i32 {
    std::fs::read_to_string(s.marks.join("model.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    !is_zombie(pid)
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

fn run_state(dir: &Path) -> RunState {
    let state = State::load(dir).unwrap();
    let first = state.run_positions().next().unwrap();
    state.run(first).state
}

/// The claims (distinct tokens) whose processes are alive in this campaign's run: more than
/// one would be two attempts of one run at once.
fn attempts_alive(dir: &Path) -> usize {
    let run_dir = format!("AUTOLB_RUN_DIR={}/", dir.display());
    let mut tokens: Vec<String> = processes_where(&|v| v.starts_with(&run_dir))
        .into_iter()
        .filter_map(|(pid, _)| {
            crate::common::processes::environ(pid)
                .into_iter()
                .find_map(|e| e.strip_prefix(&format!("{CLAIM_VAR}=")).map(str::to_string))
        })
        .collect();
    tokens.sort();
    tokens.dedup();
    tokens.len()
}

/// [`setup`], then `exec` of the run, once its model has started: the `exec` and the model's
/// pid.
fn exec_with_model_started(s: &Setup) -> (Child, i32) {
    let exec = spawn_exec(s);
    assert!(eventually(Duration::from_secs(30), &mut || starts(s) == 1));
    (exec, model_pid(s))
}

#[test]
fn sigterm_ends_the_model_grandchild_before_exec_exits_and_only_then_releases_the_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let s = setup(tmp.path(), MODEL_STOPS);
    let (mut exec, model) = exec_with_model_started(&s);
    assert!(alive(model));
    signal(&exec, libc::SIGTERM);
    let claim = claim_path(&s.dir, RUN_ID);
    let lock = claim_lock_path(&s.dir, RUN_ID);
    let mut samples_while_alive = 0;
    let mut second_refused = false;
    let status = loop {
        // Read in this order: a model seen alive was alive when the claim was looked at.
        let claim_there = claim.exists() && probe(&lock) == Probe::Held;
        let model_alive = alive(model);
        if let Some(status) = exec.try_wait().unwrap() {
            break status;
        }
        if model_alive {
            samples_while_alive += 1;
            assert!(claim_there, "the claim was released while the model ran");
            if !second_refused {
                // A retry meanwhile is busy and starts nothing.
                let out = spawn_exec(&s).wait_with_output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(3), "{stderr}");
                assert!(stderr.contains("busy: run i00-t00-r1"), "{stderr}");
                second_refused = true;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = exec.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("stopped by signal 15"), "{stderr}");
    assert!(!alive(model), "the model outlived exec");
    assert!(
        samples_while_alive > 0 && second_refused,
        "the model ended at once"
    );
    // The signal reached the grandchild: its handler ran.
    assert!(
        events(&s).iter().any(|l| l.ends_with("stopped")),
        "{:?}",
        events(&s)
    );
    assert!(!claim.exists(), "released once the tree is gone");
    assert_eq!(starts(&s), 1);
    assert_eq!(run_state(&s.dir), RunState::Pending, "nothing recorded");
}

#[test]
fn a_retry_after_a_sigkilled_exec_waits_for_the_orphan_and_never_runs_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let s = setup(tmp.path(), MODEL_STOPS);
    let (mut exec, orphan) = exec_with_model_started(&s);
    exec.kill().unwrap(); // SIGKILL
    exec.wait().unwrap();
    // The retry, while the orphan is still being stopped (it takes a second).
    let started = Instant::now();
    let mut retry = spawn_exec(&s);
    let mut most = 0;
    while retry.try_wait().unwrap().is_none() {
        most = most.max(attempts_alive(&s.dir));
        assert!(
            most <= 1,
            "two attempts of one run at once: {:?}",
            events(&s)
        );
        if starts(&s) == 2 {
            assert!(
                !alive(orphan),
                "the retry started the model beside the orphan"
            );
            // The retry's model may finish now.
            let _ = std::fs::remove_file(s.marks.join("hold"));
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the retry did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = retry.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("recovered the claim on run i00-t00-r1"),
        "{stderr}"
    );
    assert_eq!(starts(&s), 2, "the stopped attempt and the retry");
    assert_eq!(most, 1, "the sampling saw the run");
    assert_eq!(run_state(&s.dir), RunState::Done);
}

#[test]
fn a_retry_records_what_the_orphan_of_a_sigkilled_exec_finished_instead_of_running_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let s = setup(tmp.path(), MODEL_FINISHES);
    let (mut exec, _) = exec_with_model_started(&s);
    exec.kill().unwrap(); // SIGKILL, while the model works
    exec.wait().unwrap();
    let mut retry = spawn_exec(&s);
    let status = wait_with_timeout(&mut retry, Duration::from_secs(60));
    let out = retry.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("was finished by an earlier attempt whose exec died"),
        "{stderr}"
    );
    assert!(stdout.contains("recorded i00-t00-r1: "), "{stdout}");
    assert_eq!(starts(&s), 1, "not run again: {:?}", events(&s));
    assert!(events(&s).iter().any(|l| l.ends_with("finished")));
    assert_eq!(run_state(&s.dir), RunState::Done);
    assert!(!claim_path(&s.dir, RUN_ID).exists());
    assert!(!claim_lock_path(&s.dir, RUN_ID).exists());
}
