//! Event channels registered at run time, whose values are known only by
//! their size and alignment (the C API's events): [`RawEvents`].
//!
//! Each channel is an [`Events<RawEvent>`](Events), so it follows every
//! rule of a typed channel: writers before readers, writers merged in
//! registration order, a cursor per reader system, the retention window,
//! missed events counted.

use std::alloc::Layout;
use std::collections::HashMap;

use ecs_engine::{Access, Registry};
use parking_lot::MappedRwLockReadGuard;

use super::saved::{EventsState, EventsStateError};
use super::{EventChannels, Events};
use crate::access::EventKey;
use crate::error::SystemError;
use crate::param::context::SystemContext;

/// The largest alignment a run-time event may ask for: 16 bytes (C's
/// `max_align_t` on the common 64-bit targets).
pub const RAW_EVENT_MAX_ALIGN: usize = 16;

/// Sixteen bytes aligned to 16: the unit a [`RawEvent`] is stored in.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block([u8; 16]);

/// One event of a run-time channel: a copy of its bytes, stored at an
/// address aligned to [`RAW_EVENT_MAX_ALIGN`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    blocks: Box<[Block]>,
    len: usize,
}

impl RawEvent {
    /// An event holding a copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        let mut blocks = vec![Block([0; 16]); bytes.len().div_ceil(16)].into_boxed_slice();
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(16)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        RawEvent {
            blocks,
            len: bytes.len(),
        }
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` for an event of no bytes (a marker).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte, aligned to [`RAW_EVENT_MAX_ALIGN`];
    /// [`len`](Self::len) bytes are readable there while the event lives.
    pub fn as_ptr(&self) -> *const u8 {
        self.blocks.as_ptr().cast()
    }

    /// A copy of the bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut bytes: Vec<u8> = self.blocks.iter().flat_map(|b| b.0).collect();
        bytes.truncate(self.len);
        bytes
    }
}

/// A run-time event channel's id, from [`RawEvents::register`]: an index
/// into the registry's channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RawEventId(u32);

impl RawEventId {
    /// The id of the channel with index `index` (whether a registry has
    /// it is checked where the id is used).
    pub fn from_u32(index: u32) -> Self {
        RawEventId(index)
    }

    /// The channel's index: 0 for the first registered, then 1, 2, ...
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Why a run-time event call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RawEventError {
    /// Another channel has the name.
    #[error("an event channel named `{0}` is registered already")]
    DuplicateName(String),
    /// The alignment is not a power of two, or above [`RAW_EVENT_MAX_ALIGN`].
    #[error(
        "event channel `{name}`: alignment {align} is not a power of two of at most \
         {RAW_EVENT_MAX_ALIGN}"
    )]
    Alignment {
        /// The channel's name.
        name: String,
        /// The alignment asked for.
        align: usize,
    },
    /// No channel has the id in this registry.
    #[error("no event channel has id {0} in this registry")]
    Unknown(usize),
    /// The value's byte count is not the channel's event size.
    #[error("event channel `{name}` holds events of {size} bytes, not {len}")]
    Size {
        /// The channel's name.
        name: String,
        /// The channel's event size.
        size: usize,
        /// The byte count given.
        len: usize,
    },
}

/// One run-time channel.
#[derive(Debug, Clone)]
pub(crate) struct RawChannel {
    pub(crate) name: String,
    layout: Layout,
    events: Events<RawEvent>,
}

impl RawChannel {
    fn check_size(&self, len: usize) -> Result<(), RawEventError> {
        if len == self.layout.size() {
            Ok(())
        } else {
            Err(RawEventError::Size {
                name: self.name.clone(),
                size: self.layout.size(),
                len,
            })
        }
    }
}

/// The run-time event channels of a registry: a resource, made by the
/// first [`register`](Self::register). Channels are never removed.
///
/// A system declares a channel with
/// [`SystemAccess::read_raw_events`](crate::SystemAccess::read_raw_events)
/// or [`write_raw_events`](crate::SystemAccess::write_raw_events), and
/// reaches it while it runs with [`read`](Self::read) and
/// [`send_batch`](Self::send_batch). In-memory states
/// ([`Registry::save_state`]) copy the channels with their events and
/// cursors.
///
/// # Examples
///
/// ```
/// use std::alloc::Layout;
/// use ecs_engine::Registry;
/// use scheduler::{RawEvents, Schedule, Tick};
///
/// let mut registry = Registry::new();
/// let hits = RawEvents::register(&mut registry, "hit", Layout::new::<u32>()).unwrap();
/// RawEvents::send(&mut registry, hits, &7u32.to_ne_bytes()).unwrap();
/// let channel = RawEvents::events(&registry, hits).unwrap();
/// assert_eq!((channel.sent(), channel.len()), (1, 1));
/// assert_eq!(RawEvents::lookup(&registry, "hit"), Some(hits));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RawEvents {
    channels: Vec<RawChannel>,
    /// Each channel's index, by name.
    by_name: HashMap<String, u32>,
}

