//! What a C engine keeps beside its registry's components, in a snapshot:
//! the bytes of its resources and the events in flight on its event
//! channels (retained events, sequence numbers, each reader's cursor).
//! While a save or a load runs they are one registry resource,
//! [`CState`], saved under the name `c_state`.

use std::alloc::Layout;
use std::sync::Arc;

use ecs_snapshot::{SnapshotError, Snapshots};
use scheduler::{EventChunk, EventsState, RawEvent, RawEventId, RawEvents};
use serde::{Deserialize, Serialize};

use super::refused;
use crate::engine::EngineState;
use crate::resource::ResourceStore;
use crate::status::Failure;

/// The C resources and event channels of an engine, as plain values.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct CState {
    /// Each resource's name and bytes, in registration order.
    resources: Vec<(String, Vec<u8>)>,
    /// Each event channel, in registration order.
    events: Vec<SavedChannel>,
}

/// One event channel's state.
#[derive(Debug, Serialize, Deserialize)]
struct SavedChannel {
    name: String,
    size: usize,
    chunks: Vec<SavedChunk>,
    start: u64,
    sent: u64,
    tick_number: u64,
    retention: u64,
    readers: Vec<usize>,
    cursors: Vec<u64>,
    missed: u64,
}

/// Events sent together, with the sequence number of the first and the
/// frame tick they were sent in.
#[derive(Debug, Serialize, Deserialize)]
struct SavedChunk {
    start: u64,
    tick: u64,
    events: Vec<Vec<u8>>,
}

impl SavedChannel {
    fn of(name: &str, layout: Layout, state: EventsState<RawEvent>) -> SavedChannel {
        SavedChannel {
            name: name.to_owned(),
            size: layout.size(),
            chunks: state
                .chunks
                .into_iter()
                .map(|chunk| SavedChunk {
                    start: chunk.start,
                    tick: chunk.tick,
                    events: chunk.events.iter().map(RawEvent::to_vec).collect(),
                })
                .collect(),
            start: state.start,
            sent: state.sent,
            tick_number: state.tick_number,
            retention: state.retention,
            readers: state.readers,
            cursors: state.cursors,
            missed: state.missed,
        }
    }

    fn state(&self) -> EventsState<RawEvent> {
        EventsState {
            chunks: self
                .chunks
                .iter()
                .map(|chunk| EventChunk {
                    start: chunk.start,
                    tick: chunk.tick,
                    events: chunk.events.iter().map(|e| RawEvent::new(e)).collect(),
                })
                .collect(),
            start: self.start,
            sent: self.sent,
            tick_number: self.tick_number,
            retention: self.retention,
            readers: self.readers.clone(),
            cursors: self.cursors.clone(),
            listed: true,
            missed: self.missed,
        }
    }
}

/// A load's refusal in C terms: the C state's own reasons without the
/// snapshot crate's wrapping (its entry name is internal).
pub(super) fn explain(error: &SnapshotError) -> String {
    match error {
        SnapshotError::Value { name, message, .. } if name == NAME => message.clone(),
        SnapshotError::MissingResource { name } if name == NAME => "the snapshot holds no C \
            resources or event channels (saved before C API 2.4?), and this engine has some"
            .to_owned(),
        other => other.to_string(),
    }
}

/// The snapshot entry's name.
const NAME: &str = "c_state";

/// What a loaded channel must match: the engine's channel's name, layout
/// and reader systems (sorted registration indices).
struct Ours {
    name: String,
    layout: Layout,
    readers: Vec<usize>,
    savable: bool,
}

/// The engine's event channels: `(id, name, layout)`, in registration
/// order.
fn channels(engine: &EngineState) -> Vec<(RawEventId, String, Layout)> {
    let registry = engine.registry();
    (0..RawEvents::count(registry))
        .filter_map(|index| {
            let id = RawEventId::from_u32(u32::try_from(index).ok()?);
            let (name, layout) = RawEvents::describe(registry, id)?;
            Some((id, name.to_owned(), layout))
        })
        .collect()
}

