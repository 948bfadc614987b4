//! The budget slider (`{`/`}`), the cost selector (`$`) and the machine in the app: the same
//! numbers as `autolb predict` at the same settings, queue greying, the detail view's bill, the
//! model switch at a moved budget, key rebinding, and whole-screen snapshots with a machine.

use std::path::{Path, PathBuf};

use autolb::machine::CostKind;
use autolb::predict::{predict_billed, Cell, Problem, ProblemOptions};

use super::app::App;
use super::args::TuiArgs;
use super::effect::Effect;
use super::keys::{Action, KeyTable};
use super::ranking::ModelKind;
use super::tests::{app, draw, key, special, text};
use super::theme::{ColorDepth, Theme};
use super::ui::Overlay;
use super::view;
use crate::shared::prediction_flags::{self, PredictionFlags};

fn asset() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/machine-cmip6.toml")
}

/// The CMIP6 machine file without its chosen queue: every configuration is told the smallest
/// queue it fits, and the ones that fit none are greyed. Written next to a copy of the curves'
/// paths made absolute.
fn open_queue_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let assets = asset().parent().unwrap().to_path_buf();
    let text = std::fs::read_to_string(asset())
        .unwrap()
        .replace("use_queue = \"debug\"\n", "")
        .replace(
            "curve = \"curves/",
            &format!("curve = \"{}/curves/", assets.display()),
        );
    let path = dir.path().join("machine.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn flags(config: &Path) -> PredictionFlags {
    PredictionFlags {
        config: Some(config.to_path_buf()),
        ..PredictionFlags::default()
    }
}

/// The app as `autolb tui --config FILE` builds it (same resolution as `run`).
fn app_from(flags: PredictionFlags, keys: KeyTable) -> App {
    let args = TuiArgs {
        prediction: flags,
        ..TuiArgs::default()
    };
    let setup = super::resolve(&args).unwrap();
    let cost_model = prediction_flags::resolve_cost_model(&args.prediction).unwrap();
    let problem = Problem::build(
        &setup.inputs,
        &setup.settings,
        ProblemOptions {
            model: None,
            cost_model: Some(&cost_model),
        },
    )
    .unwrap();
    App::new(
        problem,
        &setup.inputs,
        keys,
        Theme::new(ColorDepth::Mono),
        setup.source,
        std::env::temp_dir(),
        "machine-cmip6.toml".into(),
    )
}

/// What `autolb predict --config FILE --max-nproc B [--cost C]` computes: the same flag
/// resolution and [`predict_billed`] call as `cli::predict::run`.
fn predicted(
    mut flags: PredictionFlags,
    budget: u32,
    cost: CostKind,
) -> autolb::predict::Prediction {
    flags.max_nproc = Some(budget);
    flags.cost = Some(cost);
    let (inputs, settings) = prediction_flags::resolve(&flags).unwrap();
    let cost_model = prediction_flags::resolve_cost_model(&flags).unwrap();
    predict_billed(&inputs, &settings, &cost_model).unwrap()
}

fn assert_same_as_predict(app: &App, config: &Path) {
    let b = app.ranking.problem.settings.max_nproc;
    let want = predicted(flags(config), b, app.ranking.problem.cost_model.cost);
    assert_eq!(
        app.ranking.prediction.configurations, want.configurations,
        "budget {b}"
    );
    assert_eq!(
        app.ranking.prediction.considered, want.considered,
        "budget {b}"
    );
    assert_eq!(app.ranking.prediction.top, want.top, "budget {b}");
    assert_eq!(app.ranking.prediction.baseline, want.baseline, "budget {b}");
    // The slider says the counts `predict` prints under its table.
    let line = view::slider::budget_line(app, 200).to_string();
    assert!(
        line.contains(&format!("budget {b} PEs"))
            && line.contains(&format!(
                "{} feasible, {} kept",
                want.configurations, want.considered
            )),
        "{line}"
    );
}

