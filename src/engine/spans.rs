//! Span recording: which worker thread ran each system, when, and for how
//! long, for timelines such as the harness's Chrome trace.
//!
//! Every system the engine runs is wrapped in a [`Spanned`] that forwards
//! its name, access, run and state unchanged. While recording is off the
//! wrapper costs one relaxed atomic load per run; while it is on, each run
//! reads the clock twice and pushes one [`SystemSpan`] under a lock held
//! for the push only.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use scheduler::{System, SystemAccess, SystemContext, SystemError, SystemId};

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
}

/// A system with span recording around its runs; everything else is
/// forwarded to the wrapped system.
pub(crate) struct Spanned {
    inner: Box<dyn System>,
    /// The registration index: the index of the scheduler's [`SystemId`].
    index: usize,
    recorder: Arc<SpanRecorder>,
}

impl Spanned {
    pub(crate) fn new(inner: Box<dyn System>, index: usize, recorder: Arc<SpanRecorder>) -> Self {
        Spanned {
            inner,
            index,
            recorder,
        }
    }
}

impl System for Spanned {
    fn default_name(&self) -> Cow<'static, str> {
        self.inner.default_name()
    }

    fn type_path(&self) -> Option<Cow<'static, str>> {
        self.inner.type_path()
    }

    fn run_exclusive(
        &mut self,
        name: &str,
        registry: &mut ecs_engine::Registry,
        tick: scheduler::Tick,
    ) -> Result<(), SystemError> {
        self.inner.run_exclusive(name, registry, tick)
    }

    fn access(&self) -> SystemAccess {
        self.inner.access()
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        if !self.recorder.is_enabled() {
            return self.inner.run(ctx);
        }
        let start = Instant::now();
        let outcome = self.inner.run(ctx);
        let duration = start.elapsed();
        self.recorder.spans.lock().push(RawSpan {
            tick: ctx.tick().number,
            index: self.index,
            thread: rayon::current_thread_index(),
            start: start.saturating_duration_since(self.recorder.epoch),
            duration,
        });
        outcome
    }

    fn state(&self) -> &dyn Any {
        self.inner.state()
    }
}
