//! What an EC-Earth4 run leaves: per leg a directory `log/NNN/` with the run script's
//! `timing.log` and NEMO's `ocean.output`, and OASIS 5's `load_balancing_info.txt` (in the run
//! directory, or copied into the leg's).
//!
//! The OASIS file gives each component's computing and waiting seconds but no simulated time;
//! `timing.log` gives the leg's wall time and SYPD, from which the simulated time follows. A
//! run directory is read as the OASIS file of its last leg with the leg's wall time and
//! simulated time, so the coupled SYPD is the run script's own (without its overhead).
//! `ocean.output` tells NEMO's real MPI size (`jpnij`, land domains removed), checked against
//! the PEs the run gave NEMO.

use std::path::{Path, PathBuf};

use super::text::{self, Field};
use super::{oasis5, Format, ReadOptions, Reading, TimingError};
use crate::metrics::{SECONDS_PER_DAY, SECONDS_PER_YEAR};

/// The four lines of a leg's `timing.log`; a line not written (yet) is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LegTiming {
    /// `Run script elapsed time:` seconds.
    pub script_elapsed_s: Option<f64>,
    /// `Model elapsed time (no run script overhead):` seconds.
    pub model_elapsed_s: Option<f64>,
    /// `Model speed incl overhead:` SYPD.
    pub sypd_incl_overhead: Option<f64>,
    /// `Model speed excl overhead:` SYPD.
    pub sypd_excl_overhead: Option<f64>,
    /// The line where a second block of these lines starts (a label seen before): the file
    /// holds more than one leg's timing, and which is this run's is not known. Reading stops
    /// there.
    pub second_block_line: Option<usize>,
}

impl LegTiming {
    /// Whether every line was read.
    pub fn is_complete(&self) -> bool {
        self.script_elapsed_s.is_some()
            && self.model_elapsed_s.is_some()
            && self.sypd_incl_overhead.is_some()
            && self.sypd_excl_overhead.is_some()
    }

    /// Simulated seconds of the leg: SYPD x wall without the run script's overhead. A leg is a
    /// whole number of days: when the two speed lines (each `%8.2f`, so off by up to 0.005)
    /// leave exactly one whole number of days possible, that is the leg's length.
    pub fn simulated_s(&self) -> Option<f64> {
        let (sypd, wall) = (self.sypd_excl_overhead?, self.model_elapsed_s?);
        let days_and_slack = |sypd: f64, wall: f64| {
            let days = sypd * wall / SECONDS_PER_DAY * (SECONDS_PER_YEAR / SECONDS_PER_DAY);
            (days, days * 0.005 / sypd)
        };
        if !(sypd > 0.0 && wall > 0.0) {
            return None;
        }
        let (days, slack) = days_and_slack(sypd, wall);
        let (mut low, mut high) = (days - slack, days + slack);
        if let (Some(sypd), Some(wall)) = (self.sypd_incl_overhead, self.script_elapsed_s) {
            if sypd > 0.0 && wall > 0.0 {
                let (d, s) = days_and_slack(sypd, wall);
                (low, high) = (low.max(d - s), high.min(d + s));
            }
        }
        let whole = low.max(1.0).ceil();
        let days = if whole <= high && whole + 1.0 > high {
            whole
        } else {
            days
        };
        Some(days * SECONDS_PER_DAY)
    }
}

/// Reads a leg's `timing.log`.
pub fn read_timing_log(path: &Path) -> Result<LegTiming, TimingError> {
    parse_timing_log(&super::read_bytes(path)?, path)
}

