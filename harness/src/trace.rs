//! The Chrome trace: JSON in the Trace Event Format that Perfetto
//! (<https://ui.perfetto.dev>) and `chrome://tracing` open. One complete
//! event (`"ph": "X"`) per system run and per wave's apply, on the track of
//! the worker thread that ran it, and one per tick on a track of its own,
//! so the waves show as columns of spans side by side.
//!
//! The spans are the engine's own `tracing` spans (`tick` from
//! `Engine::tick`, `system` and `apply` from `Schedule::run`), recorded in
//! memory during the run by [`SpanLog`], a `tracing` subscriber, and
//! written as JSON after it. (Writing them through the `tracing-chrome`
//! subscriber instead was measured 5 to 8 times slower per tick on the
//! shmup scenario; see BENCHMARKS.md.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Dispatch, Metadata, Subscriber};

use super::RunOutcome;

/// What a recorded span stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// One tick of the engine, on the thread that called `tick`.
    Tick,
    /// One run of one system.
    System,
    /// The apply of one wave's command buffers.
    Apply,
}

/// One span of a run recorded with
/// [`RunConfig::record_spans`](super::RunConfig::record_spans).
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpan {
    /// What it stands for.
    pub kind: SpanKind,
    /// The system's name, `apply wave K`, or `tick`.
    pub name: String,
    /// The number of the tick it belongs to.
    pub tick: u64,
    /// For an apply, its wave (from 0); `None` otherwise (a system's wave
    /// is in the report).
    pub wave: Option<u64>,
    /// Index of the engine's worker thread that ran it (`0..threads`), or
    /// `None` outside the engine's pool (ticks run on the caller's thread).
    pub thread: Option<usize>,
    /// When it started, from the start of the run.
    pub start: Duration,
    /// How long it ran.
    pub duration: Duration,
}

/// A span created but not closed yet.
struct Open {
    kind: SpanKind,
    name: String,
    wave: Option<u64>,
    tick: Option<u64>,
    entered: Option<(Instant, Option<usize>)>,
}

/// A `tracing` subscriber that keeps the engine's `tick`, `system` and
/// `apply` spans in memory (every other span or event is disabled). Each
/// span is recorded once, at its first exit; recording takes a few short
/// lock sections and one allocation (its name).
pub(crate) struct SpanLog {
    epoch: Instant,
    /// The number of the tick entered last: the tick of later system spans.
    tick: AtomicU64,
    next: AtomicU64,
    open: Mutex<HashMap<u64, Open>>,
    done: Mutex<Vec<TraceSpan>>,
}

/// A dispatcher that listens to nothing, registered once for the whole
/// process. While a single dispatcher is registered, `tracing` works out a
/// span site's interest from the default dispatcher of whichever thread
/// reaches the site first: an engine ticking without a subscriber on
/// another thread (another run, another test) would then switch the
/// engine's spans off for good while a run records them. With two
/// registered, it asks every registered dispatcher.
static SECOND_DISPATCHER: LazyLock<Dispatch> =
    LazyLock::new(|| Dispatch::new(tracing::subscriber::NoSubscriber::new()));

impl SpanLog {
    /// The dispatcher a run records under: a new `SpanLog` (returned too,
    /// to take the spans from afterwards).
    pub(crate) fn dispatch() -> (Arc<SpanLog>, Dispatch) {
        LazyLock::force(&SECOND_DISPATCHER);
        let log = Arc::new(SpanLog::new());
        let dispatch = Dispatch::from(Arc::clone(&log));
        (log, dispatch)
    }

    fn new() -> SpanLog {
        SpanLog {
            epoch: Instant::now(),
            tick: AtomicU64::new(0),
            next: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
            done: Mutex::new(Vec::new()),
        }
    }

    /// The spans recorded so far, in the order they ended.
    pub(crate) fn take(&self) -> Vec<TraceSpan> {
        std::mem::take(&mut *self.done.lock())
    }
}

fn kind_of(metadata: &Metadata<'_>) -> Option<SpanKind> {
    if !metadata.is_span() {
        return None;
    }
    match metadata.name() {
        "tick" => Some(SpanKind::Tick),
        "system" => Some(SpanKind::System),
        "apply" => Some(SpanKind::Apply),
        _ => None,
    }
}

/// Reads the one field of each kind of span.
struct Fields<'a>(&'a mut Open);

impl Visit for Fields<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match (self.0.kind, field.name()) {
            (SpanKind::Tick, "number") => self.0.tick = Some(value),
            (SpanKind::Apply, "wave") => {
                self.0.wave = Some(value);
                self.0.name = format!("apply wave {value}");
            }
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if (self.0.kind, field.name()) == (SpanKind::System, "name") {
            self.0.name = format!("{value:?}");
        }
    }
}