/// The most emptied buffers a run-time channel keeps for its senders: a
/// sender takes one back for each run ([`RawEvents::start_sending`]); a
/// caller that hands in its own vectors cannot make the list grow past it.
const MAX_SPARE: usize = 64;

impl RawEvents {
    /// Registers a channel of events of `layout` (size in bytes, alignment
    /// at most [`RAW_EVENT_MAX_ALIGN`]) named `name`, listed so that every
    /// schedule run on `registry` ages it each tick.
    ///
    /// # Errors
    ///
    /// [`RawEventError::DuplicateName`], [`RawEventError::Alignment`].
    pub fn register(
        registry: &mut Registry,
        name: &str,
        layout: Layout,
    ) -> Result<RawEventId, RawEventError> {
        if layout.align() > RAW_EVENT_MAX_ALIGN {
            return Err(RawEventError::Alignment {
                name: name.to_owned(),
                align: layout.align(),
            });
        }
        if Self::lookup(registry, name).is_some() {
            return Err(RawEventError::DuplicateName(name.to_owned()));
        }
        if !registry.contains_resource::<RawEvents>() {
            registry.insert_resource(RawEvents::default());
            registry.register_resource_clone::<RawEvents>();
        }
        let raw = registry
            .resource_mut::<RawEvents>()
            .expect("inserted above");
        let id = RawEventId(u32::try_from(raw.channels.len()).expect("fewer than 2^32 channels"));
        raw.channels.push(RawChannel {
            name: name.to_owned(),
            layout,
            events: Events::new(),
        });
        raw.by_name.insert(name.to_owned(), id.0);
        let begin: super::BeginTick = |registry, key, tick| {
            if let Some(events) = RawEvents::channel_mut(registry, key) {
                events.begin_tick(tick);
            }
        };
        match registry.resource_mut::<EventChannels>() {
            Some(channels) => channels.list(EventKey::Raw(id), begin),
            None => {
                registry.insert_resource(EventChannels(vec![(EventKey::Raw(id), begin)]));
            }
        }
        Ok(id)
    }

    /// The number of channels `registry` has.
    pub fn count(registry: &Registry) -> usize {
        registry
            .resource::<RawEvents>()
            .map_or(0, |raw| raw.channels.len())
    }

    /// The channel named `name`, if registered.
    pub fn lookup(registry: &Registry, name: &str) -> Option<RawEventId> {
        let raw = registry.resource::<RawEvents>()?;
        raw.by_name.get(name).map(|&index| RawEventId(index))
    }

    /// Channel `id`'s name and layout.
    pub fn describe(registry: &Registry, id: RawEventId) -> Option<(&str, Layout)> {
        let channel = registry.resource::<RawEvents>()?.channels.get(id.index())?;
        Some((&channel.name, channel.layout))
    }

    /// Channel `id` (its counts: [`Events::sent`], [`Events::len`],
    /// [`Events::missed`]).
    pub fn events(registry: &Registry, id: RawEventId) -> Option<&Events<RawEvent>> {
        let channel = registry.resource::<RawEvents>()?.channels.get(id.index())?;
        Some(&channel.events)
    }

