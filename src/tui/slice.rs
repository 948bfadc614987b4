//! The matrix slice the app keeps, and the quick scoring of configurations when it is too large
//! to keep: at step 1 over thousands of PEs a slice holds millions of configurations, and a key
//! (TTS_w, budget, cost) must cost what the screen shows, not what the budget holds.

use autolb::metrics;
use autolb::predict::{Grid, Problem, MAX_COMPONENTS};

/// Most cells of a matrix slice scored ahead and kept (250,000: 500 x 500 candidates, some
/// 10 MB). Larger slices (step 1 over thousands of PEs) are scored cell by cell as the matrix
/// draws them, so a key costs what the screen shows, not what the budget holds.
pub const KEPT_GRID_CELLS: usize = 250_000;

/// The matrix slice with component `axes.0` down and `axes.1` across: scored when it has at
/// most [`KEPT_GRID_CELLS`] cells, else only its candidate PEs (cells empty; see
/// [`App::cell_at`]).
pub fn slice(problem: &Problem, axes: (usize, usize), cursor: &[usize], tts_w: f64) -> Grid {
    let (rc, cc) = (&problem.components[axes.0], &problem.components[axes.1]);
    if rc.nproc.len() * cc.nproc.len() <= KEPT_GRID_CELLS {
        return problem.grid(axes.0, axes.1, cursor, tts_w);
    }
    Grid {
        rows: axes.0,
        cols: axes.1,
        row_nproc: rc.nproc.clone(),
        col_nproc: cc.nproc.clone(),
        cells: Vec::new(),
    }
}

/// Candidates sampled per axis for the trade-off's cloud (all of them up to this many).
const CLOUD_SAMPLES: usize = 128;

/// The kept configurations of the slice `grid` (every other component at `cursor`) as (cost,
/// SYPD) for the trade-off's cloud: every cell when each axis has at most [`CLOUD_SAMPLES`]
/// candidates, else a lattice of `CLOUD_SAMPLES` per axis spread evenly (the cloud is thinned
/// to a lattice for drawing anyway; the front itself is exact).
pub fn cloud_points_of(
    problem: &Problem,
    grid: &Grid,
    cursor: &[usize],
    tts_w: f64,
) -> Vec<(f64, f64)> {
    let rows = spread(grid.row_nproc.len(), CLOUD_SAMPLES);
    let cols = spread(grid.col_nproc.len(), CLOUD_SAMPLES);
    let mut index = cursor.to_vec();
    let mut out = Vec::new();
    for &r in &rows {
        for &c in &cols {
            index[grid.rows] = r;
            index[grid.cols] = c;
            if let Quick::Kept { sypd, cost, .. } = quick(problem, &index, tts_w) {
                out.push((cost, sypd));
            }
        }
    }
    out
}

/// One configuration as the matrix colours it, computed without allocating: what
/// [`Problem::cell`] says of it, with the cost FN weighs instead of the coupling cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quick {
    /// Over the budget, or outside the chosen queue.
    Over,
    /// Feasible but worse than the base case.
    Worse { sypd: f64 },
    /// Kept: its speed, the cost FN weighs (CHSY or the bill) and its fittingness.
    Kept {
        sypd: f64,
        cost: f64,
        fittingness: f64,
    },
}

/// [`Quick`] of the configuration at candidate indices `index`. Same tests, same arithmetic
/// and the same order as [`Problem::cell`] (a unit test holds them equal), for the matrix of a
/// slice too large to keep.
pub fn quick(problem: &Problem, index: &[usize], tts_w: f64) -> Quick {
    let n = index.len();
    let mut nproc = [0u32; MAX_COMPONENTS];
    let mut sum: u64 = 0;
    let mut sypd = f64::INFINITY;
    for (k, (&i, c)) in index.iter().zip(&problem.components).enumerate() {
        nproc[k] = c.nproc[i];
        sum += u64::from(c.nproc[i]);
        sypd = sypd.min(c.sypd[i]);
    }
    let nproc = &nproc[..n];
    // With [[resource]] tables each resource has its own budget and the base-case filter
    // weighs units by their cost (those two checks allocate; the plain path does not).
    let resources = problem.cost_model.has_resources();
    if (resources && !problem.fits(nproc))
        || (!resources && sum > u64::from(problem.settings.max_nproc))
    {
        return Quick::Over;
    }
    if !problem.fits_queue(nproc, sypd) {
        return Quick::Over;
    }
    let kept = if resources {
        problem.keeps(sypd, nproc)
    } else {
        problem
            .kept_sum_limit(sypd)
            .is_some_and(|limit| sum <= u64::from(limit))
    };
    if kept {
        let cost = metrics::chsy(problem.weight_of(nproc), sypd);
        Quick::Kept {
            sypd,
            cost,
            fittingness: metrics::fittingness_in(
                tts_w,
                sypd,
                cost,
                &problem.sypd_bounds,
                &problem.cost_bounds,
            ),
        }
    } else {
        Quick::Worse { sypd }
    }
}

