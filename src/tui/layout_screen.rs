//! The app on a campaign file with a `layout` (a CIME model's tree): the placements ranked by
//! fittingness, a TTS_w slider that ranks them again, and `y`, which writes the selected
//! placement's `./xmlchange` lines.
//!
//! A layout tree has no matrix of two components' PE counts to draw: its placements put every
//! component somewhere at once. So the screen is the ranking itself, one row per placement
//! (rank, cores, SYPD, CHSY, FN and each component's tasks at its first PE), the same rows
//! `autolb predict --config FILE` prints, and `y` writes the same text as its `--emit cime`
//! (the library's [`cime_lines`]). Like the rest of the app the state does no I/O: a key
//! that writes returns an [`Effect`] for the loop to run. Keys come from the one key table.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use color_eyre::eyre::{Result, WrapErr};
use ratatui::backend::Backend;
use ratatui::layout::{Constraint, Layout as Areas};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};

use autolb::layout::emit::cime_lines;
use autolb::layout::ranked::Rated;
use autolb::layout::search::Best;
use autolb::predict::on_layout::TreePrediction;

use super::effect::{Effect, Outcome};
use super::event::Event;
use super::keys::{Action, KeyTable, BINDINGS};
use super::view::help::two_columns;

/// The file `y` writes the `./xmlchange` lines to, in the app's output directory.
pub const CIME_FILE: &str = "cime-xmlchange.sh";

/// The layout screen's state.
pub struct LayoutScreen {
    prediction: TreePrediction,
    /// TTS_w in hundredths, as the main screen's slider keeps it.
    tts_w_pct: u8,
    rows: Vec<Rated>,
    selected: usize,
    keys: KeyTable,
    out_dir: PathBuf,
    /// Where the app was started: written paths are said relative to it.
    pub cwd: Option<PathBuf>,
    title: String,
    message: Option<String>,
    error: Option<String>,
    help: bool,
    /// Set when the user quits.
    pub quit: bool,
}

impl LayoutScreen {
    /// The screen on `prediction`, ranked at its settings' TTS_w.
    pub fn new(
        prediction: TreePrediction,
        keys: KeyTable,
        out_dir: PathBuf,
        title: String,
    ) -> LayoutScreen {
        let tts_w_pct = (prediction.settings.tts_w * 100.0)
            .round()
            .clamp(0.0, 100.0) as u8;
        let mut screen = LayoutScreen {
            prediction,
            tts_w_pct,
            rows: Vec::new(),
            selected: 0,
            keys,
            out_dir,
            cwd: None,
            title,
            message: None,
            error: None,
            help: false,
            quit: false,
        };
        screen.rerank();
        screen
    }

    /// The slider's TTS_w.
    pub fn tts_w(&self) -> f64 {
        f64::from(self.tts_w_pct) / 100.0
    }

