//! Tests of the key table: defaults, rebinding, bad files and the hint bar's order.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};

use super::keys::{Action, KeyTable, Panes, BINDINGS};
use super::pane::Pane;

fn press(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    }
}

#[test]
fn defaults_match_the_issue() {
    let t = KeyTable::default();
    let act = |c, m| t.action(&press(c, m));
    assert_eq!(
        act(KeyCode::Char('q'), KeyModifiers::NONE),
        Some(Action::Quit)
    );
    assert_eq!(
        act(KeyCode::Char('c'), KeyModifiers::CONTROL),
        Some(Action::Quit)
    );
    assert_eq!(
        act(KeyCode::Char('c'), KeyModifiers::NONE),
        Some(Action::CycleCols)
    );
    assert_eq!(
        act(KeyCode::Char('+'), KeyModifiers::SHIFT),
        Some(Action::TtsUp)
    );
    assert_eq!(
        act(KeyCode::Char('>'), KeyModifiers::SHIFT),
        Some(Action::TtsFineUp)
    );
    assert_eq!(
        act(KeyCode::Char('<'), KeyModifiers::NONE),
        Some(Action::TtsFineDown)
    );
    assert_eq!(
        act(KeyCode::Char('-'), KeyModifiers::NONE),
        Some(Action::TtsDown)
    );
    assert_eq!(
        act(KeyCode::Char('k'), KeyModifiers::NONE),
        Some(Action::Up)
    );
    assert_eq!(act(KeyCode::Left, KeyModifiers::NONE), Some(Action::Left));
    assert_eq!(
        act(KeyCode::Tab, KeyModifiers::NONE),
        Some(Action::NextPane)
    );
    assert_eq!(
        act(KeyCode::Char(' '), KeyModifiers::NONE),
        Some(Action::Mark)
    );
    assert_eq!(
        act(KeyCode::Enter, KeyModifiers::NONE),
        Some(Action::Detail)
    );
    assert_eq!(
        act(KeyCode::Char('w'), KeyModifiers::NONE),
        Some(Action::Write)
    );
    assert_eq!(
        act(KeyCode::Char('?'), KeyModifiers::SHIFT),
        Some(Action::Help)
    );
    assert_eq!(act(KeyCode::Char('x'), KeyModifiers::NONE), None);
}

#[test]
fn every_action_has_one_row_and_no_default_key_is_shared() {
    let t = KeyTable::default().with_overrides("", "none").unwrap();
    assert_eq!(t, KeyTable::default());
    let mut names: Vec<&str> = BINDINGS.iter().map(|b| b.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), BINDINGS.len());
}

#[test]
fn the_hint_bar_puts_the_focused_panes_keys_first() {
    let t = KeyTable::default();
    let labels = |focus| -> Vec<&str> { t.hints(focus).into_iter().map(|(_, h)| h).collect() };
    let table_order = [
        "quit", "help", "zoom", "pane", "TTS_w", "mark", "detail", "write", "logs", "filter",
        "sort",
    ];
    // No hinted key is about the curves in particular: the table's order.
    assert_eq!(labels(Pane::Curves), table_order);
    // The table's own keys first where the table has the focus.
    assert_eq!(
        labels(Pane::Table),
        [
            "logs", "filter", "sort", "quit", "help", "zoom", "pane", "TTS_w", "mark", "detail",
            "write"
        ]
    );
    assert_eq!(
        labels(Pane::Matrix),
        [
            "mark", "quit", "help", "zoom", "pane", "TTS_w", "detail", "write", "logs", "filter",
            "sort"
        ]
    );
    assert_eq!(
        labels(Pane::Slider),
        [
            "TTS_w", "mark", "quit", "help", "zoom", "pane", "detail", "write", "logs", "filter",
            "sort"
        ]
    );
    assert_eq!(t.hints(Pane::Slider)[0].0, "+/-");
    // The help lists every binding whatever the focus.
    assert_eq!(t.help_rows().len(), BINDINGS.len());
}

