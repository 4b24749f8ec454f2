//! [`SnapshotError`]: everything registering, saving or loading can refuse.

use ecs_engine::{AllocatorStateError, HierarchyStateError};

/// What a snapshot entry holds: a component type, a resource or a
/// system's state value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A section of component values, one per entity.
    Component,
    /// One resource value.
    Resource,
    /// A value a system keeps (a `Local`, a system's own state), registered
    /// with [`Snapshots::register_state`](crate::Snapshots::register_state).
    State,
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EntryKind::Component => "component",
            EntryKind::Resource => "resource",
            EntryKind::State => "system state",
        })
    }
}

/// Why registering, saving or loading a snapshot failed. A failed load
/// leaves the registry untouched: every check runs before anything in it
/// changes.
///
/// Entries are numbered from 0 in the order of the snapshot's
/// `components` (or `resources`) list; items from 0 in the order of a
/// section's entities.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// [`Snapshots::register`](crate::Snapshots::register) (or a sibling)
    /// was given a name already in use for the same kind of entry.
    #[error("{kind} name `{name}` is already registered")]
    DuplicateName {
        /// Component or resource.
        kind: EntryKind,
        /// The name.
        name: String,
    },
    /// The Rust type is already registered, under another name.
    #[error("{kind} type `{type_name}` is already registered as `{name}`")]
    DuplicateType {
        /// Component or resource.
        kind: EntryKind,
        /// The Rust type's name.
        type_name: &'static str,
        /// The name it was registered under.
        name: String,
    },
    /// The snapshot was written by another version of the format (or is
    /// not in the format asked for: a JSON snapshot read as postcard
    /// gives version 123, its opening `{`, which the message points out).
    #[error(
        "snapshot format version {found}, but this build reads version {expected}{}",
        json_hint(*.found)
    )]
    Version {
        /// The version in the input.
        found: u32,
        /// [`FORMAT_VERSION`](crate::FORMAT_VERSION).
        expected: u32,
    },
    /// The readable input is not JSON of a snapshot (truncated, corrupt
    /// or of another shape); the message gives the line and column.
    #[error("snapshot (JSON): {source}")]
    Json {
        /// serde_json's error, with its line and column.
        #[from]
        source: serde_json::Error,
    },
    /// The compact input is not a postcard snapshot: too short for its
    /// version (located errors are [`SnapshotError::PostcardAt`]), or, at
    /// save, a value that does not encode.
    #[error("snapshot (postcard): {source}")]
    Postcard {
        /// postcard's error.
        #[from]
        source: postcard::Error,
    },
    /// A part of the compact input does not decode: `damaged` when the
    /// file does not match its closing checksum either (a bit flip, a
    /// cut), else the input is another program's.
    #[error(
        "snapshot (postcard): {part}, from byte {offset}, does not decode: {source}{}",
        if *damaged { " (the file does not match its checksum: it is damaged or cut short)" } else { "" }
    )]
    PostcardAt {
        /// The part's first byte.
        offset: usize,
        /// Which part: `the entities`, `component entry 2 of 19`, ...
        part: String,
        /// postcard's error.
        #[source]
        source: postcard::Error,
        /// Whether the file fails its closing checksum.
        damaged: bool,
    },
    /// A part of the input does not match its checksum: the file was
    /// damaged, or edited by hand. Checked before any value is decoded.
    #[error(
        "snapshot damaged: {part}{} does not match its checksum (the file was damaged, or edited by hand)",
        bytes.map_or(String::new(), |(start, end)| format!(" (bytes {start} to {end})"))
    )]
    Checksum {
        /// Which part: `component `Position` (entry 0)`, `resource `Run`
        /// (entry 1)`, `the entities or the hierarchy`, `the file's
        /// checksum`.
        part: String,
        /// Its bytes, `(start, end)`, in the compact format.
        bytes: Option<(usize, usize)>,
    },
    /// The compact input goes on after the snapshot's closing checksum.
    #[error(
        "snapshot (postcard): {count} bytes left after the end of the snapshot at byte {offset}"
    )]
    TrailingBytes {
        /// Where the snapshot ended.
        offset: usize,
        /// The bytes after it.
        count: usize,
    },
    /// An entry names a type nothing registered under that name.
    #[error("{kind} entry {entry}: unknown name `{name}` (register it before loading)")]
    UnknownName {
        /// Component or resource.
        kind: EntryKind,
        /// The name in the input.
        name: String,
        /// The entry's position.
        entry: usize,
    },
    /// Two entries name the same type.
    #[error("{kind} entry {entry}: `{name}` appears twice (first at entry {first})")]
    DuplicateEntry {
        /// Component or resource.
        kind: EntryKind,
        /// The name.
        name: String,
        /// The first entry with it.
        first: usize,
        /// The second.
        entry: usize,
    },
    /// An entry's values do not decode as the registered type (or, when
    /// saving, do not encode).
    #[error(
        "{kind} `{name}` (entry {entry}): its values do not fit the registered type: {message}{}",
        offset.map_or(String::new(), |at| format!(" (at byte {at} of the file)"))
    )]
    Value {
        /// Component or resource.
        kind: EntryKind,
        /// The name.
        name: String,
        /// The entry's position.
        entry: usize,
        /// The format's message (JSON: the path inside the values).
        message: String,
        /// In a compact (postcard) file, the byte of the file at which
        /// the decoder found the error: where the read that failed, or
        /// that gave an invalid value, began (the byte of a bad tag, bool
        /// or varint, the start of a string that is not UTF-8, the end of
        /// the values for values cut short); for bytes left over after the
        /// values, the first of them. `None` in JSON (the message gives
        /// the path inside the values) and at save.
        offset: Option<usize>,
    },
    /// A resource registered with
    /// [`Snapshots::register_resource_checked`](crate::Snapshots::register_resource_checked)
    /// is not in the snapshot. Nothing changed.
    #[error("resource `{name}` is not in the snapshot, and this registry needs it")]
    MissingResource {
        /// The resource's registered name.
        name: String,
    },
    /// A run-time component registered with
    /// [`Snapshots::register_runtime`](crate::Snapshots::register_runtime)
    /// is not a run-time component of the registry being saved (or, when
    /// the snapshot has values of it, of the registry being loaded into).
    /// Nothing was written, or nothing changed.
    #[error(
        "run-time component `{name}`: the registry has no run-time component of that name \
         (register it with `Registry::register_runtime` and a savable `ComponentDescriptor` \
         before saving or loading)"
    )]
    RuntimeMissing {
        /// The component's name.
        name: String,
    },
    /// A run-time component registered with
    /// [`Snapshots::register_runtime`](crate::Snapshots::register_runtime)
    /// cannot be saved or loaded by its bytes: the registry's component
    /// was not declared
    /// [`savable`](ecs_engine::ComponentDescriptor::savable), or has a
    /// destructor. Nothing was written, or nothing changed.
    #[error("run-time component `{name}`: {source}")]
    RuntimeNotSavable {
        /// The component's name.
        name: String,
        /// The registry's refusal
        /// ([`EcsError::NotSavable`](ecs_engine::EcsError::NotSavable)),
        /// with the reason.
        #[source]
        source: ecs_engine::EcsError,
    },
    /// The snapshot's values of a run-time component are not the size of
    /// the component of that name in the registry being loaded into.
    #[error(
        "run-time component `{name}` (entry {entry}): the snapshot's values are {found} bytes \
         each, but the registry's component is {expected} bytes"
    )]
    RuntimeSize {
        /// The component's name.
        name: String,
        /// The entry's position.
        entry: usize,
        /// The size of the registry's component.
        expected: usize,
        /// The size of the snapshot's values.
        found: usize,
    },
    /// A component entry has not one value per entity.
    #[error("component `{name}` (entry {entry}): {values} values for {entities} entities")]
    CountMismatch {
        /// The component's name.
        name: String,
        /// The entry's position.
        entry: usize,
        /// Values given.
        values: usize,
        /// Entities given.
        entities: usize,
    },
    /// A component entry names a slot that holds no live entity in the
    /// snapshot's allocator state.
    #[error("component `{name}` (entry {entry}), item {item}: slot {index} holds no live entity")]
    DeadEntity {
        /// The component's name.
        name: String,
        /// The entry's position.
        entry: usize,
        /// The item's position in the entry.
        item: usize,
        /// The slot index.
        index: u32,
    },
    /// A component entry names the same entity twice.
    #[error("component `{name}` (entry {entry}), item {item}: slot {index} is listed twice")]
    DuplicateEntity {
        /// The component's name.
        name: String,
        /// The entry's position.
        entry: usize,
        /// The item's position in the entry.
        item: usize,
        /// The slot index.
        index: u32,
    },
    /// A list of slots is longer than the snapshot's slot count (checked
    /// before it is expanded, so a corrupt run length cannot make the
    /// load allocate more than the slots).
    #[error("snapshot {list}: {count} slots listed, but the snapshot has {slots} slots")]
    ListTooLong {
        /// Which list: `entities.alive`, `entities.reserved`,
        /// `entities.free`, or `component `NAME` (entry N)`.
        list: String,
        /// Slots listed.
        count: u64,
        /// The snapshot's slot count.
        slots: usize,
    },
    /// The snapshot holds parent/child links, but the hierarchy is not
    /// registered ([`Snapshots::register_hierarchy`](crate::Snapshots::register_hierarchy)).
    #[error(
        "the snapshot holds a hierarchy (ChildOf, Children): call register_hierarchy before loading"
    )]
    HierarchyNotRegistered,
    /// The parent/child links are inconsistent.
    #[error("snapshot {source}")]
    Hierarchy {
        /// What is wrong, naming the entity.
        #[from]
        source: HierarchyStateError,
    },
    /// The entity allocator's state is inconsistent.
    #[error("snapshot entities: {source}")]
    Allocator {
        /// What is wrong, naming the slot.
        #[from]
        source: AllocatorStateError,
    },
    /// [`Snapshots::save_engine`](crate::Snapshots::save_engine): a system
    /// keeps a value of a type no codec was registered for (a closure's
    /// captures are such a value); nothing was written.
    #[error(
        "cannot save system `{system}`: it keeps a `{state}`, which has no snapshot codec; \
         register it with `register_state::<T>(name)` (a closure's captures cannot be saved: \
         keep that state in a `Local` or a resource)"
    )]
    UnsavedState {
        /// The system.
        system: String,
        /// The value's type name (the closure's, for captures).
        state: String,
    },
    /// [`Snapshots::load_engine`](crate::Snapshots::load_engine): the
    /// snapshot holds a registry only (written by
    /// [`save`](crate::Snapshots::save)).
    #[error(
        "the snapshot holds a registry, not an engine: load it with `load`, or write it with `save_engine`"
    )]
    NotAnEngine,
    /// [`Snapshots::load_engine`](crate::Snapshots::load_engine): the
    /// engine's part does not fit the snapshot's registry or this
    /// engine's types.
    #[error("snapshot engine state, {part}: {message}")]
    EngineState {
        /// The part (the change ticks of a component, a system...).
        part: String,
        /// What is wrong.
        message: String,
    },
    /// [`Snapshots::load_engine`](crate::Snapshots::load_engine): the
    /// saved systems are not this engine's.
    #[error("snapshot engine state: {source}")]
    Systems {
        /// The schedule's refusal.
        #[from]
        source: scheduler::SystemStateError,
    },
    /// [`Snapshots::load_engine`](crate::Snapshots::load_engine): the
    /// saved command reserves do not fit this engine or the loaded
    /// entities.
    #[error("snapshot engine state: {source}")]
    Reserves {
        /// The schedule's refusal.
        #[from]
        source: scheduler::RestoreReservesError,
    },
}

/// A hint for a postcard "version" that is JSON's opening brace.
fn json_hint(found: u32) -> &'static str {
    if found == u32::from(b'{') {
        " (the input starts with `{`: is it a JSON snapshot read as postcard?)"
    } else {
        ""
    }
}
