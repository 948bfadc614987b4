//! Scalability curves: the measured speed (SYPD) of one component at several PE counts.
//!
//! A curve is the only input the prediction needs per component, so loading is strict about
//! what matters (positive integer PEs, finite positive SYPD, no duplicates, at least two points)
//! and lenient about what does not (spaces and tabs around values, `#` comments, CRLF line ends,
//! extra columns, unsorted rows). Every error names the file, the line and the offending value.
//!
//! A hybrid MPI/OpenMP component (OpenIFS in EC-Earth4) is measured at several thread counts per
//! rank: its file then carries a `threads` column, `nproc` counts MPI ranks, and each thread
//! count is a curve of its own ([`Curve::load_series`]), since speed against ranks at 2 threads
//! says nothing exact about speed at 4. A file without the column is one curve at 1 thread.

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::limits::MAX_COMPONENT_NAME;
use serde::{Deserialize, Serialize};

/// One measured point of a scalability curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// MPI processes given to the component.
    pub nproc: u32,
    /// Simulated years per wall-clock day measured at `nproc`.
    pub sypd: f64,
}

/// A validated scalability curve: at least two points, sorted by `nproc`, no duplicates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    /// Component name (as the user calls it; also the key in results).
    pub name: String,
    points: Vec<Point>,
    /// OpenMP threads per MPI rank at every point; `nproc` then counts ranks, and a point takes
    /// `nproc * threads` cores. 1 for a pure-MPI curve (left out of its JSON, as before).
    #[serde(skip_serializing_if = "is_one")]
    threads: u32,
}

fn is_one(threads: &u32) -> bool {
    *threads == 1
}

/// Where a curve came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source(pub String);

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a curve could not be loaded. Every variant carries enough to find and fix the problem.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CurveError {
    /// The file could not be read (missing, a directory, a FIFO, too large, not UTF-8).
    #[error("{file}: cannot read the curve: {reason}")]
    Unreadable {
        /// The file as the user named it.
        file: String,
        /// What the filesystem or the bounded reader said.
        reason: String,
    },
    /// The file holds no header and no rows.
    #[error("{file}: the curve is empty; expected a header `nproc,SYPD` and at least two rows")]
    Empty {
        /// The file as the user named it.
        file: String,
    },
    /// The first non-comment line does not name the `nproc` and `SYPD` columns.
    #[error("{file}: line {line}: the header {header:?} must name the columns `nproc` and `SYPD`; write `nproc,SYPD`")]
    BadHeader {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the header.
        line: u64,
        /// The header as found.
        header: String,
    },
    /// Fewer than the two points a curve needs to interpolate.
    #[error("{file}: only {found} data row(s); a curve needs at least two measured points")]
    TooFewPoints {
        /// The file as the user named it.
        file: String,
        /// How many data rows it holds.
        found: usize,
    },
    /// A PE count that is not a positive integer.
    #[error("{file}: line {line}: nproc {value:?} is not a positive integer; write the number of MPI processes, e.g. 48")]
    BadNproc {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the row (for points not read from a file, their 1-based position).
        line: u64,
        /// The value as written.
        value: String,
    },
    /// An SYPD that is not a finite number above 0.
    #[error("{file}: line {line}: SYPD {value:?} is not a finite number > 0; write the measured simulated years per day, e.g. 3.27")]
    BadSypd {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the row (for points not read from a file, their 1-based position).
        line: u64,
        /// The value as written.
        value: String,
    },
    /// A row without one of the two values.
    #[error("{file}: line {line}: missing the {column} value; each row needs nproc and SYPD")]
    MissingValue {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the row.
        line: u64,
        /// The column that is missing: `nproc` or `SYPD`.
        column: &'static str,
    },
    /// Two rows measure the same PE count.
    #[error("{file}: line {line}: nproc {nproc} appears twice (first on line {first_line}); keep one measurement per PE count")]
    Duplicate {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the later of the two rows.
        line: u64,
        /// The PE count measured twice.
        nproc: u32,
        /// 1-based line of the earlier row.
        first_line: u64,
    },
    /// The JSON form does not parse as a list of points or a named curve.
    #[error("{file}: {reason}")]
    BadJson {
        /// The file as the user named it.
        file: String,
        /// The parser's message with its line and the expected form.
        reason: String,
    },
    /// A `threads` value is not a positive whole number.
    #[error("{file}: line {line}: threads {value:?} is not a positive integer; write the OpenMP threads per MPI rank, e.g. 4 (1 for pure MPI)")]
    BadThreads {
        /// The file as the user named it.
        file: String,
        /// 1-based line of the value.
        line: u64,
        /// The value as written.
        value: String,
    },
    /// Several thread counts where one curve is read.
    #[error("{file}: holds curves at {counts} threads per rank, but one curve is read here; keep the rows of one thread count in this file")]
    SeveralThreadCounts {
        /// The file as the user named it.
        file: String,
        /// The thread counts found, comma-separated.
        counts: String,
    },
    /// A thread count with fewer than two measured points.
    #[error("{file}: only {found} data row(s) at {threads} threads per rank; each thread count needs at least two measured points")]
    TooFewPointsAtThreads {
        /// The file as the user named it.
        file: String,
        /// The thread count.
        threads: u32,
        /// Rows found at it.
        found: usize,
    },
}

