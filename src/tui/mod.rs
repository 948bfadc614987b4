//! The terminal app (ratatui): curves, a live fittingness matrix with a TTS_w slider, the top N,
//! and the iteration table of a campaign being watched.
//!
//! Shape: threads (terminal input, watcher, slow tick, signals, demo campaign) feed one
//! [`event::Event`] channel; the main loop blocks on it, applies each event with
//! [`app::App::update`] and redraws. Nothing redraws without an event, so an idle app sleeps.
//! A key that writes files makes `update` return an [`effect::Effect`]; the loop runs it and
//! feeds its outcome back as an event, so the app itself does no I/O.
//! The view ([`view`]) is a pure function of the state.

pub mod app;
pub mod args;
pub mod budget;
pub mod calibration;
pub mod campaign_view;
pub mod demo;
pub mod effect;
pub mod emit;
pub mod event;
pub mod keys;
pub mod layout_screen;
pub mod logs;
pub mod matrix;
pub mod pane;
pub mod ranking;
pub mod report;
pub mod selection;
pub mod slice;
pub mod table;
pub mod theme;
pub mod trade_off;
pub mod ui;
pub mod view;
pub mod waiting;

#[cfg(test)]
mod bench;
#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod calibration_tests;
#[cfg(test)]
mod effect_tests;
#[cfg(test)]
pub(crate) mod emit_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod matrix_tests;
#[cfg(test)]
mod picture_tests;
#[cfg(test)]
mod scaling_tests;
#[cfg(test)]
mod screen_html;
#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod status_line_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trade_off_tests;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use color_eyre::eyre::{eyre, Result, WrapErr};
use ratatui::backend::Backend;
use ratatui::Terminal;

use autolb::config::CampaignFile;
use autolb::example;
use autolb::machine::CostModel;
use autolb::predict::on_layout::TreePrediction;
use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};
use autolb::watch::{self, WatchOptions};

use crate::shared::error::user;
use crate::shared::prediction_flags::{self, PredictionFlags};
use app::App;
use args::TuiArgs;
use calibration::Calibration;
use campaign_view::{Loader, LoaderComponent};
use event::Event;
use keys::KeyTable;
use selection::{CurveSource, SelectionSource, SourceComponent};
use theme::{ColorDepth, Theme};

/// Coupling period of the EC-Earth3 SR example: 2700 simulated seconds (45 minutes) per coupling
/// step; the app uses it for the built-in example unless `--period` gives another.
const EXAMPLE_PERIOD_S: f64 = 2700.0;

/// What the app shows, resolved from the arguments.
pub struct Setup {
    pub inputs: Vec<ComponentInput>,
    pub settings: Settings,
    /// The components as a written campaign file needs them; also where the watcher finds
    /// each component's timing name and the coupling period.
    pub source: SelectionSource,
    pub title: String,
    /// The directory to watch, if any.
    pub watch_dir: Option<PathBuf>,
}

