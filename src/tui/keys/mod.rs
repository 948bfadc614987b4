//! The one key table: key -> action -> description. It drives the key handling, the hint bar
//! and the help overlay, so help never drifts from behaviour.
//!
//! Users may rebind actions in `keys.toml` under the platform configuration directory
//! (`~/.config/autolb/keys.toml` on Linux, honouring `XDG_CONFIG_HOME`):
//!
//! ```toml
//! quit = ["q", "ctrl-c"]
//! mark = "m"
//! ```
//!
//! An action named in the file gets exactly the keys listed there; the others keep their
//! defaults. A key bound to two actions is an error, so no binding silently shadows another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crossterm::event::KeyEvent;

use super::pane::Pane;

mod key;
pub use key::Key;

/// The keys of a typed prompt (the `/` filter), as the filter's help row and the prompt's hint
/// bar both say them; a macro so the help row's text can be built from it at compile time.
macro_rules! prompt_keys {
    () => {
        "enter applies, esc cancels, ctrl-u clears"
    };
}

/// What the keys of a typed prompt do (see [`prompt_keys`]).
pub const PROMPT_KEYS: &str = prompt_keys!();

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Quit,
    Help,
    Back,
    NextPane,
    PrevPane,
    Up,
    Down,
    Left,
    Right,
    TtsUp,
    TtsDown,
    TtsFineUp,
    TtsFineDown,
    Mark,
    Detail,
    Write,
    Best,
    TopMore,
    TopLess,
    LogScale,
    CycleRows,
    CycleCols,
    Zoom,
    ZoomRegion,
    PageUp,
    PageDown,
    Home,
    End,
    Report,
    EmitEcearth4,
    ToggleModel,
    BudgetUp,
    BudgetDown,
    CycleCost,
    Logs,
    Filter,
    Sort,
}

/// One row of the table: the action, its name in `keys.toml`, default keys, what it does,
/// whether the hint bar shows it, and which panes it acts on.
pub struct Binding {
    pub action: Action,
    pub name: &'static str,
    pub defaults: &'static [&'static str],
    pub description: &'static str,
    pub hint: Option<&'static str>,
    /// Where the key does something about the focused pane's content; the hint bar lists the
    /// focused pane's keys first.
    pub panes: Panes,
}

/// The panes a binding acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panes {
    /// Every pane (or none in particular: quit, help, write).
    All,
    Only(&'static [Pane]),
}

impl Panes {
    /// Whether the binding is about `pane` in particular (not one of those for every pane).
    pub fn singles_out(self, pane: Pane) -> bool {
        match self {
            Panes::All => false,
            Panes::Only(panes) => panes.contains(&pane),
        }
    }
}

