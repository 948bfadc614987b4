//! The loader's tests: campaign directories and plain directories of runs read into the
//! table, half-written and damaged output, the driver's liveness.

use super::*;

fn comps() -> Vec<LoaderComponent> {
    vec![
        LoaderComponent {
            name: "IFS".into(),
            timing_name: "ATMIFS".into(),
        },
        LoaderComponent {
            name: "NEMO".into(),
            timing_name: "oceanx".into(),
        },
    ]
}

#[test]
fn an_ecearth4_run_directory_is_one_run_not_one_per_leg() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run1");
    for leg in ["log/001", "log/002"] {
        std::fs::create_dir_all(run.join(leg)).unwrap();
        std::fs::write(run.join(leg).join("load_balancing_info.txt"), "").unwrap();
        std::fs::write(run.join(leg).join("timing.log"), "").unwrap();
    }
    let mut found = Vec::new();
    find_run_dirs(tmp.path(), 0, &mut found);
    assert_eq!(found, vec![run]);
}

#[test]
fn positions_and_names() {
    let root = Path::new("/c");
    assert_eq!(
        campaign_position(root, Path::new("/c/iter-02/test-03/rep-1")),
        Some((2, 3, 1))
    );
    assert_eq!(campaign_position(root, Path::new("/c/other")), None);
    assert_eq!(
        nproc_from_dir_name(Path::new("/x/240IFS_144NEMO"), &comps()),
        vec![240, 144]
    );
    assert_eq!(
        nproc_from_dir_name(Path::new("/x/run"), &comps()),
        vec![0, 0]
    );
}

fn simulate_into(dir: &Path, ifs: u32, nemo: u32) {
    use autolb::sim::{builtin_curve, simulate, SimComponent, SimRun, SimSettings};
    let comp = |name: &str, nproc| SimComponent {
        name: name.into(),
        nproc,
        curve: builtin_curve(name).unwrap(),
        threads: 1,
    };
    let run = SimRun::new(
        &SimSettings::default(),
        vec![comp("ATMIFS", ifs), comp("oceanx", nemo)],
        7,
    );
    simulate(&run, dir).unwrap();
}

#[test]
fn campaign_runs_finished_but_unrecorded_are_measured_once_and_half_written_ones_pend() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let mut loader = Loader::new(dir.clone(), comps(), Some(2700.0), 0.5);
    let before = loader.load();
    assert_eq!(before.state, "running");
    assert_eq!(
        before.rows.len(),
        4,
        "three predicted tests and the original"
    );
    assert!(before.rows.iter().all(|r| r.sypd.is_none()));

    // Test 0's first repetition finished (files complete), not recorded by any driver.
    let first = &before.rows[0];
    let run_dir = first.runs[0].run_dir.clone();
    simulate_into(&run_dir, first.nproc[0], first.nproc[1]);
    // Test 1's first repetition is still writing: a third of each file.
    let second = &before.rows[1];
    let half_dir = second.runs[0].run_dir.clone();
    let staging = tmp.path().join("staging");
    simulate_into(&staging, second.nproc[0], second.nproc[1]);
    std::fs::create_dir_all(&half_dir).unwrap();
    for e in std::fs::read_dir(&staging).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        std::fs::write(half_dir.join(e.file_name()), &bytes[..bytes.len() / 3]).unwrap();
    }

    // Complete on disk, but the watcher has not seen it settle: not done yet.
    let unsettled = loader.load();
    assert_eq!(unsettled.rows[0].runs[0].state, "pending");
    assert_eq!(unsettled.rows[0].sypd, None);
    assert_eq!(unsettled.pending_runs, 2);
    // The watcher asks once the files stayed unchanged for the documented polls.
    assert!(loader.is_complete(&run_dir));
    assert!(!loader.is_complete(&half_dir));

    let view = loader.load();
    assert_eq!(view.error, None);
    let row = &view.rows[0];
    assert_eq!(row.runs[0].state, "done");
    let sypd = row.sypd.expect("measured by the app");
    assert!(sypd > 5.0 && sypd < 40.0, "{sypd}");
    assert_eq!(view.rows[1].runs[0].state, "pending");
    assert_eq!(view.rows[1].sypd, None);
    assert_eq!(view.pending_runs, 1);
    assert_eq!(
        view.best,
        Some(0),
        "the only measured configuration is the best"
    );
    assert!(loader.is_complete(&run_dir));
    assert!(!loader.is_complete(&half_dir));
    assert!(
        !loader.is_complete(&dir),
        "the campaign root never completes"
    );

    // Loading again does not count the run twice.
    let again = loader.load();
    assert_eq!(again.rows[0].runs.len(), view.rows[0].runs.len());
    assert_eq!(again.rows[0].sypd, Some(sypd));
}

