//! The schedule's side of events: the hooks that age every channel at the
//! start of a tick and flush each wave's channels when the wave ends.

use ecs_engine::Registry;

use super::{BeginTick, EventChannels, Flush};
use crate::access::{EventKey, SystemAccess};

/// The event hooks of a schedule: every event type's `begin_tick`, and per
/// wave the `flush` of the types its systems write or read (merging the
/// writers' buffers, committing the readers' cursors).
#[derive(Debug, Default)]
pub(crate) struct EventHooks {
    begin: Vec<(EventKey, BeginTick)>,
    waves: Vec<Vec<(EventKey, Flush)>>,
}

impl EventHooks {
    /// Hooks for `waves`, each a list of the declared accesses of its
    /// systems.
    pub(crate) fn new<'a>(waves: impl IntoIterator<Item = Vec<&'a SystemAccess>>) -> EventHooks {
        let mut hooks = EventHooks::default();
        for wave in waves {
            let mut flushes: Vec<(EventKey, Flush)> = Vec::new();
            for access in wave {
                for event in access.events() {
                    if !hooks.begin.iter().any(|&(key, _)| key == event.key) {
                        hooks.begin.push((event.key, event.begin_tick));
                    }
                    if !flushes.iter().any(|&(key, _)| key == event.key) {
                        flushes.push((event.key, event.flush));
                    }
                }
            }
            hooks.waves.push(flushes);
        }
        hooks
    }

    /// Ages every channel at the start of tick `tick`: those the systems
    /// declare, then the other channels listed in the registry
    /// ([`Events::channel`]).
    pub(crate) fn begin_tick(&self, registry: &mut Registry, tick: u64) {
        for &(key, begin) in &self.begin {
            begin(registry, key, tick);
        }
        let listed = registry
            .resource::<EventChannels>()
            .map_or(0, |c| c.0.len());
        for at in 0..listed {
            let Some(&(key, begin)) = registry
                .resource::<EventChannels>()
                .and_then(|channels| channels.0.get(at))
            else {
                break;
            };
            if !self.begin.iter().any(|&(declared, _)| declared == key) {
                begin(registry, key, tick);
            }
        }
    }

    /// Merges the writer buffers of wave `wave`, dropping those of the
    /// `failed` systems (by registration index).
    pub(crate) fn flush(&self, registry: &mut Registry, wave: usize, failed: &[usize]) {
        for &(key, flush) in &self.waves[wave] {
            flush(registry, key, failed);
        }
    }

    /// Merges the writer buffers of every event type some wave writes
    /// (after a startup system, which is in no wave), dropping those of
    /// the `failed` systems.
    pub(crate) fn flush_all(&self, registry: &mut Registry, failed: &[usize]) {
        let mut done = Vec::new();
        for &(key, flush) in self.waves.iter().flatten() {
            if !done.contains(&key) {
                done.push(key);
                flush(registry, key, failed);
            }
        }
    }
}
