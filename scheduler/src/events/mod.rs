//! Typed events between systems; see [`Events`]: the channel and its
//! iterator here, the system parameters over it in `params`, the hooks a
//! schedule ages and flushes the channels with in `hooks`.

pub(crate) mod hooks;
pub(crate) mod params;
pub(crate) mod raw;
pub(crate) mod saved;

pub use raw::{RAW_EVENT_MAX_ALIGN, RawEvent, RawEventError, RawEventId, RawEvents};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use command_buffer::CommandBuffer;
use ecs_engine::Registry;
use parking_lot::Mutex;

use crate::access::EventKey;

/// The channel of events of type `T`: a resource of the registry, created
/// at build for every event type a system declares (or by
/// [`Events::send_to`] and [`EventCommands::send_event`]).
///
/// Typed events between systems: [`EventWriter<T>`](crate::EventWriter)
/// and [`EventReader<T>`](crate::EventReader) system parameters over an
/// [`Events<T>`] resource.
///
/// # Ordering
///
/// An `EventWriter<T>` declares a *write* of the event type `T`, an
/// `EventReader<T>` a *read*. A writer runs before the readers of its type,
/// under either policy and whatever the registration order, so a reader
/// sees the events of its own tick; unless the pair is ordered the other
/// way by something else: a `before`/`after` constraint, or a conflict on
/// another type whose rule runs the reader first (under
/// [`Policy::RegistrationOrder`](crate::Policy::RegistrationOrder): a
/// reader registered before the writer that shares a written component or
/// resource with it). Then the reader runs first and reads those events on
/// its next run, a tick later, and
/// [`Schedule::explain`](crate::Schedule::explain) says so
/// ([`Rule::Overruled`](crate::Rule::Overruled)). Two writers do not
/// conflict: they may share a wave. A system with both an
/// `EventWriter<T>` and an `EventReader<T>` counts as a writer: it is not
/// ordered after the other writers of `T`, and the events they send in a
/// wave it shares with them reach it on its next run.
///
/// # Writers, and the merge order
///
/// A writer records into its own buffer while its wave runs (no lock while
/// sending; one short lock to take a buffer at the start of the run and
/// one to hand it back at its end). When the wave ends, before its command
/// buffers are applied, the buffers are appended to the channel in system
/// registration order, so a reader sees the same order on any thread count.
/// The events of a system that failed (an error or a panic) are dropped
/// with its commands.
/// Events sent from a command buffer
/// ([`EventCommands::send_event`]) are appended when that buffer is
/// applied; events sent between ticks ([`Events::send`], through
/// `&mut Registry`) at once.
///
/// # Readers, cursors and the retention window
///
/// Every event gets a sequence number. Each reader system keeps its own
/// cursor (the sequence number after the last event it saw), so it sees
/// every event exactly once, whatever its cadence. Events are kept for
/// [`retention`](Events::retention) ticks after the tick they were sent in
/// (default [`Events::DEFAULT_RETENTION`]): a reader that does not run for
/// a while (disabled, or skipped by a run condition) still gets every event
/// of that window when it runs again. Older events are dropped at the start
/// of a tick; a reader that had not seen them counts them as
/// [missed](crate::EventReader::missed), and the channel keeps the total
/// ([`Events::missed`]): never silently lost. The window applies to every
/// channel a schedule knows: those its systems declare, and those created
/// through [`Events::channel`] (which [`Events::send_to`], command
/// buffers' [`send_event`](EventCommands::send_event) and the engine's
/// input use), read by a system or not; in a channel no reader system
/// declares, every event dropped by age counts as missed. Events that every reader
/// system of the schedule has seen are dropped at the start of the next
/// tick, earlier than the window, so a channel whose readers keep up holds
/// about one tick of events (and reuses their buffers). Events are stored
/// in chunks, each writer's buffer moved in whole at the merge, never
/// copied. A reader sees the events as they are when it runs; its cursor
/// moves when its wave ends, and only if the system succeeded: a system
/// that fails (returns an error or panics) after reading sees the same
/// events again the next time it runs (within the window), so nothing is
/// lost to a failure.
///
/// # Not for input from other threads
///
/// `Events` are sent and read by systems (and between ticks through
/// `&mut Registry`). Values produced on other threads (input devices, the
/// network) go through the thread-safe input queue, the `event_queue`
/// crate's `EventQueue<T>`, drained by the game loop, or, to replay
/// identically, through the engine's tick-stamped input
/// (`EngineBuilder::input_producer`), which delivers them as events.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{EventReader, EventWriter, Events, ResMut, Schedule, Tick};
///
/// struct Hit(u32);
/// #[derive(Default)]
/// struct Damage(u32);
///
/// fn shoot(mut hits: EventWriter<Hit>) {
///     hits.send(Hit(3));
///     hits.send(Hit(4));
/// }
/// fn score(hits: EventReader<Hit>, mut damage: ResMut<Damage>) {
///     damage.0 += hits.iter().map(|h| h.0).sum::<u32>();
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(Damage::default());
/// let mut builder = Schedule::builder();
/// builder.add(score); // registered first, still runs after the writer
/// builder.add(shoot);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<Damage>().unwrap().0, 7);
/// // Between ticks, from outside:
/// Events::send_to(&mut registry, Hit(10));
/// schedule.run(&mut registry, Tick { number: 1, ..Tick::default() }).unwrap();
/// assert_eq!(registry.resource::<Damage>().unwrap().0, 24);
/// ```
#[derive(Debug)]
pub struct Events<T> {
    /// Retained events in chunks (a writer's buffer, or the sends of one
    /// tick), oldest first.
    chunks: VecDeque<Chunk<T>>,
    /// Sequence number of the first retained event.
    start: u64,
    /// Sequence number the next event gets.
    sent: u64,
    /// The frame tick number ([`Tick::number`](crate::Tick::number))
    /// events sent now are stamped with: the tick running, or between
    /// ticks the last one that ran. Not a change tick.
    tick_number: u64,
    retention: u64,
    /// The reader systems known from the schedule (registration indices):
    /// an event all of them have seen is dropped at the next tick.
    readers: Vec<usize>,
    /// Writer buffers handed back during the wave: `(system index, events)`.
    pending: Mutex<Vec<(usize, Vec<T>)>>,
    /// Empty buffers, kept for the next writers.
    spare: Mutex<Vec<Vec<T>>>,
    /// Each reader's cursor, by system index (0: has read nothing).
    cursors: Mutex<Vec<u64>>,
    /// `true` once in the registry's list of channels that schedules age
    /// ([`Events::channel`]).
    listed: bool,
    /// Reads of the running wave, committed when it ends unless their
    /// system failed: `(system index, cursor after the read)`.
    reads: Mutex<Vec<(usize, u64)>>,
    missed: AtomicU64,
}

