//! The pictures of the app in the README and the guide are the app's screens. Each picture's
//! source, `docs/src/images/NAME.html`, is drawn here on a `TestBackend` in true colour and
//! written out with [`super::screen_html`]; the test fails when a committed source is no longer
//! what the app draws, naming the file and the command that makes it again.
//!
//! `AUTOLB_UPDATE_PICTURES=1` rewrites the sources instead. `docs/pictures.sh` does that,
//! then turns each source into its PNG with headless Chromium and records which source each
//! PNG was made from (`tests/it/pictures.rs` checks that record, so a source made again without
//! its PNG fails too).

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyModifiers};

use super::app::App;
use super::event::Event;
use super::pane::Pane;
use super::screen_html;
use super::screen_tests::watched;
use super::tests::{app_with, draw, special};
use super::theme::ColorDepth;

/// One picture: the file name (without extension), the screen size and how to get the app
/// there.
struct Picture {
    name: &'static str,
    width: u16,
    height: u16,
    title: &'static str,
    app: fn() -> App,
}

const PICTURES: [Picture; 3] = [
    Picture {
        name: "watch-80x24",
        width: 80,
        height: 24,
        title: "autolb watching a campaign, 80x24",
        app: watching,
    },
    Picture {
        name: "watch-160x50",
        width: 160,
        height: 50,
        title: "autolb watching a campaign, 160x50",
        app: watching,
    },
    Picture {
        name: "trade-off-160x50",
        width: 160,
        height: 50,
        title: "autolb's speed/cost trade-off, 160x50",
        app: trade_off,
    },
];

const UPDATE: &str = "AUTOLB_UPDATE_PICTURES";
const REGENERATE: &str = "bash docs/pictures.sh";

/// The colour app watching the campaign of the screen tests.
fn watching() -> App {
    let mut app = app_with(ColorDepth::TrueColor, std::env::temp_dir());
    app.update(Event::Campaign(Box::new(watched())));
    app
}

/// The same with the trade-off pane focused (it takes the curves' place).
fn trade_off() -> App {
    let mut app = watching();
    while app.ui.focus != Pane::Front {
        app.update(special(KeyCode::Tab, KeyModifiers::NONE));
    }
    app
}

fn images() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/images")
}

/// The source of a picture as the app draws it now.
fn source(p: &Picture) -> String {
    let note = format!(
        "The app's screen at {}x{}, drawn by the test tui::picture_tests. \
         Do not edit: {REGENERATE} makes this file and its PNG again.",
        p.width, p.height
    );
    screen_html::page(&draw(&(p.app)(), p.width, p.height), p.title, &note)
}

/// Where two texts first differ, as `line N: committed ... / app ...`.
fn first_difference(committed: &str, now: &str) -> String {
    let mut a = committed.lines();
    let mut b = now.lines();
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => {
                return format!(
                    "line {n}:\n  committed: {}\n  app:       {}",
                    x.unwrap_or("(end of file)"),
                    y.unwrap_or("(end of file)")
                )
            }
        }
    }
    "only in line endings".into()
}

#[test]
fn the_picture_sources_are_the_apps_screens() {
    let update = std::env::var(UPDATE).as_deref() == Ok("1");
    let dir = images();
    let mut failures = Vec::new();
    for p in &PICTURES {
        let path = dir.join(format!("{}.html", p.name));
        let now = source(p);
        let committed = std::fs::read_to_string(&path).ok();
        if committed.as_deref() == Some(now.as_str()) {
            continue;
        }
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &now).unwrap();
            eprintln!("wrote {}", path.display());
            continue;
        }
        let why = match &committed {
            None => "is missing".to_string(),
            Some(c) => format!(
                "is not what the app draws now; first difference at {}",
                first_difference(c, &now)
            ),
        };
        failures.push(format!("docs/src/images/{}.html {why}", p.name));
    }
    assert!(
        failures.is_empty(),
        "{}\nIf the change to the screen is meant, make the pictures again: `{REGENERATE}` \
         (the sources alone: `{UPDATE}=1 cargo test --bin autolb tui::picture_tests`)",
        failures.join("\n")
    );
}

#[test]
fn every_source_in_the_images_is_a_picture_the_app_makes() {
    let names: Vec<String> = PICTURES
        .iter()
        .map(|p| format!("{}.html", p.name))
        .collect();
    for entry in std::fs::read_dir(images()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".html") {
            assert!(
                names.contains(&name),
                "docs/src/images/{name} is no picture of picture_tests::PICTURES: remove it \
                 (and its PNG and line in pictures.sha256), or add it there"
            );
        }
    }
}

#[test]
fn the_pictures_are_in_colour_and_show_what_the_guide_names() {
    let watch = source(&PICTURES[0]);
    for shown in [
        "Iterations: /scratch/camp",
        "campaign: running (driver pid 4242, seen 2 s ago)",
        // The matrix's cells are coloured by FN, red to green.
        "background:#",
    ] {
        assert!(watch.contains(shown), "{shown} missing:\n{watch}");
    }
    let trade = source(&PICTURES[2]);
    assert!(trade.contains("Trade-off"), "{trade}");
}

#[test]
fn a_difference_is_reported_by_line() {
    assert_eq!(
        first_difference("a\nb\nc\n", "a\nx\nc\n"),
        "line 2:\n  committed: b\n  app:       x"
    );
    assert_eq!(
        first_difference("a\n", "a\nb\n"),
        "line 2:\n  committed: (end of file)\n  app:       b"
    );
}
