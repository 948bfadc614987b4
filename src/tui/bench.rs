//! The redraw budgets: a TTS_w change on a 100x100 matrix, re-ranked, rescored and drawn, and a
//! budget change (`{`/`}`) at 2 components, step 1, max_nproc 2000, re-predicted from scratch
//! ([`Problem::build`] on the new budget, as `predict` does) and drawn; each under 16 ms (one
//! frame at 60 Hz). Timing tests are ignored by default (a loaded CI machine says nothing about
//! the code); run in release and read the figures:
//!
//! ```sh
//! cargo test --release --bin autolb tui::bench -- --ignored --nocapture
//! ```

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use autolb::curve::{Curve, Point};
use autolb::machine::{CostKind, CostModel, Machine, Placement};
use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};

use super::app::App;
use super::keys::KeyTable;
use super::selection::SelectionSource;
use super::tests::key;
use super::theme::{ColorDepth, Theme};
use super::view;

/// Two synthetic components (ATM and a faster-scaling OCE) measured at `nproc`: a power law
/// with a saturation, the shape of a real scalability curve.
fn synthetic_pair(nproc: &[u32]) -> Vec<ComponentInput> {
    let curve = |name: &str, scale: f64| {
        let points: Vec<Point> = nproc
            .iter()
            .map(|&p| Point {
                nproc: p,
                sypd: scale * f64::from(p).powf(0.85) / (1.0 + f64::from(p) / 3000.0),
            })
            .collect();
        Curve::from_points(name, "synthetic", &points).expect("valid synthetic curve")
    };
    vec![
        ComponentInput::new(curve("ATM", 0.9)),
        ComponentInput::new(curve("OCE", 1.4)),
    ]
}

/// A synthetic two-component problem with exactly 100 candidates per component.
pub fn problem_100x100() -> (Problem, Vec<ComponentInput>) {
    let inputs = synthetic_pair(&[10, 50, 100, 200, 400, 700, 1000]);
    let settings = Settings {
        max_nproc: 1500,
        step: 10,
        ..Settings::default()
    };
    let problem = Problem::new(&inputs, &settings).expect("valid synthetic problem");
    (problem, inputs)
}

/// The app on `problem`, in truecolor (the most expensive colours to draw).
fn app_on(problem: Problem, inputs: &[ComponentInput], title: &str) -> App {
    App::new(
        problem,
        inputs,
        KeyTable::default(),
        Theme::new(ColorDepth::TrueColor),
        SelectionSource::default(),
        std::env::temp_dir(),
        title.into(),
    )
}

/// Times `n` TTS_w changes (update + full redraw) on a `w` x `h` screen; returns the sorted
/// durations.
pub fn time_changes(w: u16, h: u16, n: usize) -> Vec<Duration> {
    let (problem, inputs) = problem_100x100();
    assert_eq!(problem.components[0].nproc.len(), 100);
    assert_eq!(problem.components[1].nproc.len(), 100);
    let mut app = app_on(problem, &inputs, "bench");
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    terminal.draw(|f| view::render(&app, f)).expect("draw");
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        // Sweep up and down so every change really changes TTS_w.
        let c = if (i / 20) % 2 == 0 { '+' } else { '-' };
        let start = Instant::now();
        app.update(key(c));
        terminal.draw(|f| view::render(&app, f)).expect("draw");
        times.push(start.elapsed());
    }
    times.sort();
    times
}

#[test]
fn a_full_size_100x100_matrix_is_drawn_cell_for_cell() {
    // 250x220 leaves the matrix room for one screen cell per candidate.
    let (problem, inputs) = problem_100x100();
    let app = app_on(problem, &inputs, "x");
    let area = ratatui::layout::Rect::new(0, 0, 250, 104);
    let g = view::matrix::geometry_for(&app.matrix, area).expect("fits");
    assert!(g.rows.iter().chain(&g.cols).all(|r| r.len() == 1));
    assert_eq!((g.rows.len(), g.cols.len()), (100, 100));
    let times = time_changes(250, 220, 3);
    assert_eq!(times.len(), 3);
}

#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn tts_w_change_on_a_100x100_matrix_within_a_frame() {
    let mut over = Vec::new();
    for (w, h) in [(250u16, 220u16), (200, 60), (120, 40)] {
        let times = time_changes(w, h, 200);
        let median = times[times.len() / 2];
        let p95 = times[times.len() * 95 / 100];
        let max = times[times.len() - 1];
        println!(
            "TTS_w change + redraw, 100x100 matrix, {w}x{h} screen: median {:.2} ms, p95 {:.2} ms, max {:.2} ms",
            median.as_secs_f64() * 1e3,
            p95.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        );
        if p95 >= Duration::from_millis(16) {
            over.push(format!("p95 {p95:?} over one frame at {w}x{h}"));
        }
    }
    assert!(over.is_empty(), "{over:?}");
}

