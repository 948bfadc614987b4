//! The one way the command line writes: stdout through [`outln!`]/[`out!`]/[`write_out`],
//! which return an error instead of panicking, and stderr through [`errln!`], which never
//! fails (a closed stderr leaves nothing to report to).
//!
//! A failed stdout write becomes an [`OutputError`] in the command's error; `main` alone
//! decides what it means: a closed pipe (`autolb predict | head -1`) ends quietly with 141,
//! any other failure (a full disk) is one line and exit code 2.

use std::io::{self, Write};

use color_eyre::eyre;

/// Writing the command's output to stdout failed.
#[derive(Debug)]
pub struct OutputError(pub io::Error);

impl OutputError {
    /// True when the reader has gone (`| head`): not an error worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // "No space left on device", without the "(os error 28)" the user has no use for.
        let text = self.0.to_string();
        let text = match text.rfind(" (os error ") {
            Some(i) if text.ends_with(')') => &text[..i],
            _ => text.as_str(),
        };
        write!(f, "error writing output: {text}")
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// An I/O error from writing stdout, as the command's error.
pub fn output_error(e: io::Error) -> eyre::Report {
    eyre::Report::new(OutputError(e))
}

/// Writes formatted text to stdout (what [`out!`] and [`outln!`] expand to).
pub fn write_fmt(args: std::fmt::Arguments<'_>) -> eyre::Result<()> {
    io::stdout().lock().write_fmt(args).map_err(output_error)
}

/// Writes text to stdout.
pub fn write_out(text: &str) -> eyre::Result<()> {
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(output_error)
}

/// Writes `value` to stdout as pretty JSON and a newline, streamed: a large campaign's status
/// is hundreds of megabytes of text, never built in memory whole.
pub fn write_json(value: &impl serde::Serialize) -> eyre::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
        if e.is_io() {
            output_error(io::Error::from(e))
        } else {
            eyre::Report::new(e)
        }
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(output_error)
}

/// Writes any pending output; `main` calls it once after the command, so that an error in the
/// last buffered line is seen too.
pub fn flush() -> eyre::Result<()> {
    io::stdout().lock().flush().map_err(output_error)
}

/// Writes one line to stderr; a closed or full stderr is ignored (there is nowhere to say so).
pub fn write_err(args: std::fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `print!` that returns `eyre::Result<()>` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::shared::output::write_fmt(format_args!($($arg)*))
    };
}

/// `println!` that returns `eyre::Result<()>` instead of panicking.
macro_rules! outln {
    () => {
        $crate::shared::output::write_out("\n")
    };
    ($($arg:tt)*) => {
        $crate::shared::output::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::shared::output::write_err(format_args!($($arg)*))
    };
}

pub(crate) use {errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_reads_as_one_plain_line() {
        let e = OutputError(io::Error::from_raw_os_error(28));
        assert_eq!(
            e.to_string(),
            "error writing output: No space left on device"
        );
        assert!(!e.is_broken_pipe());
    }

    #[test]
    fn a_closed_pipe_is_recognised() {
        let e = OutputError(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(e.is_broken_pipe());
    }
}
