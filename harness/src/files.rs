//! The harness's files: inputs read with a size limit and without
//! blocking on a pipe nobody opened, outputs replaced whole or not at all,
//! and no output over an input or another output.
//!
//! - **Inputs** (the scenario, the input script, the snapshot) are opened
//!   by [`open_input`]: a folder is refused; a pipe (a FIFO, `<(…)`) is
//!   opened non-blocking, so the open never waits, and reading it waits
//!   at most [`RunConfig::pipe_wait`](crate::RunConfig::pipe_wait) for a
//!   writer; [`read_input`] reads a whole file, refusing one larger than
//!   its limit before allocating for it (by its size for a regular file,
//!   one byte past the limit for anything else: `/dev/zero`).
//! - **Outputs** (the snapshot, the trace, the DOT file) go through
//!   [`Output`]: written to a temporary file in the target's folder,
//!   flushed to disk, renamed over the target and the folder synced; on
//!   any failure (a full disk, `ulimit -f`, an encoding error) the
//!   temporary file is removed and the old file is as it was. The
//!   binary's signal handler removes unfinished temporary files
//!   ([`remove_unfinished_outputs`]) on Ctrl-C. A character device
//!   (`/dev/null`) is written in place; a pipe is refused, as it cannot
//!   be renamed over.
//! - [`check_distinct`] refuses an output that is an input or another
//!   output (same canonical path, or same device and inode).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::HarnessError;

/// How long a pipe given as an input may go without a writer, and, for a
/// file read whole before the run (a scenario, a snapshot), without a
/// byte, before it is refused.
pub const PIPE_WAIT: Duration = Duration::from_secs(5);

fn read_error(what: &'static str, path: &Path, source: std::io::Error) -> HarnessError {
    HarnessError::ReadFile {
        what,
        path: path.to_owned(),
        source: Arc::new(source),
    }
}

fn write_error(what: &'static str, path: &Path, source: std::io::Error) -> HarnessError {
    HarnessError::WriteFile {
        what,
        path: path.to_owned(),
        source: Arc::new(source),
    }
}

fn other(message: impl Into<String>) -> std::io::Error {
    std::io::Error::other(message.into())
}

#[cfg(unix)]
fn is_fifo(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &Metadata) -> bool {
    false
}

#[cfg(unix)]
fn is_char_device(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_char_device()
}

#[cfg(not(unix))]
fn is_char_device(_: &Metadata) -> bool {
    false
}

/// Opens for reading without waiting for a writer: `O_NONBLOCK`.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// A pipe opened non-blocking, read as a blocking stream: until a writer
/// has opened it (or sent a byte), an empty read means "not yet", and the
/// wait is bounded by `wait`; after that it is the end. With `idle`, a
/// writer that sends nothing for that long is an error too.
struct Pipe {
    file: File,
    writer_seen: bool,
    wait: Duration,
    idle: Option<Duration>,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let since = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match self.file.read(buf) {
                Ok(0) if !self.writer_seen => {
                    if since.elapsed() >= self.wait {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!(
                                "no program opened the pipe for writing within {} s",
                                self.wait.as_secs_f64()
                            ),
                        ));
                    }
                }
                Ok(n) => {
                    self.writer_seen = true;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.writer_seen = true;
                    if let Some(idle) = self.idle
                        && since.elapsed() >= idle
                    {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!("nothing arrived on the pipe for {} s", idle.as_secs_f64()),
                        ));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

/// An input opened for reading: what it is, and a reader.
pub(crate) struct Input {
    /// Its metadata, from before the open.
    pub(crate) meta: Metadata,
    /// The reader: the file, or a [`Pipe`].
    pub(crate) reader: Box<dyn Read + Send>,
}

/// Opens the input `path` (`what` names it in errors) without blocking:
/// a folder is refused; a pipe is opened non-blocking and waits at most
/// `wait` for a writer when read, and, when `whole` (a file read to its
/// end before the run), at most `wait` between two bytes.
///
/// # Errors
///
/// [`HarnessError::ReadFile`] when it does not exist, cannot be opened or
/// is a folder.
pub(crate) fn open_input(
    path: &Path,
    what: &'static str,
    wait: Duration,
    whole: bool,
) -> Result<Input, HarnessError> {
    let error = |e| read_error(what, path, e);
    // stat, not open: it does not wait on a pipe.
    let meta = std::fs::metadata(path).map_err(error)?;
    if meta.is_dir() {
        return Err(error(other("it is a folder")));
    }
    let reader: Box<dyn Read + Send> = if is_fifo(&meta) {
        Box::new(Pipe {
            file: open_nonblocking(path).map_err(error)?,
            writer_seen: false,
            wait,
            idle: whole.then_some(wait),
        })
    } else {
        Box::new(File::open(path).map_err(error)?)
    };
    Ok(Input { meta, reader })
}

/// A check of a file's first bytes: the message when they cannot start
/// what is asked for.
pub(crate) type StartCheck = dyn Fn(&[u8]) -> Result<(), String>;

