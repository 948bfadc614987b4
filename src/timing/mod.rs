//! Reading what a coupled run measured: LUCIA and the other timing formats.
//!
//! One entry point, [`read`], turns a path (a file or a directory) into a [`Reading`]: either a
//! [`Measurement`] of one run (per component: PEs, analysed coupling steps, compute, waiting,
//! interpolation and sending seconds, jitter; the coupled wall time of the analysed window and
//! the simulated seconds) or [`Reading::Incomplete`] when the run is still writing and nothing
//! complete can be measured yet. The CPMIP metrics (SYPD, CHSY, coupling costs) are methods of
//! [`Measurement`], computed with [`crate::metrics`] so every part of autolb agrees on them.
//!
//! Formats (one submodule each; the guide's `timing.md` describes them, `timing-ecearth4.md` the
//! EC-Earth4 and OASIS 5 ones):
//! * [`Format::LuciaRaw`]: raw `lucia.CC.RRRRRR` files of OASIS3-MCT 3/4 ([`lucia_raw`]);
//! * [`Format::LuciaLog`]: the `lucia.log` text of the CERFACS post-processor ([`lucia_log`]);
//! * [`Format::Oasis5`]: OASIS3-MCT 5 `load_balancing_info.txt` ([`oasis5`]);
//! * [`Format::Table`] / [`Format::Summary`]: BSC lucia_lite `table.csv` / `summary` ([`table`]);
//! * [`Format::Steps`]: the per-coupling-step CSV, kept as a per-step series ([`step_series`]);
//! * [`Format::Ecearth4`]: an EC-Earth4 run directory, `log/NNN/` beside the OASIS 5 file: the
//!   OASIS file's components with the leg's wall time and SYPD from `timing.log` ([`ecearth4`]).
//! * [`Format::Cime`] / [`Format::Esmf`]: a CIME run's (CESM, E3SM, NorESM) `cesm_timing.*`
//!   summary and NUOPC's `ESMF_Profile.summary` ([`cime`]; the guide's `timing-cime.md`).
//!
//! Files of running jobs are half-written as a rule, not an exception: readers measure the
//! complete part and say so in [`Measurement::partial`], or return [`Reading::Incomplete`].
//! They never panic on any input and never pass a number off as complete when it is not.

pub mod cime;
mod consistency;
pub mod ecearth4;
pub mod lucia_log;
pub mod lucia_raw;
mod measurement;
pub mod oasis5;
pub mod step_series;
pub mod table;
pub(crate) mod text;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::limits::MAX_FILE_BYTES;
pub use consistency::CLOCK_NOISE;
pub use measurement::{ComponentTiming, Measurement, StepSeries};
pub use step_series::StepRow;

/// The timing formats autolb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Raw `lucia.CC.RRRRRR` files (OASIS3-MCT 3/4), a directory of them or one file.
    LuciaRaw,
    /// `lucia.log`, the text the CERFACS post-processor prints.
    LuciaLog,
    /// OASIS3-MCT 5 `load_balancing_info.txt`.
    Oasis5,
    /// BSC lucia_lite `table.csv`.
    Table,
    /// BSC lucia_lite `summary`.
    Summary,
    /// Per-coupling-step CSV `,Component,Waiting,Interpolation,Sending`.
    Steps,
    /// An EC-Earth4 run directory: `load_balancing_info.txt` and `log/NNN/timing.log`.
    Ecearth4,
    /// A CIME run's timing summary, `cesm_timing.CASE.LID` or `e3sm_timing.CASE.LID`.
    Cime,
    /// An ESMF profile summary, `ESMF_Profile.summary` (NUOPC runs).
    Esmf,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 9] = [
        Format::LuciaRaw,
        Format::LuciaLog,
        Format::Oasis5,
        Format::Table,
        Format::Summary,
        Format::Steps,
        Format::Ecearth4,
        Format::Cime,
        Format::Esmf,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Format::LuciaRaw => "lucia-raw",
            Format::LuciaLog => "lucia-log",
            Format::Oasis5 => "oasis5",
            Format::Table => "table",
            Format::Summary => "summary",
            Format::Steps => "steps",
            Format::Ecearth4 => "ecearth4",
            Format::Cime => "cime",
            Format::Esmf => "esmf",
        }
    }

    /// The width the format cuts component names to: `lucia.log` prints 6 characters, OASIS 5
    /// (Fortran `A10`) 10. A longer timing name matches its cut.
    pub fn name_width(self) -> Option<usize> {
        match self {
            Format::LuciaLog => Some(6),
            Format::Oasis5 | Format::Ecearth4 => Some(10),
            _ => None,
        }
    }

    /// Whether `in_file`, a name as this format writes it, is the component called `wanted`:
    /// the same name, or `wanted` cut to the format's width.
    pub fn same_name(self, in_file: &str, wanted: &str) -> bool {
        if in_file == wanted {
            return true;
        }
        match self.name_width() {
            Some(width) => {
                in_file.chars().count() == width
                    && wanted.chars().count() > width
                    && wanted.chars().take(width).eq(in_file.chars())
            }
            None => false,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match wanted.as_str() {
            "raw" | "lucia" => Some(Format::LuciaRaw),
            "log" => Some(Format::LuciaLog),
            "oasis-5" | "load-balancing-info" => Some(Format::Oasis5),
            "table.csv" | "lucia-lite" => Some(Format::Table),
            "step-series" | "timesteps" | "series" => Some(Format::Steps),
            "ec-earth4" | "ece4" => Some(Format::Ecearth4),
            "cesm" | "e3sm" | "noresm" | "cesm-timing" => Some(Format::Cime),
            "esmf-profile" | "nuopc" => Some(Format::Esmf),
            _ => None,
        };
        alias
            .or_else(|| Format::ALL.into_iter().find(|f| f.name() == wanted))
            .ok_or_else(|| {
                format!(
                    "unknown timing format {s:?}; use one of {}",
                    Format::ALL.map(Format::name).join(", ")
                )
            })
    }
}

