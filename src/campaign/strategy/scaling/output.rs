//! A scaling campaign's output: `DIR/curves/NAME.csv` per component, in the `nproc,SYPD`
//! format the curve reader takes ([`crate::curve`]), with `sd` and `runs` columns it ignores,
//! and a comment line saying how the curve was measured.
//!
//! Written atomically whenever the campaign state is saved after a run lands, so a kill at any
//! moment leaves the previous whole file or the new one; a file is only replaced when its
//! content changes, and a component with no measured count yet has no file.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::points::{points_of, pooled_noise};
use crate::campaign::state::State;
use crate::campaign::CampaignError;
use crate::config::ScalingDesign;

/// One measured point of a curve (`campaign status --json`'s `"curves"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The PE count.
    pub nproc: u32,
    /// Mean SYPD of the runs kept.
    pub sypd: f64,
    /// Standard deviation of the runs kept (0 with one run).
    pub sd: f64,
    /// Runs kept (outliers left out).
    pub runs: u32,
    /// Far below the curve through its neighbours though every run it may have agreed: a
    /// real feature of the curve (a dip), kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub feature: bool,
}

/// Every component's measured points, in component order: `(name, points)`; counts without a
/// measured run are left out.
pub fn curves(state: &State) -> Vec<(String, Vec<CurvePoint>)> {
    let noise = pooled_noise(state);
    state
        .components
        .iter()
        .enumerate()
        .map(|(c, comp)| {
            let points = points_of(state, c, noise)
                .into_iter()
                .filter(|p| p.runs > 0)
                .map(|p| CurvePoint {
                    nproc: p.nproc,
                    sypd: p.sypd,
                    sd: p.sd,
                    runs: p.runs,
                    feature: p.feature,
                })
                .collect();
            (comp.name.clone(), points)
        })
        .collect()
}

/// The mode a curve was measured in, as its file's comment and the report say it.
pub fn mode_words(design: ScalingDesign) -> &'static str {
    match design {
        ScalingDesign::Standalone => "standalone mode",
        ScalingDesign::Coupled => "coupled mode",
    }
}

/// The CSV text of one curve measured with `design`.
pub fn curve_csv(name: &str, points: &[CurvePoint], design: ScalingDesign) -> String {
    let how = match design {
        ScalingDesign::Standalone => "",
        ScalingDesign::Coupled => {
            " (each run coupled, the component's speed from its computing time, waiting left out)"
        }
    };
    let mut text = format!(
        "# {name}: measured in {} by an autolb scaling campaign{how}; SYPD is the mean \
         of the runs kept (outliers left out), sd their standard deviation\n\
         nproc,SYPD,sd,runs\n",
        mode_words(design)
    );
    // Six decimals: far below any run's noise, and the same text whether the numbers come
    // from a driver's memory or from the state read back (JSON may differ in the last bit).
    for p in points {
        text.push_str(&format!(
            "{},{:.6},{:.6},{}\n",
            p.nproc, p.sypd, p.sd, p.runs
        ));
    }
    text
}

/// Writes `DIR/curves/NAME.csv` of every component with a measured count (see the module
/// doc); does nothing for a campaign that does not measure its curves. A cold start writes
/// every coupled run's points, the balancing phase's too, for viewers.
pub fn write_curves(state: &State, dir: &Path) -> Result<(), CampaignError> {
    let Some(scaling) = state.settings.scaling.as_ref() else {
        return Ok(());
    };
    for ((name, points), comp) in curves(state).iter().zip(&state.components) {
        // A curve file is one the curve reader takes (two points at least): until then
        // `campaign status` shows the count, and `predict --curve` gets no half file.
        if points.len() < 2 {
            continue;
        }
        let path = dir.join(&comp.curve);
        let text = curve_csv(name, points, scaling.design);
        if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CampaignError::io(format!("cannot create {}", parent.display()), e))?;
        }
        crate::campaign::state::write_atomically(&path, text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_reader_takes_the_written_file_and_reads_past_sd_and_runs() {
        let points = vec![
            CurvePoint {
                nproc: 48,
                sypd: 2.5,
                sd: 0.01,
                runs: 3,
                feature: false,
            },
            CurvePoint {
                nproc: 96,
                sypd: 4.75,
                sd: 0.0,
                runs: 1,
                feature: true,
            },
        ];
        let text = curve_csv("IFS", &points, ScalingDesign::Standalone);
        assert!(
            text.starts_with("# IFS: measured in standalone mode"),
            "{text}"
        );
        let coupled = curve_csv("IFS", &points, ScalingDesign::Coupled);
        assert!(
            coupled.starts_with("# IFS: measured in coupled mode"),
            "{coupled}"
        );
        crate::curve::Curve::from_csv_str("IFS", "IFS.csv", &coupled).unwrap();
        let curve = crate::curve::Curve::from_csv_str("IFS", "IFS.csv", &text).unwrap();
        let read: Vec<(u32, f64)> = curve.points().iter().map(|p| (p.nproc, p.sypd)).collect();
        assert_eq!(read, vec![(48, 2.5), (96, 4.75)]);
    }
}
