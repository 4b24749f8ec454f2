//! Typed events between systems: [`EventWriter<T>`] and [`EventReader<T>`]
//! system parameters over an [`Events<T>`] resource.
//!
//! # Ordering
//!
//! An `EventWriter<T>` declares a *write* of the event type `T`, an
//! `EventReader<T>` a *read*, so the schedule orders every writer before
//! every reader, by the same policy as components (under
//! [`Policy::RegistrationOrder`](crate::Policy::RegistrationOrder) a reader
//! registered before a writer runs first and sees that writer's events the
//! next tick). Two writers do not conflict: they may share a wave.
//!
//! # Writers, and the merge order
//!
//! A writer records into its own buffer while its wave runs (no lock while
//! sending; one short lock to take a buffer at the start of the run and
//! one to hand it back at its end). When the wave ends, before its command
//! buffers are applied, the buffers are appended to the channel in system
//! registration order, so a reader sees the same order on any thread count.
//! The events of a system that failed (an error or a panic) are dropped
//! with its commands.
//! Events sent from a command buffer
//! ([`EventCommands::send_event`]) are appended when that buffer is
//! applied; events sent between ticks ([`Events::send`], through
//! `&mut Registry`) at once.
//!
//! # Readers, cursors and the retention window
//!
//! Every event gets a sequence number. Each reader system keeps its own
//! cursor (the sequence number after the last event it saw), so it sees
//! every event exactly once, whatever its cadence. Events are kept for
//! [`retention`](Events::retention) ticks after the tick they were sent in
//! (default [`Events::DEFAULT_RETENTION`]): a reader that does not run for
//! a while (disabled, or skipped by a run condition) still gets every event
//! of that window when it runs again. Older events are dropped at the start
//! of a tick; a reader that had not seen them counts them as
//! [missed](EventReader::missed), and the channel keeps the total
//! ([`Events::missed`]): never silently lost. A reader sees the events
//! as they are when it runs: a system that fails after reading still has
//! its cursor moved.

use std::any::{TypeId, type_name};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use command_buffer::CommandBuffer;
use ecs_engine::{Access, Registry};
use parking_lot::{MappedRwLockReadGuard, Mutex};

use crate::{ResourceAccess, SystemAccess, SystemContext, SystemError, SystemParam};

/// The channel of events of type `T`: a resource of the registry, created
/// at build for every event type a system declares (or by
/// [`Events::send_to`] and [`EventCommands::send_event`]).
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
    /// Retained events, oldest first; `events[0]` has sequence `start`.
    events: VecDeque<T>,
    start: u64,
    /// `(tick, first sequence)` of each tick that sent events, oldest first.
    ticks: VecDeque<(u64, u64)>,
    /// The tick events are stamped with now.
    now: u64,
    retention: u64,
    /// Writer buffers handed back during the wave: `(system index, events)`.
    pending: Mutex<Vec<(usize, Vec<T>)>>,
    /// Empty buffers, kept for the next writers.
    spare: Mutex<Vec<Vec<T>>>,
    /// Each reader's cursor, by system index (0: has read nothing).
    cursors: Mutex<Vec<u64>>,
    missed: AtomicU64,
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
            events: VecDeque::new(),
            start: 0,
            ticks: VecDeque::new(),
            now: 0,
            retention: ticks.max(2),
            pending: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            cursors: Mutex::new(Vec::new()),
            missed: AtomicU64::new(0),
        }
    }

    /// Ticks events are kept; see the [module docs](self).
    pub fn retention(&self) -> u64 {
        self.retention
    }

    /// Events retained now.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// `true` when no event is retained.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Events sent so far, over the channel's life.
    pub fn sent(&self) -> u64 {
        self.start + self.events.len() as u64
    }

    /// Events that readers missed because they were dropped (older than
    /// the retention window) before those readers ran, summed over the
    /// readers.
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// The retained events, oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> {
        self.events.iter()
    }

    /// Appends `value`, stamped with the current tick (between ticks: the
    /// last tick that ran).
    pub fn send(&mut self, value: T) {
        self.mark_tick();
        self.events.push_back(value);
    }

    /// Records that the events appended next belong to tick `now`.
    fn mark_tick(&mut self) {
        let next = self.sent();
        if self.ticks.back().is_none_or(|&(tick, _)| tick != self.now) {
            self.ticks.push_back((self.now, next));
        }
    }

    /// Starts tick `tick`: drops the events older than the retention
    /// window.
    fn begin_tick(&mut self, tick: u64) {
        self.now = tick;
        while let Some(&(sent, _)) = self.ticks.front() {
            if sent.saturating_add(self.retention) > tick {
                break;
            }
            self.ticks.pop_front();
            let end = self.ticks.front().map_or(self.sent(), |&(_, first)| first);
            let dropped = (end - self.start) as usize;
            self.events.drain(..dropped);
            self.start = end;
        }
    }

    /// Appends the writer buffers handed back in this wave, in system
    /// registration order, except those of the `failed` systems (dropped,
    /// like their commands).
    fn flush(&mut self, failed: &[usize]) {
        let mut pending = std::mem::take(self.pending.get_mut());
        if pending.is_empty() {
            return;
        }
        pending.sort_by_key(|&(system, _)| system);
        self.mark_tick();
        let spare = self.spare.get_mut();
        for (system, mut buffer) in pending.drain(..) {
            if failed.contains(&system) {
                buffer.clear();
            } else {
                self.events.extend(buffer.drain(..));
            }
            spare.push(buffer);
        }
        *self.pending.get_mut() = pending;
    }

    /// The events system `system` has not seen, moving its cursor past
    /// them: `(first sequence, end sequence, missed)`.
    fn read_for(&self, system: usize) -> (u64, u64, u64) {
        let end = self.sent();
        let mut cursors = self.cursors.lock();
        if cursors.len() <= system {
            cursors.resize(system + 1, 0);
        }
        let cursor = std::mem::replace(&mut cursors[system], end);
        let missed = self.start.saturating_sub(cursor);
        if missed > 0 {
            self.missed.fetch_add(missed, Ordering::Relaxed);
        }
        (cursor.max(self.start), end, missed)
    }
}