/// How to read a path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// Read as this format instead of detecting it from the path.
    pub format: Option<Format>,
    /// Coupling period in seconds: simulated time per coupling step. Needed for the simulated
    /// time of formats that count steps only (raw LUCIA, lucia.log, load_balancing_info.txt).
    pub period_s: Option<f64>,
    /// PEs per component name as written in the timing output. Raw LUCIA files do not carry
    /// them; given here they complete the measurement and tell which rank files must exist.
    pub nproc: BTreeMap<String, u32>,
}

/// What a path holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// A measurement (possibly of the complete part only: see [`Measurement::partial`]).
    Measured(Measurement),
    /// The run has not written enough to measure anything yet (a running job): not an error.
    Incomplete {
        /// What is missing, for the user (usually starting with the path; see
        /// [`reason_without_path`]).
        reason: String,
    },
}

impl Reading {
    /// The measurement, if there is one and it covers the whole run.
    pub fn complete(&self) -> Option<&Measurement> {
        match self {
            Reading::Measured(m) if m.partial.is_none() => Some(m),
            _ => None,
        }
    }
}

/// `reason` (of a [`Reading::Incomplete`] of `path`) without its leading `PATH: `, for a caller
/// that names the path itself; a reason about a file inside `path` keeps that file's name.
pub fn reason_without_path<'a>(reason: &'a str, path: &Path) -> &'a str {
    reason
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(reason)
}

/// Why a path could not be read at all. Half-written files are not errors (see [`Reading`]);
/// these are: a missing path, a file that is not what its format says, an unusable option.
#[derive(Debug, thiserror::Error)]
pub enum TimingError {
    /// The path cannot be read: missing, unreadable, too large, or not a regular file or
    /// directory.
    #[error("{path}: {reason}")]
    Io {
        /// The file or directory that could not be read.
        path: PathBuf,
        /// The operating system's error, or why autolb refuses the path.
        reason: String,
    },
    /// No `--format` was given and neither the file's name nor its first line tells the format.
    #[error("{path}: cannot tell which timing format this is; {hint}")]
    UnknownFormat {
        /// The file that was sniffed.
        path: PathBuf,
        /// What to do: wait for an empty file to be written, or pass `--format`.
        hint: String,
    },
    /// A line of a whole (not half-written) file does not have the format's shape.
    #[error("{file}: line {line}: {message}")]
    Parse {
        /// The timing file.
        file: PathBuf,
        /// 1-based line number of the offending line.
        line: usize,
        /// What is wrong with the line and, where it helps, the value found.
        message: String,
    },
    /// The file is whole but contradicts itself (a block or row lost or damaged).
    #[error("{file}: {message}")]
    Inconsistent {
        /// The timing file.
        file: PathBuf,
        /// Which numbers disagree.
        message: String,
    },
    /// The file states a component's PEs and the run (or `--nproc`) says otherwise: the output
    /// is another run's.
    #[error(
        "{file}: {component} ran on {in_file} PEs by the timing output, but the run has {expected}; \
         this output belongs to another run"
    )]
    NprocMismatch {
        /// The timing file that states the PEs.
        file: PathBuf,
        /// The component's name as the timing output writes it.
        component: String,
        /// PEs the timing output states.
        in_file: u32,
        /// PEs the run (or `--nproc`) says the component had.
        expected: u32,
    },
    /// A [`ReadOptions`] value is unusable for this path: a coupling period that is not a
    /// positive number of seconds, a component on 0 PEs, a rank file beyond `--nproc`, or a
    /// `--format` that does not fit a file or directory. The message says how to fix it.
    #[error("{0}")]
    Option(String),
}