impl Curve {
    /// Builds a curve from points, validating and sorting them. `file` is used in errors only.
    pub fn from_points(
        name: impl Into<String>,
        file: &str,
        points: &[Point],
    ) -> Result<Curve, CurveError> {
        let lined: Vec<(u64, Point)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u64 + 1, *p))
            .collect();
        build(name.into(), file, lined)
    }

    /// The same curve measured at `threads` OpenMP threads per rank (`nproc` then counts
    /// ranks).
    pub fn with_threads(self, threads: std::num::NonZeroU32) -> Curve {
        Curve {
            threads: threads.get(),
            ..self
        }
    }

    /// Loads a curve from a file: JSON when the name ends in `.json`, otherwise `nproc,SYPD` CSV.
    /// A file with rows at several thread counts is refused here ([`Curve::load_series`] reads
    /// it).
    pub fn load(name: impl Into<String>, path: &Path) -> Result<Curve, CurveError> {
        let file = path.display().to_string();
        single(&file, Curve::load_series(name, path)?)
    }

    /// Loads every thread count's curve from a file, ascending by threads: one curve at 1 thread
    /// for a file without a `threads` column.
    pub fn load_series(name: impl Into<String>, path: &Path) -> Result<Vec<Curve>, CurveError> {
        let file = path.display().to_string();
        let text = crate::fsutil::read_small_text(path).map_err(|e| CurveError::Unreadable {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Curve::series_from_json_str(name, &file, &text)
        } else {
            Curve::series_from_csv_str(name, &file, &text)
        }
    }

    /// Parses `nproc,SYPD` CSV text (header required, extra columns ignored); one thread count.
    pub fn from_csv_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Curve, CurveError> {
        single(file, Curve::series_from_csv_str(name, file, text)?)
    }

    /// Parses `nproc,SYPD[,threads]` CSV text into one curve per thread count, ascending.
    pub fn series_from_csv_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Vec<Curve>, CurveError> {
        let rows = parse_csv(file, text)?;
        build_series(name.into(), file, rows)
    }

    /// Parses the JSON form: either `[{"nproc": 48, "sypd": 3.27}, ...]` or
    /// `{"name": "IFS", "points": [...]}` (the name in the file is ignored in favour of `name`);
    /// one thread count.
    pub fn from_json_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Curve, CurveError> {
        single(file, Curve::series_from_json_str(name, file, text)?)
    }

    /// Parses the JSON form into one curve per thread count, ascending; a point may carry
    /// `"threads": 4` (1 when left out).
    pub fn series_from_json_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Vec<Curve>, CurveError> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum JsonCurve {
            Bare(Vec<JsonPoint>),
            Named { points: Vec<JsonPoint> },
        }
        #[derive(Deserialize)]
        struct JsonPoint {
            nproc: serde_json::Value,
            #[serde(alias = "SYPD")]
            sypd: serde_json::Value,
            #[serde(default)]
            threads: Option<serde_json::Value>,
        }
        if text.trim().is_empty() {
            return Err(CurveError::Empty {
                file: file.to_string(),
            });
        }
        let parsed: JsonCurve = serde_json::from_str(text).map_err(|e| CurveError::BadJson {
            file: file.to_string(),
            reason: format!(
                "line {}: {e}; expected [{{\"nproc\": 48, \"sypd\": 3.27}}, ...]",
                e.line()
            ),
        })?;
        let points = match parsed {
            JsonCurve::Bare(p) | JsonCurve::Named { points: p } => p,
        };
        let mut rows = Vec::with_capacity(points.len());
        for (i, p) in points.iter().enumerate() {
            // JSON has no line per point; report the point's 1-based index as the "line".
            let line = i as u64 + 1;
            let nproc_text = p.nproc.to_string();
            let nproc = p
                .nproc
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| CurveError::BadNproc {
                    file: format!("{file} (point {line})"),
                    line,
                    value: nproc_text.clone(),
                })?;
            let sypd = p.sypd.as_f64().ok_or_else(|| CurveError::BadSypd {
                file: format!("{file} (point {line})"),
                line,
                value: p.sypd.to_string(),
            })?;
            let threads = match &p.threads {
                None => 1,
                Some(t) => t
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| CurveError::BadThreads {
                        file: format!("{file} (point {line})"),
                        line,
                        value: t.to_string(),
                    })?,
            };
            rows.push((line, Point { nproc, sypd }, threads));
        }
        build_series(name.into(), file, rows)
    }

    /// OpenMP threads per MPI rank at every point (1 for pure MPI).
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// The measured points, sorted by nproc ascending.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Smallest measured PE count.
    pub fn first_nproc(&self) -> u32 {
        self.points[0].nproc
    }

    /// Largest measured PE count.
    pub fn last_nproc(&self) -> u32 {
        self.points[self.points.len() - 1].nproc
    }

    /// PE counts as `f64`, for interpolation.
    pub fn xs(&self) -> Vec<f64> {
        self.points.iter().map(|p| f64::from(p.nproc)).collect()
    }

    /// SYPD values, for interpolation.
    pub fn ys(&self) -> Vec<f64> {
        self.points.iter().map(|p| p.sypd).collect()
    }
}