impl CState {
    /// A copy of `engine`'s resources and channels (its resources must all
    /// be savable: see `ResourceStore::copies`), or a refusal naming a
    /// channel not registered savable that holds events.
    pub(super) fn of(engine: &EngineState, function: &str) -> Result<CState, Failure> {
        let registry = engine.registry();
        for (id, name, _) in channels(engine) {
            let held = RawEvents::events(registry, id).map_or(0, |events| events.len());
            if held > 0
                && !engine
                    .savable_events
                    .get(id.index())
                    .copied()
                    .unwrap_or(false)
            {
                return Err(refused(
                    function,
                    format!(
                        "event channel `{name}` holds {held} event(s) but is not savable (it was \
                         registered without `savable` in ecs_event_desc): register it savable, \
                         or save when it holds none"
                    ),
                ));
            }
        }
        Ok(CState {
            resources: engine.resources.copies(),
            events: channels(engine)
                .into_iter()
                .filter_map(|(id, name, layout)| {
                    Some(SavedChannel::of(
                        &name,
                        layout,
                        RawEvents::export(registry, id)?,
                    ))
                })
                .collect(),
        })
    }

    /// Registers the C state with `snapshots`: checked when loaded against
    /// `engine`'s resources and channels (the same names, order and sizes,
    /// and consistent events), and required when the engine has either (a
    /// snapshot without them would leave them as they are beside a loaded
    /// world).
    pub(super) fn register(
        snapshots: &mut Snapshots,
        engine: &EngineState,
        function: &str,
    ) -> Result<(), Failure> {
        let store: Arc<ResourceStore> = Arc::clone(&engine.resources);
        let registry = engine.registry();
        let ours: Vec<Ours> = channels(engine)
            .into_iter()
            .map(|(id, name, layout)| {
                let mut readers = RawEvents::readers(registry, id)
                    .unwrap_or_default()
                    .to_vec();
                readers.sort_unstable();
                Ours {
                    name,
                    layout,
                    readers,
                    savable: engine
                        .savable_events
                        .get(id.index())
                        .copied()
                        .unwrap_or(false),
                }
            })
            .collect();
        let required = !store.names().is_empty() || !ours.is_empty();
        snapshots
            .register_resource_checked::<CState>(NAME, required, move |saved| {
                store.fits(&saved.resources, "snapshot")?;
                saved.fits(&ours)
            })
            .map_err(|e| refused(function, e))?;
        Ok(())
    }

    /// `Err` with the reason unless the saved channels are `ours` (names,
    /// order, event sizes, reader systems) and each one's events are
    /// consistent.
    fn fits(&self, ours: &[Ours]) -> Result<(), String> {
        let theirs: Vec<(&str, usize)> = self
            .events
            .iter()
            .map(|c| (c.name.as_str(), c.size))
            .collect();
        let mine: Vec<(&str, usize)> = ours
            .iter()
            .map(|o| (o.name.as_str(), o.layout.size()))
            .collect();
        if theirs != mine {
            let list = |l: &[(&str, usize)]| {
                let items: Vec<String> = l
                    .iter()
                    .map(|(n, s)| format!("`{n}` ({s}-byte events)"))
                    .collect();
                if items.is_empty() {
                    "none".to_owned()
                } else {
                    items.join(", ")
                }
            };
            return Err(format!(
                "the snapshot's event channels are {}, this engine's {}: register the same \
                 channels, in the same order, with the same sizes",
                list(&theirs),
                list(&mine)
            ));
        }
        for (channel, ours) in self.events.iter().zip(ours) {
            let mut readers = channel.readers.clone();
            readers.sort_unstable();
            if readers != ours.readers {
                return Err(format!(
                    "event channel `{}`: the snapshot's reader systems are {:?}, this engine's \
                     {:?} (by the order systems were added): build the engine with the same \
                     systems reading the same channels",
                    channel.name, readers, ours.readers
                ));
            }
            let held: usize = channel.chunks.iter().map(|c| c.events.len()).sum();
            if held > 0 && !ours.savable {
                return Err(format!(
                    "event channel `{}` is not savable in this engine (registered without \
                     `savable`), and the snapshot holds {held} of its events",
                    channel.name
                ));
            }
            RawEvents::check_state(ours.layout, &channel.state())
                .map_err(|e| format!("event channel `{}`: {e}", channel.name))?;
        }
        Ok(())
    }

    /// Puts the resources' bytes and the channels' events back into
    /// `engine` (checked when loaded by [`register`](Self::register)).
    pub(super) fn restore(self, engine: &mut EngineState, function: &str) -> Result<(), Failure> {
        engine.resources.restore(&self.resources);
        for ((id, _, _), channel) in channels(engine).into_iter().zip(&self.events) {
            RawEvents::import(engine.registry_mut(), id, channel.state())
                .map_err(|e| refused(function, format!("event channel `{}`: {e}", channel.name)))?;
        }
        Ok(())
    }
}
