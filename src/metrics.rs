//! CPMIP metrics and fittingness, exactly as the guide's `method/prediction.md` (its *Metrics*,
//! paper section 3) defines them.
//!
//! Everything here is a small pure function of plain numbers, so the prediction, the timing
//! readers and the campaign all compute the same figure the same way.

/// Seconds in a simulated (365-day) year, as CPMIP and the LUCIA tools count it.
pub const SECONDS_PER_YEAR: f64 = 365.0 * 86_400.0;
/// Seconds in a wall-clock day.
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// Simulated years per wall-clock day from simulated and elapsed seconds.
pub fn sypd(simulated_s: f64, wall_s: f64) -> f64 {
    (simulated_s / SECONDS_PER_YEAR) / (wall_s / SECONDS_PER_DAY)
}

/// Core hours per simulated year: `24 * P / SYPD`.
pub fn chsy(total_nproc: f64, sypd: f64) -> f64 {
    24.0 * total_nproc / sypd
}

/// The coupled SYPD of a configuration from its components' speeds (the guide's
/// `method/prediction.md`, step 4): the slowest sets the pace. Every model and the search use this
/// one definition.
pub fn coupled_sypd(speeds: &[f64]) -> f64 {
    speeds.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Speed-up at `sypd` relative to the curve's first point `sypd0`.
pub fn speedup(sypd: f64, sypd0: f64) -> f64 {
    sypd / sypd0
}

/// Parallel efficiency: speed-up over the ratio of PEs, `S(p) / (p / p0)`.
pub fn efficiency(speedup: f64, nproc: f64, nproc0: f64) -> f64 {
    speedup / (nproc / nproc0)
}

/// The EDP-like figure of merit `S * E`.
pub fn edp(speedup: f64, efficiency: f64) -> f64 {
    speedup * efficiency
}

/// Coupling cost (eq. 4): the share of the coupled run's core time that no component spent
/// computing. `wall_s` (T_M) and `total_nproc` (P_M) describe the coupled run; each component
/// contributes its own compute seconds T_c on P_c PEs.
pub fn coupling_cost(wall_s: f64, total_nproc: f64, components: &[(f64, f64)]) -> f64 {
    let total = wall_s * total_nproc;
    let computing: f64 = components.iter().map(|(t, p)| t * p).sum();
    (total - computing) / total
}

/// Partial coupling cost of one component (eq. 5): its core time in coupling events
/// (waiting + interpolation + sending) over the coupled run's core time.
pub fn partial_coupling_cost(coupling_s: f64, nproc: f64, wall_s: f64, total_nproc: f64) -> f64 {
    coupling_s * nproc / (wall_s * total_nproc)
}

/// Coupling cost of a predicted configuration (the guide's `method/prediction.md`, step 4): each
/// component would run at its own speed `SYPD_c` but the coupled model runs at the slowest, so the
/// faster ones wait: `1 - sum_c(24 p_c / SYPD_c) / (24 * sum_c p_c / SYPD)`.
pub fn predicted_coupling_cost(coupled_sypd: f64, components: &[(f64, f64)]) -> f64 {
    let own: f64 = components.iter().map(|(p, s)| p / s).sum();
    let total_p: f64 = components.iter().map(|(p, _)| p).sum();
    1.0 - own / (total_p / coupled_sypd)
}

/// Min-max bounds of one quantity over the set of configurations being compared.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bounds {
    /// The smallest value (normalised to 0).
    pub min: f64,
    /// The largest value (normalised to 1).
    pub max: f64,
}

impl Bounds {
    /// Bounds over the given values, or `None` for an empty set.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Bounds> {
        values.into_iter().fold(None, |b, v| {
            Some(match b {
                None => Bounds { min: v, max: v },
                Some(b) => b.include(v),
            })
        })
    }

    /// The bounds widened to hold `v`.
    pub fn include(self, v: f64) -> Bounds {
        Bounds {
            min: self.min.min(v),
            max: self.max.max(v),
        }
    }

    /// Min-max normalisation; `0` when max == min, as the guide's `method/prediction.md` decides.
    pub fn normalise(&self, v: f64) -> f64 {
        if self.max == self.min {
            0.0
        } else {
            (v - self.min) / (self.max - self.min)
        }
    }
}

/// Fittingness (eq. 7-8): `w * SYPD_n + (1 - w) * (1 - CHSY_n)`; `tts_w` = w weighs speed
/// (time to solution) against cost (energy to solution).
pub fn fittingness(tts_w: f64, sypd_n: f64, chsy_n: f64) -> f64 {
    tts_w * sypd_n + (1.0 - tts_w) * (1.0 - chsy_n)
}