/// Parses `timing.log` text: `Run script elapsed time: 1 day, 2:03:04.5`, `Model elapsed time
/// (no run script overhead): ...`, `Model speed incl overhead:    10.52 SYPD`, `Model speed excl
/// overhead: ...`. Other lines are skipped; a value that is not a time or a speed is an error.
/// A label met a second time starts another block: reading stops there and
/// [`LegTiming::second_block_line`] says where.
pub fn parse_timing_log(bytes: &[u8], path: &Path) -> Result<LegTiming, TimingError> {
    let mut leg = LegTiming::default();
    let (lines, _cut) = text::complete_trimmed_lines(bytes, path);
    for (number, line) in &lines {
        let Some((label, value)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim().to_ascii_lowercase();
        let value = value.trim();
        let time = || {
            timedelta_s(value).ok_or_else(|| {
                TimingError::parse(
                    path,
                    *number,
                    format!(
                        "{value:?} is not a time; expected H:MM:SS[.ffffff] or `N day(s), H:MM:SS`"
                    ),
                )
            })
        };
        let speed = || {
            let token = value
                .strip_suffix("SYPD")
                .unwrap_or(value)
                .trim()
                .as_bytes();
            match text::number(token) {
                Field::Value(v) if v >= 0.0 => Ok(v),
                _ => Err(TimingError::parse(
                    path,
                    *number,
                    format!("{value:?} is not a speed; expected `12.34 SYPD`"),
                )),
            }
        };
        let slot = if label.starts_with("run script elapsed time") {
            (&mut leg.script_elapsed_s, true)
        } else if label.starts_with("model elapsed time") {
            (&mut leg.model_elapsed_s, true)
        } else if label.starts_with("model speed incl") {
            (&mut leg.sypd_incl_overhead, false)
        } else if label.starts_with("model speed excl") {
            (&mut leg.sypd_excl_overhead, false)
        } else {
            continue;
        };
        match slot {
            (Some(_), _) => {
                leg.second_block_line = Some(*number);
                break;
            }
            (slot, true) => *slot = Some(time()?),
            (slot, false) => *slot = Some(speed()?),
        }
    }
    Ok(leg)
}

/// Seconds of a Python timedelta as `str()` prints it: `H:MM:SS`, `H:MM:SS.ffffff`, and past a
/// day `1 day, H:MM:SS` / `2 days, H:MM:SS.ffffff`.
pub fn timedelta_s(text: &str) -> Option<f64> {
    let text = text.trim();
    let (days, clock) = match text.split_once(',') {
        Some((days, clock)) => {
            let mut words = days.split_whitespace();
            let n: u64 = words.next()?.parse().ok()?;
            if !matches!(words.next()?, "day" | "days") || words.next().is_some() {
                return None;
            }
            (n, clock.trim())
        }
        None => (0, text),
    };
    let mut parts = clock.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let h: u64 = h.parse().ok()?;
    let m: u64 = m.parse().ok().filter(|m| *m < 60)?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    if !(digits(whole) && digits(frac)) {
        return None;
    }
    let s: f64 = s.parse().ok().filter(|s| *s < 60.0)?;
    Some(((days * 24 + h) * 60 + m) as f64 * 60.0 + s)
}

/// NEMO's domain decomposition as `ocean.output` reports it after `defines mpp subdomains`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NemoDecomposition {
    /// `jpni`: subdomains along the i (west-east) axis.
    pub jpni: Option<u32>,
    /// `jpnj`: subdomains along the j (south-north) axis.
    pub jpnj: Option<u32>,
    /// NEMO's MPI size with land domains removed.
    pub jpnij: Option<u32>,
    /// `Number of mpi processes:`, the MPI size NEMO was started with.
    pub mpi_processes: Option<u32>,
    /// NEMO printed `YOU ARE WASTING CPU`: a decomposition with land-only domains.
    pub wasting_cpu: bool,
    /// `Number of suppressed land subdomains =`: land-only rectangles NEMO removed (NEMO 4.2
    /// prints it before the decomposition when it removed as many as it could).
    pub land_removed: Option<u32>,
    /// The global grid with halos, `jpiglo` and `jpjglo`, from the lines that check the split
    /// (`sum ijpi(i,1) = ... jpiglo = ...`).
    pub global: Option<(u32, u32)>,
    /// The halo width `nn_hls` from the namelist echo.
    pub halo: Option<u32>,
}

impl NemoDecomposition {
    /// Land-only rectangles removed: as NEMO printed it, else `jpni * jpnj - jpnij`; `None`
    /// until the split is known.
    pub fn land_subdomains_removed(&self) -> Option<u32> {
        let (ni, nj) = (self.jpni?, self.jpnj?);
        self.land_removed
            .or_else(|| Some((ni * nj).saturating_sub(self.jpnij?)))
    }
}

/// Reads `jpnij`, NEMO's real MPI size with land domains removed, from an `ocean.output`;
/// `None` when the file does not report it (yet).
pub fn jpnij(path: &Path) -> Result<Option<u32>, TimingError> {
    Ok(read_ocean_output(path)?.jpnij)
}