/// Opens the app.
pub fn run(args: &TuiArgs) -> Result<()> {
    // Bad input first (one line, exit code 2), before anything touches the terminal.
    let demo_wanted = is_demo(args) && !args.no_demo_campaign;
    let keys = match &args.keys {
        Some(named) => KeyTable::load_named(named),
        None => KeyTable::load(KeyTable::user_file().as_deref()),
    }
    .map_err(user)?;
    use std::io::IsTerminal;
    let interactive = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    // A campaign that measures its curves and has not measured two counts of each yet: wait
    // for them on a status screen (see `waiting`) instead of refusing to open.
    if let Some(dir) = campaign_only(args) {
        if interactive
            && !waiting::curves_pending(dir).is_empty()
            && waiting::wait(dir, &keys)? == waiting::Waited::Quit
        {
            return Ok(());
        }
    }
    let resolved = if demo_wanted {
        None
    } else {
        Some(resolve(args)?)
    };
    // A file with a layout tree opens the layout screen: its placements ranked.
    if let Some(setup) = &resolved {
        if let Some(prediction) = layout_prediction(args, setup)? {
            if !interactive {
                return Err(user(NEEDS_A_TERMINAL));
            }
            return run_layout_screen(args, prediction, keys, setup.title.clone());
        }
    }
    // A calibrated model from --measured/--model: bad input is refused here too.
    let early_model = match &resolved {
        Some(setup) => calibrated_problem(args, setup)?,
        None => None,
    };
    if !interactive {
        return Err(user(NEEDS_A_TERMINAL));
    }
    let (tx, rx) = mpsc::channel::<Event>();
    // The demo campaign (and its directory) lives as long as this function.
    let (setup, demo) = match resolved {
        Some(setup) => (setup, None),
        None => {
            let demo = demo::start(
                tx.clone(),
                args.demo_compression.unwrap_or(demo::DEMO_COMPRESSION),
            )
            .map_err(|e| eyre!("cannot start the demo campaign: {e}"))?;
            (demo_setup(args, &demo)?, Some(demo))
        }
    };
    let theme = Theme::new(ColorDepth::detect(args.no_color, |k| std::env::var(k).ok()));
    // The machine, cost and queue flags (or the file's [machine]) bill the matrix's FN.
    let cost_model = prediction_flags::resolve_cost_model(&args.prediction)?;
    let mut calibrated = match early_model {
        Some(p) => Some(p),
        None if demo.is_some() => calibrated_problem(args, &setup)?,
        None => None,
    };
    // A component without a curve has no standalone model: the calibrated one is all there is.
    let only_calibrated = match setup.inputs.iter().find(|c| c.curve.is_none()) {
        Some(c) if calibrated.is_none() => {
            return Err(user(format!(
                "{} has no curve: the app learns it from measured runs; pass --measured PATH \
                 (or --model FILE fitted with it)",
                c.name()
            )))
        }
        Some(_) => calibrated.take(),
        None => None,
    };
    let out_dir = match &args.out {
        Some(d) => d.clone(),
        None => std::env::current_dir().wrap_err("cannot find the current directory")?,
    };
    let view = View {
        keys,
        theme,
        out_dir,
    };
    let mut app = match &only_calibrated {
        Some((p, _)) => {
            p.check_grid_size().map_err(user)?;
            view.open(p.clone(), &setup)
        }
        None => standalone_app(&setup, &cost_model, view)?,
    };
    // Node packings with measured runs: the model `predict --measured` fits for them.
    if app.ranking.groups.is_some() && args.model.wants_model() {
        let prediction = args.prediction.resolve()?;
        let (model, notes) = crate::shared::packing_model::packing_model(&prediction, &args.model)?;
        app.ranking.set_packing_model(model);
        if let Some(n) = notes.first() {
            app.ui.message = Some(format!("node packings: {n}"));
        }
    }
    // Paths on the status line are said relative to where the app was started.
    app.output.cwd = std::env::current_dir().ok();
    if let Some((p, fit)) = calibrated {
        app.ranking.other_model = Some((p, ranking::ModelKind::Calibrated));
        app.toggle_model();
        app.set_training_runs(fit);
    }
    if let Some((_, fit)) = only_calibrated {
        app.start_calibrated(fit);
    }
    let _watcher = match &setup.watch_dir {
        Some(dir) => {
            app.table.campaign.dir = Some(dir.clone());
            app.table.campaign.state = "scanning".into();
            Some(start_watcher(dir, args, &setup, &tx)?)
        }
        None => None,
    };

    event::spawn_signals(tx.clone()).wrap_err("cannot install the signal handlers")?;
    event::spawn_tick(tx.clone(), Duration::from_secs(1));
    event::spawn_input(tx.clone());
    drop(tx);

    let mut terminal = ratatui::try_init().wrap_err("cannot set up the terminal")?;
    let restore = RestoreGuard;
    let result = event_loop(&mut terminal, &mut app, &rx);
    drop(restore);
    drop(demo);
    result
}