/// Fittingness of one configuration given the bounds of the compared set.
pub fn fittingness_in(
    tts_w: f64,
    sypd: f64,
    chsy: f64,
    sypd_bounds: &Bounds,
    cost_bounds: &Bounds,
) -> f64 {
    fittingness(
        tts_w,
        sypd_bounds.normalise(sypd),
        cost_bounds.normalise(chsy),
    )
}

/// The base-case filter (the guide's `method/prediction.md`, step 5): speed-up x efficiency against
/// the base case, `(SYPD / SYPD_base)^2 * (P_base / P)`, must be at least 1 for a configuration to
/// be kept.
pub fn beats_base_case(sypd: f64, total_nproc: f64, base_sypd: f64, base_total_nproc: f64) -> bool {
    base_case_edp(sypd, total_nproc, base_sypd, base_total_nproc) >= 1.0
}

/// `(SYPD / SYPD_base)^2 * (P_base / P)`.
pub fn base_case_edp(sypd: f64, total_nproc: f64, base_sypd: f64, base_total_nproc: f64) -> f64 {
    let s = sypd / base_sypd;
    s * s * (base_total_nproc / total_nproc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn sypd_and_chsy_by_hand() {
        // One simulated year in 8 wall hours = 3 SYPD; 240 PEs -> 24*240/3 = 1920 CHSY.
        assert!(close(sypd(SECONDS_PER_YEAR, 8.0 * 3600.0), 3.0));
        assert!(close(chsy(240.0, 3.0), 1920.0));
    }

    #[test]
    fn speedup_efficiency_edp_by_hand() {
        // IFS SR CMIP6: 3.27 SYPD at 48, 12.96 at 240.
        let s = speedup(12.96, 3.27);
        assert!(close(s, 3.963_302_752_293_578));
        let e = efficiency(s, 240.0, 48.0);
        assert!(close(e, 0.792_660_550_458_715_6));
        assert!(close(edp(s, e), s * e));
    }

    #[test]
    fn coupling_costs_by_hand() {
        // 100 s on 10 + 20 PEs; A computes 90 s, B 60 s: (3000 - 900 - 1200) / 3000 = 0.3.
        assert!(close(
            coupling_cost(100.0, 30.0, &[(90.0, 10.0), (60.0, 20.0)]),
            0.3
        ));
        // B waits 40 s on 20 PEs: 800 / 3000.
        assert!(close(
            partial_coupling_cost(40.0, 20.0, 100.0, 30.0),
            800.0 / 3000.0
        ));
    }

    #[test]
    fn predicted_coupling_cost_by_hand() {
        // A: 10 PEs at 2 SYPD, B: 20 PEs at 4 SYPD, coupled at 2.
        // own = 10/2 + 20/4 = 10; total = 30/2 = 15; cost = 1 - 10/15 = 1/3.
        assert!(close(
            predicted_coupling_cost(2.0, &[(10.0, 2.0), (20.0, 4.0)]),
            1.0 / 3.0
        ));
        // Balanced: no cost.
        assert!(close(
            predicted_coupling_cost(2.0, &[(10.0, 2.0), (20.0, 2.0)]),
            0.0
        ));
    }

    #[test]
    fn normalisation_and_fittingness() {
        let b = Bounds::of([2.0, 4.0, 3.0]).unwrap();
        assert_eq!(b, Bounds { min: 2.0, max: 4.0 });
        assert!(close(b.normalise(3.0), 0.5));
        assert_eq!(Bounds { min: 1.0, max: 1.0 }.normalise(1.0), 0.0);
        assert!(Bounds::of([]).is_none());
        // w = 0.25: 0.25 * 0.8 + 0.75 * (1 - 0.4) = 0.2 + 0.45
        assert!(close(fittingness(0.25, 0.8, 0.4), 0.65));
    }

    #[test]
    fn base_case_filter() {
        // Twice as fast on twice the PEs: S^2 * Pb/P = 4 * 0.5 = 2 >= 1.
        assert!(beats_base_case(2.0, 200.0, 1.0, 100.0));
        // 1.2x as fast on twice the PEs: 1.44 * 0.5 < 1.
        assert!(!beats_base_case(1.2, 200.0, 1.0, 100.0));
        assert!(beats_base_case(1.0, 100.0, 1.0, 100.0));
    }
}