    /// Sends `bytes` on channel `id` from outside a tick, or from an
    /// exclusive system: appended at once, as [`Events::send`].
    ///
    /// # Errors
    ///
    /// [`RawEventError::Unknown`], [`RawEventError::Size`] when `bytes` is
    /// not the channel's event size.
    pub fn send(
        registry: &mut Registry,
        id: RawEventId,
        bytes: &[u8],
    ) -> Result<(), RawEventError> {
        let channel = registry
            .resource_mut::<RawEvents>()
            .and_then(|raw| raw.channels.get_mut(id.index()))
            .ok_or(RawEventError::Unknown(id.index()))?;
        channel.check_size(bytes.len())?;
        channel.events.send(RawEvent::new(bytes));
        Ok(())
    }

    /// Channel `id`'s name and event layout, and an empty buffer (one the
    /// channel emptied, when it has one) to gather this run's sends in and
    /// hand back with [`send_batch`](Self::send_batch), for a running
    /// system that declared sending on `id`.
    ///
    /// # Errors
    ///
    /// As [`send_batch`](Self::send_batch).
    pub fn start_sending(
        ctx: &SystemContext<'_>,
        id: RawEventId,
    ) -> Result<(String, Layout, Vec<RawEvent>), SystemError> {
        let channel = ctx.raw_events(id, Access::Write)?;
        let buffer = channel.events.spare.lock().pop().unwrap_or_default();
        Ok((channel.name.clone(), channel.layout, buffer))
    }

    /// Stamps the events sent on every channel from now until the next
    /// tick starts with frame tick `tick` (the last tick that ran): for a
    /// registry whose tick counter a load moved, so the retention window
    /// counts from the loaded tick.
    pub fn set_tick_number(registry: &mut Registry, tick: u64) {
        if let Some(raw) = registry.resource_mut::<RawEvents>() {
            for channel in &mut raw.channels {
                channel.events.tick_number = tick;
            }
        }
    }

    /// Hands the events a running system sent on channel `id` to the
    /// channel, merged when the system's wave ends in system registration
    /// order (as an [`EventWriter`](crate::EventWriter)'s); dropped if the
    /// system fails.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare sending
    /// on `id`; [`SystemError::Registry`] when the registry has no such
    /// channel; [`SystemError::Failed`] when an event is not the channel's
    /// size.
    pub fn send_batch(
        ctx: &SystemContext<'_>,
        id: RawEventId,
        batch: Vec<RawEvent>,
    ) -> Result<(), SystemError> {
        let channel = ctx.raw_events(id, Access::Write)?;
        if let Some(Err(refused)) = batch
            .iter()
            .map(|e| channel.check_size(e.len()))
            .find(Result::is_err)
        {
            return Err(SystemError::Failed {
                system: ctx.system_name().to_owned(),
                message: refused.to_string(),
            });
        }
        if !batch.is_empty() {
            channel
                .events
                .pending
                .lock()
                .push((ctx.events_key(), batch));
        }
        channel.events.spare.lock().truncate(MAX_SPARE);
        Ok(())
    }

    /// Calls `each` with every event of channel `id` the running system has
    /// not seen (it must have declared reading it: sending is not enough),
    /// oldest first, and moves its cursor past them (committed
    /// when its wave ends, if it succeeds: see [`Events`]). A second call
    /// in the same run sees only what was sent since the first (nothing,
    /// within a wave). Returns `(events read, events missed)`: those the
    /// retention window dropped before the system read them.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare reading
    /// `id`; [`SystemError::Registry`] when the registry has no such
    /// channel.
    pub fn read(
        ctx: &SystemContext<'_>,
        id: RawEventId,
        mut each: impl FnMut(&RawEvent),
    ) -> Result<(u64, u64), SystemError> {
        let channel = ctx.raw_events(id, Access::Read)?;
        let events = &channel.events;
        let system = ctx.events_key();
        let (mut from, to, mut missed) = events.read_for(system);
        let read_before = events
            .reads
            .lock()
            .iter()
            .filter(|&&(reader, _)| reader == system)
            .map(|&(_, end)| end)
            .max();
        if let Some(end) = read_before {
            // Counted at the first read of this run.
            missed = 0;
            from = from.max(end);
        }
        let mut count = 0;
        for event in events.range(from, to) {
            each(event);
            count += 1;
        }
        events.reads.lock().push((system, to));
        Ok((count, missed))
    }

