//! Every EC-Earth3 sample run (tests/fixtures/timing/ecearth3) reads correctly: raw LUCIA against
//! its truth, lucia_lite tables against their own columns.
//!
//! The samples are copies of the project's shared data in tests/fixtures/timing/ecearth3 (set
//! `AUTOLB_DATA` to read another copy with the same layout).

use std::path::{Path, PathBuf};

use autolb::metrics::{SECONDS_PER_DAY, SECONDS_PER_YEAR};
use autolb::timing::{self, Format, Measurement, ReadOptions, Reading};

fn data_dir() -> PathBuf {
    let dir = std::env::var_os("AUTOLB_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing/ecearth3")
        });
    assert!(
        dir.is_dir(),
        "sample data not found at {} (set AUTOLB_DATA)",
        dir.display()
    );
    dir
}

fn measured(path: &Path, opts: &ReadOptions) -> Measurement {
    match timing::read(path, opts) {
        Ok(Reading::Measured(m)) => m,
        other => panic!("{}: {other:?}", path.display()),
    }
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn raw_lucia_matches_truth_within_two_percent() {
    let samples = subdirs(&data_dir().join("lucia_raw"));
    assert!(samples.len() >= 2, "{samples:?}");
    for dir in samples {
        let truth: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap())
                .unwrap();
        let mut opts = ReadOptions {
            period_s: truth["period_s"].as_f64(),
            ..ReadOptions::default()
        };
        for c in truth["components"].as_array().unwrap() {
            opts.nproc.insert(
                c["name"].as_str().unwrap().to_string(),
                c["nproc"].as_u64().unwrap() as u32,
            );
        }
        let m = measured(&dir, &opts);
        assert_eq!(m.format, Format::LuciaRaw);
        assert_eq!(m.partial, None, "{}", dir.display());
        for c in truth["components"].as_array().unwrap() {
            let name = c["name"].as_str().unwrap();
            let got = m
                .component(name)
                .unwrap_or_else(|| panic!("{name} missing in {}", dir.display()));
            for (what, measured, expected) in [
                (
                    "compute",
                    got.compute_s,
                    c["compute_s_window"].as_f64().unwrap(),
                ),
                ("wait", got.wait_s, c["wait_s_window"].as_f64().unwrap()),
            ] {
                let err = (measured - expected).abs() / expected;
                assert!(
                    err <= 0.02,
                    "{} {name} {what}: {measured} vs truth {expected} ({:.2} %)",
                    dir.display(),
                    err * 100.0
                );
            }
            assert_eq!(got.nproc, Some(c["nproc"].as_u64().unwrap() as u32));
        }
        // With nproc and period known every metric is there.
        assert!(m.chsy().is_some() && m.coupling_cost().is_some());
        for i in 0..m.components.len() {
            assert!(m.partial_coupling_cost(i).is_some());
        }
    }
}

/// A number as printed and its precision (half a unit of its last decimal).
fn printed(s: &str) -> (f64, f64) {
    let s = s.trim().trim_end_matches('%');
    let decimals = s.split_once('.').map_or(0, |(_, d)| d.len());
    (s.parse().unwrap(), 0.5 * 10f64.powi(-(decimals as i32)))
}

/// `|computed - printed|` is within the printed precision plus `slack`, how far the rounding of
/// the inputs (seconds printed to 0.001) can move the computed value.
fn agrees(computed: f64, (value, half_unit): (f64, f64), slack: f64) -> bool {
    (computed - value).abs() <= half_unit + slack + 1e-12
}

/// Half a unit of the inputs' last printed decimal (exec_time etc. have 3 decimals).
const HALF_MS: f64 = 0.0005;

