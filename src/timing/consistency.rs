//! The times of a measurement checked against each other and against the coupled wall time,
//! so that a damaged value is an error instead of a complete reading with absurd metrics (a
//! coupling cost of -190 %).
//!
//! Real OASIS output does carry small negative times: ranks' clocks spread, so a component
//! that barely computes (EC-Earth4's runoff mapper: -0.092 s and -13.561 s on runs of hours)
//! can come out below zero, and a compute time may pass the wall time by as much. That is
//! clock noise, kept with a note. The bound is [`CLOCK_NOISE`] of the wall time (of the
//! component's own total when the wall time is unknown) plus the file's own jitter when it has
//! one; past it a value is corrupt.
//!
//! One case passes that bound in real runs and is sound all the same: a helper that waits
//! nearly the whole run (a serial runoff mapper, a land model called once a day). OASIS takes
//! its computing time as its window minus its waiting, and with its ranks' clocks spread the
//! difference of two large numbers comes out below zero by more than 2 % of the run (ECMWF
//! HPC2020: -5.98 s of a 230.2 s run). Such a component (waiting at least [`HELPER_WAITING`] of
//! the wall time) is read with a computing time of zero and a note; its waiting time is still
//! checked against the wall time, and its window (computing plus waiting) may not be negative.
//! A component that computes for a real share of the run gets no such allowance.

use std::path::Path;

use super::{Measurement, TimingError};
use crate::limits::display_number;

/// Share of the coupled wall time that a time may be off by through the spread of the ranks'
/// clocks: 2 %.
pub const CLOCK_NOISE: f64 = 0.02;

/// Share of the wall time a component waits from which it is a helper that waits nearly the
/// whole run, and a negative computing time of it is read as zero: 90 %.
pub const HELPER_WAITING: f64 = 0.9;