    fn rerank(&mut self) {
        self.rows = self.prediction.top(self.tts_w());
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn move_tts(&mut self, by: i16) {
        let pct = (i16::from(self.tts_w_pct) + by).clamp(0, 100) as u8;
        if pct != self.tts_w_pct {
            self.tts_w_pct = pct;
            self.rerank();
        }
    }

    /// Applies one event; returns the work it leaves for the loop, if any.
    pub fn update(&mut self, event: Event) -> Option<Effect> {
        match event {
            Event::Key(key) => return self.keys.action(&key).and_then(|a| self.apply(a)),
            Event::Done(outcome) => self.on_outcome(outcome),
            Event::Signal(sig) => {
                self.message = Some(format!("signal {sig}: quitting"));
                self.quit = true;
            }
            Event::InputClosed(reason) => {
                self.error = Some(format!("terminal input closed: {reason}"));
                self.quit = true;
            }
            _ => {}
        }
        None
    }

    fn on_outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::TextWritten { what, path } => {
                self.error = None;
                self.message = Some(super::emit::written_message(
                    &path,
                    &what,
                    self.cwd.as_deref(),
                ));
            }
            Outcome::Failed(e) => self.error = Some(e),
            _ => {}
        }
    }

    /// Performs an action; the keys the screen has no use for do nothing.
    pub fn apply(&mut self, action: Action) -> Option<Effect> {
        if self.help && matches!(action, Action::Back | Action::Help) {
            self.help = false;
            return None;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.help = true,
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => {
                self.selected = (self.selected + 1).min(self.rows.len().saturating_sub(1))
            }
            Action::Home => self.selected = 0,
            Action::End => self.selected = self.rows.len().saturating_sub(1),
            Action::TtsUp => self.move_tts(5),
            Action::TtsDown => self.move_tts(-5),
            Action::TtsFineUp | Action::Right => self.move_tts(1),
            Action::TtsFineDown | Action::Left => self.move_tts(-1),
            Action::EmitEcearth4 => return self.emit(),
            _ => {}
        }
        None
    }

    /// `y`: the selected placement's `./xmlchange` lines, as `predict --emit cime` writes them.
    fn emit(&mut self) -> Option<Effect> {
        let Some(row) = self.rows.get(self.selected) else {
            self.error = Some("./xmlchange lines not written: no placement is ranked".into());
            return None;
        };
        let text = format!(
            "# autolb tui: rank {} by fittingness at TTS_w {:.2}\n{}",
            self.selected + 1,
            self.tts_w(),
            cime_lines(&self.prediction.layout, &Best::from(row))
        );
        Some(Effect::WriteText {
            path: self.out_dir.join(CIME_FILE),
            text,
            what: format!("./xmlchange lines of rank {}", self.selected + 1),
        })
    }

    /// Draws the screen: a pure function of the state.
    pub fn draw(&self, frame: &mut Frame) {
        let [head, slider, body, foot] = Areas::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let tree = &self.prediction.layout;
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "{}: {tree} within {} cores",
                    self.title, self.prediction.settings.max_nproc
                ),
                bold,
            )),
            head,
        );
        frame.render_widget(Paragraph::new(self.slider_line(slider.width)), slider);
        let lines = if self.help {
            self.help_lines(body.width)
        } else {
            self.table_lines()
        };
        frame.render_widget(Paragraph::new(lines), body);
        let status = match (&self.error, &self.message) {
            (Some(e), _) => Line::styled(e.clone(), Style::default().add_modifier(Modifier::BOLD)),
            (None, Some(m)) => Line::raw(m.clone()),
            (None, None) => Line::raw(self.hint_text()),
        };
        frame.render_widget(Paragraph::new(status), foot);
    }

    fn slider_line(&self, width: u16) -> String {
        let label = format!("TTS_w {:.2} ", self.tts_w());
        let ends = ("cost ", " speed");
        let room = usize::from(width)
            .saturating_sub(label.len() + ends.0.len() + ends.1.len() + 2)
            .max(2);
        let at = (room - 1) * usize::from(self.tts_w_pct) / 100;
        let bar: String = (0..room).map(|i| if i == at { '|' } else { '-' }).collect();
        format!("{label}{}[{bar}]{}", ends.0, ends.1)
    }

    fn table_lines(&self) -> Vec<Line<'static>> {
        let names = self.prediction.layout.components();
        let threaded = self.prediction.threaded;
        let mut head = format!(
            "  {:>4} {:>5} {:>6} {:>6} {:>5}",
            "rank", "PEs", "SYPD", "CHSY", "FN"
        );
        for n in &names {
            head.push_str(&format!(" {n:>9}"));
        }
        let mut lines = vec![Line::styled(
            head,
            Style::default().add_modifier(Modifier::UNDERLINED),
        )];
        for (i, row) in self.rows.iter().enumerate() {
            let mark = if i == self.selected { ">" } else { " " };
            let mut text = format!(
                "{mark} {:>4} {:>5} {:>6.2} {:>6.0} {:>5.3}",
                i + 1,
                row.pes,
                row.sypd,
                row.chsy,
                row.fittingness
            );
            for p in &row.placements {
                let cell = if threaded {
                    format!("{}x{}@{}", p.tasks, p.threads, p.root_pe)
                } else {
                    format!("{}@{}", p.tasks, p.root_pe)
                };
                text.push_str(&format!(" {cell:>9}"));
            }
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::styled(text, style));
        }
        let kept = self.prediction.ranking.kept;
        lines.push(Line::raw(""));
        lines.push(Line::raw(format!(
            "top {} of {kept} kept placements by fittingness; cells: MPI tasks{}@first PE",
            self.rows.len(),
            if threaded { " x threads" } else { "" }
        )));
        lines
    }

    /// The keys this screen acts on, as the key table describes them.
    fn help_lines(&self, width: u16) -> Vec<Line<'static>> {
        let mut lines = vec![Line::styled(
            "keys on a layout tree",
            Style::default().add_modifier(Modifier::BOLD),
        )];
        let rows = BINDINGS
            .iter()
            .filter(|b| SCREEN_KEYS.contains(&b.action))
            .map(|b| (self.keys.label(b.action), b.description.to_string()))
            .collect();
        lines.extend(two_columns(rows, usize::from(width)));
        lines
    }

    /// The key table's hints for this screen's keys, and `y` (no hint on the main screen).
    fn hint_text(&self) -> String {
        let mut hints: Vec<String> = BINDINGS
            .iter()
            .filter(|b| SCREEN_KEYS.contains(&b.action))
            .filter_map(|b| Some(format!("{} {}", self.keys.label(b.action), b.hint?)))
            .collect();
        hints.push(format!(
            "{} ./xmlchange lines",
            self.keys.label(Action::EmitEcearth4)
        ));
        hints.join("  ")
    }
}

