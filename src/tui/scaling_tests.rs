//! A scaling campaign in the app: the curves pane draws each count's spread, its outliers and
//! the counts queued; the detail view opens a measured point; the loader's points are the ones
//! the campaign writes into its curve files.

use std::sync::atomic::AtomicBool;

use autolb::campaign::{drive, init, DriveOptions, State};
use autolb::config::CampaignFile;
use autolb::curve::{Curve, Point};
use autolb::example;

use super::campaign_view::{
    CampaignView, IterRow, Loader, LoaderComponent, ScalingCurve, ScalingPoint,
};
use super::event::Event;
use super::tests::{app, draw, text};
use super::view;

/// The example's curves as a scaling campaign would have measured them, with one NEMO count
/// that had an outlier, one IFS count spread wide and one NEMO count still queued.
fn scaling_view() -> CampaignView {
    let inputs = example::inputs();
    let curves: Vec<Curve> = inputs.iter().map(|i| i.curve.clone().unwrap()).collect();
    let point = |test: u32, p: &Point| ScalingPoint {
        test,
        nproc: p.nproc,
        sypd: Some(p.sypd),
        sd: 0.01 * p.sypd,
        runs: 3,
        ..ScalingPoint::default()
    };
    let mut scaling: Vec<ScalingCurve> = curves
        .iter()
        .enumerate()
        .map(|(c, curve)| ScalingCurve {
            name: curve.name.clone(),
            mode: "standalone".into(),
            points: curve
                .points()
                .iter()
                .enumerate()
                .map(|(k, p)| point((100 * c + k) as u32, p))
                .collect(),
        })
        .collect();
    // IFS's third count spreads by a third of its speed: its bar spans several rows.
    scaling[0].points[2].sd = 0.3 * scaling[0].points[2].sypd.unwrap();
    let nemo = &mut scaling[1].points[3];
    let m = nemo.sypd.unwrap();
    nemo.outliers = vec![("i00-t103-r2".into(), 0.4 * m)];
    let first = scaling[1].points[0].nproc;
    let second = scaling[1].points[1].nproc;
    scaling[1].points.insert(
        1,
        ScalingPoint {
            test: 199,
            nproc: (first + second) / 2,
            queued: 3,
            ..ScalingPoint::default()
        },
    );
    let rows = vec![IterRow {
        iteration: 1,
        test: 103,
        nproc: vec![0, scaling[1].points[4].nproc],
        sypd: Some(m),
        reason: Some("scaling: first series".into()),
        state: "done 2/3".into(),
        ..IterRow::default()
    }];
    CampaignView {
        dir: Some("scaling-campaign".into()),
        state: "running".into(),
        components: curves.iter().map(|c| c.name.clone()).collect(),
        curves: Some(curves),
        scaling,
        rows,
        ..CampaignView::default()
    }
}

#[test]
fn the_curves_pane_draws_spread_outliers_and_queued_counts_without_colour() {
    let mut app = app();
    // The curves pane: the left 64 columns of a 160x50 screen.
    let pane = |app: &super::app::App| -> String {
        text(&draw(app, 160, 50))
            .lines()
            .map(|l| l.chars().take(64).collect::<String>() + "\n")
            .collect()
    };
    let before = pane(&app);
    assert!(!before.contains('×') && !before.contains('○'), "{before}");
    app.update(Event::Campaign(Box::new(scaling_view())));
    let curves_pane = pane(&app);
    for glyph in ["│ sd", "× outlier", "○ queued"] {
        assert!(
            curves_pane.contains(glyph),
            "legend {glyph:?} missing:\n{curves_pane}"
        );
    }
    // The outlier and the queued count are drawn (beyond their legend samples), and the wide
    // spread is a bar of several rows.
    assert!(curves_pane.matches('×').count() >= 3, "{curves_pane}");
    assert!(curves_pane.matches('○').count() >= 3, "{curves_pane}");
    let bar_rows = curves_pane
        .lines()
        .filter(|l| l.chars().skip(7).take(56).any(|c| c == '│'))
        .count();
    assert!(bar_rows >= 3, "{curves_pane}");
    // The best line says how far the curves are, not "nothing measured yet".
    let best = view::status::best_text(&app);
    assert!(best.starts_with("curves: IFS "), "{best}");
    assert!(
        best.contains("(+1 queued)") && best.contains("recommended"),
        "{best}"
    );
    // At 80x24 nothing panics and the line still leads with the curves.
    let small = text(&draw(&app, 80, 24));
    assert!(small.contains("curves: IFS"), "{small}");
}

