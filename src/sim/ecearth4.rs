//! Writes the model's outcome as an EC-Earth4 run directory: OASIS 5's
//! `load_balancing_info.txt` in the run directory, the run script's `log/001/timing.log` and
//! NEMO's `log/001/ocean.output`, in the layouts [`crate::timing::ecearth4`] reads. They are
//! written once, when the run ends; a failed run leaves none.
//!
//! As in a real EC-Earth4 run, NEMO (the component named `ocean...` or `nemo...`) works on a
//! domain split into `jpni x jpnj` rectangles with the land-only ones removed
//! ([`super::ec4_runs::standin_split`]): its speed is its curve's times how well that split
//! shares the work, so it jumps between neighbouring counts, and `ocean.output` reports the
//! split in NEMO 4.2's words.

use std::path::Path;
use std::time::Duration;

use super::ec4_runs::{standin_split, StandinSplit, GRID};
use super::model::{Plan, SimOutcome};
use super::SimError;
use crate::metrics::SECONDS_PER_YEAR;

/// Seconds the run script spends around the model (start-up, copying, post-processing): what
/// `timing.log`'s "incl overhead" speed counts on top of the model's wall time.
const SCRIPT_OVERHEAD_S: f64 = 2.0;

/// Whether an OASIS name is NEMO's (EC-Earth4's is `oceanx`).
fn is_nemo(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("ocean") || lower.starts_with("nemo")
}

/// Splits NEMO's domain for its processes and sets its speed by the split (see the module
/// doc); `None` when the plan has no NEMO.
pub(crate) fn decompose(plan: &mut Plan) -> Option<StandinSplit> {
    let nemo = plan.components.iter_mut().find(|c| is_nemo(&c.name))?;
    let split = standin_split(nemo.nproc)?;
    nemo.scale_speed(split.speed_factor);
    Some(split)
}

