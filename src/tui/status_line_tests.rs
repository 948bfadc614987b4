//! The three lines that never scroll away, at the widths people use: the status line keeps the
//! driver's state (none, running, lost, stalled, done) before any message, the best line the
//! campaign's answer with its caveats, and each line ends at a whole item when cut to fit.
//! The screens and campaigns are the screen tests' ([`super::screen_tests`]).

use super::app::App;
use super::campaign_view::RunRow;
use super::event::Event;
use super::pane::Pane;
use super::screen_tests::{driver, run, watched, watching};
use super::tests::{app, draw, text};
use super::view;
use autolb::campaign::DriverState;

#[test]
fn the_status_line_tells_no_driver_from_running_lost_and_stalled() {
    let mut app = watching();
    let status = |app: &App| view::status::status_text(app).0;
    assert!(status(&app).contains("campaign: running (driver pid 4242, seen 2 s ago)"));
    assert!(status(&app).contains("1 incoming"), "{}", status(&app));
    let mut v = watched();
    v.driver = Some(driver(DriverState::None));
    app.update(Event::Campaign(Box::new(v.clone())));
    assert!(status(&app).contains("campaign: no driver running │"));
    // A campaign a workflow manager runs waits for it, not for a driver.
    v.executor = Some("external".into());
    app.update(Event::Campaign(Box::new(v.clone())));
    assert!(
        status(&app).contains(
            "campaign: workflow manager starts the runs; those waiting: autolb campaign next \
             /scratch/camp │"
        ),
        "{}",
        status(&app)
    );
    let line = view::fit::text_of(&view::status::status_line(&app, 80));
    assert!(line.contains("workflow manager"), "{line}");
    v.executor = None;
    let host = autolb::campaign::heartbeat::host_name();
    v.driver = Some(driver(DriverState::Stalled {
        pid: 4242,
        host: host.clone(),
        seen_s: 1,
        idle_s: 22 * 60,
    }));
    app.update(Event::Campaign(Box::new(v.clone())));
    assert!(
        status(&app).contains(
            "campaign: stalled (driver pid 4242; no progress for 22 min while runs are queued)"
        ),
        "{}",
        status(&app)
    );
    v.driver = Some(driver(DriverState::Lost {
        pid: 4242,
        host: host.clone(),
        gone_s: 40,
    }));
    app.update(Event::Campaign(Box::new(v.clone())));
    assert!(
        status(&app).contains(
            "campaign: driver lost (pid 4242 gone 40 s ago; runs may still be queued; \
             resume with autolb campaign run /scratch/camp)"
        ),
        "{}",
        status(&app)
    );
    // At 80 columns the short form keeps the news: lost, and which pid.
    let line = view::fit::text_of(&view::status::status_line(&app, 80));
    assert!(
        line.contains("driver lost (pid 4242 gone 40 s ago)"),
        "{line}"
    );
    assert!(line.chars().count() <= 80, "{line}");
    v.driver = Some(driver(DriverState::None));
    v.state = "done: no successful run".into();
    v.best = None;
    app.update(Event::Campaign(Box::new(v)));
    assert!(status(&app).contains("campaign: done: no successful run │"));
    assert!(view::status::best_text(&app).contains("★ best: none, no run succeeded"));
}

#[test]
fn a_lost_sim_driver_says_its_runs_ended_with_it_and_a_command_one_that_they_may_go_on() {
    let status = |app: &App| view::status::status_text(app).0;
    let lost = || {
        driver(DriverState::Lost {
            pid: 4242,
            host: autolb::campaign::heartbeat::host_name(),
            gone_s: 40,
        })
    };
    let mut v = watched();
    v.driver = Some(lost());
    v.executor = Some("sim".into());
    let mut app = watching();
    app.update(Event::Campaign(Box::new(v.clone())));
    assert!(
        status(&app).contains(
            "s ago; runs of the sim executor ended with it; resume with autolb campaign run \
             /scratch/camp to run them again)"
        ),
        "{}",
        status(&app)
    );
    v.executor = Some("command".into());
    app.update(Event::Campaign(Box::new(v)));
    assert!(
        status(&app).contains("runs may still be queued; resume with autolb campaign run"),
        "{}",
        status(&app)
    );
}

