//! What the app asks the event loop to do outside itself. `App::apply` never touches the file
//! system: a key that writes or reads files (`w`, `R`, `y`, `l`) returns an [`Effect`] carrying a copy of what to
//! write; the loop runs it and hands the [`Outcome`] back as an event, which the app turns into
//! its status line. Tests of the keys look at the returned effect; running it is separate.

use std::path::PathBuf;

use super::logs::{self, RunLogs};
use super::report::{self, ReportJob};
use super::selection::{self, Selection, SelectionSource, Written};

/// Where the app's files go, and what a written campaign file is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub selection_source: SelectionSource,
    pub out_dir: PathBuf,
    /// The directory the app was started in, when known: paths under it are said relative to
    /// it on the status line.
    pub cwd: Option<PathBuf>,
}

/// Work for the event loop.
#[derive(Debug, Clone)]
pub enum Effect {
    /// `w`: the selection as a campaign start file and JSON.
    WriteSelection {
        selection: Box<Selection>,
        /// What was selected, for the status line (`top 5`, `2 marked`).
        from: String,
    },
    /// `R`: the report of what is shown.
    WriteReport(Box<ReportJob>),
    /// `l`: what a row's runs wrote, to page (`title` names the row).
    ReadLogs { title: String, runs: Vec<RunLogs> },
    /// `y`: a text made by the app (the EC-Earth4 fragment), written atomically to `path`;
    /// `what` names it for the status line.
    WriteText {
        path: PathBuf,
        text: String,
        what: String,
    },
}

/// What running an effect came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    SelectionWritten {
        from: String,
        written: Written,
    },
    ReportWritten(PathBuf),
    /// A [`Effect::WriteText`] text was written: what it is, and where.
    TextWritten {
        what: String,
        path: PathBuf,
    },
    /// The pager's title and lines.
    Logs {
        title: String,
        lines: Vec<String>,
    },
    /// The effect failed; the text says what and why, for the status line.
    Failed(String),
}

impl Effect {
    /// Runs the effect (the only place the app's keys write files).
    pub fn run(self) -> Outcome {
        match self {
            Effect::WriteSelection { selection, from } => match selection::write(&selection) {
                Ok(written) => Outcome::SelectionWritten { from, written },
                Err(e) => Outcome::Failed(format!("write failed: {e}")),
            },
            Effect::WriteReport(job) => match report::write(&job) {
                Ok(path) => Outcome::ReportWritten(path),
                Err(e) => Outcome::Failed(format!("report failed: {e}")),
            },
            Effect::WriteText { path, text, what } => {
                match autolb::fsutil::write_atomically(&path, text.as_bytes()) {
                    Ok(()) => Outcome::TextWritten { what, path },
                    Err(e) => Outcome::Failed(format!("{}: write failed: {e}", path.display())),
                }
            }
            Effect::ReadLogs { title, runs } => Outcome::Logs {
                title,
                lines: logs::read(&runs),
            },
        }
    }
}