/// Reads the decomposition an `ocean.output` reports.
pub fn read_ocean_output(path: &Path) -> Result<NemoDecomposition, TimingError> {
    Ok(parse_ocean_output(&super::read_bytes(path)?))
}

/// Parses `ocean.output` text. The values count after the last `defines mpp subdomains` line
/// only: the namelist echo before it prints `jpni = 0` too, meaning "choose for me". A file
/// NEMO is still writing is read up to its last complete line (a cut `jpnij =  1` of 104
/// would read as 1).
pub fn parse_ocean_output(bytes: &[u8]) -> NemoDecomposition {
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &[][..],
    };
    let text = String::from_utf8_lossy(complete);
    let mut d = NemoDecomposition::default();
    let mut after = false;
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        if let Some(n) = value_after(&lower, "number of suppressed land subdomains") {
            d.land_removed = Some(n);
        }
        if let Some(h) = value_after(&lower, "nn_hls") {
            d.halo = Some(h);
        }
        if lower.contains("defines mpp subdomains") {
            after = true;
            (d.jpni, d.jpnj, d.jpnij, d.global) = (None, None, None, None);
            continue;
        }
        if lower.contains("you are wasting cpu") {
            d.wasting_cpu = true;
        }
        if let Some(n) = value_after(&lower, "number of mpi processes") {
            d.mpi_processes = Some(n);
        }
        if after {
            d.jpnij = value_after(&lower, "jpnij").or(d.jpnij);
            d.jpni = value_after(&lower, "jpni").or(d.jpni);
            d.jpnj = value_after(&lower, "jpnj").or(d.jpnj);
            if let Some(gi) = value_after(&lower, "jpiglo") {
                d.global = Some((gi, d.global.map_or(0, |g| g.1)));
            }
            if let Some(gj) = value_after(&lower, "jpjglo") {
                d.global = Some((d.global.map_or(0, |g| g.0), gj));
            }
        }
    }
    d
}

/// The whole number after `key` and a `=` or `:` in `line`, where `key` is a word of its own
/// (`jpni` does not match inside `jpnij`).
fn value_after(line: &str, key: &str) -> Option<u32> {
    let mut from = 0;
    while let Some(at) = line[from..].find(key) {
        let start = from + at;
        let end = start + key.len();
        from = end;
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before_ok = line[..start].chars().next_back().is_none_or(|c| !word(c));
        let rest = &line[end..];
        if !before_ok || rest.chars().next().is_some_and(word) {
            continue;
        }
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':')) else {
            continue;
        };
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
    }
    None
}

/// The legs of a run directory, `log/NNN/` (digits only), in order.
fn legs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("log")) else {
        return Vec::new();
    };
    let mut legs: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let n = (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
                .then(|| name.parse().ok())??;
            Some((n, e.path()))
        })
        .collect();
    legs.sort();
    legs.into_iter().map(|(_, p)| p).collect()
}

const OASIS_FILE: &str = "load_balancing_info.txt";

/// Whether `dir` is laid out as EC-Earth4 leaves a run: `log/NNN/` leg directories and an
/// OASIS 5 file or a leg's `timing.log`. (EC-Earth3 run directories have `log/NNN/` too, with
/// LUCIA files; those are not this.)
pub fn is_run_dir(dir: &Path) -> bool {
    let legs = legs(dir);
    !legs.is_empty()
        && (dir.join(OASIS_FILE).is_file()
            || legs
                .iter()
                .any(|l| l.join(OASIS_FILE).is_file() || l.join("timing.log").is_file()))
}

/// The `ocean.output` NEMO left in run directory `dir`: its last leg's, else the run
/// directory's own; `None` when there is none.
pub fn ocean_output(dir: &Path) -> Option<PathBuf> {
    let leg = legs(dir).pop();
    leg.map(|l| l.join("ocean.output"))
        .into_iter()
        .chain([dir.join("ocean.output")])
        .find(|p| p.is_file())
}

/// The component that is NEMO, by its OASIS name (EC-Earth4's is `oceanx`).
fn is_nemo(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("ocean") || lower.starts_with("nemo")
}

