//! The trade-off pane: reaching it, walking the front, detail and marking from it, the strip
//! of TTS_w intervals, and whole-screen snapshots at 80x24 and 160x50 without colour.

use crossterm::event::{KeyCode, KeyModifiers};

use super::pane::Pane;
use super::tests::{app, draw, key, special, text};
use super::ui::{Overlay, Shared};
use super::view::trade_off::strip;

fn tab() -> super::event::Event {
    special(KeyCode::Tab, KeyModifiers::NONE)
}

fn to_front(app: &mut super::app::App) {
    for _ in 0..4 {
        app.update(tab());
    }
    assert_eq!(app.ui.focus, Pane::Front);
}

#[test]
fn tab_reaches_the_trade_off_which_takes_the_curves_place_until_they_are_focused() {
    let mut app = app();
    assert_eq!(app.ui.shared, Shared::Curves);
    to_front(&mut app);
    assert_eq!(app.ui.shared, Shared::TradeOff);
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains("Trade-off"), "{screen}");
    assert!(!screen.contains("Curves: SYPD"), "{screen}");
    // Leaving for the matrix keeps the trade-off in view; focusing the curves brings them back.
    app.update(tab());
    assert_eq!(app.ui.focus, Pane::Matrix);
    assert!(text(&draw(&app, 80, 24)).contains("Trade-off"));
    app.update(special(KeyCode::BackTab, KeyModifiers::SHIFT));
    app.update(special(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.ui.focus, Pane::Curves);
    assert_eq!(app.ui.shared, Shared::Curves);
    assert!(!text(&draw(&app, 80, 24)).contains("Trade-off"));
}

#[test]
fn the_cursor_walks_along_the_front_and_stops_at_its_ends() {
    let mut app = app();
    to_front(&mut app);
    let front = app.trade_off.front.clone();
    assert!(front.len() > 3);
    let start = app.trade_off.selected;
    assert_eq!(
        Some(&front[start].nproc),
        app.ranking.recommended().map(|c| &c.nproc),
        "the cursor starts on the recommendation"
    );
    app.update(special(KeyCode::Right, KeyModifiers::NONE));
    assert_eq!(app.trade_off.selected, start + 1);
    assert!(front[start + 1].sypd > front[start].sypd);
    app.update(key('j'));
    app.update(key('j'));
    assert_eq!(app.trade_off.selected, start - 1);
    for _ in 0..front.len() + 2 {
        app.update(special(KeyCode::Left, KeyModifiers::NONE));
    }
    assert_eq!(app.trade_off.selected, 0);
    for _ in 0..front.len() + 2 {
        app.update(special(KeyCode::Up, KeyModifiers::NONE));
    }
    assert_eq!(app.trade_off.selected, front.len() - 1);
}

#[test]
fn enter_opens_the_same_detail_and_space_marks_the_front_configuration() {
    let mut app = app();
    to_front(&mut app);
    app.update(key('j'));
    let here = app.trade_off.selected_config().unwrap().nproc.clone();
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    let Overlay::Config(index) = app.ui.overlay.clone() else {
        panic!("no detail view: {:?}", app.ui.overlay)
    };
    assert_eq!(app.ranking.nproc_of(&index), here);
    let screen = text(&draw(&app, 80, 24));
    assert!(screen.contains(&app.ranking.describe(&here)), "{screen}");
    app.update(special(KeyCode::Esc, KeyModifiers::NONE));
    app.update(key(' '));
    assert!(app.matrix.is_marked(&here));
    assert!(app.selection().iter().any(|c| c.nproc == here));
    // The line under the plot says so (at 80x24 it is cut before its end).
    let screen = text(&draw(&app, 160, 50));
    let info = screen
        .lines()
        .find(|l| l.contains("@ "))
        .expect("the line under the plot");
    let pane = info.split('┃').nth(1).unwrap_or_default();
    assert!(pane.trim_end().ends_with(" *"), "{info}");
    app.update(key(' '));
    assert!(!app.matrix.is_marked(&here));
}

