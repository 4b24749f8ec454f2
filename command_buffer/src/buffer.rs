//! The command buffer: recording structural changes without touching the
//! registry.
//!
//! `CommandBuffer` methods here: construction (`new`, `with_policy`), recording
//! (`spawn`, `despawn`, `insert`, `remove`, their raw and resource forms, `push`,
//! `disable`/`enable`, and the hierarchy's `set_parent`, `remove_parent`,
//! `despawn_recursive`) and `len`/`is_empty`/`clear`; applying is in
//! `apply.rs`, the reserve and its lanes in `reserve/`, its snapshot in
//! `reserve/state.rs`.

use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;

use ecs_engine::{
    Bundle, Component, ComponentId, ComponentInfo, Disabled, EcsError, Entity, RawArena,
    RawComponent, Registry,
};

use crate::ReservePolicy;
use crate::command::{
    Custom, Despawn, DespawnRecursive, DisableRecursive, Insert, InsertBundle, InsertRaw,
    InsertResource, Remove, RemoveBundle, RemoveById, RemoveParent, RemoveResource, SetParent,
    Spawn, SpawnChild,
};
use crate::reserve::Reserve;
use crate::storage::Queues;

/// Structural changes (spawn, despawn, insert, remove, resource changes and
/// custom closures) recorded by one system while systems run in parallel,
/// and applied to the [`Registry`] later, in recording order, by
/// [`apply`](Self::apply) or [`apply_all`](crate::apply_all).
///
/// Recording needs no registry access. [`spawn`](Self::spawn) returns the
/// entity's final handle at once, taken from the buffer's reserve (see
/// [`ReservePolicy`]), so later commands of any buffer, and component
/// values, can refer to it. Typed commands are stored by value, packed per
/// command type; only [`push`](Self::push) boxes its closure. Values of
/// components registered at run time ([`insert_raw`](Self::insert_raw))
/// are copied into a byte arena of the buffer, aligned, reused from apply
/// to apply. Spawns of several bundle types recorded in turn, with reserved
/// handles, are applied one batch per bundle type: same handles, components
/// and report; only the order of those entities in a pool their bundle
/// types share (the order a view visits them in) follows the types, the
/// same on any thread count.
///
/// A buffer is meant to be kept and reused: applying it empties it but
/// keeps its capacity, so after warm-up it records and applies without
/// allocating. Dropping a buffer drops every component and resource value
/// it still holds, exactly once, and gives its reserved handles back to the
/// registry (see [`release`](Self::release)).
///
/// `CommandBuffer` is `Send` (a system records into it on a worker thread)
/// but not `Sync`.
///
/// # Examples
///
/// ```
/// use command_buffer::CommandBuffer;
/// use ecs_engine::{Entity, Registry};
///
/// #[derive(Debug, PartialEq)]
/// struct Parent(Entity);
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::new();
/// commands.prepare(&mut registry); // fill the reserve, in sequential code
///
/// // In a system, without the registry:
/// let parent = commands.spawn((Name("parent"),));
/// let child = commands.spawn((Name("child"), Parent(parent)));
/// commands.insert(parent, 10_u32);
///
/// commands.apply(&mut registry);
/// assert_eq!(registry.get::<Parent>(child), Some(&Parent(parent)));
/// assert_eq!(registry.get::<u32>(parent), Some(&10));
/// ```
#[derive(Debug)]
pub struct CommandBuffer {
    pub(crate) queues: Queues,
    pub(crate) reserve: Reserve,
    /// The values of `insert_raw` commands.
    pub(crate) raw: RawArena,
}

impl Default for CommandBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl CommandBuffer {
    /// An empty buffer with the default [`ReservePolicy`]. It holds no
    /// reserved handle until [`prepare`](Self::prepare),
    /// [`reserve_entities`](Self::reserve_entities) or its first apply, so
    /// spawns before then get placeholders.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy};
    ///
    /// let commands = CommandBuffer::new();
    /// assert!(commands.is_empty());
    /// assert_eq!(commands.policy(), ReservePolicy::default());
    /// ```
    pub fn new() -> Self {
        Self::with_policy(ReservePolicy::default())
    }

    /// An empty buffer that keeps its reserve by `policy`.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let policy = ReservePolicy { min: 8, per_spawn: 1, max: 100 };
    /// let mut commands = CommandBuffer::with_policy(policy);
    /// commands.prepare(&mut registry);
    /// assert_eq!(commands.reserved_len(), 8);
    /// ```
    pub fn with_policy(policy: ReservePolicy) -> Self {
        CommandBuffer {
            queues: Queues::new(),
            reserve: Reserve::with_policy(policy),
            raw: RawArena::new(),
        }
    }

