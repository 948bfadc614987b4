//! `autolb predict --config` on a campaign file with a `layout` (the CESM-shaped example, and
//! one with an atmosphere measured at two thread counts): the ranking by fittingness and the
//! front it prints are what scoring every placement of a plain enumeration gives, and the
//! `--emit cime` lines read back give the first-ranked placement, with the ride-along classes
//! on the atmosphere's PEs.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use autolb::config::CampaignFile;
use autolb::interp::Interpolant;
use autolb::layout::{infer, Layout, PeRange};
use autolb::metrics::{self, Bounds};
use serde_json::Value;

use crate::common::autolb;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/cesm/campaign.toml")
}

/// PEs of a side-by-side / one-after-the-other tree at these task counts.
fn width(l: &Layout, tasks: &BTreeMap<String, u32>) -> u32 {
    match l {
        Layout::Component(n) => tasks[n],
        Layout::Beside(parts) => parts.iter().map(|p| width(p, tasks)).sum(),
        Layout::After(parts) => parts.iter().map(|p| width(p, tasks)).max().unwrap_or(0),
    }
}

/// One way a component may run: tasks, threads per task, seconds per simulated year.
type Choice = (u32, u32, f64);

/// A placement of the enumeration: time, PEs spanned, most threads.
type Whole = (f64, u32, u32);

/// A campaign file's tree, each component's choices and the budget, built from the file here
/// rather than through the command's code.
struct Case {
    path: PathBuf,
    tree: Layout,
    budget: u32,
    extra: u32,
    tts_w: f64,
    choices: BTreeMap<String, Vec<Choice>>,
}

impl Case {
    fn load(path: &Path) -> Case {
        let file = CampaignFile::load(path).unwrap();
        let base = path.parent().unwrap();
        let settings = file.settings();
        let mut choices = BTreeMap::new();
        for c in file.component_inputs(base).unwrap() {
            let mut list = Vec::new();
            for curve in c.series() {
                let t = curve.threads();
                let f = Interpolant::new(settings.interp, &curve.xs(), &curve.ys());
                let top = curve.last_nproc().min(settings.max_nproc / t);
                for ranks in (curve.first_nproc()..=top).step_by(settings.step as usize) {
                    list.push((ranks, t, 86_400.0 / f.eval(f64::from(ranks))));
                }
            }
            list.sort_by_key(|&(r, t, _)| (r * t, t));
            choices.insert(c.name.clone(), list);
        }
        Case {
            path: path.to_path_buf(),
            tree: file.layout_tree().unwrap().unwrap(),
            budget: settings.max_nproc,
            extra: settings.extra_pes,
            tts_w: settings.tts_w,
            choices,
        }
    }

    fn run(&self, extra: &[&str]) -> String {
        autolb()
            .args(["predict", "--config"])
            .arg(&self.path)
            .args(extra)
            .stdout_ok()
    }