/// Reads an EC-Earth4 run directory (see the module doc): the last leg's OASIS file with the
/// leg's `timing.log` and, when there is one, its `ocean.output`.
pub fn read_run_dir(dir: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    let Some(leg) = legs(dir).pop() else {
        return Ok(Reading::Incomplete {
            reason: format!("{}: no leg directory log/NNN/ yet", dir.display()),
        });
    };
    let oasis = [leg.join(OASIS_FILE), dir.join(OASIS_FILE)]
        .into_iter()
        .find(|p| p.is_file());
    let Some(oasis) = oasis else {
        return Ok(Reading::Incomplete {
            reason: format!(
                "{}: no {OASIS_FILE} yet (OASIS 5 writes it at the end of a run when \
                 model_config.oasis.load_balancing is 1)",
                dir.display()
            ),
        });
    };
    let mut m = match oasis5::read_file(&oasis, opts)? {
        Reading::Measured(m) => m,
        incomplete => return Ok(incomplete),
    };
    m.format = Format::Ecearth4;
    let log = leg.join("timing.log");
    let mut partial: Vec<String> = m.partial.take().into_iter().collect();
    if log.is_file() {
        let timing = read_timing_log(&log)?;
        let disagreement = timing
            .model_elapsed_s
            .zip(m.wall_s)
            .and_then(|(model, window)| wall_disagreement(window, model));
        if let Some(line) = timing.second_block_line {
            partial.push(format!(
                "{}: line {line} starts a second block of timing lines; a leg's timing.log \
                 holds one, so which leg the wall and simulated time are of is not known \
                 (a leg written over another's, or one still being appended)",
                log.display()
            ));
        } else if let (Some(why), true) = (disagreement, timing.is_complete()) {
            partial.push(format!(
                "{} and {} disagree on the wall time: {why}; they are of different legs (a \
                 new leg's {OASIS_FILE} beside the last leg's timing.log), so the run's wall \
                 and simulated time are not known until the leg's timing.log is written",
                oasis.display(),
                log.display()
            ));
        } else if timing.is_complete() {
            m.wall_s = timing.model_elapsed_s;
            m.sim_s = timing.simulated_s();
            m.period_s = None;
            m.notes.retain(|n| n != oasis5::NO_SIMULATED_TIME);
            m.notes.push(format!(
                "wall time and simulated time from {}: {} SYPD without the run script's \
                 overhead, {} SYPD with it; the components' times cover OASIS' analysis window, \
                 which leaves out the first two and the last coupling exchanges",
                log.display(),
                crate::limits::display_number(timing.sypd_excl_overhead.unwrap_or(0.0)),
                crate::limits::display_number(timing.sypd_incl_overhead.unwrap_or(0.0)),
            ));
        } else {
            partial.push(format!(
                "{}: not all four lines are written yet",
                log.display()
            ));
        }
    } else {
        partial.push(format!(
            "{}: no timing.log in the last leg yet; the wall and simulated time are unknown",
            leg.display()
        ));
    }
    if let Some(ocean) = ocean_output(dir) {
        check_nemo_size(&ocean, &m, opts)?
            .into_iter()
            .for_each(|n| m.notes.push(n));
    }
    m.partial = (!partial.is_empty()).then(|| partial.join("; "));
    Ok(Reading::Measured(m))
}

/// Share of the model's elapsed time (`timing.log`) that OASIS' analysis window may leave out:
/// the start-up (reading inputs and restarts), the first two and the last coupling exchanges
/// and the end (writing restarts). A third: a short balancing run starts up for a minute or two
/// while its window lasts a few minutes.
pub const OUTSIDE_WINDOW_MAX: f64 = 1.0 / 3.0;

/// Why OASIS' wall time (`window`, the coupled model simulation time of its analysis window)
/// cannot be of the run whose model ran `model` seconds by `timing.log`, if it cannot: the
/// window is part of the model's run, so it may not be longer beyond clock noise
/// ([`super::CLOCK_NOISE`]), nor shorter than what start-up and the end leave
/// ([`OUTSIDE_WINDOW_MAX`]) beyond clock noise.
pub fn wall_disagreement(window: f64, model: f64) -> Option<String> {
    use crate::limits::display_number;
    let noise = super::CLOCK_NOISE * model;
    let shortest = model * (1.0 - OUTSIDE_WINDOW_MAX) - noise;
    if !(window.is_finite() && model.is_finite()) {
        return Some("a wall time is not a number".into());
    }
    if window > model + noise {
        return Some(format!(
            "OASIS' window of {} s is longer than the model's {} s run beyond clock noise",
            display_number(window),
            display_number(model)
        ));
    }
    if window < shortest {
        return Some(format!(
            "OASIS' window of {} s is less than {:.0} % of the model's {} s run (start-up and \
             the end leave out less)",
            display_number(window),
            (1.0 - OUTSIDE_WINDOW_MAX) * 100.0,
            display_number(model)
        ));
    }
    None
}

