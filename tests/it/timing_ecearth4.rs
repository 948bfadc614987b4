//! What an EC-Earth4 run leaves, read to the format contract of docs/src/timing.md: OASIS 5's
//! `load_balancing_info.txt` as OASIS writes it (cut names, overflow, negative times, both
//! restart labels), the leg's `timing.log`, NEMO's `ocean.output` and `ln_listonly` list, and a
//! run directory `log/NNN/` recognised by `timing`, `--measured` and a campaign's measurement.

use std::path::{Path, PathBuf};

use autolb::timing::{self, ecearth4, oasis5, Format, ReadOptions, Reading};
use serde_json::Value;

use crate::common::{autolb, complete_is_whole};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing/ecearth4")
}

fn oasis_text() -> String {
    std::fs::read_to_string(fixtures().join("load_balancing_info.txt")).unwrap()
}

fn read_text(text: &str, opts: &ReadOptions) -> Result<Reading, timing::TimingError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load_balancing_info.txt");
    std::fs::write(&path, text).unwrap();
    timing::read(&path, opts)
}

/// Why `text`, as a `load_balancing_info.txt`, cannot be read.
fn read_error(text: &str) -> String {
    read_text(text, &ReadOptions::default())
        .unwrap_err()
        .to_string()
}

fn measured(r: Result<Reading, timing::TimingError>) -> timing::Measurement {
    match r.expect("readable") {
        Reading::Measured(m) => m,
        Reading::Incomplete { reason } => panic!("incomplete: {reason}"),
    }
}

/// A copy of the fixture run directory to change.
fn run_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("run"), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn json(args: &[&str]) -> Value {
    let out = autolb().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_oasis5_file_as_oasis_writes_it() {
    let m = measured(timing::read(
        &fixtures().join("load_balancing_info.txt"),
        &ReadOptions::default(),
    ));
    assert_eq!(m.format, Format::Oasis5);
    assert_eq!(m.partial, None);
    let names: Vec<&str> = m.components.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["OpenIFS", "oceanx", "RNFMAP"]);
    let ifs = m.component("OpenIFS").unwrap();
    assert_eq!((ifs.compute_s, ifs.wait_s), (3301.512, 181.920));
    // `Total mapping/interpolation`, not the `with spread` line after it; the jitter line.
    assert_eq!((ifs.interp_s, ifs.jitter_s), (Some(27.544), Some(12.870)));
    // `Total Netcdf output (OUTPUT+...)` is no put time.
    assert_eq!(ifs.send_s, None);
    // The coupled wall time is the header's; its SYPD and CHPSY are not used, and no
    // simulated time is made up from a file that counts no coupling steps.
    assert_eq!(m.wall_s, Some(3510.274));
    assert_eq!((m.sim_s, m.coupled_sypd()), (None, None));
    assert!(m.notes.iter().any(|n| n == oasis5::NO_SIMULATED_TIME));
    // RNFMAP waits nearly the whole run: its negative computing time reads as 0 s, with the
    // written value kept and a note, and no SYPD.
    let rnf = m.component_index("RNFMAP").unwrap();
    assert_eq!(m.components[rnf].compute_s, 0.0);
    assert_eq!(m.components[rnf].compute_as_written_s, Some(-13.561));
    assert_eq!(m.component_sypd(rnf), None);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("computing time of RNFMAP is -13.561 s")
                && n.contains("read as 0 s")),
        "{:?}",
        m.notes
    );
}

#[test]
fn both_restart_labels_read_alike() {
    let newer = oasis_text();
    assert!(newer.contains("Total Netcdf output for restart  only:"));
    let older = newer.replace(
        "Total Netcdf output for restart  only:",
        "including restart :",
    );
    let o = ReadOptions::default();
    assert_eq!(
        measured(read_text(&newer, &o)),
        measured(read_text(&older, &o))
    );
}

