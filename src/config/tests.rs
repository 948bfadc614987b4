use super::*;

#[test]
fn nemo_listonly_output_is_an_allowed_list() {
    let text = "    jpni = 0\n   nb_cores oce:    29, land domains excluded:     7 ( 19.4%)\n\
                \x20  nb_cores oce:    16, land domains excluded:     4 ( 20.0%)\n STOP\n";
    assert_eq!(parse_allowed(text, "ocean.output").unwrap(), vec![16, 29]);
    let e = parse_allowed("nb_cores oce: many\n", "o")
        .unwrap_err()
        .to_string();
    assert!(e.contains("many"), "{e}");
}

/// The built-in example's NEMO list ([`crate::example::NEMO_ALLOWED`]) is a valid
/// `allowed` file (it is read here, where the parser lives, since the example sits below).
#[test]
fn the_bundled_nemo_allowed_list_parses() {
    assert!(
        parse_allowed(crate::example::NEMO_ALLOWED, "allowed")
            .unwrap()
            .len()
            > 50
    );
}

/// The bundled EC-Earth3 Slurm example (assets/slurm) loads and renders into a valid job script and MPMD
/// file for a real configuration.
#[test]
fn the_bundled_ecearth3_example_renders() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/slurm");
    let file = CampaignFile::load(&assets.join("campaign.toml")).unwrap();
    let components = file
        .components
        .iter()
        .map(|c| crate::executor::ComponentContext {
            name: c.name.clone(),
            timing_name: c.timing_name().to_string(),
            curve: Some(
                crate::curve::Curve::load(c.name.clone(), &assets.join(c.curve.as_ref().unwrap()))
                    .unwrap(),
            ),
            threads: 1,
        })
        .collect();
    let ctx = crate::executor::ExecutorContext {
        base_dir: assets.clone(),
        components,
        period_s: file.period_s,
        standalone: false,
        layout: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = file.executor.clone().unwrap();
    let ex = crate::executor::slurm::SlurmExecutor::from_context(&cfg, dir.path(), &ctx).unwrap();
    let mut r = crate::executor::RunRequest {
        component: None,
        id: "i01-t02-r1".into(),
        iteration: 1,
        test: 2,
        repetition: 1,
        nproc: Vec::new(),
        threads: Vec::new(),
        extra_pes: 0,
        run_dir: dir.path().join("iter-01/test-02/rep-1"),
    };
    r.nproc = vec![("IFS".into(), 384), ("NEMO".into(), 242)];
    r.extra_pes = 2;
    let args = ex.prepare(&r).unwrap();
    for expected in [
        "--ntasks=628",
        "--nodes=14",
        "--partition=main",
        "--account=myproject",
        "--qos=normal",
        "--time=01:00:00",
        "--exclusive",
        "--mem=0",
    ] {
        assert!(
            args.contains(&expected.to_string()),
            "{expected} in {args:?}"
        );
    }
    let mp = std::fs::read_to_string(r.run_dir.join("multi-prog.conf")).unwrap();
    let lines: Vec<&str> = mp.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "0-383 './ifsmaster-ecconf' '-v' 'ecmwf' '-e' 'a0b1'",
            "384-625 './nemo.exe'",
            "626 './runoff-mapper.exe'",
            "627 './xios_server.exe'"
        ]
    );
    let job = r.run_dir.join("job.sh");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(
        script.contains("NPROC_IFS=384\nNPROC_NEMO=242\n"),
        "{script}"
    );
    assert!(
        script.contains("--ntasks=628 --multi-prog \"$AUTOLB_MULTI_PROG\""),
        "{script}"
    );
    assert!(script.contains("628 tasks on 14 nodes"), "{script}");
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    // A component without a program is reported before anything is submitted.
    let mut partial = cfg.clone();
    if let Some(mp) = partial.slurm.as_mut().and_then(|s| s.multi_prog.as_mut()) {
        mp.programs.remove("NEMO");
    }
    let e = crate::executor::slurm::SlurmExecutor::from_context(&partial, dir.path(), &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("NEMO"), "{e}");
}

const EXAMPLE: &str = r#"
max_nproc = 672
step = 24
tts_w = 0.5
interp = "quadratic"

[[component]]
name = "IFS"
curve = "ifs.csv"
timing_name = "ATMIFS"

[[component]]
name = "NEMO"
curve = "nemo.csv"
allowed = [48, 96]

[original]
IFS = 480

