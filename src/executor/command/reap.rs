//! Finding and ending every process of a run, its escaped descendants included.
//!
//! Two ways, the first that works wins:
//! * **cgroup v2** (Linux, when the driver's own cgroup is writable, e.g. a delegated
//!   systemd user slice, root, or a container with its own cgroup namespace): each run gets a
//!   child cgroup `autolb-<campaign key>-<token>` of the driver's cgroup; a process cannot leave
//!   it, even with `setsid` or a double fork, and `cgroup.kill` ends all of it at once;
//! * **environment markers** (anywhere with `/proc`): every process of a run inherits
//!   `AUTOLB_RUN_TOKEN` (unique per start) and `AUTOLB_CAMPAIGN_KEY` (per campaign directory);
//!   a scan of `/proc/*/environ` finds them, `setsid` ones included. A program that clears its
//!   environment escapes this way; only the cgroup catches those.
//!
//! `PR_SET_CHILD_SUBREAPER` is not used: a subreaper adopts orphans but still has to scan
//! `/proc` to find the live ones, and it would have to be the driver, which is the process
//! whose death we must survive.

use std::path::{Path, PathBuf};

/// Environment variable carrying a token unique to one start of one run.
pub const TOKEN_VAR: &str = "AUTOLB_RUN_TOKEN";
/// Environment variable carrying the campaign's key (a hash of its directory).
pub const CAMPAIGN_VAR: &str = "AUTOLB_CAMPAIGN_KEY";

/// Set to `off` to run without per-run cgroups.
pub const CGROUP_SWITCH: &str = "AUTOLB_CGROUP";

/// The key of a campaign directory: 16 hex digits of the hash of its absolute path.
pub fn campaign_key(campaign_dir: &Path) -> String {
    let abs = std::fs::canonicalize(campaign_dir)
        .or_else(|_| std::path::absolute(campaign_dir))
        .unwrap_or_else(|_| campaign_dir.to_path_buf());
    format!(
        "{:016x}",
        crate::executor::fnv1a(abs.as_os_str().as_encoded_bytes().iter().copied())
    )
}

/// SIGKILLs every process whose environment holds `VAR=value`; returns their pids.
pub fn kill_by_env(var: &str, value: &str) -> Vec<i32> {
    let found = processes_by_env(var, value);
    for &pid in &found {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    found
}

/// The live processes (not this one) whose environment holds `VAR=value`. A zombie has no
/// environment left to read, so a dead process waiting to be reaped is not among them.
pub fn processes_by_env(var: &str, value: &str) -> Vec<i32> {
    let needle = format!("{var}={value}\0").into_bytes();
    let own = std::process::id() as i32;
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let hit = env.starts_with(&needle)
            || env
                .windows(needle.len() + 1)
                .any(|w| w[0] == 0 && w[1..] == needle[..]);
        if hit {
            found.push(pid);
        }
    }
    found
}

/// The writable cgroup v2 directory of this process, if the system offers one: the `0::PATH`
/// line of `/proc/self/cgroup` under the cgroup2 mount.
pub fn own_cgroup() -> Option<PathBuf> {
    let line = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = line
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .to_string();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|l| {
        let (_, after) = l.split_once(" - ")?;
        let fstype = after.split(' ').next()?;
        (fstype == "cgroup2").then(|| l.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let dir = mount.join(rel.trim_start_matches('/'));
    dir.join("cgroup.procs").exists().then_some(dir)
}

/// A cgroup made for one run; removed (after killing what is left in it) on drop.
#[derive(Debug)]
pub struct RunCgroup {
    /// The cgroup's directory in the cgroup2 file system.
    pub path: PathBuf,
}

impl RunCgroup {
    /// Creates `BASE/autolb-<key>-<token>`, or `None` when the system does not let us or
    /// the environment says `AUTOLB_CGROUP=off` (then the environment markers alone are used).
    pub fn create(key: &str, token: &str) -> Option<RunCgroup> {
        if std::env::var_os(CGROUP_SWITCH).is_some_and(|v| v == "off") {
            return None;
        }
        let path = run_cgroup_path(key, token)?;
        std::fs::create_dir(&path).ok()?;
        Some(RunCgroup { path })
    }

    /// Its `cgroup.procs` file: the processes in the cgroup, and where a process is moved into it.
    pub fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }

    /// `cgroup.kill` when the kernel has it (5.14+).
    pub fn kill_file(&self) -> Option<PathBuf> {
        let k = self.path.join("cgroup.kill");
        k.exists().then_some(k)
    }

    /// Kills every process in it and removes it.
    pub fn end(&self) {
        end_cgroup(&self.path);
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        self.end();
    }
}

/// Kills every process in the cgroup at `path` (through `cgroup.kill`, else one by one) and
/// removes it; a few tries, as dying processes leave the cgroup asynchronously.
pub fn end_cgroup(path: &Path) {
    for _ in 0..50 {
        if std::fs::write(path.join("cgroup.kill"), "1").is_err() {
            if let Ok(text) = std::fs::read_to_string(path.join("cgroup.procs")) {
                for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: kill has no memory-safety preconditions.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        if std::fs::remove_dir(path).is_ok() || !path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Where [`RunCgroup::create`] makes the cgroup of campaign `key`'s run start `token`, when
/// this system offers cgroups (so that a process that finds a dead holder's token can end
/// what is left in it).
pub fn run_cgroup_path(key: &str, token: &str) -> Option<PathBuf> {
    Some(own_cgroup()?.join(format!("autolb-{key}-{token}")))
}

/// Ends every cgroup a driver of the campaign `key` left under our cgroup; returns their names.
pub fn end_campaign_cgroups(key: &str) -> Vec<String> {
    let Some(base) = own_cgroup() else {
        return Vec::new();
    };
    let prefix = format!("autolb-{key}-");
    let mut ended = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(&prefix) {
                end_cgroup(&e.path());
                ended.push(name);
            }
        }
    }
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn campaign_keys_are_stable_and_differ_by_directory() {
        let a = campaign_key(Path::new("/no/such/a"));
        assert_eq!(a, campaign_key(Path::new("/no/such/a")));
        assert_ne!(a, campaign_key(Path::new("/no/such/b")));
        assert_eq!(a.len(), 16);
    }
}
