//! `autolb report`: a campaign (or a prediction alone) as one self-contained HTML page, or as
//! Markdown with SVG files beside it.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;

use autolb::config::CampaignFile;
use autolb::model::Model;
use autolb::predict::ComponentInput;
use autolb::predict::{Problem, ProblemOptions};
use autolb::report::source::FittedModel;
use autolb::report::{self, source, ReportRequest, DEFAULT_YEARS};

use crate::shared::error::user;
use crate::shared::output::{errln, outln, write_out};
use crate::shared::prediction_flags::{
    load_config, resolve_with, ModelFlags, PredictionFlags, ResolvedModel,
};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A campaign directory; without it, the report is of the prediction given by --config or
    /// --curve flags.
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub prediction: PredictionFlags,
    /// With --measured or --model, the calibrated model ranks the prediction views (a campaign
    /// directory's report uses the model fitted on its own runs without them).
    #[command(flatten)]
    pub model: ModelFlags,
    /// Where to write [default: DIR/report.html for a campaign, ./report.html otherwise;
    /// .md with --markdown]; `-` writes the HTML page to stdout (not with --markdown, whose
    /// figures are files beside it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write Markdown with the figures as SVG files beside it, for a wiki or a git repository.
    #[arg(long)]
    pub markdown: bool,
    /// Length of the production experiment the savings are counted over, in simulated years.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_YEARS)]
    pub years: f64,
}

pub fn run(args: &ReportArgs) -> Result<()> {
    if !(args.years.is_finite() && args.years > 0.0) {
        return Err(user(format!(
            "--years {}: give the simulated years of the production run, a positive number like 250",
            args.years
        )));
    }
    let to_stdout = args.out.as_deref() == Some(Path::new("-"));
    if to_stdout && args.markdown {
        return Err(user(
            "--out - writes the HTML page to stdout; --markdown writes its figures beside the page, so give it a file path",
        ));
    }
    let flags = &args.prediction;
    let has_prediction =
        flags.config.is_some() || !flags.curves.is_empty() || !flags.components.is_empty();
    let report = match (&args.dir, has_prediction) {
        (Some(_), true) => {
            return Err(user(
                "give either a campaign DIR or --config/--curve for a prediction, not both",
            ))
        }
        (Some(dir), false) => campaign_report(dir, args)?,
        (None, true) => prediction_report(args)?,
        (None, false) => {
            return Err(user(
                "nothing to report: give a campaign DIR, or --config FILE (or --curve NAME=PATH ... --max-nproc N) for a prediction",
            ))
        }
    };
    if to_stdout {
        return write_out(&report.to_html());
    }
    let ext = if args.markdown { "md" } else { "html" };
    let out = args.out.clone().unwrap_or_else(|| match &args.dir {
        Some(dir) => dir.join(format!("report.{ext}")),
        None => PathBuf::from(format!("report.{ext}")),
    });
    if args.markdown {
        let written = source::write_markdown(&report, &out).map_err(user)?;
        outln!(
            "wrote {} and {} figure(s) beside it",
            out.display(),
            written.len() - 1
        )?;
    } else {
        source::write_html(&report, &out).map_err(user)?;
        let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        outln!("wrote {} ({} kB)", out.display(), size.div_ceil(1024))?;
    }
    Ok(())
}

/// A campaign's report; prediction flags change the prediction views (curves' marks, matrix,
/// top N), never the campaign's own measurements.
fn campaign_report(dir: &Path, args: &ReportArgs) -> Result<report::Report> {
    let flags = &args.prediction;
    if !flags.allowed.is_empty() {
        return Err(user(
            "--allowed applies to predictions; a campaign keeps the allowed lists it was created with",
        ));
    }
    let mut src = source::load_campaign(dir).map_err(user)?;
    let s = &mut src.settings;
    s.max_nproc = flags.max_nproc.unwrap_or(s.max_nproc);
    s.step = flags.step.unwrap_or(s.step);
    s.tts_w = flags.tts_w.unwrap_or(s.tts_w);
    s.top = flags.top.unwrap_or(s.top);
    s.interp = flags.interp.unwrap_or(s.interp);
    s.extra_pes = flags.extra_pes.unwrap_or(s.extra_pes);
    let fitted = if args.model.wants_model() {
        let period_s = src.status.period_s;
        flagged_model(args, &src.inputs, None, period_s, src.settings.interp)?
    } else {
        let own = source::campaign_model(&src, dir);
        // Said only when runs were measured: a campaign that has none yet has nothing to say.
        if !own.model.is_calibrated() && src.status.counts.done > 0 {
            errln!(
                "autolb: note: no measured run of the campaign calibrates a model yet; the standalone model ranks the prediction views"
            );
        }
        own
    };
    source::campaign_report_from(&src, dir, args.years, &fitted.view()).map_err(user)
}