impl<T: Clone> Clone for Events<T> {
    /// A copy of the channel: its retained events, sequence numbers,
    /// tick and every reader's cursor (what an in-memory state saves,
    /// with [`Registry::register_resource_clone`]); the spare buffers
    /// are not copied.
    fn clone(&self) -> Self {
        Events {
            chunks: self.chunks.clone(),
            start: self.start,
            sent: self.sent,
            tick_number: self.tick_number,
            retention: self.retention,
            readers: self.readers.clone(),
            pending: Mutex::new(self.pending.lock().clone()),
            spare: Mutex::new(Vec::new()),
            cursors: Mutex::new(self.cursors.lock().clone()),
            listed: self.listed,
            reads: Mutex::new(self.reads.lock().clone()),
            missed: AtomicU64::new(self.missed.load(Ordering::Relaxed)),
        }
    }
}

/// Events sent together: `events[k]` has sequence `start + k`.
#[derive(Debug, Clone)]
struct Chunk<T> {
    start: u64,
    /// The frame tick number the events were sent in.
    tick: u64,
    events: Vec<T>,
}

impl<T> Chunk<T> {
    fn end(&self) -> u64 {
        self.start + self.events.len() as u64
    }
}

impl<T> Default for Events<T> {
    fn default() -> Self {
        Events::with_retention(Events::<T>::DEFAULT_RETENTION)
    }
}

impl<T> Events<T> {
    /// Ticks an event is kept after the tick it was sent in, by default:
    /// events of tick `t` are dropped when tick `t + 8` starts.
    pub const DEFAULT_RETENTION: u64 = 8;

