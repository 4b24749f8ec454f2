//! Span recording: which worker thread ran each system, when, and for how
//! long, for timelines such as the harness's Chrome trace.
//!
//! The scheduler measures every run itself
//! ([`Schedule::last_runs`](scheduler::Schedule::last_runs)); while
//! recording is on, the engine copies the runs of each tick into the
//! recorder after the tick (a failed tick included). While it is off, a
//! tick costs one relaxed atomic load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use scheduler::{SystemId, SystemRun};

/// One run of one system, recorded while span recording is on (see
/// [`Engine::set_record_spans`](crate::Engine::set_record_spans)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemSpan {
    /// The tick's number.
    pub tick: u64,
    /// The system that ran.
    pub system: SystemId,
    /// Index of the engine's worker thread that ran it (`0..threads`), or
    /// `None` when it ran outside the engine's pool.
    pub thread: Option<usize>,
    /// When it started, from [`Engine::span_epoch`](crate::Engine::span_epoch).
    pub start: Duration,
    /// How long it ran.
    pub duration: Duration,
}

/// Where the wrappers of one engine put their spans.
#[derive(Debug)]
pub(crate) struct SpanRecorder {
    enabled: AtomicBool,
    epoch: Instant,
    spans: Mutex<Vec<RawSpan>>,
}

/// A span before its registration index is turned into a [`SystemId`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawSpan {
    pub(crate) tick: u64,
    pub(crate) index: usize,
    pub(crate) thread: Option<usize>,
    pub(crate) start: Duration,
    pub(crate) duration: Duration,
}

impl SpanRecorder {
    pub(crate) fn new(enabled: bool) -> Self {
        SpanRecorder {
            enabled: AtomicBool::new(enabled),
            epoch: Instant::now(),
            spans: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn epoch(&self) -> Instant {
        self.epoch
    }

    pub(crate) fn take(&self) -> Vec<RawSpan> {
        std::mem::take(&mut *self.spans.lock())
    }

    /// Records the `runs` of tick `tick`, in the order they ended; runs of
    /// earlier ticks (systems the tick skipped) are left out.
    pub(crate) fn record(&self, tick: u64, runs: impl Iterator<Item = SystemRun>) {
        let mut spans = self.spans.lock();
        let first = spans.len();
        spans.extend(runs.filter(|run| run.tick == tick).map(|run| RawSpan {
            tick,
            index: run.system.index(),
            thread: run.worker,
            start: run.start.saturating_duration_since(self.epoch),
            duration: run.duration,
        }));
        spans[first..].sort_by_key(|span| span.start + span.duration);
    }
}
