//! One event type, fed by threads into one channel; the main loop blocks on it and redraws
//! only after an event, so an idle app sleeps.

use std::sync::mpsc::Sender;
use std::thread;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyEvent, KeyEventKind};

use autolb::watch::WatchEvent;

use super::campaign_view::CampaignView;
use super::effect::Outcome;

/// Everything the app reacts to.
#[derive(Debug)]
pub enum Event {
    Key(KeyEvent),
    Resize,
    /// The slow tick: time moves on ("last scan N s ago").
    Tick(SystemTime),
    /// The watcher scanned (with the time of the scan).
    Watch(WatchEvent, SystemTime),
    /// The iteration table was reloaded.
    Campaign(Box<CampaignView>),
    /// The event loop ran an effect the app asked for (see [`super::effect`]).
    Done(Outcome),
    /// SIGTERM, SIGHUP or SIGINT: end cleanly.
    Signal(i32),
    /// The terminal went away (a dropped ssh session): end instead of spinning.
    InputClosed(String),
    /// The demo campaign stopped with an error.
    DemoError(String),
}

/// Reads the terminal on its own thread. A read error (the terminal is gone) ends the app.
pub fn spawn_input(tx: Sender<Event>) {
    let _ = thread::Builder::new()
        .name("autolb-input".into())
        .spawn(move || loop {
            let event = match crossterm::event::read() {
                Ok(crossterm::event::Event::Key(k)) if k.kind != KeyEventKind::Release => {
                    Event::Key(k)
                }
                Ok(crossterm::event::Event::Resize(_, _)) => Event::Resize,
                Ok(_) => continue,
                Err(e) => {
                    let _ = tx.send(Event::InputClosed(e.to_string()));
                    return;
                }
            };
            if tx.send(event).is_err() {
                return;
            }
        });
}

/// Sends a tick every `period`.
pub fn spawn_tick(tx: Sender<Event>, period: Duration) {
    let _ = thread::Builder::new()
        .name("autolb-tick".into())
        .spawn(move || loop {
            thread::sleep(period);
            if tx.send(Event::Tick(SystemTime::now())).is_err() {
                return;
            }
        });
}

/// Forwards SIGTERM, SIGHUP and SIGINT as events. In raw mode Ctrl-C arrives as a key, so a
/// SIGINT comes from `kill -INT`: it too ends the app through the normal path, which restores
/// the terminal (main screen, cooked mode) instead of dying raw on the alternate screen.
pub fn spawn_signals(tx: Sender<Event>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])?;
    thread::Builder::new()
        .name("autolb-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let _ = tx.send(Event::Signal(sig));
            }
        })?;
    Ok(())
}
