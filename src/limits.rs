//! The documented limits on every size a user controls, in one place (the guide's reference page *Limits*).
//! Each is checked up front with an error that names the setting; none is near what a real
//! coupled-model campaign needs, all are far below what would exhaust memory or overflow.
//!
//! Every limit is defined here. The module that checks one re-exports it ([`crate::predict`]
//! the candidates, top N, grid, search work and total PEs, [`crate::curve`] the component-name
//! length, [`crate::fsutil`] and [`crate::timing`] the file sizes), so both paths name the
//! same value.

/// Longest coupling period (`period_s`, `--period`): one day. EC-Earth3 couples every 2700 s.
pub const MAX_PERIOD_S: f64 = 86_400.0;

/// Runs per test and iteration (`repetitions`): a measurement is repeated a few times.
pub const MAX_REPETITIONS: u32 = 100;

/// lb-iterations of one campaign (`max_iterations`): published campaigns take about 5.
pub const MAX_ITERATIONS: u32 = 1_000;

/// Extra attempts of a failed run (`[executor] retries`): a run that failed this often will
/// not succeed on its own, and each attempt keeps its directory.
pub const MAX_RETRIES: u32 = 100;

/// Most runs a driver starts at a time (`--jobs`, `[executor] jobs`).
pub const MAX_JOBS: usize = 4096;

/// Coupling steps of one stand-in run (`steps`, `simulate --steps`): 100,000 steps are
/// about 8.6 simulated years at 2700 s and rank files of some ten megabytes each.
pub const MAX_SIM_STEPS: u32 = 100_000;

/// Largest time compression (`compression`, `--compress`, `--demo-compression`): real seconds
/// per modelled second.
pub const MAX_COMPRESSION: f64 = 1_000.0;

/// Longest interval between polls of a watcher (`--poll-interval`): one hour.
pub const MAX_POLL_INTERVAL_S: f64 = 3_600.0;

/// Most components a prediction balances (the paper's set-ups have two or three).
pub const MAX_COMPONENTS: usize = 5;

/// Most candidate PE counts of one component within the budget (after the step or allowed
/// list): 100,000, far beyond any machine a coupled model runs on at step 1, yet small enough
/// that a typo in a curve (`480000000,20`) is refused at once instead of running for minutes.
pub const MAX_CANDIDATES: u64 = 100_000;

/// Most configurations to propose (`--top`): a ranked list is read by people.
pub const MAX_TOP: usize = 10_000;

/// Most cells of a 2-D slice ([`crate::predict::Problem::grid`], the app's matrix): 4 million (2000 x 2000
/// candidates, some 160 MB of cells).
pub const MAX_GRID_CELLS: u64 = 4_000_000;

/// Bound on the exact search's work with three or more components (see [`crate::predict::search`]): the PE-sum
/// convolution costs about candidates x (budget / unit) x candidates elementary steps.
pub const MAX_SEARCH_WORK: u64 = 4_000_000_000;

/// Most PEs a configuration may take in all (budget plus extra PEs): 100 million, ten times
/// the largest machines, and a bound that keeps every sum of up to [`MAX_COMPONENTS`] PE
/// counts within u32.
pub const MAX_TOTAL_PES: u32 = 100_000_000;

/// Component names end up in file names, job scripts and shell variables: keep them tame.
/// Longest component name (and name in the timing output) autolb accepts.
pub const MAX_COMPONENT_NAME: usize = 64;

/// The largest timing file autolb reads (64 MiB): the text reports are a few kilobytes, a raw
/// LUCIA rank file of a century-long run a few megabytes.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The largest curve, configuration or key file autolb reads (4 MiB): each is a few kilobytes.
pub const MAX_SMALL_FILE_BYTES: u64 = 4 << 20;

/// A number for an error message: as written for everyday sizes, in exponent form
/// (`1e308`, `2.5e-12`) when plain digits would run long.
pub fn display_number(value: f64) -> String {
    let magnitude = value.abs();
    if !value.is_finite() || value == 0.0 {
        return value.to_string();
    }
    if !(1e-4..1e15).contains(&magnitude) {
        return format!("{value:e}");
    }
    // Six decimals at most: binary noise (`198.06799999999998`) is not the user's value.
    let fixed = format!("{value:.6}");
    fixed
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

/// A user's value for an error message, cut to its first 60 characters with `...` when it is
/// longer, so a huge name does not flood the terminal.
pub fn display_value(value: &str) -> String {
    const SHOWN: usize = 60;
    match value.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!(
            "{}... ({} characters)",
            &value[..cut],
            value.chars().count()
        ),
        None => value.to_string(),
    }
}

/// Checks a number of seconds (or a factor): finite, positive (or zero when `zero_ok`) and at
/// most `max`, so it can become a `Duration` and be added to an `Instant` without a panic.
/// The error names `what` and says the limit.
pub fn check_seconds(what: &str, value: f64, max: f64, zero_ok: bool) -> Result<f64, String> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(value.is_finite() && low_ok) {
        let kind = if zero_ok { ">= 0" } else { "positive" };
        return Err(format!(
            "{what} {} is not a {kind} finite number",
            display_number(value)
        ));
    }
    if value > max {
        return Err(format!(
            "{what} {} is more than the limit of {max}",
            display_number(value)
        ));
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
        assert!(e.contains(" 1e308 ") && e.len() < 100, "{e}");
        assert!(check_seconds("x", f64::NAN, 1.0, true).is_err());
        assert!(check_seconds("x", 0.0, 1.0, false).is_err());
        assert_eq!(check_seconds("x", 0.0, 1.0, true), Ok(0.0));
        assert!(check_seconds("x", -1.0, 1.0, true).is_err());
    }

    #[test]
    fn long_numbers_and_values_are_shortened_for_messages() {
        assert_eq!(display_number(2700.0), "2700");
        assert_eq!(display_number(-0.092), "-0.092");
        assert_eq!(display_number(1e308), "1e308");
        assert_eq!(display_number(103.033 + 95.035), "198.068");
        assert_eq!(display_number(2.5e-12), "2.5e-12");
        assert_eq!(display_number(0.0), "0");
        assert_eq!(display_number(f64::INFINITY), "inf");
        assert_eq!(display_value("IFS"), "IFS");
        let long = "x".repeat(100_000);
        let shown = display_value(&long);
        assert!(shown.starts_with(&"x".repeat(60)) && shown.contains("... (100000 characters)"));
        assert!(shown.len() < 90, "{shown}");
        assert_eq!(
            display_value(&"é".repeat(61))
                .chars()
                .filter(|&c| c == 'é')
                .count(),
            60
        );
    }
}