/// Every file of the lucia_lite samples whose name ends with `suffix` (`table.csv`,
/// `_t2table.csv`, `summary`, `_t2summary`).
fn lite_files(suffix: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in subdirs(&data_dir().join("lucia_lite")) {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap().to_string_lossy().ends_with(suffix) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn period_2700() -> ReadOptions {
    ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    }
}

/// Checks a measurement's metrics against a run's own printed SYPD (per component and coupled),
/// CHSY and coupling costs. `costs`: (component partial costs in %, coupled cost as fraction).
fn check_against_file(
    file: &Path,
    m: &Measurement,
    sypd: &[(String, (f64, f64))],
    coupled_sypd: (f64, f64),
    coupled_chsy: Option<(f64, f64)>,
    partial_costs_pct: &[(String, (f64, f64))],
    coupled_cost: Option<(f64, f64)>,
) {
    let wall = m.wall_s.unwrap();
    let p_total = f64::from(m.total_nproc().unwrap());
    for (name, printed) in sypd {
        let i = m.component_index(name).unwrap();
        let c = &m.components[i];
        let s = m.component_sypd(i).unwrap();
        assert!(
            agrees(s, *printed, s * HALF_MS / c.compute_s),
            "{}: {name} SYPD {s} vs printed {printed:?}",
            file.display()
        );
    }
    let s = m.coupled_sypd().unwrap();
    assert!(
        agrees(s, coupled_sypd, s * HALF_MS / wall),
        "{}: coupled SYPD {s} vs {coupled_sypd:?}",
        file.display()
    );
    if let Some(printed) = coupled_chsy {
        let c = m.chsy().unwrap();
        assert!(
            agrees(c, printed, c * HALF_MS / wall),
            "{}: CHSY {c} vs {printed:?}",
            file.display()
        );
    }
    for (name, printed) in partial_costs_pct {
        let i = m.component_index(name).unwrap();
        let c = &m.components[i];
        let p = f64::from(c.nproc.unwrap());
        let pcc = m.partial_coupling_cost(i).unwrap() * 100.0;
        let slack = 100.0 * HALF_MS * p / (wall * p_total) * (1.0 + c.compute_s / wall);
        assert!(
            agrees(pcc, *printed, slack),
            "{}: {name} partial coupling cost {pcc} % vs {printed:?}",
            file.display()
        );
    }
    if let Some(printed) = coupled_cost {
        let cost = m.coupling_cost().unwrap();
        let slack = HALF_MS * (m.components.len() as f64 + 1.0) / wall;
        assert!(
            agrees(cost, printed, slack),
            "{}: coupling cost {cost} vs {printed:?}",
            file.display()
        );
    }
}

#[test]
fn lucia_lite_tables_agree_with_their_own_columns() {
    let files = lite_files("table.csv");
    assert!(files.len() >= 30, "{files:?}");
    let mut rows = 0;
    for file in &files {
        let m = measured(file, &period_2700());
        assert_eq!(
            (m.format, &m.partial),
            (Format::Table, &None),
            "{}",
            file.display()
        );
        let text = std::fs::read_to_string(file).unwrap();
        let (mut sypd, mut costs) = (Vec::new(), Vec::new());
        let mut coupled = None;
        for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            rows += 1;
            if f[0] == "Coupled" {
                // SYPD, CHPSY, and cpl_cost as a fraction.
                coupled = Some((printed(f[6]), printed(f[7]), printed(f[8])));
            } else {
                sypd.push((f[0].to_string(), printed(f[6])));
                // Component rows: cpl_cost in percent.
                costs.push((f[0].to_string(), printed(f[8])));
                // Component CHPSY = 24 nproc / own SYPD.
                let i = m.component_index(f[0]).unwrap();
                let own =
                    24.0 * f64::from(m.components[i].nproc.unwrap()) / m.component_sypd(i).unwrap();
                assert!(
                    agrees(
                        own,
                        printed(f[7]),
                        own * HALF_MS / m.components[i].compute_s
                    ),
                    "{}: {} CHPSY {own} vs {line}",
                    file.display(),
                    f[0]
                );
            }
        }
        let (cs, cc, cost) = coupled.unwrap();
        check_against_file(file, &m, &sypd, cs, Some(cc), &costs, Some(cost));
    }
    assert!(rows >= 120, "{rows}");
}

/// `KEY: value` lines of a summary, in order.
fn summary_values(text: &str, key: &str) -> Vec<(f64, f64)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(key))
        .map(|v| printed(v.split_whitespace().next().unwrap()))
        .collect()
}

