//! CIME runs (CESM, E3SM, NorESM): `cesm_timing.*` summaries and ESMF profile summaries read
//! as the files say, the two agreeing, the layout their PE ranges imply, and cut or damaged
//! files never read as complete and wrong.

use std::path::{Path, PathBuf};

use autolb::timing::cime::{esmf, summary, CimeRun};
use autolb::timing::{self, Format, Measurement, ReadOptions, Reading, TimingError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use crate::common::{autolb, complete_is_whole, fixtures};

fn cime() -> PathBuf {
    fixtures().join("cime")
}

const NE16: &str = "1345315.251015-002914";
const NE30: &str = "950689.240711-200109";
const TEST: &str = "937080.240614-101714";

fn noresm_summary(lid: &str) -> PathBuf {
    let dir = cime().join("noresm3");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.starts_with("cesm_timing.") && n.ends_with(lid)
        })
        .unwrap()
}

fn noresm_profile(lid: &str) -> PathBuf {
    cime()
        .join("noresm3")
        .join(format!("cesm.ESMF_Profile.summary.{lid}"))
}

fn cesm2() -> PathBuf {
    cime().join("cesm2/cesm_timing.b.e20.BHIST.f09_g17.20thC.297_02.9459679.chadmin1.180517-114852")
}

fn measured(path: &Path) -> Measurement {
    match timing::read(path, &ReadOptions::default()) {
        Ok(Reading::Measured(m)) => m,
        other => panic!("{}: {other:?}", path.display()),
    }
}

fn run(m: &Measurement) -> &CimeRun {
    m.cime.as_deref().expect("a CIME run")
}

/// (class, model, tasks, threads, root_pe, run_s) as the file's table and run-time lines say.
type Row = (&'static str, &'static str, u32, u32, u32, f64);

fn check_rows(r: &CimeRun, rows: &[Row]) {
    assert_eq!(r.components.len(), rows.len());
    for (c, &(name, model, tasks, threads, root, run_s)) in r.components.iter().zip(rows) {
        assert_eq!(c.name, name);
        assert_eq!(c.model.as_deref(), Some(model));
        assert_eq!(c.nproc, tasks, "{name}");
        assert_eq!(c.threads, Some(threads), "{name}");
        assert_eq!(c.root_pe, Some(root), "{name}");
        assert_eq!(c.stride, Some(1), "{name}");
        assert_eq!(c.run_s, Some(run_s), "{name}");
    }
}

#[test]
fn cesm2_mct_example_reads_as_the_file_says() {
    let m = measured(&cesm2());
    assert_eq!(m.format, Format::Cime);
    assert_eq!(m.partial, None);
    let r = run(&m);
    assert_eq!(r.driver, "MCT");
    check_rows(
        r,
        &[
            ("cpl", "cpl", 1152, 3, 0, 248.696),
            ("atm", "cam", 1152, 3, 0, 2097.788),
            ("lnd", "clm", 864, 3, 0, 545.991),
            ("ice", "cice", 288, 3, 864, 389.173),
            ("ocn", "pop", 256, 3, 1152, 2169.399),
            ("rof", "mosart", 864, 3, 0, 42.241),
            ("glc", "cism", 1152, 3, 0, 1.049),
            ("wav", "ww", 32, 3, 1408, 517.414),
            ("esp", "sesp", 1, 1, 0, 0.0),
        ],
    );
    assert_eq!(r.run_s, Some(2951.082));
    assert_eq!(r.sypd, Some(29.28));
    assert_eq!(r.chsy, Some(3541.30));
    assert_eq!(r.cost_pes, Some(4320));
    assert_eq!(r.cpl_comm_s, Some(2464.660));
    assert_eq!(r.sim_days, Some(365.0));
    // CIME's count: the highest PE end (wav: 1408 + 32) times 3 threads, the file's cost PEs.
    assert_eq!(r.cores(), Some(4320));
    assert_eq!(m.total_nproc(), Some(4320));
    assert!((m.coupled_sypd().unwrap() - 29.28).abs() < 0.01);
    assert!((m.chsy().unwrap() - 3541.30).abs() / 3541.30 < 1e-3);
    assert_eq!(
        r.layout().unwrap().to_string(),
        "(cpl ; atm ; glc ; ((lnd ; rof) | ice)) | ocn | wav"
    );
}

