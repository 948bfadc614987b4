//! Whole-app screens at the sizes people use (80x24 login-node terminals up to 220x60), and
//! what a watcher must always see: the campaign's state, the best so far, the latest rows with
//! their failed repetitions, the slider; zoom, scrolling, the matrix's truthful cells.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyModifiers};

use super::app::App;
use super::campaign_view::{CampaignView, DriverReading, IterRow, RunRow};
use super::event::Event;
use super::pane::Pane;
use super::tests::{app, draw, key, special, text};
use super::ui::Overlay;
use super::view;
use autolb::campaign::DriverState;

/// A run of a test: `ok` measured, else failed with a reason.
pub(super) fn run(rep: u32, ok: bool, sypd: f64) -> RunRow {
    RunRow {
        repetition: rep,
        state: if ok { "done" } else { "failed" }.into(),
        sypd: ok.then_some(sypd),
        chsy: ok.then_some(24.0 * 700.0 / sypd),
        coupling_cost: ok.then_some(0.03),
        run_dir: PathBuf::from(format!("/scratch/camp/iter-00/test-00/rep-{rep}")),
        job: Some(format!("2059{rep}12")),
        note: (!ok).then(|| "exit status 1 (see stderr): NEMO blew up at step 1212".into()),
    }
}

/// The driver as just read (after the app's clock, so it has not aged when drawn).
pub(super) fn driver(state: DriverState) -> DriverReading {
    DriverReading {
        state,
        at: std::time::SystemTime::now(),
    }
}

/// A campaign two iterations in: 12 rows, a failed repetition, the best resting on one run.
pub(super) fn watched() -> CampaignView {
    let mut rows = Vec::new();
    let nproc = [
        [408, 240],
        [384, 242],
        [432, 216],
        [360, 288],
        [456, 197],
        [336, 331],
    ];
    for it in 0..2u32 {
        for (t, pes) in nproc.iter().enumerate() {
            let t = t as u32;
            // The best (iteration 0, test 2) is the fastest and cheapest.
            let sypd = if (it, t) == (0, 2) {
                18.4
            } else {
                16.0 + f64::from(t) * 0.4 + f64::from(it) * 0.3
            };
            let (state, runs, failed) = match (it, t) {
                (1, 4) => ("running 1/2".to_string(), vec![run(1, true, sypd)], 0),
                (1, 5) => ("pending 0/2".to_string(), vec![], 0),
                (0, 2) => (
                    "done 1/2 ✗1".to_string(),
                    vec![run(1, true, sypd), run(2, false, 0.0)],
                    1,
                ),
                (0, 5) => (
                    "failed 0/2 ✗2".to_string(),
                    vec![run(1, false, 0.0), run(2, false, 0.0)],
                    2,
                ),
                (1, 3) => (
                    "finished 2/2".to_string(),
                    vec![run(1, true, sypd), run(2, true, sypd)],
                    0,
                ),
                _ => (
                    "done 2/2".to_string(),
                    vec![run(1, true, sypd), run(2, true, sypd + 0.1)],
                    0,
                ),
            };
            let measured = runs.iter().any(|r| r.sypd.is_some()) && !state.starts_with("running");
            rows.push(IterRow {
                iteration: it,
                test: t,
                label: None,
                nproc: pes.to_vec(),
                sypd: measured.then_some(sypd),
                chsy: measured.then_some(24.0 * f64::from(pes[0] + pes[1]) / sypd),
                coupling_cost: measured.then_some(0.02 + 0.01 * f64::from(t)),
                partial_coupling_cost: vec![Some(0.01), Some(0.02)],
                fittingness: None,
                donor: measured.then(|| "IFS".into()),
                recipient: measured.then(|| "NEMO".into()),
                step: Some(48 >> it),
                state,
                stopped_state: None,
                failed,
                job: Some(format!("{}/i{it:02}-t{t:02}", 20592000 + it * 10 + t)),
                runs,
                reason: None,
            });
        }
    }
    // Scored as a campaign scores its measured configurations.
    let best = super::campaign_view::score_rows(&mut rows, 0.5);
    assert_eq!(best, Some(2));
    CampaignView {
        dir: Some(PathBuf::from("/scratch/camp")),
        state: "running".into(),
        driver: Some(driver(DriverState::Running {
            pid: 4242,
            host: autolb::campaign::heartbeat::host_name(),
            seen_s: 2,
        })),
        tts_w: Some(0.5),
        best_caveat: Some("1 of 2 runs".into()),
        components: vec!["IFS".into(), "NEMO".into()],
        rows,
        best,
        answer: None,
        measured: Vec::new(),
        pending_runs: 1,
        error: None,
        fitted: None,
        progress: None,
        curves: None,
        scaling: Vec::new(),
        threads: Vec::new(),
        phase: None,
        executor: None,
        curve_notes: Vec::new(),
    }
}