/// Reads the whole input `path`, at most `limit` bytes: a regular file
/// larger than that is refused by its size before anything is read, any
/// other file (a device, a pipe) once it goes one byte past the limit.
/// `too_large` says what the limit is, for the message (given the file's
/// size when known). `start`, if given, checks the first bytes (up to
/// 64) before the rest is read, so that a file that cannot be what is
/// asked for (`/dev/urandom` as a snapshot) is refused at once.
///
/// # Errors
///
/// As [`open_input`]; [`HarnessError::ReadFile`] when a read fails, the
/// file is too large, `start` refuses it, or its bytes do not fit in
/// memory.
pub(crate) fn read_input(
    path: &Path,
    what: &'static str,
    wait: Duration,
    limit: u64,
    too_large: &dyn Fn(Option<u64>) -> String,
    start: Option<&StartCheck>,
) -> Result<Vec<u8>, HarnessError> {
    let error = |e| read_error(what, path, e);
    let input = open_input(path, what, wait, true)?;
    let mut bytes = Vec::new();
    if input.meta.is_file() {
        let size = input.meta.len();
        if size > limit {
            return Err(error(other(too_large(Some(size)))));
        }
        bytes
            .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
            .map_err(|e| error(other(format!("{size} bytes do not fit in memory ({e})"))))?;
    }
    let mut reader = input.reader.take(limit.saturating_add(1));
    if let Some(start) = start {
        (&mut reader)
            .take(64)
            .read_to_end(&mut bytes)
            .map_err(error)?;
        start(&bytes).map_err(|m| error(other(m)))?;
    }
    reader.read_to_end(&mut bytes).map_err(error)?;
    if bytes.len() as u64 > limit {
        return Err(error(other(too_large(None))));
    }
    Ok(bytes)
}

/// Temporary files being written, for [`remove_unfinished_outputs`].
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the temporary files of every output being written and not
/// committed yet (see [`write_text`](crate::write_text)), and
/// returns how many there were: for a signal handler (Ctrl-C) that then
/// ends the process, so that an interrupted save leaves the old file and
/// nothing else.
pub fn remove_unfinished_outputs() -> usize {
    let mut list = unfinished();
    for path in list.iter() {
        let _ = std::fs::remove_file(path);
    }
    let count = list.len();
    list.clear();
    count
}

