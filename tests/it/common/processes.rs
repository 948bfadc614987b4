//! Looking at live processes through `/proc`, for the tests that check that no run outlives
//! what should end it.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The environment of process `pid` as `NAME=value` entries (empty when it is gone).
pub fn environ(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|e| !e.is_empty())
                .map(|e| String::from_utf8_lossy(e).to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// True when `pid` is a zombie (dead, waiting for its parent to reap it) or gone.
pub fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
        })
        .is_none_or(|state| state == 'Z' || state == 'X')
}

/// Live processes (other than this one) with an environment entry for which `pred` holds,
/// with that entry.
pub fn processes_where(pred: &dyn Fn(&str) -> bool) -> Vec<(i32, String)> {
    let own = std::process::id() as i32;
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == own || is_zombie(pid) {
            continue;
        }
        if let Some(entry) = environ(pid).into_iter().find(|v| pred(v)) {
            out.push((pid, entry));
        }
    }
    out
}

/// Live processes of runs in the campaign directory `dir` (their `AUTOLB_RUN_DIR` is under it).
pub fn run_processes_under(dir: &Path) -> Vec<(i32, String)> {
    let prefix = format!("AUTOLB_RUN_DIR={}/", dir.display());
    processes_where(&|v| v.starts_with(&prefix))
}

/// Live processes of runs started by the driver with process id `driver` (the run token holds
/// the driver's pid: `AUTOLB_RUN_TOKEN=<run>-<pid>-<nanos>`).
pub fn run_processes_of_driver(driver: u32) -> Vec<(i32, String)> {
    let infix = format!("-{driver}-");
    processes_where(&|v| v.starts_with("AUTOLB_RUN_TOKEN=") && v.contains(&infix))
}

/// Live processes of runs started by any of the drivers `drivers` (process ids), in one pass
/// over `/proc`: checking hundreds of earlier drivers one scan each made the long kill test
/// quadratic in the number of kills.
pub fn run_processes_of_drivers(drivers: &std::collections::HashSet<u32>) -> Vec<(i32, String)> {
    processes_where(&|v| {
        v.strip_prefix("AUTOLB_RUN_TOKEN=")
            .and_then(token_driver)
            .is_some_and(|pid| drivers.contains(&pid))
    })
}

/// The driver's process id in a run token `<run>-<pid>-<nanos>` (the run id may hold `-`).
fn token_driver(token: &str) -> Option<u32> {
    let mut parts = token.rsplitn(3, '-');
    let _nanos = parts.next()?;
    let pid = parts.next()?;
    parts.next()?;
    pid.parse().ok()
}

/// Waits for `child` at most `limit`; kills it and panics past that.
pub fn wait_with_timeout(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `cond` every 20 ms for at most `limit`; true when it held.
pub fn eventually(limit: Duration, cond: &mut dyn FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}