#[test]
fn every_binding_names_at_least_one_pane() {
    for b in BINDINGS {
        assert_ne!(b.panes, Panes::Only(&[]), "{}", b.name);
    }
}

#[test]
fn rebinding_replaces_an_actions_keys() {
    let t = KeyTable::default()
        .with_overrides("mark = \"m\"\nquit = [\"x\", \"ctrl-q\"]\n", "keys.toml")
        .unwrap();
    assert_eq!(
        t.action(&press(KeyCode::Char('m'), KeyModifiers::NONE)),
        Some(Action::Mark)
    );
    assert_eq!(
        t.action(&press(KeyCode::Char(' '), KeyModifiers::NONE)),
        None
    );
    assert_eq!(
        t.action(&press(KeyCode::Char('q'), KeyModifiers::CONTROL)),
        Some(Action::Quit)
    );
    assert_eq!(t.label(Action::Quit), "x/ctrl-q");
    assert!(t
        .help_rows()
        .iter()
        .any(|(k, d)| k == "m" && d.contains("mark")));
}

#[test]
fn an_empty_key_list_and_a_missing_named_file_are_errors() {
    let e = KeyTable::default()
        .with_overrides("mark = \"m\"\nquit = []\n", "k.toml")
        .unwrap_err();
    assert!(
        e.contains("k.toml") && e.contains("line 2") && e.contains("quit = []"),
        "{e}"
    );
    let e = KeyTable::load_named(Path::new("/missing.toml")).unwrap_err();
    assert!(e.contains("--keys /missing.toml"), "{e}");
    // The default file may be absent.
    assert_eq!(
        KeyTable::load(Some(Path::new("/missing.toml"))).unwrap(),
        KeyTable::default()
    );
}

#[test]
fn bad_files_are_explained() {
    let e = KeyTable::default()
        .with_overrides("\nmarkk = \"m\"\n", "k.toml")
        .unwrap_err();
    assert!(
        e.contains("k.toml") && e.contains("line 2") && e.contains("markk"),
        "{e}"
    );
    let e = KeyTable::default()
        .with_overrides("mark = \"meta-m\"\n", "k.toml")
        .unwrap_err();
    assert!(e.contains("meta-m") && e.contains("line 1"), "{e}");
    let e = KeyTable::default()
        .with_overrides("mark = \"q\"\n", "k.toml")
        .unwrap_err();
    assert!(e.contains("both"), "{e}");
    let e = KeyTable::default()
        .with_overrides("mark = [\n", "k.toml")
        .unwrap_err();
    assert!(e.contains("k.toml: line"), "{e}");
}

#[test]
fn ctrl_u_clears_the_filter_prompt_as_a_shell_does() {
    use super::event::Event;
    let mut app = super::tests::app();
    app.update(Event::Campaign(Box::new(super::screen_tests::watched())));
    let typed = |app: &super::app::App| app.ui.filter_input.clone();
    app.update(super::tests::key('/'));
    for c in "failed it2".chars() {
        app.update(super::tests::key(c));
    }
    assert_eq!(typed(&app).as_deref(), Some("failed it2"));
    let ctrl = |c| Event::Key(press(KeyCode::Char(c), KeyModifiers::CONTROL));
    app.update(ctrl('u'));
    assert_eq!(typed(&app).as_deref(), Some(""), "ctrl-u clears the line");
    // Other control keys type nothing, and the prompt stays open for the next query.
    app.update(ctrl('a'));
    app.update(super::tests::key('8'));
    assert_eq!(typed(&app).as_deref(), Some("8"));
    assert!(!app.ui.quit);
    // The prompt's hint bar and the filter's help row say the same keys.
    let filter = BINDINGS
        .iter()
        .find(|b| b.action == Action::Filter)
        .unwrap();
    assert!(filter.description.ends_with(super::keys::PROMPT_KEYS));
    let screen = super::tests::text(&super::tests::draw(&app, 80, 24));
    assert!(screen.contains("esc cancels, ctrl-u clears"), "{screen}");
}