#[test]
fn a_tick_after_a_sim_driver_died_shows_its_running_runs_stopped_with_it() {
    let mut v = watched();
    v.executor = Some("sim".into());
    // A driver on another host: only its beat's age makes it lost.
    v.driver = Some(driver(DriverState::Running {
        pid: std::process::id(),
        host: "some-other-node".into(),
        seen_s: 2,
    }));
    let row = &mut v.rows[10];
    assert_eq!((row.iteration, row.test), (1, 4));
    row.runs.push(RunRow {
        state: "running".into(),
        sypd: None,
        ..run(2, true, 0.0)
    });
    row.stopped_state = Some("stopped with the driver 1/2".into());
    let mut app = app();
    app.update(Event::Campaign(Box::new(v)));
    let read_at = app.table.campaign.driver.as_ref().unwrap().at;
    app.update(Event::Tick(read_at + std::time::Duration::from_secs(5)));
    assert_eq!(app.table.campaign.rows[10].state, "running 1/2");
    app.update(Event::Tick(read_at + std::time::Duration::from_secs(30)));
    let row = &app.table.campaign.rows[10];
    assert_eq!(row.state, "stopped with the driver 1/2");
    assert_eq!(row.runs[1].state, "stopped with the driver");
    assert_eq!(row.runs[0].state, "done");
}

#[test]
fn a_finished_cold_start_without_a_best_promises_nothing() {
    let mut v = watched();
    v.best = None;
    v.phase = Some("phase scaling, ended: no coupled run was measured".into());
    v.state = "done: no successful run".into();
    let mut app = watching();
    app.update(Event::Campaign(Box::new(v.clone())));
    let best = view::status::best_text(&app);
    assert_eq!(
        best,
        "★ best: none · cold start, phase scaling, ended: no coupled run was measured"
    );
    v.state = "running".into();
    v.phase = Some("phase scaling: learning the curves".into());
    app.update(Event::Campaign(Box::new(v)));
    assert!(view::status::best_text(&app).contains("none while the curves are learnt"));
}

#[test]
fn a_lost_driver_outranks_the_last_message_at_80_columns_and_ends_the_eta() {
    let mut app = watching();
    let mut v = watched();
    v.progress = Some(autolb::campaign::status::progress::Progress {
        iteration: Some(3),
        iterations_at_most: None,
        bound_proven: false,
        done: 7,
        running: 1,
        queued: 0,
        failed: 0,
        cancelled: 0,
        stopped_with_driver: 0,
        first_start: Some(1.0),
        last_end: None,
        mean_run_s: Some(30.0),
        iteration_left: 2,
        best_fn_by_iteration: Vec::new(),
        finished: false,
    });
    app.update(Event::Campaign(Box::new(v.clone())));
    let progress = |app: &App| view::fit::text_of(&view::table::progress_line(app, 200).unwrap());
    assert!(
        progress(&app).contains("iteration ETA"),
        "{}",
        progress(&app)
    );
    v.driver = Some(driver(DriverState::Lost {
        pid: 4242,
        host: autolb::campaign::heartbeat::host_name(),
        gone_s: 40,
    }));
    app.update(Event::Campaign(Box::new(v)));
    app.ui.message = Some("curves: 30 measured points; re-ranked".into());
    let line = view::fit::text_of(&view::status::status_line(&app, 80));
    assert!(line.contains("driver lost (pid 4242"), "{line}");
    assert!(!progress(&app).contains("ETA"), "{}", progress(&app));
}

#[test]
fn a_best_measured_in_several_iterations_labels_its_means_at_80_columns() {
    let mut app = watching();
    let mut v = watched();
    let row = &v.rows[v.best.unwrap()];
    let names = v.components.clone();
    let nproc = row.nproc.clone();
    let config = v.describe(&nproc);
    let best = |measured_in: Vec<[u32; 2]>| autolb::campaign::Answer {
        config: config.clone(),
        nproc: autolb::campaign::NameMap::zip(&names, nproc.clone()),
        ranks: autolb::campaign::NameMap::zip(&names, nproc.clone()),
        threads: autolb::campaign::NameMap::zip(&names, [1, 1]),
        sypd: 18.47,
        chsy: 850.0,
        coupling_cost: 0.05,
        fittingness: 1.0,
        fn_scale: String::new(),
        total_nproc: nproc.iter().sum(),
        runs: 3,
        run_ids: Vec::new(),
        where_measured: String::new(),
        measured_in,
        provisional: false,
    };
    let first = [row.iteration, row.test];
    // One row: its means are the row's, with no label.
    v.answer = Some(best(vec![first]));
    app.update(Event::Campaign(Box::new(v.clone())));
    let line = view::status::best_text(&app);
    assert!(
        line.contains("SYPD 18.47 · ") && !line.contains("mean of"),
        "{line}"
    );
    // Two rows: the means are neither row's, and the line says what they are, kept at 80.
    v.answer = Some(best(vec![first, [3, first[1]]]));
    app.update(Event::Campaign(Box::new(v)));
    let line = view::fit::text_of(&view::status::best_line(&app, 80));
    assert!(line.contains("SYPD 18.47 (mean of 3 runs)"), "{line}");
}

