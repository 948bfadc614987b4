//! The built-in example: EC-Earth3 standard resolution (CMIP6 set-up) on MareNostrum4.
//!
//! The curves are compiled into the binary so `autolb` works from any directory with nothing
//! installed next to it. Source and licence: `assets/curves/SOURCE.md`.
//!
//! So is every other file under `assets/` that the guide's examples name (the campaign files,
//! the curves, the Slurm, Autosubmit and Cylc set-ups): an installed binary has no repository
//! beside it, and [`write_assets`] puts them back (`autolb example --out DIR`), laid out as in
//! the repository, so that an example that names `assets/...` works from that directory.

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

/// One file of the repository's `assets/` directory, compiled in.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Its path below `assets/`, with `/` separators.
    pub path: &'static str,
    /// Its contents, byte for byte.
    pub bytes: &'static [u8],
    /// Whether it is a script to run (written with mode 0755, else 0644).
    pub executable: bool,
}

/// The directory the assets are written under, as in the repository: examples name
/// `assets/...` relative to it.
pub const ASSETS_DIR: &str = "assets";

macro_rules! asset {
    ($path:literal, $executable:literal) => {
        Asset {
            path: $path,
            bytes: include_bytes!(concat!("../assets/", $path)),
            executable: $executable,
        }
    };
}

/// Every file under `assets/` except the pictures the docs show (`*.png`), which no example
/// reads. A unit test fails when a file is added there and not here.
pub const ASSETS: &[Asset] = &[
    asset!("autosubmit/ecearth3-slurm/campaign.toml", false),
    asset!("autosubmit/ecearth3-slurm/conf/autolb.yml", false),
    asset!("autosubmit/ecearth3-slurm/conf/autosubmit.yml", false),
    asset!("autosubmit/ecearth3-slurm/conf/expdef.yml", false),
    asset!("autosubmit/ecearth3-slurm/conf/jobs.yml", false),
    asset!("autosubmit/ecearth3-slurm/conf/platforms.yml", false),
    asset!("autosubmit/ecearth3-slurm/ece3-run.sh", true),
    asset!("autosubmit/ecearth3-slurm/templates/init.sh", false),
    asset!("autosubmit/ecearth3-slurm/templates/report.sh", false),
    asset!("autosubmit/ecearth3-slurm/templates/run.sh", false),
    asset!("autosubmit/ecearth3-slurm/templates/sync.sh", false),
    asset!("autosubmit/fill-conf.sh", false),
    asset!("autosubmit/local/campaign.toml", false),
    asset!("autosubmit/local/conf/autolb.yml", false),
    asset!("autosubmit/local/conf/autosubmit.yml", false),
    asset!("autosubmit/local/conf/expdef.yml", false),
    asset!("autosubmit/local/conf/jobs.yml", false),
    asset!("autosubmit/local/conf/platforms.yml", false),
    asset!("autosubmit/local/run-local.sh", true),
    asset!("autosubmit/local/templates/init.sh", false),
    asset!("autosubmit/local/templates/report.sh", false),
    asset!("autosubmit/local/templates/run.sh", false),
    asset!("autosubmit/local/templates/sync.sh", false),
    asset!("campaign-example.toml", false),
    asset!("curves/SOURCE.md", false),
    asset!("curves/cca/cca_hr_ifs.csv", false),
    asset!("curves/cca/cca_hr_nemo.csv", false),
    asset!("curves/cca/cca_sr_ifs.csv", false),
    asset!("curves/cca/cca_sr_nemo.csv", false),
    asset!("curves/mn4_eucp_hr_ifs.csv", false),
    asset!("curves/mn4_hr_dcpp_ifs.csv", false),
    asset!("curves/mn4_hr_dcpp_nemo.csv", false),
    asset!("curves/mn4_hr_ifs.csv", false),
    asset!("curves/mn4_hr_nemo.csv", false),
    asset!("curves/mn4_sr_cmip6_ifs.csv", false),
    asset!("curves/mn4_sr_cmip6_nemo.csv", false),
    asset!("curves/mn4_sr_ifs.csv", false),
    asset!("curves/mn4_sr_nemo.csv", false),
    asset!("curves/mn4_sr_reduced_ifs.csv", false),
    asset!("curves/mn4_sr_reduced_nemo.csv", false),
    asset!("curves/mn4_sr_reduced_nemo_pisces.csv", false),
    asset!("cylc/bin/stand-in-model", true),
    asset!("cylc/campaign.toml", false),
    asset!("cylc/flow.cylc", false),
    asset!("demo-campaign.toml", false),
    asset!("examples/cesm/atm.csv", false),
    asset!("examples/cesm/balance.toml", false),
    asset!("examples/cesm/campaign.toml", false),
    asset!("examples/cesm/ice.csv", false),
    asset!("examples/cesm/lnd.csv", false),
    asset!("examples/cesm/ocn-truth.csv", false),
    asset!("examples/cesm/ocn.csv", false),
    asset!("examples/cpu_gpu/atm_cpu.csv", false),
    asset!("examples/cpu_gpu/campaign.toml", false),
    asset!("examples/cpu_gpu/oce_gpu.csv", false),
    asset!("examples/cpu_gpu/truth_atm_cpu.csv", false),
    asset!("examples/cpu_gpu/truth_oce_gpu.csv", false),
    asset!("examples/ecearth4-mn5/campaign-sim.toml", false),
    asset!("examples/ecearth4-mn5/cold-start-sim.toml", false),
    asset!("examples/ecearth4-mn5/campaign.toml", false),
    asset!("examples/ecearth4-mn5/nemo.csv", false),
    asset!("examples/ecearth4-mn5/nemo_ocean.output", false),
    asset!("examples/ecearth4-mn5/oifs.csv", false),
    asset!("machine-cmip6.toml", false),
    asset!("nemo_orca1_allowed_nproc.txt", false),
    asset!("slurm/campaign.toml", false),
    asset!("slurm/ecearth3-job.tmpl", false),
];