    /// An empty channel with the default retention.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty channel keeping events for `ticks` ticks after the tick
    /// they were sent in (at least 2, so that a reader that runs every tick
    /// sees every event: one sent after it ran, or between ticks, it sees
    /// in the next tick).
    pub fn with_retention(ticks: u64) -> Self {
        Events {
            chunks: VecDeque::new(),
            start: 0,
            sent: 0,
            tick_number: 0,
            retention: ticks.max(2),
            readers: Vec::new(),
            pending: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            cursors: Mutex::new(Vec::new()),
            listed: false,
            reads: Mutex::new(Vec::new()),
            missed: AtomicU64::new(0),
        }
    }

    /// Ticks events are kept; see [`Events`].
    pub fn retention(&self) -> u64 {
        self.retention
    }

    /// Events retained now.
    pub fn len(&self) -> usize {
        (self.sent - self.start) as usize
    }

    /// `true` when no event is retained.
    pub fn is_empty(&self) -> bool {
        self.sent == self.start
    }

    /// Events sent so far, over the channel's life.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Events that readers missed because they were dropped (older than
    /// the retention window) before those readers ran, summed over the
    /// readers; in a channel with no reader system, every event dropped
    /// (by age: all of them, sooner or later).
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// The retained events, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flat_map(|chunk| chunk.events.iter())
    }

    /// The retained events with sequence numbers in `from..to`.
    fn range(&self, from: u64, to: u64) -> EventIter<'_, T> {
        EventIter {
            current: [].iter(),
            chunks: self.chunks.iter(),
            from,
            to,
            current_end: from,
        }
    }

    /// Appends `value`, stamped with the current frame tick number
    /// (between ticks: the last tick that ran).
    pub fn send(&mut self, value: T) {
        match self.chunks.back_mut() {
            Some(chunk) if chunk.tick == self.tick_number => chunk.events.push(value),
            _ => {
                let mut events = self.spare.get_mut().pop().unwrap_or_default();
                events.push(value);
                self.chunks.push_back(Chunk {
                    start: self.sent,
                    tick: self.tick_number,
                    events,
                });
            }
        }
        self.sent += 1;
    }

    /// Starts frame tick number `tick`: drops the events older than the retention
    /// window, and those every known reader has seen.
    pub(crate) fn begin_tick(&mut self, tick: u64) {
        self.tick_number = tick;
        let seen = {
            let cursors = self.cursors.get_mut();
            self.readers
                .iter()
                .map(|&r| cursors.get(r).copied().unwrap_or(0))
                .min()
        };
        while let Some(chunk) = self.chunks.front() {
            let expired = chunk.tick.saturating_add(self.retention) <= tick;
            let read_by_all = seen.is_some_and(|seen| chunk.end() <= seen);
            if !(expired || read_by_all) {
                break;
            }
            let mut chunk = self.chunks.pop_front().expect("a front chunk");
            if self.readers.is_empty() {
                // Nobody will ever count these: count them now.
                *self.missed.get_mut() += chunk.events.len() as u64;
            }
            self.start = chunk.end();
            chunk.events.clear();
            self.spare.get_mut().push(chunk.events);
        }
    }

    /// Appends the writer buffers handed back in this wave, in system
    /// registration order, except those of the `failed` systems (dropped,
    /// like their commands).
    pub(crate) fn flush(&mut self, failed: &[usize]) {
        self.commit_reads(failed);
        let mut pending = std::mem::take(self.pending.get_mut());
        if pending.is_empty() {
            return;
        }
        pending.sort_by_key(|&(system, _)| system);
        for (system, mut events) in pending.drain(..) {
            if failed.contains(&system) || events.is_empty() {
                events.clear();
                self.spare.get_mut().push(events);
            } else {
                let start = self.sent;
                self.sent += events.len() as u64;
                self.chunks.push_back(Chunk {
                    start,
                    tick: self.tick_number,
                    events,
                });
            }
        }
        *self.pending.get_mut() = pending;
    }

    /// Registers reader system `system`: events it has not seen are kept
    /// (within the retention window).
    pub(crate) fn add_reader(&mut self, system: usize) {
        if self.readers.is_empty() {
            // What was dropped before there was a reader is counted
            // already (in `begin_tick`): start the first readers after it.
            let cursors = self.cursors.get_mut();
            if cursors.len() <= system {
                cursors.resize(system + 1, 0);
            }
            cursors[system] = cursors[system].max(self.start);
        }
        if !self.readers.contains(&system) {
            self.readers.push(system);
        }
    }

    /// The events system `system` has not seen: `(first sequence, end
    /// sequence, missed)`. The cursor stays where it is until the read is
    /// committed ([`commit_reads`](Self::commit_reads)).
    fn read_for(&self, system: usize) -> (u64, u64, u64) {
        let cursor = self.cursors.lock().get(system).copied().unwrap_or(0);
        let missed = self.start.saturating_sub(cursor);
        (cursor.max(self.start), self.sent, missed)
    }

    /// Moves the cursors of the reads of the wave that ended, except those
    /// of the `failed` systems (they read the same events again next
    /// time), and counts what each committed reader missed.
    fn commit_reads(&mut self, failed: &[usize]) {
        let reads = self.reads.get_mut();
        if reads.is_empty() {
            return;
        }
        let cursors = self.cursors.get_mut();
        for (system, end) in reads.drain(..) {
            if failed.contains(&system) {
                continue;
            }
            if cursors.len() <= system {
                cursors.resize(system + 1, 0);
            }
            let cursor = &mut cursors[system];
            if *cursor >= end {
                // A second reader of the same type in the same system.
                continue;
            }
            let missed = self.start.saturating_sub(*cursor);
            *self.missed.get_mut() += missed;
            *cursor = end;
        }
    }
}

