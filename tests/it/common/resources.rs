//! The CPU+GPU worked example (assets/examples/cpu_gpu): its paths, and variants of its campaign
//! file for bad-input tests.

use std::path::{Path, PathBuf};

/// The example's directory.
pub fn cpu_gpu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/cpu_gpu")
}

/// The example's campaign file.
pub fn cpu_gpu_file() -> PathBuf {
    cpu_gpu_dir().join("campaign.toml")
}

/// Copies the example (campaign file and curves) into `dir`, replacing the first `from` of the
/// campaign file with `to` (which must be there), and returns the copy's campaign file.
pub fn cpu_gpu_variant(dir: &Path, from: &str, to: &str) -> PathBuf {
    for entry in std::fs::read_dir(cpu_gpu_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let file = dir.join("campaign.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(from), "the example has no {from:?}");
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    file
}
