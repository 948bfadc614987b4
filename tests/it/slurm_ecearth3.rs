//! The bundled EC-Earth3 job template (assets/slurm/ecearth3-job.tmpl) run for real through
//! sbatch and `srun --multi-prog`, on a fake EC-Earth3 run directory: the template copies it,
//! sets the decomposition in fort.4 and namelist_cfg, switches LUCIA on in namcouple, and
//! launches one program per component on its own ranks. The "IFS" rank runs the stand-in
//! model, which writes the LUCIA files; the "NEMO" rank checks the edited inputs.
//! Skips (or fails with AUTOLB_REQUIRE_SLURM=1) without a reachable Slurm.

use crate::common::autolb_path;
use std::path::Path;
use std::time::Duration;

use crate::slurm_common::*;
use autolb::config::CampaignFile;
use autolb::executor::slurm::{MultiProgSettings, SlurmExecutor};
use autolb::executor::{ComponentContext, Executor, ExecutorContext, RunStatus};
use autolb::timing::{read, ReadOptions, Reading};

/// A prepared EC-Earth3 run directory, as far as the template touches it.
fn fake_runtime(dir: &Path) {
    std::fs::create_dir_all(dir.join("inputs")).unwrap();
    std::fs::write(dir.join("inputs/big.grb"), "input data\n").unwrap();
    std::fs::write(
        dir.join("namcouple"),
        " $NFIELDS\n   12\n $END\n $NLOGPRT\n   2 0\n $END\n",
    )
    .unwrap();
    std::fs::write(dir.join("fort.4"), " &NAMPAR0\n  NPROC=768,\n /\n").unwrap();
    std::fs::write(
        dir.join("namelist_cfg"),
        "&nammpp\n   jpni = 16\n   jpnj = 24\n   jpnij = 384\n/\n",
    )
    .unwrap();
}

#[test]
fn slurm_ecearth3_template_runs_an_mpmd_job_to_lucia_output() {
    let _slurm = exclusive();
    if !slurm_or_skip("slurm_ecearth3_template_runs_an_mpmd_job_to_lucia_output") {
        return;
    }
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/slurm");
    let work = tempfile::tempdir().unwrap();
    let runtime = work.path().join("ece-runtime");
    fake_runtime(&runtime);
    // The template with this machine's run directory in place of the site's.
    let template = std::fs::read_to_string(assets.join("ecearth3-job.tmpl")).unwrap();
    let site_line = template
        .lines()
        .find(|l| l.starts_with("ECE_RUNTIME="))
        .expect("the template sets ECE_RUNTIME");
    let local = template.replace(site_line, &format!("ECE_RUNTIME='{}'", runtime.display()));
    std::fs::write(work.path().join("job.tmpl"), local).unwrap();

    // The example campaign's executor, fitted to a 2-core node: IFS 1 + NEMO 1, no extras.
    let file = CampaignFile::load(&assets.join("campaign.toml")).unwrap();
    let mut cfg = file.executor.clone().unwrap();
    let slurm = cfg.slurm.as_mut().unwrap();
    slurm.template = Some(work.path().join("job.tmpl"));
    slurm.partition = None;
    slurm.account = None;
    slurm.qos = None;
    slurm.exclusive = None;
    slurm.sbatch_args = None;
    slurm.cores_per_node = Some(2);
    slurm.poll_interval_s = Some(0.3);
    slurm.time_limit = Some("5".into());
    slurm.autolb = Some(autolb_path());
    // (no single quotes: srun's MPMD file cannot hold them inside a quoted word)
    let check_inputs = r#"grep -q "NPROC= 1," fort.4 && grep -q "jpnij = 1" namelist_cfg && grep -A1 NLOGPRT namcouple | grep -q "1 -1" && test -L inputs/big.grb && echo NEMO rank $SLURM_PROCID checked the inputs"#;
    slurm.multi_prog = Some(MultiProgSettings {
        programs: [
            (
                "IFS".to_string(),
                [
                    autolb_path().display().to_string().as_str(),
                    "simulate",
                    "--comp",
                    "ATMIFS={nproc.IFS}",
                    "--comp",
                    "oceanx={nproc.NEMO}",
                    "--out",
                    ".",
                    "--steps",
                    "6",
                ]
                .map(String::from)
                .to_vec(),
            ),
            (
                "NEMO".to_string(),
                vec!["sh".into(), "-c".into(), check_inputs.into()],
            ),
        ]
        .into(),
        extras: Vec::new(),
    });
    let components = file
        .components
        .iter()
        .map(|c| ComponentContext {
            name: c.name.clone(),
            timing_name: c.timing_name().to_string(),
            curve: Some(
                autolb::curve::Curve::load(c.name.clone(), &assets.join(c.curve.as_ref().unwrap()))
                    .unwrap(),
            ),
            threads: 1,
        })
        .collect();
    let ctx = ExecutorContext {
        base_dir: assets.clone(),
        components,
        period_s: file.period_s,
        standalone: false,
        layout: None,
    };
    let campaign = work.path().join("campaign");
    let mut ex = SlurmExecutor::from_context(&cfg, &campaign, &ctx).unwrap();
    let run = request(&campaign, "i00-t00-r1", 1, 1);
    let ticket = ex.start(&run).expect("sbatch");
    let seen = wait_final(&mut ex, &run, &ticket, Duration::from_secs(240));
    let output = job_output(&run.run_dir);
    assert_eq!(
        seen.last(),
        Some(&RunStatus::Finished { exit_code: 0 }),
        "{seen:?}\n{output}"
    );
    assert!(
        output.contains("IFS 1, NEMO 1, 0 extra PEs, 2 tasks on 1 nodes"),
        "{output}"
    );
    assert!(
        output.contains("NEMO rank 1 checked the inputs"),
        "{output}"
    );
    let reading = read(&run.run_dir, &ReadOptions::default()).expect("timing output");
    let Reading::Measured(m) = reading else {
        panic!("{reading:?}");
    };
    assert!(m.component("ATMIFS").is_some() && m.component("oceanx").is_some());
    assert!(m.partial.is_none(), "{:?}", m.partial);
}
