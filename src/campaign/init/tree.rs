//! `campaign init` on a layout tree: what such a campaign refuses, and its first tests.
//!
//! The first tests are the speed/PE front of the tree within the budget
//! ([`crate::layout::search::front`]): the fastest placement the curves give, then the fastest
//! on fewer PEs, and so on, each component at one of the counts its limits, allowed list and
//! the prediction's `step` allow. What the tree path does not do yet is refused in one line
//! that names the key.

use super::CampaignError;
use crate::campaign::state::FrozenComponent;
use crate::config::{CampaignFile, Strategy};
use crate::interp::Interpolant;
use crate::layout::search;
use crate::layout::Layout;
use crate::predict::{ComponentInput, Settings};

/// The campaign file's layout tree, after refusing what a campaign on a tree does not do;
/// `None` without `layout`.
pub(super) fn checked_tree(
    file: &CampaignFile,
    origin: &str,
) -> Result<Option<Layout>, CampaignError> {
    let invalid = |message: String| CampaignError::Invalid {
        file: origin.to_string(),
        message,
    };
    let Some(tree) = file.layout_tree().map_err(|e| invalid(e.to_string()))? else {
        return Ok(None);
    };
    if file.strategy == Some(Strategy::Guided) {
        return Err(invalid(
            "strategy = \"guided\" does not search a layout tree yet; leave strategy out (Algorithm 1 balances the tree) or drop `layout`".into(),
        ));
    }
    if file.scaling.is_some() {
        return Err(invalid(
            "[scaling] measures curves of components side by side; drop `layout` for a scaling campaign".into(),
        ));
    }
    if !file.resources.is_empty() {
        return Err(invalid(
            "[[resource]] tables are not priced on a layout tree; drop them or `layout`".into(),
        ));
    }
    if file
        .executor
        .as_ref()
        .is_some_and(|e| e.kind == crate::executor::ExecutorKind::Slurm)
    {
        return Err(invalid(
            "[executor] kind = \"slurm\" does not lay out a tree yet; use kind = \"command\" with a script that sets the case's layout ({rootpe.NAME}, {ntasks.NAME}, {nthrds.NAME}) and submits it, or kind = \"sim\"".into(),
        ));
    }
    if !file.queues.is_empty() {
        return Err(invalid(
            "[[queue]] tables are not checked on a layout tree yet; drop them (max_nproc bounds the PEs the layout spans) or drop `layout`".into(),
        ));
    }
    Ok(Some(tree))
}

/// Refuses components the tree path cannot run: one without a curve, one with threads.
pub(super) fn check_inputs(inputs: &[ComponentInput], origin: &str) -> Result<(), CampaignError> {
    for c in inputs {
        let why = match &c.curve {
            None => Some("has no curve; a campaign on a layout tree starts from every component's curve: give it curve = \"PATH\""),
            Some(curve) if curve.threads() > 1 || !c.thread_curves.is_empty() => Some(
                "has curves at several thread counts; a campaign on a layout tree runs one thread per task: give its single-thread curve",
            ),
            Some(_) => None,
        };
        if let Some(why) = why {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message: format!("component {} {why}", c.name),
            });
        }
    }
    Ok(())
}

/// The task counts the search may give `component`: its allowed list, or every `step` from
/// its low limit, within its limits.
fn counts(component: &FrozenComponent, step: u32) -> Vec<u32> {
    match &component.allowed {
        Some(list) => list
            .iter()
            .copied()
            .filter(|p| (component.low..=component.high).contains(p))
            .collect(),
        None => (component.low..=component.high)
            .step_by(step.max(1) as usize)
            .collect(),
    }
}

/// The ranked candidates for the first tests: task counts in component order, best first.
pub(super) fn candidates(
    tree: &Layout,
    inputs: &[ComponentInput],
    components: &[FrozenComponent],
    settings: &Settings,
    origin: &str,
) -> Result<Vec<Vec<u32>>, CampaignError> {
    let curves: Vec<(String, Interpolant, Vec<u32>)> = inputs
        .iter()
        .zip(components)
        .filter_map(|(input, frozen)| {
            let curve = input.curve.as_ref()?;
            let f = Interpolant::new(settings.interp, &curve.xs(), &curve.ys());
            Some((frozen.name.clone(), f, counts(frozen, settings.step)))
        })
        .collect();
    let find = |name: &str| curves.iter().find(|(n, ..)| n == name);
    let count_of = |name: &str| find(name).map(|c| c.2.clone()).unwrap_or_default();
    let time = |name: &str, p: u32| {
        let sypd = find(name)?.1.eval(f64::from(p));
        (sypd.is_finite() && sypd > 0.0).then(|| crate::metrics::SECONDS_PER_DAY / sypd)
    };
    let rows = search::front(tree, settings.max_nproc, 1, settings.top, &count_of, &time).map_err(
        |message| CampaignError::Invalid {
            file: origin.to_string(),
            message,
        },
    )?;
    if rows.is_empty() {
        return Err(CampaignError::Invalid {
            file: origin.to_string(),
            message: format!(
                "no placement of {tree} fits max_nproc = {}: the smallest task counts the curves allow do not fit; raise max_nproc or lower the components' min_nproc",
                settings.max_nproc
            ),
        });
    }
    Ok(rows
        .iter()
        .map(|row| {
            components
                .iter()
                .map(|c| {
                    row.placements
                        .iter()
                        .find(|p| p.name == c.name)
                        .map_or(0, |p| p.tasks)
                })
                .collect()
        })
        .collect())
}

/// Refuses a first test (`start`, `[original]`) whose layout spans more than `max_nproc` PEs.
pub(super) fn check_spans(
    tree: &Layout,
    components: &[FrozenComponent],
    initial: &[(Vec<u32>, String)],
    max_nproc: u32,
    origin: &str,
) -> Result<(), CampaignError> {
    let names: Vec<String> = components.iter().map(|c| c.name.clone()).collect();
    for (nproc, from) in initial {
        let span = crate::campaign::tree::width(tree, &names, nproc);
        if span > max_nproc {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message: format!(
                    "{from}: {} spans {span} PEs on layout {tree}, more than max_nproc = {max_nproc}; raise max_nproc or give fewer tasks",
                    crate::predict::ConfigurationText::new(&names, nproc).slashed()
                ),
            });
        }
    }
    Ok(())
}
