//! Campaign files for synthetic cases ([`crate::sim::synthetic`]): a cold start in one call,
//! for tests and benchmarks that compare pipelines on cases whose truth is known.

use std::path::Path;

use super::{CampaignFile, ComponentEntry, Strategy};
use crate::executor::{ExecutorConfig, ExecutorKind};
use crate::sim::synthetic::SyntheticCase;
use crate::sim::SimError;

impl CampaignFile {
    /// A cold start on `case`: `strategy = "guided"`, every component over its standalone
    /// curve's PE range and without a curve, `max_nproc`, the `[original]` configuration (PEs in
    /// component order), and the `sim` executor running the case's true coupled-mode curves,
    /// which are written into `dir` ([`SyntheticCase::write_curves`]). Everything else keeps
    /// its default; set fields (`step`, `minimum_step`, `scaling`, the executor's `jobs` or sim
    /// settings) before `campaign::init`.
    pub fn synthetic_cold_start(
        case: &SyntheticCase,
        dir: &Path,
        max_nproc: u32,
        original: &[u32],
    ) -> Result<CampaignFile, SimError> {
        case.write_curves(dir)?;
        let names = case.names();
        Ok(CampaignFile {
            max_nproc: Some(max_nproc),
            strategy: Some(Strategy::Guided),
            components: case
                .components
                .iter()
                .map(|c| ComponentEntry {
                    name: c.name.clone(),
                    curve: None,
                    allowed: None,
                    min_nproc: Some(c.standalone.first_nproc()),
                    max_nproc: Some(c.standalone.last_nproc()),
                    timing_name: None,
                    resource: None,
                    pinned: None,
                    nproc: None,
                    threads: None,
                })
                .collect(),
            original: Some(names.into_iter().zip(original.iter().copied()).collect()),
            executor: Some(ExecutorConfig {
                kind: ExecutorKind::Sim,
                command: None,
                timeout_s: None,
                jobs: Some(4),
                retries: None,
                sim: Some(case.sim_settings(dir)),
                slurm: None,
            }),
            ..CampaignFile::default()
        })
    }
}