pub(super) fn watching() -> App {
    let mut app = app();
    app.update(Event::Campaign(Box::new(watched())));
    app
}

/// Table rows on screen: lines holding an `it/t` cell such as `0/3`.
fn table_rows(screen: &str) -> usize {
    screen
        .lines()
        .filter(|l| {
            (l.starts_with('│') || l.starts_with('┃'))
                && l.chars().nth(3).is_some_and(|c| c.is_ascii_digit())
                && l.chars().nth(4) == Some('/')
        })
        .count()
}

#[test]
fn snapshots_at_the_sizes_people_use() {
    for (w, h) in [(80, 24), (100, 30), (160, 50), (220, 60)] {
        let screen = text(&draw(&watching(), w, h));
        insta::assert_snapshot!(format!("watch_{w}x{h}"), screen);
    }
}

#[test]
fn at_80x24_a_watcher_sees_state_best_eight_rows_and_the_slider() {
    let app = watching();
    let screen = text(&draw(&app, 80, 24));
    assert!(
        screen.contains("campaign: running (driver pid 4242, seen 2 s ago)"),
        "{screen}"
    );
    assert!(
        screen.contains("★ best IFS 432 + NEMO 216 · SYPD 18.40 · CHSY 845 · FN 1.000"),
        "{screen}"
    );
    assert!(screen.contains("⚠ on 1 of 2 runs"), "{screen}");
    assert!(table_rows(&screen) >= 8, "{screen}");
    for full in [
        "failed 0/2 ✗2",
        "finished 2/2",
        "IFS→NEMO",
        "donor→recipient",
    ] {
        assert!(screen.contains(full), "{full} missing:\n{screen}");
    }
    assert!(screen.contains("TTS_w 0.50 cost"), "{screen}");
    // The table follows the newest rows: the last row is on screen.
    assert!(screen.contains("1/5"), "{screen}");
    // Home shows the first rows, with the failed repetition.
    let mut app = app;
    app.update(special(KeyCode::Home, KeyModifiers::NONE));
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("done 1/2 ✗1"), "{screen}");
}

#[test]
fn job_ids_are_shown_in_full_where_there_is_room() {
    let screen = text(&draw(&watching(), 100, 30));
    assert!(screen.contains("20592015/i01-t05"), "{screen}");
    // At 80 columns the job column goes (it is in the row's detail view), never cut.
    let narrow = text(&draw(&watching(), 80, 24));
    assert!(!narrow.contains("2059201"), "{narrow}");
}

#[test]
fn at_60x18_cells_are_never_cut() {
    let screen = text(&draw(&watching(), 60, 18));
    for full in ["it/t", "finished 2/2", "IFS→NEMO", "d→r", "16.30"] {
        assert!(screen.contains(full), "{full} missing:\n{screen}");
    }
}

