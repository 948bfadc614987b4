//! The error kind both front ends share: bad input from the user, reported as one line and
//! exit code 2 (anything else is a bug, exit code 1, with a full report).

use color_eyre::eyre;

/// Bad input from the user: reported as one line, exit code 2.
#[derive(Debug)]
pub struct UserError(pub String);

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UserError {}

/// Wraps any displayable error as bad input.
pub fn user(e: impl std::fmt::Display) -> eyre::Report {
    eyre::Report::new(UserError(e.to_string()))
}

/// An outcome with its own exit code and a one-line message (no report, no backtrace): a busy
/// campaign, a run that is not waiting, a campaign that is done, an expected model failure.
/// The codes are listed in the guide's reference page *Exit codes*.
#[derive(Debug)]
pub struct Coded {
    pub code: u8,
    pub message: String,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

/// The exit codes besides 0 (success), 1 (unexpected failure) and 2 (bad input).
pub mod exit {
    /// Another process held the campaign lock for longer than the wait.
    pub const BUSY: u8 = 3;
    /// The run asked for is not waiting: already recorded, or its test has finished.
    pub const NOT_WAITING: u8 = 4;
    /// The campaign is done (or cancelled): nothing more will run.
    pub const DONE: u8 = 5;
    /// Not yet: the iteration asked for has not started, or (`campaign wait`) is not fully
    /// recorded within the timeout.
    pub const NOT_READY: u8 = 6;
}

/// An outcome with exit code `code` and a one-line message.
pub fn coded(code: u8, message: impl Into<String>) -> eyre::Report {
    eyre::Report::new(Coded {
        code,
        message: message.into(),
    })
}