/// A curve given on the command line or in a config file as `NAME=PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurveArg {
    /// The component's name (checked by [`validate_component_name`]).
    pub name: String,
    /// The curve file, CSV or JSON (by its extension).
    pub path: PathBuf,
}

/// Checks a component name: not empty, at most [`MAX_COMPONENT_NAME`] bytes, only ASCII letters,
/// digits, `_` and `-`, since names end up in file names, job scripts and shell variables. The
/// error says what to change.
pub fn validate_component_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a component name cannot be empty".into());
    }
    if name.len() > MAX_COMPONENT_NAME {
        return Err(format!(
            "a component name of {} characters is too long; use at most {MAX_COMPONENT_NAME}",
            name.chars().count()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "component name {name:?} contains {bad:?}; use only letters, digits, '_' and '-'"
        ));
    }
    Ok(())
}

/// One data row: its line, the point, and the threads per rank (1 without a `threads` column).
type Row = (u64, Point, u32);

fn parse_csv(file: &str, text: &str) -> Result<Vec<Row>, CurveError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut columns: Option<Columns> = None;
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| CurveError::Unreadable {
            file: file.to_string(),
            reason: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(|f| f.is_empty()) {
            continue;
        }
        let Some(Columns {
            nproc: nproc_col,
            sypd: sypd_col,
            threads: threads_col,
        }) = columns
        else {
            columns = Some(
                header_columns(&record).ok_or_else(|| CurveError::BadHeader {
                    file: file.to_string(),
                    line,
                    header: record.iter().collect::<Vec<_>>().join(","),
                })?,
            );
            continue;
        };
        let field = |col: usize, column: &'static str| {
            record
                .get(col)
                .filter(|v| !v.is_empty())
                .ok_or(CurveError::MissingValue {
                    file: file.to_string(),
                    line,
                    column,
                })
        };
        let nproc_text = field(nproc_col, "nproc")?;
        let sypd_text = field(sypd_col, "SYPD")?;
        let nproc = parse_nproc(nproc_text).ok_or_else(|| CurveError::BadNproc {
            file: file.to_string(),
            line,
            value: nproc_text.to_string(),
        })?;
        let sypd = sypd_text.parse::<f64>().map_err(|_| CurveError::BadSypd {
            file: file.to_string(),
            line,
            value: sypd_text.to_string(),
        })?;
        let threads = match threads_col {
            None => 1,
            Some(col) => {
                let text = field(col, "threads")?;
                parse_nproc(text).ok_or_else(|| CurveError::BadThreads {
                    file: file.to_string(),
                    line,
                    value: text.to_string(),
                })?
            }
        };
        rows.push((line, Point { nproc, sypd }, threads));
    }
    if columns.is_none() {
        return Err(CurveError::Empty {
            file: file.to_string(),
        });
    }
    Ok(rows)
}