#[test]
fn z_zooms_the_focused_pane_and_back() {
    let mut app = watching();
    app.ui.focus = Pane::Table;
    app.update(key('z'));
    assert!(app.ui.zoomed);
    let screen = text(&draw(&app, 80, 24));
    assert_eq!(table_rows(&screen), 12, "all rows at once:\n{screen}");
    assert!(!screen.contains("Fittingness"), "{screen}");
    assert!(
        screen.contains("★ best IFS"),
        "the best stays on screen when zoomed"
    );
    app.update(key('z'));
    assert!(!app.ui.zoomed);
    assert!(text(&draw(&app, 80, 24)).contains("Fittingness"));
    // The matrix zoomed has more lines for candidates.
    app.ui.focus = Pane::Matrix;
    app.update(key('z'));
    let g =
        view::matrix::geometry_for(&app.matrix, ratatui::layout::Rect::new(0, 0, 78, 19)).unwrap();
    assert!(g.rows.len() >= 16, "{}", g.rows.len());
}

#[test]
fn help_and_popups_scroll_to_their_last_line() {
    let mut app = watching();
    app.update(key('?'));
    let top = text(&draw(&app, 80, 24));
    assert!(top.contains("↓ more"), "{top}");
    assert!(!top.contains("NO_COLOR for none"), "{top}");
    app.update(special(KeyCode::End, KeyModifiers::NONE));
    let end = text(&draw(&app, 80, 24));
    assert!(end.contains("NO_COLOR for none"), "{end}");
    assert!(end.contains("↑ more"), "{end}");
    // The help says what done and finished mean, and which FN the table shows.
    let help = view::help::READING.join(" ");
    assert!(help.contains("finished (measured; the step fell below minimum_step"));
    assert!(help.contains("done (measured; the test goes on"));
    assert!(help.contains("FN of a measured row is the campaign's"));
    app.update(key('?'));
    assert_eq!(app.ui.overlay, Overlay::None);

    // The row popup lists every repetition with its job and failure reason.
    app.ui.focus = Pane::Table;
    app.update(special(KeyCode::Home, KeyModifiers::NONE));
    app.update(key('j'));
    app.update(key('j'));
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.ui.overlay, Overlay::Row(2));
    let lines = view::detail::row_lines(&app, 2).join("\n");
    assert!(
        lines.contains("rep 1  done") && lines.contains("rep 2  failed"),
        "{lines}"
    );
    assert!(lines.contains("job 2059212"), "{lines}");
    assert!(
        lines.contains("failed: exit status 1 (see stderr): NEMO blew up"),
        "{lines}"
    );
    // At the smallest size the popup still shows both repetitions and the reason.
    let small = text(&draw(&app, 60, 18));
    assert!(
        small.contains("rep 2  failed") && small.contains("NEMO blew up"),
        "{small}"
    );
}

#[test]
fn the_table_pages_and_follows_new_rows_only_while_at_the_end() {
    let mut app = watching();
    assert_eq!(app.table.selected, 11, "starts following");
    app.ui.focus = Pane::Table;
    app.update(special(KeyCode::PageUp, KeyModifiers::NONE));
    assert_eq!(app.table.selected, 1);
    app.update(special(KeyCode::Home, KeyModifiers::NONE));
    assert_eq!(app.table.selected, 0);
    let mut more = watched();
    let mut extra = more.rows[0].clone();
    extra.iteration = 2;
    more.rows.push(extra);
    app.update(Event::Campaign(Box::new(more.clone())));
    assert_eq!(app.table.selected, 0, "scrolled back: stays put");
    let screen = text(&draw(&app, 80, 24));
    assert!(
        screen.contains("0/0") && !screen.contains("2/0"),
        "{screen}"
    );
    app.update(special(KeyCode::End, KeyModifiers::NONE));
    assert_eq!(app.table.selected, 12);
    more.rows.push(more.rows[1].clone());
    app.update(Event::Campaign(Box::new(more)));
    assert_eq!(app.table.selected, 13, "at the end: follows");
    app.update(special(KeyCode::PageDown, KeyModifiers::NONE));
    assert_eq!(app.table.selected, 13);
}

