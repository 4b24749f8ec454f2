//! What a system touches: component types, resources and event types
//! ([`EventAccess`]), each read or written, and whether it records
//! commands.

use std::any::{TypeId, type_name};
use std::borrow::Cow;

use ecs_engine::{Access, Component, ComponentAccess, ComponentId, ComponentKey, Registry};

use crate::events::{BeginTick, Events, Flush, RawEventId, RawEvents};

mod disjoint;

use disjoint::Borrow;

/// One resource type a system reads or writes.
#[derive(Clone, Copy)]
pub struct ResourceAccess {
    /// The resource's Rust type.
    pub type_id: TypeId,
    /// Its type name.
    pub name: &'static str,
    /// Read or write.
    pub access: Access,
    /// Whether a registry holds the resource.
    present: fn(&Registry) -> bool,
    /// Whether the schedule refuses to run without it (`false` for an
    /// `Option<Res<R>>`).
    required: bool,
}

impl std::fmt::Debug for ResourceAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceAccess")
            .field("name", &self.name)
            .field("access", &self.access)
            .field("required", &self.required)
            .finish()
    }
}

impl PartialEq for ResourceAccess {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id && self.name == other.name && self.access == other.access
    }
}

impl Eq for ResourceAccess {}

impl ResourceAccess {
    /// `access` to the resource type `R`.
    pub fn of<R: Send + Sync + 'static>(access: Access) -> Self {
        ResourceAccess {
            type_id: TypeId::of::<R>(),
            name: type_name::<R>(),
            access,
            present: Registry::contains_resource::<R>,
            required: true,
        }
    }

    /// The same access, but the resource may be absent: the schedule runs
    /// without it (the system's `Option<Res<R>>` or `Option<ResMut<R>>`
    /// is `None` then). It is still ordered against the systems that
    /// write (or read) `R`.
    #[must_use]
    pub fn optional(self) -> Self {
        ResourceAccess {
            required: false,
            ..self
        }
    }

    /// `false` for an [`optional`](Self::optional) access: the schedule's
    /// check for missing resources skips it.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// `true` when `registry` holds the resource.
    pub fn is_present(&self, registry: &Registry) -> bool {
        (self.present)(registry)
    }
}

/// Which event channel an [`EventAccess`] is about: a Rust event type, or
/// a channel registered at run time ([`RawEvents`](crate::RawEvents), the
/// C API's events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKey {
    /// The channel of the Rust type with this id ([`Events<T>`](crate::Events)).
    Type(TypeId),
    /// A run-time channel ([`RawEvents::register`](crate::RawEvents::register)).
    Raw(RawEventId),
}

impl EventKey {
    /// The key of the Rust event type `T`.
    pub fn of<T: 'static>() -> Self {
        EventKey::Type(TypeId::of::<T>())
    }
}

/// What a system declares about one event channel: read or write, and how
/// the scheduler creates, ages and flushes the channel.
#[derive(Debug, Clone)]
pub struct EventAccess {
    /// The channel.
    pub key: EventKey,
    /// Its name: the Rust type's name, or the run-time channel's.
    pub name: Cow<'static, str>,
    /// Write (send) or read.
    pub access: Access,
    /// The system reads them (also when it sends them too).
    pub(crate) reads: bool,
    pub(crate) register: fn(&mut Registry, EventKey),
    pub(crate) add_reader: fn(&mut Registry, EventKey, usize),
    pub(crate) begin_tick: BeginTick,
    pub(crate) flush: Flush,
}

impl PartialEq for EventAccess {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.access == other.access
    }
}

impl Eq for EventAccess {}

