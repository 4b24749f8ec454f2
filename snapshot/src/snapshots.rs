//! [`Snapshots`]: the registered types, and save and load.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;

use ecs_engine::{
    Component, Disabled, Entity, EntityAllocator, HierarchyState, PoolTicks, PoolTicksError,
    Registry, SparseSet,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::document::{
    Codec, ComponentEntry, DecodeError, Document, FORMAT_VERSION, IndexList, JsonCodec,
    PostcardCodec, ResourceEntry,
};
use crate::engine::states::{self, StateCodec};
use crate::{EntryKind, SnapshotError};

mod resource;
mod runtime;
mod stage;
mod wire;

use resource::TypedResource;
pub(crate) use resource::{ResourceCodec, StagedResource};
pub(crate) use wire::Wire;

/// The two formats, both written through serde.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON, pretty-printed: readable and diffable; floats must be finite
    /// (JSON has no NaN or infinity).
    Json,
    /// postcard: compact binary (varints, floats as their 4 or 8 bytes).
    Postcard,
}

/// A component entry being loaded, checked and waiting for the swap.
pub(crate) trait Staged {
    /// Inserts the values; cannot fail (every entity was checked alive in
    /// the allocator that is now the registry's).
    fn apply(self: Box<Self>, registry: &mut Registry);
}

struct StagedComponents<T>(Vec<(Entity, T)>);

impl<T: Component> Staged for StagedComponents<T> {
    fn apply(self: Box<Self>, registry: &mut Registry) {
        let (_, result) = registry.insert_many(&mut self.0.into_iter());
        if result.is_err() {
            unreachable!("every entity of a staged entry was checked alive before the swap");
        }
    }
}

/// A registered component type: its save and load, for each codec.
pub(crate) trait ComponentCodec: Send + Sync {
    fn name(&self) -> &str;
    /// The Rust type; `None` for a run-time component (named only).
    fn rust_type(&self) -> Option<TypeId>;
    fn type_name(&self) -> &'static str;
    /// Refuses, before anything is saved, a registry this codec cannot
    /// save (a run-time component it lacks, or that is not savable).
    fn check_save(&self, registry: &Registry) -> Result<(), SnapshotError> {
        let _ = registry;
        Ok(())
    }
    /// The slots of the pool's entities and the encoded values, in dense
    /// order; `None` when the registry has no such pool or it is empty.
    fn save_json(
        &self,
        registry: &Registry,
    ) -> Option<Result<(IndexList, serde_json::Value), String>>;
    fn save_postcard(
        &self,
        registry: &Registry,
    ) -> Option<Result<(IndexList, crate::document::Bytes), String>>;
    /// Decodes an entry's values for `target`, the registry the load
    /// will write.
    fn load_json(
        &self,
        target: &Registry,
        entities: Vec<Entity>,
        values: &serde_json::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure>;
    fn load_postcard(
        &self,
        target: &Registry,
        entities: Vec<Entity>,
        values: &crate::document::Bytes,
    ) -> Result<Box<dyn Staged>, LoadFailure>;
    /// The pool's change ticks, when `T` is tracked (never for a
    /// run-time component).
    fn export_ticks(&self, registry: &Registry) -> Option<PoolTicks>;
    /// Puts saved change ticks back (see [`Registry::import_pool_ticks`]).
    fn import_ticks(&self, registry: &mut Registry, ticks: PoolTicks)
    -> Result<(), PoolTicksError>;
}

/// Why an entry's values did not load.
pub(crate) enum LoadFailure {
    Decode(DecodeError),
    Count {
        values: usize,
        entities: usize,
    },
    /// Refused as a whole: a run-time component the target lacks.
    Refused(Box<SnapshotError>),
    /// A run-time component's values are `found` bytes each, the
    /// target's component `expected`.
    Size {
        expected: usize,
        found: usize,
    },
}

/// A component type stored as `S`, converted by two functions.
struct Typed<T, S> {
    name: String,
    to: fn(&T) -> S,
    from: fn(S) -> T,
}

impl<T: Component, S: Serialize + DeserializeOwned + 'static> Typed<T, S> {
    fn save<C: Codec>(&self, registry: &Registry) -> Option<Result<(IndexList, C::Value), String>> {
        let pool = registry.pool::<T>()?;
        if pool.is_empty() {
            return None;
        }
        let slots = IndexList::from_indices(pool.entities().iter().map(|e| e.index()));
        let values = if TypeId::of::<T>() == TypeId::of::<S>() {
            // Stored as itself: encode the dense slice without a copy.
            let any: &dyn Any = pool;
            let same = any
                .downcast_ref::<SparseSet<S>>()
                .expect("T and S are the same type");
            C::encode(same.components())
        } else {
            let converted: Vec<S> = pool.components().iter().map(self.to).collect();
            C::encode(&converted)
        };
        let values = values.and_then(|v| C::check::<Vec<S>>(&v).map(|()| v));
        Some(values.map(|v| (slots, v)))
    }

