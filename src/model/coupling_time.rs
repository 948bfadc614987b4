//! A fixed coupling time per coupling step for each component.
//!
//! Every coupling step a component interpolates its fields to the other grids and sends them
//! (OASIS), and that work does not shrink as the component gets more PEs: on the real EC-Earth3
//! SR runs IFS spends 8.6-21.6 s interpolating in a two-month run whatever its PE count, NEMO
//! 0.5-1.2 s. A component's compute seconds do not hold it, so a coupled run paced by a fast
//! IFS is further below its pace-setter than one paced by a slow IFS: the coupling factor falls
//! as the pace-setter gets faster.
//!
//! Model: component `c` takes `tau_c` more wall time per simulated year than its compute speed
//! `s_c` says, `1 / e_c = 1 / s_c + tau_c` ([`effective`]), and the coupled run goes at
//! `k0 * pace(e) / slowdown(e)` ([`super::overhead`]). With the coupling period fixed by the
//! set-up, a time per coupling step is a time per simulated day; the model file keeps it as
//! wall seconds per simulated day ([`per_day`], [`from_per_day`]).
//!
//! Each `tau_c` is fitted on a grid ([`grid`]) together with the overhead's other parameters
//! and kept only if it lowers the overhead fit's BIC on the training runs
//! ([`super::overhead::fit`]): a component whose coupling work is too small to tell from the
//! noise gets none, and with runs that cannot show it (few runs, one pace-setter speed) the
//! model is the one without it.

/// Coupling times tried, as a share of the typical pace-setter's wall time per simulated year
/// (the median over the training runs of the slowest component's `1 / s`); 0 is always tried.
pub const SHARE_GRID: [f64; 10] = [0.01, 0.02, 0.03, 0.045, 0.06, 0.08, 0.1, 0.13, 0.16, 0.2];

/// Seconds in a day, days in a year: `tau` (days per simulated year) = per-day seconds x 365 /
/// 86 400.
const S_PER_DAY: f64 = 86_400.0;
const DAYS_PER_YEAR: f64 = 365.0;

/// The SYPD of a component whose compute speed is `speed` and which spends `tau` days of wall
/// time per simulated year coupling.
pub fn effective(speed: f64, tau: f64) -> f64 {
    if tau <= 0.0 {
        speed
    } else {
        1.0 / (1.0 / speed + tau)
    }
}

/// `tau` (days of wall time per simulated year) as wall seconds per simulated day.
pub fn per_day(tau: f64) -> f64 {
    tau * S_PER_DAY / DAYS_PER_YEAR
}

/// Wall seconds per simulated day as `tau` (days per simulated year).
pub fn from_per_day(seconds: f64) -> f64 {
    seconds * DAYS_PER_YEAR / S_PER_DAY
}

/// The non-zero coupling times (days per simulated year) to try on runs whose components went
/// at `speeds` (one vector per run): [`SHARE_GRID`] times the median pace-setter's time per
/// simulated year. Empty without a finite positive speed.
pub fn grid<'a>(speeds: impl Iterator<Item = &'a [f64]>) -> Vec<f64> {
    let mut paces: Vec<f64> = speeds
        .map(|s| s.iter().copied().fold(f64::INFINITY, f64::min))
        .filter(|p| p.is_finite() && *p > 0.0)
        .collect();
    if paces.is_empty() {
        return Vec::new();
    }
    paces.sort_by(f64::total_cmp);
    let typical = 1.0 / super::check::median_sorted(&paces);
    SHARE_GRID.iter().map(|f| f * typical).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coupling_time_weighs_more_on_a_fast_component() {
        let tau = 0.005;
        let slow = effective(10.0, tau) / 10.0;
        let fast = effective(25.0, tau) / 25.0;
        assert!(fast < slow && slow < 1.0, "{slow} {fast}");
        assert_eq!(effective(10.0, 0.0), 10.0);
        // 1 / 9.5 = 1 / 10 + tau.
        assert!((effective(10.0, 1.0 / 9.5 - 0.1) - 9.5).abs() < 1e-12);
        assert!((from_per_day(per_day(0.0123)) - 0.0123).abs() < 1e-15);
        // 0.2 s per step, 32 steps of 2700 s a day: 6.4 s per simulated day.
        assert!((per_day(from_per_day(6.4)) - 6.4).abs() < 1e-12);
    }

    #[test]
    fn the_grid_scales_with_the_typical_pace_setter() {
        let runs = [vec![10.0, 20.0], vec![30.0, 5.0], vec![8.0, 9.0]];
        let g = grid(runs.iter().map(Vec::as_slice));
        // Pace-setters 10, 5, 8: median 8 SYPD, 1/8 of a day per simulated year.
        assert_eq!(g.len(), SHARE_GRID.len());
        assert!((g[SHARE_GRID.len() - 1] - 0.2 / 8.0).abs() < 1e-12);
        assert!(grid(std::iter::empty()).is_empty());
    }
}
