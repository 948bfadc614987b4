use super::*;

fn demo(tmp: &Path) -> (PathBuf, State) {
    let dir = crate::campaign::demo::init_demo(tmp, Some(0.0)).unwrap();
    let state = State::load(&dir).unwrap();
    (dir, state)
}

fn beat_at(dir: &Path, pid: u32, host: &str, beat_ago: u64, ended: bool) -> SystemTime {
    let now = SystemTime::now();
    let now_s = unix_seconds(now);
    Heartbeat {
        pid,
        host: host.into(),
        started: now_s - beat_ago - 100,
        beat: now_s - beat_ago,
        ended: ended.then(|| Ended {
            at: now_s - beat_ago,
            how: "stopped".into(),
        }),
    }
    .save(dir)
    .unwrap();
    now
}

#[test]
fn no_heartbeat_is_no_driver() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    let s = driver_state_of(&state, &dir, SystemTime::now());
    assert_eq!(s, DriverState::None);
    assert!(!s.alive());
    assert_eq!(s.text(&dir), "no driver running");
}

/// The driver's lock, as a live driver holds it.
fn hold(dir: &Path) -> HeldLock {
    HeldLock::take(&dir.join(DRIVER_LOCK_FILE), Duration::ZERO)
        .unwrap()
        .unwrap()
}

#[test]
fn a_fresh_beat_of_a_live_process_is_running() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    let _lock = hold(&dir);
    let now = beat_at(&dir, std::process::id(), &host_name(), 2, false);
    let s = driver_state_of(&state, &dir, now);
    assert_eq!(
        s,
        DriverState::Running {
            pid: std::process::id(),
            host: host_name(),
            seen_s: 2
        }
    );
    assert!(s.alive());
    assert_eq!(s.last_seen_s(), Some(2));
    assert_eq!(
        s.text(&dir),
        format!("running (driver pid {}, seen 2 s ago)", std::process::id())
    );
}

#[test]
fn another_hosts_beat_is_lost_once_this_host_saw_it_unchanged_whatever_its_date() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    // Dated a year ahead by that host's clock: its date decides nothing.
    let year = 365 * 86_400;
    let t0 = SystemTime::now();
    Heartbeat {
        pid: 4242,
        host: "some-other-node".into(),
        started: unix_seconds(t0) + year,
        beat: unix_seconds(t0) + year,
        ended: None,
    }
    .save(&dir)
    .unwrap();
    let s = driver_state_of(&state, &dir, t0);
    assert!(s.alive(), "first seen now: {s:?}");
    let s = driver_state_of(&state, &dir, t0 + Duration::from_secs(40));
    assert_eq!(
        s,
        DriverState::Lost {
            pid: 4242,
            host: "some-other-node".into(),
            gone_s: 40
        }
    );
    assert!(!s.alive());
    let text = s.text(&dir);
    assert!(
        text.starts_with("driver lost (pid 4242 on some-other-node gone 40 s ago; runs may still be queued; resume with autolb campaign run "),
        "{text}"
    );
    // Dated a year back, as a clock behind would: a change seen now, so alive.
    let t1 = t0 + Duration::from_secs(41);
    Heartbeat {
        pid: 4242,
        host: "some-other-node".into(),
        started: unix_seconds(t0) - year,
        beat: unix_seconds(t0) - year,
        ended: None,
    }
    .save(&dir)
    .unwrap();
    assert!(driver_state_of(&state, &dir, t1).alive());
    // A lock held (a file system whose locks reach across hosts) keeps it alive.
    let _lock = hold(&dir);
    assert!(driver_state_of(&state, &dir, t1 + Duration::from_secs(60)).alive());
}

#[test]
fn a_heartbeat_deleted_under_a_driver_holding_its_lock_is_a_running_driver() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    let lock = hold(&dir);
    assert!(!dir.join(HEARTBEAT_FILE).exists());
    assert_eq!(
        driver_state_of(&state, &dir, SystemTime::now()).name(),
        "running"
    );
    drop(lock);
    assert_eq!(
        driver_state_of(&state, &dir, SystemTime::now()),
        DriverState::None
    );
}

