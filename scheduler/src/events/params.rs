//! The event parameters of a system: [`EventWriter`] and [`EventReader`],
//! over a channel ([`Events`]), whose fields they use directly.

use std::any::type_name;

use ecs_engine::Access;
use parking_lot::MappedRwLockReadGuard;

use super::{EventIter, Events};
use crate::access::{EventAccess, ResourceAccess, SystemAccess};
use crate::error::SystemError;
use crate::param::SystemParam;
use crate::param::context::SystemContext;

/// A system parameter: sends events of type `T`. Declares a write of the
/// event type (see [`Events`]).
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
/// [`Events`]).
pub struct EventReader<'s, T: Send + Sync + 'static> {
    events: MappedRwLockReadGuard<'s, Events<T>>,
    from: u64,
    to: u64,
    missed: u64,
    system: usize,
}

impl<T: Send + Sync + 'static> Drop for EventReader<'_, T> {
    /// Hands the read back, to be committed when the wave ends if the
    /// system succeeds (see [`Events`]).
    fn drop(&mut self) {
        self.events.reads.lock().push((self.system, self.to));
    }
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
    /// The new events, oldest first, with an exact size. A `for` loop over
    /// it runs one slice at a time and is about as fast as over a `Vec`
    /// (see `BENCHMARKS.md`); adapters that iterate internally (`sum`,
    /// `fold`, `for_each`) run a plain loop per slice.
    pub fn iter(&self) -> EventIter<'_, T> {
        self.events.range(self.from, self.to)
    }

    /// The new events, oldest first: bevy's name for [`iter`](Self::iter),
    /// the same iterator.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{EventReader, EventWriter, ResMut, Schedule, Tick};
    ///
    /// struct Hit(u32);
    /// fn shoot(mut hits: EventWriter<Hit>) {
    ///     hits.send(Hit(4));
    /// }
    /// fn score(hits: EventReader<Hit>, mut total: ResMut<u32>) {
    ///     for hit in hits.read() {
    ///         *total += hit.0;
    ///     }
    /// }
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_u32);
    /// let mut builder = Schedule::builder();
    /// builder.add(shoot);
    /// builder.add(score);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<u32>(), Some(&4));
    /// ```
    pub fn read(&self) -> EventIter<'_, T> {
        self.iter()
    }

    /// The new events as slices, oldest first (one per writer run or per
    /// tick of direct sends): for the tightest loops, a plain loop over
    /// each slice, as fast as over a `Vec`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{EventReader, Events, ResMut, Schedule, Tick};
    ///
    /// fn total(hits: EventReader<u32>, mut sum: ResMut<u64>) {
    ///     for chunk in hits.chunks() {
    ///         for &hit in chunk {
    ///             *sum += u64::from(hit);
    ///         }
    ///     }
    /// }
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_u64);
    /// let mut builder = Schedule::builder();
    /// builder.add(total);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// Events::send_to(&mut registry, 2_u32);
    /// Events::send_to(&mut registry, 3_u32);
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<u64>(), Some(&5));
    /// ```
    pub fn chunks(&self) -> impl Iterator<Item = &[T]> + '_ {
        let (from, to) = (self.from, self.to);
        self.events
            .chunks
            .iter()
            .filter(move |chunk| chunk.end() > from && chunk.start < to)
            .map(move |chunk| {
                let first = from.saturating_sub(chunk.start) as usize;
                let last = (to.min(chunk.end()) - chunk.start) as usize;
                &chunk.events[first..last]
            })
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
            system: ctx.events_key(),
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
        let system = ctx.events_key();
        let (from, to, missed) = events.read_for(system);
        Ok(EventReader {
            events,
            from,
            to,
            missed,
            system,
        })
    }
}
