//! `autolb model check|fit`: how good the performance model is on measured runs
//! (leave-one-out), and fitting it once for `predict --model`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use color_eyre::eyre::Result;
use serde_json::json;

use autolb::interp::Method;
use autolb::model::check::{leave_one_out_by, Check};
use autolb::model::decomposition::layouts_of;
use autolb::model::{FitOptions, Model};
use autolb::predict::ComponentInput;

use crate::shared::error::user;
use crate::shared::output::errln;
use crate::shared::output::write_out;
use crate::shared::parse::parse_positive;
use crate::shared::prediction_flags::{
    load_config, resolve_components, ModelFlags, ModelRequest, PredictionFlags, ResolvedModel,
};

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Leave-one-out over the measured runs: each predicted by a model fitted on the others
    /// (repetitions of a configuration held out together), standalone against calibrated.
    Check(CheckArgs),
    /// Fit the calibrated model on the measured runs and write it as JSON.
    Fit(FitArgs),
}

#[derive(Debug, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub prediction: PredictionFlags,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Coupling period in seconds, for timing output that counts steps only (raw LUCIA)
    /// [default: the campaign file's period_s; tables carry their own].
    #[arg(long, value_name = "SECONDS", value_parser = parse_positive)]
    pub period: Option<f64>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FitArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Where to write the model (JSON), for `predict --model FILE`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

pub fn run(cmd: ModelCommand) -> Result<()> {
    match cmd {
        ModelCommand::Check(args) => check(&args),
        ModelCommand::Fit(args) => fit(&args),
    }
}

/// `model check`/`model fit`'s flags and campaign file, resolved and checked before any
/// measured run is read.
struct ModelInputs {
    components: Vec<ComponentInput>,
    interp: Method,
    request: ModelRequest,
}

impl ModelInputs {
    fn resolve(args: &CommonArgs) -> Result<ModelInputs> {
        if args.model.measured.is_empty() {
            return Err(user(
                "no measured runs: pass --measured PATH (a campaign directory, a directory of run directories, or one run directory)",
            ));
        }
        if args.model.model.is_some() {
            return Err(user(
                "--model reads a fitted model; `autolb model` fits one from --measured runs",
            ));
        }
        let file = load_config(&args.prediction)?;
        let components = resolve_components(&args.prediction, file.as_ref())?;
        if components.is_empty() {
            return Err(user(
                "no components given; pass --curve NAME=PATH or --component NAME for each component, or --config FILE",
            ));
        }
        let interp = args
            .prediction
            .interp
            .or_else(|| file.as_ref().and_then(|(f, _)| f.interp))
            .unwrap_or_default();
        let request = args
            .model
            .request(&components, file.as_ref(), args.period)?;
        Ok(ModelInputs {
            components,
            interp,
            request,
        })
    }

    /// Reads the measured runs and fits the model (notes to stderr): the components and the
    /// fit.
    fn load(self) -> Result<(Vec<ComponentInput>, Method, ResolvedModel)> {
        for n in &self.request.notes {
            errln!("autolb: note: {n}");
        }
        let resolved = self.request.load(&self.components, self.interp)?;
        for n in &resolved.notes {
            errln!("autolb: note: {n}");
        }
        Ok((self.components, self.interp, resolved))
    }
}

fn check(args: &CheckArgs) -> Result<()> {
    let (curves, interp, resolved) = ModelInputs::resolve(&args.common)?.load()?;
    // A decomposition is a property of the count, known before a run: each fold's model
    // knows those of every run, the left-out one's included.
    let options = FitOptions {
        layouts: layouts_of(&resolved.runs),
        ..FitOptions::default()
    };
    let steps = &resolved.steps;
    let (check, _) = leave_one_out_by(&curves, interp, &resolved.runs, steps, &|train| {
        Model::fit_with_options(&curves, interp, train, steps, &options).0
    });
    if check.runs.len() < 2 {
        return Err(user(format!(
            "{} usable measured run(s); leave-one-out needs at least two",
            check.runs.len()
        )));
    }
    if args.json {
        write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&check_json(&check))?
        ))
    } else {
        let names: Vec<String> = curves.iter().map(|c| c.name().to_string()).collect();
        write_out(&check_table(&check, &names))
    }
}

