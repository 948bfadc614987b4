//! Small tolerant text helpers shared by the readers: whitespace that may be tabs, CRLF line
//! ends, Fortran's `****` overflow fields, and lines cut by a writer that is still running.

use std::path::Path;

/// A number field as Fortran wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Field {
    Value(f64),
    /// `****`: the value did not fit its field.
    Overflow,
    /// Not a number at all.
    Bad,
}

/// Parses a number field: `1700000001.22975`, `-3.5`, `1e3`, `****`.
pub(crate) fn number(token: &[u8]) -> Field {
    if token.is_empty() {
        return Field::Bad;
    }
    if token.iter().all(|&b| b == b'*') {
        return Field::Overflow;
    }
    if let Some(v) = fixed_point(token) {
        return Field::Value(v);
    }
    match std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        Some(v) if v.is_finite() => Field::Value(v),
        _ if token.contains(&b'*') => Field::Overflow,
        _ => Field::Bad,
    }
}

/// Fast path for the common `DDDD.DDDDD` form (no sign, no exponent, at most 18 digits).
fn fixed_point(token: &[u8]) -> Option<f64> {
    let mut mantissa: u64 = 0;
    let mut digits = 0u32;
    let mut frac_digits: Option<u32> = None;
    for &b in token {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 18 {
                    return None;
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                if let Some(f) = frac_digits.as_mut() {
                    *f += 1;
                }
            }
            b'.' if frac_digits.is_none() => frac_digits = Some(0),
            _ => return None,
        }
    }
    if digits == 0 {
        return None;
    }
    // A mantissa below 2^53 and a power of ten up to 1e18 are both exact doubles, so one
    // division gives the correctly rounded value, the same as `str::parse`.
    if mantissa >= 1 << 53 {
        return None;
    }
    let scale = POW10.get(frac_digits.unwrap_or(0) as usize)?;
    Some(mantissa as f64 / scale)
}

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

/// Splits on spaces and tabs without allocating.
pub(crate) fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty())
}

/// Lines of a file as the reader should see them, with their 1-based numbers: CR stripped, and
/// `cut` set when the last line has no newline (a writer was interrupted inside it).
pub(crate) struct Lines<'a> {
    rest: &'a [u8],
    number: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Lines<'a> {
        Lines {
            rest: bytes,
            number: 0,
        }
    }
}

/// The complete, non-blank lines of a small text report (`lucia.log`, OASIS 5's
/// `load_balancing_info.txt`), trimmed, with their 1-based numbers; and a note when the file
/// ends in the middle of a line, as a job still writing it leaves it.
pub(crate) fn complete_trimmed_lines(
    bytes: &[u8],
    path: &Path,
) -> (Vec<(usize, String)>, Option<String>) {
    let mut lines = Vec::new();
    for line in Lines::new(bytes) {
        if !line.complete {
            return (lines, line.cut(path.display()));
        }
        let text = String::from_utf8_lossy(line.text);
        let trimmed = text.trim();
        if !trimmed.is_empty() {
            lines.push((line.number, trimmed.to_string()));
        }
    }
    (lines, None)
}

/// One line and whether it ended with a newline.
pub(crate) struct Line<'a> {
    pub number: usize,
    pub text: &'a [u8],
    pub complete: bool,
}

impl Line<'_> {
    /// The note for a line a writer was interrupted in: `Some` when the line has no newline
    /// and is not blank (a file ending in blanks is whole).
    pub(crate) fn cut(&self, file: impl std::fmt::Display) -> Option<String> {
        (!self.complete && !self.text.iter().all(u8::is_ascii_whitespace))
            .then(|| cut_note(file, self.number))
    }
}

/// `FILE ends in the middle of line N`: the reason a half-written file is read only in part.
pub(crate) fn cut_note(file: impl std::fmt::Display, line: usize) -> String {
    format!("{file} ends in the middle of line {line}")
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;
    fn next(&mut self) -> Option<Line<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        self.number += 1;
        let (mut text, complete) = match self.rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                let t = &self.rest[..i];
                self.rest = &self.rest[i + 1..];
                (t, true)
            }
            None => {
                let t = self.rest;
                self.rest = &[];
                (t, false)
            }
        };
        if let [head @ .., b'\r'] = text {
            text = head;
        }
        Some(Line {
            number: self.number,
            text,
            complete,
        })
    }
}

/// The slice without leading and trailing ASCII whitespace (spaces, tabs, CR).
pub(crate) fn trim(f: &[u8]) -> &[u8] {
    let start = f
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(f.len());
    let end = f
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &f[start..end.max(start)]
}

/// Text of a byte slice for messages, shortened.
pub(crate) fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number(b"1700000001.22975"), Field::Value(1700000001.22975));
        assert_eq!(number(b"12"), Field::Value(12.0));
        assert_eq!(number(b"-3.5"), Field::Value(-3.5));
        assert_eq!(number(b"1e3"), Field::Value(1000.0));
        assert_eq!(number(b"****************"), Field::Overflow);
        assert_eq!(number(b"12**"), Field::Overflow);
        assert_eq!(number(b"abc"), Field::Bad);
        assert_eq!(number(b"."), Field::Bad);
        assert_eq!(number(b""), Field::Bad);
        assert_eq!(number(b"inf"), Field::Bad);
        // The fast path agrees with the standard parser.
        for s in ["0.5", "1700000064.16578", "999.999", "12345678901.2345"] {
            assert_eq!(
                number(s.as_bytes()),
                Field::Value(s.parse().unwrap()),
                "{s}"
            );
        }
    }

    #[test]
    fn lines_strip_cr_and_flag_a_cut_last_line() {
        let lines: Vec<_> = Lines::new(b"a\r\nb\nc").collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].text, b"a");
        assert!(lines[1].complete);
        assert_eq!(lines[2].text, b"c");
        assert!(!lines[2].complete);
        assert_eq!(lines[2].number, 3);
        assert_eq!(Lines::new(b"").count(), 0);
    }

    #[test]
    fn tokens_split_on_tabs_and_spaces() {
        let t: Vec<_> = tokens(b"Balance:\t001  After  MPI put").collect();
        assert_eq!(t, vec![&b"Balance:"[..], b"001", b"After", b"MPI", b"put"]);
    }
}