#[test]
fn the_strip_shows_the_recommendations_interval_under_the_knob() {
    let mut app = app();
    let winners = app.trade_off.winners.clone();
    assert!(winners.len() >= 2, "{winners:?}");
    for pct in [0u8, 20, 35, 50, 65, 80, 100] {
        while app.ranking.tts_w_pct > pct {
            app.update(key('<'));
        }
        while app.ranking.tts_w_pct < pct {
            app.update(key('>'));
        }
        let k = app.trade_off.winner_at(app.ranking.tts_w()).unwrap();
        assert_eq!(
            Some(&winners[k].config.nproc),
            app.ranking.recommended().map(|c| &c.nproc),
            "TTS_w {}",
            app.ranking.tts_w()
        );
        // The bar of 101 cells puts one cell at every hundredth.
        let (cells, _) = strip(&app, 101);
        let letter = cells.chars().nth(usize::from(pct)).unwrap();
        assert_eq!(letter, super::trade_off::winner_cell(k));
    }
}

#[test]
fn trade_off_at_80x24_mono() {
    let mut app = app();
    to_front(&mut app);
    insta::assert_snapshot!(text(&draw(&app, 80, 24)));
}

#[test]
fn trade_off_at_160x50_mono() {
    let mut app = app();
    to_front(&mut app);
    app.update(special(KeyCode::Right, KeyModifiers::NONE));
    app.update(key(' '));
    insta::assert_snapshot!(text(&draw(&app, 160, 50)));
}

/// The trade-off line under the plot (`@ 408+240 ...`) on an 80x24 screen.
fn at_line(app: &super::app::App) -> String {
    let screen = text(&draw(app, 80, 24));
    screen
        .lines()
        .find_map(|l| l.split_once("@ ").map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| panic!("no @ line: {screen}"))
}

#[test]
fn one_cursor_for_the_matrix_the_front_and_the_detail_view() {
    let mut app = app();
    to_front(&mut app);
    // Walking the front moves the matrix cursor: the same configuration.
    app.update(special(KeyCode::Right, KeyModifiers::NONE));
    let walked = app.trade_off.selected_config().unwrap().nproc.clone();
    assert_eq!(app.cursor_nproc(), walked);
    // The matrix arrows move the front's `@` with them, on the front or off it.
    app.update(tab());
    assert_eq!(app.ui.focus, Pane::Matrix);
    for _ in 0..3 {
        app.update(key('k'));
        let n = app.cursor_nproc();
        let pes = format!("{}+{}", n[0], n[1]);
        assert!(at_line(&app).starts_with(&pes), "{pes}: {}", at_line(&app));
        if app.trade_off.front.iter().any(|c| c.nproc == n) {
            assert_eq!(app.trade_off.selected_config().unwrap().nproc, n);
        }
    }
    // `g` goes to the recommendation in both.
    app.update(key('g'));
    let best = app.ranking.recommended().unwrap().nproc.clone();
    assert_eq!(app.cursor_nproc(), best);
    assert_eq!(app.trade_off.selected_config().unwrap().nproc, best);
    assert!(at_line(&app).starts_with(&format!("{}+{}", best[0], best[1])));
    // The detail view opened from the front shows the same configuration.
    to_front(&mut app);
    app.update(special(KeyCode::Enter, KeyModifiers::NONE));
    let Overlay::Config(index) = app.ui.overlay.clone() else {
        panic!("no detail view: {:?}", app.ui.overlay)
    };
    assert_eq!(app.ranking.nproc_of(&index), best);
}

#[test]
fn at_80x24_with_a_campaign_the_trade_off_is_a_summary_in_words() {
    let mut app = app();
    app.update(super::event::Event::Campaign(Box::new(
        super::screen_tests::watched(),
    )));
    to_front(&mut app);
    let screen = text(&draw(&app, 80, 24));
    let n = app.cursor_nproc();
    assert!(screen.contains(&format!("@ {}+{}", n[0], n[1])), "{screen}");
    assert!(screen.contains("front"), "{screen}");
    assert!(screen.contains(": the plot"), "{screen}");
    // Zoomed, the plot is back.
    app.update(key('z'));
    let zoomed = text(&draw(&app, 80, 24));
    assert!(!zoomed.contains(": the plot"), "{zoomed}");
    assert!(zoomed.contains("SYPD"), "{zoomed}");
}

#[test]
fn winners_past_z_have_names_of_their_own_and_a_plus_in_the_strip() {
    use super::trade_off::{winner_cell, winner_label};
    assert_eq!(winner_label(0, false), "a");
    assert_eq!(winner_label(0, true), "A");
    assert_eq!(winner_label(26, false), "aa");
    assert_eq!(winner_label(27, true), "AB");
    assert_eq!(winner_cell(25), 'z');
    assert_eq!(winner_cell(26), '+');
    // The app's names are the report's, in lower case.
    for k in 0..100 {
        assert_eq!(
            winner_label(k, true),
            autolb::report::figures::winner_letter(k)
        );
    }
}