impl EventAccess {
    /// `access` to events of type `T`.
    pub fn of<T: Send + Sync + 'static>(access: Access) -> Self {
        EventAccess {
            key: EventKey::of::<T>(),
            name: Cow::Borrowed(type_name::<T>()),
            access,
            reads: access == Access::Read,
            register: |registry, _| {
                Events::<T>::channel(registry);
            },
            add_reader: |registry, _, system| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.add_reader(system);
                }
            },
            begin_tick: |registry, _, tick| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.begin_tick(tick);
                }
            },
            flush: |registry, _, failed| {
                if let Some(events) = registry.resource_mut::<Events<T>>() {
                    events.flush(failed);
                }
            },
        }
    }

    /// `access` to the run-time channel `id` (see
    /// [`RawEvents`](crate::RawEvents)), named `name` in reports.
    pub fn raw(id: RawEventId, name: impl Into<Cow<'static, str>>, access: Access) -> Self {
        EventAccess {
            key: EventKey::Raw(id),
            name: name.into(),
            access,
            reads: access == Access::Read,
            register: |_, _| {},
            add_reader: |registry, key, system| {
                if let Some(events) = RawEvents::channel_mut(registry, key) {
                    events.add_reader(system);
                }
            },
            begin_tick: |registry, key, tick| {
                if let Some(events) = RawEvents::channel_mut(registry, key) {
                    events.begin_tick(tick);
                }
            },
            flush: |registry, key, failed| {
                if let Some(events) = RawEvents::channel_mut(registry, key) {
                    events.flush(failed);
                }
            },
        }
    }
}

/// The declared access of a system: the scheduler orders systems by it, and
/// a system may touch nothing outside it.
///
/// A type listed twice keeps the stronger access (write wins). Components
/// registered at run time are declared by id
/// ([`read_runtime`](Self::read_runtime), [`write_runtime`](Self::write_runtime))
/// and ordered like Rust types.
///
/// # Examples
///
/// ```
/// use ecs_engine::Access;
/// use scheduler::SystemAccess;
///
/// struct Position;
/// struct Velocity;
/// struct Gravity;
///
/// let access = SystemAccess::new()
///     .write::<Position>()
///     .read::<Velocity>()
///     .read_resource::<Gravity>()
///     .with_commands();
/// assert_eq!(access.components().len(), 2);
/// assert!(access.allows_component(std::any::TypeId::of::<Velocity>(), Access::Read));
/// assert!(!access.allows_component(std::any::TypeId::of::<Velocity>(), Access::Write));
/// assert!(access.commands());
/// ```
#[derive(Debug, Clone, Default)]
pub struct SystemAccess {
    components: Vec<ComponentAccess>,
    resources: Vec<ResourceAccess>,
    events: Vec<EventAccess>,
    commands: bool,
    /// The system takes `&mut Registry`: it runs alone.
    exclusive: bool,
    /// Types that the system's parameters borrow twice, at least once
    /// for writing: such a system could never run.
    clashes: Vec<Cow<'static, str>>,
    /// Each component borrow on its own, with the shape of its query when
    /// it has one (`access/disjoint.rs`): what proves two borrows of one
    /// type disjoint.
    borrows: Vec<Borrow>,
}

impl SystemAccess {
    /// No access at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds read access to component `T`.
    pub fn read<T: Component>(mut self) -> Self {
        self.add_component(ComponentAccess::of::<T>(Access::Read));
        self
    }

    /// Adds write access to component `T`.
    pub fn write<T: Component>(mut self) -> Self {
        self.add_component(ComponentAccess::of::<T>(Access::Write));
        self
    }

    /// Adds read access to the run-time component `id`, named `name` in
    /// errors and in the schedule's explanations (pass its registered name,
    /// [`ComponentInfo::name`](ecs_engine::ComponentInfo::name)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use ecs_engine::{Access, ComponentDescriptor, Registry};
    /// use scheduler::SystemAccess;
    ///
    /// let mut registry = Registry::new();
    /// let hp = registry
    ///     .register_runtime(ComponentDescriptor::new("hp", Layout::new::<u32>()))
    ///     .unwrap();
    /// let access = SystemAccess::new().read_runtime(hp, "hp");
    /// assert!(access.allows_component(hp, Access::Read));
    /// assert!(!access.allows_component(hp, Access::Write));
    /// assert_eq!(access.describe(), "reads hp");
    /// ```
    pub fn read_runtime(mut self, id: ComponentId, name: impl Into<Cow<'static, str>>) -> Self {
        self.add_component(ComponentAccess::runtime(id, name, Access::Read));
        self
    }

    /// Adds write access to the run-time component `id`, named `name` (see
    /// [`read_runtime`](Self::read_runtime)).
    pub fn write_runtime(mut self, id: ComponentId, name: impl Into<Cow<'static, str>>) -> Self {
        self.add_component(ComponentAccess::runtime(id, name, Access::Write));
        self
    }