impl<T: Send + Sync + 'static> Events<T> {
    /// Sends `value` on `registry`'s channel of `T` (creating it if
    /// needed), from outside a tick.
    pub fn send_to(registry: &mut Registry, value: T) {
        if let Some(events) = registry.resource_mut::<Events<T>>() {
            events.send(value);
            return;
        }
        let mut events = Events::new();
        events.send(value);
        registry.insert_resource(events);
    }
}

/// What a system declares about event type `T`: read or write, and how the
/// scheduler creates, ages and flushes the channel.
#[derive(Debug, Clone, Copy)]
pub struct EventAccess {
    /// The event type.
    pub type_id: TypeId,
    /// Its type name.
    pub name: &'static str,
    /// Write (send) or read.
    pub access: Access,
    pub(crate) register: fn(&mut Registry),
    pub(crate) begin_tick: fn(&mut Registry, u64),
    pub(crate) flush: fn(&mut Registry, &[usize]),
}

impl PartialEq for EventAccess {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id && self.access == other.access
    }
}

impl Eq for EventAccess {}

impl EventAccess {
    /// `access` to events of type `T`.
    pub fn of<T: Send + Sync + 'static>(access: Access) -> Self {
        EventAccess {
            type_id: TypeId::of::<T>(),
            name: type_name::<T>(),
            access,
            register: |registry| {
                if !registry.contains_resource::<Events<T>>() {
                    registry.insert_resource(Events::<T>::new());
                }
            },
            begin_tick: |registry, tick| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.begin_tick(tick);
                }
            },
            flush: |registry, failed| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.flush(failed);
                }
            },
        }
    }
}

/// A system parameter: sends events of type `T`. Declares a write of the
/// event type (see the [module docs](self)).
pub struct EventWriter<'s, T: Send + Sync + 'static> {
    events: MappedRwLockReadGuard<'s, Events<T>>,
    buffer: Vec<T>,
    system: usize,
}

impl<T: Send + Sync + 'static> std::fmt::Debug for EventWriter<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWriter")
            .field("event", &type_name::<T>())
            .field("len", &self.buffer.len())
            .finish()
    }
}

impl<T: Send + Sync + 'static> EventWriter<'_, T> {
    /// Sends `value`: readers see it after this wave.
    #[inline]
    pub fn send(&mut self, value: T) {
        self.buffer.push(value);
    }

    /// Events sent by this run so far.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// `true` when this run has sent nothing yet.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
}

impl<T: Send + Sync + 'static> Extend<T> for EventWriter<'_, T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        self.buffer.extend(values);
    }
}