#[test]
fn measured_fns_are_the_campaigns_and_the_what_if_budget_only_flags_the_best() {
    let mut app = app();
    let mut view = watched();
    view.rows[2].fittingness = Some(0.963);
    app.update(Event::Campaign(Box::new(view)));
    let best = |app: &App| view::status::best_text(app);
    let row_fn = |app: &App| app.table.campaign.rows[2].fittingness;
    assert!(best(&app).contains("FN 0.963"), "{}", best(&app));
    assert!(!best(&app).contains("what-if"), "{}", best(&app));
    // Down the budget until the best (432 + 216 PEs) no longer fits: its FN stays, and the
    // best line says it is over the budget.
    for _ in 0..200 {
        if app.ranking.problem.settings.max_nproc < 648 {
            break;
        }
        app.apply(crate::tui::keys::Action::BudgetDown);
    }
    let budget = app.ranking.problem.settings.max_nproc;
    assert!(budget < 648, "the budget went down to {budget}");
    assert_eq!(row_fn(&app), Some(0.963), "the slider moves no measured FN");
    assert!(best(&app).contains("FN 0.963"), "{}", best(&app));
    assert!(
        best(&app).contains(&format!("648 PEs: over the what-if budget {budget}")),
        "{}",
        best(&app)
    );
    let detail = view::detail::row_lines(&app, 2).join("\n");
    assert!(detail.contains("FN 0.963"), "{detail}");
    assert!(
        detail.contains("normalised over the 5 measured configurations at TTS_w 0.50"),
        "{detail}"
    );
}

#[test]
fn the_matrix_shows_every_top_n_configuration_and_the_cursors_exact_pes() {
    use super::view::matrix::{content, geometry_for, rank_label};
    let mut app = app();
    for _ in 0..4 {
        app.update(key(']'));
    }
    assert_eq!(app.ranking.prediction.top.len(), 9);
    for (w, h) in [(48u16, 6u16), (90, 20), (40, 40)] {
        let area = ratatui::layout::Rect::new(0, 0, w, h);
        let g = geometry_for(&app.matrix, area).unwrap();
        assert_eq!(g.rows.last().unwrap().end, app.matrix.grid.row_nproc.len());
        let mut seen = Vec::new();
        for r in &g.rows {
            for c in &g.cols {
                let cell = content(&app, r, c);
                if let Some(label) = rank_label(&cell.ranks) {
                    assert_eq!(label.ends_with('+'), cell.ranks.len() > 1);
                }
                seen.extend(cell.ranks);
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..=9).collect::<Vec<_>>(), "at {w}x{h}");
    }
    // The cursor moves by configuration, inside a block too: the cursor line gives its exact
    // PEs, the row label the range its line covers (never the cursor's PEs as if the whole
    // line were at them).
    let cursor_line = |app: &App| {
        let screen = text(&draw(app, 80, 24));
        let n = app.cursor_nproc();
        let pes = format!("{}+{}", n[0], n[1]);
        let exact = format!("IFS {} + NEMO {}", n[0], n[1]);
        assert!(
            screen.contains(&exact) || screen.contains(&pes),
            "the cursor's exact PEs: {screen}"
        );
        screen
    };
    let before = cursor_line(&app);
    let row = app.cursor_nproc()[0];
    let covering = |app: &App| {
        let inner = ratatui::layout::Rect::new(0, 0, 50, 14);
        let g = geometry_for(&app.matrix, inner).unwrap();
        let span = g
            .rows
            .iter()
            .find(|r| r.contains(&app.matrix.cursor[0]))
            .unwrap()
            .clone();
        let nproc = &app.matrix.grid.row_nproc;
        (nproc[span.start], nproc[span.end - 1])
    };
    let (lo, hi) = covering(&app);
    assert!(lo < hi, "a line covers a range at 80x24");
    assert!(
        before.contains(&format!("▸{lo}-{hi}")) || before.contains(&format!("{lo}-{hi}")),
        "{before}"
    );
    assert!(
        !before.contains(&format!("▸{row}")) || row == lo,
        "{before}"
    );
    app.update(key('j'));
    let next = app.cursor_nproc()[0];
    assert_ne!(next, row);
    let after = cursor_line(&app);
    // Row labels give the range a line covers.
    assert!(after.lines().any(|l| l.contains("48-")), "{after}");
    // Z: one configuration per cell around the cursor.
    app.update(key('Z'));
    let region = text(&draw(&app, 80, 24));
    assert!(region.contains("around the cursor"), "{region}");
    let g = geometry_for(&app.matrix, ratatui::layout::Rect::new(0, 0, 50, 7)).unwrap();
    assert!(g.rows.iter().chain(&g.cols).all(|r| r.len() == 1));
    assert!(g.rows.iter().any(|r| r.start == app.matrix.cursor[0]));
}