/// The default bindings (fixed by the project; users may rebind).
pub const BINDINGS: &[Binding] = &[
    Binding {
        action: Action::Quit,
        name: "quit",
        defaults: &["q", "ctrl-c"],
        description: "quit",
        hint: Some("quit"),
        panes: Panes::All,
    },
    Binding {
        action: Action::Help,
        name: "help",
        defaults: &["?"],
        description: "show or hide this help",
        hint: Some("help"),
        panes: Panes::All,
    },
    Binding {
        action: Action::Back,
        name: "back",
        defaults: &["esc"],
        description: "close the help or the detail view",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::Zoom,
        name: "zoom",
        defaults: &["z"],
        description: "zoom the focused pane to the whole screen, or back",
        hint: Some("zoom"),
        panes: Panes::All,
    },
    Binding {
        action: Action::NextPane,
        name: "next_pane",
        defaults: &["tab"],
        description: "focus the next pane",
        hint: Some("pane"),
        panes: Panes::All,
    },
    Binding {
        action: Action::PrevPane,
        name: "prev_pane",
        defaults: &["backtab"],
        description: "focus the previous pane",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::Up,
        name: "up",
        defaults: &["up", "k"],
        description: "move up (matrix cursor, list, table; faster along the front)",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::Down,
        name: "down",
        defaults: &["down", "j"],
        description: "move down (cheaper along the front)",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::Left,
        name: "left",
        defaults: &["left"],
        description: "move left (matrix cursor; TTS_w -0.01 on the slider)",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix, Pane::Slider, Pane::Curves, Pane::Front]),
    },
    Binding {
        action: Action::Right,
        name: "right",
        defaults: &["right"],
        description: "move right (matrix cursor; TTS_w +0.01 on the slider)",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix, Pane::Slider, Pane::Curves, Pane::Front]),
    },
    Binding {
        action: Action::TtsUp,
        name: "tts_up",
        defaults: &["+", "="],
        description: "TTS_w +0.05 (weigh speed more)",
        hint: Some("TTS_w"),
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::TtsDown,
        name: "tts_down",
        defaults: &["-"],
        description: "TTS_w -0.05 (weigh cost more)",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::TtsFineUp,
        name: "tts_fine_up",
        defaults: &[">"],
        description: "TTS_w +0.01",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::TtsFineDown,
        name: "tts_fine_down",
        defaults: &["<"],
        description: "TTS_w -0.01",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::BudgetUp,
        name: "budget_up",
        defaults: &["}"],
        description: "budget + one node of the [machine] (else + step), re-predicted",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::BudgetDown,
        name: "budget_down",
        defaults: &["{"],
        description: "budget - one node (else - step), re-predicted",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::CycleCost,
        name: "cost",
        defaults: &["$"],
        description: "cost FN weighs: core-hours, node-hours, energy (with a [machine])",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::Mark,
        name: "mark",
        defaults: &["space"],
        description: "mark or unmark the configuration under the cursor",
        hint: Some("mark"),
        panes: Panes::Only(&[Pane::Matrix, Pane::Slider, Pane::Front]),
    },
    Binding {
        action: Action::Detail,
        name: "detail",
        defaults: &["enter"],
        description: "open the detail view of the selection",
        hint: Some("detail"),
        panes: Panes::All,
    },
    Binding {
        action: Action::Write,
        name: "write",
        defaults: &["w"],
        description: "write the marked configurations (or the top N) as a campaign file and JSON",
        hint: Some("write"),
        panes: Panes::All,
    },
    Binding {
        action: Action::Best,
        name: "best",
        defaults: &["g"],
        description: "move the matrix cursor to the recommended configuration",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix]),
    },
    Binding {
        action: Action::TopMore,
        name: "top_more",
        defaults: &["]"],
        description: "propose one more configuration (top N + 1)",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::TopLess,
        name: "top_less",
        defaults: &["["],
        description: "propose one fewer configuration (top N - 1)",
        hint: None,
        panes: Panes::Only(&[Pane::Slider]),
    },
    Binding {
        action: Action::LogScale,
        name: "log_scale",
        defaults: &["L"],
        description: "toggle a log2 PE axis in the curves",
        hint: None,
        panes: Panes::Only(&[Pane::Curves]),
    },
    Binding {
        action: Action::CycleRows,
        name: "cycle_rows",
        defaults: &["r"],
        description: "matrix: next component down the rows",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix]),
    },
    Binding {
        action: Action::CycleCols,
        name: "cycle_cols",
        defaults: &["c"],
        description: "matrix: next component across the columns",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix]),
    },
    Binding {
        action: Action::ZoomRegion,
        name: "zoom_region",
        defaults: &["Z"],
        description: "matrix: one configuration per cell, the region around the cursor, or back",
        hint: None,
        panes: Panes::Only(&[Pane::Matrix]),
    },
    Binding {
        action: Action::PageUp,
        name: "page_up",
        defaults: &["pageup"],
        description: "page up (table, help, detail view)",
        hint: None,
        panes: Panes::Only(&[Pane::Table, Pane::Slider]),
    },
    Binding {
        action: Action::PageDown,
        name: "page_down",
        defaults: &["pagedown"],
        description: "page down",
        hint: None,
        panes: Panes::Only(&[Pane::Table, Pane::Slider]),
    },
    Binding {
        action: Action::Home,
        name: "home",
        defaults: &["home"],
        description: "to the first row",
        hint: None,
        panes: Panes::Only(&[Pane::Table, Pane::Slider]),
    },
    Binding {
        action: Action::End,
        name: "end",
        defaults: &["end"],
        description: "to the last row; the table then follows new rows",
        hint: None,
        panes: Panes::Only(&[Pane::Table, Pane::Slider]),
    },
    Binding {
        action: Action::Logs,
        name: "logs",
        defaults: &["l"],
        description: "page the selected row's runs: stdout, stderr and timing files, with their paths",
        hint: Some("logs"),
        panes: Panes::Only(&[Pane::Table]),
    },
    Binding {
        action: Action::Filter,
        name: "filter",
        defaults: &["/"],
        description: concat!(
            "filter the table: words a row must all have (failed, running, it2, 408, IFS=408); ",
            prompt_keys!()
        ),
        hint: Some("filter"),
        panes: Panes::Only(&[Pane::Table]),
    },
    Binding {
        action: Action::Sort,
        name: "sort",
        defaults: &["s"],
        description: "sort the table: run order, FN, SYPD, cost",
        hint: Some("sort"),
        panes: Panes::Only(&[Pane::Table]),
    },
    Binding {
        action: Action::Report,
        name: "report",
        defaults: &["R"],
        description: "write the report of what is shown (one HTML page) to the output directory",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::EmitEcearth4,
        name: "ecearth4",
        defaults: &["y"],
        description: "write the matrix cursor's configuration (the focused table's row) as EC-Earth4 YAML, threads and node groups included, to the output directory; on a layout tree, the selected placement's ./xmlchange lines",
        hint: None,
        panes: Panes::All,
    },
    Binding {
        action: Action::ToggleModel,
        name: "model",
        defaults: &["M"],
        description: "matrix, top N and front: standalone or calibrated model",
        hint: None,
        panes: Panes::All,
    },
];

