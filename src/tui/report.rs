//! `R`: the report of what the app shows, as one HTML page in the output directory: the
//! current TTS_w, top N, matrix axes and cursor, and the watched campaign when it has state.

use std::path::PathBuf;

use autolb::campaign;
use autolb::report::{self, source, ReportRequest, DEFAULT_YEARS};

use super::app::App;

/// The file `R` writes, in the app's output directory.
pub const REPORT_FILE: &str = "autolb-report.html";

/// Writes the report; returns its path, or a message saying what went wrong.
pub fn write(app: &App) -> Result<PathBuf, String> {
    // The campaign's own state, read fresh from disk (a directory of runs without
    // campaign.json has no iteration table to report).
    let status = app
        .campaign
        .dir
        .as_deref()
        .filter(|d| d.join("campaign.json").is_file())
        .map(campaign::status)
        .transpose()
        .map_err(|e| e.to_string())?;
    let names = app.problem.names();
    let original = status.as_ref().and_then(source::original_of).or_else(|| {
        let file = app.selection_source.base.as_ref()?.original.as_ref()?;
        names.iter().map(|n| file.get(n).copied()).collect()
    });
    let r = report::build(&ReportRequest {
        title: format!("autolb: {}", app.title),
        source: match &app.campaign.dir {
            Some(d) => format!("From the terminal app, watching {}", d.display()),
            None => format!("From the terminal app: {}", app.title),
        },
        problem: Some(&app.problem),
        inputs: &app.inputs,
        tts_w: app.tts_w(),
        top: app.top,
        axes: app.axes,
        fixed: Some(app.cursor.clone()),
        original,
        campaign: status.as_ref(),
        years: DEFAULT_YEARS,
    });
    let path = app.out_dir.join(REPORT_FILE);
    source::write_html(&r, &path).map_err(|e| e.to_string())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use autolb::example;
    use autolb::predict::Problem;

    use super::super::app::App;
    use super::super::keys::KeyTable;
    use super::super::tests::key;
    use super::super::theme::{ColorDepth, Theme};
    use super::*;

    fn app_in(out_dir: &Path, campaign: Option<PathBuf>) -> App {
        let inputs = example::inputs();
        let problem = Problem::new(&inputs, &example::settings()).unwrap();
        let mut app = App::new(
            problem,
            &inputs,
            KeyTable::default(),
            Theme::new(ColorDepth::Mono),
            super::super::selection::SelectionSource {
                components: super::super::example_components(),
                base: None,
                period_s: Some(2700.0),
            },
            out_dir.to_path_buf(),
            "EC-Earth3 SR example".into(),
        );
        app.campaign.dir = campaign;
        app
    }

    #[test]
    fn r_writes_the_report_of_what_is_shown_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app_in(dir.path(), None);
        // Weigh speed more: the report follows the app's TTS_w and top N, not the defaults.
        app.update(key('+'));
        app.update(key(']'));
        app.update(key('R'));
        let path = dir.path().join(REPORT_FILE);
        assert_eq!(
            app.message.as_deref(),
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
        app.update(key('R'));
        assert!(app.error.is_none(), "{:?}", app.error);
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
        app.update(key('R'));
        assert!(app.error.as_deref().unwrap().starts_with("report failed: "));
        assert!(!app.quit);
    }
}
