//! An EC-Earth4-style campaign on a real Slurm: a hybrid OpenIFS (2 OpenMP threads a rank)
//! and NEMO, each run a batch job whose `{launch}` starts one job step per component with its
//! `--cpus-per-task` and `OMP_NUM_THREADS`; OpenIFS's first rank runs the stand-in model, which
//! writes an EC-Earth4 run directory (OASIS 5's load_balancing_info.txt, log/001/timing.log)
//! that the campaign measures through the EC-Earth4 readers, to the campaign's end.
//! Skips (or fails with AUTOLB_REQUIRE_SLURM=1) without a reachable Slurm.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::common::autolb_path;
use crate::slurm_common::*;
use autolb::campaign::{DriveOptions, DriveOutcome, RunState, State};
use autolb::config::CampaignFile;

/// Small curves, so that every rank fits a 2-core node's job (the steps overcommit it).
fn write_inputs(dir: &Path) {
    std::fs::write(
        dir.join("oifs.csv"),
        "nproc,threads,SYPD\n1,2,2.0\n2,2,3.8\n4,2,7.0\n8,2,12.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("nemo.csv"),
        "nproc,SYPD\n1,1.5\n2,3.0\n4,5.6\n8,10.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("job.tmpl"),
        "#!/bin/bash\n# EC-Earth4-like job: one step per component.\ncd \"$AUTOLB_RUN_DIR\" || exit 1\n{launch}\n",
    )
    .unwrap();
    // OpenIFS's ranks report their threads; its first rank runs the stand-in model.
    let rank0 = r#"echo "OpenIFS rank $SLURM_PROCID: OMP_NUM_THREADS=$OMP_NUM_THREADS cpus=$SLURM_CPUS_PER_TASK"; test "$SLURM_PROCID" != 0 || exec "$0" "$@""#;
    let text = format!(
        r#"max_nproc = 12
tts_w = 0.5
top = 1
initial_step = 4
minimum_step = 2
repetitions = 1

[[component]]
name = "oifs"
timing_name = "OpenIFS"
curve = "oifs.csv"
threads = [2]

[[component]]
name = "nemo"
timing_name = "oceanx"
curve = "nemo.csv"

[executor]
kind = "slurm"
jobs = 2
retries = 0

[executor.slurm]
template = "job.tmpl"
# The run's cores on a 2-core node: the steps share them (--overlap --overcommit).
max_ntasks = 2
poll_interval_s = 0.3
time_limit = "5"
autolb = "{autolb}"

[executor.slurm.multi_prog.programs]
oifs = ["sh", "-c", '{rank0}', "{autolb}", "simulate", "--output", "oasis5", "--steps", "32",
        "--comp", "OpenIFS={{nproc.oifs}}", "--threads", "OpenIFS={{threads.oifs}}",
        "--curve", "OpenIFS={dir}/oifs.csv", "--comp", "oceanx={{nproc.nemo}}",
        "--curve", "oceanx={dir}/nemo.csv", "--out", ".", "--seed", "{{test}}"]
nemo = ["sh", "-c", "echo NEMO rank $SLURM_PROCID: OMP_NUM_THREADS=$OMP_NUM_THREADS"]
"#,
        autolb = autolb_path().display(),
        dir = dir.display(),
    );
    std::fs::write(dir.join("campaign.toml"), text).unwrap();
}

#[test]
fn slurm_ecearth4_campaign_runs_hybrid_steps_to_the_end() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_ecearth4_campaign_runs_hybrid_steps_to_the_end") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    write_inputs(base.path());
    let file = CampaignFile::load(&base.path().join("campaign.toml")).unwrap();
    let dir = base.path().join("camp");
    autolb::campaign::init(&dir, &file, base.path(), false).expect("campaign init");
    let stop = AtomicBool::new(false);
    let outcome = autolb::campaign::drive(&dir, &DriveOptions::default(), &stop).expect("drive");
    let DriveOutcome::Done { best: Some(best) } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(best.sypd > 0.0, "{best:?}");

    let state = State::load(&dir).unwrap();
    assert_eq!(state.components[0].threads, 2);
    let mut runs = 0;
    for (i, it) in state.iterations.iter().enumerate() {
        for (t, test) in it.tests.iter().enumerate() {
            assert_eq!(test.nproc[0] % 2, 0, "{:?}", test.nproc);
            for (r, run) in test.runs.iter().enumerate() {
                runs += 1;
                assert_eq!(run.state, RunState::Done, "{run:?}");
                let request = state.request(&dir, i, t, r);
                let ranks = test.nproc[0] / 2;
                let script = std::fs::read_to_string(request.run_dir.join("job.sh")).unwrap();
                assert!(
                    script.contains(&format!(
                        "OMP_NUM_THREADS=2 srun --ntasks={ranks} --cpus-per-task=2"
                    )),
                    "{script}"
                );
                assert!(
                    script.contains(&format!(
                        "OMP_NUM_THREADS=1 srun --ntasks={} --cpus-per-task=1",
                        test.nproc[1]
                    )),
                    "{script}"
                );
                let output = job_output(&request.run_dir);
                assert!(
                    output.contains("OpenIFS rank 0: OMP_NUM_THREADS=2 cpus=2"),
                    "{output}"
                );
                assert!(
                    output.contains("NEMO rank 0: OMP_NUM_THREADS=1"),
                    "{output}"
                );
                assert!(request.run_dir.join("load_balancing_info.txt").is_file());
                assert!(request.run_dir.join("log/001/timing.log").is_file());
            }
        }
    }
    assert!(runs >= 2, "{runs} runs");
}
