//! The keys that write files (`w`, `R`): what effect they return, and running it.

use std::path::{Path, PathBuf};

use autolb::example;
use autolb::predict::Problem;

use super::app::App;
use super::effect::{Effect, Outcome};
use super::keys::KeyTable;
use super::report::REPORT_FILE;
use super::tests::key;
use super::theme::{ColorDepth, Theme};
use super::update_and_run;

fn app_in(out_dir: &Path, campaign: Option<PathBuf>) -> App {
    let inputs = example::inputs();
    let problem = Problem::new(&inputs, &example::settings()).unwrap();
    let mut app = App::new(
        problem,
        &inputs,
        KeyTable::default(),
        Theme::new(ColorDepth::Mono),
        super::selection::SelectionSource {
            components: super::example_components(),
            base: None,
            period_s: Some(2700.0),
        },
        out_dir.to_path_buf(),
        "EC-Earth3 SR example".into(),
    );
    app.table.campaign.dir = campaign;
    app
}

#[test]
fn r_asks_for_the_report_of_what_is_shown_without_writing_it() {
    let out = Path::new("/nonexistent/autolb-out");
    let mut app = app_in(out, None);
    app.update(key('+'));
    app.update(key(']'));
    let Some(Effect::WriteReport(job)) = app.update(key('R')) else {
        panic!("R asks for the report");
    };
    assert_eq!(job.tts_w, 0.55);
    assert_eq!(job.top, 6);
    assert_eq!(job.cursor, app.matrix.cursor);
    assert_eq!(job.out_dir, out);
    assert_eq!(app.ui.message, None, "nothing is said before it is written");
    app.update(super::event::Event::Done(Outcome::ReportWritten(
        out.join(REPORT_FILE),
    )));
    assert_eq!(
        app.ui.message.as_deref(),
        Some("wrote the report /nonexistent/autolb-out/autolb-report.html")
    );
}

#[test]
fn r_writes_the_report_of_what_is_shown_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_in(dir.path(), None);
    // Weigh speed more: the report follows the app's TTS_w and top N, not the defaults.
    app.update(key('+'));
    app.update(key(']'));
    update_and_run(&mut app, key('R'));
    let path = dir.path().join(REPORT_FILE);
    assert_eq!(
        app.ui.message.as_deref(),
        Some(format!("wrote the report {}", path.display()).as_str())
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(
        html.contains(r#"<th scope="row">TTS_w</th><td>0.55</td>"#),
        "TTS_w row"
    );
    assert!(html.contains("Prediction: the top 6"));
    assert!(html.contains("The predicted best configuration is IFS"));
    assert!(!html.contains("The campaign</h2>"));
}

#[test]
fn r_includes_a_watched_campaign_with_state() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = autolb::campaign::demo::init_demo(dir.path(), Some(0.0)).unwrap();
    let mut app = app_in(dir.path(), Some(campaign));
    update_and_run(&mut app, key('R'));
    assert!(app.ui.error.is_none(), "{:?}", app.ui.error);
    let html = std::fs::read_to_string(dir.path().join(REPORT_FILE)).unwrap();
    assert!(html.contains("The campaign</h2>"));
    assert!(
        html.contains("IFS 384 + NEMO 242"),
        "the original from the campaign"
    );
}

#[test]
fn a_failed_report_is_an_error_in_the_status_line_not_a_crash() {
    let mut app = app_in(Path::new("/proc/autolb-cannot-write-here"), None);
    update_and_run(&mut app, key('R'));
    assert!(app
        .ui
        .error
        .as_deref()
        .unwrap()
        .starts_with("report failed: "));
    assert!(!app.ui.quit);
}

#[test]
fn y_writes_the_cursors_configuration_as_an_ecearth4_fragment_that_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = app_in(tmp.path(), None);
    // Away from the recommendation, so the fragment is the cursor's and not the best's.
    app.update(key('j'));
    app.update(key('l'));
    let nproc = app.cursor_nproc();
    let Some(effect @ Effect::WriteText { .. }) = app.update(key('y')) else {
        panic!("y asks to write the fragment");
    };
    let outcome = effect.run();
    let Outcome::TextWritten { path, what } = outcome.clone() else {
        panic!("{outcome:?}");
    };
    assert_eq!(path, tmp.path().join(super::emit::ECEARTH4_FILE));
    assert!(what.contains(&format!("IFS {}", nproc[0])), "{what}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(
            "# autolb tui: the configuration under the matrix cursor by the standalone model"
        ),
        "{text}"
    );
    let yaml: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let job = &yaml["job"];
    assert_eq!(job["launch"]["method"].as_str(), Some("slurm-hetjob"));
    assert_eq!(job["ifs"]["ntasks"].as_u64(), Some(u64::from(nproc[0])));
    assert_eq!(job["nemo"]["ntasks"].as_u64(), Some(u64::from(nproc[1])));
    app.update(super::event::Event::Done(outcome));
    let said = app.ui.message.clone().unwrap_or_default();
    assert!(said.contains("ecearth4-job.yml"), "{said}");
}
