//! State and render tests of the app (no terminal: `App::update` and `TestBackend`).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;

use autolb::curve::Curve;
use autolb::example;
use autolb::predict::{Cell, ComponentInput, Problem, ProblemOptions, Settings};
use autolb::watch::{ActiveMode, WatchEvent};

use super::app::App;
use super::campaign_view::{CampaignView, IterRow, RunRow};
use super::effect::{Effect, Outcome};
use super::event::Event;
use super::keys::KeyTable;
use super::pane::Pane;
use super::ranking::ModelKind;
use super::selection::{Selection, SelectionSource, Written};
use super::theme::{ColorDepth, Theme};
use super::ui::Overlay;
use super::view;

fn source() -> SelectionSource {
    SelectionSource {
        components: super::example_components(),
        base: None,
        period_s: Some(2700.0),
    }
}

pub(super) fn app_with(depth: ColorDepth, out_dir: PathBuf) -> App {
    let inputs = example::inputs();
    let problem = Problem::new(&inputs, &example::settings()).unwrap();
    App::new(
        problem,
        &inputs,
        KeyTable::default(),
        Theme::new(depth),
        source(),
        out_dir,
        "EC-Earth3 SR example".into(),
    )
}

pub(super) fn app() -> App {
    app_with(ColorDepth::Mono, std::env::temp_dir())
}

/// A plain key press (the bench uses it too).
pub(super) fn key(c: char) -> Event {
    special(KeyCode::Char(c), KeyModifiers::NONE)
}