impl TimingError {
    fn io(path: &Path, e: &std::io::Error) -> TimingError {
        TimingError::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn inconsistent(file: &Path, message: impl Into<String>) -> TimingError {
        TimingError::Inconsistent {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }

    pub(crate) fn parse(file: &Path, line: usize, message: impl Into<String>) -> TimingError {
        TimingError::Parse {
            file: file.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// Reads the timing output at `path` (a file or a directory).
///
/// The format comes from `opts.format` or is detected from the path: a directory of
/// `lucia.*` files is raw LUCIA; a directory holding `table.csv`, `summary`, `lucia.log` or
/// `load_balancing_info.txt` is read through that file; a file is recognised by its name and,
/// failing that, by its first line.
pub fn read(path: &Path, opts: &ReadOptions) -> Result<Reading, TimingError> {
    validate_options(opts)?;
    let meta = std::fs::metadata(path).map_err(|e| TimingError::io(path, &e))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(TimingError::Io {
            path: path.to_path_buf(),
            reason: "not a regular file or directory (a FIFO, socket or device); give a timing file or a run directory".into(),
        });
    }
    let (format, target) = match opts.format {
        Some(f) => (f, resolve_for_format(path, meta.is_dir(), f)?),
        None if meta.is_dir() => match detect_in_dir(path)? {
            Some(found) => found,
            None => {
                return Ok(Reading::Incomplete {
                    reason: format!(
                        "{}: no timing output yet (no lucia.* files, table.csv, summary, \
                         lucia.log, load_balancing_info.txt, EC-Earth4 log/NNN/, \
                         cesm_timing.* or ESMF_Profile.summary)",
                        path.display()
                    ),
                })
            }
        },
        None => (detect_file(path)?, path.to_path_buf()),
    };
    let mut reading = match format {
        Format::LuciaRaw => lucia_raw::read(&target, opts)?,
        Format::LuciaLog => lucia_log::read_file(&target, opts)?,
        Format::Oasis5 => oasis5::read_file(&target, opts)?,
        Format::Table => table::read_table_file(&target, opts)?,
        Format::Summary => table::read_summary_file(&target, opts)?,
        Format::Steps => step_series::read_file(&target, opts)?,
        Format::Ecearth4 => ecearth4::read_run_dir(&target, opts)?,
        Format::Cime => cime::summary::read_file(&target)?,
        Format::Esmf => cime::esmf::read_file(&target)?,
    };
    if let Reading::Measured(m) = &mut reading {
        consistency::check(m, &target)?;
    }
    Ok(reading)
}

pub(crate) fn validate_options(opts: &ReadOptions) -> Result<(), TimingError> {
    if let Some(p) = opts.period_s {
        if !(p.is_finite() && p > 0.0) {
            return Err(TimingError::Option(format!(
                "coupling period {} s is not a positive number of seconds; EC-Earth3 SR uses 2700",
                crate::limits::display_number(p)
            )));
        }
    }
    if let Some((name, _)) = opts.nproc.iter().find(|(_, n)| **n == 0) {
        return Err(TimingError::Option(format!(
            "--nproc {name}=0: a component needs at least one PE"
        )));
    }
    Ok(())
}

/// File names that identify a format, as a file or inside a directory (there in order of
/// preference after raw LUCIA files, the primary input).
const DIR_FILES: [(&str, Format); 4] = [
    ("table.csv", Format::Table),
    ("summary", Format::Summary),
    ("lucia.log", Format::LuciaLog),
    ("load_balancing_info.txt", Format::Oasis5),
];

fn detect_in_dir(dir: &Path) -> Result<Option<(Format, PathBuf)>, TimingError> {
    if lucia_raw::has_rank_files(dir)? {
        return Ok(Some((Format::LuciaRaw, dir.to_path_buf())));
    }
    if ecearth4::is_run_dir(dir) {
        return Ok(Some((Format::Ecearth4, dir.to_path_buf())));
    }
    for (name, format) in DIR_FILES {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return Ok(Some((format, candidate)));
        }
    }
    cime::newest_in_dir(dir, None).map_err(|e| TimingError::io(dir, &e))
}

fn resolve_for_format(path: &Path, is_dir: bool, format: Format) -> Result<PathBuf, TimingError> {
    if format == Format::Ecearth4 && !is_dir {
        return Err(TimingError::Option(format!(
            "{}: --format ecearth4 reads an EC-Earth4 run directory (log/NNN/ and \
             load_balancing_info.txt); give the directory",
            path.display()
        )));
    }
    if !is_dir || matches!(format, Format::LuciaRaw | Format::Ecearth4) {
        return Ok(path.to_path_buf());
    }
    if matches!(format, Format::Cime | Format::Esmf) {
        let found =
            cime::newest_in_dir(path, Some(format)).map_err(|e| TimingError::io(path, &e))?;
        return match found {
            Some((f, file)) if f == format => Ok(file),
            _ => Err(TimingError::Option(format!(
                "{}: holds no {} file; give the file's path",
                path.display(),
                if format == Format::Cime {
                    "cesm_timing.*/e3sm_timing.*"
                } else {
                    "ESMF_Profile.summary"
                }
            ))),
        };
    }
    if let Some((name, _)) = DIR_FILES.iter().find(|(_, f)| *f == format) {
        return Ok(path.join(name));
    }
    Err(TimingError::Option(format!(
        "{}: is a directory; --format {format} reads a file, give its path",
        path.display()
    )))
}

fn detect_file(path: &Path) -> Result<Format, TimingError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if lucia_raw::is_rank_file_name(&name) {
        return Ok(Format::LuciaRaw);
    }
    let by_name = DIR_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, f)| f)
        .or_else(|| {
            name.starts_with("load_balancing_info")
                .then_some(Format::Oasis5)
        })
        .or_else(|| cime::summary::is_summary_name(&name).then_some(Format::Cime))
        .or_else(|| cime::esmf::is_profile_name(&name).then_some(Format::Esmf));
    if let Some(f) = by_name {
        return Ok(f);
    }
    sniff(path)
}

