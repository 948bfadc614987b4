//! Value parsers and small output helpers used by the command line and the app alike.

use color_eyre::eyre::Result;

use super::error::user;

/// Parses a positive, finite number (seconds, a factor), so a bad value is refused with the
/// other usage errors, before anything starts.
pub fn parse_positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number")),
    }
}

/// Parses `NAME=VALUE` (for `--curve`, `--allowed`, `--nproc`, `--comp`).
pub fn parse_key_value(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, got {s:?}"))?;
    autolb::curve::validate_component_name(k)?;
    if v.is_empty() {
        return Err(format!("{k}= has no value"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// The PEs of a `FLAG NAME=N` argument: a positive whole number, else a user error naming it.
pub(crate) fn parse_pes(flag: &str, name: &str, value: &str) -> Result<u32> {
    value.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
        user(format!(
            "{flag} {name}={value}: give a positive whole number of PEs"
        ))
    })
}
