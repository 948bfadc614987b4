//! The `[scaling]` table: a campaign that measures the components' scalability curves instead
//! of balancing them (step 1 of the method). With it, `campaign init` makes a scaling campaign:
//! the same state file, driver, executors and `next`/`record` as a balancing campaign, whose
//! runs each measure one component standalone and whose output is `DIR/curves/NAME.csv`.
//!
//! Everything is checked when the file is read, so a scaling campaign never stops half-way on
//! a setting; the resolved values ([`ScalingSettings`]) are frozen into the campaign state.

use serde::{Deserialize, Serialize};

/// How a scaling campaign measures (`design = "standalone" | "coupled"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalingDesign {
    /// Each run is one component alone (IFS with prescribed SST, NEMO with forcing).
    Standalone,
    /// Each run is a coupled configuration sampling every component at once, near balance;
    /// each component's speed comes from its computing time in the coupled run (waiting left
    /// out), so its curve is the coupled-mode one.
    Coupled,
}

/// Where a standalone run's speed comes from (`timing = "output" | "wall"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalingTiming {
    /// The run's timing output (LUCIA, OASIS 5, a table) holding the one component: start-up
    /// and shutdown are left out, as the LUCIA window does.
    #[default]
    Output,
    /// The run's wall time and `simulated_days`: start-up and shutdown included.
    Wall,
}

/// The `[scaling]` table as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingTable {
    /// `standalone` or `coupled`; a cold start (`strategy = "guided"`) is coupled, so it may
    /// leave this out.
    pub design: Option<ScalingDesign>,
    /// Runs per PE count (default: the top-level `repetitions`, else 3).
    pub repetitions: Option<u32>,
    /// PE counts of the first series per component, log-spaced (default 6).
    pub counts: Option<u32>,
    /// The most runs the campaign makes, repetitions included.
    pub max_runs: Option<u32>,
    /// The most core-hours the campaign spends (needs `simulated_days`).
    pub max_core_hours: Option<f64>,
    /// Simulated days of one standalone run: turns wall time into SYPD, and SYPD into a
    /// run's core-hours.
    pub simulated_days: Option<f64>,
    /// `output` (default) or `wall`.
    pub timing: Option<ScalingTiming>,
}

/// Defaults and bounds of the `[scaling]` keys.
pub mod scaling_defaults {
    /// Runs per PE count: the BSC practice for EC-Earth3 curves.
    pub const REPETITIONS: u32 = 3;
    /// PE counts of the first series per component.
    pub const COUNTS: u32 = 6;
    /// Most PE counts of the first series: more is a fixed study, not a start.
    pub const MAX_COUNTS: u32 = 64;
    /// Most simulated days of one run (a century).
    pub const MAX_SIMULATED_DAYS: f64 = 36_500.0;
}

/// The `[scaling]` settings with their defaults filled in, frozen into the campaign state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingSettings {
    /// How runs measure: one component alone, or coupled configurations.
    pub design: ScalingDesign,
    /// Runs per PE count before the noise rules add any.
    pub repetitions: u32,
    /// PE counts of the first series per component.
    pub counts: u32,
    /// The most runs, if bounded.
    pub max_runs: Option<u32>,
    /// The most core-hours, if bounded.
    pub max_core_hours: Option<f64>,
    /// Simulated days of one run, if given.
    pub simulated_days: Option<f64>,
    /// Where a run's speed comes from.
    pub timing: ScalingTiming,
}