[executor]
kind = "command"
command = ["run.sh", "{nproc.IFS}"]
"#;

#[test]
fn parses_the_documented_keys() {
    let f = CampaignFile::parse(EXAMPLE, "c.toml").unwrap();
    assert_eq!(f.components.len(), 2);
    assert_eq!(f.components[0].timing_name(), "ATMIFS");
    assert_eq!(f.components[1].timing_name(), "NEMO");
    assert_eq!(
        f.components[1].allowed,
        Some(AllowedEntry::List(vec![48, 96]))
    );
    assert_eq!(f.settings().interp, Method::Quadratic);
    assert_eq!(
        f.executor.unwrap().kind,
        crate::executor::ExecutorKind::Command
    );
}

#[test]
fn unknown_keys_and_wrong_types_name_key_and_line() {
    let e = CampaignFile::parse("max_nproc = 1\nstepp = 3\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("stepp"), "{e}");
    let e = CampaignFile::parse("max_nproc = \"lots\"\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && e.contains("max_nproc"), "{e}");
    let e = CampaignFile::parse("[original]\nFOO = 3\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("FOO"), "{e}");
}

#[test]
fn a_misspelt_key_gets_the_nearest_name_and_types_are_plain_words() {
    let err = |text: &str| CampaignFile::parse(text, "c.toml").unwrap_err().to_string();
    let e = err("max_nproc = 1\nrepetitons = 2\n");
    assert!(
        e.starts_with(
            "c.toml: line 2: unknown key `repetitons`; did you mean `repetitions`? (valid \
             here: `max_nproc`, `step`,"
        ),
        "{e}"
    );
    assert!(e.ends_with("`scaling`) (at `repetitons = 2`)"), "{e}");
    // Nothing near: the list alone.
    let e = err("max_nproc = 1\nzzzzqq = 2\n");
    assert!(
        e.contains("unknown key `zzzzqq` (valid here: `max_nproc`"),
        "{e}"
    );
    assert!(!e.contains("did you mean"), "{e}");
    // In a table, and for a value of a fixed set.
    let e = err("[[component]]\nname = \"A\"\ncurve = \"a.csv\"\ntiming_nam = \"X\"\n");
    assert!(e.contains("did you mean `timing_name`?"), "{e}");
    let e = err("interp = \"quadratc\"\n");
    assert!(
        e.contains("unknown value `quadratc`; did you mean `quadratic`? (valid here: `linear`, `quadratic`, `pchip`)"),
        "{e}"
    );
    for (text, plain) in [
        (
            "max_nproc = 672.5\n",
            "decimal number `672.5`, expected a whole number >= 0",
        ),
        ("repetitions = -1\n", "expected a whole number >= 0"),
        ("tts_w = \"a\"\n", "expected a number"),
        (
            "[executor]\nkind = \"slurm\"\n[executor.slurm]\nexclusive = 1\n",
            "expected true or false",
        ),
    ] {
        let e = err(text);
        assert!(e.contains(plain), "{e}");
        assert!(!e.contains("u32") && !e.contains("f64"), "{e}");
    }
}

#[test]
fn strategy_key_defaults_to_algorithm1_and_names_a_bad_value() {
    assert_eq!(
        CampaignFile::parse("max_nproc = 1\n", "c.toml")
            .unwrap()
            .strategy,
        None
    );
    let f = CampaignFile::parse("strategy = \"guided\"\n", "c.toml").unwrap();
    assert_eq!(f.strategy, Some(Strategy::Guided));
    let e = CampaignFile::parse("max_nproc = 1\nstrategy = \"greedy\"\n", "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("greedy"), "{e}");
}

#[test]
fn start_configurations_must_name_every_component() {
    let base = "[[component]]\nname = \"A\"\ncurve = \"a.csv\"\n[[component]]\nname = \"B\"\ncurve = \"b.csv\"\n";
    let ok = format!("start = [{{A = 48, B = 96}}, {{A = 96, B = 48}}]\n{base}");
    let f = CampaignFile::parse(&ok, "c.toml").unwrap();
    assert_eq!(f.start.unwrap()[1]["A"], 96);
    let e = CampaignFile::parse(&format!("start = [{{A = 48}}]\n{base}"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("start entry 1") && e.contains("\"B\""), "{e}");
    let e = CampaignFile::parse(
        &format!("start = [{{A = 1, B = 2, C = 3}}]\n{base}"),
        "c.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("\"C\""), "{e}");
}

#[test]
fn allowed_lists() {
    assert_eq!(
        parse_allowed("48\n57, 68 # x\n", "a").unwrap(),
        vec![48, 57, 68]
    );
    let e = parse_allowed("48\n5x\n", "a").unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("5x"), "{e}");
    assert!(parse_allowed("# none\n", "a").is_err());
}

/// A `[[component]]` may leave `curve` out (learned from measured runs); it then needs its
/// range, and the error names the line and the keys to add.
#[test]
fn a_component_without_a_curve_needs_its_range() {
    let ok = "[[component]]\nname = \"IFS\"\nmin_nproc = 48\nmax_nproc = 1200\n\n\
              [[component]]\nname = \"NEMO\"\nallowed = [48, 96, 144]\n";
    let file = CampaignFile::parse(ok, "c.toml").unwrap();
    let inputs = file.component_inputs(Path::new(".")).unwrap();
    assert!(inputs.iter().all(|c| c.curve.is_none()));
    assert_eq!(inputs[0].range(), Some((48, 1200)));
    assert_eq!(inputs[1].range(), Some((48, 144)));
    let bad = "[[component]]\nname = \"IFS\"\nmin_nproc = 48\n";
    let e = CampaignFile::parse(bad, "c.toml").unwrap_err().to_string();
    assert!(
        e.starts_with("c.toml: line 2: component IFS has no curve")
            && e.contains("add min_nproc and max_nproc (or allowed), or curve = \"PATH\""),
        "{e}"
    );
}

#[test]
fn pinned_helpers_are_set_apart_and_written_back() {
    let text = "max_nproc = 1120\n[machine]\ncores_per_node = 112\nplacement = \"groups\"\n\
                [[component]]\nname = \"xios\"\npinned = \"per-node\"\nnproc = 1\n\
                [[component]]\nname = \"oifs\"\ncurve = \"o.csv\"\n\
                [[component]]\nname = \"rnfm\"\npinned = \"first-node\"\nnproc = 1\n";
    let file = CampaignFile::parse(text, "c.toml").unwrap();
    // Everything that balances sees only the balanced component.
    assert_eq!(
        file.components.iter().map(|c| &c.name).collect::<Vec<_>>(),
        ["oifs"]
    );
    let helpers = file.pinned_helpers();
    assert_eq!(
        helpers
            .iter()
            .map(|h| (h.name.as_str(), h.ranks, h.pinned))
            .collect::<Vec<_>>(),
        [("xios", 1, Pinned::PerNode), ("rnfm", 1, Pinned::FirstNode)]
    );
    // Written again, the helpers are [[component]] tables that parse to the same file.
    let again = toml::to_string(&file.clone().with_helpers_as_components()).unwrap();
    assert_eq!(CampaignFile::parse(&again, "again.toml").unwrap(), file);
}

#[test]
fn a_pinned_helper_says_what_it_lacks_on_its_line() {
    let groups = "max_nproc = 1120\n[machine]\ncores_per_node = 112\nplacement = \"groups\"\n\
                  [[component]]\nname = \"oifs\"\ncurve = \"o.csv\"\n";
    let cases = [
        (
            format!("{groups}[[component]]\nname = \"xios\"\npinned = \"per-node\"\n"),
            "line 10: component xios: pinned = \"per-node\" needs nproc",
        ),
        (
            format!("{groups}[[component]]\nname = \"xios\"\nnproc = 1\n"),
            "line 10: component xios: nproc is for pinned helpers",
        ),
        (
            format!(
                "{groups}[[component]]\nname = \"xios\"\npinned = \"per-node\"\nnproc = 1\ncurve = \"x.csv\"\n"
            ),
            "line 12: component xios: a pinned helper is never balanced, so it takes no curve",
        ),
        (
            "max_nproc = 10\n[[component]]\nname = \"oifs\"\ncurve = \"o.csv\"\n\
             [[component]]\nname = \"xios\"\npinned = \"per-node\"\nnproc = 1\n"
                .to_string(),
            "line 7: component xios: pinned helpers are placed on nodes, so they need [machine] with cores_per_node and placement = \"groups\"",
        ),
        (
            format!("{groups}[[component]]\nname = \"xios\"\npinned = \"every-node\"\nnproc = 1\n"),
            "unknown value `every-node`",
        ),
    ];
    for (text, expected) in cases {
        let e = CampaignFile::parse(&text, "c.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn a_scaling_table_is_checked_with_the_line_of_its_key() {
    let base = "[[component]]\nname = \"IFS\"\nmin_nproc = 48\nmax_nproc = 960\n\n[scaling]\ndesign = \"standalone\"\n";
    let file = CampaignFile::parse(base, "c.toml").unwrap();
    assert_eq!(
        file.scaling
            .as_ref()
            .unwrap()
            .resolve()
            .unwrap()
            .repetitions,
        3
    );
    let coupled = base.replace("standalone", "coupled");
    CampaignFile::parse(&coupled, "c.toml").unwrap();
    let e = CampaignFile::parse(
        &format!("{coupled}simulated_days = 1\ntiming = \"wall\"\n"),
        "c.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("c.toml: line 9:") && e.contains("design = \"coupled\"") && !e.contains('\n'),
        "{e}"
    );
    let e = CampaignFile::parse(&format!("{base}repetitions = 0\n"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 8:") && e.contains("repetitions = 0"),
        "{e}"
    );
    let with_curve = base.replace("min_nproc = 48", "curve = \"ifs.csv\"\nmin_nproc = 48");
    let e = CampaignFile::parse(&with_curve, "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3:") && e.contains("drop `curve`"), "{e}");
    let e = CampaignFile::parse(&format!("strategy = \"guided\"\n{base}"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 8:") && e.contains("cold start") && e.contains("design = \"coupled\""),
        "{e}"
    );
    let e = CampaignFile::parse(&format!("strategy = \"algorithm1\"\n{base}"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`strategy` cannot go with [scaling]"), "{e}");
    // Guided with the coupled design is a cold start.
    let cold = format!(
        "strategy = \"guided\"\n{}",
        base.replace("standalone", "coupled")
    );
    assert!(CampaignFile::parse(&cold, "c.toml")
        .unwrap()
        .is_cold_start());
    let e = CampaignFile::parse(&format!("{base}bogus = 1\n"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 8") && e.contains("bogus"), "{e}");
}

#[test]
fn a_cold_start_takes_any_subset_of_the_scaling_keys() {
    let base = "strategy = \"guided\"\nmax_nproc = 900\n[[component]]\nname = \"IFS\"\nmin_nproc = 48\nmax_nproc = 800\n[[component]]\nname = \"NEMO\"\nmin_nproc = 48\nmax_nproc = 600\n\n[scaling]\n";
    for keys in [
        "max_runs = 30\n",
        "repetitions = 2\n",
        "counts = 5\nmax_runs = 40\n",
        "",
    ] {
        let file = CampaignFile::parse(&format!("{base}{keys}"), "c.toml")
            .unwrap_or_else(|e| panic!("{keys:?}: {e}"));
        assert!(file.is_cold_start(), "{keys:?}");
        let s = file.cold_start_scaling().unwrap();
        assert_eq!(s.design, crate::config::ScalingDesign::Coupled, "{keys:?}");
        let expected_reps = if keys.contains("repetitions = 2") {
            2
        } else {
            1
        };
        assert_eq!(s.repetitions, expected_reps, "{keys:?}");
    }
    // Without a strategy, a scaling campaign must say which design it measures with.
    let plain = base.replace("strategy = \"guided\"\n", "");
    let e = CampaignFile::parse(&format!("{plain}max_runs = 30\n"), "c.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("design is missing") && !e.contains('\n'), "{e}");
}

#[test]
fn a_layout_names_every_component_once_and_errors_give_the_line() {
    let file = |layout: &str| {
        format!(
            "max_nproc = 64\nlayout = \"{layout}\"\n\n[[component]]\nname = \"atm\"\ncurve = \"a.csv\"\n\n\
             [[component]]\nname = \"ocn\"\ncurve = \"o.csv\"\n"
        )
    };
    let ok = CampaignFile::parse(&file("ocn | atm"), "c.toml").unwrap();
    assert_eq!(ok.layout_tree().unwrap().unwrap().to_string(), "ocn | atm");
    assert_eq!(
        CampaignFile::parse("max_nproc = 4\n", "c.toml")
            .unwrap()
            .layout_tree()
            .unwrap(),
        None
    );
    for (layout, words) in [
        (
            "ocn | atm | ice",
            "names ice, which is not a balanced [[component]]",
        ),
        ("atm", "leaves out component ocn"),
        ("ocn | atm ; ocn", "add parentheses"),
    ] {
        let e = CampaignFile::parse(&file(layout), "c.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml: line 2: "), "{e}");
        assert!(e.contains(words), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