/// The model `--measured` or `--model` asks for, loaded, with its notes printed.
fn flagged_model(
    args: &ReportArgs,
    inputs: &[ComponentInput],
    file: Option<&(CampaignFile, PathBuf)>,
    period_s: Option<f64>,
    interp: autolb::interp::Method,
) -> Result<FittedModel> {
    if !args.model.steps.is_empty() {
        return Err(user(
            "report does not take --steps; use `autolb predict --steps` for per-step series",
        ));
    }
    let request = args.model.request(inputs, file, period_s)?;
    for n in &request.notes {
        errln!("autolb: note: {n}");
    }
    let ResolvedModel {
        model, runs, notes, ..
    } = request.load(inputs, interp)?;
    for n in &notes {
        errln!("autolb: note: {n}");
    }
    if !model.is_calibrated() {
        errln!("autolb: note: no usable measured run; the standalone model ranks");
    }
    let source = match &args.model.model {
        Some(path) => format!("from {}", path.display()),
        None => format!(
            "fitted on the measured runs in {}",
            args.model
                .measured
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(FittedModel {
        model,
        source,
        runs,
        notes,
    })
}

fn prediction_report(args: &ReportArgs) -> Result<report::Report> {
    let flags = &args.prediction;
    let file = load_config(flags)?;
    let (inputs, settings) = resolve_with(flags, file.as_ref())?;
    let fitted = if args.model.wants_model() {
        flagged_model(args, &inputs, file.as_ref(), None, settings.interp)?
    } else {
        FittedModel {
            model: Model::Standalone,
            source: "the curves alone".into(),
            runs: Vec::new(),
            notes: Vec::new(),
        }
    };
    let problem = Problem::build(
        &inputs,
        &settings,
        ProblemOptions {
            model: Some(&fitted.model),
            cost_model: None,
        },
    )
    .map_err(user)?;
    let original = match (&file, &flags.config) {
        (Some((file, _)), Some(path)) => original_from_file(file, path, &inputs)?,
        _ => None,
    };
    let source = match &flags.config {
        Some(p) => format!("Prediction from {}", p.display()),
        None => format!(
            "Prediction from {}",
            flags
                .curves
                .iter()
                .map(|(n, p)| format!("{n}={p}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(report::build(&ReportRequest {
        title: "Load-balance prediction".into(),
        source,
        problem: Some(&problem),
        inputs: &inputs,
        tts_w: settings.tts_w,
        top: settings.top,
        axes: (0, usize::from(inputs.len() > 1)),
        fixed: None,
        original,
        campaign: None,
        years: args.years,
        model: args.model.wants_model().then(|| fitted.view()),
    }))
}

/// The campaign file's `[original]`, in component order; it must name every component.
fn original_from_file(
    file: &CampaignFile,
    path: &Path,
    inputs: &[autolb::predict::ComponentInput],
) -> Result<Option<Vec<u32>>> {
    let Some(original) = &file.original else {
        return Ok(None);
    };
    inputs
        .iter()
        .map(|c| {
            original.get(c.name()).copied().ok_or_else(|| {
                user(format!(
                    "{}: [original] has no PEs for component {:?}; add `{} = N`",
                    path.display(),
                    c.name(),
                    c.name()
                ))
            })
        })
        .collect::<Result<Vec<u32>>>()
        .map(Some)
}
