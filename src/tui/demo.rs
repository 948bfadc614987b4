//! The built-in demo: a live campaign (the demo campaign file of `autolb::campaign::demo`, run
//! by the `sim` stand-in model) in a temporary directory, driven on a background thread. The
//! app watches its directory like any other campaign: nothing in the app knows it is a demo.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::Duration;

use autolb::campaign::{self, DriveOptions, DriveOutcome};

use super::event::Event;

/// Real seconds per modelled second of the stand-in model: with two runs at a time a run lands
/// about every 10 s and the campaign lasts about 2 minutes (13 runs, 127 s measured), long
/// enough to watch the table fill in, the best move and the driver's heartbeat.
pub const DEMO_COMPRESSION: f64 = 1.0;

/// Runs at a time in the demo.
const DEMO_JOBS: usize = 2;

/// The running demo campaign. Dropping it stops the driver (waiting briefly) and removes the
/// directory.
pub struct Demo {
    root: tempfile::TempDir,
    campaign: PathBuf,
    stop: Arc<AtomicBool>,
    finished: mpsc::Receiver<()>,
}

impl Demo {
    /// The campaign directory (watched by the app).
    pub fn dir(&self) -> &Path {
        &self.campaign
    }

    /// The demo campaign file (curves and settings the app shows).
    pub fn campaign_file(&self) -> PathBuf {
        self.root.path().join("demo-campaign.toml")
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.finished.recv_timeout(Duration::from_secs(3));
    }
}

/// Creates the demo campaign in a new temporary directory and starts driving it; a driver
/// error reaches the app as [`Event::DemoError`].
pub fn start(tx: Sender<Event>, compression: f64) -> Result<Demo, String> {
    let root = tempfile::Builder::new()
        .prefix("autolb-demo-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let campaign =
        campaign::demo::init_demo(root.path(), Some(compression)).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, finished) = mpsc::channel();
    let thread_stop = Arc::clone(&stop);
    let dir = campaign.clone();
    std::thread::Builder::new()
        .name("autolb-demo".into())
        .spawn(move || {
            let options = DriveOptions {
                jobs: Some(DEMO_JOBS),
                ..DriveOptions::default()
            };
            match campaign::drive(&dir, &options, &thread_stop) {
                Ok(DriveOutcome::Done { .. } | DriveOutcome::Stopped | DriveOutcome::Cancelled) => {
                }
                Err(e) => {
                    let _ = tx.send(Event::DemoError(format!("demo campaign: {e}")));
                }
            }
            let _ = done_tx.send(());
        })
        .map_err(|e| format!("cannot start the demo thread: {e}"))?;
    Ok(Demo {
        root,
        campaign,
        stop,
        finished,
    })
}