/// Checks `m` (read from `path`); adds a note for each time within clock noise, an error for
/// the first one beyond it.
pub(crate) fn check(m: &mut Measurement, path: &Path) -> Result<(), TimingError> {
    let bad = |message: String| Err(TimingError::inconsistent(path, message));
    if let Some(w) = m.wall_s {
        if !w.is_finite() || w < 0.0 {
            return bad(format!(
                "the coupled wall time is {} s; the file is damaged",
                display_number(w)
            ));
        }
    }
    let wall = m.wall_s.filter(|&w| w > 0.0);
    let mut notes = Vec::new();
    for c in &mut m.components {
        let times = [
            ("computing time", Some(c.compute_s)),
            ("waiting time", Some(c.wait_s)),
            ("interpolation time", c.interp_s),
            ("sending time", c.send_s),
        ];
        let own_total: f64 = times.iter().filter_map(|(_, v)| *v).map(f64::abs).sum();
        let (scale, of) = match wall {
            Some(w) => (w, format!("the {} s wall time", display_number(w))),
            None => (
                own_total,
                format!("its {} s in all", display_number(own_total)),
            ),
        };
        let jitter = c
            .jitter_s
            .filter(|j| j.is_finite() && *j > 0.0)
            .unwrap_or(0.0);
        let tolerance = CLOCK_NOISE * scale + jitter;
        let bound = format!(
            "clock noise is at most {:.3} s ({:.0} % of {of}{})",
            tolerance,
            CLOCK_NOISE * 100.0,
            if jitter > 0.0 {
                ", plus its jitter"
            } else {
                ""
            }
        );
        if c.compute_s < 0.0 && c.compute_s.is_finite() && c.wait_s >= HELPER_WAITING * scale {
            if c.compute_s + c.wait_s < -tolerance {
                return bad(format!(
                    "the computing time of {} is {} s, more negative than its {} s of waiting \
                     is long ({bound}); the file is damaged",
                    c.name,
                    display_number(c.compute_s),
                    display_number(c.wait_s)
                ));
            }
            notes.push(format!(
                "the computing time of {} is {} s: it waits {} s, {:.0} % of {of}, a helper \
                 that waits nearly the whole run, below zero through the ranks' clock spread; \
                 read as 0 s",
                c.name,
                display_number(c.compute_s),
                display_number(c.wait_s),
                100.0 * c.wait_s / scale
            ));
            c.compute_as_written_s = Some(c.compute_s);
            c.compute_s = 0.0;
        }
        let times = [
            ("computing time", Some(c.compute_s)),
            ("waiting time", Some(c.wait_s)),
            ("interpolation time", c.interp_s),
            ("sending time", c.send_s),
        ];
        for (what, value) in times {
            let Some(v) = value else { continue };
            if !v.is_finite() {
                return bad(format!(
                    "the {what} of {} is {v}; the file is damaged",
                    c.name
                ));
            }
            if v < 0.0 {
                if -v > tolerance {
                    return bad(format!(
                        "the {what} of {} is {} s, negative beyond clock noise ({bound}); the file is damaged",
                        c.name,
                        display_number(v)
                    ));
                }
                notes.push(format!(
                    "the {what} of {} is {} s, negative within clock noise ({bound}); read as it is",
                    c.name,
                    display_number(v)
                ));
            }
        }
        if let Some(w) = wall {
            let busy = c.compute_s + c.wait_s.max(0.0);
            if c.compute_s <= w + tolerance && busy > w + tolerance {
                return bad(format!(
                    "the computing and waiting times of {} add up to {} s, more than the coupled wall time ({} s) beyond clock noise ({bound}); the file is damaged",
                    c.name,
                    display_number(busy),
                    display_number(w)
                ));
            }
            if c.compute_s > w + tolerance {
                return bad(format!(
                    "the computing time of {} ({} s) is above the coupled wall time ({} s) beyond clock noise ({bound}); the file is damaged",
                    c.name,
                    display_number(c.compute_s),
                    display_number(w)
                ));
            }
        }
    }
    for note in notes {
        if !m.notes.contains(&note) {
            m.notes.push(note);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{ComponentTiming, Format};

    fn run(wall: f64, times: &[(f64, f64)]) -> Measurement {
        let mut m = Measurement::new(Format::Table);
        m.wall_s = Some(wall);
        m.components = times
            .iter()
            .enumerate()
            .map(|(i, &(compute, wait))| ComponentTiming::new(format!("C{i}"), 10, compute, wait))
            .collect();
        m
    }

    #[test]
    fn a_helper_waiting_nearly_the_whole_run_computes_zero() {
        // Multi-hour runs; the runoff mapper's computing time from clock spread.
        for negative in [-0.092, -13.561] {
            let mut m = run(10_800.0, &[(10_000.0, 700.0), (negative, 10_700.0)]);
            check(&mut m, Path::new("f")).unwrap();
            assert_eq!(m.components[1].compute_s, 0.0);
            assert_eq!(m.components[1].compute_as_written_s, Some(negative));
            assert!(
                m.notes.iter().any(|n| n.contains("read as 0 s")),
                "{:?}",
                m.notes
            );
        }
        // ECMWF HPC2020: -5.98 s of a 230.2 s run, beyond the 4.6 s of clock noise.
        let mut m = run(230.2, &[(201.2, 16.3), (-5.98, 210.2)]);
        check(&mut m, Path::new("f")).unwrap();
        assert_eq!(m.components[1].compute_s, 0.0);
        // Waiting 89 % of the run is no helper: the same value is an error.
        let mut m = run(230.2, &[(201.2, 16.3), (-5.98, 204.9)]);
        let e = check(&mut m, Path::new("f")).unwrap_err().to_string();
        assert!(e.contains("negative beyond clock noise"), "{e}");
        // A component that computes keeps a small negative as it is.
        let mut m = run(1_000.0, &[(-3.0, 500.0), (900.0, 10.0)]);
        check(&mut m, Path::new("f")).unwrap();
        assert_eq!(m.components[0].compute_s, -3.0);
        assert!(m.notes.iter().any(|n| n.contains("read as it is")));
    }

    #[test]
    fn corrupt_times_are_errors() {
        let cases = [
            (
                run(618.239, &[(551.386, -17.41)]),
                "negative beyond clock noise",
            ),
            (
                run(225.0, &[(200.0, 20.0), (999.0, 0.0)]),
                "above the coupled wall time",
            ),
            (run(225.0, &[(200.0, 100.0)]), "add up to 300 s"),
            (run(-5.0, &[(1.0, 1.0)]), "coupled wall time is -5"),
            (run(100.0, &[(f64::NAN, 1.0)]), "is NaN"),
        ];
        for (mut m, needle) in cases {
            let e = check(&mut m, Path::new("f")).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        // Within 2 % of the wall time above it: clock noise, no error.
        check(&mut run(1_000.0, &[(1_015.0, 0.0)]), Path::new("f")).unwrap();
        // A jitter widens the bound.
        let mut m = run(1_000.0, &[(900.0, -30.0)]);
        m.components[0].jitter_s = Some(15.0);
        check(&mut m, Path::new("f")).unwrap();
    }
}
