//! `autolb predict --config` on a campaign file with a `layout` (the CESM-shaped example): the
//! best placement it prints is the fastest a plain enumeration of every task-count combination
//! finds, and the `--emit cime` lines read back give that placement, with the ride-along
//! classes on the atmosphere's PEs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autolb::config::CampaignFile;
use autolb::interp::Interpolant;
use autolb::layout::{infer, Layout, PeRange};
use serde_json::Value;

use crate::common::autolb;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/cesm/campaign.toml")
}

fn run(extra: &[&str]) -> String {
    autolb()
        .args(["predict", "--config"])
        .arg(example())
        .args(extra)
        .stdout_ok()
}

/// PEs of a side-by-side / one-after-the-other tree at these task counts.
fn width(l: &Layout, tasks: &BTreeMap<String, u32>) -> u32 {
    match l {
        Layout::Component(n) => tasks[n],
        Layout::Beside(parts) => parts.iter().map(|p| width(p, tasks)).sum(),
        Layout::After(parts) => parts.iter().map(|p| width(p, tasks)).max().unwrap_or(0),
    }
}

/// The example's tree, each component's candidate task counts and its seconds per simulated
/// year, built from the file here rather than through the command's code.
struct Case {
    tree: Layout,
    budget: u32,
    counts: BTreeMap<String, Vec<u32>>,
    curves: BTreeMap<String, Interpolant>,
}

impl Case {
    fn load() -> Case {
        let path = example();
        let file = CampaignFile::load(&path).unwrap();
        let base = path.parent().unwrap();
        let settings = file.settings();
        let mut counts = BTreeMap::new();
        let mut curves = BTreeMap::new();
        for c in file.component_inputs(base).unwrap() {
            let curve = c.curve.unwrap();
            let step = settings.step as usize;
            let top = curve.last_nproc().min(settings.max_nproc);
            counts.insert(
                c.name.clone(),
                (curve.first_nproc()..=top).step_by(step).collect(),
            );
            curves.insert(
                c.name,
                Interpolant::new(settings.interp, &curve.xs(), &curve.ys()),
            );
        }
        Case {
            tree: file.layout_tree().unwrap().unwrap(),
            budget: settings.max_nproc,
            counts,
            curves,
        }
    }

    fn seconds(&self, name: &str, tasks: u32) -> Option<f64> {
        Some(86_400.0 / self.curves.get(name)?.eval(f64::from(tasks)))
    }

    /// The least time over every combination of task counts that fits the budget.
    fn enumerate(&self) -> f64 {
        let names: Vec<String> = self.counts.keys().cloned().collect();
        let mut best = f64::INFINITY;
        let mut idx = vec![0usize; names.len()];
        'all: loop {
            let tasks: BTreeMap<String, u32> = names
                .iter()
                .zip(&idx)
                .map(|(n, &i)| (n.clone(), self.counts[n][i]))
                .collect();
            if width(&self.tree, &tasks) <= self.budget {
                let t = self
                    .tree
                    .run_time(&|n: &str| self.seconds(n, tasks[n]))
                    .unwrap();
                best = best.min(t);
            }
            for k in 0..names.len() {
                idx[k] += 1;
                if idx[k] < self.counts[&names[k]].len() {
                    continue 'all;
                }
                idx[k] = 0;
            }
            return best;
        }
    }
}

#[test]
fn the_best_layout_is_the_fastest_plain_enumeration_finds() {
    let case = Case::load();
    let fastest = case.enumerate();
    let json: Value = serde_json::from_str(&run(&["--json"])).unwrap();
    assert_eq!(json["layout"], "ocn | (atm ; (ice | lnd))");
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "top = 5 in the file");
    let best = &rows[0];
    let run_s = best["run_s"].as_f64().unwrap();
    assert!(
        (run_s - fastest).abs() <= 1e-9 * fastest,
        "{run_s} against {fastest}"
    );
    assert!(best["pes"].as_u64().unwrap() <= u64::from(case.budget));
    // The rows are a front: each on fewer PEs and slower than the one before.
    for pair in rows.windows(2) {
        assert!(pair[1]["pes"].as_u64() < pair[0]["pes"].as_u64());
        assert!(pair[1]["run_s"].as_f64() > pair[0]["run_s"].as_f64());
    }
    // The table shows the same best row.
    let table = run(&[]);
    let first = table.lines().nth(2).unwrap();
    assert!(first.trim_start().starts_with("1 "), "{table}");
    assert!(first.contains(&format!("{:.2}", best["sypd"].as_f64().unwrap())));
}

#[test]
fn the_emitted_cime_lines_read_back_give_the_best_layout() {
    let case = Case::load();
    let text = run(&["--emit", "cime"]);
    assert_eq!(text.lines().last(), Some("./case.setup --reset"));
    let mut ranges: BTreeMap<String, PeRange> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("./xmlchange ")) {
        let fields: BTreeMap<String, u32> = line["./xmlchange ".len()..]
            .split(',')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), v.parse().unwrap())
            })
            .collect();
        let class = fields
            .keys()
            .find_map(|k| k.strip_prefix("NTASKS_"))
            .unwrap()
            .to_string();
        let range = PeRange {
            tasks: fields[&format!("NTASKS_{class}")],
            root_pe: fields[&format!("ROOTPE_{class}")],
            threads: fields[&format!("NTHRDS_{class}")],
            stride: 1,
        };
        assert!(
            ranges.insert(class.to_ascii_lowercase(), range).is_none(),
            "{line}"
        );
    }
    let classes: Vec<&str> = ranges.keys().map(String::as_str).collect();
    assert_eq!(
        classes,
        ["atm", "cpl", "glc", "ice", "lnd", "ocn", "rof", "wav"]
    );
    // The balanced components' ranges give back the file's tree and the fastest time.
    let balanced: Vec<(String, PeRange)> = ["ocn", "atm", "ice", "lnd"]
        .iter()
        .map(|n| (n.to_string(), ranges[*n]))
        .collect();
    let back = infer(&balanced).unwrap();
    assert_eq!(back, case.tree, "{text}");
    let t = back
        .run_time(&|n| case.seconds(n, ranges[n].tasks))
        .unwrap();
    let fastest = case.enumerate();
    assert!(
        (t - fastest).abs() <= 1e-9 * fastest,
        "{t} against {fastest}"
    );
    let cores = autolb::layout::cores(&ranges.values().copied().collect::<Vec<_>>());
    assert!(cores <= u64::from(case.budget));
    // The ride-along classes share the atmosphere's part: its first PE to its last.
    let (atm, ice, lnd) = (ranges["atm"], ranges["ice"], ranges["lnd"]);
    let end = [atm, ice, lnd]
        .iter()
        .map(|r| r.root_pe + r.tasks)
        .max()
        .unwrap();
    for class in ["cpl", "rof", "glc", "wav"] {
        let r = ranges[class];
        assert_eq!(
            (r.root_pe, r.tasks),
            (atm.root_pe, end - atm.root_pe),
            "{class}"
        );
        assert!(r.tasks > 1);
    }
}

#[test]
fn what_a_layout_tree_cannot_do_yet_is_refused_in_one_line() {
    for (extra, words) in [
        (&["--front"][..], "--front is not done for a layout tree"),
        (&["--emit", "ecearth4"][..], "--emit ecearth4 is not done"),
    ] {
        let out = autolb()
            .args(["predict", "--config"])
            .arg(example())
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(words), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(["campaign", "init"])
        .arg(dir.path().join("c"))
        .arg("--config")
        .arg(example())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("campaigns on a layout tree are not done yet"),
        "{err}"
    );
}