#[test]
fn a_scaling_row_opens_its_measured_point_with_the_outlier_left_out() {
    let mut app = app();
    app.update(Event::Campaign(Box::new(scaling_view())));
    let lines = view::detail::row_lines(&app, 0).join("\n");
    assert!(lines.contains("NEMO at"), "{lines}");
    assert!(lines.contains("measured in standalone mode"), "{lines}");
    assert!(lines.contains("over 3 runs kept"), "{lines}");
    assert!(lines.contains("1 left out as outliers"), "{lines}");
    assert!(lines.contains("outlier i00-t103-r2: SYPD"), "{lines}");
    assert!(lines.contains("-60.0 % off the mean"), "{lines}");
    assert!(!lines.contains("FN"), "a scaling run has no FN:\n{lines}");
}

#[test]
fn the_loader_shows_the_points_the_campaign_writes_into_its_curves() {
    for design in ["standalone", "coupled"] {
        loader_points_are_the_curve_files(design);
    }
}

/// A two-component scaling campaign (`design`, `repetitions` per count) run to its end by the
/// driver in `tmp/campaign`, with the loader's components.
fn ran_scaling(
    tmp: &std::path::Path,
    design: &str,
    repetitions: u32,
) -> (std::path::PathBuf, State, Vec<LoaderComponent>) {
    let text = format!(
        "[[component]]\nname = \"IFS\"\nmin_nproc = 48\nmax_nproc = 960\n\n\
         [[component]]\nname = \"NEMO\"\nmin_nproc = 48\nmax_nproc = 960\n\n\
         [scaling]\ndesign = \"{design}\"\ncounts = 3\nrepetitions = {repetitions}\nmax_runs = {}\n\n\
         [executor]\nkind = \"sim\"\njobs = 8\n\n[executor.sim]\nsteps = 8\nseed = 5\n",
        7 * repetitions
    );
    let file = CampaignFile::parse(&text, "scaling.toml").unwrap();
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    let state = State::load(&dir).unwrap();
    let comps = ["IFS", "NEMO"]
        .map(|n| LoaderComponent {
            name: n.into(),
            timing_name: n.into(),
        })
        .to_vec();
    (dir, state, comps)
}

fn loader_points_are_the_curve_files(design: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state, comps) = ran_scaling(tmp.path(), design, 3);
    let view = Loader::new(dir.clone(), comps, None, 0.5).load();
    assert_eq!(view.scaling.len(), 2);
    for (k, c) in view.scaling.iter().enumerate() {
        assert_eq!(c.mode, design);
        let written = Curve::load(c.name.clone(), &dir.join(&state.components[k].curve)).unwrap();
        let shown: Vec<(u32, f64)> = c
            .points
            .iter()
            .filter_map(|p| Some((p.nproc, p.sypd?)))
            .collect();
        let file: Vec<(u32, f64)> = written.points().iter().map(|p| (p.nproc, p.sypd)).collect();
        assert_eq!(shown.len(), file.len(), "{}", c.name);
        for (a, b) in shown.iter().zip(&file) {
            assert_eq!(a.0, b.0);
            assert!((a.1 - b.1).abs() < 1e-3 * b.1, "{} {a:?} vs {b:?}", c.name);
        }
        assert!(c.points.iter().all(|p| p.runs >= 2 && p.queued == 0));
    }
    // Every scaling row of the table opens its points: the one component a standalone run
    // measures, every component of a coupled run.
    let per_row = if design == "coupled" { 2 } else { 1 };
    for row in &view.rows {
        assert_eq!(view.scaling_points(row).len(), per_row, "{row:?}");
    }
}

#[test]
fn a_curve_file_edited_by_hand_changes_no_curve_the_app_draws_and_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, state, comps) = ran_scaling(tmp.path(), "standalone", 2);
    let measured = Loader::new(dir.clone(), comps.clone(), None, 0.5)
        .load()
        .curves
        .expect("both curves measured");
    // IFS's file gets absurd speeds at its first two counts.
    let path = dir.join(&state.components[0].curve);
    let first = measured[0].points()[0].nproc;
    let second = measured[0].points()[1].nproc;
    let mut edited = format!("nproc,SYPD\n{first},48999\n{second},1e300\n");
    for p in &measured[0].points()[2..] {
        edited.push_str(&format!("{},{}\n", p.nproc, p.sypd));
    }
    std::fs::write(&path, edited).unwrap();

    let view = Loader::new(dir.clone(), comps, None, 0.5).load();
    assert_eq!(view.curves.as_ref(), Some(&measured));
    assert_eq!(view.curve_notes.len(), 1, "{:?}", view.curve_notes);
    assert!(
        view.curve_notes[0].contains("48999"),
        "{:?}",
        view.curve_notes
    );
    let mut app = app();
    app.update(Event::Campaign(Box::new(view)));
    let screen = text(&draw(&app, 160, 30));
    assert!(screen.contains("⚠ 1 curve file ≠ state"), "{screen}");
}
