//! Fixtures shared by the integration tests (`mod common;`): campaigns driven from outside,
//! and looking at live processes ([`processes`]).
#![allow(dead_code)]

pub mod processes;

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
