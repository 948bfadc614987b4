//! The lines that set a placement in a CIME case.
//!
//! A CIME case takes its layout from `env_mach_pes.xml`: per component class its `NTASKS`,
//! `ROOTPE` and `NTHRDS`, set with `./xmlchange` and applied by `./case.setup --reset`. Every
//! class gets all three, so nothing is left at a value from an earlier layout; the classes
//! that ride along on others' PEs (coupler, runoff, land ice, waves) get the PEs of the part
//! that holds the atmosphere unless the tree places them itself, never a made-up single task.

use super::search::{xmlchange_lines, Best, Placement};
use super::Layout;

/// CIME classes that usually run on the PEs of others (the coupler, river runoff, land ice,
/// waves). Left out of the tree, they take the PEs of the part that holds the atmosphere, so the
/// case never gets a made-up count for them.
pub const RIDE_ALONG: [&str; 4] = ["cpl", "rof", "glc", "wav"];

/// A placement as `./xmlchange` lines ([`xmlchange_lines`]), every ride-along class the
/// tree leaves out on the PEs of the part that holds `atm` (the whole layout without one), at
/// the most threads of that part (cores are billed at the most threads anyway).
pub fn cime_lines(tree: &Layout, best: &Best) -> String {
    let host = host_part(tree);
    let placements = with_ride_along(tree, &best.placements, best.width);
    let left_out: Vec<&str> = RIDE_ALONG
        .iter()
        .filter(|c| !tree.components().contains(c))
        .copied()
        .collect();
    let mut out = format!(
        "# autolb: a placement of {tree} ({} PEs, {} cores)",
        best.width, best.cores
    );
    if !left_out.is_empty() {
        out.push_str(&format!(
            "; {} on the PEs of {}",
            left_out.join(", "),
            host.join(", ")
        ));
    }
    out.push('\n');
    let threads = |name: &str| {
        placements
            .iter()
            .find(|p| p.name == name)
            .map_or(1, |p| p.threads)
    };
    out.push_str(&xmlchange_lines(&placements, &threads));
    out
}

/// Every class a CIME case needs set: `placements` (the tree's components), then each
/// [`RIDE_ALONG`] class the tree leaves out, on the PEs of the part that holds `atm` (all
/// `width` PEs without one) at that part's most threads.
pub fn with_ride_along(tree: &Layout, placements: &[Placement], width: u32) -> Vec<Placement> {
    let (root, tasks, threads) = host_span(tree, placements, width);
    let mut all = placements.to_vec();
    for class in RIDE_ALONG {
        if !all.iter().any(|p| p.name.eq_ignore_ascii_case(class)) {
            all.push(Placement {
                name: class.to_string(),
                tasks,
                threads,
                root_pe: root,
            });
        }
    }
    all
}

/// Where CIME's defaults put the classes a tree leaves out: the PEs of the top-level part of
/// `tree` that holds `atm` (all `width` PEs without one), as `(first PE, PEs, most threads)`.
pub fn host_span(tree: &Layout, placements: &[Placement], width: u32) -> (u32, u32, u32) {
    let host = host_part(tree);
    let on_host: Vec<&Placement> = placements
        .iter()
        .filter(|p| host.contains(&p.name.as_str()))
        .collect();
    let root = on_host.iter().map(|p| p.root_pe).min().unwrap_or(0);
    let end = on_host
        .iter()
        .map(|p| p.root_pe + p.tasks)
        .max()
        .unwrap_or(width);
    let threads = on_host.iter().map(|p| p.threads).max().unwrap_or(1).max(1);
    (root, end.saturating_sub(root).max(1), threads)
}

/// The components of the top-level part of `tree` that holds `atm` (all of them when the tree
/// does not split at the top or has no `atm`).
fn host_part(tree: &Layout) -> Vec<&str> {
    if let Layout::Beside(parts) = tree {
        if let Some(part) = parts.iter().find(|p| p.components().contains(&"atm")) {
            return part.components();
        }
    }
    tree.components()
}
