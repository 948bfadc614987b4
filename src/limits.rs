//! The documented limits on every size a user controls, in one place (README, "Limits").
//! Each is checked up front with an error that names the setting; none is near what a real
//! coupled-model campaign needs, all are far below what would exhaust memory or overflow.
//!
//! Limits that belong to one module live there: candidates, top N, search work and total PEs
//! in [`crate::predict`], component-name length in [`crate::curve`], file sizes in
//! [`crate::fsutil`] and [`crate::timing`].

/// Longest coupling period (`period_s`, `--period`): one day. EC-Earth3 couples every 2700 s.
pub const MAX_PERIOD_S: f64 = 86_400.0;

/// Runs per test and iteration (`repetitions`): a measurement is repeated a few times.
pub const MAX_REPETITIONS: u32 = 100;

/// Coupling steps of one stand-in run (`steps`, `simulate --steps`): 100,000 steps are
/// about 8.6 simulated years at 2700 s and rank files of some ten megabytes each.
pub const MAX_SIM_STEPS: u32 = 100_000;

/// Largest time compression (`compression`, `--compress`, `--demo-compression`): real seconds
/// per modelled second.
pub const MAX_COMPRESSION: f64 = 1_000.0;

/// Longest interval between polls of a watcher (`--poll-interval`): one hour.
pub const MAX_POLL_INTERVAL_S: f64 = 3_600.0;

/// Checks a number of seconds (or a factor): finite, positive (or zero when `zero_ok`) and at
/// most `max`, so it can become a `Duration` and be added to an `Instant` without a panic.
/// The error names `what` and says the limit.
pub fn check_seconds(what: &str, value: f64, max: f64, zero_ok: bool) -> Result<f64, String> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(value.is_finite() && low_ok) {
        let kind = if zero_ok { ">= 0" } else { "positive" };
        return Err(format!("{what} {value} is not a {kind} finite number"));
    }
    if value > max {
        return Err(format!("{what} {value} is more than the limit of {max}"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_finite_positive_and_bounded() {
        assert_eq!(
            check_seconds("period_s", 2700.0, MAX_PERIOD_S, false),
            Ok(2700.0)
        );
        let e = check_seconds("period_s", 1e308, MAX_PERIOD_S, false).unwrap_err();
        assert!(e.contains("period_s") && e.contains("86400"), "{e}");
        assert!(check_seconds("x", f64::NAN, 1.0, true).is_err());
        assert!(check_seconds("x", 0.0, 1.0, false).is_err());
        assert_eq!(check_seconds("x", 0.0, 1.0, true), Ok(0.0));
        assert!(check_seconds("x", -1.0, 1.0, true).is_err());
    }
}
