//! The PNG pictures of the app in the README and the guide (`docs/src/images/NAME.png`) are made
//! by headless Chromium from their HTML sources, which the binary's `tui::picture_tests` keeps
//! equal to the app's screens. A PNG cannot be compared with the app (its pixels depend on the
//! browser and the fonts), so `docs/src/images/pictures.sha256`, as `sha256sum` writes it,
//! records the SHA-256 of each source and of the PNG made from it. This test checks the record
//! against the files, without Chromium: a source made again without its PNG fails here, naming
//! the PNG, and so does a PNG replaced by hand.
//!
//! AUTOLB_UPDATE_PICTURES=1 (`docs/pictures.sh` sets it) makes every PNG and writes the
//! record instead; that needs `chromium` in PATH. The window is the page's `<pre>` as the
//! browser lays it out, measured by a probe script in a copy of the page (as in
//! `report_browser`), and the pixels are doubled so text stays sharp on dense screens.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::common;

const RECORD: &str = "pictures.sha256";
const REGENERATE: &str = "bash docs/pictures.sh";
/// Device pixels per CSS pixel of the PNGs.
const SCALE: u32 = 2;

fn images() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/images")
}

/// The pictures' names (`NAME` of `NAME.html`), sorted.
fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(images())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".html").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

fn sha256(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let mut hex = String::new();
    for b in Sha256::digest(&bytes) {
        write!(hex, "{b:02x}").unwrap();
    }
    Some(hex)
}

/// The record's `(file name, hash)` lines.
fn parse(record: &str) -> Vec<(String, String)> {
    record
        .lines()
        .filter_map(|l| {
            let (hash, name) = l.split_once("  ")?;
            Some((name.to_string(), hash.to_string()))
        })
        .collect()
}

/// What is wrong with the record of the files in `dir`, one line per file.
fn stale(dir: &Path, record: &str, names: &[String]) -> Vec<String> {
    let recorded = parse(record);
    let hash_of = |file: &str| {
        recorded
            .iter()
            .find(|(n, _)| n == file)
            .map(|(_, h)| h.as_str())
    };
    let mut out = Vec::new();
    for name in names {
        let (html, png) = (format!("{name}.html"), format!("{name}.png"));
        let Some(png_hash) = sha256(&dir.join(&png)) else {
            out.push(format!("{png} is missing"));
            continue;
        };
        if hash_of(&png) != Some(png_hash.as_str()) {
            out.push(format!("{png} is not the PNG the script made"));
        } else if hash_of(&html) != sha256(&dir.join(&html)).as_deref() {
            out.push(format!(
                "{png} was made from another {html} (the source changed since)"
            ));
        }
    }
    for (file, _) in &recorded {
        let name = file.rsplit_once('.').map_or(file.as_str(), |(n, _)| n);
        if !names.iter().any(|n| n == name) {
            out.push(format!("{RECORD} lists {file}, which is no picture's"));
        }
    }
    out
}

/// The record of the files in `dir` as they are now.
fn record_of(dir: &Path, names: &[String]) -> String {
    let mut out = String::new();
    for name in names {
        for file in [format!("{name}.html"), format!("{name}.png")] {
            let hash = sha256(&dir.join(&file)).unwrap_or_else(|| panic!("no {file}"));
            writeln!(out, "{hash}  {file}").unwrap();
        }
    }
    out
}

/// Measures the page's `<pre>` and how far 200 one-cell boxes (`screen_html`'s `g`, which
/// hold the symbols a fallback font draws) drift from 200 cells of text.
const PROBE: &str = r#"<script>
document.addEventListener('DOMContentLoaded', function () {
  var pre = document.querySelector('pre');
  var r = pre.getBoundingClientRect();
  var text = document.createElement('span');
  text.textContent = '0'.repeat(200);
  var boxes = document.createElement('span');
  boxes.innerHTML = '<span class="g">\u28ff</span>'.repeat(200);
  pre.appendChild(text);
  pre.appendChild(boxes);
  var drift = boxes.getBoundingClientRect().width - text.getBoundingClientRect().width;
  var p = document.createElement('p');
  p.id = 'autolb-probe';
  p.textContent = 'size=' + Math.ceil(r.right) + 'x' + Math.ceil(r.bottom) + ';drift=' + drift + ';end';
  document.body.appendChild(p);
});
</script>
"#;

