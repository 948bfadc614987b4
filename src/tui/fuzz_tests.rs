//! Random keys and resizes, kept as a regression suite because hand-written tests miss them: any
//! sequence of key presses, ticks, watcher events, campaign reloads and terminal sizes leaves the
//! app drawable, never a panic. CI runs a short seeded sequence; the long run is
//! `cargo test --bin autolb tui::fuzz_tests -- --ignored --nocapture` (the guide's *Development* page).

use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyModifiers};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use autolb::watch::WatchEvent;

use super::app::App;
use super::event::Event;
use super::screen_tests::watched;
use super::tests::{app_with, draw, special};
use super::theme::ColorDepth;

/// Every key the trial pressed: printable ASCII, with and without Ctrl and Alt, and the
/// special keys.
fn random_key(rng: &mut StdRng) -> Event {
    let special_keys = [
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::F(rng.random_range(1..=12)),
    ];
    let code = if rng.random_bool(0.75) {
        KeyCode::Char(char::from(rng.random_range(b' '..=b'~')))
    } else {
        special_keys[rng.random_range(0..special_keys.len())]
    };
    let modifiers = match rng.random_range(0..10) {
        0 => KeyModifiers::CONTROL,
        1 => KeyModifiers::ALT,
        2 => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    special(code, modifiers)
}

/// A terminal size: the usual ones, the edges of the smallest supported one (60x18), and
/// anything from 1x1 up.
fn random_size(rng: &mut StdRng) -> (u16, u16) {
    const USUAL: [(u16, u16); 8] = [
        (80, 24),
        (100, 30),
        (160, 50),
        (220, 60),
        (60, 18),
        (59, 18),
        (60, 17),
        (1, 1),
    ];
    if rng.random_bool(0.5) {
        USUAL[rng.random_range(0..USUAL.len())]
    } else {
        (rng.random_range(1..=260), rng.random_range(1..=90))
    }
}

/// `events` random events from `seed`, drawing after each; a new app after a quit.
fn random_session(seed: u64, events: usize) {
    let out = tempfile::tempdir().unwrap();
    let fresh = || -> App {
        let mut app = app_with(ColorDepth::TrueColor, out.path().to_path_buf());
        app.update(Event::Campaign(Box::new(watched())));
        app
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut app = fresh();
    let mut size = (80, 24);
    let mut quits = 0;
    for step in 0..events {
        let event = match rng.random_range(0..100) {
            0..=79 => random_key(&mut rng),
            80..=89 => {
                size = random_size(&mut rng);
                Event::Resize
            }
            90..=94 => Event::Tick(SystemTime::now() + Duration::from_secs(step as u64)),
            95..=97 => Event::Watch(
                WatchEvent::Quiet {
                    pending: rng.random_range(0..5),
                    complete: rng.random_range(0..50),
                },
                SystemTime::now(),
            ),
            _ => Event::Campaign(Box::new(if rng.random_bool(0.5) {
                watched()
            } else {
                super::campaign_view::CampaignView::default()
            })),
        };
        super::update_and_run(&mut app, event);
        if app.ui.quit {
            quits += 1;
            app = fresh();
        }
        draw(&app, size.0, size.1);
    }
    eprintln!("seed {seed}: {events} random events drawn, {quits} quits, no panic");
}

#[test]
fn random_keys_and_resizes_never_panic() {
    random_session(14, 3_600);
}

/// The long run (the guide's *Development* page).
#[test]
#[ignore]
fn random_keys_and_resizes_never_panic_long() {
    for seed in 0..20 {
        random_session(seed, 5_000);
    }
}
