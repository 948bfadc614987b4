//! The Slurm executor's job scripts, MPMD files and sbatch lines, rendered without Slurm.

use super::*;
use crate::executor::ExecutorKind;

fn config(slurm: SlurmSettings, command: Option<Vec<&str>>) -> ExecutorConfig {
    ExecutorConfig {
        kind: ExecutorKind::Slurm,
        command: command.map(|c| c.into_iter().map(String::from).collect()),
        timeout_s: Some(90.0),
        jobs: None,
        retries: None,
        sim: None,
        slurm: Some(slurm),
    }
}

fn run(dir: &Path) -> RunRequest {
    RunRequest {
        component: None,
        id: "i01-t02-r1".into(),
        iteration: 1,
        test: 2,
        repetition: 1,
        nproc: vec![("IFS".into(), 3), ("NEMO".into(), 2)],
        threads: Vec::new(),
        extra_pes: 1,
        run_dir: dir.join("iter-01/test-02/rep-1"),
    }
}

#[test]
fn command_without_template_becomes_a_quoted_job_script() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        SlurmSettings {
            max_ntasks: Some(2),
            partition: Some("debug".into()),
            ..Default::default()
        },
        Some(vec![
            "./model",
            "--comp",
            "ATMIFS={nproc.IFS}",
            "--out",
            ".",
        ]),
    );
    let ex = SlurmExecutor::from_config(&cfg, dir.path()).unwrap();
    let r = run(dir.path());
    let args = ex.prepare(&r).unwrap();
    let script = std::fs::read_to_string(r.run_dir.join("job.sh")).unwrap();
    let rd = r.run_dir.display().to_string();
    assert!(
        script.contains(&format!("export AUTOLB_RUN_DIR='{rd}'\n")),
        "{script}"
    );
    assert!(script.contains("export AUTOLB_BIN='"), "{script}");
    assert!(
        script.contains("cd \"$AUTOLB_RUN_DIR\" || exit 1"),
        "{script}"
    );
    assert!(
        script.contains("'./model' '--comp' 'ATMIFS=3' '--out' '.'"),
        "{script}"
    );
    assert!(args.contains(&"--ntasks=2".to_string()), "{args:?}");
    assert!(args.contains(&"--partition=debug".to_string()));
    assert!(args.contains(&"--time=2".to_string()), "{args:?}");
    assert!(args
        .iter()
        .any(|a| a.starts_with("--job-name=autolb-") && a.ends_with("-i01-t02-r1")));
    assert_eq!(
        args.last().unwrap(),
        &r.run_dir.join("job.sh").display().to_string()
    );
    assert!(r.run_dir.join("sbatch.cmd").exists());
}

#[test]
fn template_placeholders_nodes_and_mpmd_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        SlurmSettings {
            script: Some(
                "#!/bin/bash\n#SBATCH --nodes={nodes}\nsrun -n {ntasks} --multi-prog \"$AUTOLB_MULTI_PROG\"\n"
                    .into(),
            ),
            cores_per_node: Some(4),
            exclusive: Some(true),
            multi_prog: Some(MultiProgSettings {
                programs: [
                    ("IFS".to_string(), vec!["./ifs".to_string(), "{nproc.IFS}".to_string()]),
                    ("NEMO".to_string(), vec!["./nemo".to_string()]),
                ]
                .into(),
                extras: vec![ExtraProgram {
                    name: "XIOS".into(),
                    nproc: 1,
                    command: vec!["./xios".into()],
                }],
            }),
            ..Default::default()
        },
        None,
    );
    let ex = SlurmExecutor::from_config(&cfg, dir.path()).unwrap();
    let r = run(dir.path());
    let args = ex.prepare(&r).unwrap();
    assert!(args.contains(&"--ntasks=6".to_string()));
    assert!(args.contains(&"--nodes=2".to_string()));
    assert!(args.contains(&"--exclusive".to_string()));
    let mp = std::fs::read_to_string(r.run_dir.join("multi-prog.conf")).unwrap();
    let lines: Vec<&str> = mp.lines().skip(1).collect();
    assert_eq!(lines, ["0-2 './ifs' '3'", "3-4 './nemo'", "5 './xios'"]);
    let script = std::fs::read_to_string(r.run_dir.join("job.sh")).unwrap();
    let mp_path = r.run_dir.join("multi-prog.conf").display().to_string();
    assert!(
        script.starts_with("#!/bin/bash\n#SBATCH --nodes=2\n# Set by autolb for this run:\n")
            && script.contains(&format!("export AUTOLB_MULTI_PROG='{mp_path}'\n"))
            && script.ends_with("\nsrun -n 6 --multi-prog \"$AUTOLB_MULTI_PROG\"\n"),
        "{script}"
    );

    // The extras must add up to the campaign's extra PEs.
    let mut r2 = run(dir.path());
    r2.extra_pes = 4;
    let e = ex.prepare(&r2).unwrap_err().to_string();
    assert!(e.contains("extra_pes"), "{e}");
}

