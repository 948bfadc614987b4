//! The report as a person sees it: rendered by a real headless Chromium, screenshotted, and
//! checked for console errors, SVGs of non-empty size and the recommendation's text.
//!
//! The report itself carries no script. To measure the drawn SVGs, the test renders a copy with
//! one inline probe script that writes every SVG's on-screen size into the DOM, then reads the
//! DOM back with `--dump-dom`. Console messages come from `--enable-logging=stderr`; a first
//! check proves that channel reports a `console.error`, so a silent browser cannot pass.
//!
//! Skips without `chromium` in PATH; AUTOLB_REQUIRE_CHROMIUM=1 (set by .ci/run) makes it fail.
//! AUTOLB_UPDATE_SCREENSHOT=1 also copies the demo report's screenshot to
//! assets/report-demo.png (the README's picture).

use crate::common;
use crate::common::autolb;

use std::path::{Path, PathBuf};

use autolb::report::source;

const PROBE: &str = r#"<script>
document.addEventListener('DOMContentLoaded', function () {
  var sizes = Array.prototype.map.call(document.querySelectorAll('svg'), function (s) {
    var r = s.getBoundingClientRect();
    return Math.round(r.width) + 'x' + Math.round(r.height);
  });
  var pre = document.createElement('pre');
  pre.id = 'autolb-probe';
  pre.textContent = 'svgs=' + sizes.join(',') + ';height=' + document.documentElement.scrollHeight + ';end';
  document.body.appendChild(pre);
});
</script>
"#;

/// What the probe saw.
struct Probe {
    svg_sizes: Vec<(u32, u32)>,
    page_height: u32,
    dom: String,
    console: Vec<String>,
}

fn probe(chromium: &Path, report: &Path) -> Probe {
    let html = std::fs::read_to_string(report).unwrap();
    let copy = report.with_extension("probe.html");
    std::fs::write(&copy, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let r = common::run_chromium(
        chromium,
        &copy,
        &["--dump-dom".into(), "--window-size=1000,1200".into()],
    );
    let dom = r.stdout;
    let marker = r#"<pre id="autolb-probe">"#;
    let start = dom
        .find(marker)
        .unwrap_or_else(|| panic!("no probe output in the DOM:\n{dom}\n{}", r.stderr));
    let text = &dom[start + marker.len()..];
    let text = &text[..text.find(";end").unwrap()];
    let (svgs, height) = text.split_once(";height=").unwrap();
    let svg_sizes = svgs
        .trim_start_matches("svgs=")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (w, h) = s.split_once('x').unwrap();
            (w.parse().unwrap(), h.parse().unwrap())
        })
        .collect();
    Probe {
        svg_sizes,
        page_height: height.parse().unwrap(),
        dom,
        console: common::console_lines(&r.stderr),
    }
}

/// Screenshots the script-free report at 1000 px wide and its full height; returns the PNG and
/// the console lines of that run.
fn screenshot(chromium: &Path, report: &Path, height: u32, png: &Path) -> (Vec<u8>, Vec<String>) {
    let r = common::run_chromium(
        chromium,
        report,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size=1000,{height}"),
        ],
    );
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("no screenshot ({e}): {}", r.stderr));
    (bytes, common::console_lines(&r.stderr))
}

/// The checks every report must pass in the browser.
fn check_report(chromium: &Path, report: &Path, expect: &[&str]) -> (Vec<u8>, Probe) {
    let html = std::fs::read_to_string(report).unwrap();
    assert!(
        !html.contains("<script"),
        "the report must stay script-free"
    );
    let external = html
        .match_indices("http")
        .filter(|(i, _)| !html[*i..].starts_with("http://www.w3.org/2000/svg"))
        .count();
    assert_eq!(external, 0, "the report must not link anywhere");
    let p = probe(chromium, report);
    assert!(p.console.is_empty(), "console messages: {:#?}", p.console);
    let svgs = html.matches("<svg ").count();
    assert!(svgs > 0);
    assert_eq!(p.svg_sizes.len(), svgs, "{:?}", p.svg_sizes);
    for (i, (w, h)) in p.svg_sizes.iter().enumerate() {
        assert!(*w > 100 && *h > 100, "SVG {i} is drawn {w}x{h}");
    }
    for text in expect {
        assert!(p.dom.contains(text), "{text:?} is not on the page");
    }
    let png_path = report.with_extension("png");
    let height = p.page_height.clamp(600, 12_000);
    let (png, console) = screenshot(chromium, report, height, &png_path);
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert_eq!(common::png_size(&png), (1000, height));
    // A blank page compresses to a few kB; figures and text take far more.
    assert!(png.len() > 40_000, "screenshot is only {} bytes", png.len());
    (png, p)
}

#[test]
fn the_console_channel_reports_errors() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><script>console.error('autolb-probe-error')</script></body></html>",
    )
    .unwrap();
    let r = common::run_chromium(&chromium, &page, &["--dump-dom".into()]);
    let console = common::console_lines(&r.stderr);
    assert!(
        console.iter().any(|l| l.contains("autolb-probe-error")),
        "a console.error was not seen; stderr:\n{}",
        r.stderr
    );
}

#[test]
fn the_demo_campaigns_report_renders_with_every_figure_and_the_recommendation() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    common::demo_campaign(&dir);
    let report = tmp.path().join("report.html");
    autolb()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(&report)
        .stdout_ok();
    let (png, p) = check_report(
        &chromium,
        &report,
        &[
            "The recommended configuration is IFS",
            "Against the original IFS 384 + NEMO 242",
            "simulated years",
        ],
    );
    // Two curve figures, the matrix, the speed/cost front, the campaign.
    assert_eq!(p.svg_sizes.len(), 5);
    // Printable: Chromium prints it to a PDF of several A4/Letter pages.
    let pdf = tmp.path().join("report.pdf");
    common::run_chromium(
        &chromium,
        &report,
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
        ],
    );
    let bytes = std::fs::read(&pdf).expect("a PDF");
    assert!(bytes.starts_with(b"%PDF-"));
    let pages = bytes.windows(11).filter(|w| w == b"/Type /Page").count()
        - bytes.windows(12).filter(|w| w == b"/Type /Pages").count();
    assert!((2..=12).contains(&pages), "{pages} pages");
    if std::env::var("AUTOLB_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let dest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/report-demo.png");
        std::fs::write(&dest, &png).unwrap();
        eprintln!("wrote {}", dest.display());
    }
}

#[test]
fn a_large_campaigns_report_renders_too() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let (inputs, settings, status) = common::synthetic_campaign(5, 10, 10, 2);
    let r = common::synthetic_report(&inputs, &settings, &status);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big.html");
    source::write_html(&r, &out).unwrap();
    let (_, p) = check_report(&chromium, &out, &["The recommended configuration is C0"]);
    // Five curve figures, the matrix, the speed/cost front, the campaign.
    assert_eq!(p.svg_sizes.len(), 8);
}

#[test]
fn a_prediction_reports_renders_without_a_campaign() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("prediction.html");
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-campaign.toml");
    autolb()
        .args(["report", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .stdout_ok();
    let (_, p) = check_report(
        &chromium,
        &out,
        &[
            "The predicted best configuration is IFS",
            "Against the original IFS 384 + NEMO 242",
        ],
    );
    // Two curve figures, the matrix, the speed/cost front.
    assert_eq!(p.svg_sizes.len(), 4);
}
