//! Fixtures shared by the integration tests: the binary ([`command`]), campaign files
//! ([`campaign`]) and campaigns driven from outside, the demo campaign, a synthetic large
//! campaign, and a headless Chromium to look at reports as a person would; the timing samples
//! with their readers; proptest's settings; live processes ([`processes`]). The prediction tests' random problems are in [`predict`].

pub mod campaign;
pub mod command;
pub mod predict;
pub mod processes;
pub mod resources;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use autolb::campaign::status::{IterationView, RunCounts};
use autolb::campaign::{NameMap, Phase, RunState, RunView, Status, TestState, TestView};
use autolb::curve::{Curve, Point};
use autolb::predict::{ComponentInput, Settings};
use autolb::timing::{lucia_log, oasis5, step_series, table};
use autolb::timing::{Format, ReadOptions, Reading, TimingError};
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

pub use campaign::{campaign_fixture, CampaignToml, ComponentToml};
pub use command::{autolb, autolb_path, spawn_campaign_run, spawn_campaign_run_stderr_piped};

/// An externally driven EC-Earth3 campaign file (bundled curves, written into `dir`) with
/// components named `atm` and `ocean` (for names with a hyphen, pass e.g. "IFS-atm"),
/// `top` predicted tests and `repetitions` runs each; the limits keep it to a few iterations.
pub fn campaign_file(dir: &Path, atm: &str, ocean: &str, top: u32, repetitions: u32) -> PathBuf {
    CampaignToml::default()
        .set("top", top)
        .set("initial_step", 96)
        .set("minimum_step", 48)
        .set("repetitions", repetitions)
        .components(vec![
            ComponentToml::demo_ifs().name(atm).limits(336, 480),
            ComponentToml::demo_nemo()
                .name(ocean)
                .no_allowed()
                .limits(144, 336),
        ])
        .write(dir, "campaign.toml")
}

/// A command-executor campaign from `campaign` in `tmp/NAME`: writes the demo inputs and
/// `tmp/NAME.toml`, runs `campaign init`, and returns the campaign directory.
pub fn init_demo_campaign(tmp: &Path, name: &str, campaign: &CampaignToml) -> PathBuf {
    let file = campaign.write(tmp, &format!("{name}.toml"));
    let dir = tmp.join(name);
    init(&dir, &file);
    dir
}

/// A command-executor campaign in `tmp/camp` whose runs take a minute (`sleep 60`, two at a
/// time): its driver is mid-campaign whenever a test looks.
pub fn slow_command_campaign(tmp: &Path) -> PathBuf {
    init_demo_campaign(
        tmp,
        "camp",
        &CampaignToml::default().table(
            r#"
[executor]
kind = "command"
jobs = 2
command = ["sh", "-c", "sleep 60"]
"#,
        ),
    )
}

/// Runs `autolb campaign init DIR --config FILE` and checks it succeeded.
pub fn init(dir: &Path, file: &Path) {
    autolb()
        .args(["campaign", "init"])
        .arg(dir)
        .arg("--config")
        .arg(file)
        .assert()
        .success();
}

/// The output of a command as text.
pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `autolb campaign status --json DIR`, parsed.
pub fn status_json(dir: &Path) -> serde_json::Value {
    let out = autolb()
        .args(["campaign", "status", "--json"])
        .arg(dir)
        .timeout(Duration::from_secs(30))
        .stdout_ok();
    serde_json::from_str(&out).unwrap()
}

/// Every test's PEs and mean SYPD per iteration, from `campaign status --json`: the whole
/// course of a campaign, to compare two campaigns run on the same settings and seeds.
pub fn course(status: &serde_json::Value) -> Vec<(u64, u64, String, String)> {
    status["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| {
            it["tests"].as_array().unwrap().iter().map(|t| {
                (
                    it["iteration"].as_u64().unwrap(),
                    t["test"].as_u64().unwrap(),
                    t["nproc"].to_string(),
                    format!("{:.6}", t["sypd"].as_f64().unwrap_or(f64::NAN)),
                )
            })
        })
        .collect()
}

/// Creates the README's demo campaign in `dir` and runs it to the end (a few seconds).
pub fn demo_campaign(dir: &Path) {
    autolb()
        .args(["campaign", "init"])
        .arg(dir)
        .arg("--demo")
        .stdout_ok();
    autolb().args(["campaign", "run"]).arg(dir).stdout_ok();
}

/// proptest's settings with `cases` cases.
pub fn proptest_cases(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..proptest_default()
    }
}