/// The key table's actions this screen acts on.
const SCREEN_KEYS: &[Action] = &[
    Action::Quit,
    Action::Help,
    Action::Back,
    Action::Up,
    Action::Down,
    Action::Home,
    Action::End,
    Action::TtsUp,
    Action::TtsDown,
    Action::TtsFineUp,
    Action::TtsFineDown,
    Action::EmitEcearth4,
];

/// Draws, then waits for events and redraws after each batch, until the user quits.
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    screen: &mut LayoutScreen,
    rx: &Receiver<Event>,
) -> Result<()>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    terminal.draw(|f| screen.draw(f)).wrap_err("cannot draw")?;
    while !screen.quit {
        let Ok(event) = rx.recv() else {
            break;
        };
        let mut pending = screen.update(event);
        while let Some(effect) = pending {
            pending = screen.update(Event::Done(effect.run()));
        }
        if !screen.quit {
            terminal.draw(|f| screen.draw(f)).wrap_err("cannot draw")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use autolb::config::CampaignFile;
    use ratatui::backend::TestBackend;
    use std::path::Path;

    fn example() -> TreePrediction {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/cesm/campaign.toml");
        let file = CampaignFile::load(&path).unwrap();
        let inputs = file.component_inputs(path.parent().unwrap()).unwrap();
        let tree = file.layout_tree().unwrap().unwrap();
        TreePrediction::new(&tree, &inputs, &file.settings()).unwrap()
    }

    fn screen(out: &Path) -> LayoutScreen {
        LayoutScreen::new(
            example(),
            KeyTable::default(),
            out.to_path_buf(),
            "autolb".into(),
        )
    }

    fn picture(s: &LayoutScreen) -> String {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..24)
            .map(|y| {
                (0..80)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_whole_screen_at_80x24() {
        let dir = tempfile::tempdir().unwrap();
        let s = screen(dir.path());
        insta::assert_snapshot!("layout_80x24", picture(&s));
    }

    #[test]
    fn the_slider_ranks_again_and_y_writes_the_selected_rows_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = screen(dir.path());
        let at_half: Vec<Rated> = s.rows.clone();
        assert_eq!(at_half, s.prediction.top(0.5));
        // Weigh cost only: the ranking is the library's at TTS_w 0.
        for _ in 0..10 {
            s.apply(Action::TtsDown);
        }
        assert_eq!(s.tts_w(), 0.0);
        assert_eq!(s.rows, s.prediction.top(0.0));
        assert_ne!(s.rows, at_half);
        s.apply(Action::Down);
        s.apply(Action::Down);
        assert_eq!(s.selected, 2);
        let effect = s.apply(Action::EmitEcearth4).unwrap();
        let Effect::WriteText { path, text, .. } = effect.clone() else {
            panic!("{effect:?}")
        };
        assert_eq!(path, dir.path().join(CIME_FILE));
        // The same lines as `predict --emit cime` for that placement.
        let want = cime_lines(&s.prediction.layout, &Best::from(&s.rows[2]));
        assert!(text.ends_with(&want), "{text}");
        assert!(text.starts_with("# autolb tui: rank 3 by fittingness at TTS_w 0.00\n"));
        let outcome = effect.run();
        s.update(Event::Done(outcome));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert!(picture(&s).contains(CIME_FILE), "{}", picture(&s));
        // Help lists the screen's keys from the key table; esc closes it.
        s.apply(Action::Help);
        let help = picture(&s).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains("the selected placement's ./xmlchange lines"),
            "{help}"
        );
        s.apply(Action::Back);
        assert!(!picture(&s).contains("keys on a layout tree"));
        s.apply(Action::Quit);
        assert!(s.quit);
    }
}