    /// Every placement within the budget (cores: PEs spanned x the most threads).
    fn every_placement(&self) -> Vec<Whole> {
        let names: Vec<String> = self.choices.keys().cloned().collect();
        let mut out = Vec::new();
        let mut idx = vec![0usize; names.len()];
        'all: loop {
            let pick: BTreeMap<String, Choice> = names
                .iter()
                .zip(&idx)
                .map(|(n, &i)| (n.clone(), self.choices[n][i]))
                .collect();
            let tasks = pick.iter().map(|(n, c)| (n.clone(), c.0)).collect();
            let w = width(&self.tree, &tasks);
            let threads = pick.values().map(|c| c.1).max().unwrap();
            if u64::from(w) * u64::from(threads) <= u64::from(self.budget) {
                let t = self.tree.run_time(&|n: &str| Some(pick[n].2)).unwrap();
                out.push((t, w, threads));
            }
            for k in 0..names.len() {
                idx[k] += 1;
                if idx[k] < self.choices[&names[k]].len() {
                    continue 'all;
                }
                idx[k] = 0;
            }
            return out;
        }
    }

    fn pes(&self, w: u32, threads: u32) -> f64 {
        f64::from(w * threads + self.extra)
    }

    /// The ranking by hand: kept placements (at least as good as every component at its first
    /// choice), each distinct (PEs, threads, time) once, scored by fittingness over their
    /// bounds; (fittingness, cores, time), best first.
    fn ranking(&self, all: &[Whole]) -> Vec<(f64, u64, f64)> {
        let first: BTreeMap<String, u32> = self
            .choices
            .iter()
            .map(|(n, l)| (n.clone(), l[0].0))
            .collect();
        let base_t = self
            .tree
            .run_time(&|n: &str| Some(self.choices[n][0].2))
            .unwrap();
        let base_threads = self.choices.values().map(|l| l[0].1).max().unwrap();
        let base_pes = self.pes(width(&self.tree, &first), base_threads);
        let mut seen = HashSet::new();
        let kept: Vec<&Whole> = all
            .iter()
            .filter(|(t, w, th)| {
                metrics::beats_base_case(
                    86_400.0 / t,
                    self.pes(*w, *th),
                    86_400.0 / base_t,
                    base_pes,
                )
            })
            .filter(|(t, w, th)| seen.insert((*w, *th, t.to_bits())))
            .collect();
        let chsy = |k: &Whole| metrics::chsy(self.pes(k.1, k.2), 86_400.0 / k.0);
        let sb = Bounds::of(kept.iter().map(|k| 86_400.0 / k.0)).unwrap();
        let cb = Bounds::of(kept.iter().map(|k| chsy(k))).unwrap();
        let mut rows: Vec<(f64, u64, f64)> = kept
            .iter()
            .map(|k| {
                let f = metrics::fittingness_in(self.tts_w, 86_400.0 / k.0, chsy(k), &sb, &cb);
                (f, u64::from(k.1 * k.2), k.0)
            })
            .collect();
        rows.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
        });
        rows
    }

    /// The least time on at most `cores` cores.
    fn fastest_within(all: &[Whole], cores: u64) -> Option<f64> {
        all.iter()
            .filter(|(_, w, th)| u64::from(w * th) <= cores)
            .map(|w| w.0)
            .min_by(f64::total_cmp)
    }

    /// Checks the command's JSON against the enumeration.
    fn check_json(&self) {
        let all = self.every_placement();
        let json: Value = serde_json::from_str(&self.run(&["--json"])).unwrap();
        assert_eq!(json["layout"], self.tree.to_string());
        let top = json["top"]["rows"].as_array().unwrap();
        let want = self.ranking(&all);
        assert_eq!(top.len(), want.len().min(5), "top = 5 in the file");
        // JSON numbers read back to within a unit in the last place.
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-12 * b.abs());
        for (row, (f, cores, t)) in top.iter().zip(&want) {
            assert!(close(row["fittingness"].as_f64(), *f), "{row}: {f}");
            assert_eq!(row["cores"].as_u64(), Some(*cores), "{row}");
            assert!(close(row["run_s"].as_f64(), *t), "{row}: {t}");
        }
        let front = json["front"]["rows"].as_array().unwrap();
        assert!(!front.is_empty() && front.iter().all(|r| r.get("fittingness").is_none()));
        for row in front {
            let cores = row["cores"].as_u64().unwrap();
            assert!(cores <= u64::from(self.budget));
            let t = Case::fastest_within(&all, cores).unwrap();
            assert!(close(row["run_s"].as_f64(), t), "{row}: {t}");
            let fewer = Case::fastest_within(&all, cores - 1);
            assert!(fewer.is_none_or(|f| f > t), "{row}");
        }
        for pair in front.windows(2) {
            assert!(pair[1]["cores"].as_u64() < pair[0]["cores"].as_u64());
            assert!(pair[1]["run_s"].as_f64() > pair[0]["run_s"].as_f64());
        }
    }
}

#[test]
fn the_ranking_and_the_front_are_what_plain_enumeration_gives() {
    let case = Case::load(&example());
    case.check_json();
    // The table shows the same first row, then the front under its own heading.
    let json: Value = serde_json::from_str(&case.run(&["--json"])).unwrap();
    let table = case.run(&[]);
    let first = table.lines().nth(2).unwrap();
    assert!(first.trim_start().starts_with("1 "), "{table}");
    let fn1 = json["top"]["rows"][0]["fittingness"].as_f64().unwrap();
    assert!(first.ends_with(&format!("{fn1:.3}")), "{table}");
    assert!(table.contains("the speed/cores front"), "{table}");
    // Another TTS_w, from the command line, ranks again.
    let speed: Value = serde_json::from_str(&case.run(&["--json", "--tts-w", "1"])).unwrap();
    assert_eq!(speed["top"]["tts_w"], 1.0);
    assert_eq!(
        speed["top"]["rows"][0]["run_s"], json["front"]["rows"][0]["run_s"],
        "at TTS_w 1 the first is the fastest"
    );
}