/// Runs the plan and writes the files into `dir`.
pub(crate) fn run(
    plan: &Plan,
    dir: &Path,
    split: Option<StandinSplit>,
) -> Result<SimOutcome, SimError> {
    let outcome = plan.simulate_all(|_| Ok(()))?;
    if plan.compression > 0.0 {
        // The files appear when the run ends, as a real run's do.
        if let Ok(wait) = Duration::try_from_secs_f64(outcome.total_wall_s * plan.compression) {
            std::thread::sleep(wait);
        }
    }
    if outcome.failed.is_some() {
        return Ok(outcome);
    }
    let simulated_s = f64::from(outcome.exchanges.saturating_sub(1)) * plan.period_s;
    let write = |path: &Path, text: String| {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| SimError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        crate::fsutil::write_atomically(path, text.as_bytes()).map_err(|source| SimError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    write(
        &dir.join("load_balancing_info.txt"),
        load_balancing_info(plan, &outcome, simulated_s),
    )?;
    write(
        &dir.join("log").join("001").join("timing.log"),
        timing_log(outcome.total_wall_s, simulated_s),
    )?;
    if let Some(split) = split {
        write(
            &dir.join("log").join("001").join("ocean.output"),
            ocean_output(&split),
        )?;
    }
    Ok(outcome)
}

/// Fortran `F8.3`-like: `********` when the value does not fit 8 characters.
fn f8_3(v: f64) -> String {
    let s = format!("{v:8.3}");
    if s.len() > 8 {
        "********".into()
    } else {
        s
    }
}

/// Fortran `A10`: right-justified in 10 characters, cut to the first 10.
fn a10(name: &str) -> String {
    format!("{:>10}", name.chars().take(10).collect::<String>())
}

/// The OASIS 5 file: the header (wall time, speed and cost as OASIS prints them), the load
/// balance analysis (computing and waiting seconds over the analysis window) and each model's
/// additional information.
fn load_balancing_info(plan: &Plan, outcome: &SimOutcome, simulated_s: f64) -> String {
    let wall = outcome.total_wall_s;
    let sypd = simulated_s / SECONDS_PER_YEAR / (wall / 86_400.0);
    // OASIS counts MPI ranks in its cost, not cores.
    let ranks: u32 = outcome.components.iter().map(|c| c.nproc).sum();
    let chpsy = |n: u32| 24.0 * f64::from(n) / sypd;
    let mut s = format!(
        " Coupled model simulation time (s): {}\n Speed (SYPD) : {:10.3}\n Cost (CHPSY) : {:8.3}\n\n",
        f8_3(wall),
        sypd,
        chpsy(ranks)
    );
    for c in &outcome.components {
        s.push_str(&format!(
            " Model {} simulation time : {}\n cost (CHPSY): {:8.3}\n",
            a10(&c.name),
            f8_3(wall),
            chpsy(c.nproc)
        ));
    }
    s.push_str("\n Load balance analysis\n      Model /  Computing time /  Waiting time\n");
    for c in &outcome.components {
        s.push_str(&format!(
            " {} / {} / {}\n",
            a10(&c.name),
            f8_3(c.compute_s),
            f8_3(c.wait_s)
        ));
    }
    s.push_str("\n Additional information\n");
    for (c, p) in outcome.components.iter().zip(&plan.components) {
        let busy = c.compute_s + c.wait_s;
        let partial = if busy > 0.0 {
            100.0 * c.wait_s / busy
        } else {
            0.0
        };
        let interp = p.interp_s * p.sends.len() as f64 * f64::from(outcome.window_steps);
        s.push_str(&format!(" {}\n", a10(&c.name)));
        for other in outcome.components.iter().filter(|o| o.name != c.name) {
            s.push_str(&format!(
                " Specific oasis_get time from model {} : {}\n",
                a10(&other.name),
                f8_3(c.wait_s / (outcome.components.len() - 1).max(1) as f64)
            ));
        }
        s.push_str(&format!(
            " Total jitter : {}\n Partial coupling cost (%) : {partial:6.2}\n \
             Partial coupling cost including OASIS operations (%) : {:6.2}\n \
             Total mapping/interpolation : {}\n Total mapping/interpolation with spread : {}\n \
             Total Netcdf output (OUTPUT+EXPOUT+restart): {}\n \
             Total Netcdf output for restart  only: {}\n \
             Total time of this load balancing analysis: {}\n \
             Clock spread after synchronise ... : {:12.8}\n",
            f8_3(0.0),
            if busy > 0.0 {
                100.0 * (c.wait_s + interp) / busy
            } else {
                0.0
            },
            f8_3(interp),
            f8_3(interp),
            f8_3(0.0),
            f8_3(0.0),
            f8_3(0.0),
            0.0
        ));
    }
    s
}

/// NEMO 4.2's report of its split: the namelist's halo, the land subdomains it removed (or
/// its warning when it had to keep some) and the decomposition with the global grid.
fn ocean_output(split: &StandinSplit) -> String {
    let (ni, nj) = (split.jpni, split.jpnj);
    let halo = 1;
    let (gi, gj) = (GRID.0 + 2 * halo, GRID.1 + 2 * halo);
    let side = |g: u32, n: u32| g.div_ceil(n) + 2 * halo;
    let mut s = format!(
        " namelist nammpp\n      halo width (applies to both rows and columns)       nn_hls = {halo}\n\n\
         \x20mpp_init:\n ~~~~~~~~ \n"
    );
    if split.nproc > split.ocean {
        s.push_str(&format!(
            "   The number of mpi processes: {:5}\n   exceeds the maximum number of ocean subdomains = {:5}\n\
             \x20  we suppressed {:4} land subdomains \n   BUT we had to keep {:4} land subdomains that are useless...\n\n\
             \x20   --- YOU ARE WASTING CPU... ---\n\n",
            split.nproc,
            split.ocean,
            (ni * nj).saturating_sub(split.nproc),
            split.nproc - split.ocean
        ));
    } else {
        s.push_str(&format!(
            "\n   Number of mpi processes: {:5}\n   Number of ocean subdomains = {:5}\n\
             \x20  Number of suppressed land subdomains = {:5}\n\n",
            split.nproc,
            split.ocean,
            (ni * nj).saturating_sub(split.nproc)
        ));
    }
    s.push_str(&format!(
        " MPI Message Passing MPI - domain lay out over processors\n\n    defines mpp subdomains\n\
         \x20      jpni = {ni:12}\n       jpnj = {nj:12}\n      jpnij = {:12}\n\n\
         \x20      sum ijpi(i,1) = {:12}  jpiglo = {gi:12}\n\
         \x20      sum ijpj(1,j) = {:12}  jpjglo = {gj:12}\n",
        split.nproc,
        side(GRID.0, ni) * ni,
        side(GRID.1, nj) * nj,
    ));
    s
}

/// A Python `timedelta` as `str()` writes it: `H:MM:SS.ffffff`, without the fraction at whole
/// seconds, and `N day(s), ` before it past a day.
fn timedelta(seconds: f64) -> String {
    let micros = (seconds.max(0.0) * 1e6).round() as u64;
    let (whole, frac) = (micros / 1_000_000, micros % 1_000_000);
    let (days, rest) = (whole / 86_400, whole % 86_400);
    let clock = format!("{}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60);
    let clock = if frac > 0 {
        format!("{clock}.{frac:06}")
    } else {
        clock
    };
    match days {
        0 => clock,
        1 => format!("1 day, {clock}"),
        d => format!("{d} days, {clock}"),
    }
}

/// The run script's four lines for a leg of `wall_s` model seconds simulating `simulated_s`.
fn timing_log(wall_s: f64, simulated_s: f64) -> String {
    let years = simulated_s / SECONDS_PER_YEAR;
    let script_s = wall_s + SCRIPT_OVERHEAD_S;
    format!(
        "Run script elapsed time: {}\nModel elapsed time (no run script overhead): {}\n\
         Model speed incl overhead: {:8.2} SYPD\nModel speed excl overhead: {:8.2} SYPD\n",
        timedelta(script_s),
        timedelta(wall_s),
        years / (script_s / 86_400.0),
        years / (wall_s / 86_400.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the stand-in writes reads back as the split it used, and NEMO's speed factor
    /// rises and falls over neighbouring counts.
    #[test]
    fn ocean_output_reports_the_split_and_the_speed_follows_it() {
        let mut factors = Vec::new();
        for p in [41u32, 97, 150, 151, 152, 259, 387, 1000] {
            let split = standin_split(p).unwrap();
            let d = crate::timing::ecearth4::parse_ocean_output(ocean_output(&split).as_bytes());
            assert_eq!(
                (d.jpni, d.jpnj, d.jpnij),
                (Some(split.jpni), Some(split.jpnj), Some(p))
            );
            assert_eq!(
                d.land_subdomains_removed(),
                Some((split.jpni * split.jpnj).saturating_sub(p))
            );
            assert_eq!(d.global, Some((GRID.0 + 2, GRID.1 + 2)));
            assert_eq!(d.wasting_cpu, p > split.ocean, "{p}");
            factors.push(split.speed_factor);
        }
        let steps: Vec<f64> = (100..160)
            .map(|p| standin_split(p).unwrap().speed_factor)
            .collect();
        let ups = steps.windows(2).filter(|w| w[1] > w[0] * 1.005).count();
        let downs = steps.windows(2).filter(|w| w[1] < w[0] / 1.005).count();
        assert!(ups > 0 && downs > 0, "{steps:?}");
        assert!(
            factors.iter().all(|f| (0.5..2.0).contains(f)),
            "{factors:?}"
        );
    }

    #[test]
    fn timedeltas_read_back() {
        for s in [
            0.5,
            23.456789,
            3600.0,
            86_400.0 + 61.25,
            3.0 * 86_400.0 + 1.0,
        ] {
            let text = timedelta(s);
            let back = crate::timing::ecearth4::timedelta_s(&text).unwrap();
            assert!((back - s).abs() < 1e-6, "{s} -> {text} -> {back}");
        }
        assert_eq!(timedelta(61.0), "0:01:01");
        assert_eq!(timedelta(86_401.5), "1 day, 0:00:01.500000");
        assert_eq!(a10("OpenIFS_TL159"), "OpenIFS_TL");
        assert_eq!(a10("oceanx"), "    oceanx");
        assert_eq!(f8_3(12345.0), "********");
    }
}