/// The page's `<pre>` as laid out, in CSS pixels from the page's corner, and the boxes' drift
/// over 200 cells.
fn laid_out(chromium: &Path, html: &Path, tmp: &Path) -> ((u32, u32), f64) {
    let page = std::fs::read_to_string(html).unwrap();
    let copy = tmp.join("probe.html");
    std::fs::write(&copy, page.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let r = common::run_chromium(chromium, &copy, &["--dump-dom".into(), scale()]);
    let probe = r
        .stdout
        .split_once("<p id=\"autolb-probe\">size=")
        .and_then(|(_, rest)| rest.split_once(";end"))
        .map(|(probe, _)| probe.to_string())
        .unwrap_or_else(|| panic!("no probe output for {}:\n{}", html.display(), r.stderr));
    let (size, drift) = probe.split_once(";drift=").unwrap();
    let (w, h) = size.split_once('x').unwrap();
    (
        (w.parse().unwrap(), h.parse().unwrap()),
        drift.parse().unwrap(),
    )
}

fn scale() -> String {
    format!("--force-device-scale-factor={SCALE}")
}

/// Screenshots `NAME.html` into `NAME.png`, the window cut to the screen.
fn make_png(chromium: &Path, dir: &Path, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let html = dir.join(format!("{name}.html"));
    let ((w, h), drift) = laid_out(chromium, &html, tmp.path());
    assert!(
        drift.abs() < 0.25,
        "{name}: 200 one-cell boxes are {drift} px off 200 cells of text, so rows with Braille \
         would not line up: is the page drawn in DejaVu Sans Mono (apt-get install \
         fonts-dejavu-core)? Else FONT_PX in src/tui/screen_html.rs needs another size"
    );
    let shot = tmp.path().join("shot.png");
    let r = common::run_chromium(
        chromium,
        &html,
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size={w},{h}"),
            scale(),
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}): {}", r.stderr));
    assert_eq!(common::png_size(&png), (w * SCALE, h * SCALE), "{name}");
    std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
    eprintln!("wrote docs/src/images/{name}.png ({w}x{h} CSS pixels, boxes {drift:+.4} px off in 200 cells)");
}

#[test]
fn every_png_was_made_from_its_current_source() {
    let dir = images();
    let names = names();
    assert!(
        names.len() >= 3,
        "the pictures' sources are gone: {names:?}"
    );
    if std::env::var("AUTOLB_UPDATE_PICTURES").as_deref() == Ok("1") {
        let chromium = common::chromium().expect(
            "AUTOLB_UPDATE_PICTURES=1 makes the PNGs with chromium: apt-get install chromium",
        );
        for name in &names {
            make_png(&chromium, &dir, name);
        }
        std::fs::write(dir.join(RECORD), record_of(&dir, &names)).unwrap();
        return;
    }
    let record = std::fs::read_to_string(dir.join(RECORD)).unwrap_or_default();
    let stale = stale(&dir, &record, &names);
    assert!(
        stale.is_empty(),
        "in docs/src/images:\n{}\nMake the pictures again: `{REGENERATE}` (needs chromium)",
        stale.join("\n")
    );
}

#[test]
fn the_record_check_catches_a_changed_source_a_replaced_png_and_a_missing_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let names = vec!["a".to_string()];
    std::fs::write(dir.join("a.html"), "<pre>x</pre>").unwrap();
    std::fs::write(dir.join("a.png"), "png").unwrap();
    let record = record_of(dir, &names);
    assert!(record.ends_with("  a.png\n"), "{record}");
    assert!(stale(dir, &record, &names).is_empty());
    std::fs::write(dir.join("a.html"), "<pre>y</pre>").unwrap();
    assert_eq!(
        stale(dir, &record, &names),
        ["a.png was made from another a.html (the source changed since)"]
    );
    std::fs::write(dir.join("a.png"), "other").unwrap();
    assert_eq!(
        stale(dir, &record, &names),
        ["a.png is not the PNG the script made"]
    );
    std::fs::remove_file(dir.join("a.png")).unwrap();
    assert_eq!(stale(dir, &record, &names), ["a.png is missing"]);
    assert_eq!(
        stale(dir, &record, &[]),
        [
            "pictures.sha256 lists a.html, which is no picture's",
            "pictures.sha256 lists a.png, which is no picture's"
        ]
    );
}
