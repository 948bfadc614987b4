//! Fixtures shared by the integration tests (`mod common;`): campaigns driven from outside, and
//! the timing samples with their readers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The autolb binary under test.
pub fn autolb() -> Command {
    Command::cargo_bin("autolb").unwrap()
}

/// Path of the autolb binary under test (for scripts and command templates).
pub fn autolb_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("autolb")
}

/// An externally driven EC-Earth3 campaign file (bundled curves, written into `dir`) with
/// components named `atm` and `ocean` (for names with a hyphen, pass e.g. "IFS-atm"),
/// `top` predicted tests and `repetitions` runs each; the limits keep it to a few iterations.
pub fn campaign_file(dir: &Path, atm: &str, ocean: &str, top: u32, repetitions: u32) -> PathBuf {
    autolb::campaign::demo::write_demo_inputs(dir).unwrap();
    let text = format!(
        r#"max_nproc = 672
step = 24
top = {top}
initial_step = 96
minimum_step = 48
repetitions = {repetitions}
period_s = 2700

[[component]]
name = "{atm}"
timing_name = "ATMIFS"
curve = "curves/mn4_sr_cmip6_ifs.csv"
min_nproc = 336
max_nproc = 480

[[component]]
name = "{ocean}"
timing_name = "oceanx"
curve = "curves/mn4_sr_cmip6_nemo.csv"
min_nproc = 144
max_nproc = 336
"#
    );
    let path = dir.join("campaign.toml");
    std::fs::write(&path, text).unwrap();
    path
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

use autolb::timing::{lucia_log, oasis5, step_series, table};
use autolb::timing::{Format, ReadOptions, Reading, TimingError};

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