    /// The reader systems of channel `id` (registration indices), as the
    /// schedule registered them at its build.
    pub fn readers(registry: &Registry, id: RawEventId) -> Option<&[usize]> {
        Some(&Self::events(registry, id)?.readers)
    }

    /// Channel `id`'s state as plain values: its retained events in their
    /// chunks, sequence numbers, tick, readers and their cursors (what a
    /// file snapshot saves); `None` when the registry has no channel `id`.
    pub fn export(registry: &Registry, id: RawEventId) -> Option<EventsState<RawEvent>> {
        Some(Self::events(registry, id)?.export_state())
    }

    /// `Err` unless `state` makes a consistent channel of events of
    /// `layout`'s size (what [`import`](Self::import) checks first).
    ///
    /// # Errors
    ///
    /// [`EventsStateError`] naming what is inconsistent.
    pub fn check_state(
        layout: Layout,
        state: &EventsState<RawEvent>,
    ) -> Result<(), EventsStateError> {
        let sizes = state.chunks.iter().flat_map(|c| &c.events);
        if let Some(event) = sizes.into_iter().find(|e| e.len() != layout.size()) {
            return Err(EventsStateError(format!(
                "an event of {} bytes in a channel of {}-byte events",
                event.len(),
                layout.size()
            )));
        }
        Events::from_state(state.clone()).map(drop)
    }

    /// Replaces channel `id`'s events, sequence numbers and cursors with
    /// `state`, checked first ([`check_state`](Self::check_state)); the
    /// channel keeps its name, layout and place in the aging list.
    ///
    /// # Errors
    ///
    /// [`EventsStateError`] when `state` is inconsistent or the registry
    /// has no channel `id`; the channel is unchanged then.
    pub fn import(
        registry: &mut Registry,
        id: RawEventId,
        state: EventsState<RawEvent>,
    ) -> Result<(), EventsStateError> {
        let channel = registry
            .resource_mut::<RawEvents>()
            .and_then(|raw| raw.channels.get_mut(id.index()))
            .ok_or_else(|| EventsStateError(format!("no event channel has id {}", id.index())))?;
        Self::check_state(channel.layout, &state)?;
        let mut events = Events::from_state(state)?;
        events.listed = channel.events.listed;
        channel.events = events;
        Ok(())
    }

    /// The channel of `key` in `registry`, if it is a run-time one that
    /// the registry has.
    pub(crate) fn channel_mut(
        registry: &mut Registry,
        key: EventKey,
    ) -> Option<&mut Events<RawEvent>> {
        let EventKey::Raw(id) = key else {
            return None;
        };
        let channel = registry
            .resource_mut::<RawEvents>()?
            .channels
            .get_mut(id.index())?;
        Some(&mut channel.events)
    }

    /// Channel `id` of the resource `raw`, for a system's context.
    pub(crate) fn map(
        raw: MappedRwLockReadGuard<'_, RawEvents>,
        id: RawEventId,
    ) -> Option<MappedRwLockReadGuard<'_, RawChannel>> {
        MappedRwLockReadGuard::try_map(raw, |raw| raw.channels.get(id.index())).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_keeps_its_bytes_at_an_aligned_address() {
        for len in [0, 1, 15, 16, 17, 40] {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let event = RawEvent::new(&bytes);
            assert_eq!((event.len(), event.is_empty()), (len, len == 0));
            assert_eq!(event.to_vec(), bytes);
            assert_eq!(event.as_ptr() as usize % RAW_EVENT_MAX_ALIGN, 0);
        }
    }