#[test]
fn the_best_line_takes_the_means_campaign_status_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    autolb::campaign::drive(
        &dir,
        &autolb::campaign::DriveOptions::default(),
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    let (status, _) = autolb::campaign::status_with_driver(&dir).unwrap();
    let best = status.best.clone().expect("the demo ends with a best");
    let view = Loader::new(dir.clone(), comps(), Some(2700.0), 0.5).load();
    assert_eq!(view.answer, autolb::campaign::Answer::of(&status));
    let row = &view.rows[view.best.unwrap()];
    assert_eq!((row.iteration, row.test), (best.iteration, best.test));
}

#[test]
fn a_plain_directory_of_runs_fills_rows_by_position_or_name() {
    let tmp = tempfile::tempdir().unwrap();
    simulate_into(&tmp.path().join("iter-01/test-02/rep-1"), 240, 144);
    simulate_into(&tmp.path().join("iter-01/test-02/rep-2"), 240, 144);
    simulate_into(&tmp.path().join("288IFS_192NEMO"), 288, 192);
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let mut loader = Loader::new(tmp.path().to_path_buf(), comps(), Some(2700.0), 0.5);
    let unsettled = loader.load();
    assert_eq!(
        unsettled.pending_runs, 3,
        "nothing counts before it settled"
    );
    assert!(unsettled.rows.iter().all(|r| r.sypd.is_none()));
    for d in [
        "iter-01/test-02/rep-1",
        "iter-01/test-02/rep-2",
        "288IFS_192NEMO",
    ] {
        assert!(loader.is_complete(&tmp.path().join(d)), "{d}");
    }
    let view = loader.load();
    assert_eq!(view.rows.len(), 2, "{:?}", view.rows);
    let by_name = view
        .rows
        .iter()
        .find(|r| r.nproc == vec![288, 192])
        .unwrap();
    assert!(
        by_name.chsy.is_some(),
        "PEs from the directory name give CHSY"
    );
    let by_pos = view
        .rows
        .iter()
        .find(|r| r.iteration == 1 && r.test == 2)
        .unwrap();
    assert_eq!(by_pos.runs.len(), 2, "repetitions of one test share a row");
    assert_eq!(by_pos.state, "done 2/2");
    assert!(view.best.is_some());
    assert_eq!(view.state, "idle");
}

#[test]
fn a_settled_run_directory_the_reader_refuses_is_unreadable_not_incoming_for_ever() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("240IFS_144NEMO");
    std::fs::create_dir_all(&run).unwrap();
    let table = ",nproc,number_ts,exec_time,waiting_time,interpo_time,SYPD,CHPSY,cpl_cost\n\
                 ATMIFS,240,225,103.0,35.0,2.2,16.0,573.0,19.3\n\
                 oceanx,144,225,126.5,13.6,0.1,13.0,263.9,2.6\n\
                 Coupled,384,225,140.4,185.2,5.4,11.8,1075.7,0.2\n";
    std::fs::write(
        run.join("table.csv"),
        table.replace("nproc,number_ts", "nproc,numbr_ts"),
    )
    .unwrap();
    let mut loader = Loader::new(tmp.path().to_path_buf(), comps(), Some(2700.0), 0.5);
    let unsettled = loader.load();
    assert_eq!(unsettled.pending_runs, 1, "before it settled: incoming");
    assert_eq!(unsettled.rows[0].runs[0].state, "incoming");
    // The watcher asks once the files stayed unchanged for its settling polls.
    assert!(!loader.is_complete(&run));
    let view = loader.load();
    let r = &view.rows[0].runs[0];
    assert_eq!(r.state, "unreadable");
    let note = r.note.as_deref().unwrap();
    assert!(
        note.starts_with("unreadable: ") && note.contains("header"),
        "{note}"
    );
    assert_eq!(view.pending_runs, 0);
    assert!(
        view.rows[0].state.starts_with("unreadable"),
        "{}",
        view.rows[0].state
    );
    // Repaired: read again once it settles, and complete.
    std::fs::write(run.join("table.csv"), table).unwrap();
    assert!(loader.is_complete(&run));
    assert_eq!(loader.load().rows[0].runs[0].state, "done");
}