impl<T: Send + Sync + 'static> Drop for EventWriter<'_, T> {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        if buffer.is_empty() {
            self.events.spare.lock().push(buffer);
        } else {
            self.events.pending.lock().push((self.system, buffer));
        }
    }
}

/// A system parameter: the events of type `T` this system has not seen
/// yet, oldest first. Declares a read of the event type (see the
/// [module docs](self)).
pub struct EventReader<'s, T: Send + Sync + 'static> {
    events: MappedRwLockReadGuard<'s, Events<T>>,
    from: u64,
    to: u64,
    missed: u64,
}

impl<T: Send + Sync + 'static> std::fmt::Debug for EventReader<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventReader")
            .field("event", &type_name::<T>())
            .field("len", &self.len())
            .field("missed", &self.missed)
            .finish()
    }
}

impl<T: Send + Sync + 'static> EventReader<'_, T> {
    /// The new events, oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> + '_ {
        let first = (self.from - self.events.start) as usize;
        let last = (self.to - self.events.start) as usize;
        self.events.events.range(first..last)
    }

    /// Number of new events.
    pub fn len(&self) -> usize {
        (self.to - self.from) as usize
    }

    /// `true` when there is no new event.
    pub fn is_empty(&self) -> bool {
        self.to == self.from
    }

    /// Events this reader never saw because they were dropped (older than
    /// the retention window) before it ran: 0 for a reader that runs at
    /// least once per window.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

impl<T: Send + Sync + 'static> SystemParam for EventWriter<'_, T> {
    type Item<'s> = EventWriter<'s, T>;

    fn declare(access: &mut SystemAccess) {
        access.add_event(EventAccess::of::<T>(Access::Write));
        access.add_resource(ResourceAccess::of::<Events<T>>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        let events = ctx.events::<T>(Access::Write)?;
        let buffer = events.spare.lock().pop().unwrap_or_default();
        Ok(EventWriter {
            events,
            buffer,
            system: ctx.system_index(),
        })
    }
}

impl<T: Send + Sync + 'static> SystemParam for EventReader<'_, T> {
    type Item<'s> = EventReader<'s, T>;

    fn declare(access: &mut SystemAccess) {
        access.add_event(EventAccess::of::<T>(Access::Read));
        access.add_resource(ResourceAccess::of::<Events<T>>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        let events = ctx.events::<T>(Access::Read)?;
        let (from, to, missed) = events.read_for(ctx.system_index());
        Ok(EventReader {
            events,
            from,
            to,
            missed,
        })
    }
}

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

/// The event hooks of a schedule: every event type's `begin_tick`, and per
/// wave the `flush` of the types its systems write.
#[derive(Debug, Default)]
pub(crate) struct EventHooks {
    begin: Vec<(TypeId, fn(&mut Registry, u64))>,
    waves: Vec<Vec<(TypeId, fn(&mut Registry, &[usize]))>>,
}

impl EventHooks {
    /// Hooks for `waves`, each a list of the declared accesses of its
    /// systems.
    pub(crate) fn new<'a>(waves: impl IntoIterator<Item = Vec<&'a SystemAccess>>) -> EventHooks {
        let mut hooks = EventHooks::default();
        for wave in waves {
            let mut flushes: Vec<(TypeId, fn(&mut Registry, &[usize]))> = Vec::new();
            for access in wave {
                for event in access.events() {
                    if !hooks.begin.iter().any(|&(id, _)| id == event.type_id) {
                        hooks.begin.push((event.type_id, event.begin_tick));
                    }
                    if event.access == Access::Write
                        && !flushes.iter().any(|&(id, _)| id == event.type_id)
                    {
                        flushes.push((event.type_id, event.flush));
                    }
                }
            }
            hooks.waves.push(flushes);
        }
        hooks
    }

    /// Ages every channel at the start of tick `tick`.
    pub(crate) fn begin_tick(&self, registry: &mut Registry, tick: u64) {
        for &(_, begin) in &self.begin {
            begin(registry, tick);
        }
    }

    /// Merges the writer buffers of wave `wave`, dropping those of the
    /// `failed` systems (by registration index).
    pub(crate) fn flush(&self, registry: &mut Registry, wave: usize, failed: &[usize]) {
        for &(_, flush) in &self.waves[wave] {
            flush(registry, failed);
        }
    }
}