#[test]
fn lucia_lite_summaries_agree_with_their_own_lines_and_tables() {
    let files = lite_files("summary");
    assert!(files.len() >= 30, "{files:?}");
    for file in &files {
        let m = measured(file, &period_2700());
        assert_eq!(
            (m.format, &m.partial),
            (Format::Summary, &None),
            "{}",
            file.display()
        );
        let text = std::fs::read_to_string(file).unwrap();
        let sypd: Vec<(String, (f64, f64))> = m
            .components
            .iter()
            .map(|c| {
                let v = summary_values(&text, &format!("{} SYPD:", c.name));
                (c.name.clone(), v[0])
            })
            .collect();
        let costs: Vec<(String, (f64, f64))> = m
            .components
            .iter()
            .zip(summary_values(
                &text,
                "Percentual coupling cost (component coupling cost / coupled execution cost):",
            ))
            .map(|(c, v)| (c.name.clone(), v))
            .collect();
        let chsy = summary_values(&text, "Coupled CHPSY:")
            .into_iter()
            .chain(summary_values(&text, "Coupled CHPY:"))
            .next();
        let total_cost = summary_values(&text, "Total coupling cost:")
            .first()
            .map(|(v, h)| (v / 100.0, h / 100.0));
        let coupled = summary_values(&text, "Coupled SYPD:")[0];
        check_against_file(file, &m, &sypd, coupled, chsy, &costs, total_cost);

        // The table beside it (same prefix) reads to the same seconds.
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let table = file.with_file_name(name.replace("summary", "table.csv"));
        if table.exists() {
            let t = measured(&table, &period_2700());
            assert_eq!(
                (t.wall_s, t.sim_s),
                (m.wall_s, m.sim_s),
                "{}",
                file.display()
            );
            for c in &t.components {
                let s = m.component(&c.name).unwrap();
                assert_eq!(
                    (s.nproc, s.steps),
                    (c.nproc, c.steps),
                    "{} {}",
                    file.display(),
                    c.name
                );
                for (a, b) in [(s.compute_s, c.compute_s), (s.wait_s, c.wait_s)] {
                    assert!(
                        (a - b).abs() <= 0.0011,
                        "{} {}: {a} vs {b}",
                        file.display(),
                        c.name
                    );
                }
            }
        }
    }
}

#[test]
fn every_lucia_lite_run_reads_as_a_directory_and_recovers_its_period() {
    for dir in subdirs(&data_dir().join("lucia_lite")) {
        let m = measured(&dir, &period_2700());
        assert_eq!(m.partial, None, "{}", dir.display());
        assert!(
            m.coupled_sypd().is_some() && m.coupling_cost().is_some(),
            "{}",
            dir.display()
        );
        // Without --period: recovered from the file's own SYPD where the file counts steps.
        let inferred = measured(&dir, &ReadOptions::default());
        if inferred.components.iter().all(|c| c.steps > 0) {
            assert_eq!(inferred.period_s, Some(2700.0), "{}", dir.display());
            assert_eq!(inferred.sim_s, m.sim_s, "{}", dir.display());
        } else {
            let (a, b) = (inferred.sim_s.unwrap(), m.sim_s.unwrap());
            assert!((a - b).abs() / b < 1e-4, "{}: {a} vs {b}", dir.display());
        }
    }
}

#[test]
fn step_series_is_kept_step_by_step() {
    let path = data_dir().join("timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let m = measured(&path, &ReadOptions::default());
    assert_eq!(m.format, Format::Steps);
    assert_eq!(m.period_s, Some(2700.0));
    let c = &m.components[0];
    assert_eq!((c.name.as_str(), c.nproc, c.steps), ("ifs", Some(240), 127));
    assert_eq!(m.series.len(), 1);
    let rows = &m.series[0].rows;
    assert_eq!(rows.len(), 127);
    assert_eq!(rows[0].sim_time_s, 24300.0);
    assert!((rows[1].wait_s - 0.090).abs() < 1e-12);
    let compute: f64 = rows.iter().map(|r| r.compute_s).sum();
    assert!((c.compute_s - compute).abs() < 1e-9 && (compute - 53.546).abs() < 1e-6);
    assert!((c.wait_s - 6.352).abs() < 1e-6);
    assert_eq!(m.sim_s, Some(127.0 * 2700.0));
    // SYPD from compute seconds, by hand.
    let sypd = 127.0 * 2700.0 / SECONDS_PER_YEAR / (compute / SECONDS_PER_DAY);
    assert!((m.component_sypd(0).unwrap() - sypd).abs() < 1e-9);
}
