//! The prediction on a layout tree: the placements ranked by fittingness and the speed/cores
//! front, from the components' curves.
//!
//! Each component's choices are its candidates as the side-by-side search builds them
//! ([`super::layout_choices`]: the same step, limits, allowed lists and thread counts), its
//! time at each the wall time of one simulated year, 86400 / SYPD. The tree combines them (the
//! slowest part of `|`, the sum of `;`), and cores are counted as CIME counts them. The ranking
//! ([`crate::layout::ranked`]) scores every kept placement with the same fittingness and
//! normalisation as the side-by-side prediction; the front ([`crate::layout::search`]) is the
//! fastest placement, then the fastest on fewer cores, and so on. Both are computed once; a new
//! TTS_w re-ranks in one pass ([`TreePrediction::top`]).

use super::{layout_choices, ComponentInput, Settings};
use crate::layout::ranked::{self, Choice, Ranking, Rated};
use crate::layout::search::{self, Best};
use crate::layout::Layout;

/// A layout tree's ranking and front.
#[derive(Debug)]
pub struct TreePrediction {
    /// The tree.
    pub layout: Layout,
    /// The settings it was made with (budget, extra PEs, TTS_w, top N).
    pub settings: Settings,
    /// Every kept placement and the normalisation of fittingness.
    pub ranking: Ranking,
    /// The speed/cores front, fastest first, at most `settings.top` rows.
    pub front: Vec<Best>,
    /// Whether some component may run more than one thread per task.
    pub threaded: bool,
}

impl TreePrediction {
    /// Builds the choices, ranks the placements and reads the front. Errors in one line naming
    /// the component or setting to change.
    pub fn new(
        layout: &Layout,
        inputs: &[ComponentInput],
        settings: &Settings,
    ) -> Result<TreePrediction, String> {
        if !(0.0..=1.0).contains(&settings.tts_w) {
            return Err(format!("tts_w = {} must be within 0 and 1", settings.tts_w));
        }
        let mut choices: Vec<(String, Vec<Choice>)> = Vec::new();
        for name in layout.components() {
            let Some(input) = inputs.iter().find(|c| c.name == name) else {
                return Err(format!(
                    "the layout names {name} but no component has that name; add a [[component]] table for it or remove it from the layout"
                ));
            };
            if input.curve.is_none() {
                return Err(format!(
                    "component {name} has no curve; a layout tree is ranked from curves only for now: give it curve = \"PATH\""
                ));
            }
            let list = layout_choices(input, settings).map_err(|e| e.to_string())?;
            choices.push((name.to_string(), list));
        }
        let of = |name: &str| {
            choices
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, l)| l.clone())
                .unwrap_or_default()
        };
        let ranking = ranked::rank(layout, settings.max_nproc, settings.extra_pes, &of)?;
        let front = search::front_threaded(layout, settings.max_nproc, 1, settings.top, &of)?;
        let threaded = choices.iter().any(|(_, l)| l.iter().any(|c| c.threads > 1));
        Ok(TreePrediction {
            threaded,
            layout: layout.clone(),
            settings: settings.clone(),
            ranking,
            front,
        })
    }

    /// The top N (`settings.top`) by fittingness at `tts_w`.
    pub fn top(&self, tts_w: f64) -> Vec<Rated> {
        self.ranking.top(tts_w, self.settings.top)
    }
}

impl From<&Rated> for Best {
    fn from(r: &Rated) -> Best {
        Best {
            run_s: r.run_s,
            width: r.width,
            cores: r.cores,
            placements: r.placements.clone(),
        }
    }
}