impl<T: Send + Sync + 'static> Events<T> {
    /// Sends `value` on `registry`'s channel of `T` (creating it if
    /// needed, see [`channel`](Self::channel)), from outside a tick or
    /// from an exclusive system (appended at once: the readers that run
    /// later in the tick see it).
    pub fn send_to(registry: &mut Registry, value: T) {
        Self::channel(registry).send(value);
    }

    /// `registry`'s channel of `T`, created (with the default retention)
    /// if missing, and listed in the registry so that every
    /// [`Schedule`](crate::Schedule) run on it ages it at the start of each
    /// tick, whether or not any system declares `T` (see [`Events`] on the
    /// retention window). A channel inserted as a plain resource and
    /// declared by no system is aged only once it went through here.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Events, Schedule, Tick};
    ///
    /// struct Unheard(u32);
    /// let mut registry = Registry::new();
    /// let mut schedule = Schedule::builder().build(&mut registry).unwrap();
    /// for number in 0..20 {
    ///     Events::channel(&mut registry).send(Unheard(1));
    ///     schedule.run(&mut registry, Tick { number, ..Tick::default() }).unwrap();
    /// }
    /// // No system reads `Unheard`: only the window is kept, the rest
    /// // dropped and counted.
    /// let events = registry.resource::<Events<Unheard>>().unwrap();
    /// assert_eq!((events.sent(), events.len() as u64, events.missed()), (20, 7, 13));
    /// ```
    pub fn channel(registry: &mut Registry) -> &mut Events<T> {
        if !registry.contains_resource::<Events<T>>() {
            registry.insert_resource(Events::<T>::new());
        }
        let listed = registry
            .resource::<Events<T>>()
            .is_some_and(|events| events.listed);
        if !listed {
            let begin: BeginTick = |registry, _, tick| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.begin_tick(tick);
                }
            };
            match registry.resource_mut::<EventChannels>() {
                Some(channels) => channels.list(EventKey::of::<T>(), begin),
                None => {
                    registry.insert_resource(EventChannels(vec![(EventKey::of::<T>(), begin)]));
                }
            }
        }
        let events = registry
            .resource_mut::<Events<T>>()
            .expect("inserted above");
        events.listed = true;
        events
    }
}

/// The event channels of a registry that schedules age each tick besides
/// those their systems declare ([`Events::channel`]): a resource.
#[derive(Debug, Default)]
pub(crate) struct EventChannels(pub(crate) Vec<(EventKey, BeginTick)>);

impl EventChannels {
    /// Lists channel `key`, unless listed already (a restored state may
    /// bring back a channel unlisted while the registry's list, not part
    /// of states, has it).
    pub(crate) fn list(&mut self, key: EventKey, begin: BeginTick) {
        if !self.0.iter().any(|&(listed, _)| listed == key) {
            self.0.push((key, begin));
        }
    }
}

/// The events a reader sees: a slice iterator over one chunk at a time, so
/// the loop over a chunk is as tight as over a `Vec`. Exact size.
#[derive(Debug)]
pub struct EventIter<'a, T> {
    current: std::slice::Iter<'a, T>,
    chunks: std::collections::vec_deque::Iter<'a, Chunk<T>>,
    /// Sequence number of the first event in range.
    from: u64,
    /// Sequence number after the last event in range.
    to: u64,
    /// Sequence number after the last event of `current`.
    current_end: u64,
}

