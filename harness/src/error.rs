//! [`HarnessError`]: everything that stops a harness run, as a value with
//! a message that says what to fix.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ecs_runtime::EngineError;

/// Why a harness run could not start or finish.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// A file could not be read.
    #[error("cannot read the {what} {}: {source}", path.display())]
    ReadFile {
        /// What the file is: `"scenario"` or `"input script"`.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A file could not be written.
    #[error("cannot write the {what} {}: {source}", path.display())]
    WriteFile {
        /// What the file is: `"trace"` or `"DOT file"`.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The report could not be printed.
    #[error("cannot print the report on standard output: {0}")]
    Print(#[source] Arc<std::io::Error>),
    /// No built-in scenario has that name.
    #[error(
        "no scenario file or built-in scenario is named `{name}` (built-in: shmup, particles, movers)"
    )]
    UnknownScenario {
        /// The name asked for.
        name: String,
    },
    /// The scenario is malformed or a value is out of range.
    #[error("scenario {origin}: {message}")]
    Scenario {
        /// The file (or built-in name).
        origin: String,
        /// Where and what: the line, the column and the field.
        message: String,
    },
    /// A line of the input script does not parse.
    #[error("input script {origin}, line {line}: {message}")]
    Input {
        /// The file.
        origin: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// An option is out of range.
    #[error("{0}")]
    Option(String),
    /// The run would need more memory than this process may take (see
    /// [`estimate_memory`](crate::estimate_memory) and
    /// [`memory_budget`](crate::memory_budget)).
    #[error(
        "the run needs at least {} ({breakdown}), but {} is left ({limit}); lower --scale or --ticks",
        crate::limits::human_bytes(*needed),
        crate::limits::human_bytes(*available)
    )]
    Memory {
        /// Bytes the run needs, at least.
        needed: u64,
        /// Bytes left.
        available: u64,
        /// The limit that leaves them: `"free memory"`, `"the cgroup
        /// memory limit"`, `"the address-space limit (ulimit -v)"`.
        limit: &'static str,
        /// What the need is made of.
        breakdown: String,
    },
    /// A snapshot (`--load`) could not be decoded, or belongs to another
    /// run; or one (`--save-at`) could not be encoded.
    #[error("snapshot {}: {message}", path.display())]
    Snapshot {
        /// The snapshot file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// The world outgrew the memory left during the run: stopped at the
    /// tick, before an allocation failed.
    #[error("tick {tick}: out of memory: {message}")]
    OutOfMemory {
        /// The tick after which the run stopped.
        tick: u64,
        /// What grew, and the limit.
        message: String,
    },
    /// The engine refused to build or a tick failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A thread could not start or panicked.
    #[error("harness thread: {0}")]
    Thread(String),
}

/// Writes `contents` to `path` whole or not at all: to a temporary file in
/// the same folder, synced, then renamed over `path` (see
/// [`check_output`](crate::check_output)); `what` names the file in the
/// error (`"trace"`, `"DOT file"`).
///
/// # Errors
///
/// [`HarnessError::WriteFile`] with what the operating system said; the
/// file that was at `path` is then as it was, and no temporary file is
/// left.
pub fn write_text(path: &Path, what: &'static str, contents: &str) -> Result<(), HarnessError> {
    crate::files::write_output(path, what, contents.as_bytes())
}

/// `text` with every control character escaped (`\r`, `\n`, `\t`,
/// `\u{1b}`), so that a message quoting a file's bytes stays on one line
/// and sends no terminal escape sequence.
///
/// # Examples
///
/// ```
/// assert_eq!(harness::printable("a\r\u{1b}[31mb"), "a\\r\\u{1b}[31mb");
/// ```
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
