//! Reading the small files a user names (curves, configs, key tables, timing output) with
//! bounds: only regular files (a FIFO would block forever, `/dev/zero` never ends) and only up
//! to a size that such a file can have, so that a wrong path is a clear error, not a hang or
//! gigabytes of memory.

pub use crate::limits::MAX_SMALL_FILE_BYTES;
use std::io::{self, Read};
use std::path::Path;

/// Reads a regular file of at most `max` bytes. Anything else (a FIFO, a socket, a device, a
/// directory, or a larger file) is an `io::Error` that says what it is and the limit.
pub fn read_regular_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO without a writer must not block before we can look at it.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, kind));
    }
    if meta.len() > max {
        return Err(too_large(meta.len(), max));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte past the limit tells a file that grew while read from one that fits.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64, max));
    }
    Ok(bytes)
}

/// [`read_regular_file`] as UTF-8 text, with the [`MAX_SMALL_FILE_BYTES`] limit.
pub fn read_small_text(path: &Path) -> io::Result<String> {
    let bytes = read_regular_file(path, MAX_SMALL_FILE_BYTES)?;
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn too_large(len: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{len} bytes or more, larger than the {max}-byte limit for such a file"),
    )
}

/// Writes a file atomically: a temp file in the same directory, fsync, rename over the target,
/// then fsync of the directory so the rename itself is durable. A kill at any moment leaves
/// either the old or the new content, never a mix. Every file autolb writes for a user or a
/// campaign (state, run files, job scripts, models, reports) goes through this one writer.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Mode 0666 less the umask, like any file a program creates (tempfile's own default is
    // 0600, which would keep colleagues from reading a shared campaign).
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(parent)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = std::fs::File::open(parent) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_big_files_are_refused() {
        let e = read_regular_file(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular_file(&fifo, 1024).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_regular_file(dir.path(), 1024).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let e = read_regular_file(&big, 1024).unwrap_err();
        assert!(e.to_string().contains("1024-byte limit"), "{e}");
        assert_eq!(read_regular_file(&big, 2048).unwrap().len(), 2048);
    }

    #[test]
    fn atomic_writes_follow_the_umask() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: umask has no memory-safety preconditions; tests in this binary create files
        // with explicit modes or do not care about them.
        let old = unsafe { libc::umask(0o022) };
        let path = dir.path().join("f");
        write_atomically(&path, b"x").unwrap();
        unsafe { libc::umask(0o077) };
        let private = dir.path().join("g");
        write_atomically(&private, b"x").unwrap();
        unsafe { libc::umask(old) };
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o644);
        assert_eq!(std::fs::metadata(&private).unwrap().mode() & 0o777, 0o600);
    }
}