/// The part in `from..to` of the next chunk of `chunks` that has events in
/// range, with the sequence number after it; `None` at the end. A free
/// function over the chunk iterator alone (not `&mut EventIter`), so a
/// `for` loop keeps the current slice iterator in registers.
#[cold]
fn next_slice<'a, T>(
    chunks: &mut std::collections::vec_deque::Iter<'a, Chunk<T>>,
    from: u64,
    to: u64,
) -> Option<(&'a [T], u64)> {
    for chunk in chunks.by_ref() {
        if chunk.end() <= from {
            continue;
        }
        if chunk.start >= to {
            return None;
        }
        let first = from.saturating_sub(chunk.start) as usize;
        let end = to.min(chunk.end());
        let last = (end - chunk.start) as usize;
        return Some((&chunk.events[first..last], end));
    }
    None
}

impl<'a, T> EventIter<'a, T> {
    /// Moves to the next slice with events in range; `false` at the end.
    #[inline]
    fn next_chunk(&mut self) -> bool {
        match next_slice(&mut self.chunks, self.from, self.to) {
            Some((slice, end)) => {
                self.current = slice.iter();
                self.current_end = end;
                true
            }
            None => false,
        }
    }
}

impl<'a, T> Iterator for EventIter<'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        loop {
            if let Some(event) = self.current.next() {
                return Some(event);
            }
            if !self.next_chunk() {
                return None;
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.len();
        (len, Some(len))
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a T) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        loop {
            acc = self.current.by_ref().fold(acc, &mut f);
            if !self.next_chunk() {
                return acc;
            }
        }
    }
}

impl<T> ExactSizeIterator for EventIter<'_, T> {
    #[inline]
    fn len(&self) -> usize {
        self.current.len() + self.to.saturating_sub(self.current_end) as usize
    }
}

impl<T> std::iter::FusedIterator for EventIter<'_, T> {}

/// Sending events from a command buffer: appended to the channel when the
/// buffer is applied (after its wave, in system registration order).
///
/// # Examples
///
/// ```
/// use command_buffer::CommandBuffer;
/// use ecs_engine::Registry;
/// use scheduler::{EventCommands, Events};
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::new();
/// commands.send_event(5_u32);
/// commands.apply(&mut registry);
/// assert_eq!(registry.resource::<Events<u32>>().unwrap().iter().copied().collect::<Vec<_>>(), [5]);
/// ```
pub trait EventCommands {
    /// Records sending `value` on the channel of `T` (created if missing).
    fn send_event<T: Send + Sync + 'static>(&mut self, value: T);
}

impl EventCommands for CommandBuffer {
    fn send_event<T: Send + Sync + 'static>(&mut self, value: T) {
        self.push(move |registry: &mut Registry| Events::send_to(registry, value));
    }
}

/// Ages one channel (by its key) at the start of a tick.
pub(crate) type BeginTick = fn(&mut Registry, EventKey, u64);
/// Merges one channel's writer buffers and commits its readers' cursors,
/// except the failed systems' (their events dropped, their cursors kept).
pub(crate) type Flush = fn(&mut Registry, EventKey, &[usize]);

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Ping(u32);

    fn listed(registry: &Registry) -> usize {
        registry.resource::<EventChannels>().map_or(0, |c| {
            c.0.iter()
                .filter(|&&(key, _)| key == EventKey::of::<Ping>())
                .count()
        })
    }

    #[test]
    fn a_channel_made_after_a_save_is_listed_once_after_the_restore() {
        let mut registry = Registry::new();
        registry.register_resource_clone::<Events<Ping>>();
        let state = registry.save_state().unwrap();
        Events::<Ping>::channel(&mut registry).send(Ping(1));
        assert_eq!(listed(&registry), 1);
        // The restore removes the channel (it was not there when saved)
        // and keeps the list, which states do not hold.
        registry.restore_state(&state).unwrap();
        assert!(!registry.contains_resource::<Events<Ping>>());
        Events::<Ping>::channel(&mut registry).send(Ping(2));
        assert_eq!(listed(&registry), 1);
        assert_eq!(registry.resource::<Events<Ping>>().unwrap().sent(), 1);
    }
}