    #[test]
    fn registration_refuses_duplicates_and_wide_alignments_and_lists_the_channel() {
        let mut registry = Registry::new();
        let a = RawEvents::register(&mut registry, "a", Layout::new::<u64>()).unwrap();
        let b = RawEvents::register(&mut registry, "b", Layout::new::<()>()).unwrap();
        assert_eq!(
            (a.index(), b.index(), RawEvents::count(&registry)),
            (0, 1, 2)
        );
        assert_eq!(
            RawEvents::register(&mut registry, "a", Layout::new::<u8>()),
            Err(RawEventError::DuplicateName("a".into()))
        );
        let wide = Layout::from_size_align(32, 32).unwrap();
        assert!(matches!(
            RawEvents::register(&mut registry, "wide", wide),
            Err(RawEventError::Alignment { align: 32, .. })
        ));
        assert_eq!(RawEvents::count(&registry), 2);
        assert_eq!(
            RawEvents::send(&mut registry, a, &[1, 2]),
            Err(RawEventError::Size {
                name: "a".into(),
                size: 8,
                len: 2
            })
        );
        assert_eq!(
            RawEvents::send(&mut registry, RawEventId::from_u32(9), &[]),
            Err(RawEventError::Unknown(9))
        );
        let listed = registry.resource::<EventChannels>().unwrap();
        assert_eq!(listed.0.len(), 2);
    }

    /// A system sending `per_run` events on `id` each run, through a
    /// buffer from `start_sending` (`reuse`) or a fresh vector.
    struct Sender {
        name: &'static str,
        id: RawEventId,
        per_run: u32,
        reuse: bool,
    }

    impl crate::System for Sender {
        fn default_name(&self) -> std::borrow::Cow<'static, str> {
            self.name.into()
        }
        fn access(&self) -> crate::SystemAccess {
            crate::SystemAccess::new().write_raw_events(self.id, "hit")
        }
        fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
            let mut batch = if self.reuse {
                RawEvents::start_sending(ctx, self.id)?.2
            } else {
                Vec::new()
            };
            batch.extend((0..self.per_run).map(|k| RawEvent::new(&k.to_ne_bytes())));
            RawEvents::send_batch(ctx, self.id, batch)
        }
        fn state(&self) -> &dyn std::any::Any {
            &()
        }
    }

    #[test]
    fn senders_reuse_the_emptied_buffers_and_the_spare_list_stays_bounded() {
        for reuse in [true, false] {
            let mut registry = Registry::new();
            let id = RawEvents::register(&mut registry, "hit", Layout::new::<u32>()).unwrap();
            let mut builder = crate::Schedule::builder();
            for name in ["a", "b", "c"] {
                builder.add(Sender {
                    name,
                    id,
                    per_run: 4,
                    reuse,
                });
            }
            let mut schedule = builder.build(&mut registry).unwrap();
            for number in 0..500 {
                let tick = crate::Tick {
                    number,
                    ..crate::Tick::default()
                };
                schedule.run(&mut registry, tick).unwrap();
            }
            let events = RawEvents::events(&registry, id).unwrap();
            assert_eq!(events.sent(), 500 * 12);
            let spare = events.spare.lock().len();
            // Reused: about one buffer per sender per retained tick.
            let bound = if reuse { 3 * 10 } else { MAX_SPARE };
            assert!(spare <= bound, "reuse {reuse}: {spare} spare buffers");
        }
    }

    #[test]
    fn an_in_memory_state_holds_the_events_in_flight() {
        let mut registry = Registry::new();
        let id = RawEvents::register(&mut registry, "hit", Layout::new::<u32>()).unwrap();
        RawEvents::send(&mut registry, id, &1u32.to_ne_bytes()).unwrap();
        let state = registry.save_state().unwrap();
        RawEvents::send(&mut registry, id, &2u32.to_ne_bytes()).unwrap();
        assert_eq!(RawEvents::events(&registry, id).unwrap().sent(), 2);
        registry.restore_state(&state).unwrap();
        let events = RawEvents::events(&registry, id).unwrap();
        assert_eq!(events.sent(), 1);
        let values: Vec<Vec<u8>> = events.iter().map(RawEvent::to_vec).collect();
        assert_eq!(values, [1u32.to_ne_bytes().to_vec()]);
    }
}