#[test]
fn cut_names_match_the_long_timing_name() {
    // `OpenIFS_TL159` in A10: cut to `OpenIFS_TL`, with no room left to right-justify.
    let text = oasis_text().replace("   OpenIFS", "OpenIFS_TL");
    assert!(text.contains(" OpenIFS_TL / 3301.512"));
    let m = measured(read_text(&text, &ReadOptions::default()));
    assert_eq!(m.component("OpenIFS_TL159").unwrap().compute_s, 3301.512);
    // A name shorter than 10 characters is whole, not a cut: it names no longer component.
    assert!(m.component("oceanx_eORCA1").is_none());
    // With the run's PEs under the long name, the component takes that name.
    let mut o = ReadOptions::default();
    o.nproc.insert("OpenIFS_TL159".into(), 300);
    let m = measured(read_text(&text, &o));
    let ifs = m.component("OpenIFS_TL159").unwrap();
    assert_eq!((ifs.name.as_str(), ifs.nproc), ("OpenIFS_TL159", Some(300)));
}

#[test]
fn overflow_is_a_partial_reading_never_a_number() {
    let o = ReadOptions::default();
    let cases = [
        (
            "    OpenIFS / 3301.512",
            "    OpenIFS / ********",
            "times of OpenIFS overflowed",
        ),
        (
            "simulation time (s): 3510.274",
            "simulation time (s): ********",
            "coupled model simulation time overflowed",
        ),
        (
            "Total jitter :   12.870",
            "Total jitter : ********",
            "jitter of OpenIFS overflowed",
        ),
    ];
    for (from, to, needle) in cases {
        let text = oasis_text();
        assert!(text.contains(from), "{from}");
        let m = measured(read_text(&text.replacen(from, to, 1), &o));
        let partial = m.partial.as_deref().unwrap_or_default();
        assert!(partial.contains(needle), "{needle}: {partial}");
        assert!(m
            .components
            .iter()
            .all(|c| [c.compute_s, c.wait_s].iter().all(|v| v.is_finite())));
    }
    // An overflowed model is left out, not read as zero or as a huge number.
    let text = oasis_text().replacen("    OpenIFS / 3301.512", "    OpenIFS / ********", 1);
    assert!(measured(read_text(&text, &o))
        .component("OpenIFS")
        .is_none());
}

#[test]
fn a_negative_time_beyond_clock_noise_is_an_error_for_a_component_that_computes() {
    // OpenIFS computes for most of the run: -179 s cannot be clock spread.
    let text = oasis_text().replace("OpenIFS / 3301.512", "OpenIFS / -179.000");
    let e = read_error(&text);
    assert!(
        e.contains("computing time of OpenIFS is -179 s, negative beyond clock noise"),
        "{e}"
    );
    // The runoff mapper waits 99.6 % of the run: the same -179 s reads as 0 s.
    let text = oasis_text().replace("RNFMAP /  -13.561", "RNFMAP / -179.000");
    let m = measured(read_text(&text, &ReadOptions::default()));
    let rnf = m.component("RNFMAP").unwrap();
    assert_eq!(
        (rnf.compute_s, rnf.compute_as_written_s),
        (0.0, Some(-179.0))
    );
    // A helper's window (computing plus waiting) below zero cannot be real.
    let text = oasis_text().replace("RNFMAP /  -13.561", "RNFMAP / -3600.0");
    let e = read_error(&text);
    assert!(
        e.contains("more negative than its 3496.994 s of waiting"),
        "{e}"
    );
    // Waiting past the wall time stays an error, helper or not.
    let text = oasis_text().replace(
        "RNFMAP /  -13.561 / 3496.994",
        "RNFMAP /  -13.561 / 3900.000",
    );
    let e = read_error(&text);
    assert!(e.contains("of RNFMAP add up to 3900 s"), "{e}");
}

fn helpers_fixture(name: &str) -> PathBuf {
    fixtures().join("helpers").join(name)
}