#[test]
fn a_beat_on_this_host_is_alive_by_the_lock_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    // This process is alive, but holds no lock: a driver that died, its pid reused.
    let now = beat_at(&dir, std::process::id(), &host_name(), 1, false);
    let s = driver_state_of(&state, &dir, now);
    assert!(matches!(s, DriverState::Lost { gone_s: 1, .. }), "{s:?}");
    // A driver in another PID namespace (pid 1 there), or stopped for a minute: alive.
    Heartbeat {
        pid: 1,
        ..Heartbeat::of_this_process()
    }
    .save(&dir)
    .unwrap();
    let lock = hold(&dir);
    let later = SystemTime::now() + Duration::from_secs(60);
    let s = driver_state_of(&state, &dir, later);
    assert!(s.alive(), "{s:?}");
    assert_eq!(s.rechecked(&dir), s);
    assert!(
        s.text(&dir)
            .contains("holds its lock, but has not beaten for"),
        "{}",
        s.text(&dir)
    );
    drop(lock);
    assert_eq!(s.rechecked(&dir).name(), "lost");
    assert_eq!(driver_state_of(&state, &dir, later).name(), "lost");
}

#[test]
fn an_ended_heartbeat_is_no_driver_and_a_finished_campaign_is_done() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = demo(tmp.path());
    let now = beat_at(&dir, std::process::id(), &host_name(), 1, true);
    assert_eq!(driver_state_of(&state, &dir, now), DriverState::None);
    state.cancelled = true;
    let s = driver_state_of(&state, &dir, now);
    assert_eq!(s, DriverState::Done);
    assert_eq!(s.view().state, "done");
}

#[test]
fn queued_runs_and_nothing_moving_for_a_quarter_hour_is_stalled() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    // The state was saved 40 minutes ago as seen from `now`; the driver still beats.
    let _lock = hold(&dir);
    let later = SystemTime::now() + Duration::from_secs(40 * 60);
    Heartbeat {
        beat: unix_seconds(later) - 1,
        ..Heartbeat::of_this_process()
    }
    .save(&dir)
    .unwrap();
    let s = driver_state_of(&state, &dir, later);
    match &s {
        DriverState::Stalled { idle_s, seen_s, .. } => {
            assert!((39 * 60..=41 * 60).contains(idle_s), "{idle_s}");
            assert_eq!(*seen_s, 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(s.alive());
    assert!(
        s.text(&dir).contains("no progress for 40 min"),
        "{}",
        s.text(&dir)
    );
    // Ten minutes is not a stall.
    let sooner = SystemTime::now() + Duration::from_secs(10 * 60);
    Heartbeat {
        beat: unix_seconds(sooner),
        ..Heartbeat::of_this_process()
    }
    .save(&dir)
    .unwrap();
    assert!(matches!(
        driver_state_of(&state, &dir, sooner),
        DriverState::Running { .. }
    ));
}

#[test]
fn a_running_state_ages_into_lost() {
    let s = DriverState::Running {
        pid: 7,
        host: "h".into(),
        seen_s: 2,
    };
    assert_eq!(s.aged(Duration::from_secs(3)).last_seen_s(), Some(5));
    assert!(s.aged(Duration::from_secs(3)).alive());
    assert_eq!(
        s.aged(Duration::from_secs(8)),
        DriverState::Lost {
            pid: 7,
            host: "h".into(),
            gone_s: 10
        }
    );
    assert_eq!(
        DriverState::Done.aged(Duration::from_secs(60)),
        DriverState::Done
    );
    // A part of a second counts as one: never younger than a new reading would say.
    assert_eq!(s.aged(Duration::from_millis(7_100)).name(), "lost");
}

#[test]
fn only_another_hosts_driver_ages_into_lost_and_a_recheck_asks_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let running = |host: String| DriverState::Running {
        pid: 7,
        host,
        seen_s: 3,
    };
    let here = running(host_name());
    assert!(
        here.aged(Duration::from_secs(60)).alive(),
        "its lock decides"
    );
    let lock = hold(tmp.path());
    assert_eq!(here.rechecked(tmp.path()), here);
    drop(lock);
    assert_eq!(
        here.rechecked(tmp.path()),
        DriverState::Lost {
            pid: 7,
            host: host_name(),
            gone_s: 3
        }
    );
    let afar = running("some-other-node".into());
    assert_eq!(
        afar.rechecked(tmp.path()),
        afar,
        "another host's lock may not be seen"
    );
}

#[test]
fn beating_writes_beats_and_marks_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state) = demo(tmp.path());
    let beating = Beating::start(&dir).unwrap();
    let first = Heartbeat::load(&dir).unwrap();
    assert_eq!(first.pid, std::process::id());
    assert_eq!(first.ended, None);
    assert!(driver_state_of(&state, &dir, SystemTime::now()).alive());
    std::thread::sleep(BEAT_INTERVAL + Duration::from_millis(1200));
    let later = Heartbeat::load(&dir).unwrap();
    assert!(later.beat > first.beat, "{first:?} then {later:?}");
    beating.end("stopped");
    let end = Heartbeat::load(&dir).unwrap();
    assert_eq!(end.ended.as_ref().map(|e| e.how.as_str()), Some("stopped"));
    assert_eq!(
        driver_state_of(&state, &dir, SystemTime::now()),
        DriverState::None
    );
}

