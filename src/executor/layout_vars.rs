//! A run's layout as numbers: `{rootpe.NAME}`, `{ntasks.NAME}` and `{nthrds.NAME}`, and the
//! `AUTOLB_ROOTPE_<NAME>`, `AUTOLB_NTASKS_<NAME>` and `AUTOLB_NTHRDS_<NAME>` variables, for a
//! campaign on a layout tree (a CIME case's `ROOTPE_`, `NTASKS_` and `NTHRDS_` settings).
//!
//! Every component of the tree gets its tasks, first PE and threads; each ride-along class the
//! tree leaves out (`cpl`, `rof`, `glc`, `wav`) gets the PEs of the part that holds the
//! atmosphere ([`crate::layout::place::with_ride_along`]), so a template can set every class of
//! a case. Like every number of a run they are plain digits.

use std::collections::HashMap;

use super::env::env_suffix;
use super::RunRequest;
use crate::layout::place::{place, with_ride_along};
use crate::layout::search::Placement;
use crate::layout::Layout;

/// Every class of the run placed on `tree`, ride-along classes included, with its threads.
pub fn placements(tree: &Layout, run: &RunRequest) -> Vec<(Placement, u32)> {
    let tasks = |name: &str| {
        let k = run.nproc.iter().position(|(n, _)| n == name)?;
        Some(run.ranks_of(k))
    };
    let Ok(placed) = place(tree, &tasks) else {
        return Vec::new();
    };
    with_ride_along(tree, &placed)
        .into_iter()
        .map(|p| {
            let threads = run
                .nproc
                .iter()
                .position(|(n, _)| *n == p.name)
                .map_or(1, |k| run.threads_of(k));
            (p, threads)
        })
        .collect()
}

/// Every PE of the run on `tree`: the PEs the layout spans plus the extra PEs.
pub fn total_pes(tree: &Layout, run: &RunRequest) -> u32 {
    let tasks = |name: &str| {
        let k = run.nproc.iter().position(|(n, _)| n == name)?;
        Some(run.ranks_of(k))
    };
    place(tree, &tasks).map_or_else(
        |_| run.total_nproc(),
        |p| p.width.saturating_add(run.extra_pes),
    )
}

/// The `{rootpe.NAME}`, `{ntasks.NAME}` and `{nthrds.NAME}` values of a run, and
/// `{total_nproc}` as the layout counts it (the PEs it spans, not the sum of the tasks).
pub fn placeholder_values(tree: &Layout, run: &RunRequest) -> HashMap<String, u64> {
    let mut v = HashMap::new();
    v.insert("total_nproc".to_string(), total_pes(tree, run).into());
    for (p, threads) in placements(tree, run) {
        v.insert(format!("rootpe.{}", p.name), p.root_pe.into());
        v.insert(format!("ntasks.{}", p.name), p.tasks.into());
        v.insert(format!("nthrds.{}", p.name), threads.into());
    }
    v
}

/// The `AUTOLB_ROOTPE_<NAME>`, `AUTOLB_NTASKS_<NAME>` and `AUTOLB_NTHRDS_<NAME>` variables
/// of a run, and `AUTOLB_TOTAL_NPROC` as the layout counts it.
pub fn env_vars(tree: &Layout, run: &RunRequest) -> Vec<(String, String)> {
    let mut v = vec![(
        "AUTOLB_TOTAL_NPROC".to_string(),
        total_pes(tree, run).to_string(),
    )];
    for (p, threads) in placements(tree, run) {
        let suffix = env_suffix(&p.name);
        v.push((format!("AUTOLB_ROOTPE_{suffix}"), p.root_pe.to_string()));
        v.push((format!("AUTOLB_NTASKS_{suffix}"), p.tasks.to_string()));
        v.push((format!("AUTOLB_NTHRDS_{suffix}"), threads.to_string()));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_gives_first_pes_and_ride_along_classes_share_the_atmosphere_side() {
        let tree = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let run = RunRequest {
            component: None,
            id: "i00-t00-r1".into(),
            iteration: 0,
            test: 0,
            repetition: 1,
            nproc: vec![
                ("ocn".into(), 40),
                ("atm".into(), 96),
                ("ice".into(), 30),
                ("lnd".into(), 50),
            ],
            threads: Vec::new(),
            extra_pes: 0,
            run_dir: std::path::PathBuf::from("/run"),
        };
        let v = placeholder_values(&tree, &run);
        assert_eq!(v["rootpe.ocn"], 0);
        assert_eq!(v["rootpe.atm"], 40);
        assert_eq!(v["rootpe.lnd"], 70);
        assert_eq!(v["ntasks.lnd"], 50);
        assert_eq!(v["nthrds.ice"], 1);
        assert_eq!((v["rootpe.cpl"], v["ntasks.cpl"]), (40, 96));
        assert_eq!(v["total_nproc"], 136);
        let env = env_vars(&tree, &run);
        assert!(env.contains(&("AUTOLB_ROOTPE_LND".into(), "70".into())));
        assert!(env.contains(&("AUTOLB_NTASKS_WAV".into(), "96".into())));
        assert!(env.contains(&("AUTOLB_TOTAL_NPROC".into(), "136".into())));
    }
}
