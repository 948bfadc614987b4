//! The run supervisor: a small process between the driver (or `campaign exec`) and the user's
//! command that makes a run's end durable and its processes killable as a whole.
//!
//! The driver forks it (inside `Command::pre_exec`, so std still does the stdio, directory and
//! exec work for the command); it forks the command and waits for it. It
//! * starts a new session, so the terminal's Ctrl-C and hangup never reach the run directly;
//! * puts the command in its own process group and, where the system offers a writable cgroup
//!   v2, in the run's cgroup ([`super::reap`]);
//! * writes `exit_status` itself, atomically, the moment the command exits on its own, before
//!   it ends. So a driver killed at any moment cannot lose a finished run: the status is on
//!   disk before the driver could even learn of the exit ("exactly once");
//! * holds an exclusive `flock` on `run_dir/autolb.running` while it lives, so a restarted
//!   driver waits for the previous driver's supervisors to end before it reads `exit_status`;
//! * gets SIGTERM when its parent (the driver, or `campaign exec`) dies (`PR_SET_PDEATHSIG`),
//!   or SIGTERM, SIGINT or SIGHUP when the parent stops the run (timeout, cancel, Ctrl-C, a
//!   cancelled job): it then sends that signal to the command's whole process group, SIGKILL
//!   after the grace time, kills the cgroup, and writes no status (the run did not end on its
//!   own: it is run again, or the parent records why it stopped it). A command that still
//!   exits 0 is recorded, since its output is complete.
//!
//! Between fork and exec only async-signal-safe calls are allowed (the driver has threads), so
//! everything the supervisor needs (paths as C strings) is prepared before the fork and the
//! loop uses raw system calls only: no allocation, no locks.

use std::ffi::CString;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Name of the lock file a supervisor holds in its run directory while it lives.
pub const RUNNING_LOCK_FILE: &str = "autolb.running";

/// The signal that asked the supervisor to stop the run (0: none yet), set by its signal
/// handler (in the supervisor's own copy of memory) and passed on to the command's group.
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn request_stop(signal: libc::c_int) {
    // The first signal is the one passed on.
    let _ = STOP.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// What the supervisor needs, prepared before the fork.
pub struct Plan {
    /// Grace between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// `cgroup.procs` and `cgroup.kill` of the run's cgroup, when there is one.
    pub cgroup: Option<(CString, Option<CString>)>,
}

impl Plan {
    /// The plan for a run with this grace and, when there is one, the run's cgroup.
    pub fn new(grace: Duration, cgroup: Option<&super::reap::RunCgroup>) -> Plan {
        let cgroup = cgroup.and_then(|cg| {
            let procs = CString::new(cg.procs().into_os_string().into_encoded_bytes());
            let kill = cg
                .kill_file()
                .and_then(|k| CString::new(k.into_os_string().into_encoded_bytes()).ok());
            procs.ok().map(|p| (p, kill))
        });
        Plan { grace, cgroup }
    }
}

/// Makes `command` start through a supervisor. The `Child` that `spawn` returns is the
/// supervisor; the command is its only child.
pub fn install(command: &mut Command, plan: Plan) -> io::Result<()> {
    let status = CString::new(crate::executor::EXIT_STATUS_FILE)?;
    let status_tmp = CString::new(format!(".{}.tmp", crate::executor::EXIT_STATUS_FILE))?;
    let lock = CString::new(RUNNING_LOCK_FILE)?;
    let dot = CString::new(".")?;
    let driver = std::process::id() as libc::pid_t;
    let grace_ms = plan.grace.as_millis().min(u128::from(u32::MAX)) as u64;
    let (procs, kill) = match plan.cgroup {
        Some((p, k)) => (Some(p), k),
        None => (None, None),
    };
    // SAFETY: the closure runs in the forked child of a multi-threaded process and only makes
    // async-signal-safe system calls (setsid, prctl, sigaction, fork, open, write, flock,
    // waitpid, kill, nanosleep, clock_gettime, fsync, rename, close, _exit) on memory prepared
    // before the fork; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = request_stop as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // The parent may have died before the line above.
            if libc::getppid() != driver {
                request_stop(libc::SIGTERM);
            }
            let lock_fd = libc::open(
                lock.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC,
                0o666,
            );
            if lock_fd >= 0 {
                libc::flock(lock_fd, libc::LOCK_EX);
            }
            let supervisor = libc::getpid();
            let model = libc::fork();
            if model < 0 {
                return Err(io::Error::last_os_error());
            }
            if model == 0 {
                // The command: default signal handling, its own process group, the run's
                // cgroup, and death with the supervisor; std then execs it.
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                    libc::sigaction(sig, &default, std::ptr::null_mut());
                }
                libc::setpgid(0, 0);
                if let Some(procs) = &procs {
                    write_pid(procs, libc::getpid());
                }
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != supervisor {
                    libc::_exit(137);
                }
                return Ok(());
            }
            // The supervisor: close every inherited descriptor but stdio (among them the pipe
            // through which std learns whether the exec worked, which must see EOF), keeping
            // the lock.
            close_from(3, lock_fd);
            let code = supervise(model, grace_ms, kill.as_ref(), &status, &status_tmp, &dot);
            libc::_exit(code);
        });
    }
    Ok(())
}