    fn load<C: Codec>(
        &self,
        entities: Vec<Entity>,
        values: &C::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        let values: Vec<S> = C::decode(values).map_err(LoadFailure::Decode)?;
        if values.len() != entities.len() {
            return Err(LoadFailure::Count {
                values: values.len(),
                entities: entities.len(),
            });
        }
        let from = self.from;
        let items = entities.into_iter().zip(values.into_iter().map(from));
        Ok(Box::new(StagedComponents::<T>(items.collect())))
    }
}

impl<T: Component, S: Serialize + DeserializeOwned + 'static> ComponentCodec for Typed<T, S> {
    fn name(&self) -> &str {
        &self.name
    }
    fn rust_type(&self) -> Option<TypeId> {
        Some(TypeId::of::<T>())
    }
    fn type_name(&self) -> &'static str {
        type_name::<T>()
    }
    fn save_json(
        &self,
        registry: &Registry,
    ) -> Option<Result<(IndexList, serde_json::Value), String>> {
        self.save::<JsonCodec>(registry)
    }
    fn save_postcard(
        &self,
        registry: &Registry,
    ) -> Option<Result<(IndexList, crate::document::Bytes), String>> {
        self.save::<PostcardCodec>(registry)
    }
    fn load_json(
        &self,
        _: &Registry,
        entities: Vec<Entity>,
        values: &serde_json::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        self.load::<JsonCodec>(entities, values)
    }
    fn load_postcard(
        &self,
        _: &Registry,
        entities: Vec<Entity>,
        values: &crate::document::Bytes,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        self.load::<PostcardCodec>(entities, values)
    }
    fn export_ticks(&self, registry: &Registry) -> Option<PoolTicks> {
        registry.export_pool_ticks::<T>()
    }
    fn import_ticks(
        &self,
        registry: &mut Registry,
        ticks: PoolTicks,
    ) -> Result<(), PoolTicksError> {
        registry.import_pool_ticks::<T>(ticks)
    }
}

/// The types a snapshot holds, each under a stable name, and the save and
/// load of a [`Registry`] in either [`Format`].
///
/// What a snapshot holds:
///
/// - the entity allocator's exact state ([`ecs_engine::AllocatorState`]):
///   every slot's generation, the live and reserved slots, the free queue
///   in order, the limits, so handles, generations and the next spawn's
///   handle come back exactly;
/// - every registered component type's pool, in its dense order (so views
///   visit entities in the same order after a load), run-time components
///   ([`register_runtime`](Self::register_runtime)) by their bytes;
/// - every registered resource present in the registry.
///
/// Components and resources of unregistered types are not saved. Loading
/// replaces every entity (unregistered components are dropped with
/// them), inserts the saved components, replaces the registered resources
/// (removing those the snapshot does not have) and keeps unregistered
/// resources as they are.
///
/// The [`Disabled`] marker round-trips once [`register_disabled`](Self::register_disabled)
/// is called, the hierarchy's `ChildOf` and `Children` once
/// [`register_hierarchy`](Self::register_hierarchy) is.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use ecs_snapshot::{Format, Snapshots};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
/// struct Position { x: f32, y: f32 }
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// struct Score(u32);
///
/// let mut snapshots = Snapshots::new();
/// snapshots.register::<Position>("Position")?.register_resource::<Score>("Score")?;
///
/// let mut registry = Registry::new();
/// let a = registry.spawn((Position { x: 1.0, y: 2.0 },));
/// let b = registry.spawn((Position { x: 3.0, y: 4.0 },));
/// registry.despawn(a)?;
/// registry.insert_resource(Score(7));
///
/// let bytes = snapshots.save(&registry, Format::Postcard)?;
/// let mut loaded = Registry::new();
/// snapshots.load(&mut loaded, &bytes, Format::Postcard)?;
/// assert_eq!(loaded.get::<Position>(b), Some(&Position { x: 3.0, y: 4.0 }));
/// assert!(!loaded.is_alive(a));
/// assert_eq!(loaded.resource::<Score>(), Some(&Score(7)));
/// // The next spawn reuses the same slot with the same generation.
/// assert_eq!(loaded.spawn(()), registry.spawn(()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Snapshots {
    pub(crate) components: Vec<Box<dyn ComponentCodec>>,
    pub(crate) component_names: HashMap<String, usize>,
    pub(crate) resources: Vec<Box<dyn ResourceCodec>>,
    pub(crate) resource_names: HashMap<String, usize>,
    pub(crate) hierarchy: bool,
    /// The state types of engine snapshots ([`register_state`](Self::register_state)).
    pub(crate) states: Vec<Box<dyn StateCodec>>,
}

