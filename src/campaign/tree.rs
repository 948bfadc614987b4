//! Campaigns on a layout tree (`layout = "ocn | (atm ; (ice | lnd))"`): what a configuration
//! means, what it costs and what a run of it measured.
//!
//! A configuration stays each component's task count, in component order. Where each
//! component starts follows from the tree ([`crate::layout::place`]): parts side by side on
//! disjoint PEs one after the other, parts one after the other on the same first PE. The budget
//! (`max_nproc`) and CHSY count the PEs the layout spans, as CIME counts a case's cores, plus
//! `extra_pes`; with a `[machine]` CHSY counts the whole nodes that span takes.
//!
//! A run is measured from its CIME timing file (`cesm_timing.*` or `e3sm_timing.*`, in the run
//! directory or its `timing/` folder): the coupled SYPD is the file's, and each component's run
//! time gives its partial coupling cost, `(TOT - t_i) p_i / (TOT * sum p)`, the same formula as
//! for components side by side. The strategy reads the components' times back from it
//! ([`relative_times`]): relative to TOT they are `1 - c_i * sum p / p_i`, which is all that
//! comparing the sides of a `|` needs.

use std::path::Path;

use super::measure::{processes_by_timing_name, read_whole, RunMetrics, TimingName, Unmeasured};
use crate::layout::place::{self, Placed};
use crate::layout::Layout;
use crate::machine::CostModel;
use crate::metrics;
use crate::timing::{Measurement, ReadOptions};

/// The tree of a campaign's `layout`, when it has one that reads.
pub fn tree_of(layout: Option<&str>) -> Option<Layout> {
    Layout::parse(layout?).ok()
}

/// The placement of a configuration (task counts in component order) on `tree`.
pub fn placed(tree: &Layout, names: &[String], nproc: &[u32]) -> Placed {
    place::place(tree, &|n| {
        names
            .iter()
            .position(|c| c == n)
            .and_then(|k| nproc.get(k).copied())
    })
    .unwrap_or(Placed {
        placements: Vec::new(),
        width: nproc.iter().copied().max().unwrap_or(0),
    })
}

/// The PEs a configuration spans on `tree`.
pub fn width(tree: &Layout, names: &[String], nproc: &[u32]) -> u32 {
    placed(tree, names, nproc).width
}

/// The PEs a configuration of `state` takes, extras left out: the sum of the components'
/// PEs, or on a layout tree the PEs the layout spans.
pub fn used_pes(state: &super::State, nproc: &[u32]) -> u32 {
    match tree_of(state.settings.layout.as_deref()) {
        Some(tree) => width(&tree, &state.component_names(), nproc),
        None => nproc.iter().fold(0u32, |t, &p| t.saturating_add(p)),
    }
}

/// The cost weight `W` of a run spanning `width` PEs besides `extra_pes` (cost = 24 W / SYPD):
/// the PEs, or with a `[machine]` the whole nodes they take, in cores (in kW for energy).
pub fn weight(width: u32, extra_pes: u32, cost_model: Option<&CostModel>) -> f64 {
    let used = width.saturating_add(extra_pes);
    let Some(model) = cost_model else {
        return f64::from(used);
    };
    match &model.machine {
        Some(m) => {
            let nodes = crate::machine::nodes_for(used, m.cores_per_node.max(1));
            match model.cost {
                crate::machine::CostKind::Energy => {
                    f64::from(nodes) * m.node_power_w.unwrap_or(0.0) / 1000.0
                }
                _ => f64::from(nodes * m.cores_per_node),
            }
        }
        None => f64::from(used),
    }
}

/// The components' run times relative to the run's TOT, read back from the partial coupling
/// costs [`reduce`] stored (see the module doc).
pub fn relative_times(partial: &[f64], nproc: &[u32]) -> Vec<f64> {
    let sum: f64 = nproc.iter().map(|&p| f64::from(p)).sum();
    partial
        .iter()
        .zip(nproc)
        .map(|(&c, &p)| {
            if p == 0 {
                0.0
            } else {
                1.0 - c * sum / f64::from(p)
            }
        })
        .collect()
}

