//! `autolb predict`: the prediction as a table or one JSON object.
//!
//! Settings come from `--config FILE` (the campaign file) and flags; a flag wins over the file
//! (see [`crate::shared::prediction_flags`]). The run reads top to bottom: the flags and the
//! file are resolved into one checked value ([`PredictRun`]), then the measured runs or the
//! model file are loaded, the configurations ranked, and the result printed.

#[cfg(test)]
mod app_tests;
pub mod front;
mod groups;
pub mod json;
pub mod layout;

use clap::Args;
use color_eyre::eyre::Result;

use autolb::machine::{CostModel, Placement};
use autolb::model::{EstimateRequest, Model};
use autolb::predict::{
    self, at_threads, ComponentInput, Prediction, Problem, ProblemOptions, Scored,
};

use crate::shared::error::user;
use crate::shared::hybrid_model;
use crate::shared::output::errln;
use crate::shared::output::write_out;
use crate::shared::prediction_flags::{
    ModelFlags, ModelRequest, PredictionFlags, PredictionSetup, ResolvedModel,
};
use json::PredictionJson;

#[derive(Debug, Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub prediction: PredictionFlags,
    /// With --measured or --model, the calibrated model ranks.
    #[command(flatten)]
    pub model: ModelFlags,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print the speed/cost front of the kept configurations and the TTS_w interval in which
    /// each configuration is the top-1, instead of the top N.
    #[arg(long)]
    pub front: bool,
    /// With --front: print CSV (one row per configuration) for reports and plotting tools.
    #[arg(long, requires = "front", conflicts_with = "json")]
    pub csv: bool,
    /// Print the best configuration as a fragment of a model's own configuration instead of
    /// the table: `ecearth4` writes EC-Earth4's experiment-config YAML (`job.launch.method:
    /// slurm-hetjob` and each component's ntasks, ntasks_per_node and omp_num_threads); `cime`
    /// (with a campaign file's `layout`) writes the `./xmlchange` lines of a CIME case.
    #[arg(long, value_name = "FORMAT", conflicts_with_all = ["json", "front"])]
    pub emit: Option<EmitFormat>,
}

/// What `--emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmitFormat {
    /// EC-Earth4's experiment configuration (YAML), the het-job form.
    Ecearth4,
    /// A CIME case's `./xmlchange` lines (NTASKS, ROOTPE, NTHRDS of every class) and
    /// `./case.setup --reset`; needs `layout` in the campaign file.
    Cime,
}

/// What `predict` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Table,
    Json,
    FrontTable,
    FrontJson,
    FrontCsv,
    Emit(EmitFormat),
}

/// `predict`'s flags and campaign file, resolved and checked: everything the run needs.
struct PredictRun {
    setup: PredictionSetup,
    /// The model flags, checked (`None`: the standalone model ranks).
    model: Option<ModelRequest>,
    /// Where the model came from, for the line that says which ranked.
    origin: Origin,
    /// Each component's thread count per rank when the calibrated model predicts hybrid
    /// components (`setup.inputs` are then in cores; see [`hybrid_inputs`]).
    threads: Option<Vec<u32>>,
    output: Output,
}

/// Which flag gave the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Standalone,
    Measured,
    ModelFile,
}

impl PredictRun {
    fn resolve(args: &PredictArgs) -> Result<PredictRun> {
        let mut setup = args.prediction.resolve()?;
        let output = match (args.emit, args.front, args.json, args.csv) {
            (Some(format), ..) => Output::Emit(format),
            (None, true, true, _) => Output::FrontJson,
            (None, true, _, true) => Output::FrontCsv,
            (None, true, _, _) => Output::FrontTable,
            (None, false, true, _) => Output::Json,
            (None, false, _, _) => Output::Table,
        };
        if args.front && !args.model.steps.is_empty() {
            return Err(user(
                "--front cannot use --steps (per-step series make the coupled speed other than the \
                 slowest component's); drop --steps, or use `autolb predict --steps` for the top N",
            ));
        }
        // With node groups the model is fitted in cores at the runs' thread counts
        // (`groups::calibrated`), not on the inputs as they are.
        let groups = setup
            .cost_model
            .machine
            .is_some_and(|m| m.placement == Placement::Groups);
        let threads = if args.model.wants_model() && !groups {
            hybrid_inputs(&mut setup, &args.model)?
        } else {
            None
        };
        let model = if args.model.wants_model() && !groups {
            Some(
                args.model
                    .request(&setup.inputs, setup.file.as_ref(), None)?,
            )
        } else {
            None
        };
        let origin = if args.model.model.is_some() {
            Origin::ModelFile
        } else if args.model.measured.is_empty() {
            Origin::Standalone
        } else {
            Origin::Measured
        };
        Ok(PredictRun {
            setup,
            model,
            threads,
            origin,
            output,
        })
    }
}

