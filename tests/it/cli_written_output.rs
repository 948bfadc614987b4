//! Output that means what it says: an EC-Earth4 fragment whose keys a YAML reader reads back as
//! the component names, lines whose control characters show escaped whatever a directory is
//! named, and `--help` / `--version` that fail when their text cannot be written.

use std::path::Path;

use serde_json::Value;

use crate::common::{autolb, CampaignToml};

fn curve(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/curves")
        .join(name)
        .display()
        .to_string()
}

fn predict(names: [&str; 2], extra: &[&str]) -> std::process::Output {
    autolb()
        .arg("predict")
        .arg("--curve")
        .arg(format!("{}={}", names[0], curve("mn4_sr_reduced_ifs.csv")))
        .arg("--curve")
        .arg(format!("{}={}", names[1], curve("mn4_sr_reduced_nemo.csv")))
        .args(["--max-nproc", "600"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn fragment_keys_read_back_as_the_component_names() {
    for names in [
        ["1_000", "yes"],
        ["on", "0x1F"],
        ["1e3", "null"],
        ["OIFS", "n"],
    ] {
        let out = predict(names, &["--emit", "ecearth4"]);
        assert!(
            out.status.success(),
            "{names:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let yaml = String::from_utf8(out.stdout).unwrap();
        let json = predict(names, &["--json"]);
        let json: Value = serde_json::from_slice(&json.stdout).unwrap();
        let best = &json["top"][0]["nproc"];
        // Parsed back, `job` holds `launch` and one string key per component, in order, each
        // with the prediction's ranks.
        let back: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
        let job = back["job"].as_mapping().unwrap();
        let keys: Vec<&str> = job
            .keys()
            .map(|k| k.as_str().expect("a string key"))
            .collect();
        let wanted: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        assert_eq!(keys[0], "launch");
        assert_eq!(
            keys[1..],
            wanted.iter().map(String::as_str).collect::<Vec<_>>()[..]
        );
        for (name, key) in names.iter().zip(&wanted) {
            assert_eq!(
                job[key.as_str()]["ntasks"].as_u64(),
                best[*name].as_u64(),
                "{name}: {yaml}"
            );
            // A YAML 1.1 reader (PyYAML, as EC-Earth4's ScriptEngine) takes a plain `1_000`
            // for 1000 and `yes`, `on`, `n` for booleans: every key not starting with a letter,
            // and those words, are quoted.
            let plain = format!("\n  {key}:\n");
            let risky = !key.starts_with(|c: char| c.is_ascii_alphabetic())
                || ["yes", "on", "null", "n"].contains(&key.as_str());
            assert_eq!(!yaml.contains(&plain), risky, "{key}: {yaml}");
        }
    }
}

#[test]
fn names_that_are_one_yaml_key_are_refused_naming_both() {
    let out = predict(["IFS", "ifs"], &["--emit", "ecearth4"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("\"IFS\" and \"ifs\" would both be written as the key \"ifs\""),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// A directory name with a colour escape, a newline and a bell.
const HOSTILE: &str = "x\u{1b}[31my\nz\u{7}";
/// The same name as every line must show it.
const SHOWN: &str = "x\\x1b[31my\\nz\\x07";

/// Output with no control character but line ends and tabs.
fn assert_tame(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what}: a raw control character in {text:?}"
    );
}

/// `autolb campaign ARGS DIR [--config FILE]`: its exit code, stdout and stderr, both streams
/// checked for raw control characters.
fn campaign(args: &[&str], dir: &Path, file: Option<&Path>) -> (Option<i32>, String, String) {
    let mut cmd = autolb();
    cmd.arg("campaign").args(args).arg(dir);
    if let Some(file) = file {
        cmd.arg("--config").arg(file);
    }
    let out = cmd.output().unwrap();
    let what = args.join(" ");
    assert_tame(&what, &out.stdout);
    assert_tame(&format!("{what} (stderr)"), &out.stderr);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_directory_named_with_escapes_prints_them_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let file = CampaignToml::default()
        .set("repetitions", 1)
        .write(tmp.path(), "c.toml");
    let dir = tmp.path().join(HOSTILE);
    let shown = tmp.path().join(SHOWN).display().to_string();
    let (code, text, err) = campaign(&["init"], &dir, Some(&file));
    assert_eq!(code, Some(0), "{err}");
    for line in [
        format!("created campaign {shown}"),
        format!("next: autolb campaign next {shown}"),
    ] {
        assert!(text.contains(&line), "{line} not in {text}");
    }
    let (code, text, err) = campaign(&["next"], &dir, None);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        text.lines().count() >= 1 && text.lines().all(|l| l.contains(SHOWN)),
        "{text}"
    );
    let (code, _, err) = campaign(&["status"], &dir, None);
    assert_eq!(code, Some(0), "{err}");
    // An error naming the directory: one line, the name escaped.
    let (code, _, err) = campaign(&["init"], &dir, Some(&file));
    assert_eq!(code, Some(2));
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(SHOWN), "{err}");
    // `next --bash` is for a shell to evaluate: in a pipe the name stays its bytes.
    let out = autolb()
        .args(["campaign", "next", "--bash"])
        .arg(&dir)
        .stdout_ok();
    assert!(out.contains(HOSTILE));
}

#[test]
fn help_and_version_fail_when_their_text_cannot_be_written() {
    for flag in ["--help", "--version", "-h", "-V"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = autolb().arg(flag).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("No space left on device"), "{flag}: {err}");
        // Written: exit 0.
        let out = autolb().arg(flag).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{flag}");
    }
    let out = autolb()
        .args(["campaign", "--help"])
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