impl ScalingTable {
    /// Checks every key and resolves the defaults; the message names the key and its value
    /// (the caller adds the file and line).
    pub fn resolve(&self) -> Result<ScalingSettings, String> {
        use scaling_defaults::*;
        let design = self.design.ok_or(
            "[scaling] design is missing: write design = \"standalone\" (each component alone) or design = \"coupled\" (coupled runs near balance)",
        )?;
        let repetitions = self.repetitions.unwrap_or(REPETITIONS);
        if !(1..=crate::limits::MAX_REPETITIONS).contains(&repetitions) {
            return Err(format!(
                "[scaling] repetitions = {repetitions} is outside 1 to {}; 3 runs per count measure the noise",
                crate::limits::MAX_REPETITIONS
            ));
        }
        let counts = self.counts.unwrap_or(COUNTS);
        if !(2..=MAX_COUNTS).contains(&counts) {
            return Err(format!(
                "[scaling] counts = {counts} is outside 2 to {MAX_COUNTS}; a first series of 5-6 counts is enough, the campaign adds more where they matter"
            ));
        }
        if self.max_runs == Some(0) {
            return Err("[scaling] max_runs = 0 allows no run; give a budget of runs, e.g. max_runs = 60, or leave it out".into());
        }
        if let Some(d) = self.simulated_days {
            if !(d.is_finite() && d > 0.0 && d <= MAX_SIMULATED_DAYS) {
                return Err(format!(
                    "[scaling] simulated_days = {} is not a positive number of days up to {MAX_SIMULATED_DAYS}; give the simulated length of one run, e.g. simulated_days = 60",
                    crate::limits::display_number(d)
                ));
            }
        }
        if let Some(h) = self.max_core_hours {
            if !(h.is_finite() && h > 0.0) {
                return Err(format!(
                    "[scaling] max_core_hours = {} is not a positive number; give a budget, e.g. max_core_hours = 50000",
                    crate::limits::display_number(h)
                ));
            }
            if self.simulated_days.is_none() {
                return Err("[scaling] max_core_hours needs simulated_days, the simulated length of one run, to know what a run costs".into());
            }
        }
        let timing = self.timing.unwrap_or_default();
        if timing == ScalingTiming::Wall && design == ScalingDesign::Coupled {
            return Err("[scaling] timing = \"wall\" cannot go with design = \"coupled\": a coupled run's wall time is the slowest component's, each component's speed comes from its computing time in the timing output; drop timing or set timing = \"output\"".into());
        }
        if timing == ScalingTiming::Wall && self.simulated_days.is_none() {
            return Err("[scaling] timing = \"wall\" needs simulated_days, the simulated length of one run, to turn wall time into SYPD".into());
        }
        Ok(ScalingSettings {
            design,
            repetitions,
            counts,
            max_runs: self.max_runs,
            max_core_hours: self.max_core_hours,
            simulated_days: self.simulated_days,
            timing,
        })
    }
}

impl From<&ScalingSettings> for ScalingTable {
    /// The table that resolves to these settings (to check a state's settings as a file's).
    fn from(s: &ScalingSettings) -> ScalingTable {
        ScalingTable {
            design: Some(s.design),
            repetitions: Some(s.repetitions),
            counts: Some(s.counts),
            max_runs: s.max_runs,
            max_core_hours: s.max_core_hours,
            simulated_days: s.simulated_days,
            timing: Some(s.timing),
        }
    }
}

impl ScalingSettings {
    /// Simulated years of one run, when `simulated_days` is given.
    pub fn simulated_years(&self) -> Option<f64> {
        self.simulated_days.map(|d| d / 365.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> ScalingTable {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_fill_in_and_standalone_resolves() {
        let s = table("design = \"standalone\"").resolve().unwrap();
        assert_eq!(s.repetitions, 3);
        assert_eq!(s.counts, 6);
        assert_eq!(s.timing, ScalingTiming::Output);
        assert_eq!(s.max_runs, None);
    }

    #[test]
    fn coupled_resolves_and_refuses_wall_timing_in_one_line() {
        let s = table("design = \"coupled\"").resolve().unwrap();
        assert_eq!(s.design, ScalingDesign::Coupled);
        let e = table("design = \"coupled\"\nsimulated_days = 1\ntiming = \"wall\"")
            .resolve()
            .unwrap_err();
        assert!(
            e.contains("timing") && e.contains("coupled") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        for (text, key) in [
            ("design = \"standalone\"\nrepetitions = 0", "repetitions"),
            ("design = \"standalone\"\ncounts = 1", "counts"),
            ("design = \"standalone\"\nmax_runs = 0", "max_runs"),
            (
                "design = \"standalone\"\nsimulated_days = -1.0",
                "simulated_days",
            ),
            (
                "design = \"standalone\"\nmax_core_hours = 10.0",
                "simulated_days",
            ),
            (
                "design = \"standalone\"\ntiming = \"wall\"",
                "simulated_days",
            ),
        ] {
            let e = table(text).resolve().unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        }
        assert!(toml::from_str::<ScalingTable>("design = \"both\"").is_err());
        let e = table("counts = 5").resolve().unwrap_err();
        assert!(e.contains("design is missing") && !e.contains('\n'), "{e}");
    }
}
