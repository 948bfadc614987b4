//! A key as the table and `keys.toml` write it (`q`, `ctrl-c`, `alt-x`, `space`, `f1`, arrows):
//! parsing, display and matching against crossterm's events.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as written in the table and in `keys.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub code: BindableKey,
    pub ctrl: bool,
    pub alt: bool,
}

/// The key codes the table can name (crossterm's `KeyCode` is not `Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BindableKey {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Backspace,
    F(u8),
}

impl Key {
    /// Parses `q`, `ctrl-c`, `alt-x`, `space`, `enter`, `esc`, `tab`, `backtab`, arrows, `f1`..
    pub fn parse(spec: &str) -> Result<Key, String> {
        let mut rest = spec;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.len() > 5 && lower.starts_with("ctrl-") {
                ctrl = true;
                rest = &rest[5..];
            } else if rest.len() > 4 && lower.starts_with("alt-") {
                alt = true;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => BindableKey::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
            _ => match rest.to_ascii_lowercase().as_str() {
                "space" => BindableKey::Char(' '),
                "enter" | "return" => BindableKey::Enter,
                "esc" | "escape" => BindableKey::Esc,
                "tab" => BindableKey::Tab,
                "backtab" | "shift-tab" => BindableKey::BackTab,
                "up" => BindableKey::Up,
                "down" => BindableKey::Down,
                "left" => BindableKey::Left,
                "right" => BindableKey::Right,
                "pageup" => BindableKey::PageUp,
                "pagedown" => BindableKey::PageDown,
                "home" => BindableKey::Home,
                "end" => BindableKey::End,
                "backspace" => BindableKey::Backspace,
                other => BindableKey::F(function_key(other).ok_or_else(|| {
                    format!(
                        "unknown key {spec:?}; use a single character, space, enter, esc, tab, backtab, up, down, left, right, pageup, pagedown, home, end, backspace, f1..f12, with optional ctrl- or alt-"
                    )
                })?),
            },
        };
        Ok(Key { code, ctrl, alt })
    }

    /// The key a terminal event stands for. Shift is folded into the character (`+`, `>`, `?`
    /// arrive with or without the shift flag depending on the terminal).
    pub fn from_event(event: &KeyEvent) -> Option<Key> {
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        let alt = event.modifiers.contains(KeyModifiers::ALT);
        let code = match event.code {
            KeyCode::Char(c) => BindableKey::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
            KeyCode::Enter => BindableKey::Enter,
            KeyCode::Esc => BindableKey::Esc,
            KeyCode::Tab => BindableKey::Tab,
            KeyCode::BackTab => BindableKey::BackTab,
            KeyCode::Up => BindableKey::Up,
            KeyCode::Down => BindableKey::Down,
            KeyCode::Left => BindableKey::Left,
            KeyCode::Right => BindableKey::Right,
            KeyCode::PageUp => BindableKey::PageUp,
            KeyCode::PageDown => BindableKey::PageDown,
            KeyCode::Home => BindableKey::Home,
            KeyCode::End => BindableKey::End,
            KeyCode::Backspace => BindableKey::Backspace,
            KeyCode::F(n) => BindableKey::F(n),
            _ => return None,
        };
        Some(Key { code, ctrl, alt })
    }

    /// How the help and the hint bar write the key.
    pub fn label(&self) -> String {
        let base = match self.code {
            BindableKey::Char(' ') => "space".to_string(),
            BindableKey::Char(c) => c.to_string(),
            BindableKey::Enter => "enter".into(),
            BindableKey::Esc => "esc".into(),
            BindableKey::Tab => "tab".into(),
            BindableKey::BackTab => "shift-tab".into(),
            BindableKey::Up => "↑".into(),
            BindableKey::Down => "↓".into(),
            BindableKey::Left => "←".into(),
            BindableKey::Right => "→".into(),
            BindableKey::PageUp => "pageup".into(),
            BindableKey::PageDown => "pagedown".into(),
            BindableKey::Home => "home".into(),
            BindableKey::End => "end".into(),
            BindableKey::Backspace => "backspace".into(),
            BindableKey::F(n) => format!("f{n}"),
        };
        let mut s = String::new();
        if self.ctrl {
            s.push_str("ctrl-");
        }
        if self.alt {
            s.push_str("alt-");
        }
        s + &base
    }
}

/// `n` of a lower-case `fN` key name, for `f1` to `f12`.
fn function_key(name: &str) -> Option<u8> {
    name.strip_prefix('f')?
        .parse()
        .ok()
        .filter(|n| (1..=12).contains(n))
}