/// The key table in use: defaults with the user's rebinding applied.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyTable {
    keys: BTreeMap<Action, Vec<Key>>,
}

impl Default for KeyTable {
    fn default() -> KeyTable {
        let keys = BINDINGS
            .iter()
            .map(|b| {
                let keys = b
                    .defaults
                    .iter()
                    .map(|k| Key::parse(k).unwrap_or_else(|e| panic!("default key table: {e}")))
                    .collect();
                (b.action, keys)
            })
            .collect();
        KeyTable { keys }
    }
}

impl KeyTable {
    /// The action bound to a terminal key event.
    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(event)?;
        self.keys
            .iter()
            .find(|(_, keys)| keys.contains(&key))
            .map(|(action, _)| *action)
    }

    pub fn keys(&self, action: Action) -> &[Key] {
        self.keys.get(&action).map_or(&[], Vec::as_slice)
    }

    /// The keys of an action as the user reads them, e.g. `q/ctrl-c`.
    pub fn label(&self, action: Action) -> String {
        self.keys(action)
            .iter()
            .map(Key::label)
            .collect::<Vec<_>>()
            .join("/")
    }

    /// `(keys, short label)` for the hint bar: the keys about the focused pane first, then the
    /// others, each in table order.
    pub fn hints(&self, focus: Pane) -> Vec<(String, &'static str)> {
        let (about, rest): (Vec<&Binding>, Vec<&Binding>) = BINDINGS
            .iter()
            .filter(|b| b.hint.is_some())
            .partition(|b| b.panes.singles_out(focus));
        about
            .into_iter()
            .chain(rest)
            .filter_map(|b| {
                let hint = b.hint?;
                let keys = match b.action {
                    Action::TtsUp => format!(
                        "{}/{}",
                        self.first(Action::TtsUp),
                        self.first(Action::TtsDown)
                    ),
                    Action::TtsFineUp => format!(
                        "{}/{}",
                        self.first(Action::TtsFineDown),
                        self.first(Action::TtsFineUp)
                    ),
                    _ => self.first(b.action),
                };
                (!keys.is_empty()).then_some((keys, hint))
            })
            .collect()
    }

    /// The first key of an action as the user reads it (empty when it has none).
    pub fn first(&self, action: Action) -> String {
        self.keys(action)
            .first()
            .map(Key::label)
            .unwrap_or_default()
    }

    /// `(keys, description)` for every action, for the help overlay.
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        BINDINGS
            .iter()
            .map(|b| (self.label(b.action), b.description))
            .collect()
    }

    /// Applies `keys.toml` text; `file` names it in errors.
    pub fn with_overrides(mut self, text: &str, file: &str) -> Result<KeyTable, String> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Keys {
            One(String),
            Many(Vec<String>),
        }
        let table: BTreeMap<String, Keys> = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let message = e.message().trim().replace('\n', " ");
            match line {
                Some(l) => format!("{file}: line {l}: {message}"),
                None => format!("{file}: {message}"),
            }
        })?;
        let line_of = |name: &str| {
            text.lines()
                .position(|l| l.trim_start().starts_with(name))
                .map_or(String::new(), |i| format!("line {}: ", i + 1))
        };
        for (name, keys) in table {
            let Some(binding) = BINDINGS.iter().find(|b| b.name == name) else {
                let names: Vec<&str> = BINDINGS.iter().map(|b| b.name).collect();
                return Err(format!(
                    "{file}: {}unknown action {name:?}; actions are {}",
                    line_of(&name),
                    names.join(", ")
                ));
            };
            let specs = match keys {
                Keys::One(k) => vec![k],
                Keys::Many(v) => v,
            };
            if specs.is_empty() {
                // An action without keys cannot be used at all (`quit = []`: no way out).
                return Err(format!(
                    "{file}: {}{name} = []: an action needs at least one key; leave it out to keep \
                     the default",
                    line_of(&name)
                ));
            }
            let parsed = specs
                .iter()
                .map(|k| Key::parse(k))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{file}: {}{name}: {e}", line_of(&name)))?;
            self.keys.insert(binding.action, parsed);
        }
        let mut owner: BTreeMap<Key, Action> = BTreeMap::new();
        for (action, keys) in &self.keys {
            for key in keys {
                if let Some(other) = owner.insert(*key, *action) {
                    let name = |a: Action| {
                        BINDINGS
                            .iter()
                            .find(|b| b.action == a)
                            .map_or("?", |b| b.name)
                    };
                    return Err(format!(
                        "{file}: key {:?} is bound to both {} and {}; rebind one of them",
                        key.label(),
                        name(other),
                        name(*action)
                    ));
                }
            }
        }
        Ok(self)
    }

    /// The user's key file, if the platform has a configuration directory.
    pub fn user_file() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "autolb").map(|d| d.config_dir().join("keys.toml"))
    }

    /// Defaults plus the user's file when it exists.
    pub fn load(path: Option<&Path>) -> Result<KeyTable, String> {
        let table = KeyTable::default();
        let Some(path) = path else {
            return Ok(table);
        };
        match autolb::fsutil::read_small_text(path) {
            Ok(text) => table.with_overrides(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(table),
            Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
        }
    }

    /// Defaults plus a file the user named (`--keys`): unlike the default file, it must exist.
    pub fn load_named(path: &Path) -> Result<KeyTable, String> {
        if !path.exists() {
            return Err(format!(
                "--keys {}: no such file; give an existing keys.toml or leave --keys out",
                path.display()
            ));
        }
        KeyTable::load(Some(path))
    }
}
