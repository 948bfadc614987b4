//! `y`: the configuration under the matrix cursor as an EC-Earth4 job fragment (the het-job
//! form `autolb predict --emit ecearth4` writes), so what the user is looking at becomes
//! something to paste into the experiment YAML. The text is made here, from the state; the
//! event loop writes it ([`Effect::WriteText`]).

use autolb::predict::emit_ecearth4::hetjob_fragment;

use std::path::Path;

use super::effect::Effect;
use super::ranking::Ranking;

/// The file the fragment goes to, in the app's output directory.
pub const ECEARTH4_FILE: &str = "ecearth4-job.yml";

/// The effect writing the configuration at `cursor` (the matrix's) as an EC-Earth4 fragment
/// into `out_dir`, or why it cannot be written (a component name YAML would read as a
/// boolean).
pub fn ecearth4(r: &Ranking, cursor: &[usize], out_dir: &Path) -> Result<Effect, String> {
    let config = r.problem.score(cursor, r.tts_w());
    let names = r.problem.names();
    let cores_per_node = r
        .problem
        .cost_model
        .machine
        .as_ref()
        .map(|m| m.cores_per_node);
    let heading = format!(
        "autolb tui: the configuration under the matrix cursor by the {} model",
        r.model
    );
    let text = hetjob_fragment(&names, &config, cores_per_node, r.tts_w(), &heading)
        .map_err(|e| format!("EC-Earth4 fragment not written: {e}"))?;
    Ok(Effect::WriteText {
        path: out_dir.join(ECEARTH4_FILE),
        text,
        what: format!(
            "the EC-Earth4 job fragment of {}",
            r.describe_scored(&config)
        ),
    })
}