/// Notes when `ocean.output`'s `jpnij` differs from the PEs NEMO was given: by the launcher
/// (`Number of mpi processes`) or by the run (`--nproc` / the campaign's PEs for NEMO).
fn check_nemo_size(
    ocean: &Path,
    m: &super::Measurement,
    opts: &ReadOptions,
) -> Result<Vec<String>, TimingError> {
    let d = read_ocean_output(ocean)?;
    let Some(jpnij) = d.jpnij else {
        return Ok(Vec::new());
    };
    let mut notes = Vec::new();
    let given = m
        .components
        .iter()
        .filter(|c| is_nemo(&c.name))
        .find_map(|c| c.nproc.map(|n| (c.name.clone(), n)))
        .or_else(|| {
            opts.nproc
                .iter()
                .find(|(k, _)| is_nemo(k))
                .map(|(k, &n)| (k.clone(), n))
        });
    if let Some((name, n)) = given.filter(|(_, n)| *n != jpnij) {
        notes.push(format!(
            "{}: NEMO runs on jpnij = {jpnij} MPI processes (land domains removed), but the run \
             gave {name} {n} PEs; give it {jpnij}, or a count from NEMO's ln_listonly list",
            ocean.display()
        ));
    }
    if let Some(p) = d.mpi_processes.filter(|&p| p != jpnij) {
        notes.push(format!(
            "{}: NEMO was started on {p} MPI processes but jpnij = {jpnij} (land domains \
             removed){}",
            ocean.display(),
            if d.wasting_cpu {
                "; NEMO says YOU ARE WASTING CPU"
            } else {
                ""
            }
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timedeltas_as_python_prints_them() {
        assert_eq!(timedelta_s("0:12:34.500000"), Some(754.5));
        assert_eq!(timedelta_s("2:03:04"), Some(7384.0));
        assert_eq!(timedelta_s("1 day, 2:03:04"), Some(86_400.0 + 7384.0));
        assert_eq!(
            timedelta_s("3 days, 0:00:01.250000"),
            Some(3.0 * 86_400.0 + 1.25)
        );
        for bad in [
            "",
            "12",
            "1:60:00",
            "1 week, 0:00:00",
            "a:00:00",
            "0:00:61",
            "1 day 0:0:0",
        ] {
            assert_eq!(timedelta_s(bad), None, "{bad}");
        }
    }

    #[test]
    fn timing_log_gives_wall_and_a_whole_number_of_days() {
        // A five-year leg at 1.5 SYPD: 3 days and 8 hours, 3 days and 9 hours with the script.
        let text = b"Run script elapsed time: 3 days, 9:00:00.123456\n\
            Model elapsed time (no run script overhead): 3 days, 8:00:00\n\
            Model speed incl overhead:     1.48 SYPD\n\
            Model speed excl overhead:     1.50 SYPD\n";
        let leg = parse_timing_log(text, Path::new("timing.log")).unwrap();
        assert!(leg.is_complete());
        assert_eq!(leg.model_elapsed_s, Some(288_000.0));
        assert_eq!(leg.script_elapsed_s, Some(291_600.123456));
        assert_eq!(leg.simulated_s(), Some(5.0 * 365.0 * 86_400.0));
        // A one-year leg at 27.60 SYPD (0:52:10): 364.97 days by the rounded speed, 365 by the
        // rule that a leg is whole days.
        let leg = LegTiming {
            model_elapsed_s: Some(3130.0),
            sypd_excl_overhead: Some(27.6),
            ..LegTiming::default()
        };
        assert_eq!(leg.simulated_s(), Some(365.0 * 86_400.0));
        let e = parse_timing_log(b"Model speed excl overhead: fast\n", Path::new("t"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("t: line 1") && e.contains("fast"), "{e}");
        let cut = parse_timing_log(b"Run script elapsed time: 0:01:00\n", Path::new("t")).unwrap();
        assert!(!cut.is_complete());
    }

    #[test]
    fn a_second_block_stops_the_reading_where_it_starts() {
        let text = b"Run script elapsed time: 0:10:00\n\
            Model elapsed time (no run script overhead): 0:09:00\n\
            Model speed incl overhead:     9.00 SYPD\n\
            Model speed excl overhead:    10.00 SYPD\n\
            Run script elapsed time: 0:20:00\n\
            Model speed excl overhead: not a speed\n";
        let leg = parse_timing_log(text, Path::new("t")).unwrap();
        assert_eq!(leg.second_block_line, Some(5));
        assert_eq!(leg.script_elapsed_s, Some(600.0));
        // A label twice within the first four lines is a second block too.
        let leg = parse_timing_log(
            b"Model elapsed time (no run script overhead): 0:09:00\n\
              Model elapsed time (no run script overhead): 0:18:00\n",
            Path::new("t"),
        )
        .unwrap();
        assert_eq!(
            (leg.model_elapsed_s, leg.second_block_line),
            (Some(540.0), Some(2))
        );
    }

    #[test]
    fn the_window_is_part_of_the_models_run() {
        // The fixture's leg: 3510.274 s of window in a 3526.53 s run.
        assert_eq!(wall_disagreement(3510.274, 3526.53), None);
        // Up to clock noise above, a third (and noise) below.
        assert_eq!(wall_disagreement(1015.0, 1000.0), None);
        assert!(wall_disagreement(1025.0, 1000.0)
            .unwrap()
            .contains("longer"));
        assert_eq!(wall_disagreement(660.0, 1000.0), None);
        assert!(wall_disagreement(640.0, 1000.0)
            .unwrap()
            .contains("less than 67 %"));
        assert!(wall_disagreement(f64::NAN, 1000.0).is_some());
    }

    #[test]
    fn jpnij_after_the_decomposition_not_the_namelist() {
        let text = b"   nammpp\n      jpni = 0\n      jpnij = 0\n\
            Number of mpi processes:   120\n\
            mpp_init: defines mpp subdomains\n   jpni =   12\n   jpnj =   10\n   jpnij =  104\n\
            YOU ARE WASTING CPU\n";
        let d = parse_ocean_output(text);
        assert_eq!(
            (d.jpni, d.jpnj, d.jpnij, d.mpi_processes),
            (Some(12), Some(10), Some(104), Some(120))
        );
        assert!(d.wasting_cpu);
        assert_eq!(d.land_subdomains_removed(), Some(16));
        assert_eq!(parse_ocean_output(b"jpnij = 5\n").jpnij, None);
    }

    /// NEMO 4.2's own lines: the land subdomains it removed, the global grid from the split's
    /// check, the halo from the namelist echo; a file cut in a line is read up to the last
    /// whole one.
    #[test]
    fn the_decomposition_of_nemo_4_2_and_a_half_written_file() {
        let text = "   nammpp\n      nn_hls = 1\n mpp_init:\n ~~~~~~~~\n\n\
            \x20  Number of mpi processes:   104\n   Number of ocean subdomains =   104\n\
            \x20  Number of suppressed land subdomains =    16\n\n\
            \x20MPI Message Passing MPI - domain lay out over processors\n\n\
            \x20   defines mpp subdomains\n       jpni =           12\n       jpnj =           10\n\
            \x20     jpnij =          104\n      nimpp = 1\n      njmpp = 1\n\n\
            \x20      sum ijpi(i,1) =          384  jpiglo =          362\n\
            \x20      sum ijpj(1,j) =          351  jpjglo =          333\n";
        let d = parse_ocean_output(text.as_bytes());
        assert_eq!((d.jpni, d.jpnj, d.jpnij), (Some(12), Some(10), Some(104)));
        assert_eq!(
            (d.land_removed, d.global, d.halo),
            (Some(16), Some((362, 333)), Some(1))
        );
        assert!(!d.wasting_cpu);
        // Cut inside `jpnij =          104`: the split is not known yet.
        let cut = &text[..text.find("jpnij =").unwrap() + 12];
        let d = parse_ocean_output(cut.as_bytes());
        assert_eq!((d.jpni, d.jpnj, d.jpnij), (Some(12), Some(10), None));
        assert_eq!(d.land_subdomains_removed(), Some(16));
        assert_eq!(parse_ocean_output(b"   jpni = 1").jpni, None);
    }
}