/// Accepts `48` and `48.0` (spreadsheets write the latter), nothing fractional or negative.
fn parse_nproc(text: &str) -> Option<u32> {
    if let Ok(n) = text.parse::<u32>() {
        return (n > 0).then_some(n);
    }
    let x = text.parse::<f64>().ok()?;
    (x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32)
}

/// Where the columns are in a curve file.
#[derive(Debug, Clone, Copy)]
struct Columns {
    nproc: usize,
    sypd: usize,
    /// The optional `threads` column (OpenMP threads per MPI rank).
    threads: Option<usize>,
}

/// The `nproc` and `SYPD` columns, by those names only (case-insensitive), as the curve-files
/// page promises: a `cores` or `PEs` column might count something else (threads, nodes), so it is
/// refused rather than guessed. A `threads` column is optional.
fn header_columns(record: &csv::StringRecord) -> Option<Columns> {
    let find = |name: &str| record.iter().position(|h| h.eq_ignore_ascii_case(name));
    Some(Columns {
        nproc: find("nproc")?,
        sypd: find("sypd")?,
        threads: find("threads"),
    })
}

/// The one curve of a file read where a single thread count is expected.
fn single(file: &str, mut series: Vec<Curve>) -> Result<Curve, CurveError> {
    if series.len() == 1 {
        return Ok(series.remove(0));
    }
    let counts: Vec<String> = series.iter().map(|c| c.threads.to_string()).collect();
    Err(CurveError::SeveralThreadCounts {
        file: file.to_string(),
        counts: counts.join(", "),
    })
}

/// Splits rows by thread count (ascending) and builds one curve of each. A file with one
/// thread count keeps the plain errors (e.g. too few points) word for word.
fn build_series(name: String, file: &str, rows: Vec<Row>) -> Result<Vec<Curve>, CurveError> {
    let mut counts: Vec<u32> = rows.iter().map(|r| r.2).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() <= 1 {
        let threads = counts.first().copied().unwrap_or(1);
        let curve = build(
            name,
            file,
            rows.into_iter().map(|(l, p, _)| (l, p)).collect(),
        )?;
        return Ok(vec![Curve { threads, ..curve }]);
    }
    counts
        .into_iter()
        .map(|threads| {
            let at: Vec<(u64, Point)> = rows
                .iter()
                .filter(|r| r.2 == threads)
                .map(|&(l, p, _)| (l, p))
                .collect();
            let found = at.len();
            match build(name.clone(), file, at) {
                Ok(curve) => Ok(Curve { threads, ..curve }),
                Err(CurveError::TooFewPoints { .. }) => Err(CurveError::TooFewPointsAtThreads {
                    file: file.to_string(),
                    threads,
                    found,
                }),
                Err(e) => Err(e),
            }
        })
        .collect()
}

