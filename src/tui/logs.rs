//! `l`: what a row's runs wrote, to page in the app: each run's directory (the path to copy),
//! the end of its `stdout` and `stderr`, and its files with their sizes. The event loop reads
//! them ([`super::effect::Effect::ReadLogs`]); a run still writing is read as far as it got.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Lines kept from the end of each log: enough for a model's last error and its context, few
/// enough to page at 24 lines a screen.
pub const TAIL_LINES: usize = 200;
/// Bytes read from the end of a log at most (a model's log can be gigabytes).
const TAIL_BYTES: u64 = 256 * 1024;
/// Files listed per run directory at most.
const FILES_AT_MOST: usize = 40;

/// One run to page: its repetition and directory.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLogs {
    pub repetition: u32,
    pub run_dir: PathBuf,
}

/// The pager's lines for `runs`.
pub fn read(runs: &[RunLogs]) -> Vec<String> {
    let mut out = Vec::new();
    if runs.is_empty() {
        out.push("no run of this row has started: nothing written yet".into());
    }
    for run in runs {
        out.push(format!("rep {}  {}", run.repetition, run.run_dir.display()));
        if !run.run_dir.is_dir() {
            out.push("  (no directory yet: the run has not started)".into());
            out.push(String::new());
            continue;
        }
        for name in ["stdout", "stderr"] {
            out.extend(tail_section(&run.run_dir.join(name), name));
        }
        out.extend(files(&run.run_dir));
        out.push(String::new());
    }
    out
}

/// `── stderr (last 200 of its lines) ──` and the lines, or why there are none.
fn tail_section(path: &Path, name: &str) -> Vec<String> {
    match tail(path, TAIL_LINES) {
        Ok((lines, _)) if lines.is_empty() => vec![format!("── {name}: empty")],
        Ok((lines, cut_before)) => {
            let mut out = vec![if cut_before {
                format!("── {name}: its last {} lines", lines.len())
            } else {
                format!("── {name}")
            }];
            out.extend(lines.into_iter().map(|l| format!("  {l}")));
            out
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![format!("── {name}: none")],
        Err(e) => vec![format!("── {name}: cannot read {}: {e}", path.display())],
    }
}

/// The last `n` lines of a file and whether earlier ones were left out. Invalid UTF-8 is
/// shown replaced, never refused: a log is for reading.
pub fn tail(path: &Path, n: usize) -> std::io::Result<(Vec<String>, bool)> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read from the middle starts mid-line.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let cut = start > 0 || lines.len() > n;
    let from = lines.len().saturating_sub(n);
    Ok((
        lines[from..]
            .iter()
            .map(|l| {
                l.replace('\t', "    ")
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect()
            })
            .collect(),
        cut,
    ))
}

/// `── files` and the directory's entries with sizes (timing output among them).
fn files(dir: &Path) -> Vec<String> {
    let mut entries: Vec<(String, Option<u64>, bool)> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| {
                let meta = e.metadata().ok();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    meta.as_ref().map(|m| m.len()),
                    meta.is_some_and(|m| m.is_dir()),
                )
            })
            .collect(),
        Err(e) => return vec![format!("── files: cannot list {}: {e}", dir.display())],
    };
    entries.sort();
    let mut out = vec![format!("── files in {}", dir.display())];
    let total = entries.len();
    for (name, size, is_dir) in entries.into_iter().take(FILES_AT_MOST) {
        out.push(match (is_dir, size) {
            (true, _) => format!("  {name}/"),
            (false, Some(b)) => format!("  {name}  {b} B"),
            (false, None) => format!("  {name}"),
        });
    }
    if total > FILES_AT_MOST {
        out.push(format!("  ... and {} more", total - FILES_AT_MOST));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_shows_its_path_the_end_of_its_logs_and_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("rep-1");
        std::fs::create_dir(&run).unwrap();
        let long: String = (0..500).map(|i| format!("step {i}\n")).collect();
        std::fs::write(run.join("stdout"), long).unwrap();
        std::fs::write(run.join("stderr"), b"NEMO blew up \xff at step 1212\n").unwrap();
        std::fs::write(run.join("lucia.log"), "x").unwrap();
        let lines = read(&[
            RunLogs {
                repetition: 1,
                run_dir: run.clone(),
            },
            RunLogs {
                repetition: 2,
                run_dir: tmp.path().join("rep-2"),
            },
        ]);
        let text = lines.join("\n");
        assert!(lines[0].contains(&run.display().to_string()), "{text}");
        assert!(text.contains("── stdout: its last 200 lines"), "{text}");
        assert!(
            text.contains("  step 499") && !text.contains("  step 299\n"),
            "{text}"
        );
        assert!(
            text.contains("  NEMO blew up \u{fffd} at step 1212"),
            "{text}"
        );
        assert!(text.contains("  lucia.log  1 B"), "{text}");
        assert!(
            text.contains("rep 2") && text.contains("the run has not started"),
            "{text}"
        );
    }

    #[test]
    fn a_tail_from_the_middle_of_a_big_log_drops_the_cut_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("stdout");
        let big: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, big).unwrap();
        let (lines, cut) = tail(&path, 3).unwrap();
        assert!(cut);
        assert_eq!(lines, ["line 99997", "line 99998", "line 99999"]);
    }
}