fn fit(args: &FitArgs) -> Result<()> {
    let (_, _, resolved) = ModelInputs::resolve(&args.common)?.load()?;
    if !resolved.model.is_calibrated() {
        return Err(user(
            "no usable measured run: nothing to fit (see the notes above)",
        ));
    }
    autolb::fsutil::write_atomically(&args.out, resolved.model.to_json().as_bytes())
        .map_err(|e| user(format!("--out {}: {e}", args.out.display())))?;
    let (fitted, length) = match &resolved.model {
        autolb::model::Model::Calibrated(m) => {
            (m.runs, format!("{}{}", length_note(m), coupling_note(m)))
        }
        autolb::model::Model::Standalone => (0, String::new()),
    };
    write_out(&format!(
        "calibrated model fitted on {} run(s) written to {}\n{length}",
        fitted,
        args.out.display()
    ))
}

/// The fixed cost per run the model learned from runs of different lengths, and the length its
/// predictions are for (empty when it learned none).
fn length_note(m: &autolb::model::Calibrated) -> String {
    match m.typical_simulated_s {
        Some(s) if m.fixed_s > 0.0 => format!(
            "fixed cost per run {:.1} s; predictions are for runs of {:.0} simulated days (the median measured run)\n",
            m.fixed_s,
            s / 86_400.0
        ),
        _ => String::new(),
    }
}

/// The coupling time per simulated day (a fixed time per coupling step) the model kept for
/// each component, if any.
fn coupling_note(m: &autolb::model::Calibrated) -> String {
    let kept: Vec<String> = m
        .components
        .iter()
        .filter(|c| c.coupling_s_per_day > 0.0)
        .map(|c| format!("{} {:.2} s", c.name, c.coupling_s_per_day))
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        format!(
            "coupling time per simulated day (fixed per coupling step): {}\n",
            kept.join(", ")
        )
    }
}

/// The `--json` object: `{"runs": [...], "summary": {...}}`, errors as fractions.
pub fn check_json(check: &Check) -> serde_json::Value {
    json!(check)
}

/// The human table: one row per run, then the summary.
pub fn check_table(check: &Check, names: &[String]) -> String {
    let mut out = format!("{:<28}", "run");
    for n in names {
        out.push_str(&format!(" {n:>6}"));
    }
    out.push_str(&format!(
        " {:>8} {:>10} {:>7} {:>10} {:>17} {:>7}\n",
        "measured", "standalone", "error", "calibrated", "band", "error"
    ));
    for r in &check.runs {
        let label = std::path::Path::new(&r.path)
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_else(|| r.path.clone());
        out.push_str(&format!("{label:<28}"));
        for n in names {
            out.push_str(&format!(" {:>6}", r.nproc.get(n).copied().unwrap_or(0)));
        }
        let band = format!("{:.2}-{:.2}", r.low, r.high);
        let (standalone, standalone_error) = match (r.standalone_sypd, r.standalone_error()) {
            (Some(s), Some(e)) => (format!("{s:.2}"), format!("{:.1}%", 100.0 * e)),
            _ => ("-".to_string(), "-".to_string()),
        };
        out.push_str(&format!(
            " {:>8.2} {:>10} {:>7} {:>10.2} {:>17} {:>6.1}%{}\n",
            r.measured_sypd,
            standalone,
            standalone_error,
            r.calibrated_sypd,
            band,
            100.0 * r.calibrated_error(),
            if r.covered() { "" } else { " *" }
        ));
    }
    let s = &check.summary;
    out.push_str(&format!(
        "{} runs, leave-one-out (repetitions held out together); absolute SYPD error:\n",
        check.runs.len()
    ));
    match &s.standalone {
        Some(sa) => out.push_str(&format!(
            "  standalone: mean {:.1} %, median {:.1} %, max {:.1} %\n",
            100.0 * sa.mean,
            100.0 * sa.median,
            100.0 * sa.max
        )),
        None => out.push_str(
            "  standalone: none (a component has no curve; the calibrated model learned it from the runs)\n",
        ),
    }
    out.push_str(&format!(
        "  calibrated: mean {:.1} %, median {:.1} %, max {:.1} %; band holds {:.0} % of runs (* = outside)\n",
        100.0 * s.calibrated.mean,
        100.0 * s.calibrated.median,
        100.0 * s.calibrated.max,
        100.0 * s.coverage
    ));
    out
}