fn build(name: String, file: &str, mut rows: Vec<(u64, Point)>) -> Result<Curve, CurveError> {
    for &(line, p) in &rows {
        if p.nproc == 0 {
            return Err(CurveError::BadNproc {
                file: file.to_string(),
                line,
                value: p.nproc.to_string(),
            });
        }
        if !(p.sypd.is_finite() && p.sypd > 0.0) {
            return Err(CurveError::BadSypd {
                file: file.to_string(),
                line,
                value: p.sypd.to_string(),
            });
        }
    }
    rows.sort_by_key(|&(line, p)| (p.nproc, line));
    for pair in rows.windows(2) {
        if pair[0].1.nproc == pair[1].1.nproc {
            return Err(CurveError::Duplicate {
                file: file.to_string(),
                line: pair[1].0.max(pair[0].0),
                nproc: pair[0].1.nproc,
                first_line: pair[1].0.min(pair[0].0),
            });
        }
    }
    if rows.len() < 2 {
        return Err(CurveError::TooFewPoints {
            file: file.to_string(),
            found: rows.len(),
        });
    }
    Ok(Curve {
        name,
        points: rows.into_iter().map(|(_, p)| p).collect(),
        threads: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> Result<Curve, CurveError> {
        Curve::from_csv_str("IFS", "t.csv", text)
    }

    #[test]
    fn reads_tabs_crlf_comments_extra_columns_and_sorts() {
        let c = csv("# measured on MN4\r\nnproc,SYPD,note\r\n240,\t12.96,x\r\n48 , 3.27\r\n\r\n")
            .unwrap();
        assert_eq!(
            c.points(),
            &[
                Point {
                    nproc: 48,
                    sypd: 3.27
                },
                Point {
                    nproc: 240,
                    sypd: 12.96
                }
            ]
        );
    }

    #[test]
    fn errors_name_line_and_value() {
        let e = csv("nproc,SYPD\n48,3.27\n96,abc\n").unwrap_err();
        assert_eq!(
            e,
            CurveError::BadSypd {
                file: "t.csv".into(),
                line: 3,
                value: "abc".into()
            }
        );
        let e = csv("nproc,SYPD\n48,3.27\n-5,2\n").unwrap_err();
        assert!(matches!(e, CurveError::BadNproc { line: 3, .. }), "{e}");
        let e = csv("nproc,SYPD\n48,3.27\n96,NaN\n").unwrap_err();
        assert!(
            e.to_string().contains("line 3") && e.to_string().contains("NaN"),
            "{e}"
        );
        let e = csv("nproc,SYPD\n48,3.27\n96,0\n").unwrap_err();
        assert!(matches!(e, CurveError::BadSypd { line: 3, .. }));
        let e = csv("nproc,SYPD\n48,3.27\n48,3.5\n").unwrap_err();
        assert_eq!(
            e,
            CurveError::Duplicate {
                file: "t.csv".into(),
                line: 3,
                nproc: 48,
                first_line: 2
            }
        );
    }

    #[test]
    fn empty_header_only_and_single_point_are_rejected() {
        assert!(matches!(csv(""), Err(CurveError::Empty { .. })));
        assert!(matches!(
            csv("# nothing\n\n"),
            Err(CurveError::Empty { .. })
        ));
        assert!(matches!(
            csv("nproc,SYPD\n"),
            Err(CurveError::TooFewPoints { found: 0, .. })
        ));
        assert!(matches!(
            csv("nproc,SYPD\n48,1\n"),
            Err(CurveError::TooFewPoints { found: 1, .. })
        ));
        assert!(matches!(
            csv("48,1\n96,2\n"),
            Err(CurveError::BadHeader { line: 1, .. })
        ));
    }

    #[test]
    fn a_header_must_name_nproc_not_a_look_alike() {
        for header in ["nprocs,SYPD", "cores,SYPD", "PEs,SYPD"] {
            let e = csv(&format!("{header}\n48,1\n96,2\n")).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "t.csv: line 1: the header {header:?} must name the columns `nproc` and \
                     `SYPD`; write `nproc,SYPD`"
                )
            );
        }
        assert!(csv("NPROC,sypd,extra\n48,1,x\n96,2,y\n").is_ok());
    }

    #[test]
    fn json_forms() {
        let bare = Curve::from_json_str(
            "A",
            "a.json",
            r#"[{"nproc":96,"sypd":2},{"nproc":48,"SYPD":1}]"#,
        )
        .unwrap();
        assert_eq!(bare.first_nproc(), 48);
        let named = Curve::from_json_str(
            "A",
            "a.json",
            r#"{"name":"x","points":[{"nproc":48,"sypd":1},{"nproc":96,"sypd":2}]}"#,
        )
        .unwrap();
        assert_eq!(named.last_nproc(), 96);
        assert!(Curve::from_json_str("A", "a.json", r#"[{"nproc":4.5,"sypd":2}]"#).is_err());
    }

    #[test]
    fn a_threads_column_splits_the_file_into_one_curve_per_thread_count() {
        let text = "nproc,threads,SYPD\n64,4,8\n32,4,4.5\n128,1,5\n256,1,9\n64,2,5.5\n32,2,3\n";
        let series = Curve::series_from_csv_str("OIFS", "o.csv", text).unwrap();
        let threads: Vec<u32> = series.iter().map(Curve::threads).collect();
        assert_eq!(threads, [1, 2, 4]);
        assert_eq!(
            series[2].points()[0],
            Point {
                nproc: 32,
                sypd: 4.5
            }
        );
        assert_eq!(series[0].last_nproc(), 256);
        // One thread count: one curve, read by the plain reader too.
        let one = csv("nproc,SYPD,threads\n10,1,4\n20,2,4\n").unwrap();
        assert_eq!((one.threads(), one.first_nproc()), (4, 10));
        // No column: 1 thread, and the JSON of the curve is as it always was.
        let plain = csv("nproc,SYPD\n10,1\n20,2\n").unwrap();
        assert_eq!(plain.threads(), 1);
        assert!(serde_json::to_string(&plain)
            .unwrap()
            .find("threads")
            .is_none());
        assert!(serde_json::to_string(&one)
            .unwrap()
            .contains("\"threads\":4"));
    }

    #[test]
    fn bad_thread_values_and_mixed_counts_name_file_line_and_value() {
        for bad in ["0", "-2", "2.5", "four"] {
            let e = csv(&format!("nproc,SYPD,threads\n10,1,1\n20,2,{bad}\n")).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "t.csv: line 3: threads {bad:?} is not a positive integer; write the OpenMP \
                     threads per MPI rank, e.g. 4 (1 for pure MPI)"
                )
            );
        }
        let e = csv("nproc,SYPD,threads\n10,1,1\n20,2,\n").unwrap_err();
        assert!(
            matches!(
                e,
                CurveError::MissingValue {
                    line: 3,
                    column: "threads",
                    ..
                }
            ),
            "{e}"
        );
        let mixed = "nproc,SYPD,threads\n10,1,1\n20,2,1\n10,1.5,2\n20,2.5,2\n";
        let e = csv(mixed).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: holds curves at 1, 2 threads per rank, but one curve is read here; keep the \
             rows of one thread count in this file"
        );
        let short = "nproc,SYPD,threads\n10,1,1\n20,2,1\n10,1.5,2\n";
        let e = Curve::series_from_csv_str("A", "t.csv", short).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: only 1 data row(s) at 2 threads per rank; each thread count needs at least \
             two measured points"
        );
        // The same rank count at two thread counts is two measurements, not a duplicate.
        let dup = "nproc,SYPD,threads\n10,1,2\n20,2,2\n20,2.5,2\n";
        let e = Curve::series_from_csv_str("A", "t.csv", dup).unwrap_err();
        assert!(
            matches!(
                e,
                CurveError::Duplicate {
                    line: 4,
                    nproc: 20,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn json_points_may_carry_threads() {
        let text = r#"[{"nproc":8,"sypd":1,"threads":4},{"nproc":16,"sypd":2,"threads":4},
            {"nproc":8,"sypd":0.5},{"nproc":16,"sypd":0.9}]"#;
        let series = Curve::series_from_json_str("A", "a.json", text).unwrap();
        assert_eq!(
            series.iter().map(Curve::threads).collect::<Vec<_>>(),
            [1, 4]
        );
        let e = Curve::series_from_json_str("A", "a.json", r#"[{"nproc":8,"sypd":1,"threads":0}]"#)
            .unwrap_err();
        assert!(matches!(e, CurveError::BadThreads { .. }), "{e}");
    }

    #[test]
    fn component_names() {
        assert!(validate_component_name("IFS_hr-2").is_ok());
        assert!(validate_component_name("a b").is_err());
        assert!(validate_component_name("x;rm").is_err());
        assert!(validate_component_name("").is_err());
    }
}
