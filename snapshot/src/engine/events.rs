//! Event channels in snapshots ([`Snapshots::register_events`]): an
//! [`Events<T>`] resource saved as its retained events, sequence numbers
//! and every reader's cursor ([`EventsState`]), so events sent in one
//! tick and read in the next survive a save and a load.

use std::any::{TypeId, type_name};

use ecs_engine::{Registry, ResourceTicks};
use scheduler::{EventChunk, Events, EventsState};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::document::{Bytes, Codec, DecodeError, JsonCodec, PostcardCodec};
use crate::snapshots::{ResourceCodec, StagedResource};
use crate::{SnapshotError, Snapshots};

/// [`EventsState`] in serde form; chunks as `(start, tick, events)`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsDoc<T> {
    chunks: Vec<(u64, u64, Vec<T>)>,
    start: u64,
    sent: u64,
    tick_number: u64,
    retention: u64,
    readers: Vec<usize>,
    cursors: Vec<u64>,
    listed: bool,
    missed: u64,
}

impl<T> From<EventsState<T>> for EventsDoc<T> {
    fn from(s: EventsState<T>) -> Self {
        EventsDoc {
            chunks: s
                .chunks
                .into_iter()
                .map(|c| (c.start, c.tick, c.events))
                .collect(),
            start: s.start,
            sent: s.sent,
            tick_number: s.tick_number,
            retention: s.retention,
            readers: s.readers,
            cursors: s.cursors,
            listed: s.listed,
            missed: s.missed,
        }
    }
}

impl<T> From<EventsDoc<T>> for EventsState<T> {
    fn from(d: EventsDoc<T>) -> Self {
        EventsState {
            chunks: d
                .chunks
                .into_iter()
                .map(|(start, tick, events)| EventChunk {
                    start,
                    tick,
                    events,
                })
                .collect(),
            start: d.start,
            sent: d.sent,
            tick_number: d.tick_number,
            retention: d.retention,
            readers: d.readers,
            cursors: d.cursors,
            listed: d.listed,
            missed: d.missed,
        }
    }
}

/// The channel of `T` as a registered resource.
struct EventsResource<T> {
    name: String,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<T> EventsResource<T>
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
{
    fn save<C: Codec>(registry: &Registry) -> Option<Result<C::Value, String>> {
        let events = registry.resource::<Events<T>>()?;
        let doc = EventsDoc::from(events.export_state());
        Some(C::encode(&doc).and_then(|v| C::check::<EventsDoc<T>>(&v).map(|()| v)))
    }

    fn load<C: Codec>(value: &C::Value) -> Result<StagedResource, DecodeError> {
        let doc: EventsDoc<T> = C::decode(value)?;
        let listed = doc.listed;
        let events = Events::from_state(doc.into()).map_err(|e| e.to_string())?;
        Ok(Box::new(move |registry: &mut Registry| {
            registry.insert_resource(events);
            if listed {
                Events::<T>::channel(registry);
            }
        }))
    }
}

impl<T> ResourceCodec for EventsResource<T>
where
    T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn rust_type(&self) -> TypeId {
        TypeId::of::<Events<T>>()
    }
    fn type_name(&self) -> &'static str {
        type_name::<Events<T>>()
    }
    fn save_json(&self, registry: &Registry) -> Option<Result<serde_json::Value, String>> {
        Self::save::<JsonCodec>(registry)
    }
    fn save_postcard(&self, registry: &Registry) -> Option<Result<Bytes, String>> {
        Self::save::<PostcardCodec>(registry)
    }
    fn load_json(&self, value: &serde_json::Value) -> Result<StagedResource, DecodeError> {
        Self::load::<JsonCodec>(value)
    }
    fn load_postcard(&self, value: &Bytes) -> Result<StagedResource, DecodeError> {
        Self::load::<PostcardCodec>(value)
    }
    fn remove(&self, registry: &mut Registry) {
        registry.remove_resource::<Events<T>>();
    }
    fn ticks(&self, registry: &Registry) -> Option<ResourceTicks> {
        registry.resource_ticks::<Events<T>>()
    }
    fn set_ticks(&self, registry: &mut Registry, ticks: ResourceTicks) {
        // The resource was inserted by the load just before.
        let _ = registry.set_resource_ticks::<Events<T>>(ticks);
    }
}

impl Snapshots {
    /// Registers the event channel of `T` ([`Events<T>`], a resource)
    /// under `name`: a snapshot then holds its retained events (those
    /// sent and not yet seen by every reader, within the retention
    /// window), their sequence numbers and ticks, and every reader
    /// system's cursor, so a reader resumed from a snapshot sees exactly
    /// the events it would have seen.
    ///
    /// # Errors
    ///
    /// As [`register_resource`](Self::register_resource).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use ecs_snapshot::{Format, Snapshots};
    /// use scheduler::Events;
    ///
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_events::<u32>("hits")?;
    /// let mut registry = Registry::new();
    /// Events::send_to(&mut registry, 7u32);
    /// let bytes = snapshots.save(&registry, Format::Postcard)?;
    /// let mut loaded = Registry::new();
    /// snapshots.load(&mut loaded, &bytes, Format::Postcard)?;
    /// let events = loaded.resource::<Events<u32>>().unwrap();
    /// assert_eq!(events.iter().copied().collect::<Vec<_>>(), [7]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_events<T>(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError>
    where
        T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
    {
        self.register_resource_codec(Box::new(EventsResource::<T> {
            name: name.to_owned(),
            _type: std::marker::PhantomData,
        }))
    }
}