/// proptest's default settings, but failures are saved beside the test's source file
/// (`tests/it/NAME.proptest-regressions`). The default looks for a `main.rs` above the source
/// and, finding `tests/it/main.rs`, would save them in `tests/proptest-regressions/NAME.txt`.
pub fn proptest_default() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// The report of a [`synthetic_campaign`] with its prediction (the views a shared report of a
/// large campaign holds), over 250 simulated years.
pub fn synthetic_report(
    inputs: &[ComponentInput],
    settings: &Settings,
    status: &Status,
) -> autolb::report::Report {
    let problem = autolb::predict::Problem::new(inputs, settings).unwrap();
    autolb::report::build(&autolb::report::ReportRequest {
        title: "synthetic".into(),
        source: format!("{} components, {} runs", inputs.len(), status_runs(status)),
        problem: Some(&problem),
        inputs,
        tts_w: settings.tts_w,
        top: settings.top,
        axes: (0, 1),
        fixed: None,
        original: autolb::report::source::original_of(status),
        campaign: Some(status),
        years: 250.0,
        model: None,
    })
}

/// Runs in a campaign status, over every iteration and test.
pub fn status_runs(status: &Status) -> usize {
    status
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .map(|t| t.runs.len())
        .sum()
}

/// A synthetic campaign of `n` components: Amdahl-like curves from 48 to 960 PEs and a status of
/// `iterations` x `tests` x `reps` runs in which one test fails outright and some runs fail.
pub fn synthetic_campaign(
    n: usize,
    iterations: u32,
    tests: u32,
    reps: u32,
) -> (Vec<ComponentInput>, Settings, Status) {
    let names: Vec<String> = (0..n).map(|i| format!("C{i}")).collect();
    let inputs: Vec<ComponentInput> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let serial = 0.02 + 0.01 * i as f64;
            let points: Vec<Point> = [48u32, 96, 192, 288, 384, 576, 768, 960]
                .iter()
                .map(|&p| Point {
                    nproc: p,
                    sypd: (30.0 + 4.0 * i as f64) / (serial + (1.0 - serial) * 48.0 / f64::from(p)),
                })
                .collect();
            ComponentInput::new(Curve::from_points(name.clone(), "synthetic", &points).unwrap())
        })
        .collect();
    let settings = Settings {
        max_nproc: 2400,
        step: 48,
        tts_w: 0.5,
        top: 5,
        ..Settings::default()
    };
    let mut iters = Vec::new();
    for it in 0..iterations {
        let mut tv = Vec::new();
        for t in 0..tests {
            let nproc: Vec<u32> = (0..n)
                .map(|i| 192 + 48 * ((t as usize + i + it as usize) % 6) as u32)
                .collect();
            let total: u32 = nproc.iter().sum();
            let slowest = (0..n)
                .map(|i| f64::from(nproc[i]) / (1.0 + 0.1 * i as f64))
                .fold(f64::INFINITY, f64::min);
            let runs = (1..=reps)
                .map(|rep| {
                    let failed = (t == 3 && it == 1) || (it * tests + t + rep).is_multiple_of(17);
                    let sypd = slowest / 12.0 * (1.0 + 0.01 * f64::from(rep));
                    RunView {
                        state: if failed {
                            RunState::Failed
                        } else {
                            RunState::Done
                        },
                        sypd: (!failed).then_some(sypd),
                        chsy: (!failed).then_some(f64::from(total) * 24.0 / sypd),
                        coupling_cost: (!failed).then_some(0.05 + 0.01 * f64::from(t % 5)),
                        run: format!("i{it:02}-t{t:02}-r{rep}"),
                        repetition: rep,
                        partial_coupling_cost: if failed {
                            NameMap::default()
                        } else {
                            NameMap::zip(&names, vec![0.01; n])
                        },
                        run_dir: PathBuf::from(format!("iter-{it:02}/test-{t:02}/rep-{rep}")),
                        job: None,
                        attempts: 1,
                        failure: failed.then(|| "exit status 1".to_string()),
                        started_at: None,
                        ended_at: None,
                        stopped_with_driver: false,
                    }
                })
                .collect();
            tv.push(TestView {
                test: t,
                nproc: NameMap::zip(&names, nproc.clone()),
                step: 48,
                state: TestState::Pending,
                runs,
                sypd: None,
                chsy: None,
                coupling_cost: None,
                partial_coupling_cost: NameMap::default(),
                fittingness: None,
                donor: Some(names[t as usize % n].clone()),
                recipient: Some(names[(t as usize + 1) % n].clone()),
                total_nproc: total,
                origin: if t + 1 == tests {
                    "original".into()
                } else {
                    format!("prediction #{}", t + 1)
                },
                next_step: Some(24),
                next_nproc: None,
                notes: Vec::new(),
                reason: None,
            });
        }
        iters.push(IterationView {
            iteration: it,
            tests: tv,
        });
    }
    let mut status = Status {
        state: Phase::Done,
        iteration: iterations.checked_sub(1),
        done: true,
        iterations: iters,
        best: None,
        components: names,
        tts_w: 0.5,
        extra_pes: 0,
        initial_step: 48,
        minimum_step: 12,
        repetitions: reps,
        executor: "sim".into(),
        counts: RunCounts::default(),
        timing_names: Vec::new(),
        period_s: Some(2700.0),
        cost_model: None,
        layout: None,
        strategy: Default::default(),
        driver: None,
        iterations_at_most: None,
        bound_proven: false,
        curves: None,
        scaling: None,
        design: None,
        scaling_settings: None,
        cold_start: None,
        curve_notes: Vec::new(),
        threads: None,
    };
    status.recompute();
    (inputs, settings, status)
}

