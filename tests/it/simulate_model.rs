//! The stand-in coupled model: its LUCIA files read back (with the timing reader) as the
//! compute and waiting seconds it modelled, and its waits come from the coupling.

use std::path::Path;

use autolb::curve::{Curve, Point};
use autolb::sim::{self, SimComponent, SimOutcome, SimRun, SimSettings};
use autolb::timing::{self, Measurement, ReadOptions, Reading};

fn comp(name: &str, nproc: u32) -> SimComponent {
    SimComponent {
        name: name.into(),
        nproc,
        curve: sim::builtin_curve(name).unwrap(),
        threads: 1,
    }
}

fn run_into(dir: &Path, settings: &SimSettings, comps: Vec<SimComponent>, seed: u64) -> SimOutcome {
    sim::simulate(&SimRun::new(settings, comps, seed), dir).unwrap()
}

fn read_back(dir: &Path, outcome: &SimOutcome, period: f64) -> Measurement {
    let mut o = ReadOptions {
        period_s: Some(period),
        ..ReadOptions::default()
    };
    for c in &outcome.components {
        o.nproc.insert(c.name.clone(), c.nproc);
    }
    match timing::read(dir, &o).unwrap() {
        Reading::Measured(m) => m,
        other => panic!("{other:?}"),
    }
}

/// Times are printed to 1e-5 s; a window of N steps and a few events each.
fn close(a: f64, b: f64, steps: u32) -> bool {
    (a - b).abs() <= 4e-5 * f64::from(steps) + 1e-9
}

#[test]
fn files_read_back_as_the_modelled_seconds() {
    for (ifs, nemo, seed) in [(240, 144, 1), (96, 48, 2), (480, 336, 3), (48, 240, 4)] {
        let dir = tempfile::tempdir().unwrap();
        let s = SimSettings::default();
        let out = run_into(
            dir.path(),
            &s,
            vec![comp("ATMIFS", ifs), comp("oceanx", nemo)],
            seed,
        );
        assert_eq!(out.failed, None);
        let m = read_back(dir.path(), &out, s.period());
        assert_eq!(m.partial, None, "{:?}", m.partial);
        assert_eq!(m.components[0].steps, u64::from(out.window_steps));
        assert!(close(
            m.wall_s.unwrap(),
            out.window_wall_s,
            out.window_steps
        ));
        assert_eq!(m.sim_s, Some(out.window_sim_s));
        for (c, o) in m.components.iter().zip(&out.components) {
            assert_eq!((&c.name, c.sampled_ranks), (&o.name, Some(o.sampled_ranks)));
            assert!(
                close(c.compute_s, o.compute_s, out.window_steps),
                "{ifs}/{nemo} {}: compute {} read vs {} modelled",
                c.name,
                c.compute_s,
                o.compute_s
            );
            assert!(
                close(c.wait_s, o.wait_s, out.window_steps),
                "{ifs}/{nemo} {}: wait {} read vs {} modelled",
                c.name,
                c.wait_s,
                o.wait_s
            );
        }
    }
}

