//! The calibrated model in the app: the curves pane's coupled points and calibrated curve, the
//! detail view's predicted-against-measured lines, the table's error column, and the refit as
//! a watched campaign's runs land.

use std::sync::atomic::AtomicBool;

use autolb::curve::Curve;
use autolb::interp::{Interpolant, Method};
use autolb::model::{EstimateRequest, MeasuredComponent, MeasuredRun, Model};

use super::app::App;
use super::calibration::Calibration;
use super::event::Event;
use super::pane::Pane;
use super::ranking::ModelKind;
use super::screen_tests::watched;
use super::tests::{app, draw, key, text};
use super::ui::Overlay;
use super::view;

/// Runs at candidate PE counts where IFS goes at 0.85 and NEMO at 0.6 of their curves, with a
/// coupling overhead of 5 %: a coupled-mode slowdown the standalone curves know nothing of.
fn runs(app: &App) -> Vec<MeasuredRun> {
    let curves: Vec<Curve> = app
        .ranking
        .inputs
        .iter()
        .filter_map(|c| c.curve.clone())
        .collect();
    let (ifs, nemo) = (
        &app.ranking.problem.components[0].nproc,
        &app.ranking.problem.components[1].nproc,
    );
    let picks = [(0.2, 0.3), (0.4, 0.5), (0.6, 0.4), (0.8, 0.7)];
    picks
        .iter()
        .map(|&(fi, fn_)| {
            let pi = ifs[((ifs.len() - 1) as f64 * fi) as usize];
            let pn = nemo[((nemo.len() - 1) as f64 * fn_) as usize];
            let speed = |c: &Curve, p: u32, r: f64| {
                r * Interpolant::new(Method::default(), &c.xs(), &c.ys()).eval(f64::from(p))
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
        .collect()
}

fn fit(app: &App, runs: Vec<MeasuredRun>) -> Calibration {
    let curves: Vec<Curve> = app
        .ranking
        .inputs
        .iter()
        .filter_map(|c| c.curve.clone())
        .collect();
    let (model, _) = Model::fit(&curves, Method::default(), &runs);
    assert!(model.is_calibrated());
    Calibration { model, runs }
}

/// The example app with the calibrated model given (not switched to).
pub(super) fn calibrated_app() -> App {
    let mut app = app();
    let cal = fit(&app, runs(&app));
    app.set_calibration(cal);
    app
}

#[test]
fn a_fit_arriving_with_the_campaign_makes_m_work_and_a_refit_replaces_it_in_place() {
    let mut app = app();
    let standalone_best = app.ranking.prediction.top[0].sypd;
    let all = runs(&app);
    let mut view = Box::new(watched());
    view.fitted = Some(fit(&app, all[..2].to_vec()));
    app.update(Event::Campaign(view));
    assert_eq!(
        app.ranking.model,
        ModelKind::Standalone,
        "a fit does not switch by itself"
    );
    assert!(
        app.table.campaign.fitted.is_none(),
        "the app keeps the fit, not the view"
    );
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    let first = app.ranking.prediction.top[0].sypd;
    assert!(first < 0.9 * standalone_best);
    // More runs landed: the refit replaces the shown model and the ranking follows.
    let mut view = Box::new(watched());
    view.fitted = Some(fit(&app, all.clone()));
    app.update(Event::Campaign(view));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    assert_eq!(app.ranking.calibration.as_ref().unwrap().runs.len(), 4);
    assert_eq!(
        app.ranking.prediction,
        autolb::predict::full_model::rank(
            &app.ranking.problem,
            app.ranking.active_model(),
            &app.ranking.inputs,
            app.ranking.tts_w(),
            app.ranking.top
        ),
        "re-ranked under the refitted model"
    );
    app.update(key('M'));
    assert_eq!(app.ranking.prediction.top[0].sypd, standalone_best);
}

#[test]
fn the_calibrated_line_is_the_model_speed_on_the_standalone_line_and_the_points_are_measured() {
    let app = calibrated_app();
    let cal = app.ranking.calibration.as_ref().unwrap();
    let c = &app.ranking.curves[1];
    let line = cal.calibrated_line(&c.name, &c.line);
    assert_eq!(line.len(), c.line.len());
    for (b, &(p, s)) in line.iter().zip(&c.line) {
        let f = cal.model.speed(&c.name, p.round() as u32, s);
        assert!((b.sypd - f.mid).abs() < 1e-9);
        assert!(b.low < b.sypd && b.sypd < b.high);
    }
    let points = cal.coupled_points(&c.name);
    let expected: Vec<(f64, f64)> = cal
        .runs
        .iter()
        .map(|r| (f64::from(r.components[1].nproc), r.components[1].sypd))
        .collect();
    assert_eq!(points, expected);
}

/// The curves pane at 80x24 without colour: the coupled points and the calibrated curve have
/// their own glyphs, named in the legend.
#[test]
fn curves_pane_shows_coupled_points_and_the_calibrated_curve_at_80x24() {
    let mut app = calibrated_app();
    app.ui.focus = Pane::Curves;
    app.update(key('z'));
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("▗ coupled +~ calibrated"), "{screen}");
    let body: String = screen.lines().skip(1).collect();
    assert!(body.contains('▗'), "coupled points drawn:\n{screen}");
    // Each component's calibrated curve in its own glyph, colour or not.
    assert!(body.contains('+') && body.contains('~'), "{screen}");
    insta::assert_snapshot!(screen);
    // Without a calibrated model neither appears.
    let mut plain = super::tests::app();
    plain.ui.focus = Pane::Curves;
    plain.update(key('z'));
    let screen = text(&draw(&plain, 80, 24));
    assert!(!screen.contains("calibrated"));
    assert!(!screen.contains('▗'));
}

#[test]
fn detail_of_a_run_configuration_sets_both_predictions_against_the_measurement() {
    let mut app = calibrated_app();
    let run = app.ranking.calibration.as_ref().unwrap().runs[1].clone();
    let nproc = run.nproc_of(&app.ranking.problem.names()).unwrap();
    let index: Vec<usize> = nproc
        .iter()
        .enumerate()
        .map(|(k, &p)| app.ranking.problem.candidate_index(k, p).unwrap())
        .collect();
    let lines = view::detail::config_lines(&app, &index).join("\n");
    assert!(
        lines.contains(&format!(
            "measured: coupled SYPD {:.2} (1 run)",
            run.coupled_sypd
        )),
        "{lines}"
    );
    let err = |label: &str| -> f64 {
        let l = lines.lines().find(|l| l.starts_with(label)).unwrap();
        let e = l.split("error ").nth(1).unwrap();
        e.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(lines.contains("(band "), "{lines}");
    // The standalone model misses the coupled-mode slowdown (0.85 x 0.95 on IFS, the slowest
    // here: +24 %); the calibrated one learned it.
    assert!(err("predicted, standalone") > 15.0, "{lines}");
    assert!(err("predicted, calibrated").abs() < 5.0, "{lines}");
    // A configuration never run has no such lines.
    let other = vec![0; index.len()];
    assert!(!view::detail::config_lines(&app, &other)
        .join("\n")
        .contains("measured:"));
    // The whole overlay at 80x24.
    app.ui.overlay = Overlay::Config(index);
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("predicted, calibrated"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn the_detail_view_names_the_component_speeds_of_the_model_that_ranks() {
    let mut app = calibrated_app();
    let index = vec![0; app.ranking.problem.components.len()];
    let speeds = |app: &App| {
        view::detail::config_lines(app, &index)
            .into_iter()
            .find(|l| l.starts_with("IFS ") && l.contains(" PEs "))
            .unwrap()
    };
    assert!(speeds(&app).contains("SYPD alone"), "{}", speeds(&app));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    let line = speeds(&app);
    assert!(
        line.contains("coupled-mode SYPD") && line.contains("coupled-mode CHSY"),
        "{line}"
    );
    assert!(!line.contains("alone"), "{line}");
}

#[test]
fn table_shows_the_active_models_error_and_drops_it_first() {
    let mut app = calibrated_app();
    app.table.campaign = watched();
    let (header, rows, _) = view::table::fitted(&app, 200);
    let k = header
        .iter()
        .position(|h| h == "err%")
        .expect("err% column");
    let measured = app
        .table
        .campaign
        .rows
        .iter()
        .position(|r| r.sypd.is_some())
        .unwrap();
    let standalone_err: f64 = rows[measured][k].parse().unwrap();
    let r = &app.table.campaign.rows[measured];
    let e = super::calibration::estimate(
        &Model::Standalone,
        &app.ranking.inputs,
        Method::default(),
        &r.nproc,
    )
    .unwrap();
    assert!((standalone_err - 100.0 * (e.sypd / r.sypd.unwrap() - 1.0)).abs() < 0.051);
    let pending = app
        .table
        .campaign
        .rows
        .iter()
        .position(|r| r.sypd.is_none())
        .unwrap();
    assert_eq!(rows[pending][k], "-");
    // `M`: the column follows the model that ranks.
    app.update(key('M'));
    let (_, rows, _) = view::table::fitted(&app, 200);
    assert_ne!(rows[measured][k], format!("{standalone_err:+.1}"));
    // Narrow: err% goes before every other column.
    let (full, _, widths) = view::table::fitted(&app, 200);
    let total: u16 = widths.iter().sum::<u16>() + widths.len() as u16 - 1;
    let (narrow, _, _) = view::table::fitted(&app, total - 1);
    let mut expected = full.clone();
    expected.retain(|h| h != "err%");
    assert_eq!(narrow, expected);
}

/// A watched campaign refits the model as its runs land: the loader hands a fit with the view
/// once runs are recorded, and not again until more land.
#[test]
fn the_loader_refits_the_model_on_a_finished_campaign() {
    use autolb::campaign::{self, DriveOptions};
    let tmp = tempfile::tempdir().unwrap();
    let dir = campaign::demo::init_demo(tmp.path(), Some(0.0)).unwrap();
    let comps = |n: &str, t: &str| super::campaign_view::LoaderComponent {
        name: n.into(),
        timing_name: t.into(),
    };
    let mut loader = super::campaign_view::Loader::new(
        dir.clone(),
        vec![comps("IFS", "ATMIFS"), comps("NEMO", "oceanx")],
        Some(2700.0),
        0.5,
    );
    assert!(loader.load().fitted.is_none(), "no run yet");
    campaign::drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    let view = loader.load();
    let fit = view.fitted.clone().expect("a fit once runs are recorded");
    assert!(fit.model.is_calibrated());
    let state = campaign::State::load(&dir).unwrap();
    let (runs, _) = campaign::measured::campaign_runs_of(&state, &dir);
    assert_eq!(fit.runs, runs);
    assert!(loader.load().fitted.is_none(), "nothing new: no refit");
    let mut app = app();
    app.update(Event::Campaign(Box::new(view)));
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
}

/// Every glyph the curves pane draws with a calibrated model (borders, axis labels and words
/// aside) is one the legend lists, with colour and without; none is a sextant (U+1FB00..),
/// a block many SSH clients' fonts lack; and each component's calibrated curve has its own.
#[test]
fn the_curves_pane_draws_only_listed_glyphs_and_no_sextant() {
    use super::theme::ColorDepth;
    let rows = view::legend::glyph_rows();
    for depth in [ColorDepth::TrueColor, ColorDepth::Mono] {
        let listed: String = rows
            .iter()
            .map(|g| match depth {
                ColorDepth::Mono => g.mono.as_str(),
                _ => g.colour.as_str(),
            })
            .collect();
        for (w, h) in [(80, 24), (120, 44), (200, 60)] {
            let mut app = super::tests::app_with(depth, std::env::temp_dir());
            let cal = fit(&app, runs(&app));
            app.set_calibration(cal);
            app.ui.focus = Pane::Curves;
            app.update(key('z'));
            let buf = draw(&app, w, h);
            // The zoomed pane's two charts, down to their bottom border; the status lines
            // under them are the status line's own.
            let screen = text(&buf);
            let lines: Vec<&str> = screen.lines().collect();
            let last = lines.iter().rposition(|l| l.contains('┛')).unwrap();
            let symbols: std::collections::BTreeSet<char> =
                lines[..=last].iter().flat_map(|l| l.chars()).collect();
            // A Braille or quarter-block marker draws the sub-cell pattern its points fall in:
            // the legend shows one of each family (`⣿`; `▗` / `▖`).
            let quadrants = "▘▝▖▗▌▐▚▞▛▜▙▟";
            let family = |c: char| match c {
                '\u{2800}'..='\u{28FF}' => '⣿',
                c if quadrants.contains(c) && depth == ColorDepth::Mono => '▗',
                c if quadrants.contains(c) => '▖',
                c => c,
            };
            for c in symbols.iter().map(|&c| family(c)) {
                assert!(
                    !('\u{1FB00}'..='\u{1FBFF}').contains(&c),
                    "{depth:?} {w}x{h}: sextant {c:?}"
                );
                // Words and numbers are ASCII; borders are box drawing.
                let plain = c.is_ascii() || ('\u{2500}'..='\u{257F}').contains(&c);
                assert!(
                    plain || listed.contains(c),
                    "{depth:?} {w}x{h}: {c:?} drawn but not in the legend\n{}",
                    text(&buf)
                );
            }
            for i in 0..2 {
                let g = view::curves::calibrated_glyph(i);
                assert!(listed.contains(g), "{g} not in the legend");
                let body: String = text(&buf).lines().skip(1).collect();
                assert!(body.contains(g), "{depth:?} {w}x{h}: {g} not drawn");
            }
        }
    }
    assert_ne!(
        view::curves::calibrated_glyph(0),
        view::curves::calibrated_glyph(1)
    );
}

/// The band's quarter blocks appear on a tall chart with colour (where lines are Braille or
/// sextants, points and verticals blocks, bars and dots, so quadrants are the band's alone), and
/// neither on a short one nor without colour (where the coupled points use them).
#[test]
fn the_band_is_drawn_only_where_it_is_legible() {
    use super::theme::ColorDepth;
    let dots = |depth: ColorDepth, calibrated: bool, w: u16, h: u16| {
        let mut app = super::tests::app_with(depth, std::env::temp_dir());
        if calibrated {
            let cal = fit(&app, runs(&app));
            app.set_calibration(cal);
        }
        app.ui.focus = Pane::Curves;
        app.update(key('z'));
        let buf = draw(&app, w, h);
        buf.content
            .iter()
            .filter(|c| ["▘", "▝", "▖", "▗"].contains(&c.symbol()))
            .count()
    };
    assert_eq!(dots(ColorDepth::TrueColor, false, 120, 44), 0);
    assert!(dots(ColorDepth::TrueColor, true, 120, 44) > 10);
    assert_eq!(dots(ColorDepth::TrueColor, true, 80, 24), 0);
    // Without colour the quadrants are the coupled points alone: at most one per run and
    // component in each of the two charts.
    let mono = dots(ColorDepth::Mono, true, 120, 44);
    assert!(mono <= 16, "{mono}");
}

#[test]
fn the_trade_off_pane_shows_the_training_runs_as_measured_points() {
    let app = calibrated_app();
    let training = &app.ranking.calibration.as_ref().unwrap().runs;
    assert_eq!(app.trade_off.measured.len(), training.len());
    for (point, run) in app.trade_off.measured.iter().zip(training) {
        let nproc: Vec<u32> = app
            .ranking
            .problem
            .names()
            .iter()
            .map(|n| run.nproc(n).unwrap())
            .collect();
        assert_eq!(point.nproc, nproc);
        assert_eq!(point.sypd, run.coupled_sypd);
        let total = nproc.iter().sum::<u32>() + app.ranking.problem.settings.extra_pes;
        assert_eq!(
            point.chsy,
            autolb::metrics::chsy(f64::from(total), run.coupled_sypd)
        );
    }
    // Drawn on the pane: the screen differs from the same app without them.
    let mut app = app;
    for _ in 0..4 {
        app.update(super::tests::special(
            crossterm::event::KeyCode::Tab,
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    assert_eq!(app.ui.focus, Pane::Front);
    let with = text(&draw(&app, 160, 50));
    app.trade_off.measured.clear();
    let without = text(&draw(&app, 160, 50));
    assert_ne!(with, without);
}

/// With the calibrated model the top N shows the full model's numbers (the balance slowdown
/// included), as `predict --measured` does, not the search's balance-free bound: at every
/// TTS_w, and below the bound for configurations out of balance.
#[test]
fn the_calibrated_top_n_shows_the_full_models_numbers() {
    let mut app = app();
    let mut cal = fit(&app, runs(&app));
    // Irregular steps, so nearly balanced configurations wait for each other: the full model
    // is then below the search's balance-free bound for them.
    if let Model::Calibrated(c) = &mut cal.model {
        c.coupled.irregularity = 0.1;
    }
    app.set_calibration(cal);
    app.update(key('M'));
    assert_eq!(app.ranking.model, ModelKind::Calibrated);
    app.ranking.top = 20;
    let curves: Vec<Curve> = app
        .ranking
        .inputs
        .iter()
        .filter_map(|i| i.curve.clone())
        .collect();
    let mut below_bound = 0;
    for pct in [0u8, 25, 50, 75, 100] {
        app.ranking.tts_w_pct = pct;
        app.rerank();
        let bound = app.ranking.problem.rank(app.ranking.tts_w(), 10_000);
        for c in &app.ranking.prediction.top {
            let full = app
                .ranking
                .active_model()
                .estimate(&EstimateRequest::curves(
                    &curves,
                    app.ranking.problem.settings.interp,
                    &c.nproc,
                ));
            assert!(
                (c.sypd - full.sypd).abs() <= 1e-9 * full.sypd,
                "{c:?} vs {full:?}"
            );
            let b = bound.top.iter().find(|x| x.nproc == c.nproc).expect("kept");
            assert!(c.sypd <= b.sypd * (1.0 + 1e-12));
            below_bound += usize::from(c.sypd < b.sypd * (1.0 - 1e-9));
        }
    }
    assert!(below_bound > 0, "every shown configuration at its bound");
}