pub fn run(args: &PredictArgs) -> Result<()> {
    write_out(&output(args)?)
}

/// What `predict` prints for these arguments (its notes go to stderr as it runs).
pub fn output(args: &PredictArgs) -> Result<String> {
    let run = PredictRun::resolve(args)?;
    if let Some((file, _)) = &run.setup.file {
        if let Some(tree) = file.layout_tree().map_err(user)? {
            return run_layout(args, &run, &tree);
        }
    }
    if run.output == Output::Emit(EmitFormat::Cime) {
        return Err(user(
            "--emit cime writes a CIME case's layout: give the campaign file a layout, e.g. layout = \"ocn | (atm ; (ice | lnd))\"",
        ));
    }
    let groups = run
        .setup
        .cost_model
        .machine
        .is_some_and(|m| m.placement == Placement::Groups);
    if groups {
        if args.front {
            return Err(user(
                "placement = \"groups\" ranks the best node packing of each node count, not a front; drop --front, or use placement = \"packed\"",
            ));
        }
        let output = match run.output {
            Output::Json => groups::Output::Json,
            Output::Emit(EmitFormat::Ecearth4) => groups::Output::Ecearth4,
            _ => groups::Output::Table,
        };
        return groups::run(&run.setup, &args.model, output);
    }
    if let Some(request) = &run.model {
        for n in &request.notes {
            errln!("autolb: note: {n}");
        }
    }
    let setup = &run.setup;
    let resolved = match &run.model {
        Some(request) => {
            let resolved = request.load(&setup.inputs, setup.settings.interp)?;
            for n in &resolved.notes {
                errln!("autolb: note: {n}");
            }
            Some(resolved)
        }
        None => None,
    };
    match run.output {
        Output::FrontTable | Output::FrontJson | Output::FrontCsv => {
            let model = resolved.map_or(Model::Standalone, |r| r.model);
            if run.model.is_some() && !model.is_calibrated() {
                errln!("autolb: note: no usable measured run; the front is the standalone model's");
            }
            let mut problem = Problem::build(
                &setup.inputs,
                &setup.settings,
                ProblemOptions {
                    model: Some(&model),
                    cost_model: Some(&setup.cost_model),
                },
            )
            .map_err(user)?;
            if let Some(threads) = &run.threads {
                at_threads::label(&mut problem, threads);
            }
            let trade_off = front::TradeOff::of(&problem);
            Ok(match run.output {
                Output::FrontJson => {
                    serde_json::to_string_pretty(&trade_off.json()).map_err(user)? + "\n"
                }
                Output::FrontCsv => trade_off.csv()?,
                _ => front::table(&trade_off),
            })
        }
        Output::Table | Output::Json | Output::Emit(_) => match resolved {
            Some(resolved) => print_with_model(&run, &resolved),
            None => {
                let prediction =
                    predict::predict_billed(&setup.inputs, &setup.settings, &setup.cost_model)
                        .map_err(user)?;
                Ok(if let Output::Emit(format) = run.output {
                    emit(
                        format,
                        &prediction,
                        &setup.cost_model,
                        "the standalone model",
                    )?
                } else if run.output == Output::Json {
                    let json = PredictionJson::new(&prediction, &setup.settings, None, &[]);
                    serde_json::to_string_pretty(&json).map_err(user)? + "\n"
                } else {
                    format!("{}{}", table(&prediction), billing_lines(&setup.cost_model))
                })
            }
        },
    }
}

/// `predict --config` with a `layout`: the layout tree's ranking; what it cannot price yet is
/// refused in one line.
fn run_layout(
    args: &PredictArgs,
    run: &PredictRun,
    tree: &autolb::layout::Layout,
) -> Result<String> {
    let not_yet = |what: &str| {
        Err(user(format!(
            "{what} is not done for a layout tree yet; drop it, or drop `layout` to balance the components side by side"
        )))
    };
    let front_beside = || {
        Err(user(
            "--front: a layout tree's speed/cores front is printed after its ranking by fittingness (`front` in --json); drop --front",
        ))
    };
    if args.front {
        return front_beside();
    }
    if args.model.wants_model() {
        return not_yet("the calibrated model (--measured, --model, --steps)");
    }
    if !run.setup.cost_model.is_plain() {
        return not_yet("pricing by [machine], cost, queues or [[resource]]");
    }
    let output = match run.output {
        Output::Table => layout::LayoutOutput::Table,
        Output::Json => layout::LayoutOutput::Json,
        Output::Emit(EmitFormat::Cime) => layout::LayoutOutput::Cime,
        Output::Emit(EmitFormat::Ecearth4) => return not_yet("--emit ecearth4"),
        _ => return front_beside(),
    };
    layout::run(tree, &run.setup.inputs, &run.setup.settings, output)
}

