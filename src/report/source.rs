//! Where a report's data comes from: a campaign directory (its state and the curve copies in
//! it), and writing the finished report (HTML, or Markdown with SVG files beside it).

use std::path::{Path, PathBuf};

use crate::campaign::{CampaignError, State, Status};
use crate::curve::CurveError;
use crate::predict::{ComponentInput, PredictError, Problem, ProblemOptions, Settings};

use super::{build, Report, ReportModel, ReportRequest};
use crate::model::{MeasuredRun, Model};

/// Why a report could not be made. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The campaign directory cannot be read (no campaign there, a damaged state file).
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    /// A curve copy in the campaign directory is missing or no longer a valid curve.
    #[error("{0}; the campaign directory keeps a copy of each curve; restore it or re-create the campaign")]
    Curve(#[from] CurveError),
    /// The prediction behind the report's views cannot be set up from the campaign's curves and
    /// settings (e.g. too many candidate PE counts to search exactly).
    #[error(transparent)]
    Predict(#[from] PredictError),
    /// The report (or one of its SVG files) could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file being written (also when its directory could not be created).
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// A campaign's prediction inputs, settings, status and original configuration.
pub struct CampaignSource {
    /// Per balanced component: its curve (the campaign's copy) and the PE limits of the campaign.
    pub inputs: Vec<ComponentInput>,
    /// The prediction settings frozen at `init` (budget, step, TTS_w, top N, interpolation).
    pub settings: Settings,
    /// The campaign's status, from its state alone (no driver: the report does not look for one).
    pub status: Status,
    /// The test whose origin is `original`: its first configuration.
    pub original: Option<Vec<u32>>,
}

/// Reads a campaign directory: the state and the curve copies in it, with the prediction
/// settings frozen at `init` ([`crate::campaign::answer::campaign_inputs`], as `campaign
/// status` predicts).
pub fn load_campaign(dir: &Path) -> Result<CampaignSource, ReportError> {
    let state = State::load(dir)?;
    let (inputs, settings) = crate::campaign::answer::campaign_inputs(&state, dir)?;
    let status = Status::from_state(&state, dir);
    let original = original_of(&status);
    Ok(CampaignSource {
        inputs,
        settings,
        status,
        original,
    })
}

/// The original configuration of a campaign: the first configuration of the test whose origin
/// is `original`.
pub fn original_of(status: &Status) -> Option<Vec<u32>> {
    status
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .find(|t| t.origin == "original")
        .map(|t| t.nproc.values().copied().collect())
}

/// The report of a campaign directory with its own settings, ranked by the model fitted on
/// its own measured runs.
pub fn campaign_report(dir: &Path, years: f64) -> Result<Report, ReportError> {
    let src = load_campaign(dir)?;
    let own = campaign_model(&src, dir);
    campaign_report_from(&src, dir, years, &own.view())
}

/// A fitted model with the runs it was fitted on, and the notes on runs left out.
pub struct FittedModel {
    /// The model: calibrated, or standalone while no run is usable.
    pub model: Model,
    /// Where it came from, in words (`fitted on the campaign's measured runs`).
    pub source: String,
    /// The measured runs it was fitted on.
    pub runs: Vec<MeasuredRun>,
    /// Why runs were left out, and what the fit noticed, for the user.
    pub notes: Vec<String>,
}

impl FittedModel {
    /// The model as a report takes it (borrowed, no copy).
    pub fn view(&self) -> ReportModel<'_> {
        ReportModel {
            model: &self.model,
            source: &self.source,
            runs: &self.runs,
        }
    }
}

/// The calibrated model fitted on a campaign's own measured runs (the standalone model while
/// none is usable), as `campaign status`, the app and the guided strategy fit it.
pub fn campaign_model(src: &CampaignSource, dir: &Path) -> FittedModel {
    let (runs, mut notes) = crate::campaign::measured::campaign_runs(dir).unwrap_or_else(|e| {
        (
            Vec::new(),
            vec![format!("{}: cannot read the runs: {e}", dir.display())],
        )
    });
    let (model, fit_notes) = Model::fit(&src.inputs, src.settings.interp, &runs);
    notes.extend(fit_notes);
    FittedModel {
        source: crate::campaign::answer::fitted_on(runs.len()),
        model,
        runs,
        notes,
    }
}

/// The report of a loaded campaign, ranked by `model`; its `settings` may have been changed
/// (e.g. another TTS_w for the prediction views; the campaign's own FN and best keep the TTS_w
/// it ran with).
pub fn campaign_report_from(
    src: &CampaignSource,
    dir: &Path,
    years: f64,
    model: &ReportModel,
) -> Result<Report, ReportError> {
    // The prediction views rank components side by side; on a layout tree they would propose
    // placements of another layout, so a tree campaign's report shows what it measured only.
    let tree = src.status.layout.is_some();
    let problem = if tree {
        None
    } else {
        Some(Problem::build(
            &src.inputs,
            &src.settings,
            ProblemOptions {
                model: Some(model.model),
                cost_model: None,
            },
        )?)
    };
    Ok(build(&ReportRequest {
        title: if src.status.scaling.is_some() {
            format!("Scaling campaign {}", campaign_name(dir))
        } else {
            format!("Load-balance campaign {}", campaign_name(dir))
        },
        source: format!("Campaign directory {}", dir.display()),
        problem: problem.as_ref(),
        inputs: &src.inputs,
        tts_w: src.settings.tts_w,
        top: src.settings.top,
        axes: (0, usize::from(src.inputs.len() > 1)),
        fixed: None,
        original: src.original.clone(),
        campaign: Some(&src.status),
        years,
        model: (!tree).then_some(*model),
    }))
}

fn campaign_name(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .ok()
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// Writes the HTML page atomically.
pub fn write_html(report: &Report, path: &Path) -> Result<(), ReportError> {
    write(path, report.to_html().as_bytes())
}

/// Writes the Markdown file and its SVG figures beside it; returns every path written.
pub fn write_markdown(report: &Report, path: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let dir = path.parent().unwrap_or(Path::new(""));
    let (md, files) = report.to_markdown(&stem);
    let mut written = Vec::new();
    for (name, svg) in files {
        let p = dir.join(name);
        write(&p, svg.as_bytes())?;
        written.push(p);
    }
    write(path, md.as_bytes())?;
    written.insert(0, path.to_path_buf());
    Ok(written)
}

/// Writes atomically, creating the directory; the file is readable by others (a report is
/// made to be shared), unlike the private temporary file it starts as.
fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    crate::fsutil::write_atomically(path, bytes).map_err(err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).map_err(err)?;
    }
    Ok(())
}