/// The campaign's metrics of a CIME run of a tree campaign's configuration; `names` are the
/// components' names as the tree gives them, in the order of `components`.
#[allow(clippy::too_many_arguments)]
pub fn reduce<C: TimingName>(
    m: &Measurement,
    components: &[C],
    names: &[String],
    nproc: &[u32],
    tree: &Layout,
    extra_pes: u32,
    cost_model: Option<&CostModel>,
) -> Result<RunMetrics, String> {
    let wall = m
        .wall_s
        .filter(|w| w.is_finite() && *w > 0.0)
        .ok_or("no TOT run time")?;
    let sypd = m
        .cime
        .as_ref()
        .and_then(|c| c.sypd)
        .filter(|s| s.is_finite() && *s > 0.0)
        .or_else(|| m.coupled_sypd())
        .ok_or("no SYPD: the file states no model throughput and no run length")?;
    let sum: f64 = nproc.iter().map(|&p| f64::from(p)).sum();
    let mut times = Vec::new();
    for (c, &p) in components.iter().zip(nproc) {
        let want = c.timing_name();
        let t = m
            .components
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(want))
            .ok_or_else(|| {
                let found: Vec<&str> = m.components.iter().map(|c| c.name.as_str()).collect();
                format!(
                    "no run time for {want:?}; the file has {}",
                    found.join(", ")
                )
            })?;
        let tasks = p / c.threads().max(1);
        if let Some(measured) = t.nproc.filter(|&n| n != tasks) {
            return Err(format!(
                "{want} ran on {measured} tasks by the timing file, but the run has {tasks}; this file belongs to another run"
            ));
        }
        times.push(t.compute_s);
    }
    let partial: Vec<f64> = times
        .iter()
        .zip(nproc)
        .map(|(&t, &p)| (wall - t) * f64::from(p) / (wall * sum))
        .collect();
    let span = width(tree, names, nproc);
    let busy: f64 = times
        .iter()
        .zip(nproc)
        .map(|(&t, &p)| t * f64::from(p))
        .sum();
    let coupling_cost = if span == 0 {
        0.0
    } else {
        (1.0 - busy / (wall * f64::from(span))).max(0.0)
    };
    let chsy = metrics::chsy(weight(span, extra_pes, cost_model), sypd);
    if !(chsy.is_finite() && partial.iter().all(|v| v.is_finite())) {
        return Err("metrics are not finite numbers".into());
    }
    Ok(RunMetrics {
        sypd,
        chsy,
        coupling_cost,
        partial_coupling_cost: partial,
    })
}

/// Reads the CIME timing file of a run at `path` (the run directory; its `timing/` folder is
/// looked in too) and reduces it ([`reduce`]); `names` are the components' names as the tree
/// gives them. A file not written yet is incomplete; a file cut short is never measured.
#[allow(clippy::too_many_arguments)]
pub fn measure<C: TimingName>(
    path: &Path,
    components: &[C],
    names: &[String],
    nproc: &[u32],
    tree: &Layout,
    extra_pes: u32,
    cost_model: Option<&CostModel>,
) -> Result<RunMetrics, Unmeasured> {
    let opts = ReadOptions {
        nproc: processes_by_timing_name(components, nproc),
        ..ReadOptions::default()
    };
    let m = read_whole(path, &opts)?;
    if m.cime.is_none() {
        return Err(Unmeasured::Unreadable(format!(
            "{}: a campaign on a layout tree reads CIME timing files (cesm_timing.*, e3sm_timing.*), found {} output",
            path.display(),
            m.format.name()
        )));
    }
    reduce(&m, components, names, nproc, tree, extra_pes, cost_model)
        .map_err(Unmeasured::Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{ComponentTiming, Format};

    #[test]
    fn run_times_come_back_from_the_partial_coupling_costs() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let mut m = Measurement::new(Format::Cime);
        let times = [
            ("ocn", 40, 80.0),
            ("atm", 96, 60.0),
            ("ice", 30, 20.0),
            ("lnd", 50, 25.0),
        ];
        for (n, p, t) in times {
            let mut c = ComponentTiming::new(n, 0, t, 0.0);
            c.nproc = Some(p);
            m.components.push(c);
        }
        m.wall_s = Some(90.0);
        m.sim_s = Some(metrics::SECONDS_PER_YEAR);
        let names: Vec<String> = times.iter().map(|t| t.0.to_string()).collect();
        let nproc: Vec<u32> = times.iter().map(|t| t.1).collect();
        let r = reduce(&m, &names, &names, &nproc, &tree, 0, None).unwrap();
        let back = relative_times(&r.partial_coupling_cost, &nproc);
        for ((_, _, t), b) in times.iter().zip(&back) {
            assert!((t / 90.0 - b).abs() < 1e-12, "{t} {b}");
        }
        // CHSY counts the span, 40 + 96 PEs, not the sum of the tasks.
        assert!((r.chsy - 24.0 * 136.0 / r.sypd).abs() < 1e-9);
        let e = reduce(&m, &names, &names, &[40, 96, 30, 51], &tree, 0, None).unwrap_err();
        assert!(e.contains("lnd") && e.contains("51"), "{e}");
    }

    #[test]
    fn a_machine_bills_whole_nodes_of_the_span() {
        let model = CostModel {
            machine: Some(crate::machine::Machine {
                cores_per_node: 64,
                placement: Default::default(),
                extras_share_node: true,
                node_power_w: None,
            }),
            ..Default::default()
        };
        assert_eq!(weight(136, 0, Some(&model)), 192.0);
        assert_eq!(weight(136, 4, None), 140.0);
    }
}