#[test]
#[ignore = "timing"]
fn frame_cost_of_the_example() {
    let inputs = autolb::example::inputs();
    let problem = Problem::new(&inputs, &autolb::example::settings()).unwrap();
    let app = app_on(problem, &inputs, "x");
    let mut terminal = Terminal::new(TestBackend::new(150, 45)).unwrap();
    let start = Instant::now();
    for _ in 0..100 {
        terminal.draw(|f| view::render(&app, f)).unwrap();
    }
    println!("frame: {:.2} ms", start.elapsed().as_secs_f64() * 10.0);
}

/// Two synthetic components measured from 24 to 2000 PEs, at step 1 with a budget of 2000:
/// 1977 candidates each, a 3.9-million-configuration matrix (the issue's benchmark case).
pub fn problem_step1_2000(cost_model: &CostModel) -> (Problem, Vec<ComponentInput>) {
    let inputs = synthetic_pair(&[24, 100, 400, 1000, 2000]);
    let settings = Settings {
        max_nproc: 2000,
        step: 1,
        extra_pes: 96,
        ..Settings::default()
    };
    let problem = Problem::build(
        &inputs,
        &settings,
        ProblemOptions {
            model: None,
            cost_model: Some(cost_model),
        },
    )
    .expect("valid synthetic problem");
    (problem, inputs)
}

/// The cost models the budget benchmark runs: none (core-hours, `{`/`}` move by 1 PE), and a
/// 48-core machine billing node-hours, packed and per component (`{`/`}` move by one node).
pub fn bench_cost_models() -> Vec<(&'static str, CostModel)> {
    let machine = |placement| Machine {
        cores_per_node: 48,
        placement,
        extras_share_node: true,
        node_power_w: Some(450.0),
    };
    vec![
        ("no machine, step 1", CostModel::default()),
        (
            "node-hours, packed",
            CostModel {
                machine: Some(machine(Placement::Packed)),
                cost: CostKind::NodeHours,
                ..CostModel::default()
            },
        ),
        (
            "node-hours, per-component",
            CostModel {
                machine: Some(machine(Placement::PerComponent)),
                cost: CostKind::NodeHours,
                ..CostModel::default()
            },
        ),
    ]
}

/// Times `n` budget keys (update, which re-predicts, then a full redraw) on a `w` x `h` screen,
/// sweeping down and up around 2000 so every key changes the budget; returns the sorted
/// durations and checks the prediction really followed each key.
pub fn time_budget_changes(cost_model: &CostModel, w: u16, h: u16, n: usize) -> Vec<Duration> {
    let (problem, inputs) = problem_step1_2000(cost_model);
    assert!(problem.components.iter().all(|c| c.nproc.len() > 1900));
    let mut app = app_on(problem, &inputs, "bench");
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    terminal.draw(|f| view::render(&app, f)).expect("draw");
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let c = if (i / 10) % 2 == 0 { '{' } else { '}' };
        let before = app.ranking.problem.settings.max_nproc;
        let start = Instant::now();
        app.update(key(c));
        terminal.draw(|f| view::render(&app, f)).expect("draw");
        times.push(start.elapsed());
        assert_ne!(
            app.ranking.problem.settings.max_nproc, before,
            "{:?}",
            app.ui.error
        );
        assert!(app
            .ranking
            .prediction
            .top
            .iter()
            .all(|t| t.nproc.iter().sum::<u32>() <= app.ranking.problem.settings.max_nproc));
    }
    times.sort();
    times
}

#[test]
fn a_budget_change_at_step_1_re_predicts_and_draws() {
    for (_, model) in bench_cost_models() {
        let times = time_budget_changes(&model, 120, 40, 2);
        assert_eq!(times.len(), 2);
    }
}

#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn budget_change_at_step_1_and_2000_pes_within_a_frame() {
    let mut over = Vec::new();
    for (label, model) in bench_cost_models() {
        for (w, h) in [(80u16, 24u16), (120, 40), (200, 60)] {
            let times = time_budget_changes(&model, w, h, 60);
            let median = times[times.len() / 2];
            let max = times[times.len() - 1];
            println!(
                "budget change + re-prediction + redraw, 2 components, step 1, max_nproc 2000, {label}, {w}x{h}: median {:.2} ms, max {:.2} ms",
                median.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3
            );
            if median >= Duration::from_millis(16) {
                over.push(format!(
                    "{label}: median {median:?} over one frame at {w}x{h}"
                ));
            }
        }
    }
    assert!(over.is_empty(), "{over:?}");
}

