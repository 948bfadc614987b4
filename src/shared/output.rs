//! The one way the command line writes: stdout through [`outln!`]/[`out!`]/[`write_out`],
//! which return an error instead of panicking, and stderr through [`errln!`], which never
//! fails (a closed stderr leaves nothing to report to).
//!
//! A failed stdout write becomes an [`OutputError`] in the command's error; `main` alone
//! decides what it means: a closed pipe (`autolb predict | head -1`) ends quietly with 141,
//! any other failure (a full disk) is one line and exit code 2.
//!
//! Text autolb prints carries names it did not choose (a campaign directory, a component, a
//! path in an error), and a name may hold terminal control sequences: `ESC [ 2 J` clears the
//! screen, a BEL rings, a newline forges a line. So everything written here has its control
//! characters shown escaped ([`escape_controls`]: `\x1b`, `\x07`), line ends and tabs of the
//! text itself kept; a name printed inside a line goes through [`shown`], which escapes its
//! newlines and tabs too (`\n`). The one sequence autolb sends on purpose, the screen clear of
//! `campaign status --watch`, goes through [`write_terminal_control`].

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

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

/// Writes formatted text to stdout (what [`out!`] and [`outln!`] expand to), its control
/// characters escaped.
pub fn write_fmt(args: std::fmt::Arguments<'_>) -> eyre::Result<()> {
    match args.as_str() {
        Some(text) => write_out(text),
        None => write_out(&args.to_string()),
    }
}

/// Writes text to stdout, its control characters escaped.
pub fn write_out(text: &str) -> eyre::Result<()> {
    io::stdout()
        .lock()
        .write_all(escape_controls(text, Keep::LinesAndTabs).as_bytes())
        .map_err(output_error)
}

/// Writes text meant for a program (`campaign next --env` / `--bash`, evaluated by a shell):
/// as it is into a pipe or a file, where a name must stay the bytes it is, and with its
/// control characters escaped on a terminal, where it is only read.
pub fn write_data(text: &str) -> eyre::Result<()> {
    use std::io::IsTerminal;
    if io::stdout().is_terminal() {
        return write_out(text);
    }
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(output_error)
}

/// Writes a terminal control sequence autolb means to send (the screen clear of a watch), as
/// it is.
pub fn write_terminal_control(sequence: &str) -> eyre::Result<()> {
    io::stdout()
        .lock()
        .write_all(sequence.as_bytes())
        .map_err(output_error)
}

/// Which control characters [`escape_controls`] leaves as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Line ends (`\n`) and tabs: the layout of a text autolb wrote.
    LinesAndTabs,
    /// None: a name or a one-line message, where a newline would forge another line.
    Nothing,
}

/// `text` with every control character (C0, DEL and C1, but those `keep` names) shown as an
/// escape: `\n`, `\r`, `\t` and `\x1b`-style for the others; the text itself when it has none.
pub fn escape_controls(text: &str, keep: Keep) -> Cow<'_, str> {
    let kept = |c: char| keep == Keep::LinesAndTabs && (c == '\n' || c == '\t');
    if !text.chars().any(|c| c.is_control() && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !c.is_control() || kept(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// A path (or name) as a line shows it: its control characters, newlines and tabs included,
/// escaped.
pub fn shown(path: impl AsRef<Path>) -> String {
    escape_controls(&path.as_ref().display().to_string(), Keep::Nothing).into_owned()
}

/// Writes any pending output; `main` calls it once after the command, so that an error in the
/// last buffered line is seen too.
pub fn flush() -> eyre::Result<()> {
    io::stdout().lock().flush().map_err(output_error)
}

/// Writes one line to stderr, its control characters escaped; a closed or full stderr is
/// ignored (there is nowhere to say so).
pub fn write_err(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut err = io::stderr().lock();
    let _ = err
        .write_all(escape_controls(&text, Keep::LinesAndTabs).as_bytes())
        .and_then(|()| err.write_all(b"\n"));
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
    fn control_characters_are_shown_escaped() {
        let name = "x\u{1b}[31my\nz\u{7}\u{9b}";
        assert_eq!(shown(name), "x\\x1b[31my\\nz\\x07\\x9b");
        assert_eq!(
            escape_controls("a\tb\nc\u{1b}\r\n", Keep::LinesAndTabs),
            "a\tb\nc\\x1b\\r\n"
        );
        assert!(matches!(
            escape_controls("plain line\n", Keep::LinesAndTabs),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("a\u{7f}", Keep::Nothing), "a\\x7f");
    }

    #[test]
    fn a_closed_pipe_is_recognised() {
        let e = OutputError(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(e.is_broken_pipe());
    }
}