/// `predict --measured/--model`: the calibrated model ranks; the output says so and gives each
/// proposal's band.
fn print_with_model(run: &PredictRun, resolved: &ResolvedModel) -> Result<String> {
    let PredictionSetup {
        inputs,
        settings,
        cost_model,
        ..
    } = &run.setup;
    let model = &resolved.model;
    let mut problem = Problem::build(
        inputs,
        settings,
        ProblemOptions {
            model: Some(model),
            cost_model: Some(cost_model),
        },
    )
    .map_err(user)?;
    if let Some(threads) = &run.threads {
        at_threads::label(&mut problem, threads);
    }
    let prediction = if resolved.steps.is_empty() {
        predict::full_model::rank(&problem, model, inputs, settings.tts_w, settings.top)
    } else {
        rank_with_steps(&problem, model, inputs, &resolved.steps)?
    };
    let bands: Vec<(f64, f64)> = prediction
        .top
        .iter()
        .map(|c| {
            let e = model.estimate(&EstimateRequest::stepped(
                inputs,
                settings.interp,
                &c.nproc,
                &resolved.steps,
            ));
            (e.low, e.high)
        })
        .collect();
    Ok(if let Output::Emit(format) = run.output {
        let by = if model.is_calibrated() {
            "the calibrated model"
        } else {
            "the standalone model"
        };
        emit(format, &prediction, cost_model, by)?
    } else if run.output == Output::Json {
        let json = PredictionJson::new(&prediction, settings, Some(model.kind()), &bands);
        serde_json::to_string_pretty(&json).map_err(user)? + "\n"
    } else {
        format!(
            "{}{}{}",
            table(&prediction),
            billing_lines(cost_model),
            model_lines(
                model,
                run.origin,
                &prediction,
                &bands,
                !resolved.steps.is_empty()
            )
        )
    })
}

/// With hybrid components and a calibrated model: puts each component at the thread count its
/// measured runs ran, in cores (`setup.inputs` replaced), prints the notes, and returns the
/// thread counts to label the candidates with; `None` (nothing changed) when every component
/// runs 1 thread per rank.
fn hybrid_inputs(setup: &mut PredictionSetup, flags: &ModelFlags) -> Result<Option<Vec<u32>>> {
    let Some(at) = hybrid_model::at_measured_threads(setup, flags)? else {
        return Ok(None);
    };
    for n in &at.notes {
        errln!("autolb: note: {n}");
    }
    setup.inputs = at.inputs;
    Ok(Some(at.threads))
}

/// `--emit`: the best configuration as the model's own configuration text.
fn emit(format: EmitFormat, p: &Prediction, cost_model: &CostModel, by: &str) -> Result<String> {
    if format == EmitFormat::Cime {
        return Err(user("--emit cime needs a campaign file with a layout"));
    }
    // Problem::build refuses a prediction with nothing kept, so there is a best one.
    let Some(best) = p.top.first() else {
        return Ok(String::new());
    };
    let cores_per_node = cost_model.machine.as_ref().map(|m| m.cores_per_node);
    predict::emit_ecearth4::hetjob_fragment(
        &p.components,
        best,
        cores_per_node,
        p.tts_w,
        &format!("autolb predict: the best configuration by {by}"),
    )
    .map_err(user)
}

/// The billing note as whole lines (empty without a machine or cost).
fn billing_lines(model: &CostModel) -> String {
    billing_note(model)
        .map(|line| format!("{line}\n"))
        .unwrap_or_default()
}

/// Most configurations `--steps` enumerates (it has no bottleneck structure to search).
const STEPS_ENUMERATION_LIMIT: u64 = 20_000_000;