#[test]
fn configuration_errors_say_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let err = |s: SlurmSettings, c: Option<Vec<&str>>| {
        SlurmExecutor::from_config(&config(s, c), dir.path())
            .unwrap_err()
            .to_string()
    };
    assert!(err(SlurmSettings::default(), None).contains("template"));
    let e = err(
        SlurmSettings {
            script: Some("srun -n {nodes}\n".into()),
            ..Default::default()
        },
        None,
    );
    assert!(e.contains("{nodes}") && e.contains("cores_per_node"), "{e}");
    let e = err(
        SlurmSettings {
            script: Some("a\nsrun -n {ntask}\n".into()),
            ..Default::default()
        },
        None,
    );
    assert!(e.contains("line 2") && e.contains("{ntask}"), "{e}");
    let e = err(
        SlurmSettings {
            script: Some("#!/bin/sh\ncd {run_dir}\n".into()),
            ..Default::default()
        },
        None,
    );
    assert_eq!(
        e,
        "[executor.slurm] script: line 2: {run_dir} is not written into commands or scripts; write \"$AUTOLB_RUN_DIR\" (an environment variable the script expands)"
    );
    let e = err(
        SlurmSettings::default(),
        Some(vec!["bash", "-c", "cd {run_dir}"]),
    );
    assert!(
        e.starts_with("[executor] command[2]: line 1: {run_dir}"),
        "{e}"
    );
    let programs = |words: Vec<&str>| SlurmSettings {
        script: Some("#!/bin/sh\n{launch}\n".into()),
        multi_prog: Some(MultiProgSettings {
            programs: [(
                "IFS".to_string(),
                words.into_iter().map(String::from).collect(),
            )]
            .into(),
            extras: Vec::new(),
        }),
        ..Default::default()
    };
    let e = err(
        programs(vec!["bash", "-c", "echo {run_dir} > where.txt"]),
        None,
    );
    assert!(e.starts_with("multi_prog IFS: line 1: {run_dir}"), "{e}");
    let e = err(
        SlurmSettings {
            template: Some("missing.tmpl".into()),
            ..Default::default()
        },
        None,
    );
    assert!(e.contains("missing.tmpl"), "{e}");
    let e = err(
        SlurmSettings {
            time_limit: Some("1h".into()),
            ..Default::default()
        },
        Some(vec!["true"]),
    );
    assert!(e.contains("time_limit"), "{e}");
    let e = err(
        SlurmSettings {
            partition: Some("a b".into()),
            ..Default::default()
        },
        Some(vec!["true"]),
    );
    assert!(e.contains("partition"), "{e}");
    for bad in [0.01, f64::NAN, 1e30] {
        let e = err(
            SlurmSettings {
                poll_interval_s: Some(bad),
                ..Default::default()
            },
            Some(vec!["true"]),
        );
        assert!(e.contains("poll_interval_s"), "{bad}: {e}");
    }
}