#[test]
fn the_budget_moves_by_one_node_and_matches_predict_at_every_step() {
    let config = asset();
    let mut app = app_from(flags(&config), KeyTable::default());
    assert_eq!(app.ranking.problem.settings.max_nproc, 672);
    assert_same_as_predict(&app, &config);
    let mut seen = vec![app.ranking.prediction.top.clone()];
    for (k, want) in [
        ('}', 720),
        ('}', 768),
        ('{', 720),
        ('{', 672),
        ('{', 624),
        ('{', 576),
    ] {
        app.update(key(k));
        assert_eq!(app.ranking.problem.settings.max_nproc, want, "after {}", k);
        assert!(app.ui.error.is_none(), "{:?}", app.ui.error);
        assert_same_as_predict(&app, &config);
        seen.push(app.ranking.prediction.top.clone());
    }
    // The recommendation follows the budget: a smaller budget proposes smaller jobs.
    assert_ne!(seen[0], seen[6]);
    assert!(app
        .ranking
        .prediction
        .top
        .iter()
        .all(|c| c.nproc.iter().sum::<u32>() <= 576));
    // The status line and the message say the budget.
    let (status, _) = view::status::status_text(&app);
    assert!(
        status.contains("budget 576 PEs (14 nodes with the extras) ({/}) · node-hours ($)"),
        "{status}"
    );
    // The budget key's message takes the budget's place: the budget shows once.
    assert_eq!(status.matches("budget").count(), 1, "{status}");
    assert!(
        app.ui
            .message
            .as_deref()
            .unwrap()
            .contains("576 PEs (14 nodes"),
        "{:?}",
        app.ui.message
    );
}

#[test]
fn without_a_machine_the_budget_moves_by_the_step_and_stops_at_the_base_case() {
    let mut app = app();
    let step = app.ranking.problem.settings.step;
    let start = app.ranking.problem.settings.max_nproc;
    app.update(key('}'));
    assert_eq!(app.ranking.problem.settings.max_nproc, start + step);
    let base: u32 = app.ranking.problem.baseline_nproc.iter().sum();
    for _ in 0..200 {
        app.update(key('{'));
    }
    assert_eq!(app.ranking.problem.settings.max_nproc, base);
    assert!(
        app.ui.message.as_deref().unwrap().contains("base case"),
        "{:?}",
        app.ui.message
    );
    // At the base case only the base case is feasible, and the matrix says so.
    assert_eq!(app.ranking.prediction.configurations, 1);
    assert!(matches!(
        app.ranking.problem.cell(&[1, 0], app.ranking.tts_w()),
        Cell::OverBudget
    ));
    for _ in 0..500 {
        app.update(key('}'));
    }
    let (_, high) = super::budget::budget_range(&app.ranking.problem, &app.ranking.inputs);
    assert_eq!(app.ranking.problem.settings.max_nproc, high);
    assert!(
        app.ui.message.as_deref().unwrap().contains("largest"),
        "{:?}",
        app.ui.message
    );
    // Without a machine there is only one cost.
    app.update(key('$'));
    assert!(app
        .ui
        .message
        .as_deref()
        .unwrap()
        .contains("only core-hours"));
}

#[test]
fn the_cost_key_cycles_the_defined_costs_and_ranks_as_predict_does() {
    let config = asset();
    let mut app = app_from(flags(&config), KeyTable::default());
    app.update(key('}'));
    let mut costs = vec![app.ranking.problem.cost_model.cost];
    for _ in 0..3 {
        app.update(key('$'));
        assert!(app.ui.error.is_none(), "{:?}", app.ui.error);
        costs.push(app.ranking.problem.cost_model.cost);
        assert_same_as_predict(&app, &config);
        // The top list's cost column is the chosen cost.
        let c = &app.ranking.prediction.top[0];
        assert_eq!(c.cost(), c.billing.as_ref().unwrap().cost);
    }
    assert_eq!(
        costs,
        [
            CostKind::NodeHours,
            CostKind::Energy,
            CostKind::CoreHours,
            CostKind::NodeHours
        ]
    );
    // Energy is in kWh per simulated year: 450 W nodes.
    app.update(key('$'));
    let c = app.ranking.prediction.top[0].clone();
    let b = c.billing.as_ref().unwrap();
    assert!((b.cost - 24.0 * f64::from(b.nodes) * 0.45 / c.sypd).abs() < 1e-9);
    let screen = text(&draw(&app, 120, 40));
    assert!(screen.contains("kWh/SY"), "{screen}");
    assert!(
        screen.contains("Trade-off") || screen.contains("cost energy"),
        "{screen}"
    );
}

