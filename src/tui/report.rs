//! `R`: the report of what the app shows, as one HTML page in the output directory: the
//! current TTS_w, top N, matrix axes and cursor, and the watched campaign when it has state.

use std::path::PathBuf;

use autolb::campaign;
use autolb::model::{MeasuredRun, Model};
use autolb::predict::{ComponentInput, Problem};
use autolb::report::{self, source, ReportModel, ReportRequest, DEFAULT_YEARS};

/// The file `R` writes, in the app's output directory.
pub const REPORT_FILE: &str = "autolb-report.html";

/// What one `R` reports: a copy of what the app shows when the key is pressed.
#[derive(Debug, Clone)]
pub struct ReportJob {
    /// The label of the data shown.
    pub title: String,
    /// The watched campaign's directory, if any.
    pub campaign_dir: Option<PathBuf>,
    pub problem: Problem,
    pub inputs: Vec<ComponentInput>,
    pub tts_w: f64,
    pub top: usize,
    pub axes: (usize, usize),
    /// The matrix cursor (candidate indices per component).
    pub cursor: Vec<usize>,
    /// The original configuration from the user's campaign file, used when the campaign's
    /// state has none.
    pub file_original: Option<Vec<u32>>,
    /// The directory the report goes into.
    pub out_dir: PathBuf,
    /// The calibrated model that ranks the app's views now, with the runs it was fitted on
    /// (`None`: the standalone model ranks).
    pub calibrated: Option<(Model, Vec<MeasuredRun>)>,
}

/// Writes the report; returns its path, or a message saying what went wrong.
pub fn write(job: &ReportJob) -> Result<PathBuf, String> {
    // The campaign's own state, read fresh from disk (a directory of runs without
    // campaign.json has no iteration table to report).
    let status = job
        .campaign_dir
        .as_deref()
        .filter(|d| d.join("campaign.json").is_file())
        .map(campaign::status)
        .transpose()
        .map_err(|e| e.to_string())?;
    let original = status
        .as_ref()
        .and_then(source::original_of)
        .or_else(|| job.file_original.clone());
    let r = report::build(&ReportRequest {
        title: format!("autolb: {}", job.title),
        source: match &job.campaign_dir {
            Some(d) => format!("From the terminal app, watching {}", d.display()),
            None => format!("From the terminal app: {}", job.title),
        },
        problem: Some(&job.problem),
        inputs: &job.inputs,
        tts_w: job.tts_w,
        top: job.top,
        axes: job.axes,
        fixed: Some(job.cursor.clone()),
        original,
        campaign: status.as_ref(),
        years: DEFAULT_YEARS,
        model: job.calibrated.as_ref().map(|(model, runs)| ReportModel {
            model,
            source: "fitted on the runs the app watches",
            runs,
        }),
    });
    let path = job.out_dir.join(REPORT_FILE);
    source::write_html(&r, &path).map_err(|e| e.to_string())?;
    Ok(path)
}
