//! The Chrome trace: JSON in the Trace Event Format that Perfetto
//! (<https://ui.perfetto.dev>) and `chrome://tracing` open. One complete
//! event (`"ph": "X"`) per system per tick, on the track of the worker
//! thread that ran it, and one per tick on a track of its own, so the
//! waves show as columns of spans side by side.

use serde::Serialize;

use super::RunOutcome;

/// The track of the tick spans (worker tracks are numbered from 0).
const TICK_TRACK: usize = 1000;
/// The track of systems that ran outside the engine's pool.
const OTHER_TRACK: usize = 1001;

#[derive(Serialize)]
struct Event<'a> {
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
    trace_events: Vec<Event<'a>>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
}

fn metadata(tid: usize, name: String) -> Event<'static> {
    Event {
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
/// let spans = events.iter().filter(|e| e["ph"] == "X").count();
/// assert_eq!(spans, 3 * 15);
/// ```
pub fn chrome_trace(outcome: &RunOutcome) -> String {
    let report = &outcome.report;
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    let mut events = vec![metadata(TICK_TRACK, "ticks".into())];
    for t in 0..report.threads {
        events.push(metadata(t, format!("ecs-worker-{t}")));
    }
    if outcome.spans.iter().any(|s| s.thread.is_none()) {
        events.push(metadata(OTHER_TRACK, "outside the pool".into()));
    }
    for tick in &outcome.tick_spans {
        events.push(Event {
            name: "tick",
            cat: "tick",
            ph: "X",
            ts: Some(us(tick.start)),
            dur: Some(us(tick.duration)),
            pid: 1,
            tid: TICK_TRACK,
            args: serde_json::json!({ "tick": tick.tick }),
        });
    }
    for span in &outcome.spans {
        let system = &report.systems[span.system.index()];
        events.push(Event {
            name: &system.name,
            cat: "system",
            ph: "X",
            ts: Some(us(span.start)),
            dur: Some(us(span.duration)),
            pid: 1,
            tid: span.thread.unwrap_or(OTHER_TRACK),
            args: serde_json::json!({ "tick": span.tick, "wave": system.wave }),
        });
    }
    let trace = Trace {
        trace_events: events,
        display_time_unit: "ns",
    };
    serde_json::to_string(&trace).expect("a trace of strings and numbers serializes")
}