/// Why the app does not open without a terminal, and what to use instead.
const NEEDS_A_TERMINAL: &str =
    "the terminal app needs a terminal (stdin or stdout is redirected); for scripts use \
     `autolb predict`, `autolb campaign status --json` or `autolb timing`";

/// The ranking of the file's layout tree, when `--config` gives one; what the layout screen
/// does not do yet is refused in one line.
fn layout_prediction(args: &TuiArgs, setup: &Setup) -> Result<Option<TreePrediction>> {
    let Some((file, _)) = prediction_flags::load_config(&args.prediction)? else {
        return Ok(None);
    };
    let Some(tree) = file.layout_tree().map_err(user)? else {
        return Ok(None);
    };
    let not_yet = |what: &str| {
        Err(user(format!(
            "{what} is not done for a layout tree in the app yet; drop it, or use `autolb predict --config FILE`"
        )))
    };
    if args.model.wants_model() {
        return not_yet("the calibrated model (--measured, --model)");
    }
    if args.campaign.is_some() {
        return not_yet("watching a campaign (--campaign)");
    }
    if !prediction_flags::resolve_cost_model(&args.prediction)?.is_plain() {
        return not_yet("pricing by [machine], cost, queues or [[resource]]");
    }
    TreePrediction::new(&tree, &setup.inputs, &setup.settings)
        .map(Some)
        .map_err(user)
}

/// Runs the layout screen until the user quits.
fn run_layout_screen(
    args: &TuiArgs,
    prediction: TreePrediction,
    keys: KeyTable,
    title: String,
) -> Result<()> {
    let out_dir = match &args.out {
        Some(d) => d.clone(),
        None => std::env::current_dir().wrap_err("cannot find the current directory")?,
    };
    let mut screen = layout_screen::LayoutScreen::new(prediction, keys, out_dir, title);
    screen.cwd = std::env::current_dir().ok();
    let (tx, rx) = mpsc::channel::<Event>();
    event::spawn_signals(tx.clone()).wrap_err("cannot install the signal handlers")?;
    event::spawn_input(tx.clone());
    drop(tx);
    let mut terminal = ratatui::try_init().wrap_err("cannot set up the terminal")?;
    let restore = RestoreGuard;
    let result = layout_screen::event_loop(&mut terminal, &mut screen, &rx);
    drop(restore);
    result
}

/// How the app looks and where it writes: the key table, the colours and the output
/// directory.
pub struct View {
    pub keys: KeyTable,
    pub theme: Theme,
    pub out_dir: PathBuf,
}

impl View {
    /// The app on `problem`, built from `setup`.
    fn open(self, problem: Problem, setup: &Setup) -> App {
        App::new(
            problem,
            &setup.inputs,
            self.keys,
            self.theme,
            setup.source.clone(),
            self.out_dir,
            setup.title.clone(),
        )
    }
}

/// The app on `setup` with the standalone model and the machine, cost and queue of
/// `cost_model`, as `autolb tui --config FILE` opens a file whose components all have curves.
pub fn standalone_app(setup: &Setup, cost_model: &CostModel, view: View) -> Result<App> {
    let problem = Problem::build(
        &setup.inputs,
        &setup.settings,
        ProblemOptions {
            model: None,
            cost_model: Some(cost_model),
        },
    )
    .map_err(user)?;
    problem.check_grid_size().map_err(user)?;
    Ok(view.open(problem, setup))
}