#[test]
fn a_campaign_made_again_with_force_forgets_the_last_ones_driver() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = demo(tmp.path());
    beat_at(&dir, 4242, "some-other-node", 60, false);
    let file = tmp.path().join("demo-campaign.toml");
    crate::campaign::demo::init_demo_at(&dir, &file, Some(0.0), true).unwrap();
    assert_eq!(driver_state(&dir).unwrap(), DriverState::None);
}

#[test]
fn only_a_lost_sim_driver_took_its_runs_along() {
    let dir = Path::new("/c");
    let lost = DriverState::Lost {
        pid: 9,
        host: host_name(),
        gone_s: 12,
    };
    assert!(lost.took_runs_with_it("sim"));
    assert_eq!(
        lost.text_for(dir, "sim"),
        "driver lost (pid 9 gone 12 s ago; runs of the sim executor ended with it; resume with autolb campaign run /c to run them again)"
    );
    // Processes of their own and batch jobs may outlive their driver.
    for executor in ["command", "slurm", "external"] {
        assert!(!lost.took_runs_with_it(executor), "{executor}");
        assert_eq!(lost.text_for(dir, executor), lost.text(dir));
    }
    let alive = DriverState::Running {
        pid: 9,
        host: host_name(),
        seen_s: 1,
    };
    for state in [alive, DriverState::None, DriverState::Done] {
        assert!(!state.took_runs_with_it("sim"), "{state:?}");
        assert_eq!(state.text_for(dir, "sim"), state.text(dir));
    }
}

#[test]
fn a_campaign_without_a_driver_of_its_own_waits_for_its_workflow_manager() {
    let dir = Path::new("/c");
    let none = DriverState::None;
    assert_eq!(
        none.text_for(dir, EXTERNAL_EXECUTOR),
        "workflow manager starts the runs; those waiting: autolb campaign next /c"
    );
    assert_eq!(none.short_text_for(EXTERNAL_EXECUTOR), "workflow manager");
    // A campaign with an executor needs `campaign run`; a lost driver is lost whoever
    // runs the runs.
    assert_eq!(none.text_for(dir, "command"), "no driver running");
    assert_eq!(none.short_text_for("slurm"), "no driver");
    let lost = DriverState::Lost {
        pid: 9,
        host: "n1".into(),
        gone_s: 12,
    };
    assert_eq!(lost.short_text_for(EXTERNAL_EXECUTOR), lost.short_text());
}

#[test]
fn the_json_view_names_state_pid_alive_and_last_seen() {
    let s = DriverState::Lost {
        pid: 9,
        host: "n1".into(),
        gone_s: 12,
    };
    let v = serde_json::to_value(s.view()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"state": "lost", "pid": 9, "host": "n1", "alive": false, "last_seen_s": 12})
    );
}
