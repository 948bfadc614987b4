//! A ready-made demo campaign: EC-Earth3 SR on the bundled curves, run by the stand-in model
//! (`assets/demo-campaign.toml`). The terminal app sets one up in a temporary directory and
//! drives it on a background thread.

use std::path::{Path, PathBuf};

use super::CampaignError;
use crate::config::CampaignFile;

/// The demo campaign file (paths relative to it: `curves/...`, the NEMO allowed list).
pub const DEMO_CAMPAIGN: &str = include_str!("../../assets/demo-campaign.toml");

/// Writes the demo's inputs into `dir`: the curves (`curves/`), the NEMO allowed list and the
/// campaign file, whose path it returns.
pub fn write_demo_inputs(dir: &Path) -> Result<PathBuf, CampaignError> {
    let io = |what: String| move |e| CampaignError::io(what, e);
    crate::example::write_curves(&dir.join("curves")).map_err(io(format!(
        "cannot write the demo curves into {}",
        dir.display()
    )))?;
    let allowed = dir.join("nemo_orca1_allowed_nproc.txt");
    std::fs::write(&allowed, crate::example::NEMO_ALLOWED)
        .map_err(io(format!("cannot write {}", allowed.display())))?;
    let file_path = dir.join("demo-campaign.toml");
    std::fs::write(&file_path, DEMO_CAMPAIGN)
        .map_err(io(format!("cannot write {}", file_path.display())))?;
    Ok(file_path)
}

/// Writes the demo's inputs into `dir` ([`write_demo_inputs`]) and creates the campaign in
/// `dir/campaign`, whose path it returns. `compression` (real seconds per modelled second;
/// `None` = the file's 0.01) sets how fast the stand-in model runs.
pub fn init_demo(dir: &Path, compression: Option<f64>) -> Result<PathBuf, CampaignError> {
    let file_path = write_demo_inputs(dir)?;
    let campaign = dir.join("campaign");
    init_demo_at(&campaign, &file_path, compression, false)?;
    Ok(campaign)
}

/// Creates the demo campaign in `campaign` from demo inputs written by [`write_demo_inputs`].
pub fn init_demo_at(
    campaign: &Path,
    file_path: &Path,
    compression: Option<f64>,
    force: bool,
) -> Result<(), CampaignError> {
    let mut file = CampaignFile::load(file_path)?;
    if let (Some(c), Some(executor)) = (compression, file.executor.as_mut()) {
        executor
            .sim
            .get_or_insert_with(Default::default)
            .compression = Some(c);
    }
    let base = file_path.parent().unwrap_or(Path::new("."));
    super::init(campaign, &file, base, force)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_initialises_with_the_predicted_tests_and_the_original() {
        let dir = tempfile::tempdir().unwrap();
        let campaign = init_demo(dir.path(), Some(0.0)).unwrap();
        let status = crate::campaign::status(&campaign).unwrap();
        assert_eq!(status.iterations.len(), 1);
        let tests = &status.iterations[0].tests;
        // top = 3 plus the original, each run once (guided: repetitions only near the best).
        assert_eq!(tests.len(), 4);
        assert_eq!(tests[3].origin, "original");
        assert_eq!(tests[3].nproc.get("IFS"), Some(&384));
        assert_eq!(status.strategy, crate::config::Strategy::Guided);
        assert!(tests.iter().all(|t| t.runs.len() == 1));
    }

    #[test]
    fn what_a_failed_or_killed_init_left_does_not_block_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let campaign = init_demo(dir.path(), Some(0.0)).unwrap();
        // A killed init: curves and the lock written, the state not yet, a temp file left.
        std::fs::remove_file(campaign.join(super::super::state::STATE_FILE)).unwrap();
        std::fs::write(campaign.join(".tmpAbC123"), "half").unwrap();
        let file = dir.path().join("demo-campaign.toml");
        init_demo_at(&campaign, &file, Some(0.0), false).unwrap();
        assert!(crate::campaign::status(&campaign).is_ok());
        // A real campaign still needs --force, and foreign files are never taken for leftovers.
        assert!(init_demo_at(&campaign, &file, Some(0.0), false).is_err());
        let other = dir.path().join("other");
        std::fs::create_dir_all(other.join("curves")).unwrap();
        std::fs::write(other.join("notes.txt"), "mine").unwrap();
        assert!(init_demo_at(&other, &file, Some(0.0), false).is_err());
    }

    /// The state's loader refuses a state file whose lists do not match its components.
    #[test]
    fn a_state_whose_lists_do_not_match_its_components_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let campaign = init_demo(dir.path(), Some(0.0)).unwrap();
        let mut state = crate::campaign::state::State::load(&campaign).unwrap();
        state.iterations[0].tests[0].nproc.push(48);
        state.save(&campaign).unwrap();
        let e = crate::campaign::state::State::load(&campaign)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 PE counts for 2 components"), "{e}");
    }
}