#[test]
fn a_hybrid_campaigns_candidates_are_written_as_its_table_writes_them() {
    let mut app = watching();
    let top = app.ranking.prediction.top.clone();
    let before: Vec<String> = top.iter().map(|c| app.ranking.describe_scored(c)).collect();
    assert!(before.iter().all(|d| !d.contains('x')), "{before:?}");
    // IFS runs 4 threads per rank in the watched campaign; its curve copy counts cores.
    let mut v = watched();
    v.threads = vec![4, 1];
    app.update(Event::Campaign(Box::new(v)));
    for c in &top {
        let text = app.ranking.describe_scored(c);
        let ifs = c.nproc[0];
        let expected = if ifs % 4 == 0 {
            format!("IFS {}x4 + NEMO {}", ifs / 4, c.nproc[1])
        } else {
            // Not whole ranks of 4: cores, never a rounded rank count.
            format!("IFS {ifs} + NEMO {}", c.nproc[1])
        };
        assert_eq!(text, expected);
    }
    assert!(
        top.iter().any(|c| c.nproc[0] % 4 == 0),
        "no case of ranks x threads"
    );
    let index = app.ranking.problem.index_of(&top[0]).unwrap();
    let detail = view::detail::config_lines(&app, &index);
    assert_eq!(detail[0], app.ranking.describe_scored(&top[0]));
}

#[test]
fn a_cold_start_shows_its_phase_in_the_best_line() {
    let mut app = watching();
    let mut v = watched();
    let best = v.best;
    v.best = None;
    v.phase = Some("phase scaling: learning the curves in coupled runs".into());
    app.update(Event::Campaign(Box::new(v.clone())));
    let line = view::status::best_text(&app);
    assert!(
        line.contains("none while the curves are learnt")
            && line.contains("cold start, phase scaling: learning"),
        "{line}"
    );
    v.best = best;
    v.phase = Some("phase balancing: the model guides the runs since iteration 2".into());
    app.update(Event::Campaign(Box::new(v)));
    let line = view::status::best_text(&app);
    assert!(
        line.starts_with("★ best") && line.ends_with("cold start, phase balancing"),
        "{line}"
    );
}

#[test]
fn a_running_driver_that_stops_beating_shows_lost_as_the_clock_moves_on() {
    let mut app = watching();
    let status = |app: &App| view::status::status_text(app).0;
    // A driver on another host (whose lock this host may not see): only its beat's age can
    // make it lost.
    let pid = std::process::id();
    let mut v = watched();
    v.driver = Some(driver(DriverState::Running {
        pid,
        host: "some-other-node".into(),
        seen_s: 2,
    }));
    app.update(Event::Campaign(Box::new(v.clone())));
    let read_at = app.table.campaign.driver.as_ref().unwrap().at;
    app.update(Event::Tick(read_at + std::time::Duration::from_secs(5)));
    assert!(status(&app).contains("seen 7 s ago"), "{}", status(&app));
    app.update(Event::Tick(read_at + std::time::Duration::from_secs(9)));
    assert!(
        status(&app).contains(&format!(
            "campaign: driver lost (pid {pid} on some-other-node gone 11 s ago;"
        )),
        "{}",
        status(&app)
    );
    // A driver on this host that holds no lock (none at /scratch/camp) is lost at the next
    // tick, its beat still fresh.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    v.driver = Some(driver(DriverState::Running {
        pid: dead,
        host: autolb::campaign::heartbeat::host_name(),
        seen_s: 1,
    }));
    let mut app = watching();
    app.update(Event::Campaign(Box::new(v)));
    let read_at = app.table.campaign.driver.as_ref().unwrap().at;
    assert!(
        status(&app).contains("campaign: running"),
        "{}",
        status(&app)
    );
    app.update(Event::Tick(read_at + std::time::Duration::from_millis(500)));
    assert!(
        status(&app).contains(&format!("campaign: driver lost (pid {dead} gone 2 s ago;")),
        "{}",
        status(&app)
    );
}

/// Whether `line` ends with a whole item of `items` (full or short) or with the `…` of a lone
/// item cut after a word: the sign of a line laid out by [`view::fit::fit`], never cut mid-word.
fn ends_at_item(line: &str, items: &[view::fit::Item]) -> bool {
    let line = line.trim_end();
    let text = |spans: &[ratatui::text::Span]| -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
    };
    line.ends_with('…')
        || items.iter().any(|it| {
            line.ends_with(text(&it.spans).trim_end())
                || it
                    .short
                    .as_ref()
                    .is_some_and(|s| line.ends_with(text(s).trim_end()))
        })
}

/// Row `y` of the screen from `x0` to `x1` (exclusive).
fn row_text(buf: &ratatui::buffer::Buffer, y: u16, x0: u16, x1: u16) -> String {
    (x0..x1).map(|x| buf[(x, y)].symbol()).collect()
}