#[test]
fn a_sim_campaigns_running_runs_show_stopped_once_its_driver_is_lost() {
    use autolb::campaign::heartbeat::Heartbeat;
    use autolb::campaign::{RunState, State};
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let dir = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let mut state = State::load(&dir).unwrap();
    state.run_mut((0, 0, 0)).state = RunState::Running;
    state.save(&dir).unwrap();
    let mut loader = Loader::new(dir.clone(), comps(), Some(2700.0), 0.5);
    // A live driver (this process, holding the driver's lock): its run is running.
    let lock = autolb::campaign::liveness::HeldLock::take(
        &dir.join(autolb::campaign::heartbeat::DRIVER_LOCK_FILE),
        Duration::ZERO,
    )
    .unwrap()
    .unwrap();
    Heartbeat::of_this_process().save(&dir).unwrap();
    let mut view = loader.load();
    assert_eq!(view.executor.as_deref(), Some("sim"));
    // The demo's first iteration runs each test once.
    assert_eq!(view.rows[0].state, "running");
    assert_eq!(view.rows[0].runs[0].state, "running");
    assert_eq!(view.progress.as_ref().unwrap().running, 1);
    // Its lock held, it stays alive however old its beat.
    let later = view.driver.as_ref().unwrap().at + Duration::from_secs(30);
    view.driver.as_mut().unwrap().recheck(later, &dir);
    view.settle_driver(later);
    assert_eq!(view.rows[0].runs[0].state, "running");
    // It dies, with nothing new to load: the next tick asks its lock and shows the run
    // stopped with it, as `campaign status` would.
    drop(lock);
    view.driver.as_mut().unwrap().recheck(later, &dir);
    view.settle_driver(later);
    assert_eq!(view.rows[0].state, "stopped with the driver");
    assert_eq!(view.rows[0].runs[0].state, "stopped with the driver");
    assert_eq!(view.rows[1].state, "pending");
    let p = view.progress.as_ref().unwrap();
    assert_eq!((p.running, p.stopped_with_driver), (0, 1));
    assert!(
        p.counts().text().contains("0 running")
            && p.counts().text().contains("1 stopped with the driver")
    );
    // A load after the driver died reads it lost (its pid is gone) and shows the same.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    Heartbeat {
        pid: dead,
        ..Heartbeat::of_this_process()
    }
    .save(&dir)
    .unwrap();
    let view = loader.load();
    assert!(matches!(
        view.driver.as_ref().unwrap().state,
        autolb::campaign::DriverState::Lost { .. }
    ));
    assert_eq!(view.rows[0].state, "stopped with the driver");
    assert_eq!(view.rows[0].runs[0].state, "stopped with the driver");
    assert_eq!(view.progress.as_ref().unwrap().stopped_with_driver, 1);
    // The state file still has it running: the app only reads.
    let state = State::load(&dir).unwrap();
    assert_eq!(state.run((0, 0, 0)).state, RunState::Running);
}