/// At most `k` indices of `0..n`, evenly spread, first and last included.
pub fn spread(n: usize, k: usize) -> Vec<usize> {
    match k {
        _ if n <= k => (0..n).collect(),
        0 => Vec::new(),
        1 => vec![0],
        _ => (0..k).map(|j| j * (n - 1) / (k - 1)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autolb::machine::{CostKind, CostModel, Machine, Placement, Queue};
    use autolb::predict::{Cell, ProblemOptions};

    /// `quick` says what `Problem::cell` says of every configuration, on the example with and
    /// without a machine, both placements, the three costs and a chosen or open queue table.
    #[test]
    fn quick_agrees_with_the_problems_cell_everywhere() {
        let inputs = autolb::example::inputs();
        let settings = autolb::example::settings();
        let machine = |placement| Machine {
            cores_per_node: 40,
            placement,
            extras_share_node: false,
            node_power_w: Some(350.0),
        };
        let queues = vec![
            Queue {
                name: "small".into(),
                max_nproc: Some(400),
                max_nodes: None,
                max_walltime_h: Some(2.0),
                chunk_years: Some(1.0),
                partition: None,
                qos: None,
            },
            Queue {
                name: "big".into(),
                max_nproc: None,
                max_nodes: Some(15),
                max_walltime_h: None,
                chunk_years: None,
                partition: None,
                qos: None,
            },
        ];
        let mut models = vec![CostModel::default()];
        for placement in [Placement::Packed, Placement::PerComponent] {
            for cost in CostKind::ALL {
                for queue in [None, Some("small"), Some("big")] {
                    models.push(CostModel {
                        machine: Some(machine(placement)),
                        cost,
                        queues: queues.clone(),
                        queue: queue.map(String::from),
                        ..CostModel::default()
                    });
                }
            }
        }
        // Components on different hardware: own budgets, weighted units, one resource or two.
        for (component_resource, cost) in [
            (vec![0, 1], CostKind::CoreHours),
            (vec![0, 1], CostKind::NodeHours),
            (vec![1, 1], CostKind::CoreHours),
        ] {
            models.push(CostModel {
                cost,
                resources: [("cpu", 48, 1.0, None), ("gpu", 4, 2.5, Some(300))]
                    .into_iter()
                    .map(
                        |(name, units_per_node, unit_cost, max_units)| autolb::machine::Resource {
                            name: name.into(),
                            units_per_node,
                            unit_cost,
                            max_units,
                        },
                    )
                    .collect(),
                component_resource,
                ..CostModel::default()
            });
        }
        let mut kinds = [0usize; 3];
        for model in &models {
            let Ok(p) = Problem::build(
                &inputs,
                &settings,
                ProblemOptions {
                    model: None,
                    cost_model: Some(model),
                },
            ) else {
                continue;
            };
            for tts_w in [0.0, 0.3, 1.0] {
                let grid = p.grid(0, 1, &[0, 0], tts_w);
                for (k, cell) in grid.cells.iter().enumerate() {
                    let index = [k / grid.col_nproc.len(), k % grid.col_nproc.len()];
                    let q = quick(&p, &index, tts_w);
                    match (*cell, q) {
                        (Cell::OverBudget, Quick::Over) => kinds[0] += 1,
                        (Cell::WorseThanBase { sypd, .. }, Quick::Worse { sypd: s }) => {
                            assert_eq!(sypd, s);
                            kinds[1] += 1;
                        }
                        (
                            Cell::Scored {
                                sypd, fittingness, ..
                            },
                            Quick::Kept {
                                sypd: s,
                                cost,
                                fittingness: f,
                            },
                        ) => {
                            assert_eq!((sypd, fittingness), (s, f), "{model:?} {index:?}");
                            assert_eq!(cost, p.score(&index, tts_w).cost());
                            kinds[2] += 1;
                        }
                        (c, q) => panic!("{model:?} {index:?}: cell {c:?}, quick {q:?}"),
                    }
                }
            }
        }
        assert!(kinds.iter().all(|&k| k > 100), "{kinds:?}");
    }

    #[test]
    fn spread_keeps_the_ends_and_never_repeats() {
        assert_eq!(spread(3, 4), vec![0, 1, 2]);
        assert_eq!(spread(10, 4), vec![0, 3, 6, 9]);
        assert_eq!(spread(10, 1), vec![0]);
        assert!(spread(10, 0).is_empty());
        let s = spread(1977, CLOUD_SAMPLES);
        assert_eq!(
            (s[0], *s.last().unwrap(), s.len()),
            (0, 1976, CLOUD_SAMPLES)
        );
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