/// A CESM-shaped file whose atmosphere runs at 1 or 2 threads per task.
fn threaded_case(dir: &Path) -> PathBuf {
    let src = example().parent().unwrap().to_path_buf();
    for name in ["ocn.csv", "ice.csv", "lnd.csv"] {
        std::fs::copy(src.join(name), dir.join(name)).unwrap();
    }
    let mut atm = String::from("nproc,threads,SYPD\n");
    for ranks in [8u32, 16, 32, 48, 64] {
        for threads in [1u32, 2] {
            // Twice the threads, a little less than twice the speed.
            let cores = f64::from(ranks * threads) * (1.0 - 0.1 * f64::from(threads - 1));
            let sypd = 1.0 / (0.004 + 9.0 / cores);
            atm.push_str(&format!("{ranks},{threads},{sypd:.4}\n"));
        }
    }
    std::fs::write(dir.join("atm.csv"), atm).unwrap();
    let file = dir.join("campaign.toml");
    std::fs::write(
        &file,
        r#"layout = "ocn | (atm ; (ice | lnd))"
max_nproc = 384
step = 16
top = 5
extra_pes = 4

[[component]]
name = "atm"
curve = "atm.csv"

[[component]]
name = "ocn"
curve = "ocn.csv"

[[component]]
name = "ice"
curve = "ice.csv"

[[component]]
name = "lnd"
curve = "lnd.csv"
"#,
    )
    .unwrap();
    file
}

#[test]
fn threads_per_component_are_searched_and_written_back() {
    let dir = tempfile::tempdir().unwrap();
    let case = Case::load(&threaded_case(dir.path()));
    assert!(case.choices["atm"].iter().any(|c| c.1 == 2));
    case.check_json();
    // The atmosphere's curve stops at 64 tasks: the fastest placement runs it at 2 threads,
    // and every component's PEs then count twice.
    let json: Value = serde_json::from_str(&case.run(&["--json", "--tts-w", "1"])).unwrap();
    let fastest = &json["top"]["rows"][0];
    let threads = |row: &Value, name: &str| {
        row["placements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["threads"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(threads(fastest, "atm"), 2, "{fastest}");
    let text = case.run(&["--emit", "cime", "--tts-w", "1"]);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("./xmlchange"))
        .collect();
    assert_eq!(lines.len(), 8, "{text}");
    for (name, want) in [
        ("ATM", 2),
        ("OCN", threads(fastest, "ocn")),
        ("CPL", 2),
        ("WAV", 2),
    ] {
        let line = lines
            .iter()
            .find(|l| l.contains(&format!("NTASKS_{name}=")))
            .unwrap();
        assert!(line.ends_with(&format!("NTHRDS_{name}={want}")), "{line}");
    }
    assert!(case.run(&[]).contains("MPI tasks x threads@first PE"));
}

#[test]
fn the_emitted_cime_lines_read_back_give_the_first_ranked_placement() {
    let case = Case::load(&example());
    let text = case.run(&["--emit", "cime"]);
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
    let seconds = |n: &str| {
        let r = ranges[n];
        let c = case.choices[n]
            .iter()
            .find(|c| (c.0, c.1) == (r.tasks, r.threads));
        c.map(|c| c.2)
    };
    let t = back.run_time(&seconds).unwrap();
    let cores = autolb::layout::cores(&ranges.values().copied().collect::<Vec<_>>());
    let first = case.ranking(&case.every_placement())[0];
    assert_eq!((t, cores), (first.2, first.1), "{text}");
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
        (&["--front"][..], "front is printed after its ranking"),
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
}

#[test]
fn the_app_opens_on_a_layout_tree_and_refuses_what_it_cannot_show_yet() {
    let tui = |extra: &[&str]| {
        let out = autolb()
            .args(["tui", "--config"])
            .arg(example())
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).trim_end().to_string()
    };
    // Without a terminal the ranking is made, then the app says it needs one.
    let err = tui(&[]);
    assert!(err.contains("needs a terminal"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = tui(&["--campaign", dir.path().to_str().unwrap()]);
    assert!(
        err.contains("watching a campaign (--campaign) is not done for a layout tree"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