    /// Records the spawn of an entity with the components of `bundle` (a
    /// tuple, `()` for none) and returns its handle, usable at once in
    /// later commands and in component values.
    ///
    /// The handle is the entity's final id, taken from the reserve, or,
    /// past the reserve, from the buffer's [spawn lane](crate::SpawnLanes)
    /// when one is open (always, for a buffer run by a schedule). With
    /// neither (or after a placeholder earlier since the last apply), it is a
    /// [placeholder](crate::is_placeholder) instead: apply creates the entity in this command's place and
    /// substitutes it in the later commands of this buffer, but not inside
    /// component values, custom closures or other buffers; the
    /// [`ApplyReport`](crate::ApplyReport) maps placeholders to entities.
    ///
    /// # Panics
    ///
    /// After about four billion placeholder spawns without an apply.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.prepare(&mut registry);
    /// let e = commands.spawn((1_u8, 2_u16));
    /// assert!(!registry.is_alive(e));
    /// commands.apply(&mut registry);
    /// assert!(registry.has::<(u8, u16)>(e));
    /// ```
    #[track_caller]
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        let entity = self.reserve.hand_out();
        self.queues.push(Spawn { bundle });
        entity
    }

    /// Records the spawn of a child of `parent` (the link is recorded
    /// separately): spawned as [`spawn`](Self::spawn) does when `parent`
    /// is alive as the command runs, skipped otherwise. For
    /// [`ChildBuilder::spawn`](crate::ChildBuilder::spawn).
    #[track_caller]
    pub(crate) fn spawn_child<B: Bundle>(&mut self, parent: Entity, bundle: B) -> Entity {
        let entity = self.reserve.hand_out();
        self.queues.push(SpawnChild { parent, bundle });
        entity
    }

    /// Records the spawn of an entity with no component; as
    /// [`spawn`](Self::spawn) with `()`.
    ///
    /// # Panics
    ///
    /// As [`spawn`](Self::spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// let e = commands.spawn_empty();
    /// commands.insert(e, 'x');
    /// let report = commands.apply(&mut registry);
    /// let e = report.resolve(0, e).unwrap_or(e); // a placeholder here: no prepare
    /// assert_eq!(registry.get::<char>(e), Some(&'x'));
    /// ```
    #[track_caller]
    pub fn spawn_empty(&mut self) -> Entity {
        self.spawn(())
    }

    /// Records the despawn of `entity` (dropping all its components). If it
    /// is not alive when the command runs, the command is skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.despawn(e);
    /// let report = commands.apply(&mut registry);
    /// assert!(!registry.is_alive(e));
    /// assert_eq!(report.skipped(CommandKind::Despawn), 1);
    /// ```
    #[inline]
    pub fn despawn(&mut self, entity: Entity) {
        self.queues.push_despawn(Despawn { entity });
    }

    /// Records giving `entity` the component `value`, replacing (and
    /// dropping) any `T` it has. Skipped, dropping `value`, if `entity` is
    /// not alive when the command runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.insert(e, 2_u32);
    /// commands.apply(&mut registry);
    /// assert_eq!(registry.get::<u32>(e), Some(&2));
    /// ```
    pub fn insert<T: Component>(&mut self, entity: Entity, value: T) {
        self.queues.push(Insert { entity, value });
    }

    /// Records giving `entity` every component of `bundle`, as
    /// [`Registry::insert_bundle`]. Skipped if `entity` is not alive when
    /// the command runs. Observed components fire the hooks an
    /// [`insert`](Self::insert) of each would (see
    /// [`EntityCommands::insert`](crate::EntityCommands::insert)).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn(());
    /// let mut commands = CommandBuffer::new();
    /// commands.insert_bundle(e, (1_u8, 2_u16));
    /// commands.apply(&mut registry);
    /// assert!(registry.has::<(u8, u16)>(e));
    /// ```
    pub fn insert_bundle<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.queues.push(InsertBundle { entity, bundle });
    }

    /// Records removing (and dropping) `entity`'s `T`. Skipped if `entity`
    /// is not alive when the command runs; a counted no-op (never an error)
    /// if it is alive without a `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.remove::<u32>(e);
    /// commands.remove::<u32>(e);
    /// let report = commands.apply(&mut registry);
    /// assert_eq!(registry.get::<u32>(e), None);
    /// assert_eq!(report.applied(CommandKind::Remove), 1);
    /// assert_eq!(report.noops(CommandKind::Remove), 1);
    /// ```
    pub fn remove<T: Component>(&mut self, entity: Entity) {
        self.queues.push(Remove::<T> {
            entity,
            component: PhantomData,
        });
    }

    /// Records removing (and dropping) every component of the bundle type
    /// `B` (a tuple, e.g. `(u8, u16)`) that `entity` has, as
    /// [`Registry::remove_bundle`]: bevy's `commands.entity(e).remove::<B>()`.
    /// Counted as one [`Remove`](crate::CommandKind::Remove), applied
    /// whether or not the entity had any of them; skipped if `entity` is
    /// not alive when the command runs. Observed components it had fire
    /// [`Hook::Remove`](crate::Hook::Remove), in the order their types
    /// were first observed.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8, 2_u16, 3_u32));
    /// let mut commands = CommandBuffer::new();
    /// commands.remove_bundle::<(u8, u16)>(e);
    /// let report = commands.apply(&mut registry);
    /// assert_eq!((registry.get::<u8>(e), registry.get::<u16>(e)), (None, None));
    /// assert_eq!(registry.get::<u32>(e), Some(&3));
    /// assert_eq!(report.applied(CommandKind::Remove), 1);
    /// ```
    pub fn remove_bundle<B: Bundle>(&mut self, entity: Entity) {
        self.queues.push(RemoveBundle::<B> {
            entity,
            bundle: PhantomData,
        });
    }

    /// Records giving `entity` the run-time component value `value` (see
    /// [`RawComponent`]), as [`Registry::insert_raw`]: replacing (and
    /// dropping) any value of that component it has. The bytes are copied
    /// into the buffer now, aligned, so the source may be reused at once;
    /// the buffer owns the value from here. Skipped if `entity` is not
    /// alive when the command runs (or the registry refuses the id); a
    /// value that is never applied (skipped, [`clear`](Self::clear)ed, or
    /// left in a dropped buffer) is dropped with its destructor, exactly
    /// once. A [placeholder](crate::is_placeholder) from this buffer is
    /// remapped like in every other command.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::{ComponentDescriptor, RawComponent, Registry};
    ///
    /// let mut registry = Registry::new();
    /// let hp = registry
    ///     .register_runtime(ComponentDescriptor::new("hp", Layout::new::<u32>()))
    ///     .unwrap();
    /// let mut commands = CommandBuffer::new();
    /// let e = commands.spawn(());
    /// let info = registry.component_info(hp).unwrap();
    /// let value = 7u32;
    /// // SAFETY: `info` is `hp`'s and `value` a valid u32 (plain bytes).
    /// commands.insert_raw(e, unsafe { RawComponent::new(hp, info, RawComponent::bytes_of(&value)) });
    /// let report = commands.apply(&mut registry);
    /// let e = report.resolve(0, e).unwrap_or(e);
    /// assert_eq!(report.applied(CommandKind::InsertRaw), 1);
    /// // SAFETY: an aligned u32.
    /// assert_eq!(unsafe { *registry.get_raw(e, hp).unwrap().cast::<u32>().as_ptr() }, 7);
    /// ```
    pub fn insert_raw(&mut self, entity: Entity, value: RawComponent<'_>) {
        let slot = self.raw.push(value);
        self.queues.push(InsertRaw { entity, slot });
    }

    /// Makes room in the buffer for the bytes of one value of run-time
    /// component `info`, so that the next [`insert_raw`](Self::insert_raw)
    /// of such a value does not allocate for them (and cannot abort on a
    /// value too large for the memory left). Callers that take sizes from
    /// outside (the C API) call it before building the value.
    ///
    /// # Errors
    ///
    /// [`EcsError::OutOfMemory`] when the allocator refuses the room (or
    /// it would exceed `isize::MAX` bytes); the buffer is unchanged.
    pub fn try_reserve_raw(&mut self, info: &ComponentInfo) -> Result<(), EcsError> {
        self.raw.try_reserve(info)
    }

    /// Records removing (and dropping) `entity`'s component `id`, of either
    /// kind (a Rust type's id or a run-time one), as
    /// [`Registry::remove_by_id`]. Skipped if `entity` is not alive when the
    /// command runs; a counted no-op if it has no such component (or the id
    /// is unknown).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let id = registry.component_id::<u32>().unwrap();
    /// let mut commands = CommandBuffer::new();
    /// commands.remove_by_id(e, id);
    /// commands.remove_by_id(e, id);
    /// let report = commands.apply(&mut registry);
    /// assert_eq!(registry.get::<u32>(e), None);
    /// assert_eq!((report.applied(CommandKind::RemoveById), report.noops(CommandKind::RemoveById)), (1, 1));
    /// ```
    pub fn remove_by_id(&mut self, entity: Entity, id: ComponentId) {
        self.queues.push(RemoveById { entity, id });
    }

    /// Records storing `value` as the resource of its type, replacing (and
    /// dropping) the previous one.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.insert_resource(9.5_f64);
    /// commands.apply(&mut registry);
    /// assert_eq!(registry.resource::<f64>(), Some(&9.5));
    /// ```
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) {
        self.queues.push(InsertResource { value });
    }

    /// Records removing (and dropping) the resource of type `R`; a counted
    /// no-op if there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(9.5_f64);
    /// let mut commands = CommandBuffer::new();
    /// commands.remove_resource::<f64>();
    /// commands.apply(&mut registry);
    /// assert!(!registry.contains_resource::<f64>());
    /// ```
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) {
        self.queues.push(RemoveResource::<R> {
            resource: PhantomData,
        });
    }

    /// Records a closure to run with the registry, in its place among the
    /// other commands, for what the typed commands don't cover. It is
    /// boxed (one allocation per call), always counts as applied, and sees
    /// handles as they were captured: a [placeholder](crate::is_placeholder)
    /// captured inside it is not substituted.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.push(move |registry: &mut Registry| {
    ///     *registry.get_mut::<u32>(e).unwrap() += 1;
    /// });
    /// commands.apply(&mut registry);
    /// assert_eq!(registry.get::<u32>(e), Some(&2));
    /// ```
    pub fn push<F>(&mut self, command: F)
    where
        F: FnOnce(&mut Registry) + Send + 'static,
    {
        self.queues.push(Custom(Box::new(command)));
    }

    /// Number of commands recorded and not yet applied.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    ///
    /// let mut commands = CommandBuffer::new();
    /// commands.spawn_empty();
    /// commands.remove_resource::<u8>();
    /// assert_eq!(commands.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// `true` when no command is recorded.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    ///
    /// assert!(CommandBuffer::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.queues.len() == 0
    }

    /// Drops every recorded command unapplied, keeping the capacity and the
    /// reserve. The handles returned by the dropped spawns never become
    /// alive: reserved ones are cancelled at the next apply, prepare or
    /// release (their generation is bumped, so a copy kept anywhere stays
    /// dead), and placeholders can no longer be resolved.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.prepare(&mut registry);
    /// let e = commands.spawn((1_u8,));
    /// commands.clear();
    /// assert!(commands.is_empty());
    /// commands.apply(&mut registry);
    /// assert!(!registry.is_alive(e) && !registry.entities().is_reserved(e));
    /// ```
    ///
    /// # Panics
    ///
    /// When a recorded payload panics in `Drop`: every command is dropped
    /// and the buffer cleared first (empty, its reserve settled), then the
    /// first panic resumes.
    pub fn clear(&mut self) {
        let dropped = std::panic::catch_unwind(AssertUnwindSafe(|| self.queues.discard()));
        self.raw.clear();
        self.reserve.settle(0);
        self.reserve.reset_spawns();
        if let Err(panic) = dropped {
            std::panic::resume_unwind(panic);
        }
    }

    /// Records disabling `entity` (see
    /// [`Registry::disable`](ecs_engine::Registry::disable)): an
    /// [`insert`](Self::insert) of the [`Disabled`] marker, counted as an
    /// [`Insert`](crate::CommandKind::Insert) and skipped when `entity` is
    /// not alive when the command runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.disable(e);
    /// commands.apply(&mut registry);
    /// assert!(registry.is_disabled(e));
    /// assert_eq!(registry.view::<&u32>().count(), 0);
    /// commands.enable(e);
    /// commands.apply(&mut registry);
    /// assert_eq!(registry.view::<&u32>().count(), 1);
    /// ```
    pub fn disable(&mut self, entity: Entity) {
        self.insert(entity, Disabled);
    }

    /// Records enabling `entity` again: a [`remove`](Self::remove) of the
    /// [`Disabled`] marker, counted as a
    /// [`Remove`](crate::CommandKind::Remove) (a no-op when it was not
    /// disabled) and skipped when `entity` is not alive.
    pub fn enable(&mut self, entity: Entity) {
        self.remove::<Disabled>(entity);
    }

    /// Records disabling `entity` and its whole subtree, as
    /// [`Registry::disable_recursive`](ecs_engine::Registry::disable_recursive):
    /// counted as one [`Insert`](crate::CommandKind::Insert) of
    /// [`Disabled`] (a no-op when every one was disabled already); skipped
    /// when `entity` is not alive when the command runs. Entities attached
    /// to the subtree later are not disabled.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [ship, turret] = [(); 2].map(|()| registry.spawn((0_u8,)));
    /// registry.set_parent(turret, ship).unwrap();
    /// let mut commands = CommandBuffer::new();
    /// commands.disable_recursive(ship);
    /// commands.apply(&mut registry);
    /// assert!(registry.is_disabled(turret));
    /// assert_eq!(registry.view::<&u8>().count(), 0);
    /// commands.enable_recursive(ship);
    /// let report = commands.apply(&mut registry);
    /// assert_eq!(report.applied(CommandKind::Remove), 1);
    /// assert_eq!(registry.view::<&u8>().count(), 2);
    /// ```
    pub fn disable_recursive(&mut self, entity: Entity) {
        self.queues.push(DisableRecursive {
            entity,
            disable: true,
        });
    }

    /// Records enabling `entity` and its whole subtree again, as
    /// [`Registry::enable_recursive`](ecs_engine::Registry::enable_recursive):
    /// counted as one [`Remove`](crate::CommandKind::Remove) of
    /// [`Disabled`] (a no-op when none was disabled); skipped when `entity`
    /// is not alive when the command runs.
    pub fn enable_recursive(&mut self, entity: Entity) {
        self.queues.push(DisableRecursive {
            entity,
            disable: false,
        });
    }

    /// Records making `child` a child of `parent`, as
    /// [`Registry::set_parent`](ecs_engine::Registry::set_parent): last in
    /// `parent`'s [`Children`](ecs_engine::Children). Counted as an
    /// [`Insert`](crate::CommandKind::Insert) of [`ChildOf`](ecs_engine::ChildOf); skipped when either
    /// entity is not alive when the command runs, or when it would close a
    /// cycle. Either handle may be a [placeholder](crate::is_placeholder)
    /// from this buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let ship = registry.spawn(());
    /// let mut commands = CommandBuffer::new();
    /// let turret = commands.spawn(());
    /// commands.set_parent(turret, ship);
    /// let report = commands.apply(&mut registry);
    /// let turret = report.resolve(0, turret).unwrap_or(turret);
    /// assert_eq!(registry.children(ship), [turret]);
    /// ```
    pub fn set_parent(&mut self, child: Entity, parent: Entity) {
        self.queues.push(SetParent { child, parent });
    }

    /// Records detaching `child` from its parent, as
    /// [`Registry::remove_parent`](ecs_engine::Registry::remove_parent).
    /// Counted as a [`Remove`](crate::CommandKind::Remove) of [`ChildOf`](ecs_engine::ChildOf): a
    /// no-op for a root, skipped when `child` is not alive.
    pub fn remove_parent(&mut self, child: Entity) {
        self.queues.push(RemoveParent { child });
    }

    /// Records despawning `entity` with its whole subtree, as
    /// [`Registry::despawn_recursive`](ecs_engine::Registry::despawn_recursive).
    /// Counted as one [`Despawn`](crate::CommandKind::Despawn); skipped when
    /// `entity` is not alive when the command runs (a subtree already
    /// despawned by an earlier command, for instance). A plain
    /// [`despawn`](Self::despawn) detaches the children instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [ship, turret] = [(); 2].map(|()| registry.spawn(()));
    /// registry.set_parent(turret, ship).unwrap();
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn_recursive(ship);
    /// commands.despawn_recursive(turret);
    /// let report = commands.apply(&mut registry);
    /// assert!(registry.is_empty());
    /// assert_eq!(report.applied(CommandKind::Despawn), 1);
    /// assert_eq!(report.skipped(CommandKind::Despawn), 1);
    /// ```
    pub fn despawn_recursive(&mut self, entity: Entity) {
        self.queues.push(DespawnRecursive { entity });
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        self.queues.discard();
        self.raw.clear();
        self.reserve.orphan();
    }
}