/// Ranks by enumerating every configuration with the irregular-steps coupled speed.
fn rank_with_steps(
    problem: &Problem,
    model: &Model,
    inputs: &[ComponentInput],
    steps: &autolb::model::steps::Steps,
) -> Result<Prediction> {
    let size: u64 = problem
        .components
        .iter()
        .map(|c| c.nproc.len() as u64)
        .try_fold(1u64, |a, n| a.checked_mul(n))
        .unwrap_or(u64::MAX);
    if size > STEPS_ENUMERATION_LIMIT {
        return Err(user(format!(
            "--steps enumerates every configuration and this problem has {size}; raise --step (at most {STEPS_ENUMERATION_LIMIT})"
        )));
    }
    let settings = &problem.settings;
    let names = problem.names();
    // Each component's reference speed: its curve's, or the model's learned law.
    let interpolants: Vec<Option<autolb::interp::Interpolant>> = inputs
        .iter()
        .map(|c| {
            c.curve
                .as_ref()
                .map(|c| autolb::interp::Interpolant::new(settings.interp, &c.xs(), &c.ys()))
        })
        .collect();
    let speed = |c: usize, p: u32| {
        let i = problem.candidate_index(c, p);
        match (i, &interpolants[c]) {
            (Some(i), _) => problem.components[c].sypd[i],
            (None, Some(f)) => model.adjust(&names[c], p, f.eval(f64::from(p))),
            (None, None) => model.adjust(
                &names[c],
                p,
                model.reference_sypd(&names[c], p).unwrap_or(f64::NAN),
            ),
        }
    };
    let coupled = |index: &[usize]| {
        let nproc: Vec<u32> = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        steps.coupled_sypd(&names, &nproc, speed)
    };
    let r = predict::naive::enumerate_with(problem, settings.tts_w, settings.top, &coupled);
    let mut baseline = problem.baseline(settings.tts_w);
    baseline.sypd = coupled(&vec![0; names.len()]);
    baseline.chsy = autolb::metrics::chsy(f64::from(baseline.total_nproc), baseline.sypd);
    // FN weighs the billed cost (CHSY without a machine), as in the enumeration.
    let base_cost = autolb::metrics::chsy(problem.weight_of(&baseline.nproc), baseline.sypd);
    baseline.fittingness = autolb::metrics::fittingness_in(
        settings.tts_w,
        baseline.sypd,
        base_cost,
        &r.sypd_bounds,
        &r.cost_bounds,
    );
    Ok(Prediction {
        components: names,
        configurations: r.configurations,
        considered: r.considered,
        baseline,
        sypd_bounds: r.sypd_bounds,
        cost_bounds: r.cost_bounds,
        tts_w: settings.tts_w,
        top: r.top,
        cost: (!problem.cost_model.is_plain()).then_some(problem.cost_model.cost),
    })
}

/// Which model ranked, and each proposal's band.
fn model_lines(
    model: &Model,
    origin: Origin,
    p: &Prediction,
    bands: &[(f64, f64)],
    steps: bool,
) -> String {
    let how = if steps {
        ", coupled time summed over per-step series (--steps)"
    } else {
        ""
    };
    let mut out = match model {
        Model::Standalone if origin == Origin::Standalone => {
            format!("ranked by the standalone model{how}\n")
        }
        Model::Standalone => {
            format!("ranked by the standalone model (no usable measured run; see the notes){how}\n")
        }
        Model::Calibrated(m) => format!(
            "ranked by the calibrated model (fitted on {} run(s){}){how}\n",
            m.runs,
            if origin == Origin::ModelFile {
                ", from --model"
            } else {
                ""
            }
        ),
    };
    if model.is_calibrated() {
        let bands: Vec<String> = p
            .top
            .iter()
            .zip(bands)
            .enumerate()
            .map(|(i, (_, (lo, hi)))| format!("{}: {lo:.2}-{hi:.2}", i + 1))
            .collect();
        out.push_str(&format!("SYPD band (90 %): {}\n", bands.join(", ")));
    }
    out
}

/// What the billing columns mean, under the table (nothing for the plain model).
fn billing_note(model: &CostModel) -> Option<String> {
    if model.is_plain() {
        return None;
    }
    if model.has_resources() {
        let resources: Vec<String> = model
            .resources
            .iter()
            .map(|r| {
                format!(
                    "{} ({} per node, unit cost {}{})",
                    r.name,
                    r.units_per_node,
                    r.unit_cost,
                    r.max_units
                        .map(|m| format!(", max {m} units"))
                        .unwrap_or_default()
                )
            })
            .collect();
        return Some(format!(
            "cost: {} ({}) in CPU core-hour equivalents; resources: {}; nodes, billed and idle add up every resource's nodes and units",
            model.cost.label(),
            model.cost.header(),
            resources.join(", ")
        ));
    }
    let machine = match &model.machine {
        Some(m) => format!(
            "{} cores per node, {} placement, extras {}",
            m.cores_per_node,
            m.placement.label(),
            if m.extras_share_node {
                "share nodes"
            } else {
                "on their own nodes"
            }
        ),
        None => "no machine: cores = used PEs".to_string(),
    };
    let queue = match &model.queue {
        Some(q) => format!("only configurations that fit queue {q}"),
        None => "queue: the smallest queue each configuration fits (- for none)".to_string(),
    };
    Some(format!(
        "cost: {} ({}); {machine}; {queue}",
        model.cost.label(),
        model.cost.header()
    ))
}