impl Default for Snapshots {
    fn default() -> Self {
        Snapshots {
            components: Vec::new(),
            component_names: HashMap::new(),
            resources: Vec::new(),
            resource_names: HashMap::new(),
            hierarchy: false,
            states: states::built_in(),
        }
    }
}

impl std::fmt::Debug for Snapshots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshots")
            .field(
                "components",
                &self.components.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .field(
                "resources",
                &self.resources.iter().map(|r| r.name()).collect::<Vec<_>>(),
            )
            .field("hierarchy", &self.hierarchy)
            .field(
                "states",
                &self.states.iter().map(|s| s.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Snapshots {
    /// No registered type (but the state types every schedule keeps, see
    /// [`register_state`](Self::register_state)): a snapshot then holds
    /// only the entities.
    pub fn new() -> Snapshots {
        Snapshots::default()
    }

    /// Registers component type `T` under `name`, stored as itself.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::DuplicateName`] when a component is already
    /// registered under `name`, [`SnapshotError::DuplicateType`] when `T`
    /// is already registered; nothing changes then.
    pub fn register<T>(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError>
    where
        T: Component + Serialize + DeserializeOwned,
    {
        // Stored as itself: `Typed::save` encodes the pool's slice and
        // never calls `to`.
        self.register_component(Typed::<T, T> {
            name: name.to_owned(),
            to: |_| unreachable!("a type stored as itself is encoded from the pool's slice"),
            from: |value| value,
        })
    }

    /// Registers component type `T` under `name`, stored as `S`: `to`
    /// converts a value for saving, `from` back when loading. For types
    /// that do not implement serde's traits (a foreign type, a marker).
    ///
    /// # Errors
    ///
    /// As [`register`](Self::register).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_snapshot::Snapshots;
    ///
    /// // A type without serde's traits, stored as its inner value.
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_with::<std::num::Wrapping<u8>, u8>("Wrapping", |w| w.0, std::num::Wrapping)?;
    /// # Ok::<(), ecs_snapshot::SnapshotError>(())
    /// ```
    pub fn register_with<T, S>(
        &mut self,
        name: &str,
        to: fn(&T) -> S,
        from: fn(S) -> T,
    ) -> Result<&mut Snapshots, SnapshotError>
    where
        T: Component,
        S: Serialize + DeserializeOwned + 'static,
    {
        self.register_component(Typed::<T, S> {
            name: name.to_owned(),
            to,
            from,
        })
    }

    /// Registers the [`Disabled`] marker under the name `"Disabled"`, so
    /// disabled entities stay disabled through a save and load.
    ///
    /// # Errors
    ///
    /// As [`register`](Self::register).
    pub fn register_disabled(&mut self) -> Result<&mut Snapshots, SnapshotError> {
        self.register_with::<Disabled, ()>("Disabled", |_| (), |()| Disabled)
    }

    /// Saves and loads the hierarchy: every [`ChildOf`](ecs_engine::ChildOf)
    /// link and [`Children`](ecs_engine::Children) list, in their pools'
    /// order, so parents, children, child order and views over either type
    /// come back exactly ([`Registry::export_hierarchy`]). Calling it again
    /// changes nothing.
    pub fn register_hierarchy(&mut self) -> &mut Snapshots {
        self.hierarchy = true;
        self
    }

    fn register_component(
        &mut self,
        codec: impl ComponentCodec + 'static,
    ) -> Result<&mut Snapshots, SnapshotError> {
        check_unique(
            EntryKind::Component,
            self.components.iter().map(|c| (c.name(), c.rust_type())),
            (codec.name(), codec.rust_type(), codec.type_name()),
        )?;
        self.component_names
            .insert(codec.name().to_owned(), self.components.len());
        self.components.push(Box::new(codec));
        Ok(self)
    }

    /// Registers resource type `R` under `name`.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::DuplicateName`] when a resource is already
    /// registered under `name`, [`SnapshotError::DuplicateType`] when `R`
    /// is already registered; nothing changes then.
    pub fn register_resource<R>(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError>
    where
        R: Send + Sync + Serialize + DeserializeOwned + 'static,
    {
        self.register_resource_codec(Box::new(TypedResource::<R, R> {
            name: name.to_owned(),
            to: |_| unreachable!("a type stored as itself is encoded in place"),
            from: |value| value,
            check: None,
            required: false,
        }))
    }

    /// Registers resource type `R` under `name`, checked by `check` when
    /// loaded and, when `required`, needed in every snapshot loaded: a
    /// load fails, changing nothing, when `check` refuses the value (its
    /// message in [`SnapshotError::Value`]) or a required resource is
    /// not in the snapshot ([`SnapshotError::MissingResource`]). For a resource
    /// that must agree with the registry it is loaded into (the C API's
    /// resources, whose names and sizes are the engine's).
    ///
    /// # Errors
    ///
    /// As [`register_resource`](Self::register_resource).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use ecs_snapshot::{Format, SnapshotError, Snapshots};
    ///
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_resource_checked::<u32>("small", true, |v| {
    ///     if *v < 10 { Ok(()) } else { Err(format!("{v} is not below 10")) }
    /// })?;
    /// let mut registry = Registry::new();
    /// registry.insert_resource(12u32);
    /// let bytes = snapshots.save(&registry, Format::Json)?;
    /// let mut other = Registry::new();
    /// assert!(matches!(snapshots.load(&mut other, &bytes, Format::Json), Err(SnapshotError::Value { .. })));
    /// let empty = snapshots.save(&Registry::new(), Format::Json)?;
    /// assert!(matches!(
    ///     snapshots.load(&mut other, &empty, Format::Json),
    ///     Err(SnapshotError::MissingResource { .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_resource_checked<R>(
        &mut self,
        name: &str,
        required: bool,
        check: impl Fn(&R) -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<&mut Snapshots, SnapshotError>
    where
        R: Send + Sync + Serialize + DeserializeOwned + 'static,
    {
        self.register_resource_codec(Box::new(TypedResource::<R, R> {
            name: name.to_owned(),
            to: |_| unreachable!("a type stored as itself is encoded in place"),
            from: |value| value,
            check: Some(Box::new(check)),
            required,
        }))
    }

    /// Registers resource type `R` under `name`, stored as `S`: `to`
    /// converts the value for saving, `from` back when loading. For types
    /// that do not implement serde's traits (a foreign type).
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
    /// use std::num::Wrapping;
    ///
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_resource_with::<Wrapping<u8>, u8>("counter", |w| w.0, Wrapping)?;
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Wrapping(250u8));
    /// let bytes = snapshots.save(&registry, Format::Json)?;
    /// let mut loaded = Registry::new();
    /// snapshots.load(&mut loaded, &bytes, Format::Json)?;
    /// assert_eq!(loaded.resource::<Wrapping<u8>>(), Some(&Wrapping(250)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_resource_with<R, S>(
        &mut self,
        name: &str,
        to: fn(&R) -> S,
        from: fn(S) -> R,
    ) -> Result<&mut Snapshots, SnapshotError>
    where
        R: Send + Sync + 'static,
        S: Serialize + DeserializeOwned + 'static,
    {
        self.register_resource_codec(Box::new(TypedResource::<R, S> {
            name: name.to_owned(),
            to,
            from,
            check: None,
            required: false,
        }))
    }

    pub(crate) fn register_resource_codec(
        &mut self,
        codec: Box<dyn ResourceCodec>,
    ) -> Result<&mut Snapshots, SnapshotError> {
        check_unique(
            EntryKind::Resource,
            self.resources
                .iter()
                .map(|r| (r.name(), Some(r.rust_type()))),
            (codec.name(), Some(codec.rust_type()), codec.type_name()),
        )?;
        self.resource_names
            .insert(codec.name().to_owned(), self.resources.len());
        self.resources.push(codec);
        Ok(self)
    }

    /// The registered component names, in registration order.
    pub fn component_names(&self) -> impl Iterator<Item = &str> {
        self.components.iter().map(|c| c.name())
    }

    /// The registered resource names, in registration order.
    pub fn resource_names(&self) -> impl Iterator<Item = &str> {
        self.resources.iter().map(|r| r.name())
    }

    /// Saves `registry` in `format`: the allocator's state, every
    /// registered component's non-empty pool (in registration order) and
    /// every registered resource present.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Value`] when a value does not encode (in JSON: a
    /// map with non-string keys, for example) or, in JSON, does not read
    /// back (a NaN or infinite float, which JSON writes as `null`);
    /// [`SnapshotError::Json`] or [`SnapshotError::Postcard`] when the
    /// document does not; [`SnapshotError::RuntimeMissing`] or
    /// [`SnapshotError::RuntimeNotSavable`] for a registered run-time
    /// component the registry lacks or cannot save by its bytes.
    pub fn save(&self, registry: &Registry, format: Format) -> Result<Vec<u8>, SnapshotError> {
        match format {
            Format::Json => JsonCodec::write(self.document::<JsonCodec>(registry)?),
            Format::Postcard => PostcardCodec::write(self.document::<PostcardCodec>(registry)?),
        }
    }

    /// The document of `registry` (no engine section).
    pub(crate) fn document<C: Wire>(
        &self,
        registry: &Registry,
    ) -> Result<Document<C::Value>, SnapshotError> {
        for codec in &self.components {
            codec.check_save(registry)?;
        }
        let mut components = Vec::new();
        for codec in &self.components {
            if let Some(saved) = C::save_component(codec.as_ref(), registry) {
                let (slots, values) = saved.map_err(|message| SnapshotError::Value {
                    kind: EntryKind::Component,
                    name: codec.name().to_owned(),
                    entry: components.len(),
                    message,
                    offset: None,
                })?;
                components.push(ComponentEntry {
                    name: codec.name().to_owned(),
                    entities: slots,
                    values,
                    checksum: 0,
                    values_at: None,
                });
            }
        }
        let mut resources = Vec::new();
        for codec in &self.resources {
            if let Some(saved) = C::save_resource(codec.as_ref(), registry) {
                let value = saved.map_err(|message| SnapshotError::Value {
                    kind: EntryKind::Resource,
                    name: codec.name().to_owned(),
                    entry: resources.len(),
                    message,
                    offset: None,
                })?;
                resources.push(ResourceEntry {
                    name: codec.name().to_owned(),
                    value,
                    checksum: 0,
                    value_at: None,
                });
            }
        }
        let hierarchy = Some(registry.export_hierarchy())
            .filter(|h| self.hierarchy && !h.links.is_empty())
            .map(Into::into);
        Ok(Document {
            version: FORMAT_VERSION,
            checksum: 0,
            entities: registry.entities().export_state().into(),
            components,
            resources,
            hierarchy,
            engine: None,
        })
    }

    /// Loads a snapshot saved by [`save`](Self::save) in `format` into
    /// `registry`: every entity is replaced by the snapshot's (same
    /// handles, same free queue), the saved components are inserted in
    /// their saved order, the registered resources replaced (those absent
    /// from the snapshot removed); unregistered resources stay.
    ///
    /// Everything is decoded and checked before the registry changes: on
    /// any error it is exactly as before.
    ///
    /// Loading into the registry of a running schedule or engine is safe:
    /// the load goes through
    /// [`Registry::replace_entities`](ecs_engine::Registry::replace_entities),
    /// and every command buffer drops the handles it reserved before and
    /// reserves anew before its next spawn (`CommandBuffer::resync`), so
    /// no spawn returns, and no later command writes onto, a loaded
    /// entity. To resume the saved run with its own spawn ids, restore the
    /// saved reserves too (`Engine::restore_command_reserves`).
    ///
    /// # Errors
    ///
    /// - [`SnapshotError::Version`]: the snapshot's format version is not
    ///   [`FORMAT_VERSION`](crate::FORMAT_VERSION);
    /// - [`SnapshotError::Json`] (with line and column, an unknown key
    ///   included) or [`SnapshotError::Postcard`],
    ///   [`SnapshotError::PostcardAt`] (with the part and its offset),
    ///   [`SnapshotError::TrailingBytes`]: truncated or corrupt input;
    /// - [`SnapshotError::Checksum`]: a part does not match its checksum
    ///   (damaged, or edited by hand), checked before any value is
    ///   decoded;
    /// - [`SnapshotError::UnknownName`], [`SnapshotError::DuplicateEntry`]:
    ///   an entry names a type not registered, or twice;
    /// - [`SnapshotError::Value`] (in postcard, with the byte of the file
    ///   where decoding failed), [`SnapshotError::CountMismatch`]: an
    ///   entry's values do not decode as its type, or not one per entity;
    /// - [`SnapshotError::RuntimeMissing`], [`SnapshotError::RuntimeNotSavable`],
    ///   [`SnapshotError::RuntimeSize`]: `registry` has no savable
    ///   run-time component of an entry's name and size;
    /// - [`SnapshotError::DeadEntity`], [`SnapshotError::DuplicateEntity`],
    ///   [`SnapshotError::ListTooLong`], [`SnapshotError::Allocator`]: the
    ///   entities are inconsistent;
    /// - [`SnapshotError::HierarchyNotRegistered`],
    ///   [`SnapshotError::Hierarchy`]: the snapshot has parent/child links
    ///   but the hierarchy is not registered, or they are inconsistent.
    pub fn load(
        &self,
        registry: &mut Registry,
        bytes: &[u8],
        format: Format,
    ) -> Result<(), SnapshotError> {
        let staged = match format {
            Format::Json => self.stage::<JsonCodec>(JsonCodec::read(bytes)?, registry)?,
            Format::Postcard => {
                self.stage::<PostcardCodec>(PostcardCodec::read(bytes)?, registry)?
            }
        };
        staged.apply(self, registry);
        Ok(())
    }
}

impl Loaded {
    /// The swap: nothing here can fail.
    pub(crate) fn apply(self, snapshots: &Snapshots, registry: &mut Registry) {
        let Loaded {
            allocator,
            components,
            resources,
            absent,
            hierarchy,
        } = self;
        registry.replace_entities(allocator);
        for entry in components {
            entry.apply(registry);
        }
        if let Some(hierarchy) = hierarchy {
            registry
                .restore_hierarchy(hierarchy)
                .expect("the hierarchy was checked against the loaded entities");
        }
        for resource in resources {
            resource(registry);
        }
        for index in absent {
            snapshots.resources[index].remove(registry);
        }
    }
}

/// Everything decoded and checked, ready for the swap.
pub(crate) struct Loaded {
    pub(crate) allocator: EntityAllocator,
    components: Vec<Box<dyn Staged>>,
    resources: Vec<StagedResource>,
    /// Registered resources the snapshot does not have.
    absent: Vec<usize>,
    /// The checked links, when the snapshot has them.
    hierarchy: Option<HierarchyState>,
}

/// Refuses a registration (`name`, type, type name) whose name or type is
/// registered already (`registered`: names and types, in order).
pub(crate) fn check_unique<'a>(
    kind: EntryKind,
    registered: impl Iterator<Item = (&'a str, Option<TypeId>)>,
    (name, rust_type, type_name): (&str, Option<TypeId>, &'static str),
) -> Result<(), SnapshotError> {
    let registered: Vec<(&str, Option<TypeId>)> = registered.collect();
    if registered.iter().any(|&(n, _)| n == name) {
        return Err(SnapshotError::DuplicateName {
            kind,
            name: name.to_owned(),
        });
    }
    match registered
        .iter()
        .find(|&&(_, t)| rust_type.is_some() && t == rust_type)
    {
        Some(&(other, _)) => Err(SnapshotError::DuplicateType {
            kind,
            type_name,
            name: other.to_owned(),
        }),
        None => Ok(()),
    }
}

pub(crate) fn check_version(found: u32) -> Result<(), SnapshotError> {
    if found != FORMAT_VERSION {
        return Err(SnapshotError::Version {
            found,
            expected: FORMAT_VERSION,
        });
    }
    Ok(())
}