#[test]
fn a_run_a_workflow_managers_exec_holds_shows_as_running() {
    use autolb::campaign::{claim_run, ClaimResult, State};
    let tmp = tempfile::tempdir().unwrap();
    let dir = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    // No executor: a workflow manager runs the campaign through `campaign exec`.
    let mut state = State::load(&dir).unwrap();
    state.executor = None;
    state.save(&dir).unwrap();
    let mut loader = Loader::new(dir.clone(), comps(), Some(2700.0), 0.5);
    assert_eq!(loader.load().progress.unwrap().running, 0);
    let claimed = claim_run(&dir, 0, 0, 1, std::time::Duration::from_secs(5)).unwrap();
    let ClaimResult::Claimed { claim, .. } = claimed else {
        panic!("the first run is waiting and unclaimed")
    };
    let view = loader.load();
    assert_eq!(view.executor.as_deref(), Some("external"));
    assert_eq!(view.rows[0].state, "running");
    assert_eq!(view.rows[0].runs[0].state, "running");
    assert!(
        view.rows[0].runs[0]
            .job
            .as_deref()
            .is_some_and(|j| j.starts_with("exec pid ")),
        "{:?}",
        view.rows[0].runs[0].job
    );
    assert_eq!(view.progress.as_ref().unwrap().running, 1);
    assert_eq!(view.rows[1].state, "pending");
    // Released without a record (the job was cancelled): queued again.
    drop(claim);
    assert_eq!(loader.load().rows[0].runs[0].state, "pending");
}

#[test]
fn the_driver_is_read_from_the_heartbeat_and_stalls_on_an_old_state() {
    use autolb::campaign::heartbeat::Heartbeat;
    use autolb::campaign::DriverState;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let dir = autolb::campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let mut loader = Loader::new(dir.clone(), comps(), Some(2700.0), 0.5);
    let driver = |l: &mut Loader| l.load().driver.map(|d| d.state);
    assert_eq!(
        driver(&mut loader),
        Some(DriverState::None),
        "right after init"
    );
    let _lock = autolb::campaign::liveness::HeldLock::take(
        &dir.join(autolb::campaign::heartbeat::DRIVER_LOCK_FILE),
        Duration::ZERO,
    )
    .unwrap()
    .unwrap();
    Heartbeat::of_this_process().save(&dir).unwrap();
    assert!(matches!(
        driver(&mut loader),
        Some(DriverState::Running { .. })
    ));
    let old = SystemTime::now() - Duration::from_secs(40 * 60);
    let state = std::fs::File::options()
        .write(true)
        .open(dir.join(STATE_FILE))
        .unwrap();
    state.set_modified(old).unwrap();
    match driver(&mut loader) {
        Some(DriverState::Stalled { idle_s, .. }) => {
            assert!((39 * 60..=41 * 60).contains(&idle_s), "{idle_s}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn directories_named_for_their_configuration_sort_by_pes_and_show_their_names() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing/ecearth3/lucia_lite");
    let comps = comps();
    let mut loader = Loader::new(dir.clone(), comps, None, 0.5);
    // The watcher confirms each run once its files settled (here: at once, they are
    // fixtures); the two directories named for other PEs than their tables hold never count
    // as complete (see below).
    let mislabelled = ["960IFS_411NEMO", "1008IFS_411NEMO"];
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let named_wrong = mislabelled.iter().any(|m| e.file_name() == *m);
        assert_eq!(
            loader.is_complete(&e.path()),
            !named_wrong,
            "{}",
            e.path().display()
        );
    }
    let view = loader.load();
    assert_eq!(view.rows.len(), 30);
    let totals: Vec<u32> = view.rows.iter().map(|r| r.nproc.iter().sum()).collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    assert_eq!(view.rows[0].label.as_deref(), Some("48IFS_48NEMO"));
    let last = view.rows.last().unwrap();
    assert_eq!(last.nproc, vec![480, 1632]);
    assert_eq!(last.label.as_deref(), Some("480IFS_1632NEMO"));
    // Every run is complete, but two directories are named for other PEs than their output
    // holds (960IFS_411NEMO and 1008IFS_411NEMO: the tables say oceanx ran on 144): their
    // readings are refused, not shown as another configuration's.
    let (refused, done): (Vec<_>, Vec<_>) = view
        .rows
        .iter()
        .partition(|r| r.label.as_deref().is_some_and(|l| mislabelled.contains(&l)));
    let not_done: Vec<_> = done
        .iter()
        .filter(|r| r.state != "done")
        .map(|r| (r.label.clone(), r.state.clone()))
        .collect();
    assert!(not_done.is_empty(), "complete runs: {not_done:?}");
    assert_eq!(refused.len(), 2);
    assert!(refused.iter().all(|r| r.state != "done"));
}