/// Why [`write_assets`] wrote nothing, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum WriteAssetsError {
    /// A file it would write is there already, and overwriting was not asked for.
    #[error("{} exists", path.display())]
    Exists {
        /// The first such file.
        path: PathBuf,
        /// How many of the files it would write exist, this one included.
        count: usize,
    },
    /// A directory or file could not be made.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The directory or file that could not be made (files written before it stay).
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// Writes every [`ASSETS`] file to `dir/assets/...` and returns the paths written, in table
/// order. Unless `overwrite`, nothing is written when any of them exists (a symlink counts,
/// even a dangling one): the user's edited copy of an example is not lost to a second run.
pub fn write_assets(dir: &Path, overwrite: bool) -> Result<Vec<PathBuf>, WriteAssetsError> {
    use std::os::unix::fs::PermissionsExt;
    let targets: Vec<PathBuf> = ASSETS
        .iter()
        .map(|a| dir.join(ASSETS_DIR).join(a.path))
        .collect();
    if !overwrite {
        let existing: Vec<&PathBuf> = targets
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        if let Some(first) = existing.first() {
            return Err(WriteAssetsError::Exists {
                path: (*first).clone(),
                count: existing.len(),
            });
        }
    }
    for (asset, path) in ASSETS.iter().zip(&targets) {
        let io = |source| WriteAssetsError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| WriteAssetsError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        crate::fsutil::write_atomically(path, asset.bytes).map_err(io)?;
        let mode = if asset.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_curves_load() {
        let inputs = super::inputs();
        assert_eq!(inputs[0].curve.as_ref().unwrap().points().len(), 12);
        assert_eq!(inputs[1].curve.as_ref().unwrap().points().len(), 10);
    }

    /// Every file under `assets/` with its path relative to it, pictures left out.
    fn files_on_disk() -> Vec<(String, bool)> {
        use std::os::unix::fs::PermissionsExt;
        fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, bool)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else if path.extension().is_none_or(|e| e != "png") {
                    let relative = path.strip_prefix(root).unwrap().to_str().unwrap();
                    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                    out.push((relative.replace('\\', "/"), mode & 0o111 != 0));
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(ASSETS_DIR);
        let mut out = Vec::new();
        walk(&root, &root, &mut out);
        out.sort();
        out
    }

    #[test]
    fn the_table_lists_every_asset_in_the_repository_and_its_mode() {
        let mut table: Vec<(String, bool)> = ASSETS
            .iter()
            .map(|a| (a.path.to_string(), a.executable))
            .collect();
        table.sort();
        assert_eq!(table, files_on_disk(), "update ASSETS in src/example.rs");
    }

    #[test]
    fn assets_are_written_once_then_refused_then_overwritten_when_asked() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let written = write_assets(tmp.path(), false).unwrap();
        assert_eq!(written.len(), ASSETS.len());
        for (asset, path) in ASSETS.iter().zip(&written) {
            assert_eq!(
                std::fs::read(path).unwrap(),
                asset.bytes,
                "{}",
                path.display()
            );
            let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, if asset.executable { 0o755 } else { 0o644 });
        }

        let edited = tmp.path().join("assets/demo-campaign.toml");
        std::fs::write(&edited, "edited").unwrap();
        std::fs::remove_file(tmp.path().join("assets/machine-cmip6.toml")).unwrap();
        match write_assets(tmp.path(), false) {
            Err(WriteAssetsError::Exists { path, count }) => {
                assert_eq!(path, written[0]);
                assert_eq!(count, ASSETS.len() - 1);
            }
            other => panic!("expected Exists, got {other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "edited");
        assert!(!tmp.path().join("assets/machine-cmip6.toml").exists());

        write_assets(tmp.path(), true).unwrap();
        assert_eq!(
            std::fs::read_to_string(&edited).unwrap(),
            std::fs::read_to_string("assets/demo-campaign.toml").unwrap()
        );
        assert!(tmp.path().join("assets/machine-cmip6.toml").exists());
    }

    #[test]
    fn a_dangling_symlink_counts_as_existing() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join(ASSETS_DIR).join(ASSETS[3].path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &target).unwrap();
        match write_assets(tmp.path(), false) {
            Err(WriteAssetsError::Exists { path, count: 1 }) => assert_eq!(path, target),
            other => panic!("expected Exists, got {other:?}"),
        }
    }
}