/// The prediction under the calibrated model, when `--measured` or `--model` asks for one.
fn calibrated_problem(args: &TuiArgs, setup: &Setup) -> Result<Option<(Problem, Calibration)>> {
    if !args.model.wants_model() {
        return Ok(None);
    }
    if !args.model.steps.is_empty() {
        return Err(user(
            "--steps is not used by the terminal app; use it with `autolb predict` or `autolb model check`",
        ));
    }
    let file = prediction_flags::load_config(&args.prediction)?;
    let resolved = prediction_flags::resolve_model(
        &args.model,
        &setup.inputs,
        file.as_ref(),
        setup.settings.interp,
        args.period,
    )?;
    if !resolved.model.is_calibrated() {
        return Err(user(format!(
            "no usable measured run for a calibrated model{}",
            resolved
                .notes
                .first()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        )));
    }
    let cost_model = prediction_flags::resolve_cost_model(&args.prediction)?;
    let problem = Problem::build(
        &setup.inputs,
        &setup.settings,
        ProblemOptions {
            model: Some(&resolved.model),
            cost_model: Some(&cost_model),
        },
    )
    .map_err(user)?;
    Ok(Some((
        problem,
        Calibration {
            model: resolved.model,
            runs: resolved.runs,
        },
    )))
}

/// `--campaign DIR` with no other data: the app's curves and settings come from the
/// campaign's state.
fn campaign_only(args: &TuiArgs) -> Option<&Path> {
    let flags = &args.prediction;
    let has_data =
        flags.config.is_some() || !flags.curves.is_empty() || !flags.components.is_empty();
    args.campaign.as_deref().filter(|_| !has_data)
}

/// `autolb` alone and `autolb tui` without data open the demo.
fn is_demo(args: &TuiArgs) -> bool {
    args.prediction.config.is_none()
        && args.prediction.curves.is_empty()
        && args.prediction.components.is_empty()
        && args.campaign.is_none()
}

/// The demo campaign's curves and settings, watching its directory.
fn demo_setup(args: &TuiArgs, demo: &demo::Demo) -> Result<Setup> {
    let demo_args = TuiArgs {
        prediction: PredictionFlags {
            config: Some(demo.campaign_file()),
            tts_w: args.prediction.tts_w,
            top: args.prediction.top,
            ..PredictionFlags::default()
        },
        ..TuiArgs::default()
    };
    let mut setup = resolve(&demo_args)?;
    setup.title = "demo: EC-Earth3 SR example".into();
    setup.watch_dir = Some(demo.dir().to_path_buf());
    // Selections written from the demo carry the built-in curves next to them, so the file
    // outlives the demo's temporary directory.
    let curves = [example::IFS_CURVE, example::NEMO_CURVE];
    for (c, text) in setup.source.components.iter_mut().zip(curves) {
        c.curve = CurveSource::Builtin(text);
    }
    Ok(setup)
}

/// Restores the terminal on every way out of the loop, errors included (the panic hook that
/// `ratatui::init` installs covers panics).
struct RestoreGuard;

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Applies an event and runs the effects it asks for, feeding each outcome back to the app.
pub fn update_and_run(app: &mut App, event: Event) {
    let mut pending = app.update(event);
    while let Some(effect) = pending {
        pending = app.update(Event::Done(effect.run()));
    }
}

/// Draws, then waits for events and redraws after each batch, until the app quits. Generic over
/// the backend so tests run it on `TestBackend`. A draw error is fatal (a terminal that is gone
/// must not leave the app spinning).
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    rx: &Receiver<Event>,
) -> Result<()>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    terminal
        .draw(|f| view::render(app, f))
        .wrap_err("cannot draw")?;
    while !app.ui.quit {
        let Ok(event) = rx.recv() else {
            break;
        };
        update_and_run(app, event);
        while let Ok(event) = rx.try_recv() {
            update_and_run(app, event);
        }
        if !app.ui.quit {
            terminal
                .draw(|f| view::render(app, f))
                .wrap_err("cannot draw")?;
        }
    }
    Ok(())
}