/// Waits for `model`; see the module documentation. Returns the supervisor's exit code: 0 when
/// the command ended on its own (its status is on disk), 143 when it was stopped.
unsafe fn supervise(
    model: libc::pid_t,
    grace_ms: u64,
    kill: Option<&CString>,
    status: &CString,
    status_tmp: &CString,
    dot: &CString,
) -> libc::c_int {
    let mut signalled_at: Option<u64> = None;
    let mut killed = false;
    loop {
        let mut wstatus: libc::c_int = 0;
        let r = libc::waitpid(model, &mut wstatus, libc::WNOHANG);
        if r == model {
            let clean_exit = libc::WIFEXITED(wstatus) && libc::WEXITSTATUS(wstatus) == 0;
            let on_its_own = signalled_at.is_none();
            if on_its_own || clean_exit {
                write_status(wstatus, status, status_tmp, dot);
            }
            // Whatever the command left behind in its group or cgroup goes too.
            libc::kill(-model, libc::SIGKILL);
            if let Some(kill) = kill {
                write_bytes(kill, b"1");
            }
            return if on_its_own || clean_exit { 0 } else { 143 };
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 70;
        }
        let now = now_ms();
        let stop = STOP.load(Ordering::SeqCst);
        if stop != 0 && signalled_at.is_none() {
            libc::kill(-model, stop);
            signalled_at = Some(now);
        }
        if let Some(at) = signalled_at {
            if !killed && now.saturating_sub(at) >= grace_ms {
                libc::kill(-model, libc::SIGKILL);
                if let Some(kill) = kill {
                    write_bytes(kill, b"1");
                }
                killed = true;
            }
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 20_000_000,
        };
        libc::nanosleep(&pause, std::ptr::null_mut());
    }
}

/// Milliseconds of the monotonic clock.
unsafe fn now_ms() -> u64 {
    let mut t: libc::timespec = std::mem::zeroed();
    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
    (t.tv_sec as u64) * 1000 + (t.tv_nsec as u64) / 1_000_000
}

/// Writes `exit_status` the way [`crate::executor::write_exit_status`] does: the exit code, or
/// `failed: killed by signal N`; temp file, fsync, rename, fsync of the directory.
unsafe fn write_status(wstatus: libc::c_int, status: &CString, tmp: &CString, dot: &CString) {
    let mut buf = [0u8; 64];
    let mut len = 0;
    let mut push = |bytes: &[u8]| {
        for &b in bytes {
            if len < buf.len() {
                buf[len] = b;
                len += 1;
            }
        }
    };
    let mut digits = [0u8; 12];
    if libc::WIFEXITED(wstatus) {
        push(format_int(libc::WEXITSTATUS(wstatus), &mut digits));
    } else {
        push(b"failed: killed by signal ");
        push(format_int(libc::WTERMSIG(wstatus), &mut digits));
    }
    push(b"\n");
    let fd = libc::open(
        tmp.as_ptr(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
        0o666,
    );
    if fd < 0 {
        return;
    }
    let ok = libc::write(fd, buf.as_ptr().cast(), len) == len as isize && libc::fsync(fd) == 0;
    libc::close(fd);
    if ok && libc::rename(tmp.as_ptr(), status.as_ptr()) == 0 {
        let d = libc::open(dot.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if d >= 0 {
            libc::fsync(d);
            libc::close(d);
        }
    }
}

/// Decimal digits of `n` (non-negative, as exit codes and signal numbers are) in `buf`.
fn format_int(n: libc::c_int, buf: &mut [u8; 12]) -> &[u8] {
    let mut n = n.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Writes `pid` in decimal to the file `path` (a `cgroup.procs`).
unsafe fn write_pid(path: &CString, pid: libc::pid_t) {
    let mut digits = [0u8; 12];
    write_bytes(path, format_int(pid, &mut digits));
}

unsafe fn write_bytes(path: &CString, bytes: &[u8]) {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd >= 0 {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
    }
}

/// Closes every descriptor from `first` up, except `keep`: one `close_range` call where the
/// kernel has it (Linux 5.9+), else a loop. Quick matters: until this runs, the supervisor holds
/// copies of the driver's descriptors, the campaign lock among them.
unsafe fn close_from(first: libc::c_int, keep: libc::c_int) {
    #[cfg(target_os = "linux")]
    {
        let close_range = |lo: libc::c_int, hi: libc::c_uint| {
            libc::syscall(
                libc::SYS_close_range,
                lo as libc::c_uint,
                hi,
                0 as libc::c_uint,
            ) == 0
        };
        let done = if keep >= first {
            (keep == first || close_range(first, (keep - 1) as libc::c_uint))
                && close_range(keep + 1, libc::c_uint::MAX)
        } else {
            close_range(first, libc::c_uint::MAX)
        };
        if done {
            return;
        }
    }
    let mut limit: libc::rlimit = std::mem::zeroed();
    let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
        limit.rlim_cur.min(65_536) as libc::c_int
    } else {
        1024
    };
    for fd in first..max {
        if fd != keep {
            libc::close(fd);
        }
    }
}

/// Waits until no supervisor holds `run_dir`'s lock (it ended), at most `limit`. True when
/// none does (or there never was one).
pub fn wait_for_supervisor(run_dir: &Path, limit: Duration) -> bool {
    let Ok(file) = std::fs::File::open(run_dir.join(RUNNING_LOCK_FILE)) else {
        return true;
    };
    let deadline = std::time::Instant::now() + limit;
    loop {
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => return true,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::format_int;

    #[test]
    fn integers_format_without_allocating() {
        let mut b = [0u8; 12];
        assert_eq!(format_int(0, &mut b), b"0");
        assert_eq!(format_int(143, &mut b), b"143");
        assert_eq!(format_int(2_147_483_647, &mut b), b"2147483647");
    }
}
