//! Value parsers used by the command line and the app alike.

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

/// Parses a coupling period in seconds: positive and at most a day
/// ([`autolb::limits::MAX_PERIOD_S`]).
pub fn parse_period(s: &str) -> Result<f64, String> {
    let v = parse_positive(s)?;
    autolb::limits::check_seconds("the period", v, autolb::limits::MAX_PERIOD_S, false)
}

/// Parses seconds between polls: positive and at most an hour.
pub fn parse_poll_interval(s: &str) -> Result<f64, String> {
    let v = parse_positive(s)?;
    autolb::limits::check_seconds(
        "the poll interval",
        v,
        autolb::limits::MAX_POLL_INTERVAL_S,
        false,
    )
}

/// Parses a time compression (real seconds per modelled second): positive and bounded.
pub fn parse_compression(s: &str) -> Result<f64, String> {
    let v = parse_positive(s)?;
    autolb::limits::check_seconds("the compression", v, autolb::limits::MAX_COMPRESSION, false)
}

/// Refuses a `NAME=VALUE` flag given twice for the same name: the last one must not silently
/// win over the first.
pub(crate) fn reject_repeated_names(flag: &str, pairs: &[(String, String)]) -> Result<()> {
    for (k, (name, value)) in pairs.iter().enumerate() {
        if let Some((_, first)) = pairs[..k].iter().find(|(n, _)| n == name) {
            return Err(user(format!(
                "{flag} {name} is given twice ({name}={first} and {name}={value}); give each \
                 component once"
            )));
        }
    }
    Ok(())
}

/// Parses `--jobs`: runs at a time, at least one (0 would run nothing and wait forever).
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 runs at a time would run nothing; give at least 1".into()),
        Ok(n) if n > MAX_JOBS => Err(format!("{n} is more than the limit of {MAX_JOBS}")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of runs")),
    }
}

/// Most runs a driver starts at a time (the library checks `[executor] jobs` against it too).
pub use autolb::limits::MAX_JOBS;

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

/// The PEs of a `FLAG NAME=N` argument: a positive whole number, else a user error naming it.
pub(crate) fn parse_pes(flag: &str, name: &str, value: &str) -> Result<u32> {
    value.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
        user(format!(
            "{flag} {name}={value}: give a positive whole number of PEs"
        ))
    })
}