#[test]
fn status_cursor_and_title_lines_end_at_an_item_at_80_100_and_160_columns() {
    use crate::tui::keys::Action;
    use autolb::watch::{ActiveMode, WatchEvent};
    use ratatui::layout::Rect;
    let t0 = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
    for (w, h) in [(80u16, 24u16), (100, 30), (160, 50)] {
        let mut app = watching();
        app.update(Event::Watch(
            WatchEvent::Mode {
                mode: ActiveMode::Poll,
                reason: "gpfs: notifications miss remote writes".into(),
            },
            t0,
        ));
        app.ui.set_focus(Pane::Matrix);
        // The cursor starts on the recommendation, rank 1: marking it must show and be said.
        app.apply(Action::Mark);
        let buf = draw(&app, w, h);
        let status = row_text(&buf, h - 2, 0, w);
        let mut items = Vec::new();
        if let Some(e) = view::status::status_error(&app) {
            items.push(view::fit::Item::new(format!("error: {e}"), 10));
        }
        items.extend(view::status::status_items(&app));
        assert!(ends_at_item(&status, &items), "{w}x{h}: {status}");
        assert!(status.starts_with("marked IFS"), "{w}x{h}: {status}");
        let best = row_text(&buf, h - 3, 0, w);
        let parts: Vec<view::fit::Item> = view::status::best_text(&app)
            .split(" · ")
            .map(|p| view::fit::Item::new(p.to_string(), 1))
            .collect();
        assert!(ends_at_item(&best, &parts), "{w}x{h}: {best}");
        assert!(
            best.contains("SYPD") && best.contains("FN"),
            "{w}x{h}: {best}"
        );
        if w >= 100 {
            assert!(status.contains("W:P"), "{w}x{h}: {status}");
            assert!(status.contains("1 marked"), "{w}x{h}: {status}");
        }

        let main = Rect::new(0, 0, w, h - 3);
        let layout = view::layout(&app, main);
        let (_, rect) = layout
            .iter()
            .find(|(p, _)| *p == Pane::Matrix)
            .copied()
            .unwrap();
        let inner = Rect::new(rect.x + 1, rect.y + 1, rect.width - 2, rect.height - 2);
        let g = view::matrix::geometry_for(&app.matrix, inner).unwrap();
        let y = inner.y + 1 + g.rows.len() as u16;
        let cursor = row_text(&buf, y, inner.x, inner.right());
        let items = view::matrix::cursor_items(&app, &g);
        assert!(ends_at_item(&cursor, &items), "{w}x{h}: {cursor}");
        for essential in ["SYPD", "FN", "#1", "marked"] {
            assert!(cursor.contains(essential), "{w}x{h}: {cursor}");
        }
        assert!(
            cursor.contains(&app.ranking.describe(&app.cursor_nproc()))
                || cursor.contains(
                    &app.cursor_nproc()
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("+")
                ),
            "{w}x{h}: the cursor's exact PEs: {cursor}"
        );
        // The mark shows on the ranked cell: `1*`.
        let screen = text(&buf);
        assert!(screen.contains("1*"), "{w}x{h}: {screen}");

        let border = |c: char| "─━┌┐┏┓ ".contains(c);
        let title = row_text(&buf, rect.y, rect.x, rect.right());
        let title = title.trim_matches(border);
        assert!(
            ["→", "Z: 1 each", "Z: all"]
                .iter()
                .any(|end| title.ends_with(end)),
            "{w}x{h}: matrix title {title}"
        );
        let (_, curves) = layout[0];
        let title = row_text(&buf, curves.y, curves.x, curves.right());
        let title = title.trim_matches(border);
        assert!(title.ends_with("NEMO"), "{w}x{h}: curves title {title}");
    }
}

#[test]
fn at_80x24_the_campaigns_state_outranks_a_message_and_a_finished_campaign_says_done() {
    let mut app = watching();
    for message in [
        "curves: 11 measured points; re-ranked",
        "sorted by SYPD, descending",
        "filter: failed (2 of 12 rows)",
    ] {
        app.ui.message = Some(message.into());
        let line = view::fit::text_of(&view::status::status_line(&app, 80));
        assert!(line.contains("running (pid 4242)"), "{line}");
    }
    // Over: a finished campaign (a cold start, a scaling campaign) says done, message or not.
    let mut v = watched();
    v.state = "done".into();
    v.driver = Some(driver(DriverState::Done));
    app.update(Event::Campaign(Box::new(v)));
    app.ui.message = Some("curves: 11 measured points; re-ranked".into());
    let line = view::fit::text_of(&view::status::status_line(&app, 80));
    assert!(line.contains("campaign: done"), "{line}");
}