#[test]
fn configurations_that_fit_no_queue_are_greyed_and_the_detail_view_bills_them() {
    let (_dir, config) = open_queue_file();
    let mut app = app_from(flags(&config), KeyTable::default());
    assert!(app.ranking.problem.cost_model.queue.is_none());
    // The base case runs below 5 SYPD: too slow for main's 10-year chunks in 48 h, and for
    // debug's 1 year in 2 h.
    let base = app.ranking.problem.baseline(app.ranking.tts_w());
    assert!(base.sypd < 5.0, "{base:?}");
    assert!(app.ranking.fits_no_queue(&base.nproc, base.sypd));
    let screen = text(&draw(&app, 120, 40));
    assert!(screen.contains('×'), "{screen}");
    assert!(screen.contains("× no queue"), "{screen}");
    // The recommendation fits debug: the detail view gives nodes, idle cores and the queue.
    app.update(special(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    ));
    let Overlay::Config(index) = app.ui.overlay.clone() else {
        panic!("{:?}", app.ui.overlay)
    };
    let lines = view::detail::config_lines(&app, &index).join("\n");
    let bill = app
        .ranking
        .problem
        .score(&index, app.ranking.tts_w())
        .billing
        .unwrap();
    assert!(
        lines.contains(&format!(
            "nodes {} of 48 cores   billed cores {}   idle cores {}",
            bill.nodes, bill.billed_cores, bill.idle_cores
        )),
        "{lines}"
    );
    assert!(lines.contains("smallest queue it fits: debug"), "{lines}");
    // The cursor on the base case: greyed, and said so.
    app.ui.overlay = Overlay::None;
    app.matrix.cursor = vec![0; 2];
    let screen = text(&draw(&app, 120, 40));
    assert!(screen.contains("fits no queue"), "{screen}");
    let lines = view::detail::config_lines(&app, &[0, 0]).join("\n");
    assert!(lines.contains("fits no queue"), "{lines}");
}

#[test]
fn m_after_a_budget_change_switches_to_the_other_model_at_that_budget_and_the_front_follows() {
    let mut app = super::calibration_tests::calibrated_app();
    let standalone_front = app.trade_off.front.clone();
    for _ in 0..4 {
        app.update(key('{'));
    }
    let budget = app.ranking.problem.settings.max_nproc;
    let shrunk_front = app.trade_off.front.clone();
    assert_ne!(
        standalone_front, shrunk_front,
        "the front follows the budget"
    );
    assert!(shrunk_front
        .iter()
        .all(|c| c.nproc.iter().sum::<u32>() <= budget));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    assert_eq!(app.ranking.problem.settings.max_nproc, budget);
    let model = app.ranking.calibration.as_ref().unwrap().model.clone();
    let want = Problem::build(
        &app.ranking.inputs,
        &app.ranking.problem.settings,
        ProblemOptions {
            model: Some(&model),
            cost_model: None,
        },
    )
    .unwrap();
    assert_eq!(
        app.ranking.prediction.top,
        want.rank(app.ranking.tts_w(), app.ranking.top).top
    );
    assert_eq!(app.trade_off.front, want.front(want.settings.tts_w));
    assert_ne!(
        app.trade_off.front, shrunk_front,
        "the front follows the model"
    );
    // Moving the budget with the calibrated model shown re-predicts with that model.
    app.update(key('}'));
    let settings = app.ranking.problem.settings.clone();
    assert_eq!(settings.max_nproc, budget + settings.step);
    let want = Problem::build(
        &app.ranking.inputs,
        &settings,
        ProblemOptions {
            model: Some(&model),
            cost_model: None,
        },
    )
    .unwrap();
    assert_eq!(
        app.ranking.prediction.top,
        want.rank(app.ranking.tts_w(), app.ranking.top).top
    );
    app.update(key('{'));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Standalone);
    assert_eq!(app.trade_off.front, shrunk_front);
}