impl Subscriber for SpanLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        kind_of(metadata).is_some()
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let kind = kind_of(span.metadata()).unwrap_or(SpanKind::System);
        let mut open = Open {
            kind,
            name: span.metadata().name().to_owned(),
            wave: None,
            tick: None,
            entered: None,
        };
        span.record(&mut Fields(&mut open));
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.open.lock().insert(id, open);
        Id::from_u64(id)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, span: &Id) {
        let thread = rayon::current_thread_index();
        if let Some(open) = self.open.lock().get_mut(&span.into_u64()) {
            if let Some(tick) = open.tick {
                self.tick.store(tick, Ordering::Relaxed);
            }
            open.entered = Some((Instant::now(), thread));
        }
    }

    fn exit(&self, span: &Id) {
        let end = Instant::now();
        // The engine's spans are entered once: the span is done at its exit.
        let Some(open) = self.open.lock().remove(&span.into_u64()) else {
            return;
        };
        let Some((start, thread)) = open.entered else {
            return;
        };
        let done = TraceSpan {
            kind: open.kind,
            name: open.name,
            tick: open
                .tick
                .unwrap_or_else(|| self.tick.load(Ordering::Relaxed)),
            wave: open.wave,
            thread,
            start: start.saturating_duration_since(self.epoch),
            duration: end.saturating_duration_since(start),
        };
        self.done.lock().push(done);
    }

    fn try_close(&self, span: Id) -> bool {
        self.open.lock().remove(&span.into_u64());
        true
    }
}

/// The track of the tick spans (worker tracks are numbered from 0).
const TICK_TRACK: usize = 1000;
/// The track of systems that ran outside the engine's pool.
const OTHER_TRACK: usize = 1001;

#[derive(Serialize)]
struct TraceEvent<'a> {
    name: &'a str,
    cat: &'static str,
    ph: &'static str,
    /// Microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    /// Microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    pid: u32,
    tid: usize,
    args: serde_json::Value,
}

#[derive(Serialize)]
struct Trace<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<TraceEvent<'a>>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
}

fn metadata(tid: usize, name: String) -> TraceEvent<'static> {
    TraceEvent {
        name: "thread_name",
        cat: "__metadata",
        ph: "M",
        ts: None,
        dur: None,
        pid: 1,
        tid,
        args: serde_json::json!({ "name": name }),
    }
}

/// The Chrome trace of a run made with
/// [`RunConfig::record_spans`](super::RunConfig::record_spans), as JSON
/// text.
///
/// # Examples
///
/// ```
/// use harness::{RunConfig, Scenario, chrome_trace, run};
///
/// let mut config = RunConfig::new(Scenario::builtin("shmup").unwrap());
/// config.ticks = 3;
/// config.threads = 2;
/// config.record_spans = true;
/// let trace = chrome_trace(&run(&config, |_| {}).unwrap());
/// let json: serde_json::Value = serde_json::from_str(&trace).unwrap();
/// let events = json["traceEvents"].as_array().unwrap();
/// // 14 systems and 1 tick span per tick, after the track names.
/// let spans = events.iter().filter(|e| e["cat"] == "system" || e["cat"] == "tick").count();
/// assert_eq!(spans, 3 * 15);
/// ```
pub fn chrome_trace(outcome: &RunOutcome) -> String {
    let report = &outcome.report;
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    let mut events = vec![metadata(TICK_TRACK, "ticks".into())];
    for t in 0..report.threads {
        events.push(metadata(t, format!("ecs-worker-{t}")));
    }
    if outcome
        .spans
        .iter()
        .any(|s| s.kind != SpanKind::Tick && s.thread.is_none())
    {
        events.push(metadata(OTHER_TRACK, "outside the pool".into()));
    }
    let wave_of: HashMap<&str, usize> = report
        .systems
        .iter()
        .map(|s| (s.name.as_str(), s.wave))
        .collect();
    for span in &outcome.spans {
        let (cat, tid, args) = match span.kind {
            SpanKind::Tick => ("tick", TICK_TRACK, serde_json::json!({ "tick": span.tick })),
            SpanKind::System => (
                "system",
                span.thread.unwrap_or(OTHER_TRACK),
                serde_json::json!({
                    "tick": span.tick,
                    "wave": wave_of.get(span.name.as_str()),
                }),
            ),
            SpanKind::Apply => (
                "apply",
                span.thread.unwrap_or(OTHER_TRACK),
                serde_json::json!({ "tick": span.tick, "wave": span.wave }),
            ),
        };
        events.push(TraceEvent {
            name: &span.name,
            cat,
            ph: "X",
            ts: Some(us(span.start)),
            dur: Some(us(span.duration)),
            pid: 1,
            tid,
            args,
        });
    }
    let trace = Trace {
        trace_events: events,
        display_time_unit: "ns",
    };
    serde_json::to_string(&trace).expect("a trace of strings and numbers serializes")
}
