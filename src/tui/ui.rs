//! The screen part of the app: focus, overlays and their scroll, zoom, the status line's
//! message and error, the theme and the key table. Nothing here depends on the problem.

use std::time::SystemTime;

use super::keys::{Action, KeyTable};
use super::pane::Pane;
use super::theme::Theme;

/// Lines a page key moves.
pub const PAGE: u16 = 10;

/// What the place shared by the curves and the trade-off shows: the one focused last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    Curves,
    TradeOff,
}

/// What is drawn over the panes.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// Details of a configuration (candidate indices per component).
    Config(Vec<usize>),
    /// Details of an iteration-table row.
    Row(usize),
    /// `l`: a row's runs' logs (title, lines).
    Logs(String, Vec<String>),
}

pub struct Ui {
    pub focus: Pane,
    pub shared: Shared,
    pub overlay: Overlay,
    /// First line shown of the help or detail overlay.
    pub overlay_scroll: u16,
    /// The `/` query being typed (`None`: not typing).
    pub filter_input: Option<String>,
    /// The focused pane fills the screen (`z`).
    pub zoomed: bool,
    pub log_scale: bool,
    /// The last message for the status line (e.g. the paths `w` wrote).
    pub message: Option<String>,
    pub error: Option<String>,
    pub keys: KeyTable,
    pub theme: Theme,
    /// A label for the data shown (e.g. "built-in EC-Earth3 SR example").
    pub title: String,
    pub now: SystemTime,
    pub quit: bool,
}

impl Ui {
    pub fn new(keys: KeyTable, theme: Theme, title: String) -> Ui {
        Ui {
            focus: Pane::Matrix,
            shared: Shared::Curves,
            overlay: Overlay::None,
            overlay_scroll: 0,
            filter_input: None,
            zoomed: false,
            log_scale: false,
            message: None,
            error: None,
            keys,
            theme,
            title,
            now: SystemTime::now(),
            quit: false,
        }
    }

    /// Focuses a pane; the curves and the trade-off take the place they share when focused.
    pub fn set_focus(&mut self, pane: Pane) {
        self.focus = pane;
        match pane {
            Pane::Curves => self.shared = Shared::Curves,
            Pane::Front => self.shared = Shared::TradeOff,
            _ => {}
        }
    }

    /// An action while an overlay is open: it scrolls or closes the overlay, or quits; every
    /// other key is swallowed so nothing changes behind the overlay.
    pub fn apply_in_overlay(&mut self, action: Action) {
        let scroll = &mut self.overlay_scroll;
        match action {
            Action::Quit => self.quit = true,
            Action::Back | Action::Detail => self.overlay = Overlay::None,
            Action::Help => {
                self.overlay = if self.overlay == Overlay::Help {
                    Overlay::None
                } else {
                    Overlay::Help
                }
            }
            // The view clamps the scroll to the text's length.
            Action::Up => *scroll = scroll.saturating_sub(1),
            Action::Down => *scroll = scroll.saturating_add(1),
            Action::PageUp => *scroll = scroll.saturating_sub(PAGE),
            Action::PageDown => *scroll = scroll.saturating_add(PAGE),
            Action::Home => *scroll = 0,
            Action::End => *scroll = u16::MAX,
            _ => {}
        }
        if self.overlay == Overlay::None {
            self.overlay_scroll = 0;
        }
    }

    /// A finished write (or any result worth saying): the message, and the error cleared.
    pub fn say(&mut self, message: String) {
        self.error = None;
        self.message = Some(message);
    }
}
