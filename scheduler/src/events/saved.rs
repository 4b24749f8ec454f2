//! An event channel as plain values ([`EventsState`]), for file
//! snapshots: its retained events in their chunks, sequence numbers,
//! retention, readers and every reader's cursor, read between ticks and
//! made into a channel again, checked.

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;

use super::{Chunk, Events};

/// Events sent together in one tick (a writer's buffer, or the sends of
/// one tick from outside): `events[k]` has sequence number `start + k`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventChunk<T> {
    /// The sequence number of the first event.
    pub start: u64,
    /// The frame tick number the events were sent in.
    pub tick: u64,
    /// The events, in order.
    pub events: Vec<T>,
}

/// An [`Events`] channel between ticks, as plain values: see
/// [`Events::export_state`] and [`Events::from_state`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventsState<T> {
    /// The retained events, oldest chunk first.
    pub chunks: Vec<EventChunk<T>>,
    /// The sequence number of the first retained event.
    pub start: u64,
    /// The sequence number the next event gets.
    pub sent: u64,
    /// The frame tick number events sent now are stamped with.
    pub tick_number: u64,
    /// Ticks an event is kept ([`Events::retention`]).
    pub retention: u64,
    /// The reader systems the schedule registered (their event keys).
    pub readers: Vec<usize>,
    /// Each reader's cursor, by event key (0: has read nothing).
    pub cursors: Vec<u64>,
    /// Whether the channel is in the registry's list of channels that
    /// schedules age ([`Events::channel`]).
    pub listed: bool,
    /// Events readers missed ([`Events::missed`]).
    pub missed: u64,
}

/// Why [`Events::from_state`] refused a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent event channel: {0}")]
pub struct EventsStateError(pub String);

impl<T: Clone> Events<T> {
    /// The channel as plain values. Call it between ticks: the buffers
    /// of writers running now, and reads not yet committed, are not in
    /// it.
    pub fn export_state(&self) -> EventsState<T> {
        EventsState {
            chunks: self
                .chunks
                .iter()
                .map(|c| EventChunk {
                    start: c.start,
                    tick: c.tick,
                    events: c.events.clone(),
                })
                .collect(),
            start: self.start,
            sent: self.sent,
            tick_number: self.tick_number,
            retention: self.retention,
            readers: self.readers.clone(),
            cursors: self.cursors.lock().clone(),
            listed: self.listed,
            missed: self.missed(),
        }
    }
}

impl<T> Events<T> {
    /// The channel `state` describes, not yet listed in any registry: a
    /// load inserts it as the `Events<T>` resource, then calls
    /// [`Events::channel`] when `state.listed`.
    ///
    /// # Errors
    ///
    /// [`EventsStateError`] when the chunks do not run without a gap from
    /// `start` to `sent`, a chunk is empty, a cursor is past `sent`, the
    /// sequence numbers start after their end or pass 2^63, or the
    /// retention is under 2.
    pub fn from_state(state: EventsState<T>) -> Result<Events<T>, EventsStateError> {
        let fail = |m: String| Err(EventsStateError(m));
        if state.retention < 2 {
            return fail(format!("retention {} (at least 2)", state.retention));
        }
        // Far from wrapping: a channel sends fewer than 2^63 events.
        if state.sent > u64::MAX / 2 || state.start > state.sent {
            return fail(format!(
                "sequence numbers {}..{} (start after the end, or past 2^63)",
                state.start, state.sent
            ));
        }
        let mut end = state.start;
        for (k, chunk) in state.chunks.iter().enumerate() {
            if chunk.start != end
                || chunk.events.is_empty()
                || chunk.events.len() as u64 > state.sent - end
            {
                return fail(format!(
                    "chunk {k} starts at {} with {} events, expected a start at {end}, at least \
                     one event and none past {}",
                    chunk.start,
                    chunk.events.len(),
                    state.sent
                ));
            }
            end += chunk.events.len() as u64;
        }
        if end != state.sent {
            return fail(format!(
                "the chunks end at {end}, the channel has sent {}",
                state.sent
            ));
        }
        if let Some(c) = state.cursors.iter().find(|&&c| c > state.sent) {
            return fail(format!(
                "a cursor at {c}, past the {} events sent",
                state.sent
            ));
        }
        let chunks: VecDeque<Chunk<T>> = state
            .chunks
            .into_iter()
            .map(|c| Chunk {
                start: c.start,
                tick: c.tick,
                events: c.events,
            })
            .collect();
        Ok(Events {
            chunks,
            start: state.start,
            sent: state.sent,
            tick_number: state.tick_number,
            retention: state.retention,
            readers: state.readers,
            pending: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            cursors: Mutex::new(state.cursors),
            listed: false,
            reads: Mutex::new(Vec::new()),
            missed: AtomicU64::new(state.missed),
        })
    }
}
