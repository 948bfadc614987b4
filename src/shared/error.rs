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
