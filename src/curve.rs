//! Scalability curves: the measured speed (SYPD) of one component at several PE counts.
//!
//! A curve is the only input the prediction needs per component, so loading is strict about
//! what matters (positive integer PEs, finite positive SYPD, no duplicates, at least two points)
//! and lenient about what does not (spaces and tabs around values, `#` comments, CRLF line ends,
//! extra columns, unsorted rows). Every error names the file, the line and the offending value.

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

    /// Loads a curve from a file: JSON when the name ends in `.json`, otherwise `nproc,SYPD` CSV.
    pub fn load(name: impl Into<String>, path: &Path) -> Result<Curve, CurveError> {
        let file = path.display().to_string();
        let text = crate::fsutil::read_small_text(path).map_err(|e| CurveError::Unreadable {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Curve::from_json_str(name, &file, &text)
        } else {
            Curve::from_csv_str(name, &file, &text)
        }
    }

    /// Parses `nproc,SYPD` CSV text (header required, extra columns ignored).
    pub fn from_csv_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Curve, CurveError> {
        let rows = parse_csv(file, text)?;
        build(name.into(), file, rows)
    }

    /// Parses the JSON form: either `[{"nproc": 48, "sypd": 3.27}, ...]` or
    /// `{"name": "IFS", "points": [...]}` (the name in the file is ignored in favour of `name`).
    pub fn from_json_str(
        name: impl Into<String>,
        file: &str,
        text: &str,
    ) -> Result<Curve, CurveError> {
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
            rows.push((line, Point { nproc, sypd }));
        }
        build(name.into(), file, rows)
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

fn parse_csv(file: &str, text: &str) -> Result<Vec<(u64, Point)>, CurveError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut columns: Option<(usize, usize)> = None;
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
        let Some((nproc_col, sypd_col)) = columns else {
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
        rows.push((line, Point { nproc, sypd }));
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

/// The `nproc` and `SYPD` columns, by those names only (case-insensitive), as the curve-files
/// page promises: a `cores` or `PEs` column might count something else (threads, nodes), so it is
/// refused rather than guessed.
fn header_columns(record: &csv::StringRecord) -> Option<(usize, usize)> {
    let find = |name: &str| record.iter().position(|h| h.eq_ignore_ascii_case(name));
    Some((find("nproc")?, find("sypd")?))
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
    fn component_names() {
        assert!(validate_component_name("IFS_hr-2").is_ok());
        assert!(validate_component_name("a b").is_err());
        assert!(validate_component_name("x;rm").is_err());
        assert!(validate_component_name("").is_err());
    }
}