#[test]
fn noresm3_cmeps_runs_read_as_the_files_say() {
    let m = measured(&noresm_summary(NE16));
    let r = run(&m);
    assert_eq!(r.driver, "CMEPS");
    check_rows(
        r,
        &[
            ("cpl", "cpl", 1536, 1, 0, 3011.670),
            ("atm", "cam", 1536, 1, 0, 19886.623),
            ("lnd", "clm", 768, 1, 768, 2535.658),
            ("ice", "cice", 768, 1, 0, 4245.817),
            ("ocn", "blom", 500, 1, 1536, 23972.863),
            ("rof", "mosart", 1536, 1, 0, 107.871),
            ("glc", "dglc", 1536, 1, 0, 12.186),
            ("wav", "swav", 1536, 1, 0, 0.0),
            ("esp", "sesp", 1536, 1, 0, 0.0),
        ],
    );
    assert_eq!(
        (r.run_s, r.sypd, r.chsy),
        (Some(27411.240), Some(15.76), Some(3118.79))
    );
    assert_eq!((r.cost_pes, r.cores()), (Some(2048), Some(2036)));
    assert_eq!(
        r.layout().unwrap().to_string(),
        "(cpl ; atm ; rof ; glc ; (ice | lnd)) | ocn"
    );

    let r30 = measured(&noresm_summary(NE30));
    let r30 = run(&r30);
    assert_eq!((r30.run_s, r30.sypd), (Some(55855.754), Some(7.73)));
    assert_eq!(
        r30.layout().unwrap().to_string(),
        "(cpl ; atm ; lnd ; ice ; rof ; glc) | ocn"
    );
    let test = measured(&noresm_summary(TEST));
    let test = run(&test);
    assert_eq!((test.run_s, test.sim_days), (Some(254.492), Some(5.0)));
    // Stubs (sglc, swav, sesp) take no part; everything else shares the same 1024 PEs.
    assert_eq!(
        test.layout().unwrap().to_string(),
        "cpl ; atm ; lnd ; ice ; ocn ; rof"
    );
}

#[test]
fn esmf_profiles_agree_with_their_timing_files() {
    for lid in [NE16, NE30, TEST] {
        let from_summary = measured(&noresm_summary(lid));
        let from_profile = measured(&noresm_profile(lid));
        assert_eq!(from_profile.format, Format::Esmf);
        assert_eq!(from_profile.partial, None, "{lid}");
        let (s, p) = (run(&from_summary), run(&from_profile));
        // The timing file prints the profile's 4 decimals to 3 (0.1475 printed as 0.147: a
        // half in the last place, and the binary value of the half).
        let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 0.000_51;
        assert!(close(p.run_s, s.run_s), "{lid}: TOT");
        for c in &p.components {
            let in_summary = s.components.iter().find(|o| o.name == c.name).unwrap();
            assert!(close(c.run_s, in_summary.run_s), "{lid}: {}", c.name);
            assert_eq!(c.nproc, in_summary.nproc, "{lid}: {}", c.name);
            assert_eq!(c.threads, in_summary.threads, "{lid}: {}", c.name);
        }
        // Sums of means, each printed to 4 decimals.
        let near = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 0.002;
        assert!(near(p.cpl_run_s, s.cpl_run_s), "{lid}: CPL {p:?}");
        assert!(near(p.cpl_comm_s, s.cpl_comm_s), "{lid}: COMM");
        assert_eq!((p.layout(), p.sypd), (None, None));
    }
}