pub(super) fn special(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

pub(super) fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view::render(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

pub(super) fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Position of the matrix cursor (`[]` in wide cells, `@` in narrow ones).
/// On a ranked cell the cursor is the rank underlined in reverse.
fn find_cursor(buf: &Buffer) -> Option<(u16, u16)> {
    // A ranked cursor is underlined; look for it first, as the legend shows `[]` and `@` too.
    let a = buf.area;
    (a.y..a.bottom())
        .flat_map(|y| (a.x..a.right()).map(move |x| (x, y)))
        .find(|&p| {
            buf[p]
                .modifier
                .contains(ratatui::style::Modifier::UNDERLINED)
        })
        .or_else(|| find(buf, "[]"))
        .or_else(|| find(buf, "@"))
}

/// Position of the first occurrence of `needle` on screen.
pub(super) fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    for y in 0..buf.area.height {
        let line: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let joined: String = line.concat();
        if let Some(byte) = joined.find(needle) {
            // Map the byte offset back to a column (symbols may be multi-byte).
            let mut acc = 0;
            for (x, s) in line.iter().enumerate() {
                if acc == byte {
                    return Some((x as u16, y));
                }
                acc += s.len();
            }
        }
    }
    None
}

#[test]
fn tts_w_moves_in_exact_coarse_and_fine_steps_and_stays_in_range() {
    let mut app = app();
    assert_eq!(app.ranking.tts_w(), 0.5);
    app.update(key('+'));
    assert_eq!(app.ranking.tts_w(), 0.55);
    app.update(key('>'));
    app.update(key('>'));
    assert_eq!(app.ranking.tts_w(), 0.57);
    app.update(key('<'));
    app.update(key('-'));
    assert_eq!(app.ranking.tts_w(), 0.51);
    for _ in 0..30 {
        app.update(key('+'));
    }
    assert_eq!(app.ranking.tts_w(), 1.0);
    for _ in 0..30 {
        app.update(key('-'));
    }
    assert_eq!(app.ranking.tts_w(), 0.0);
    assert_eq!(
        app.ranking.prediction.tts_w, 0.0,
        "the ranking follows the slider"
    );
}

#[test]
fn moving_the_slider_reranks_and_recolours_at_once() {
    let mut app = app();
    let at_half = app.ranking.recommended().unwrap().clone();
    let grid_half = app.matrix.grid.clone();
    for _ in 0..10 {
        app.update(key('-'));
    }
    let cheapest = app.ranking.recommended().unwrap().clone();
    assert_ne!(cheapest.nproc, at_half.nproc, "TTS_w 0 favours cost");
    assert_ne!(app.matrix.grid, grid_half, "the matrix is rescored");
    let direct = app.ranking.problem.rank(0.0, app.ranking.top).top;
    assert_eq!(app.ranking.prediction.top, direct);
    for _ in 0..20 {
        app.update(key('+'));
    }
    let fastest = app.ranking.recommended().unwrap().clone();
    assert!(fastest.sypd >= at_half.sypd && fastest.sypd >= cheapest.sypd);
    assert!(cheapest.chsy <= at_half.chsy);
}

#[test]
fn the_cursor_starts_on_the_recommendation_and_stays_inside_the_matrix() {
    let mut app = app();
    assert_eq!(app.cursor_nproc(), app.ranking.recommended().unwrap().nproc);
    for _ in 0..200 {
        app.update(key('k'));
        app.update(special(KeyCode::Left, KeyModifiers::NONE));
    }
    assert_eq!(app.matrix.cursor, vec![0, 0]);
    for _ in 0..200 {
        app.update(key('j'));
        app.update(special(KeyCode::Right, KeyModifiers::NONE));
    }
    let last = |i: usize| app.ranking.problem.components[i].nproc.len() - 1;
    assert_eq!(app.matrix.cursor, vec![last(0), last(1)]);
    app.update(key('g'));
    assert_eq!(app.cursor_nproc(), app.ranking.recommended().unwrap().nproc);
}

#[test]
fn tab_cycles_panes_and_arrows_act_on_the_focused_one() {
    let mut app = app();
    assert_eq!(app.ui.focus, Pane::Matrix);
    app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(app.ui.focus, Pane::Slider);
    app.update(special(KeyCode::Right, KeyModifiers::NONE));
    assert_eq!(
        app.ranking.tts_w(),
        0.51,
        "right on the slider is the fine step"
    );
    app.update(key('j'));
    assert_eq!(app.ranking.top_selected, 1);
    app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(app.ui.focus, Pane::Curves);
    app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(app.ui.focus, Pane::Front);
    app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(app.ui.focus, Pane::Matrix);
    app.update(special(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.ui.focus, Pane::Front);
}

#[test]
fn marking_toggles_and_refuses_configurations_over_the_budget() {
    let mut app = app();
    let here = app.cursor_nproc();
    app.update(key(' '));
    assert_eq!(app.matrix.marked, vec![here.clone()]);
    app.update(key(' '));
    assert!(app.matrix.marked.is_empty());
    // The largest IFS and NEMO together are far over 672 PEs.
    for _ in 0..100 {
        app.update(key('j'));
        app.update(special(KeyCode::Right, KeyModifiers::NONE));
    }
    assert_eq!(app.cursor_cell(), Cell::OverBudget);
    app.update(key(' '));
    assert!(app.matrix.marked.is_empty());
    assert!(app
        .ui
        .message
        .as_deref()
        .unwrap()
        .contains("over the budget"));
}

/// The selection `w` asks the event loop to write (panics when it asks for nothing else).
fn selection_of(effect: Option<Effect>) -> (Selection, String) {
    match effect {
        Some(Effect::WriteSelection { selection, from }) => (*selection, from),
        other => panic!("w asks for the selection to be written, not {other:?}"),
    }
}

#[test]
fn w_writes_the_marked_or_else_the_top_n_and_says_where() {
    let out = PathBuf::from("/nonexistent/autolb-out");
    let mut app = app_with(ColorDepth::Mono, out.clone());
    let (selection, from) = selection_of(app.update(key('w')));
    assert_eq!(from, "top 5");
    assert_eq!(selection.dir, out);
    assert_eq!(selection.configs, app.ranking.prediction.top);
    assert_eq!(selection.ranks, (1..=5).map(Some).collect::<Vec<_>>());
    assert_eq!((selection.tts_w, selection.top), (0.5, 5));
    assert_eq!(app.ui.message, None, "nothing is said before it is written");
    let written = Written {
        toml: out.join("autolb-selection-1.toml"),
        json: out.join("autolb-selection-1.json"),
    };
    app.update(Event::Done(Outcome::SelectionWritten { from, written }));
    let message = app.ui.message.clone().unwrap();
    let (status, _) = view::status::status_text(&app);
    assert!(
        status.starts_with("wrote top 5: "),
        "the status line shows it: {status}"
    );
    assert!(
        message.contains("top 5") && message.contains("autolb-selection-1.toml"),
        "{message}"
    );

    app.update(key('j'));
    app.update(key(' '));
    let marked = app.cursor_nproc();
    let (selection, from) = selection_of(app.update(key('w')));
    assert_eq!(from, "1 marked");
    assert_eq!(selection.configs.len(), 1);
    assert_eq!(selection.configs[0].nproc, marked);
}

#[test]
fn a_failed_write_is_an_error_in_the_status_line_not_a_crash() {
    let mut app = app_with(
        ColorDepth::Mono,
        PathBuf::from("/proc/autolb-cannot-write-here"),
    );
    super::update_and_run(&mut app, key('w'));
    assert!(app.ui.error.as_deref().unwrap().contains("write failed"));
    assert!(!app.ui.quit);
}

#[test]
fn help_detail_and_quit() {
    let mut app = app();
    app.update(key('?'));
    assert_eq!(app.ui.overlay, Overlay::Help);
    app.update(key('+'));
    assert_eq!(
        app.ranking.tts_w(),
        0.5,
        "keys do not leak through the help"
    );
    app.update(key('?'));
    assert_eq!(app.ui.overlay, Overlay::None);
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.ui.overlay, Overlay::Config(app.matrix.cursor.clone()));
    app.update(special(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(app.ui.overlay, Overlay::None);
    app.update(special(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.ui.quit);
    let mut app2 = super::tests::app();
    app2.update(key('q'));
    assert!(app2.ui.quit);
    let mut app3 = super::tests::app();
    app3.update(Event::Signal(signal_hook::consts::SIGHUP));
    assert!(app3.ui.quit);
}

fn sample_view() -> CampaignView {
    let row =
        |iteration, test, nproc: Vec<u32>, sypd: Option<f64>, fnv: Option<f64>, state: &str| {
            IterRow {
                iteration,
                test,
                label: None,
                nproc,
                sypd,
                chsy: sypd.map(|s| 24.0 * 744.0 / s),
                coupling_cost: sypd.map(|_| 0.031),
                partial_coupling_cost: vec![Some(0.02), Some(0.011)],
                fittingness: fnv,
                failed: 0,
                donor: fnv.map(|_| "IFS".into()),
                recipient: fnv.map(|_| "NEMO".into()),
                step: Some(48),
                state: state.into(),
                stopped_state: None,
                job: Some("1234".into()),
                runs: vec![RunRow {
                    repetition: 1,
                    state: state.into(),
                    sypd,
                    chsy: None,
                    coupling_cost: None,
                    run_dir: PathBuf::from("/c/iter-00/test-00/rep-1"),
                    job: Some("1234".into()),
                    note: None,
                }],
                reason: None,
            }
        };
    CampaignView {
        dir: Some(PathBuf::from("/c")),
        state: "running".into(),
        components: vec!["IFS".into(), "NEMO".into()],
        rows: vec![
            row(0, 0, vec![408, 240], Some(17.123), Some(0.5), "done"),
            row(0, 1, vec![384, 242], Some(18.5), Some(1.0), "done"),
            row(1, 0, vec![360, 288], None, None, "pending"),
        ],
        best: Some(1),
        pending_runs: 1,
        error: None,
        ..CampaignView::default()
    }
}

#[test]
fn campaign_and_watch_events_fill_the_table_and_status() {
    let mut app = app();
    app.update(Event::Campaign(Box::new(sample_view())));
    assert_eq!(app.table.campaign.rows.len(), 3);
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
    app.update(Event::Watch(
        WatchEvent::Mode {
            mode: ActiveMode::Poll,
            reason: "gpfs: notifications miss remote writes".into(),
        },
        t0,
    ));
    app.update(Event::Watch(
        WatchEvent::Quiet {
            pending: 2,
            complete: 4,
        },
        t0,
    ));
    app.update(Event::Tick(t0 + Duration::from_secs(7)));
    let (status, error) = view::status::status_text(&app);
    assert!(status.contains("W:P scan 7 s ago │ (gpfs"), "{status}");
    assert!(status.contains("campaign: running"), "{status}");
    assert!(error.is_none());
    app.update(Event::Watch(
        WatchEvent::Error("/c: cannot list: denied".into()),
        t0,
    ));
    assert!(view::status::status_text(&app)
        .1
        .unwrap()
        .contains("denied"));
    // Table navigation and the row detail.
    app.ui.focus = Pane::Table;
    app.update(key('j'));
    app.update(key('j'));
    app.update(key('j'));
    assert_eq!(app.table.selected, 2);
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.ui.overlay, Overlay::Row(2));
    let lines = view::detail::row_lines(&app, 2).join("\n");
    assert!(
        lines.contains("iteration 1 test 0: IFS 360 + NEMO 288"),
        "{lines}"
    );
    // The strategy's reason for a test shows in its detail.
    let mut guided = sample_view();
    guided.rows[2].reason =
        Some("model: upper band 0.930 > best 0.910 on the model's FN scale".into());
    app.update(Event::Campaign(Box::new(guided)));
    let lines = view::detail::row_lines(&app, 2).join("\n");
    assert!(
        lines.contains("why: model: upper band 0.930 > best 0.910 on the model's FN scale"),
        "{lines}"
    );
    // A shorter table clamps the selection.
    let mut shorter = sample_view();
    shorter.rows.truncate(1);
    app.update(Event::Campaign(Box::new(shorter)));
    assert_eq!(app.table.selected, 0);
}

/// A 3-component problem (IFS, NEMO and a made-up third) for the axis choice.
fn three_component_app() -> App {
    let mut inputs = example::inputs();
    let third = Curve::from_csv_str("RNF", "rnf.csv", "nproc,SYPD\n1,30\n4,90\n8,150\n").unwrap();
    inputs.push(ComponentInput::new(third));
    let settings = Settings {
        max_nproc: 680,
        step: 48,
        ..Settings::default()
    };
    let problem = Problem::new(&inputs, &settings).unwrap();
    App::new(
        problem,
        &inputs,
        KeyTable::default(),
        Theme::new(ColorDepth::Mono),
        SelectionSource::default(),
        std::env::temp_dir(),
        "three".into(),
    )
}

#[test]
fn matrix_axes_change_with_three_components_only() {
    let mut two = app();
    two.update(key('c'));
    assert_eq!(two.matrix.axes, (0, 1));
    assert!(two.ui.message.as_deref().unwrap().contains("3 or more"));

    let mut app = three_component_app();
    assert_eq!(app.matrix.axes, (0, 1));
    app.update(key('c'));
    assert_eq!(app.matrix.axes, (0, 2));
    assert_eq!(
        app.matrix.grid.col_nproc,
        app.ranking.problem.components[2].nproc
    );
    app.update(key('r'));
    assert_eq!(app.matrix.axes, (1, 2));
    let buf = draw(&app, 120, 40);
    assert!(text(&buf).contains("NEMO ↓ × RNF →"));
}

#[test]
fn tiny_terminals_do_not_panic() {
    let app = app();
    for (w, h) in [(0, 0), (1, 1), (20, 5), (59, 17), (60, 18), (61, 19)] {
        let buf = draw(&app, w, h);
        if (w, h) == (20, 5) {
            assert!(text(&buf).contains("terminal"), "{}", text(&buf));
        }
    }
    let mut with_overlays = app;
    with_overlays.update(key('?'));
    draw(&with_overlays, 20, 5);
    draw(&with_overlays, 60, 18);
    with_overlays.update(key('?'));
    with_overlays.update(special(KeyCode::Enter, KeyModifiers::NONE));
    draw(&with_overlays, 60, 18);
}

#[test]
fn screen_snapshot_without_colour() {
    let mut app = app();
    app.update(Event::Campaign(Box::new(sample_view())));
    app.update(key(' '));
    let buf = draw(&app, 120, 40);
    insta::assert_snapshot!("main_screen_mono", text(&buf));
}

#[test]
fn help_snapshot() {
    let mut app = app();
    app.update(key('?'));
    let buf = draw(&app, 100, 45);
    insta::assert_snapshot!("help_overlay", text(&buf));
}

#[test]
fn slider_shows_two_decimals_and_the_recommendation() {
    let mut app = app();
    app.update(key('>'));
    app.update(key('>'));
    let screen = text(&draw(&app, 120, 40));
    assert!(screen.contains("TTS_w 0.52"), "{screen}");
    let rec = app.ranking.recommended().unwrap().nproc.clone();
    assert!(screen.contains(&format!("recommended: IFS {} + NEMO {}", rec[0], rec[1])));
}

#[test]
fn matrix_cells_are_coloured_by_fittingness_grey_or_blank() {
    for (depth, (w, h)) in [ColorDepth::TrueColor, ColorDepth::Ansi256]
        .into_iter()
        .flat_map(|d| [(d, (120, 40)), (d, (140, 56))])
    {
        let mut app = app_with(depth, std::env::temp_dir());
        let theme = app.ui.theme;
        // The cursor starts on the recommendation: scored, coloured by its fittingness.
        let Cell::Scored { fittingness, .. } = app.cursor_cell() else {
            panic!("the recommendation is scored")
        };
        let buf = draw(&app, w, h);
        let (x, y) = find_cursor(&buf).expect("cursor drawn");
        assert_eq!(buf[(x, y)].bg, theme.fittingness(fittingness).unwrap());
        assert_ne!(theme.fittingness(0.0), theme.fittingness(1.0));

        // Worse than the base case: grey.
        app.matrix.cursor = vec![0, 0];
        let worse = (0..app.ranking.problem.components[1].nproc.len()).find(|&c| {
            matches!(
                app.ranking.problem.cell(&[0, c], app.ranking.tts_w()),
                Cell::WorseThanBase { .. }
            )
        });
        if let Some(c) = worse {
            app.matrix.cursor = vec![0, c];
            let buf = draw(&app, w, h);
            let (x, y) = find_cursor(&buf).unwrap();
            assert_eq!(buf[(x, y)].bg, theme.worse().unwrap());
        }
        // Over the budget: no background.
        let rows = app.ranking.problem.components[0].nproc.len();
        let cols = app.ranking.problem.components[1].nproc.len();
        app.matrix.cursor = vec![rows - 1, cols - 1];
        let buf = draw(&app, w, h);
        let (x, y) = find_cursor(&buf).unwrap();
        assert_eq!(buf[(x, y)].bg, Color::Reset);
    }
}

#[test]
fn without_colour_the_matrix_uses_glyphs() {
    let app = app();
    let screen = text(&draw(&app, 120, 40));
    assert!(find_cursor(&draw(&app, 120, 40)).is_some(), "cursor mark");
    assert!(
        screen.contains('█') || screen.contains('▓'),
        "fittingness shades"
    );
    let buf = draw(&app, 120, 40);
    for y in 0..40 {
        for x in 0..120 {
            let c = &buf[(x, y)];
            assert!(
                !matches!(c.bg, Color::Rgb(..) | Color::Indexed(_)),
                "no colour at {x},{y}"
            );
        }
    }
}

#[test]
fn the_event_loop_draws_and_ends_on_quit() {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut app = app();
    let (tx, rx) = mpsc::channel();
    tx.send(key('+')).unwrap();
    tx.send(key('q')).unwrap();
    super::event_loop(&mut terminal, &mut app, &rx).unwrap();
    assert!(app.ui.quit);
    assert_eq!(app.ranking.tts_w(), 0.55);
    // A closed channel ends the loop too (every producer gone).
    let mut app = super::tests::app();
    let (tx, rx) = mpsc::channel::<Event>();
    drop(tx);
    super::event_loop(&mut terminal, &mut app, &rx).unwrap();
}

#[test]
fn the_log_scale_plots_log2_pes_with_pe_labels() {
    let mut app = app();
    let linear = text(&draw(&app, 160, 50));
    assert!(linear.contains("SYPD vs PEs"));
    app.update(key('L'));
    assert!(app.ui.log_scale);
    let log = text(&draw(&app, 160, 50));
    assert!(log.contains("SYPD vs log2 PEs"), "{log}");
    // The axis ends are still written in PEs (first and last measured IFS points).
    assert!(log.contains("48") && log.contains("1008"));
    // The middle label differs: the geometric, not the arithmetic, middle of 48..1008.
    let axis = |screen: &str| -> String {
        screen
            .lines()
            .filter(|l| l.trim_start_matches('│').trim_start().starts_with("48 "))
            .map(|l| l.split('│').nth(1).unwrap_or("").to_string())
            .collect()
    };
    assert!(axis(&linear).contains(" 528 "), "{linear}");
    assert!(!axis(&log).contains(" 528 "), "{log}");
}

/// `M` swaps the standalone and the calibrated model for the matrix and the top N; the status
/// line says which one ranks.
#[test]
fn m_switches_between_the_standalone_and_the_calibrated_model() {
    use autolb::model::{MeasuredComponent, MeasuredRun, Model};
    let inputs = example::inputs();
    let curves: Vec<Curve> = inputs.iter().filter_map(|c| c.curve.clone()).collect();
    // Runs where IFS goes at 0.85 and NEMO at 0.6 of their curves.
    let runs: Vec<MeasuredRun> = [(240u32, 144u32), (336, 192), (480, 240), (624, 336)]
        .iter()
        .map(|&(pi, pn)| {
            let speed = |c: &Curve, p: u32, r: f64| {
                let m = autolb::interp::Interpolant::new(
                    autolb::interp::Method::default(),
                    &c.xs(),
                    &c.ys(),
                );
                r * m.eval(f64::from(p))
            };
            let (si, sn) = (speed(&curves[0], pi, 0.85), speed(&curves[1], pn, 0.6));
            let comp = |name: &str, nproc, sypd| MeasuredComponent::from_speed(name, nproc, sypd);
            MeasuredRun {
                path: format!("{pi}_{pn}"),
                components: vec![comp(&curves[0].name, pi, si), comp(&curves[1].name, pn, sn)],
                coupled_sypd: 0.95 * si.min(sn),
                simulated_s: None,
            }
        })
        .collect();
    let (model, _) = Model::fit(&curves, autolb::interp::Method::default(), &runs);
    let calibrated = Problem::build(
        &inputs,
        &example::settings(),
        ProblemOptions {
            model: Some(&model),
            cost_model: None,
        },
    )
    .unwrap();
    let mut app = app();
    let standalone_best = app.ranking.prediction.top[0].sypd;
    app.update(key('M'));
    assert!(app
        .ui
        .message
        .as_deref()
        .unwrap()
        .contains("only the standalone model"));
    app.ranking.other_model = Some((calibrated, ModelKind::Calibrated));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    assert!(app.ranking.prediction.top[0].sypd < 0.9 * standalone_best);
    assert!(view::status::status_text(&app).0.contains("M:C"));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Standalone);
    assert_eq!(app.ranking.prediction.top[0].sypd, standalone_best);
}

/// A watched scaling campaign's curves, as they land, redraw the curves pane and re-rank:
/// NEMO measured twice as fast as the built-in curve says makes IFS the bottleneck of every
/// configuration, so the recommendation gives IFS more PEs.
#[test]
fn a_scaling_campaigns_curves_re_rank_the_app_as_they_land() {
    let mut app = app();
    let before = app.ranking.recommended().unwrap().nproc.clone();
    let inputs = example::inputs();
    let faster: Vec<autolb::curve::Point> = inputs[1]
        .curve
        .as_ref()
        .unwrap()
        .points()
        .iter()
        .map(|p| autolb::curve::Point {
            nproc: p.nproc,
            sypd: 2.0 * p.sypd,
        })
        .collect();
    let nemo = Curve::from_points("NEMO", "curves/NEMO.csv", &faster).unwrap();
    let ifs = inputs[0].curve.clone().unwrap();
    app.update(Event::Campaign(Box::new(CampaignView {
        curves: Some(vec![ifs, nemo.clone()]),
        ..CampaignView::default()
    })));
    assert_eq!(app.ranking.inputs[1].curve.as_ref(), Some(&nemo));
    let top = app.ranking.curves[1].measured.iter().map(|p| p.1);
    assert!(top.clone().zip(faster.iter()).all(|(a, b)| a == b.sypd));
    let after = app.ranking.recommended().unwrap().nproc.clone();
    assert!(after[0] > before[0], "{before:?} -> {after:?}");
    assert!(app
        .ui
        .message
        .as_deref()
        .unwrap_or("")
        .contains("re-ranked"));
}

#[test]
fn the_top_n_of_a_threaded_prediction_shows_ranks_x_threads() {
    let curve = |threads: u32, points: &[(u32, f64)]| {
        let points: Vec<autolb::curve::Point> = points
            .iter()
            .map(|&(nproc, sypd)| autolb::curve::Point { nproc, sypd })
            .collect();
        autolb::curve::Curve::from_points("OIFS", "t", &points)
            .unwrap()
            .with_threads(std::num::NonZeroU32::new(threads).unwrap())
    };
    let oifs = autolb::predict::ComponentInput::threaded(
        vec![
            curve(1, &[(16, 2.0), (64, 6.0), (128, 6.5)]),
            curve(4, &[(8, 3.0), (32, 9.0)]),
        ],
        None,
    )
    .unwrap();
    let mut inputs = example::inputs();
    inputs[0] = oifs;
    let settings = autolb::predict::Settings {
        max_nproc: 400,
        step: 8,
        tts_w: 1.0,
        ..example::settings()
    };
    let problem = Problem::new(&inputs, &settings).unwrap();
    let best = problem.rank(1.0, 1).top[0].clone();
    assert_eq!(best.threads[0], 4);
    let app = App::new(
        problem,
        &inputs,
        KeyTable::default(),
        Theme::new(ColorDepth::Mono),
        source(),
        std::env::temp_dir(),
        "threaded".into(),
    );
    let screen = text(&draw(&app, 140, 50));
    let cell = format!("{}x4", best.nproc[0] / 4);
    assert!(screen.contains(&cell), "{cell} not in\n{screen}");
    // The recommendation line names it as `predict` does: ranks x threads, not cores.
    let line = view::status::best_text(&app);
    assert!(line.contains(&format!("OIFS {cell}")), "{line}");
    // The cursor starts on the recommendation: the matrix's cursor line and the detail view
    // name it the same way, and the detail view gives cores, ranks and threads.
    assert!(
        screen.contains(&format!("OIFS {cell} + NEMO")),
        "matrix cursor line:\n{screen}"
    );
    let detail = view::detail::config_lines(&app, &app.matrix.cursor.clone()).join("\n");
    assert!(detail.starts_with(&format!("OIFS {cell}")), "{detail}");
    let cores = best.nproc[0];
    assert!(
        detail.contains(&format!("{cores} PEs ({} ranks x 4 threads)", cores / 4)),
        "{detail}"
    );
}