#[test]
fn marks_outside_a_lowered_budget_stay_but_are_not_written() {
    let mut app = super::tests::app();
    let big = app.ranking.prediction.top[0].nproc.clone();
    app.update(key(' '));
    app.update(key('g'));
    for _ in 0..12 {
        app.update(key('{'));
    }
    assert!(big.iter().sum::<u32>() > app.ranking.problem.settings.max_nproc);
    let small = app.ranking.prediction.top[0].nproc.clone();
    app.update(key('g'));
    app.update(key(' '));
    assert_eq!(app.matrix.marked, vec![big.clone(), small.clone()]);
    let written: Vec<Vec<u32>> = app.selection().into_iter().map(|c| c.nproc).collect();
    assert_eq!(written, vec![small]);
    let Some(Effect::WriteSelection { selection, from }) = app.update(key('w')) else {
        panic!("w asks for the selection to be written");
    };
    assert_eq!(from, "1 marked (1 over the budget left out)");
    assert_eq!(selection.configs, app.selection());
}

#[test]
fn budget_and_cost_keys_are_in_the_table_do_not_clash_and_can_be_rebound() {
    let t = KeyTable::default();
    for a in [Action::BudgetUp, Action::BudgetDown, Action::CycleCost] {
        assert_eq!(t.keys(a).len(), 1, "{a:?}");
    }
    assert_eq!(t.label(Action::BudgetUp), "}");
    assert_eq!(t.label(Action::BudgetDown), "{");
    assert_eq!(t.label(Action::CycleCost), "$");
    assert_eq!(t.label(Action::Mark), "space");
    assert_eq!(t.label(Action::ToggleModel), "M");
    let help = t.help_rows();
    assert!(help.iter().any(|(k, d)| k == "}" && d.contains("budget")));
    let rebound = KeyTable::default()
        .with_overrides(
            "budget_up = \"B\"\nbudget_down = \"b\"\ncost = \"e\"\n",
            "keys.toml",
        )
        .unwrap();
    let config = asset();
    let mut app = app_from(flags(&config), rebound);
    app.update(key('}'));
    assert_eq!(
        app.ranking.problem.settings.max_nproc, 672,
        "}} is no longer bound"
    );
    app.update(key('B'));
    assert_eq!(app.ranking.problem.settings.max_nproc, 720);
    app.update(key('b'));
    app.update(key('b'));
    assert_eq!(app.ranking.problem.settings.max_nproc, 624);
    app.update(key('e'));
    assert_eq!(app.ranking.problem.cost_model.cost, CostKind::Energy);
    // The slider names the rebound keys.
    let line = view::slider::budget_line(&app, 200).to_string();
    assert!(
        line.contains("b/B ±48 (a node)") && line.contains("cost energy e"),
        "{line}"
    );
    let e = KeyTable::default()
        .with_overrides("cost = \"M\"\n", "keys.toml")
        .unwrap_err();
    assert!(e.contains("both"), "{e}");
}

#[test]
fn snapshots_with_a_machine_a_moved_budget_another_cost_and_greyed_queues() {
    let (_dir, config) = open_queue_file();
    let mut app = app_from(flags(&config), KeyTable::default());
    app.update(key('{'));
    app.update(key('{'));
    app.update(key('$'));
    assert_eq!(app.ranking.problem.settings.max_nproc, 576);
    assert_eq!(app.ranking.problem.cost_model.cost, CostKind::Energy);
    for (w, h) in [(80, 24), (140, 45)] {
        let screen = text(&draw(&app, w, h));
        insta::assert_snapshot!(format!("machine_budget_{w}x{h}"), screen);
    }
    // The trade-off pane on the bill.
    for _ in 0..4 {
        app.update(special(
            crossterm::event::KeyCode::Tab,
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    let screen = text(&draw(&app, 80, 24));
    insta::assert_snapshot!("machine_trade_off_80x24", screen);
}