/// The file an output path names: a symbolic link's target (so a link is
/// written through, not replaced), else the path itself.
fn target_of(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The folder that holds `target` (`.` for a bare file name).
fn folder_of(target: &Path) -> &Path {
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// How an output reaches its target.
enum Sink {
    /// A temporary file beside the target, renamed over it.
    Temporary(tempfile::NamedTempFile),
    /// A character device, written in place.
    Device(File),
}

/// An output file being written (see the [module docs](self)): bytes go
/// to [`writer`](Self::writer), and [`commit`](Self::commit) puts them in
/// place; dropped without a commit, nothing changed.
pub(crate) struct Output {
    what: &'static str,
    path: PathBuf,
    target: PathBuf,
    sink: Option<Sink>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("what", &self.what)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Output {
    /// Starts writing the output `path` (`what` names it in errors).
    ///
    /// # Errors
    ///
    /// [`HarnessError::WriteFile`] when the path is a folder or a pipe, an
    /// existing file is read-only, or no temporary file can be made in
    /// its folder.
    pub(crate) fn create(path: &Path, what: &'static str) -> Result<Output, HarnessError> {
        let error = |e| write_error(what, path, e);
        let target = target_of(path);
        let existing = std::fs::metadata(&target).ok();
        let sink = match &existing {
            Some(meta) if meta.is_dir() => return Err(error(other("it is a folder"))),
            Some(meta) if is_char_device(meta) => Sink::Device(
                OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(error)?,
            ),
            Some(meta) if !meta.is_file() => {
                return Err(error(other(
                    "it is a pipe or a socket, which cannot take a file renamed over it: \
                     write to a regular file",
                )));
            }
            Some(meta) => {
                if meta.permissions().readonly() {
                    return Err(error(other("it is read-only")));
                }
                Sink::Temporary(temporary(&target, Some(meta)).map_err(error)?)
            }
            None => Sink::Temporary(temporary(&target, None).map_err(error)?),
        };
        if let Sink::Temporary(file) = &sink {
            unfinished().push(file.path().to_owned());
        }
        Ok(Output {
            what,
            path: path.to_owned(),
            target,
            sink: Some(sink),
        })
    }

    /// Where the bytes go.
    pub(crate) fn writer(&mut self) -> &mut dyn Write {
        match self.sink.as_mut() {
            Some(Sink::Temporary(file)) => file.as_file_mut(),
            Some(Sink::Device(file)) => file,
            None => unreachable!("an output's sink is taken only by commit and drop"),
        }
    }

    /// Writes `bytes`.
    ///
    /// # Errors
    ///
    /// [`HarnessError::WriteFile`] with what the operating system said
    /// (the old file is kept).
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<(), HarnessError> {
        let result = self.writer().write_all(bytes);
        result.map_err(|e| write_error(self.what, &self.path, e))
    }

    /// Syncs the bytes to disk and renames the temporary file over the
    /// target, then syncs the folder.
    ///
    /// # Errors
    ///
    /// [`HarnessError::WriteFile`] when a step fails; the temporary file
    /// is removed and the target is as before.
    pub(crate) fn commit(mut self) -> Result<(), HarnessError> {
        let error = |e| write_error(self.what, &self.path, e);
        match self.sink.take() {
            Some(Sink::Temporary(mut file)) => {
                let temp = file.path().to_owned();
                let done = file
                    .as_file_mut()
                    .flush()
                    .and_then(|()| file.as_file().sync_all())
                    .and_then(|()| file.persist(&self.target).map(drop).map_err(|e| e.error));
                forget(&temp);
                done.map_err(error)?;
                // The rename itself, on disk (best effort where a folder
                // cannot be opened).
                if let Ok(dir) = File::open(folder_of(&self.target)) {
                    let _ = dir.sync_all();
                }
                Ok(())
            }
            Some(Sink::Device(mut file)) => file.flush().map_err(error),
            None => Ok(()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // Not committed: the temporary file goes (NamedTempFile removes
        // it when dropped).
        if let Some(Sink::Temporary(file)) = self.sink.take() {
            forget(file.path());
        }
    }
}

/// Takes `temp` off the unfinished list.
fn forget(temp: &Path) {
    unfinished().retain(|p| p != temp);
}

/// A temporary file beside `target`, with the permissions of the file it
/// replaces (or a new file's: 0666 less the umask).
fn temporary(
    target: &Path,
    replaces: Option<&Metadata>,
) -> std::io::Result<tempfile::NamedTempFile> {
    let name = target
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    let permissions = {
        use std::os::unix::fs::PermissionsExt;
        replaces.map_or_else(
            || std::fs::Permissions::from_mode(0o666),
            |meta| std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777),
        )
    };
    #[cfg(unix)]
    builder.permissions(permissions);
    #[cfg(not(unix))]
    let _ = replaces;
    builder.tempfile_in(folder_of(target))
}

/// Writes `contents` to the output `path` whole, or not at all.
///
/// # Errors
///
/// As [`Output::create`], [`Output::write_all`] and [`Output::commit`].
pub(crate) fn write_output(
    path: &Path,
    what: &'static str,
    contents: &[u8],
) -> Result<(), HarnessError> {
    let mut output = Output::create(path, what)?;
    output.write_all(contents)?;
    output.commit()
}

/// Checks, before the run, that `path` can be written as an output (a
/// snapshot, a trace, a DOT file: `what` names it): an existing file that
/// is not read-only, or a missing one, in a folder that takes a temporary
/// file (made and removed again), or a character device; so a bad path
/// does not cost the run. Nothing is left behind.
///
/// # Errors
///
/// [`HarnessError::WriteFile`] when the path is a folder, a pipe or a
/// socket, read-only, or in a folder that does not exist or cannot take a
/// new file.
pub fn check_output(path: &Path, what: &'static str) -> Result<(), HarnessError> {
    Output::create(path, what).map(drop)
}

/// A file as [`check_distinct`] compares it.
struct Identity {
    /// The canonical path (of the folder, for a file not there yet).
    path: PathBuf,
    /// Device and inode, for a file that exists.
    inode: Option<(u64, u64)>,
    /// A character device (`/dev/null`) may be named twice.
    device: bool,
}

fn identity(path: &Path) -> Identity {
    let meta = std::fs::metadata(path).ok();
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let dir = std::fs::canonicalize(folder_of(path)).unwrap_or_else(|_| folder_of(path).into());
        path.file_name().map_or(dir.clone(), |name| dir.join(name))
    });
    #[cfg(unix)]
    let inode = meta.as_ref().map(|m| {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    });
    #[cfg(not(unix))]
    let inode = None;
    Identity {
        path: canonical,
        inode,
        device: meta.as_ref().is_some_and(is_char_device),
    }
}

fn same(a: &Identity, b: &Identity) -> bool {
    !(a.device && b.device)
        && (a.path == b.path || matches!((a.inode, b.inode), (Some(x), Some(y)) if x == y))
}

/// Refuses an output that is one of the inputs or another output; each
/// file comes with the option that names it (`--inputs`, `--dot`).
///
/// # Errors
///
/// [`HarnessError::Option`] naming both options and the path.
pub fn check_distinct(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
) -> Result<(), HarnessError> {
    let inputs: Vec<_> = inputs.iter().map(|&(o, p)| (o, p, identity(p))).collect();
    let mut seen: Vec<(&str, &Path, Identity)> = Vec::new();
    for &(option, path) in outputs {
        let id = identity(path);
        if let Some((other, _, _)) = inputs.iter().find(|(_, _, i)| same(i, &id)) {
            return Err(HarnessError::Option(format!(
                "{option} {} is the file of {other}: the output would overwrite an input; \
                 write it elsewhere",
                path.display()
            )));
        }
        if let Some((other, _, _)) = seen.iter().find(|(_, _, i)| same(i, &id)) {
            return Err(HarnessError::Option(format!(
                "{option} {} is also the file of {other}: one output would overwrite the other",
                path.display()
            )));
        }
        seen.push((option, path, id));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