/// The profile text without its `PEs` column, as ESMF before 8.3 wrote it.
fn without_pes_column(text: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    for line in text.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.first() == Some(&"Region") {
            in_table = true;
            out.push_str(&line.replacen("PEs    ", "", 1));
        } else if in_table && tokens.len() > 8 {
            let indent = line.len() - line.trim_start().len();
            let (name, cols) = tokens.split_at(tokens.len() - 8);
            let kept: Vec<&str> = std::iter::once(cols[0])
                .chain(cols[2..].iter().copied())
                .collect();
            out.push_str(&format!(
                "{}{}  {}",
                " ".repeat(indent),
                name.join(" "),
                kept.join("  ")
            ));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[test]
fn profiles_without_the_pes_column_read_the_same_times() {
    let path = noresm_profile(NE16);
    let text = std::fs::read_to_string(&path).unwrap();
    let old = without_pes_column(&text);
    assert!(!old
        .lines()
        .any(|l| l.starts_with("Region") && l.contains("PEs")));
    let Ok(Reading::Measured(m)) = esmf::parse(&old, &path) else {
        panic!("the old layout does not read");
    };
    let whole = measured(&path);
    let (o, w) = (run(&m), run(&whole));
    assert_eq!(m.partial, None);
    assert_eq!(o.run_s, w.run_s);
    assert_eq!(o.cpl_comm_s, w.cpl_comm_s);
    for (a, b) in o.components.iter().zip(&w.components) {
        assert_eq!((&a.name, a.nproc, a.run_s), (&b.name, b.nproc, b.run_s));
        assert_eq!(a.threads, None);
    }
    assert!(m.notes.iter().any(|n| n.contains("no PEs column")));
}

#[test]
fn multiple_counts_and_repeated_names_are_read_in_their_place() {
    // The fully sequential run's profile has MULTIPLE counts, and every component's
    // RunPhase1 repeats under initialisation with other times.
    let m = measured(&noresm_profile(TEST));
    let r = run(&m);
    let atm = r.components.iter().find(|c| c.name == "atm").unwrap();
    assert_eq!(atm.run_s, Some(247.4881));
    assert_eq!(atm.nproc, 1024);
    assert_eq!(r.run_s, Some(254.4917));
    assert_eq!(r.init_s, Some(41.2122));
}

/// Every cut of `text` reads as the whole file or as not complete.
fn cuts(
    text: &str,
    path: &Path,
    at: impl Iterator<Item = usize>,
    parse: fn(&str, &Path) -> Result<Reading, TimingError>,
) -> usize {
    let whole = parse(text, path).unwrap();
    assert!(whole.complete().is_some(), "{}", path.display());
    let mut n = 0;
    for cut in at {
        if !text.is_char_boundary(cut) {
            continue;
        }
        n += 1;
        if let Err(why) = complete_is_whole(&parse(&text[..cut], path), &whole) {
            panic!("{} cut at byte {cut}: {why}", path.display());
        }
    }
    n
}

#[test]
fn every_cut_of_every_summary_is_whole_or_not_complete() {
    let mut files = vec![cesm2()];
    files.extend([NE16, NE30, TEST].map(noresm_summary));
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        cuts(&text, &path, 0..=text.len(), summary::parse);
        // Cut inside the run-time block: the components read so far, marked partial.
        let at = text.find("OCN Run Time").unwrap();
        let Ok(Reading::Measured(m)) = summary::parse(&text[..at], &path) else {
            panic!("a summary cut in its run times reads the rest");
        };
        assert!(
            m.partial.as_deref().unwrap().contains("OCN"),
            "{:?}",
            m.partial
        );
    }
}

#[test]
fn cuts_of_profiles_at_and_around_every_line_are_whole_or_not_complete() {
    let mut rng = StdRng::seed_from_u64(37);
    for lid in [NE16, NE30, TEST] {
        let path = noresm_profile(lid);
        let text = std::fs::read_to_string(&path).unwrap();
        // Every other line of the smallest file, every tenth of the others, and random bytes.
        let every = if lid == TEST { 2 } else { 10 };
        let ends: Vec<usize> = text
            .match_indices('\n')
            .map(|(i, _)| i)
            .step_by(every)
            .collect();
        let around = ends.iter().flat_map(|&e| [e.saturating_sub(1), e, e + 1]);
        let random: Vec<usize> = (0..100).map(|_| rng.random_range(0..=text.len())).collect();
        let n = cuts(&text, &path, around.chain(random), esmf::parse);
        assert!(n > 300, "{n} cuts");
    }
}

#[test]
fn damaged_lines_are_errors_naming_the_line() {
    let path = noresm_summary(NE16);
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replace("500         1536", "5x0         1536");
    assert_ne!(bad, text);
    let e = summary::parse(&bad, &path).unwrap_err().to_string();
    assert!(e.contains("line 22") && e.contains("component row"), "{e}");
    let bad = text.replace("23972.863 seconds", "23972.863 sec");
    let e = summary::parse(&bad, &path).unwrap_err().to_string();
    assert!(
        e.contains("OCN Run Time") || e.contains("ocn run time"),
        "{e}"
    );

    let path = noresm_profile(NE16);
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replacen("19886.6230", "-19886.6230", 1);
    let e = esmf::parse(&bad, &path).unwrap_err().to_string();
    assert!(
        e.contains("line 14") && e.contains("Max is not a time"),
        "{e}"
    );
}

/// Random mutations of the samples: never a panic, and a complete reading holds finite times.
#[test]
fn mutated_samples_never_panic() {
    let mut rng = StdRng::seed_from_u64(2026);
    let samples: Vec<(PathBuf, String, bool)> = [cesm2(), noresm_summary(NE16)]
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap(), true))
        .chain(std::iter::once({
            let p = noresm_profile(TEST);
            let t: String = std::fs::read_to_string(&p)
                .unwrap()
                .lines()
                .take(120)
                .map(|l| format!("{l}\n"))
                .collect();
            (p, t, false)
        }))
        .collect();
    let junk = [
        "*", "\t", "\r", "\n", " ", "-", ".", "0", "9", "e308", "NaN", "inf", "MULTIPLE", ":", "(",
        ")", "x", "  ",
    ];
    for i in 0..3000 {
        let (path, text, is_summary) = &samples[i % samples.len()];
        let mut bytes = text.as_bytes().to_vec();
        for _ in 0..rng.random_range(1..=4) {
            let at = rng.random_range(0..=bytes.len());
            match rng.random_range(0..3) {
                0 => bytes.truncate(at),
                1 => {
                    let j = junk[rng.random_range(0..junk.len())];
                    bytes.splice(at..at, j.bytes());
                }
                _ => {
                    let end = (at + rng.random_range(1..40)).min(bytes.len());
                    bytes.drain(at..end);
                }
            }
        }
        let t = String::from_utf8_lossy(&bytes);
        let r = if *is_summary {
            summary::parse(&t, path)
        } else {
            esmf::parse(&t, path)
        };
        if let Ok(Reading::Measured(m)) = r {
            if m.partial.is_none() {
                assert!(m.components.iter().all(|c| c.compute_s.is_finite()));
                assert!(m.wall_s.is_none_or(f64::is_finite));
            }
        }
    }
}

