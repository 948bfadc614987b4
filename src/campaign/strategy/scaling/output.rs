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
use crate::curve::Curve;

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
        let mut text = curve_csv(name, points, scaling.design);
        if comp.threads > 1 {
            // Its counts are the campaign's, cores at its one thread count: a reader taking
            // the file as a curve must not read them as pure-MPI ranks.
            let header = text.find('\n').map_or(text.len(), |k| k + 1);
            text.insert_str(
                header,
                &format!(
                    "# nproc counts cores: MPI ranks x {} OpenMP threads per rank\n",
                    comp.threads
                ),
            );
        }
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

/// The curve component `c` measured, read from the state alone: the text
/// [`write_curves`] writes read back, so every view predicts from the same numbers whether the
/// file is there, stale or edited by hand. `None` for a campaign that does not measure its
/// curves and while the component has fewer than two measured counts.
pub fn measured_curve(state: &State, c: usize) -> Option<Curve> {
    let scaling = state.settings.scaling.as_ref()?;
    let comp = state.components.get(c)?;
    let all = curves(state);
    let (name, points) = all.get(c)?;
    if points.len() < 2 {
        return None;
    }
    let text = curve_csv(name, points, scaling.design);
    Curve::from_csv_str(name.clone(), &comp.curve.display().to_string(), &text).ok()
}

/// A note for each curve file changed since the state was saved that disagrees with the curve
/// the state measured (a count one has and the other has not, or another SYPD at a count),
/// naming both: views predict from the state ([`measured_curve`]), so a hand-edited file
/// changes nothing, and says so.
pub fn curve_file_notes(state: &State, dir: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    for (c, comp) in state.components.iter().enumerate() {
        let Some(measured) = measured_curve(state, c) else {
            continue;
        };
        let path = dir.join(&comp.curve);
        // A file older than the state's last save is one its driver is about to write again
        // (it saves the state first), and a missing one is written then too: only a file
        // changed since the state was saved is someone else's.
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        match (
            modified(&path),
            modified(&dir.join(crate::campaign::state::STATE_FILE)),
        ) {
            (None, _) => continue,
            (Some(file), Some(saved)) if file < saved => continue,
            _ => {}
        }
        let differences = match Curve::load(comp.name.clone(), &path) {
            Ok(file) => curve_differences(&file, &measured),
            Err(e) => vec![format!("it cannot be read ({e})")],
        };
        if differences.is_empty() {
            continue;
        }
        notes.push(format!(
            "{} disagrees with the campaign's state: {}; the curve the state measured is used",
            comp.curve.display(),
            differences.join(", ")
        ));
    }
    notes
}

/// Where the file's curve differs from the measured one, in words: `at 48 PEs the file has
/// 999 SYPD, the state 3.2`; `the file has 12 PEs, the state has not`.
fn curve_differences(file: &Curve, measured: &Curve) -> Vec<String> {
    // Both were written with six decimals; anything past that is the file's own.
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    let mut out = Vec::new();
    for m in measured.points() {
        match file.points().iter().find(|f| f.nproc == m.nproc) {
            Some(f) if same(f.sypd, m.sypd) => {}
            Some(f) => out.push(format!(
                "at {} PEs the file has {} SYPD, the state {}",
                m.nproc,
                sypd_text(f.sypd),
                sypd_text(m.sypd)
            )),
            None => out.push(format!(
                "the state measured {} PEs, the file has no row for it",
                m.nproc
            )),
        }
    }
    for f in file.points() {
        if !measured.points().iter().any(|m| m.nproc == f.nproc) {
            out.push(format!(
                "the file has {} PEs ({} SYPD), which the state never measured",
                f.nproc,
                sypd_text(f.sypd)
            ));
        }
    }
    out
}

/// A SYPD as a note writes it: two decimals, or its exponent when far out of range.
fn sypd_text(sypd: f64) -> String {
    if sypd.abs() >= 1e6 {
        format!("{sypd:e}")
    } else {
        format!("{sypd:.2}")
    }
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