/// The Chromium binary, if installed. Without it the browser tests skip, unless
/// AUTOLB_REQUIRE_CHROMIUM=1 (set by .ci/run), which makes them fail.
pub fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        assert!(
            std::env::var("AUTOLB_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "AUTOLB_REQUIRE_CHROMIUM=1 but no chromium in PATH; install it with `apt-get install chromium`"
        );
        eprintln!("skipped: no chromium in PATH (apt-get install chromium)");
    }
    found
}

/// What a headless Chromium run produced.
pub struct Rendered {
    pub stdout: String,
    pub stderr: String,
}

/// Runs headless Chromium on `page` with `extra` flags (e.g. `--dump-dom`, `--screenshot=`),
/// offline-minded and with a fresh profile; console messages go to stderr.
pub fn run_chromium(chromium: &Path, page: &Path, extra: &[String]) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .current_dir(profile.path())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("chromium starts");
    // Read both pipes on threads so a chatty browser never blocks on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Rendered {
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// PNG width and height from the IHDR chunk.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

/// Console messages Chromium logged (`CONSOLE` lines of `--enable-logging=stderr`) and
/// uncaught page errors.
pub fn console_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// `tests/fixtures/timing`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing")
}

/// A text timing format and how to read its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TextFormat {
    Table,
    Summary,
    LuciaLog,
    Oasis5,
    Steps,
}

impl TextFormat {
    /// The library's format.
    pub fn format(self) -> Format {
        match self {
            TextFormat::Table => Format::Table,
            TextFormat::Summary => Format::Summary,
            TextFormat::LuciaLog => Format::LuciaLog,
            TextFormat::Oasis5 => Format::Oasis5,
            TextFormat::Steps => Format::Steps,
        }
    }

    /// Reads `bytes` as this format, as if they were the file at `path`.
    pub fn read(self, bytes: &[u8], path: &Path, o: &ReadOptions) -> Result<Reading, TimingError> {
        match self {
            TextFormat::Table => table::read_table(bytes, path, o),
            TextFormat::Summary => table::read_summary(bytes, path, o),
            TextFormat::LuciaLog => lucia_log::read(bytes, path, o),
            TextFormat::Oasis5 => oasis5::read(bytes, path, o),
            TextFormat::Steps => step_series::read(bytes, path, o),
        }
    }
}

/// The whole text samples: (format, path). `all_runs` adds every lucia_lite run (30 summaries,
/// 29 tables); otherwise one run of each format.
pub fn text_samples(all_runs: bool) -> Vec<(TextFormat, PathBuf)> {
    let f = fixtures();
    let mut out = vec![
        (TextFormat::LuciaLog, f.join("lucia.log")),
        (TextFormat::Oasis5, f.join("load_balancing_info.txt")),
        (
            TextFormat::Steps,
            f.join("ecearth3/timesteps/mn4_sr_cmip6_ifs_ts_240.csv"),
        ),
    ];
    let lite = f.join("ecearth3/lucia_lite");
    let mut runs: Vec<PathBuf> = if all_runs {
        std::fs::read_dir(&lite)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    } else {
        vec![lite.join("240IFS_144NEMO"), lite.join("432IFS_331NEMO")]
    };
    runs.sort();
    for run in runs {
        for (name, format) in [
            ("table.csv", TextFormat::Table),
            ("summary", TextFormat::Summary),
        ] {
            if run.join(name).is_file() {
                out.push((format, run.join(name)));
            }
        }
    }
    out
}

/// The options a campaign would read a sample with: the period of EC-Earth3 SR.
pub fn sr_options() -> ReadOptions {
    ReadOptions {
        period_s: Some(2700.0),
        ..ReadOptions::default()
    }
}

/// `Err` describing how a reading of a prefix (or a damaged copy) of a file passed a wrong
/// measurement off as complete, compared with the whole file's `full` reading. Partial and
/// incomplete readings and errors are all fine: only a complete reading must be the whole one.
pub fn complete_is_whole(r: &Result<Reading, TimingError>, full: &Reading) -> Result<(), String> {
    match (r, full.complete()) {
        (Ok(reading), Some(whole)) => match reading.complete() {
            Some(m) if m != whole => Err(format!(
                "complete but wrong: SYPD {:?} CHSY {:?} (whole: SYPD {:?} CHSY {:?}); {} vs {} components",
                m.coupled_sypd(),
                m.chsy(),
                whole.coupled_sypd(),
                whole.chsy(),
                m.components.len(),
                whole.components.len()
            )),
            _ => Ok(()),
        },
        (_, None) => Err("the whole file does not read as complete".into()),
        (Err(_), _) => Ok(()),
    }
}