#[test]
fn hostile_run_directory_stays_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("it's $(touch PWNED) `id` %j;\"x");
    let cfg = config(
        SlurmSettings::default(),
        Some(vec!["sh", "-c", "touch \"$AUTOLB_RUN_DIR/ok\""]),
    );
    let ex = SlurmExecutor::from_config(&cfg, &hostile).unwrap();
    let mut r = run(&hostile);
    r.run_dir = hostile.join("rep");
    let args = ex.prepare(&r).unwrap();
    // The escaped output path keeps the literal %.
    assert!(args
        .iter()
        .any(|a| a.starts_with("--output=") && a.contains("%%j;")));
    // Running the script with bash does exactly what it says: creates `ok`, nothing else.
    let status = std::process::Command::new("bash")
        .arg(r.run_dir.join("job.sh"))
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(r.run_dir.join("ok").exists());
    assert!(!dir.path().join("PWNED").exists() && !r.run_dir.join("PWNED").exists());
}

#[test]
fn job_names_are_unique_per_campaign_and_run() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cfg = config(SlurmSettings::default(), Some(vec!["true"]));
    let ea = SlurmExecutor::from_config(&cfg, a.path()).unwrap();
    let eb = SlurmExecutor::from_config(&cfg, b.path()).unwrap();
    let r = run(a.path());
    assert_ne!(ea.job_name(&r), eb.job_name(&r));
    assert_eq!(
        ea.job_name(&r),
        SlurmExecutor::from_config(&cfg, a.path())
            .unwrap()
            .job_name(&r)
    );
    let mut odd = r.clone();
    odd.id = "a b/c".into();
    assert!(ea.job_name(&odd).ends_with("-a_b_c"));
}

/// A scaling campaign's standalone run: `$AUTOLB_COMPONENT` and `{nproc}` in the command, and the
/// built-in job script times the command into `wall_s` (`timing = "wall"`) and keeps its exit
/// code; `multi_prog`, which describes a coupled run, is refused.
#[test]
fn a_standalone_job_times_its_command_into_wall_s() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ExecutorContext {
        base_dir: dir.path().to_path_buf(),
        components: ["IFS", "NEMO"]
            .iter()
            .map(|n| crate::executor::ComponentContext {
                name: n.to_string(),
                timing_name: n.to_string(),
                curve: None,
                threads: 1,
            })
            .collect(),
        period_s: None,
        standalone: true,
        layout: None,
    };
    let cfg = config(
        SlurmSettings::default(),
        Some(vec![
            "sh",
            "-c",
            "sleep 0.3; echo \"$AUTOLB_COMPONENT\" {nproc} > out; exit 3",
        ]),
    );
    let ex = SlurmExecutor::from_context(&cfg, dir.path(), &ctx).unwrap();
    let mut r = run(dir.path());
    r.component = Some("NEMO".into());
    r.nproc = vec![("NEMO".into(), 2)];
    ex.prepare(&r).unwrap();
    let job = r.run_dir.join("job.sh");
    let status = std::process::Command::new("bash")
        .arg(&job)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3), "the command's exit code");
    assert_eq!(
        std::fs::read_to_string(r.run_dir.join("out")).unwrap(),
        "NEMO 2\n"
    );
    let wall = crate::executor::wall_seconds(&r.run_dir).unwrap();
    assert!((0.3..5.0).contains(&wall), "{wall}");

    let mp = SlurmSettings {
        multi_prog: Some(MultiProgSettings {
            programs: [("IFS", "ifs"), ("NEMO", "nemo")]
                .iter()
                .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
                .collect(),
            extras: Vec::new(),
        }),
        script: Some("#!/bin/bash\nsrun --multi-prog \"$AUTOLB_MULTI_PROG\"\n".into()),
        ..Default::default()
    };
    let e = SlurmExecutor::from_context(&config(mp, None), dir.path(), &ctx)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("multi_prog") && e.contains("one component at a time"),
        "{e}"
    );
}