#[test]
fn a_case_directory_reads_its_newest_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let timing_dir = tmp.path().join("timing");
    std::fs::create_dir(&timing_dir).unwrap();
    let old = timing_dir.join(noresm_summary(TEST).file_name().unwrap());
    std::fs::copy(noresm_summary(TEST), &old).unwrap();
    std::fs::copy(
        noresm_profile(NE16),
        timing_dir.join(noresm_profile(NE16).file_name().unwrap()),
    )
    .unwrap();
    let newer = timing_dir.join(noresm_summary(NE16).file_name().unwrap());
    std::fs::copy(noresm_summary(NE16), &newer).unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(past)
        .unwrap();
    for dir in [tmp.path(), timing_dir.as_path()] {
        let m = measured(dir);
        assert_eq!(m.format, Format::Cime);
        assert_eq!(run(&m).run_s, Some(27411.240), "{}", dir.display());
    }
    let opts = ReadOptions {
        format: Some(Format::Esmf),
        ..ReadOptions::default()
    };
    let Ok(Reading::Measured(m)) = timing::read(&timing_dir, &opts) else {
        panic!("--format esmf on the folder reads its profile");
    };
    assert_eq!(m.format, Format::Esmf);
}

fn json(args: &[&str]) -> Value {
    let out = autolb().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn timing_json_gives_components_coupled_and_layout() {
    let path = noresm_summary(NE16);
    let v = json(&["timing", "--json", path.to_str().unwrap()]);
    assert_eq!(v["format"], "cime");
    let ocn = &v["components"][4];
    assert_eq!(ocn["name"], "ocn");
    assert_eq!(
        (ocn["nproc"].as_u64(), ocn["threads"].as_u64()),
        (Some(500), Some(1))
    );
    assert_eq!(
        (ocn["root_pe"].as_u64(), ocn["stride"].as_u64()),
        (Some(1536), Some(1))
    );
    assert_eq!(ocn["run_s"].as_f64(), Some(23972.863));
    let c = &v["coupled"];
    assert_eq!(c["run_s"].as_f64(), Some(27411.24));
    assert_eq!(
        (c["sypd"].as_f64(), c["chsy"].as_f64()),
        (Some(15.76), Some(3118.79))
    );
    assert_eq!(
        (c["cpl_run_s"].as_f64(), c["cpl_comm_s"].as_f64()),
        (Some(3011.67), Some(2339.959))
    );
    assert_eq!(v["layout"], "(cpl ; atm ; rof ; glc ; (ice | lnd)) | ocn");
    // cpl + atm + rof + glc + the larger of ice and lnd, beside the ocean's 23972.863 s.
    let expected = 3011.670 + 19886.623 + 107.871 + 12.186 + 4245.817;
    assert!((v["predicted_run_s"].as_f64().unwrap() - expected).abs() < 1e-6);
    assert_eq!(v["partial"], Value::Null);

    let profile = noresm_profile(NE16);
    let v = json(&["timing", "--json", profile.to_str().unwrap()]);
    assert_eq!(v["format"], "esmf");
    assert_eq!(v["layout"], Value::Null);
    assert_eq!(v["components"][0]["name"], "atm");
}

#[test]
fn layout_check_reports_the_model_error_over_the_noresm3_runs() {
    let dir = cime().join("noresm3");
    let v = json(&["timing", "--layout-check", "--json", dir.to_str().unwrap()]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let median = v["median_abs_error"].as_f64().unwrap();
    let max = v["max_abs_error"].as_f64().unwrap();
    assert!(median <= 0.015 && max <= 0.05, "median {median}, max {max}");
    for r in runs {
        let (tot, model) = (
            r["run_s"].as_f64().unwrap(),
            r["predicted_run_s"].as_f64().unwrap(),
        );
        assert!((r["error"].as_f64().unwrap() - (model - tot) / tot).abs() < 1e-12);
    }
    let out = autolb()
        .args(["timing", "--layout-check", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("layout model: |error| median 0.19 %, max 0.54 % over 3 runs"),
        "{text}"
    );
    let out = autolb()
        .args(["timing", dir.to_str().unwrap(), cesm2().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only with --layout-check"));
}

#[test]
fn learned_coupler_overhead_predicts_tot_of_runs_it_did_not_see() {
    let noresm3 = cime().join("noresm3");
    let cesm2_file = cesm2();
    for paths in [
        vec![noresm3.to_str().unwrap()],
        vec![noresm3.to_str().unwrap(), cesm2_file.to_str().unwrap()],
    ] {
        let mut args = vec!["timing", "--layout-check", "--json"];
        args.extend(&paths);
        let v = json(&args);
        let tree_median = v["median_abs_error"].as_f64().unwrap();
        let tree_max = v["max_abs_error"].as_f64().unwrap();
        let median = v["overhead_median_abs_error"].as_f64().unwrap();
        let max = v["overhead_max_abs_error"].as_f64().unwrap();
        // Within the target, and better than the tree alone on every measure.
        assert!(median <= 0.015 && max <= 0.05, "median {median}, max {max}");
        assert!(median < tree_median && max < tree_max, "{v}");
        let k = v["overhead_core_s_per_day"].as_f64().unwrap();
        assert!(k > 0.0, "{v}");
        for r in v["runs"].as_array().unwrap() {
            let (tot, with) = (
                r["run_s"].as_f64().unwrap(),
                r["overhead_run_s"].as_f64().unwrap(),
            );
            assert!((r["overhead_error"].as_f64().unwrap() - (with - tot) / tot).abs() < 1e-12);
            // The overhead is time spent: never below the tree.
            assert!(with > r["predicted_run_s"].as_f64().unwrap());
        }
    }
    // One run leaves nothing to check it against.
    let v = json(&[
        "timing",
        "--layout-check",
        "--json",
        cesm2_file.to_str().unwrap(),
    ]);
    assert!(v["overhead_median_abs_error"].is_null(), "{v}");
    assert!(v["runs"][0]["overhead_run_s"].is_null(), "{v}");
}

#[test]
fn older_and_newer_header_generations_read_alike() {
    // The 2017 generation says `pes per node` and has no Driver line; newer ones indent every
    // line by two spaces. Neither changes what is read.
    let path = cesm2();
    let text = std::fs::read_to_string(&path).unwrap();
    let whole = summary::parse(&text, &path).unwrap();
    let older = text.replace("mpi tasks per node      ", "pes per node");
    assert_ne!(older, text);
    let indented: String = text.lines().map(|l| format!("  {l}\n")).collect();
    let crlf = text.replace('\n', "\r\n");
    for variant in [older, indented, crlf] {
        assert_eq!(summary::parse(&variant, &path).unwrap(), whole);
    }
}