    /// Adds read access to resource `R`.
    pub fn read_resource<R: Send + Sync + 'static>(mut self) -> Self {
        self.add_resource(ResourceAccess::of::<R>(Access::Read));
        self
    }

    /// Adds write access to resource `R`.
    pub fn write_resource<R: Send + Sync + 'static>(mut self) -> Self {
        self.add_resource(ResourceAccess::of::<R>(Access::Write));
        self
    }

    /// Adds reading events of type `T` (see [`EventReader`](crate::EventReader)).
    /// The channel is a resource, [`Events<T>`](crate::Events): declare a
    /// read of it too to reach it from a [`SystemContext`](crate::SystemContext).
    pub fn read_events<T: Send + Sync + 'static>(mut self) -> Self {
        self.add_event(EventAccess::of::<T>(Access::Read));
        self.add_resource(ResourceAccess::of::<crate::Events<T>>(Access::Read));
        self
    }

    /// Adds sending events of type `T` (see [`EventWriter`](crate::EventWriter)).
    pub fn write_events<T: Send + Sync + 'static>(mut self) -> Self {
        self.add_event(EventAccess::of::<T>(Access::Write));
        self.add_resource(ResourceAccess::of::<crate::Events<T>>(Access::Read));
        self
    }

    /// Adds reading the run-time event channel `id`, named `name` in
    /// reports (see [`RawEvents`](crate::RawEvents)).
    pub fn read_raw_events(mut self, id: RawEventId, name: impl Into<Cow<'static, str>>) -> Self {
        self.add_event(EventAccess::raw(id, name, Access::Read));
        self.add_resource(ResourceAccess::of::<RawEvents>(Access::Read));
        self
    }

    /// Adds sending on the run-time event channel `id`, named `name` in
    /// reports (see [`RawEvents`](crate::RawEvents)).
    pub fn write_raw_events(mut self, id: RawEventId, name: impl Into<Cow<'static, str>>) -> Self {
        self.add_event(EventAccess::raw(id, name, Access::Write));
        self.add_resource(ResourceAccess::of::<RawEvents>(Access::Read));
        self
    }

    /// Adds one event access (merged with an earlier one of that channel).
    pub fn add_event(&mut self, new: EventAccess) {
        match self.events.iter_mut().find(|e| e.key == new.key) {
            Some(old) => {
                old.access = old.access.max(new.access);
                old.reads |= new.reads;
            }
            None => self.events.push(new),
        }
    }

    /// The event types, in declaration order.
    pub fn events(&self) -> &[EventAccess] {
        &self.events
    }

    /// `true` when the declaration covers `access` to the event channel
    /// `key`.
    pub fn allows_event(&self, key: EventKey, access: Access) -> bool {
        self.events
            .iter()
            .any(|e| e.key == key && e.access >= access)
    }

    /// Declares that the system takes the whole registry (`&mut
    /// Registry`): it conflicts with every other system, so it runs alone
    /// in its own wave. Made by [`ExclusiveSystem`](crate::ExclusiveSystem).
    pub fn exclusive(mut self) -> Self {
        self.exclusive = true;
        self
    }

    /// `true` for an exclusive system (see [`exclusive`](Self::exclusive)).
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Adds everything `other` declares (a type declared by both keeps
    /// the stronger access). A run condition's access is merged into its
    /// system's this way: the two never borrow at the same time.
    pub fn merge(&mut self, other: &SystemAccess) {
        for c in &other.components {
            self.merge_component(c.clone());
        }
        self.borrows.extend(other.borrows.iter().cloned());
        for r in &other.resources {
            self.add_resource(*r);
        }
        for e in &other.events {
            self.add_event(e.clone());
        }
        self.commands |= other.commands;
        self.exclusive |= other.exclusive;
    }

    /// Declares that the system records commands in its buffer.
    pub fn with_commands(mut self) -> Self {
        self.commands = true;
        self
    }

    /// Adds one component access (merged with an earlier one of that
    /// type), proven disjoint from no other borrow.
    pub fn add_component(&mut self, new: ComponentAccess) {
        self.borrows.push(Borrow::opaque(&new));
        self.merge_component(new);
    }

    /// Merges one component access into the per-type list only.
    fn merge_component(&mut self, new: ComponentAccess) {
        match self.components.iter_mut().find(|c| c.key == new.key) {
            Some(old) => {
                old.access = old.access.max(new.access);
                // Change tracking asked by any borrow of the type is kept.
                old.track = old.track.or(new.track);
            }
            None => self.components.push(new),
        }
    }

    /// Adds one resource access (merged with an earlier one of that type).
    pub fn add_resource(&mut self, new: ResourceAccess) {
        match self.resources.iter_mut().find(|r| r.type_id == new.type_id) {
            Some(old) => old.access = old.access.max(new.access),
            None => self.resources.push(new),
        }
    }

    /// Adds a component that one parameter borrows for the whole run. A
    /// second borrow of the same type where either writes is recorded as a
    /// clash, which [`ScheduleBuilder::build`](crate::ScheduleBuilder::build)
    /// reports (the run would always fail on the second borrow).
    pub fn add_component_borrow(&mut self, new: ComponentAccess) {
        self.add_shaped_borrow(new, None);
    }

    /// Adds a resource that one parameter borrows for the whole run; a
    /// clash as in [`add_component_borrow`](Self::add_component_borrow).
    pub fn add_resource_borrow(&mut self, new: ResourceAccess) {
        let old = self.resources.iter().find(|r| r.type_id == new.type_id);
        if old.is_some_and(|old| old.access.max(new.access) == Access::Write) {
            self.clashes.push(Cow::Borrowed(new.name));
        }
        self.add_resource(new);
    }

    /// The types that the system's parameters borrow twice, at least once
    /// for writing.
    pub fn clashes(&self) -> &[Cow<'static, str>] {
        &self.clashes
    }

    pub(crate) fn record_clash(&mut self, name: Cow<'static, str>) {
        self.clashes.push(name);
    }

    /// Sets whether the system records commands.
    pub fn set_commands(&mut self, commands: bool) {
        self.commands |= commands;
    }

    /// The component types, in declaration order.
    pub fn components(&self) -> &[ComponentAccess] {
        &self.components
    }

    /// The resource types, in declaration order.
    pub fn resources(&self) -> &[ResourceAccess] {
        &self.resources
    }

    /// `true` when the system records commands.
    pub fn commands(&self) -> bool {
        self.commands
    }

    /// `true` when the declaration covers `access` to component `key` (a
    /// Rust `TypeId`, a run-time [`ComponentId`], or a [`ComponentKey`]);
    /// a declared write covers a read.
    pub fn allows_component(&self, key: impl Into<ComponentKey>, access: Access) -> bool {
        let key = key.into();
        self.components
            .iter()
            .any(|c| c.key == key && c.access >= access)
    }

    /// The declared access to component `key`, if any.
    pub fn component_access(&self, key: impl Into<ComponentKey>) -> Option<Access> {
        let key = key.into();
        self.components
            .iter()
            .find(|c| c.key == key)
            .map(|c| c.access)
    }

    /// `true` when the declaration covers `access` to resource `type_id`.
    pub fn allows_resource(&self, type_id: TypeId, access: Access) -> bool {
        self.resources
            .iter()
            .any(|r| r.type_id == type_id && r.access >= access)
    }

    /// Creates the pool of every declared Rust component type in
    /// `registry`, so a view over a type nobody has inserted yet is empty,
    /// not missing. (Run-time components have their pool from their
    /// registration.)
    pub fn register_pools(&self, registry: &mut Registry) {
        for component in &self.components {
            if let Some(register) = component.register {
                register(registry);
            }
            if let Some(track) = component.track {
                track(registry);
            }
        }
        for event in &self.events {
            (event.register)(registry, event.key);
        }
    }

    /// Registers system `index` as a reader of every event type it reads,
    /// so those events are kept until it has seen them (within the
    /// retention window).
    pub(crate) fn register_readers(&self, registry: &mut Registry, index: usize) {
        for event in &self.events {
            if event.reads {
                (event.add_reader)(registry, event.key, index);
            }
        }
    }

    /// Every type both declarations touch where at least one writes:
    /// `(name, kind, self's access, other's access)`.
    pub(crate) fn conflicts<'a>(
        &'a self,
        other: &'a SystemAccess,
    ) -> impl Iterator<Item = (Cow<'static, str>, SubjectKind, Access, Access)> + 'a {
        let components = self.components.iter().filter_map(|a| {
            let b = other.components.iter().find(|b| b.key == a.key)?;
            (!self.disjoint_on(other, a.key))
                .then(|| (a.name.clone(), SubjectKind::Component, a.access, b.access))
        });
        let resources = self.resources.iter().filter_map(|a| {
            let b = other.resources.iter().find(|b| b.type_id == a.type_id)?;
            Some((
                Cow::Borrowed(a.name),
                SubjectKind::Resource,
                a.access,
                b.access,
            ))
        });
        // Event writers append to their own buffers: only a writer and a
        // reader conflict.
        let events = self.events.iter().filter_map(|a| {
            let b = other.events.iter().find(|b| b.key == a.key)?;
            (a.access != b.access).then_some((
                a.name.clone(),
                SubjectKind::Event,
                a.access,
                b.access,
            ))
        });
        let registry = (self.exclusive || other.exclusive).then_some((
            Cow::Borrowed("Registry"),
            SubjectKind::Registry,
            if self.exclusive {
                Access::Write
            } else {
                Access::Read
            },
            if other.exclusive {
                Access::Write
            } else {
                Access::Read
            },
        ));
        components
            .chain(resources)
            .chain(registry)
            .filter(|&(_, _, a, b)| a == Access::Write || b == Access::Write)
            .chain(events)
    }

    /// One line: `reads A, B; writes C; resources: reads R; commands`.
    pub fn describe(&self) -> String {
        let names = |access: Access| -> Vec<String> {
            self.components
                .iter()
                .filter(|c| c.access == access)
                .map(|c| short_name(&c.name))
                .collect()
        };
        let resources = |access: Access| -> Vec<String> {
            self.resources
                .iter()
                .filter(|r| r.access == access)
                .map(|r| short_name(r.name))
                .collect()
        };
        let events = |access: Access| -> Vec<String> {
            self.events
                .iter()
                .filter(|e| e.access == access)
                .map(|e| short_name(&e.name))
                .collect()
        };
        let mut parts = Vec::new();
        for (label, list) in [
            ("reads", names(Access::Read)),
            ("writes", names(Access::Write)),
            ("reads resource", resources(Access::Read)),
            ("writes resource", resources(Access::Write)),
            ("reads events", events(Access::Read)),
            ("sends events", events(Access::Write)),
        ] {
            if !list.is_empty() {
                parts.push(format!("{label} {}", list.join(", ")));
            }
        }
        if self.exclusive {
            parts.push("exclusive (the whole registry)".to_owned());
        }
        if self.commands {
            parts.push("records commands".to_owned());
        }
        if parts.is_empty() {
            "no access".to_owned()
        } else {
            parts.join("; ")
        }
    }
}

