//! The pictures of the app in the README and the guide are the app's screens watching the demo
//! campaign, which the test runs first (the library's driver, the stand-in model, fixed seeds),
//! so every number in a picture is one a campaign measured and they all agree with each other.
//! Each picture's source, `docs/src/images/NAME.html`, is drawn here on a `TestBackend` in true colour and
//! written out with [`super::screen_html`]; the test fails when a committed source is no longer
//! what the app draws, naming the file and the command that makes it again.
//!
//! `AUTOLB_UPDATE_PICTURES=1` rewrites the sources instead. `docs/pictures.sh` does that,
//! then turns each source into its PNG with headless Chromium and records which source each
//! PNG was made from (`tests/it/pictures.rs` checks that record, so a source made again without
//! its PNG fails too).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use crossterm::event::{KeyCode, KeyModifiers};

use autolb::campaign::{demo, drive, DriveOptions, State};
use autolb::predict::Problem;

use super::app::App;
use super::campaign_view::{CampaignView, Loader, LoaderComponent};
use super::event::Event;
use super::keys::KeyTable;
use super::pane::Pane;
use super::screen_html;
use super::selection::SelectionSource;
use super::tests::{draw, special, text};
use super::theme::{ColorDepth, Theme};

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

/// Where the pictured campaign says it is: its real directory is a temporary one, whose name
/// changes with every run.
const SHOWN_DIR: &str = "/scratch/demo";

/// The demo campaign (`autolb tui` with no arguments runs it) run to its end by the library's
/// driver: the stand-in model with its fixed seeds, so the same runs measure the same speeds
/// every time. Every number in a picture is one this campaign measured or predicted.
struct Ran {
    view: CampaignView,
    problem: Problem,
    inputs: Vec<autolb::predict::ComponentInput>,
}

fn ran() -> &'static Ran {
    static RAN: OnceLock<Ran> = OnceLock::new();
    RAN.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = demo::init_demo(tmp.path(), Some(0.0)).unwrap();
        drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
        let state = State::load(&dir).unwrap();
        let (inputs, settings) = autolb::campaign::answer::campaign_inputs(&state, &dir).unwrap();
        let components = state
            .components
            .iter()
            .map(|c| LoaderComponent {
                name: c.name.clone(),
                timing_name: c.timing_name.clone(),
            })
            .collect();
        let mut view = Loader::new(dir, components, state.settings.period_s, settings.tts_w).load();
        view.dir = Some(PathBuf::from(SHOWN_DIR));
        // The runs' wall-clock times are those of a stand-in model run at full speed, which
        // differ from one run of this test to the next: the pictures leave them out.
        if let Some(p) = &mut view.progress {
            p.first_start = None;
            p.last_end = None;
            p.mean_run_s = None;
        }
        Ran {
            view,
            problem: Problem::new(&inputs, &settings).unwrap(),
            inputs,
        }
    })
}

/// The colour app watching the demo campaign it ran, with the campaign's own curves and
/// settings (as `autolb tui --campaign DIR` opens it).
fn watching() -> App {
    let ran = ran();
    let mut app = App::new(
        ran.problem.clone(),
        &ran.inputs,
        KeyTable::default(),
        Theme::new(ColorDepth::TrueColor),
        SelectionSource {
            components: super::example_components(),
            base: None,
            period_s: Some(2700.0),
        },
        std::env::temp_dir(),
        "demo: EC-Earth3 SR example".into(),
    );
    app.update(Event::Campaign(Box::new(ran.view.clone())));
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
        "Iterations: /scratch/demo",
        "campaign: done",
        // The matrix's cells are coloured by FN, red to green.
        "background:#",
    ] {
        assert!(watch.contains(shown), "{shown} missing:\n{watch}");
    }
    let trade = source(&PICTURES[2]);
    assert!(trade.contains("Trade-off"), "{trade}");
}

/// The ★ line is the campaign's answer (as `campaign best` gives it) and agrees with the rows
/// that measured it: one row's SYPD, CHSY and FN when one row did, else the mean of their runs,
/// labelled so; the row it names (`it/t`, where the line has room) is the ★ row.
#[test]
fn the_best_line_in_the_pictures_is_the_answer_and_its_rows() {
    let view = &ran().view;
    let answer = view.answer.as_ref().expect("the demo measures a best");
    let best_row = &view.rows[view.best.expect("a best row")];
    for p in PICTURES.iter().filter(|p| p.name.starts_with("watch")) {
        let screen = text(&draw(&(p.app)(), p.width, p.height));
        let best = screen
            .lines()
            .find(|l| l.contains("★ best"))
            .unwrap_or_else(|| panic!("{}: no ★ line\n{screen}", p.name));
        let field = |name: &str| -> Option<String> {
            best.split(" · ")
                .find_map(|part| part.trim().strip_prefix(name))
                .map(|v| v.split_whitespace().next().unwrap_or_default().to_string())
        };
        let need =
            |name: &str| field(name).unwrap_or_else(|| panic!("{}: no {name}in {best}", p.name));
        let (sypd, chsy, fn_) = (need("SYPD "), need("CHSY "), need("FN "));
        assert!(
            best.contains(&answer.config),
            "{}: {best} is not {}",
            p.name,
            answer.config
        );
        assert_eq!(sypd, format!("{:.2}", answer.sypd), "{}: {best}", p.name);
        assert_eq!(chsy, format!("{:.0}", answer.chsy), "{}: {best}", p.name);
        assert_eq!(
            fn_,
            format!("{:.3}", answer.fittingness),
            "{}: {best}",
            p.name
        );
        if let Some(named) = field("it/t ") {
            assert_eq!(
                named,
                format!("{}/{}", best_row.iteration, best_row.test),
                "{}",
                p.name
            );
        }
        // The rows that measured it: their runs' mean is the line's.
        let rows: Vec<_> = view
            .rows
            .iter()
            .filter(|r| answer.measured_in.contains(&[r.iteration, r.test]))
            .collect();
        assert_eq!(rows.len(), answer.measured_in.len());
        assert!(rows
            .iter()
            .all(|r| r.fittingness.map(|f| format!("{f:.3}")) == Some(fn_.clone())));
        let runs: Vec<f64> = rows
            .iter()
            .flat_map(|r| r.runs.iter().filter_map(|run| run.sypd))
            .collect();
        assert_eq!(runs.len() as u32, answer.runs);
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        assert_eq!(format!("{mean:.2}"), sypd, "{}: the runs {runs:?}", p.name);
        if rows.len() == 1 {
            assert_eq!(format!("{:.2}", rows[0].sypd.unwrap()), sypd, "{}", p.name);
            assert_eq!(format!("{:.0}", rows[0].chsy.unwrap()), chsy, "{}", p.name);
        } else {
            assert!(
                best.contains(&format!("(mean of {} runs)", answer.runs)),
                "{}: a mean over rows says so: {best}",
                p.name
            );
        }
    }
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