/// Recognises a file by its first non-blank line (a few kilobytes are enough).
fn sniff(path: &Path) -> Result<Format, TimingError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .map_err(|e| TimingError::io(path, &e))?;
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    let squeezed: String = first
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let format = if squeezed.starts_with("Balance:") {
        Some(Format::LuciaRaw)
    } else if squeezed.starts_with(",nproc,") {
        Some(Format::Table)
    } else if squeezed.starts_with(",Component,") {
        Some(Format::Steps)
    } else if text.contains("Calculations") && text.contains("Waiting time") {
        Some(Format::LuciaLog)
    } else if text.contains("Computing time") && text.contains("Waiting time") {
        Some(Format::Oasis5)
    } else if text.contains("Number of processes:") {
        Some(Format::Summary)
    } else if cime::summary::sniff(&text) {
        Some(Format::Cime)
    } else if cime::esmf::sniff(&text) {
        Some(Format::Esmf)
    } else {
        None
    };
    match (format, first) {
        (Some(f), _) => Ok(f),
        (None, None) => Err(TimingError::UnknownFormat {
            path: path.to_path_buf(),
            hint: "the file is empty; if the run is still writing, wait, else pass --format".into(),
        }),
        (None, Some(_)) => Err(TimingError::UnknownFormat {
            path: path.to_path_buf(),
            hint: format!(
                "pass --format (one of {})",
                Format::ALL.map(Format::name).join(", ")
            ),
        }),
    }
}

/// The note of a reading that counts coupling steps but was given no coupling period.
pub(crate) const PERIOD_UNKNOWN: &str =
    "coupling period unknown; pass --period SECONDS for simulated time and SYPD";

/// The PEs of component `name`: the run's (`opts.nproc`) checked against what the file says.
/// A file that states other PEs than the run's is another run's output: refused, naming both.
pub(crate) fn resolve_nproc(
    path: &Path,
    name: &str,
    in_file: Option<u32>,
    opts: &ReadOptions,
) -> Result<Option<u32>, TimingError> {
    match (opts.nproc.get(name).copied(), in_file) {
        (Some(expected), Some(in_file)) if expected != in_file => Err(TimingError::NprocMismatch {
            file: path.to_path_buf(),
            component: name.to_string(),
            in_file,
            expected,
        }),
        (given, in_file) => Ok(given.or(in_file)),
    }
}

/// Reads a whole file, mapping errors to [`TimingError::Io`]. Only regular files are read (a
/// FIFO would block forever, a device never end) and only up to [`MAX_FILE_BYTES`].
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, TimingError> {
    crate::fsutil::read_regular_file(path, MAX_FILE_BYTES).map_err(|e| TimingError::io(path, &e))
}
