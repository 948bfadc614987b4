//! The built-in example: EC-Earth3 standard resolution (CMIP6 set-up) on MareNostrum4.
//!
//! The curves are compiled into the binary so `autolb` works from any directory with nothing
//! installed next to it. Source and licence: `assets/curves/SOURCE.md`.

use std::path::{Path, PathBuf};

use crate::curve::Curve;
use crate::predict::{ComponentInput, Settings};

/// IFS (atmosphere) curve, `assets/curves/mn4_sr_cmip6_ifs.csv`.
pub const IFS_CURVE: &str = include_str!("../assets/curves/mn4_sr_cmip6_ifs.csv");
/// NEMO (ocean) curve, `assets/curves/mn4_sr_cmip6_nemo.csv`.
pub const NEMO_CURVE: &str = include_str!("../assets/curves/mn4_sr_cmip6_nemo.csv");
/// PE counts NEMO ORCA1 can run on.
pub const NEMO_ALLOWED: &str = include_str!("../assets/nemo_orca1_allowed_nproc.txt");

/// Component names as the user sees them, and as OASIS/LUCIA names them.
pub const COMPONENTS: [(&str, &str); 2] = [("IFS", "ATMIFS"), ("NEMO", "oceanx")];

/// The example's prediction settings: the paper's SR budget of 672 PEs (14 MN4 nodes).
pub fn settings() -> Settings {
    Settings {
        max_nproc: 672,
        step: 24,
        ..Settings::default()
    }
}

/// The example's curves as prediction inputs.
pub fn inputs() -> Vec<ComponentInput> {
    let ifs = Curve::from_csv_str("IFS", "built-in mn4_sr_cmip6_ifs.csv", IFS_CURVE)
        .expect("the bundled IFS curve is valid");
    let nemo = Curve::from_csv_str("NEMO", "built-in mn4_sr_cmip6_nemo.csv", NEMO_CURVE)
        .expect("the bundled NEMO curve is valid");
    vec![ComponentInput::new(ifs), ComponentInput::new(nemo)]
}

/// Writes the example curves into `dir` (for campaign files, whose curves are paths) and
/// returns their paths in component order.
pub fn write_curves(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut paths = Vec::new();
    for (name, text) in [
        ("mn4_sr_cmip6_ifs.csv", IFS_CURVE),
        ("mn4_sr_cmip6_nemo.csv", NEMO_CURVE),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bundled_curves_load() {
        let inputs = super::inputs();
        assert_eq!(inputs[0].curve.points().len(), 12);
        assert_eq!(inputs[1].curve.points().len(), 10);
    }
}