#[test]
fn without_colour_the_curves_have_distinct_glyphs_and_a_legend_beside_the_plot() {
    let app = app();
    let screen = text(&draw(&app, 160, 50));
    assert!(
        screen.contains("Curves: SYPD vs PEs ⣿ IFS • NEMO"),
        "{screen}"
    );
    // The NEMO curve is drawn in dots, the IFS one in Braille.
    assert!(screen.contains("•••"), "{screen}");
}

/// The process's umask, from /proc (Linux), without changing it.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

#[test]
fn w_follows_the_umask_keeps_the_top_n_and_numbers_ranks_globally() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mut app = super::tests::app_with(super::theme::ColorDepth::Mono, dir.path().to_path_buf());
    app.update(key(']'));
    assert_eq!(app.ranking.top, 6);
    // Mark the 4th and the 2nd of the ranking, in that order.
    app.ui.focus = Pane::Slider;
    for _ in 0..3 {
        app.update(key('j'));
    }
    app.update(key(' '));
    app.update(key('k'));
    app.update(key('k'));
    app.update(key(' '));
    super::update_and_run(&mut app, key('w'));
    assert!(
        app.ui.message.as_deref().unwrap_or("").contains("2 marked"),
        "{:?}",
        app.ui.message
    );
    let toml = dir.path().join("autolb-selection-1.toml");
    let json = dir.path().join("autolb-selection-1.json");
    for f in [&toml, &json] {
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask(), "{}", f.display());
    }
    let file = autolb::config::CampaignFile::load(&toml).unwrap();
    assert_eq!(file.top, Some(6), "the top N after ]");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ranks: Vec<u64> = doc["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ranks,
        vec![4, 2],
        "ranks among all, not within the selection"
    );
    // A configuration outside the top N gets its rank too.
    let deep = app.ranking.problem.rank(app.ranking.tts_w(), 20).top[14].clone();
    assert_eq!(app.ranking.global_ranks(&[deep]), vec![Some(15)]);
}

#[test]
fn a_long_note_is_kept_to_one_readable_line_in_the_row_view() {
    let mut view = watched();
    let long = "lucia.02.000040 ends in the middle of line 7; ".repeat(120);
    view.rows[2].runs[1].note = Some(long.clone());
    let mut app = app();
    app.update(Event::Campaign(Box::new(view)));
    let lines = view::detail::row_lines(&app, 2);
    let note = lines
        .iter()
        .find(|l| l.contains("lucia.02.000040"))
        .unwrap();
    assert!(note.len() < 300, "{note}");
    let left = long.chars().count() - 200;
    assert!(
        note.ends_with(&format!("... ({left} more characters)")),
        "{note}"
    );
}

