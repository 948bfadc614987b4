//! The app opened on a campaign that measures its curves (a scaling campaign or a cold start)
//! before every component has two measured PE counts: there is nothing to rank yet, and the
//! panes are drawn from the curves. Rather than refuse, the app shows the campaign as
//! `autolb campaign status` does (the same text, so the same truth) and opens its panes once
//! every curve file can be read. A user who starts the app with the campaign, as one watching
//! from a login node does, then sees it fill in without starting the app again.

use std::path::Path;
use std::time::Duration;

use crossterm::event::{self as term_event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use autolb::campaign::State;
use autolb::curve::Curve;

use super::keys::{Action, KeyTable};

/// How the wait ended.
#[derive(Debug, PartialEq)]
pub enum Waited {
    /// Every curve can be read: open the app.
    Ready,
    /// The user quit before.
    Quit,
}

/// The components of the campaign in `dir` whose curve file cannot be read yet, because the
/// campaign measures its curves and has not measured them at two PE counts. Empty when the
/// app can open, or when something else is wrong (the app's usual errors then say what).
pub fn curves_pending(dir: &Path) -> Vec<String> {
    let Ok(state) = State::load(dir) else {
        return Vec::new();
    };
    if !state.measures_curves() {
        return Vec::new();
    }
    state
        .components
        .iter()
        .filter(|c| Curve::load(c.name.clone(), &dir.join(&c.curve)).is_err())
        .map(|c| c.name.clone())
        .collect()
}

/// The waiting screen: what it waits for, the campaign's status text, and how to leave.
/// A pure function of what it is given.
pub fn draw(frame: &mut Frame, dir: &Path, pending: &[String], status: &str, quit: &str) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let head_text = vec![
        Line::styled(
            format!("autolb · campaign {}", dir.display()),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::raw(format!(
            "waiting for the curves of {} (two measured PE counts each); then the panes open",
            pending.join(", ")
        )),
    ];
    frame.render_widget(Paragraph::new(head_text).wrap(Wrap { trim: false }), head);
    let lines: Vec<Line> = status.lines().map(Line::raw).collect();
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(
        Paragraph::new(Line::raw(format!(
            "{quit} quit · refreshes every second, as `autolb campaign status` prints it"
        ))),
        foot,
    );
}

/// The campaign's status as `autolb campaign status DIR` prints it at `width` columns, or
/// why it cannot be read right now (a state file being replaced is read again next time).
pub fn status_text(dir: &Path, width: usize) -> String {
    match autolb::campaign::status_with_driver(dir) {
        Ok((status, driver)) => status.render(&driver, dir, width),
        Err(e) => format!("cannot read the campaign right now: {e}"),
    }
}

/// Shows the waiting screen until every curve of the campaign in `dir` can be read, or the
/// user quits (the key table's quit keys, or Ctrl-C). Takes the terminal and gives it back.
pub fn wait(dir: &Path, keys: &KeyTable) -> color_eyre::Result<Waited> {
    let mut terminal = ratatui::try_init()?;
    let _restore = super::RestoreGuard;
    let quit = keys.label(Action::Quit);
    loop {
        let pending = curves_pending(dir);
        if pending.is_empty() {
            return Ok(Waited::Ready);
        }
        let width = terminal.size()?.width as usize;
        let status = status_text(dir, width);
        terminal.draw(|f| draw(f, dir, &pending, &status, &quit))?;
        if term_event::poll(Duration::from_secs(1))? {
            if let term_event::Event::Key(key) = term_event::read()? {
                let ctrl_c =
                    key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if key.kind == KeyEventKind::Press
                    && (ctrl_c || keys.action(&key) == Some(Action::Quit))
                {
                    return Ok(Waited::Quit);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn cold_start(dir: &Path) {
        let file: autolb::config::CampaignFile = toml::from_str(include_str!(
            "../../tests/fixtures/campaigns/cold_start.toml"
        ))
        .unwrap();
        autolb::campaign::init(dir, &file, dir.parent().unwrap(), false).unwrap();
    }

    #[test]
    fn a_cold_start_before_its_first_runs_waits_for_every_curve_and_shows_its_status() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("camp");
        cold_start(&dir);
        assert_eq!(curves_pending(&dir), ["IFS", "NEMO"]);
        let status = status_text(&dir, 80);
        assert!(status.contains("cold start, phase scaling"), "{status}");
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal
            .draw(|f| draw(f, &dir, &curves_pending(&dir), &status, "q"))
            .unwrap();
        let screen: Vec<String> = terminal
            .backend()
            .buffer()
            .content()
            .chunks(80)
            .map(|row| row.iter().map(|c| c.symbol()).collect())
            .collect();
        let all = screen.join("\n");
        assert!(
            all.contains("waiting for the curves of IFS, NEMO (two measured PE counts each)"),
            "{all}"
        );
        assert!(all.contains("pending"), "{all}");
        assert!(screen[23].starts_with("q quit"), "{all}");
    }

    #[test]
    fn a_curve_file_with_two_counts_is_no_longer_waited_for() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("camp");
        cold_start(&dir);
        let state = State::load(&dir).unwrap();
        let ifs = dir.join(&state.components[0].curve);
        std::fs::create_dir_all(ifs.parent().unwrap()).unwrap();
        std::fs::write(&ifs, "nproc,SYPD\n48,3.2\n288,15.5\n").unwrap();
        assert_eq!(curves_pending(&dir), ["NEMO"]);
    }

    #[test]
    fn a_campaign_with_curves_or_no_campaign_is_not_waited_for() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(curves_pending(tmp.path()).is_empty());
        let other = tempfile::tempdir().unwrap();
        let demo = autolb::campaign::demo::init_demo(other.path(), Some(0.0)).unwrap();
        assert!(curves_pending(&demo).is_empty());
    }
}