/// The human-readable table.
pub fn table(p: &Prediction) -> String {
    let mut out = String::new();
    let names = &p.components;
    // With a hybrid component each cell is `ranks x threads = cores`, and the total counts cores.
    let threaded = p
        .top
        .iter()
        .chain(std::iter::once(&p.baseline))
        .any(Scored::is_threaded);
    let width = if threaded { 13 } else { 8 };
    let mut header = format!("{:>4}", "rank");
    for n in names {
        header.push_str(&format!(" {n:>width$}"));
    }
    header.push_str(&format!(
        " {:>7} {:>8} {:>9} {:>9} {:>7}",
        "total", "SYPD", "CHSY", "cpl cost", "FN"
    ));
    let billed = p.cost.map(|k| k.header());
    // Queues are not combined with resources: no queue column then.
    let queues = p
        .baseline
        .billing
        .as_ref()
        .is_none_or(|b| b.resources.is_empty());
    if let Some(cost) = billed {
        header.push_str(&format!(
            " {:>5} {:>6} {:>5} {:>9} {:<8}",
            "nodes",
            "billed",
            "idle",
            cost,
            if queues { "queue" } else { "" }
        ));
    }
    let header = if queues {
        header
    } else {
        header.trim_end().to_string()
    };
    out.push_str(&header);
    out.push('\n');
    let row = |label: String, c: &Scored| {
        let mut line = format!("{label:>4}");
        for (k, n) in c.nproc.iter().enumerate() {
            if threaded {
                let t = c.threads.get(k).copied().unwrap_or(1);
                let cell = format!("{}x{t}={n}", n / t.max(1));
                line.push_str(&format!(" {cell:>width$}"));
            } else {
                line.push_str(&format!(" {n:>8}"));
            }
        }
        line.push_str(&format!(
            " {:>7} {:>8.2} {:>9.0} {:>8.1}% {:>7.4}\n",
            c.total_nproc,
            c.sypd,
            c.chsy,
            c.coupling_cost * 100.0,
            c.fittingness
        ));
        if let Some(b) = &c.billing {
            line.pop();
            line.push_str(&format!(
                " {:>5} {:>6} {:>5} {:>9.1} {:<8}",
                b.nodes,
                b.billed_cores,
                b.idle_cores,
                b.cost,
                if queues {
                    b.queue.as_deref().unwrap_or("-")
                } else {
                    ""
                }
            ));
            let trimmed = line.trim_end().len();
            line.truncate(trimmed);
            line.push('\n');
        }
        line
    };
    for (i, c) in p.top.iter().enumerate() {
        out.push_str(&row((i + 1).to_string(), c));
    }
    out.push_str(&row("base".into(), &p.baseline));
    out.push_str(&format!(
        "{} feasible configurations, {} at least as good as the base case; TTS_w {:.2}\n",
        p.configurations, p.considered, p.tts_w
    ));
    if threaded {
        out.push_str(
            "each component: MPI ranks x OpenMP threads per rank = cores; total, CHSY and cost \
             count cores\n",
        );
    }
    out.push_str(&resource_table(p));
    out
}

/// Per resource and configuration: units used / nodes / idle units / cost share (nothing
/// without `[[resource]]` tables).
fn resource_table(p: &Prediction) -> String {
    let Some(first) = p
        .baseline
        .billing
        .as_ref()
        .filter(|b| !b.resources.is_empty())
    else {
        return String::new();
    };
    let mut out = String::from("per resource: units used / nodes / idle units / cost share\n");
    let mut header = format!("{:>4}", "rank");
    for r in &first.resources {
        header.push_str(&format!(" {:>24}", r.name));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    let rows = p
        .top
        .iter()
        .enumerate()
        .map(|(i, c)| ((i + 1).to_string(), c))
        .chain(std::iter::once(("base".to_string(), &p.baseline)));
    for (label, c) in rows {
        let Some(b) = &c.billing else { continue };
        let mut line = format!("{label:>4}");
        for r in &b.resources {
            let cell = format!(
                "{} / {} / {} / {:.0}%",
                r.units,
                r.nodes,
                r.idle_units,
                r.cost_share * 100.0
            );
            line.push_str(&format!(" {cell:>24}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