#[test]
fn the_table_filters_sorts_and_pages_a_rows_logs_by_keyboard() {
    let mut app = watching();
    // `/failed` + enter: the rows with a failed repetition, said in the title.
    app.update(key('/'));
    assert_eq!(app.ui.focus, Pane::Table);
    for c in "failed".chars() {
        app.update(key(c));
    }
    let typing = text(&draw(&app, 80, 24));
    assert!(
        typing.contains("filter: failed▏ · enter applies, esc cancels, ctrl-u clears"),
        "{typing}"
    );
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.table.visible, [2, 5]);
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("· 2 of 12 match \"failed\""), "{screen}");
    assert_eq!(table_rows(&screen), 2, "{screen}");
    // `q` while typing is text, not quit; esc keeps the filter as it was.
    app.update(key('/'));
    app.update(key('q'));
    assert!(!app.ui.quit);
    app.update(special(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(app.table.visible, [2, 5]);
    // An empty query lists every row again.
    app.update(key('/'));
    for _ in 0..10 {
        app.update(special(KeyCode::Backspace, KeyModifiers::NONE));
    }
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.table.visible.len(), 12);

    // `s`: by FN, the best first; the selection stays on its row.
    app.update(key('s'));
    assert_eq!(app.table.order, super::table::RowOrder::Fn);
    assert_eq!(app.table.visible[0], 2, "the best has the highest FN");
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("· by FN "), "{screen}");

    // `l`: the selected row's runs, read by the event loop, paged in an overlay.
    app.update(special(KeyCode::Home, KeyModifiers::NONE));
    assert_eq!(app.table.selected_row(), Some(2));
    let effect = app.update(key('l')).expect("l reads the logs");
    let outcome = effect.run();
    app.update(Event::Done(outcome));
    let Overlay::Logs(title, lines) = &app.ui.overlay else {
        panic!("{:?}", app.ui.overlay);
    };
    assert_eq!(title, "Logs of iteration 0 test 2");
    assert!(
        lines[0].starts_with("rep 1  /scratch/camp/iter-00/test-00/rep-1"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("rep 2")), "{lines:?}");
    let screen = text(&draw(&app, 80, 24));
    assert!(
        screen.contains("Logs of iteration 0 test 2 (esc closes"),
        "{screen}"
    );
    app.update(special(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(app.ui.overlay, Overlay::None);
}

#[test]
fn the_progress_line_sits_on_the_tables_border_and_gives_way_at_80_columns() {
    let mut app = watching();
    let mut view = watched();
    let started = app
        .ui
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 190.0;
    view.progress = Some(autolb::campaign::status::progress::Progress {
        iteration: Some(1),
        iterations_at_most: Some(9),
        bound_proven: true,
        done: 9,
        running: 1,
        queued: 1,
        failed: 3,
        cancelled: 0,
        stopped_with_driver: 0,
        first_start: Some(started),
        last_end: None,
        mean_run_s: Some(40.0),
        iteration_left: 2,
        best_fn_by_iteration: vec![0.61, 1.0],
        finished: false,
    });
    app.update(Event::Campaign(Box::new(view)));
    let wide = text(&draw(&app, 160, 50));
    assert!(
        wide.contains(
            "iteration 1 (at most 9 in all) · runs 9 done, 1 running, 1 queued, 3 failed · 3 min 10 s elapsed · iteration ETA 1 min 00 s · best FN ▅█"
        ),
        "{wide}"
    );
    let narrow = text(&draw(&app, 80, 24));
    let line = narrow
        .lines()
        .find(|l| l.starts_with('└') && l.contains("runs"))
        .unwrap_or_else(|| panic!("{narrow}"));
    assert!(line.contains("iteration 1 (at most 9 in all)"), "{line}");
    assert!(line.contains("ETA 1 min 00 s"), "{line}");
    assert_eq!(line.chars().count(), 80, "{line}");
}

/// The fit is kept between frames, but a changed cell (here a longer state in one row, with
/// nothing else changed) refits it.
#[test]
fn a_changed_cell_refits_the_columns() {
    let mut app = app();
    app.table.campaign = watched();
    let (header, _, before) = view::table::fitted(&app, 200);
    let k = header.iter().position(|h| h == "state").unwrap();
    assert_eq!(
        view::table::fitted(&app, 200).2,
        before,
        "the same fit again"
    );
    let longer = usize::from(before[k]) + 5;
    app.table.campaign.rows[0].state = "x".repeat(longer);
    let (_, rows, after) = view::table::fitted(&app, 200);
    assert_eq!(usize::from(after[k]), longer);
    assert_eq!(rows[0][k], "x".repeat(longer));
    // Too narrow for the wider table: a column goes.
    let total: u16 = after.iter().sum::<u16>() + after.len() as u16 - 1;
    assert!(view::table::fitted(&app, total - 1).0.len() < header.len());
}