#[test]
fn the_faster_component_waits_for_the_slower() {
    // No noise, no heavy steps: waits are exactly the difference in step times.
    let s = SimSettings {
        noise: Some(0.0),
        heavy_every: Some(0),
        rank_imbalance: Some(0.0),
        ..SimSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    // IFS on 48 PEs (3.27 SYPD) is far slower than NEMO on 240.
    let out = run_into(
        dir.path(),
        &s,
        vec![comp("ATMIFS", 48), comp("oceanx", 240)],
        9,
    );
    let ifs_step = 2700.0 / (out.components[0].truth_sypd * 365.0);
    let nemo_step = 2700.0 / (out.components[1].truth_sypd * 365.0);
    let steps = f64::from(out.window_steps);
    let m = read_back(dir.path(), &out, 2700.0);
    let (ifs, nemo) = (&m.components[0], &m.components[1]);
    assert!((ifs.compute_s - steps * ifs_step).abs() < 1e-3);
    assert!((nemo.compute_s - steps * nemo_step).abs() < 1e-3);
    // NEMO waits for IFS's field every step; IFS hardly waits at all.
    assert!((nemo.wait_s - steps * (ifs_step - nemo_step)).abs() / nemo.wait_s < 0.01);
    assert!(ifs.wait_s < 0.01 * nemo.wait_s);
    // Component SYPD comes back as the truth curve's, coupled SYPD as the slower one's.
    let ifs_sypd = m.component_sypd(0).unwrap();
    assert!((ifs_sypd / out.components[0].truth_sypd - 1.0).abs() < 1e-3);
    assert!(m.coupled_sypd().unwrap() < ifs_sypd);
    assert!(m.partial_coupling_cost(1).unwrap() > m.partial_coupling_cost(0).unwrap());
}

#[test]
fn heavy_steps_make_both_wait_even_at_equal_mean_speed() {
    let flat = Curve::from_points(
        "flat",
        "test",
        &[
            Point {
                nproc: 10,
                sypd: 10.0,
            },
            Point {
                nproc: 100,
                sypd: 10.0,
            },
        ],
    )
    .unwrap();
    let mk = |name: &str| SimComponent {
        name: name.into(),
        nproc: 50,
        curve: flat.clone(),
        threads: 1,
    };
    let s = SimSettings {
        noise: Some(0.0),
        rank_imbalance: Some(0.0),
        heavy_every: Some(4),
        heavy_factor: Some(2.0),
        heavy_components: Some(vec!["A".into()]),
        steps: Some(81),
        ..SimSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run_into(dir.path(), &s, vec![mk("A"), mk("B")], 5);
    let m = read_back(dir.path(), &out, 2700.0);
    // Same mean compute time...
    let (a, b) = (&m.components[0], &m.components[1]);
    assert!(
        (a.compute_s / b.compute_s - 1.0).abs() < 0.05,
        "{} vs {}",
        a.compute_s,
        b.compute_s
    );
    // ...but A's radiation steps make B wait, and A waits on the light steps.
    assert!(
        a.wait_s > 0.05 * a.compute_s && b.wait_s > 0.05 * b.compute_s,
        "{a:?} {b:?}"
    );
}

#[test]
fn same_seed_same_files_other_seed_other_files() {
    let s = SimSettings::default();
    let read = |dir: &Path| std::fs::read(dir.join("lucia.01.000000")).unwrap();
    let (d1, d2, d3) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    run_into(
        d1.path(),
        &s,
        vec![comp("ATMIFS", 240), comp("oceanx", 144)],
        7,
    );
    run_into(
        d2.path(),
        &s,
        vec![comp("ATMIFS", 240), comp("oceanx", 144)],
        7,
    );
    run_into(
        d3.path(),
        &s,
        vec![comp("ATMIFS", 240), comp("oceanx", 144)],
        8,
    );
    assert_eq!(read(d1.path()), read(d2.path()));
    assert_ne!(read(d1.path()), read(d3.path()));
}

#[test]
fn sampled_rank_files_follow_the_oasis_rule() {
    let dir = tempfile::tempdir().unwrap();
    run_into(
        dir.path(),
        &SimSettings::default(),
        vec![comp("ATMIFS", 240), comp("oceanx", 12)],
        1,
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("lucia.01.")).count(),
        20
    );
    assert!(names.contains(&"lucia.01.000228".to_string()));
    assert_eq!(
        names.iter().filter(|n| n.starts_with("lucia.02.")).count(),
        12
    );
}

#[test]
fn a_failing_run_leaves_cut_files_and_is_never_complete() {
    let s = SimSettings {
        fail_after: Some(12),
        ..SimSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run_into(
        dir.path(),
        &s,
        vec![comp("ATMIFS", 96), comp("oceanx", 48)],
        3,
    );
    assert!(out.failed.as_deref().unwrap().contains("12"));
    assert_eq!(out.exchanges, 13);
    let mut o = ReadOptions::default();
    o.nproc.insert("ATMIFS".into(), 96);
    o.nproc.insert("oceanx".into(), 48);
    let r = timing::read(dir.path(), &o).unwrap();
    assert!(r.complete().is_none(), "{r:?}");
    match r {
        Reading::Measured(m) => assert!(m.partial.unwrap().contains("middle of line")),
        Reading::Incomplete { .. } => {}
    }
    // A failure probability of 1 always fails, 0 never.
    let always = SimSettings {
        fail_probability: Some(1.0),
        ..SimSettings::default()
    };
    let d = tempfile::tempdir().unwrap();
    assert!(run_into(d.path(), &always, vec![comp("ATMIFS", 96)], 1)
        .failed
        .is_some());
}

#[test]
fn compressed_runs_write_progressively() {
    // ~40 steps of ~0.6 s modelled at 0.05 real seconds per modelled second: ~1.3 s.
    let s = SimSettings {
        compression: Some(0.05),
        ..SimSettings::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let handle = std::thread::spawn(move || {
        sim::simulate(
            &SimRun::new(&s, vec![comp("ATMIFS", 240), comp("oceanx", 144)], 1),
            &path,
        )
        .unwrap()
    });
    let mut seen_unfinished = false;
    let mut seen_inside_a_get = false;
    let started = std::time::Instant::now();
    while !handle.is_finished() {
        if let Ok(r) = timing::read(dir.path(), &ReadOptions::default()) {
            match &r {
                Reading::Measured(m) => {
                    if m.components.first().is_some_and(|c| c.steps < 37) {
                        seen_unfinished = true;
                    }
                    if m.partial
                        .as_deref()
                        .is_some_and(|p| p.contains("Before with no After"))
                    {
                        seen_inside_a_get = true;
                    }
                }
                Reading::Incomplete { .. } => seen_unfinished = true,
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = handle.join().unwrap();
    assert!(started.elapsed().as_secs_f64() > 0.5 * out.total_wall_s * 0.05);
    assert!(
        seen_unfinished,
        "a reader during the run saw only finished files"
    );
    // Between exchanges the model sits in a get: files end on a Before with no After.
    assert!(seen_inside_a_get);
    let m = read_back(dir.path(), &out, 2700.0);
    assert_eq!(m.partial, None);
}

#[test]
fn settings_parse_from_the_campaign_table_and_are_checked() {
    let s: SimSettings = toml::from_str(
        "steps = 60\nperiod_s = 3600\nnoise = 0.01\ncompression = 0.001\nseed = 4\nfail_probability = 0.1\n[curves]\nATMIFS = \"ifs.csv\"\n",
    )
    .unwrap();
    assert_eq!((s.steps(), s.period()), (60, 3600.0));
    assert!(s.validate().is_ok());
    assert!(toml::from_str::<SimSettings>("stepz = 3\n")
        .unwrap_err()
        .to_string()
        .contains("stepz"));
    let bad = SimSettings {
        noise: Some(-1.0),
        ..SimSettings::default()
    };
    assert!(bad.validate().unwrap_err().to_string().contains("noise"));
    // Truth curves: configured ones relative to the campaign file, else the built-in ones.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ifs.csv"), "nproc,SYPD\n10,1\n20,2\n").unwrap();
    let c = s
        .configured_curve(&["IFS", "ATMIFS"], dir.path())
        .unwrap()
        .unwrap();
    assert_eq!(c.points().len(), 2);
    assert!(s.configured_curve(&["NEMO"], dir.path()).unwrap().is_none());
    assert!(sim::builtin_curve("oceanx").is_some() && sim::builtin_curve("IFS").is_some());
    assert!(sim::builtin_curve("FOO").is_none());
}
