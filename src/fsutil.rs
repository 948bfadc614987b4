//! Reading the small files a user names (curves, configs, key tables, timing output) with
//! bounds: only regular files (a FIFO would block forever, `/dev/zero` never ends) and only up
//! to a size that such a file can have, so that a wrong path is a clear error, not a hang or
//! gigabytes of memory. And the two ways autolb writes a file so that a kill never leaves it
//! half-written: replaced whole and atomically, or appended to durably at a known length.

pub use crate::limits::MAX_SMALL_FILE_BYTES;
use std::io::{self, Read, Write};
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
    write_atomically_with(path, |w| w.write_all(bytes)).map(|_| ())
}

/// [`write_atomically`] of content produced by `write`, streamed to the temp file rather than
/// built in memory first (a large campaign state is hundreds of megabytes of text). Returns the
/// bytes written.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<u64> {
    use std::os::unix::fs::PermissionsExt;
    let parent = parent_of(path);
    // Mode 0666 less the umask, like any file a program creates (tempfile's own default is
    // 0600, which would keep colleagues from reading a shared campaign).
    let tmp = tempfile::Builder::new()
        .prefix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(parent)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, tmp);
    write(&mut out)?;
    let tmp = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    tmp.as_file().sync_all()?;
    let len = tmp.as_file().metadata()?.len();
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(parent);
    Ok(len)
}

/// Appends `bytes` to the file at `path` at offset `at`, the length its writer knows it to
/// have, and makes them durable (fdatasync; for a new file also the directory's entry).
/// Whatever lies beyond `at` is cut first: it is the torn tail of an append that was killed
/// half-way, which no reader took as written. A file shorter than `at` is an `UnexpectedEof`
/// error and is left alone: it is not the file the writer knows.
///
/// A kill at any moment leaves the file with or without the new bytes, or with a part of them
/// after `at` that the next append cuts: readers must recognise a partial last line (see
/// `campaign::state::record_log`).
pub fn append_at(path: &Path, at: u64, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let len = file.metadata()?.len();
    if len < at {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{len} bytes, fewer than the {at} written to it"),
        ));
    }
    if len > at {
        file.set_len(at)?;
    }
    file.write_all_at(bytes, at)?;
    file.sync_data()?;
    if at == 0 {
        sync_dir(parent_of(path));
    }
    Ok(())
}

/// The directory a file is in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Makes a directory's entries durable (a rename, a new file). Best effort: some filesystems
/// cannot fsync a directory, and the data itself is already durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
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

    #[test]
    fn a_streamed_atomic_write_returns_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let n = write_atomically_with(&path, |w| w.write_all(b"hello")).unwrap();
        assert_eq!((n, std::fs::read(&path).unwrap()), (5, b"hello".to_vec()));
        // A failing writer leaves the old content and no temp file.
        let e = write_atomically_with(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("stopped"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "stopped");
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_append_cuts_a_torn_tail_and_refuses_a_shorter_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        append_at(&path, 0, b"one\n").unwrap();
        append_at(&path, 4, b"two\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\n");
        // A writer killed half-way through an append left "thr".
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"thr")
            .unwrap();
        append_at(&path, 8, b"three\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\nthree\n");
        let e = append_at(&path, 100, b"x\n").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\nthree\n");
    }
}