/// Whether a conflict is on a component type, a resource or an event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    /// A component type (its pool).
    Component,
    /// A resource.
    Resource,
    /// An event type: a writer and a reader conflict, two writers do not.
    Event,
    /// The whole registry, taken by an exclusive system: ordered by
    /// registration under every policy.
    Registry,
}

/// A type name without module paths: `game::Position` → `Position`,
/// `queue::EventQueue<game::Input>` → `EventQueue<Input>`.
pub fn short_name(name: &str) -> String {
    let mut short = String::with_capacity(name.len());
    let mut segment_start = 0;
    for (i, c) in name.char_indices() {
        if matches!(c, '<' | '>' | ',' | '(' | ')' | '[' | ']' | ';' | '&' | ' ') {
            short.push_str(last_segment(&name[segment_start..i]));
            short.push(c);
            segment_start = i + c.len_utf8();
        }
    }
    short.push_str(last_segment(&name[segment_start..]));
    short
}

fn last_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn short_names_drop_module_paths() {
        assert_eq!(short_name("game::Position"), "Position");
        assert_eq!(short_name("Position"), "Position");
        assert_eq!(
            short_name("event_queue::queue::EventQueue<tests::Thrust>"),
            "EventQueue<Thrust>"
        );
        assert_eq!(short_name("(a::A, &b::B)"), "(A, &B)");
    }
}