#[test]
#[ignore = "timing"]
fn budget_change_breakdown() {
    let model = CostModel::default();
    let (problem, inputs) = problem_step1_2000(&model);
    let app = app_on(problem.clone(), &inputs, "bench");
    let settings = Settings {
        max_nproc: 1999,
        ..problem.settings.clone()
    };
    let t = |label: &str, f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..20 {
            f();
        }
        println!(
            "{label}: {:.2} ms",
            start.elapsed().as_secs_f64() * 1e3 / 20.0
        );
    };
    let mut p2 = None;
    t("Problem::build", &mut || {
        p2 = Some(
            Problem::build(
                &inputs,
                &settings,
                ProblemOptions {
                    model: None,
                    cost_model: Some(&model),
                },
            )
            .unwrap(),
        )
    });
    let p2 = p2.unwrap();
    t("rank", &mut || {
        let _ = p2.rank(0.5, 5);
    });
    t("trade_off", &mut || {
        let _ = p2.trade_off(0.5);
    });
    t("cloud", &mut || {
        let _ = crate::tui::slice::cloud_points_of(&p2, &app.matrix.grid, &app.matrix.cursor, 0.5);
    });
    for (w, h) in [(80u16, 24u16), (200, 60)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        t(&format!("draw {w}x{h}"), &mut || {
            terminal.draw(|f| view::render(&app, f)).unwrap();
        });
    }
    let mut app = app;
    let mut k = 0;
    t("update {/}", &mut || {
        k += 1;
        app.update(key(if k % 2 == 0 { '{' } else { '}' }));
    });
    let mut k = 0;
    t("set_tts", &mut || {
        k += 1;
        app.update(key(if k % 2 == 0 { '+' } else { '-' }));
    });
    let mut k = 0;
    t("replace_problem", &mut || {
        k += 1;
        let p = Problem::build(
            &inputs,
            &settings,
            ProblemOptions {
                model: None,
                cost_model: Some(&model),
            },
        )
        .unwrap();
        app.replace_problem(p);
    });
}

/// The app on the lucia_lite runs (30 real EC-Earth3 SR runs) with the calibrated model shown,
/// at step 1 and a budget of 2000 PEs: with the MN4 SR reduced curves, or (`curves` false)
/// with no curve at all, both components learned from the runs.
pub fn calibrated_app(curves: bool) -> App {
    use autolb::model::measured::{load_runs_dir, Naming};
    use autolb::model::Model;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
    let (runs, _) = load_runs_dir(&root.join("tests/fixtures/lucia_lite"), &names, None)
        .expect("the bundled runs");
    let inputs: Vec<ComponentInput> = if curves {
        ["ifs", "nemo"]
            .iter()
            .zip(["IFS", "NEMO"])
            .map(|(file, name)| {
                let path = root.join(format!("assets/curves/mn4_sr_reduced_{file}.csv"));
                ComponentInput::new(Curve::load(name, &path).expect("a bundled curve"))
            })
            .collect()
    } else {
        vec![
            ComponentInput::without_curve("IFS", 48, 2000),
            ComponentInput::without_curve("NEMO", 48, 2000),
        ]
    };
    let settings = Settings {
        max_nproc: 2000,
        step: 1,
        ..Settings::default()
    };
    let (model, _) = Model::fit(&inputs, settings.interp, &runs);
    assert!(model.is_calibrated());
    let problem = Problem::build(
        &inputs,
        &settings,
        ProblemOptions {
            model: Some(&model),
            cost_model: None,
        },
    )
    .expect("a valid problem");
    let mut app = app_on(problem, &inputs, "bench");
    app.start_calibrated(super::calibration::Calibration { model, runs });
    app
}

/// Times `n` keys on the calibrated app (update, then a full redraw at `w` x `h`), sweeping
/// down and up so each changes something; returns the sorted durations.
pub fn time_calibrated_keys(curves: bool, keys: [char; 2], n: usize) -> Vec<Duration> {
    let mut app = calibrated_app(curves);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("test backend");
    terminal.draw(|f| view::render(&app, f)).expect("draw");
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let c = keys[(i / 10) % 2];
        let start = Instant::now();
        app.update(key(c));
        terminal.draw(|f| view::render(&app, f)).expect("draw");
        times.push(start.elapsed());
        assert!(app.ui.error.is_none(), "{:?}", app.ui.error);
    }
    times.sort();
    times
}

#[test]
fn the_calibrated_app_re_ranks_on_tts_w_and_budget_keys() {
    for curves in [true, false] {
        let app = calibrated_app(curves);
        assert!(!app.ranking.prediction.top.is_empty());
        assert_eq!(time_calibrated_keys(curves, ['+', '-'], 2).len(), 2);
        assert_eq!(time_calibrated_keys(curves, ['{', '}'], 2).len(), 2);
    }
}

#[test]
#[ignore = "timing: run in release with --ignored --nocapture"]
fn calibrated_keys_at_step_1_and_2000_pes_within_a_frame() {
    let mut over = Vec::new();
    for curves in [true, false] {
        let label = if curves {
            "with curves"
        } else {
            "without curves"
        };
        for (what, keys) in [("TTS_w", ['+', '-']), ("budget", ['{', '}'])] {
            let times = time_calibrated_keys(curves, keys, 40);
            let median = times[times.len() / 2];
            let max = times[times.len() - 1];
            println!(
                "calibrated model on lucia_lite ({label}), step 1, max_nproc 2000, {what} key + re-rank + redraw at 120x40: median {:.2} ms, max {:.2} ms",
                median.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3
            );
            if median >= Duration::from_millis(16) {
                over.push(format!("{label}, {what}: median {median:?} over one frame"));
            }
        }
    }
    assert!(over.is_empty(), "{over:?}");
}