/// Starts the watcher on `dir`; it reloads the iteration table on its own thread after each
/// change and sends the result.
fn start_watcher(
    dir: &Path,
    args: &TuiArgs,
    setup: &Setup,
    tx: &Sender<Event>,
) -> Result<watch::Watcher> {
    let components = setup
        .source
        .components
        .iter()
        .map(|c| LoaderComponent {
            name: c.name.clone(),
            timing_name: c.timing_name.clone().unwrap_or_else(|| c.name.clone()),
        })
        .collect();
    let loader = Arc::new(Mutex::new(Loader::new(
        dir.to_path_buf(),
        components,
        setup.source.period_s,
        setup.settings.tts_w,
    )));
    let mut options = WatchOptions {
        mode: args.watch,
        ..WatchOptions::default()
    };
    if let Some(s) = args.poll_interval {
        if !(s.is_finite() && s > 0.0) {
            return Err(user(format!(
                "--poll-interval {s} is not a positive number of seconds"
            )));
        }
        options.poll_interval = Duration::from_secs_f64(s);
        options.max_poll_interval = options.poll_interval * 4;
    }
    let predicate_loader = Arc::clone(&loader);
    let sink_tx = tx.clone();
    let mut first = true;
    watch::spawn(
        dir,
        options,
        Box::new(move |d, _files| {
            predicate_loader
                .lock()
                .map(|mut l| l.is_complete(d))
                .unwrap_or(false)
        }),
        Box::new(move |event, at| {
            let reload = first || matches!(event, watch::WatchEvent::Changes(_));
            if !matches!(event, watch::WatchEvent::Mode { .. }) {
                first = false;
            }
            if reload {
                if let Ok(mut l) = loader.lock() {
                    let view = l.load();
                    if sink_tx.send(Event::Campaign(Box::new(view))).is_err() {
                        return false;
                    }
                }
            }
            sink_tx.send(Event::Watch(event, at)).is_ok()
        }),
    )
    .map_err(user)
}

/// Turns the arguments into the data to show.
pub fn resolve(args: &TuiArgs) -> Result<Setup> {
    let flags = &args.prediction;
    let has_data =
        flags.config.is_some() || !flags.curves.is_empty() || !flags.components.is_empty();
    if !has_data && args.campaign.is_none() {
        return Ok(example_setup(args));
    }
    if let Some(dir) = campaign_only(args) {
        return from_campaign_state(dir, args);
    }
    let (inputs, settings) = prediction_flags::resolve(flags)?;
    let file = match &flags.config {
        Some(p) => Some(CampaignFile::load(p).map_err(user)?),
        None => None,
    };
    let base_dir = flags
        .config
        .as_ref()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let entry = |name: &str| {
        file.as_ref()
            .and_then(|f| f.components.iter().find(|c| c.name == name))
    };
    let components = inputs
        .iter()
        .map(|c| {
            let path = flags
                .curves
                .iter()
                .find(|(n, _)| n == c.name())
                .map(|(_, p)| PathBuf::from(p))
                .or_else(|| {
                    entry(c.name())
                        .and_then(|e| e.curve.as_ref())
                        .map(|p| base_dir.join(p))
                });
            let curve = match (&c.curve, path) {
                (Some(_), Some(path)) => CurveSource::File(path),
                (Some(_), None) => CurveSource::File(PathBuf::new()),
                (None, _) => CurveSource::Learned,
            };
            SourceComponent {
                name: c.name().to_string(),
                // Only a timing name that differs from the name is worth writing.
                timing_name: entry(c.name())
                    .map(|e| e.timing_name())
                    .filter(|t| *t != c.name())
                    .map(str::to_string),
                curve,
                allowed: c.allowed.clone(),
                min_nproc: c.min_nproc,
                max_nproc: c.max_nproc,
            }
        })
        .collect();
    let period_s = args.period.or(file.as_ref().and_then(|f| f.period_s));
    let title = match &args.prediction.config {
        Some(p) => p.display().to_string(),
        None => "curves".into(),
    };
    Ok(Setup {
        inputs,
        settings,
        source: SelectionSource {
            components,
            base: file,
            period_s,
        },
        title,
        watch_dir: args.campaign.clone(),
    })
}