/// Real OASIS 5 output from ECMWF's HPC2020 (EC-Earth4: the runoff mapper, RNFMAP) and a
/// published AWI-CM3 block (LPJ-GUESS, lpjg): a helper that waits nearly the whole run comes
/// out with a negative computing time beyond 2 % of the run. Read with that time as 0 s and a
/// note; the balanced components' times as measured.
#[test]
fn real_output_with_a_helpers_negative_computing_time_is_read() {
    let cases = [
        (
            "load_balancing_info_230s.txt",
            "RNFMAP",
            -5.98,
            210.2,
            230.2,
        ),
        (
            "load_balancing_info_275s.txt",
            "RNFMAP",
            -10.9,
            253.4,
            275.0,
        ),
        (
            "load_balancing_info_342s.txt",
            "RNFMAP",
            -13.6,
            316.1,
            342.0,
        ),
        ("awicm3_lpjg.txt", "lpjg", -179.214, 6010.338, 6120.531),
    ];
    for (file, helper, computing, waiting, wall) in cases {
        let path = helpers_fixture(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let m = measured(timing::read(&path, &ReadOptions::default()));
        assert_eq!(m.partial, None, "{file}");
        assert_eq!(m.wall_s, Some(wall), "{file}");
        // Beyond the 2 % that clock noise allows a component that computes.
        assert!(-computing > 0.02 * wall, "{file}");
        let h = m.component(helper).unwrap();
        assert_eq!(
            (h.compute_s, h.compute_as_written_s, h.wait_s),
            (0.0, Some(computing), waiting),
            "{file}"
        );
        assert!(
            m.notes.iter().any(|n| n
                .contains(&format!("computing time of {helper} is {computing} s"))
                && n.contains("read as 0 s")),
            "{file}: {:?}",
            m.notes
        );
        // The balanced components' times are the file's, to the digit.
        for c in m.components.iter().filter(|c| c.name != helper) {
            assert_eq!(c.compute_as_written_s, None);
            let row = text
                .lines()
                .find(|l| l.split('/').next().map(str::trim) == Some(c.name.as_str()))
                .unwrap();
            let cols: Vec<f64> = row
                .split('/')
                .skip(1)
                .map(|v| v.trim().parse().unwrap())
                .collect();
            assert_eq!((c.compute_s, c.wait_s), (cols[0], cols[1]), "{file}");
        }
    }
    // The note and the written value reach `autolb timing`, as text and as JSON.
    let path = helpers_fixture("load_balancing_info_230s.txt");
    let path = path.to_str().unwrap();
    let v = json(&["timing", path]);
    let rnf = &v["components"][2];
    assert_eq!(
        (
            &rnf["name"],
            &rnf["compute_s"],
            &rnf["compute_as_written_s"]
        ),
        (
            &Value::from("RNFMAP"),
            &Value::from(0.0),
            &Value::from(-5.98)
        )
    );
    assert!(v["components"][0].get("compute_as_written_s").is_none());
    assert!(
        v["notes"].to_string().contains("RNFMAP is -5.98 s"),
        "{}",
        v["notes"]
    );
    let out = autolb().args(["timing", path]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("note: the computing time of RNFMAP is -5.98 s: it waits 210.2 s, 91 %"),
        "{text}"
    );
}

#[test]
fn a_balanced_component_that_cannot_be_real_is_still_refused() {
    let text = std::fs::read_to_string(helpers_fixture("load_balancing_info_230s.txt")).unwrap();
    // OpenIFS computing below zero beyond clock noise (2 % of 230.2 s is 4.6 s).
    let bad = text.replace("OpenIFS /  201.195", "OpenIFS /   -5.980");
    let e = read_error(&bad);
    assert!(
        e.contains("OpenIFS is -5.98 s, negative beyond clock noise"),
        "{e}"
    );
    // oceanx waiting past the wall time.
    let bad = text.replace(
        "oceanx /  179.786 /   37.292",
        "oceanx /  179.786 /  237.292",
    );
    let e = read_error(&bad);
    assert!(e.contains("of oceanx add up to"), "{e}");
    // Computing beyond the wall time.
    let bad = text.replace("OpenIFS /  201.195", "OpenIFS /  260.000");
    let e = read_error(&bad);
    assert!(
        e.contains("computing time of OpenIFS (260 s) is above"),
        "{e}"
    );
}

#[test]
fn a_file_cut_anywhere_never_reads_as_complete_and_wrong() {
    let text = oasis_text();
    let path = Path::new("load_balancing_info.txt");
    let o = ReadOptions::default();
    let whole = oasis5::read(text.as_bytes(), path, &o).unwrap();
    assert!(whole.complete().is_some());
    for end in 0..text.len() {
        let r = oasis5::read(&text.as_bytes()[..end], path, &o);
        complete_is_whole(&r, &whole).unwrap_or_else(|e| panic!("cut at byte {end}: {e}"));
    }
    // A section after the analysis block names a model the block lacks: a line was lost.
    let lost = text.replace("     oceanx / 2987.033 /  496.401\n", "");
    let e = oasis5::read(lost.as_bytes(), path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("oceanx") && e.contains("lacks"), "{e}");
}

#[test]
fn timing_reads_an_ecearth4_run_directory() {
    let run = fixtures().join("run");
    let v = json(&["timing", run.to_str().unwrap()]);
    assert_eq!(v["format"], "ecearth4");
    assert_eq!(v["partial"], Value::Null);
    // The last leg's timing.log: 0:58:46.530612 for one year, 24.50 SYPD.
    assert_eq!(v["coupled"]["wall_s"], 3526.530612);
    assert_eq!(v["coupled"]["sim_s"], 365.0 * 86400.0);
    let sypd = v["coupled"]["sypd"].as_f64().unwrap();
    assert!((sypd - 24.5).abs() < 1e-4, "{sypd}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("log/002/timing.log"), "{notes}");
    assert_eq!(v["components"].as_array().unwrap().len(), 3);
}

#[test]
fn day_long_legs_and_a_leg_still_running() {
    let dir = run_copy();
    let leg = dir.path().join("log/003");
    std::fs::create_dir_all(&leg).unwrap();
    // A leg still running: no timing.log yet, so no wall or simulated time to trust.
    let m = measured(timing::read(dir.path(), &ReadOptions::default()));
    assert!(
        m.partial.as_deref().unwrap().contains("no timing.log"),
        "{:?}",
        m.partial
    );
    // Ten years at 2.95 SYPD: 3 days, 9:21:21.355932 without the script's overhead.
    std::fs::write(
        leg.join("timing.log"),
        "Run script elapsed time: 3 days, 9:40:02\n\
         Model elapsed time (no run script overhead): 3 days, 9:21:21.355932\n\
         Model speed incl overhead:     2.94 SYPD\n\
         Model speed excl overhead:     2.95 SYPD\n",
    )
    .unwrap();
    let leg_timing = ecearth4::read_timing_log(&leg.join("timing.log")).unwrap();
    assert!(leg_timing.is_complete());
    assert_eq!(
        leg_timing.model_elapsed_s,
        Some(3.0 * 86400.0 + 9.0 * 3600.0 + 21.0 * 60.0 + 21.355932)
    );
    // The OASIS file beside it is the last leg's (a 3510 s window): not this run's, so the
    // reading stays partial rather than mixing the two.
    let m = measured(timing::read(dir.path(), &ReadOptions::default()));
    let partial = m.partial.unwrap_or_default();
    assert!(partial.contains("disagree on the wall time"), "{partial}");
    // Two-decimal speeds leave several whole days possible over ten years: the simulated time
    // is SYPD x wall, as precise as the speed line (0.005 in 2.95).
    let years = leg_timing.simulated_s().unwrap() / (365.0 * 86400.0);
    assert!((years - 10.0).abs() < 10.0 * 0.005 / 2.95, "{years}");
    // A damaged speed line is an error naming the file, the line and the value.
    std::fs::write(
        leg.join("timing.log"),
        "Model speed excl overhead:  n/a SYPD\n",
    )
    .unwrap();
    let e = timing::read(dir.path(), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("log/003/timing.log: line 1") && e.contains("n/a"),
        "{e}"
    );
    // No OASIS file at all: nothing to measure yet.
    let bare = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(bare.path().join("log/001")).unwrap();
    std::fs::write(bare.path().join("log/001/timing.log"), "").unwrap();
    assert!(matches!(
        timing::read(bare.path(), &ReadOptions::default()),
        Ok(Reading::Incomplete { .. })
    ));
}

#[test]
fn jpnij_is_checked_against_nemos_pes() {
    let legs = fixtures().join("run/log");
    assert_eq!(
        ecearth4::jpnij(&legs.join("002/ocean.output")).unwrap(),
        Some(29)
    );
    let first = ecearth4::read_ocean_output(&legs.join("001/ocean.output")).unwrap();
    assert_eq!((first.jpnij, first.mpi_processes), (Some(29), Some(32)));
    assert!(first.wasting_cpu);
    let run = fixtures().join("run");
    let run = run.to_str().unwrap();
    let v = json(&["timing", run, "--nproc", "oceanx=32"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("jpnij = 29") && notes.contains("gave oceanx 32 PEs"),
        "{notes}"
    );
    let v = json(&["timing", run, "--nproc", "oceanx=29"]);
    assert!(!v["notes"].to_string().contains("jpnij"), "{}", v["notes"]);
}

#[test]
fn nemo_listonly_output_is_an_allowed_list() {
    let listing = fixtures().join("nemo_listonly_ocean.output");
    assert_eq!(
        autolb::config::load_allowed(&listing).unwrap(),
        vec![16, 29, 48, 75, 104]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let v = json(&[
        "predict",
        "--curve",
        &format!(
            "IFS={}",
            root.join("assets/curves/mn4_sr_reduced_ifs.csv").display()
        ),
        "--curve",
        &format!(
            "NEMO={}",
            root.join("assets/curves/mn4_sr_reduced_nemo.csv").display()
        ),
        "--allowed",
        &format!("NEMO={}", listing.display()),
        "--max-nproc",
        "600",
    ]);
    // Only the listed counts inside the curve's range (48..1275) are tried.
    let top = v["top"].as_array().unwrap();
    assert!(!top.is_empty());
    for entry in top {
        let nemo = entry["nproc"]["NEMO"].as_u64().unwrap();
        assert!([48, 75, 104].contains(&nemo), "{nemo}");
    }
}

#[test]
fn measured_and_campaign_measurement_read_the_run_directory() {
    // The long timing name of a campaign, cut to 10 characters in the OASIS file.
    let dir = run_copy();
    let oasis = dir.path().join("load_balancing_info.txt");
    let text = std::fs::read_to_string(&oasis).unwrap();
    std::fs::write(&oasis, text.replace("   OpenIFS", "OpenIFS_TL")).unwrap();
    let run = dir.path().to_str().unwrap();

    let names = ["OpenIFS_TL159".to_string(), "oceanx".to_string()];
    let metrics = autolb::campaign::measure::measure(dir.path(), &names, &[336, 48], 1, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!((metrics.sypd - 24.5).abs() < 1e-4, "{}", metrics.sypd);
    assert!((metrics.chsy - 24.0 * 385.0 / metrics.sypd).abs() < 1e-9);

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_file = dir.path().join("model.json");
    let out = autolb()
        .args(["model", "fit", "--curve"])
        .arg(format!(
            "IFS={}",
            root.join("assets/curves/mn4_sr_reduced_ifs.csv").display()
        ))
        .arg("--curve")
        .arg(format!(
            "NEMO={}",
            root.join("assets/curves/mn4_sr_reduced_nemo.csv").display()
        ))
        .args([
            "--timing-name",
            "IFS=OpenIFS_TL159",
            "--timing-name",
            "NEMO=oceanx",
        ])
        .args([
            "--measured",
            run,
            "--nproc",
            "IFS=336",
            "--nproc",
            "NEMO=48",
        ])
        .arg("--out")
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(model["model"]["runs"], 1);
}