/// The built-in EC-Earth3 example without a campaign (`--no-demo-campaign`).
fn example_setup(args: &TuiArgs) -> Setup {
    let mut settings = example::settings();
    if let Some(w) = args.prediction.tts_w {
        settings.tts_w = w;
    }
    if let Some(t) = args.prediction.top {
        settings.top = t;
    }
    Setup {
        inputs: example::inputs(),
        settings,
        source: SelectionSource {
            components: example_components(),
            base: None,
            period_s: Some(args.period.unwrap_or(EXAMPLE_PERIOD_S)),
        },
        title: "EC-Earth3 SR example".into(),
        watch_dir: None,
    }
}

/// The built-in example's components, their curves compiled in (so a selection written from
/// them carries the curves next to it).
pub fn example_components() -> Vec<SourceComponent> {
    let curves = [example::IFS_CURVE, example::NEMO_CURVE];
    example::COMPONENTS
        .iter()
        .zip(curves)
        .map(|(&(name, timing), text)| SourceComponent {
            name: name.into(),
            timing_name: Some(timing.into()),
            curve: CurveSource::Builtin(text),
            allowed: None,
            min_nproc: None,
            max_nproc: None,
        })
        .collect()
}

/// `--campaign DIR` alone: curves and settings from the campaign's own state.
fn from_campaign_state(dir: &Path, args: &TuiArgs) -> Result<Setup> {
    let state = autolb::campaign::State::load(dir).map_err(|e| match e {
        autolb::campaign::CampaignError::NotACampaign(_) => user(format!(
            "{e}; to watch a directory of runs without campaign state, also pass --config FILE or --curve NAME=PATH"
        )),
        e => user(e),
    })?;
    // The panes rank components side by side; shown for a layout tree they would propose
    // placements of another layout than the one the campaign balances.
    if let Some(layout) = &state.settings.layout {
        return Err(user(format!(
            "{}: this campaign balances the layout tree {layout:?}, which the app's panes do not draw yet; watch it with `autolb campaign status {} --watch` and rank the tree's placements with `autolb tui --config FILE`",
            dir.display(),
            dir.display()
        )));
    }
    // The campaign's own prediction inputs, as `campaign status` and the report read them.
    let (inputs, frozen) =
        autolb::campaign::answer::campaign_inputs(&state, dir).map_err(|e| {
            if state.measures_curves() {
                user(format!(
                    "{e}: this campaign has not measured every component at two PE counts yet, and the app draws its panes from the curves; `autolb campaign status {}` shows where it stands",
                    dir.display()
                ))
            } else {
                user(e)
            }
        })?;
    let source = state
        .components
        .iter()
        .map(|c| SourceComponent {
            name: c.name.clone(),
            timing_name: Some(c.timing_name.clone()),
            curve: CurveSource::File(dir.join(&c.curve)),
            allowed: c.allowed.clone(),
            min_nproc: Some(c.low),
            max_nproc: Some(c.high),
        })
        .collect();
    let s = &state.settings;
    // Flags override what the campaign froze.
    let settings = Settings {
        max_nproc: args.prediction.max_nproc.unwrap_or(frozen.max_nproc),
        step: args.prediction.step.unwrap_or(frozen.step),
        tts_w: args.prediction.tts_w.unwrap_or(frozen.tts_w),
        top: args.prediction.top.unwrap_or(frozen.top),
        interp: args.prediction.interp.unwrap_or(frozen.interp),
        extra_pes: args.prediction.extra_pes.unwrap_or(frozen.extra_pes),
    };
    Ok(Setup {
        inputs,
        settings,
        source: SelectionSource {
            components: source,
            base: None,
            period_s: args.period.or(s.period_s),
        },
        title: dir.display().to_string(),
        watch_dir: Some(dir.to_path_buf()),
    })
}
