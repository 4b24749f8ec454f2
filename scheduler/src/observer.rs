//! Observers (bevy's component hooks and `OnAdd`/`OnInsert`/`OnReplace`/
//! `OnRemove` observers): one-shot systems run after the apply whose
//! commands inserted or removed a component they watch.
//!
//! When the commands of a wave are applied, each command that adds,
//! overwrites or removes an observed component records its hooks (see
//! [`Hook`]); once the wave is applied, every recorded hook runs the
//! observers of its (hook, type), in the order the commands were applied,
//! then in registration order, each with [`Trigger`] as a resource and
//! its commands applied after it. Hooks fired by those commands run their
//! observers in turn, before the next wave, in a chain of at most
//! [`MAX_ONE_SHOT_CHAIN`](crate::MAX_ONE_SHOT_CHAIN) links after one
//! wave (the observers of the wave's own hooks are one link, however
//! many; past the limit the tick stops with
//! [`RunError::OneShotLimit`](crate::RunError::OneShotLimit)).
//!
//! Only commands fire hooks, and only once they succeeded (a command on a
//! dead handle fires nothing): [`Insert`] and `insert_bundle` (so
//! `commands.entity(e).insert(..)`) fire [`Hook::Add`] for each observed
//! component the entity lacked (required ones included),
//! [`Hook::Replace`] then [`Hook::Insert`] for each observed value they
//! overwrote, then [`Hook::Insert`] for each added one; a
//! [`spawn`](crate::Commands::spawn) fires [`Hook::Add`], then
//! [`Hook::Insert`], for each observed component the new entity has;
//! [`Remove`], `remove_bundle` and `remove_by_id` fire [`Hook::Remove`]
//! for each observed component the entity had; a
//! [`despawn`](crate::Commands::despawn) or `despawn_recursive` fires
//! [`Hook::Remove`] for each observed component of each entity it
//! despawns (after the despawn, so the observer finds the entity gone).
//! Within one command, types fire in the order they were first observed.
//! Hierarchy commands (`set_parent`, `with_children`, `remove_parent`,
//! despawns) fire the hooks of an observed `ChildOf` (added, replaced when
//! the child moves, removed when detached) and of an observed `Children`
//! (added with a parent's first child, removed with its last; a list
//! that only grows or shrinks fires nothing, as in bevy), and
//! `disable_recursive`/`enable_recursive` those of an observed
//! `Disabled` on each entity whose marker changed. Direct `Registry` calls,
//! pushed closures and `insert_raw` fire none. A `CommandBuffer` applied
//! by hand outside the schedule records its hooks, but they run only
//! after the schedule next applies commands of its own. The hooks are
//! taken by the schedule that applies the commands: the observers of
//! another schedule on the same registry do not see them.
//!
//! An observer that fails (an error, a panic, a missing resource) stops
//! the tick with [`RunError::Observer`](crate::RunError::Observer), which
//! names the observer, its hook, the component type and the entity. Run
//! by id, an observer that reads `Res<Trigger>` has none: that is a
//! [`RunError::NoTrigger`](crate::RunError::NoTrigger).
//!
//! [`Insert`]: crate::Commands::insert
//! [`Remove`]: crate::Commands::remove

use std::any::TypeId;

use command_buffer::{FiredHooks, ObservedTypes};
use ecs_engine::{Component, Entity, Registry};

pub use command_buffer::Hook;

use crate::{IntoSystem, OneShotId, Schedule, ScheduleBuilder};

/// What an observer runs for: a resource while it runs (take it as
/// `Res<Trigger>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    /// The hook that fired.
    pub hook: Hook,
    /// The entity whose component it was about.
    pub entity: Entity,
}

/// An observer: the hook and component type it watches, and its
/// one-shot system.
#[derive(Clone, Copy)]
pub(crate) struct Observer {
    pub(crate) hook: Hook,
    pub(crate) ty: TypeId,
    /// The component type's name, for errors.
    pub(crate) name: &'static str,
    pub(crate) id: OneShotId,
}

/// What a fired hook runs an observer for: the trigger, and the
/// observed component type's name (for errors).
#[derive(Clone, Copy)]
pub(crate) struct Fired {
    pub(crate) trigger: Trigger,
    pub(crate) component: &'static str,
}

impl Schedule {
    /// Registers `system` as an observer of `hook` on component `T` and
    /// returns its one-shot id (it can also be run with
    /// [`run_system`](Self::run_system), without a [`Trigger`]). See the
    /// module docs for when it runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, Hook, Res, ResMut, Schedule, Tick, Trigger};
    ///
    /// struct Health(u32);
    /// fn spawn(mut commands: Commands) {
    ///     let entity = commands.spawn_empty();
    ///     commands.insert(entity, Health(3));
    /// }
    /// fn on_add(trigger: Res<Trigger>, mut seen: ResMut<Vec<u32>>) {
    ///     seen.push(trigger.entity.index());
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Vec::<u32>::new());
    /// let mut builder = Schedule::builder();
    /// builder.add(spawn);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.observe::<Health, _>(&mut registry, Hook::Add, on_add);
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<Vec<u32>>().unwrap().len(), 1);
    /// ```
    pub fn observe<T: Component, M>(
        &mut self,
        registry: &mut Registry,
        hook: Hook,
        system: impl IntoSystem<M>,
    ) -> OneShotId {
        let id = self.register_system(registry, system);
        let observers = &mut self.between.oneshots.observers;
        observers.push(Observer {
            hook,
            ty: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
            id,
        });
        ObservedTypes::observe::<T>(registry);
        id
    }
}

/// An observer registered on a [`ScheduleBuilder`], attached to the
/// schedule at its build: its (hook, type), its one-shot id, and the
/// call that marks its type observed in the registry.
pub(crate) struct PendingObserver {
    observer: Observer,
    mark: fn(&mut Registry),
}

impl PendingObserver {
    /// Adds the observer to `schedule` and marks its type observed in
    /// `registry`, as [`Schedule::observe`] does.
    pub(crate) fn attach(self, schedule: &mut Schedule, registry: &mut Registry) {
        let observers = &mut schedule.between.oneshots.observers;
        observers.push(self.observer);
        (self.mark)(registry);
    }
}

impl ScheduleBuilder {
    /// Registers `system` as an observer of `hook` on component `T`
    /// before the build, so that a plugin can add its observers with its
    /// systems; it returns the observer's one-shot id (numbered with
    /// [`register_system`](Self::register_system)'s). From the build on
    /// it is the same as one added by [`Schedule::observe`] then, and
    /// runs before those in their registration order.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, Hook, Res, ResMut, Schedule, Tick, Trigger};
    ///
    /// struct Health(u32);
    /// fn spawn(mut commands: Commands) {
    ///     commands.spawn((Health(3),));
    /// }
    /// fn on_add(trigger: Res<Trigger>, mut seen: ResMut<Vec<u32>>) {
    ///     seen.push(trigger.entity.index());
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Vec::<u32>::new());
    /// let mut builder = Schedule::builder();
    /// builder.add(spawn);
    /// builder.observe::<Health, _>(Hook::Add, on_add);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<Vec<u32>>().unwrap().len(), 1);
    /// ```
    pub fn observe<T: Component, M>(
        &mut self,
        hook: Hook,
        system: impl IntoSystem<M>,
    ) -> OneShotId {
        let id = self.register_system(system);
        self.observers.push(PendingObserver {
            observer: Observer {
                hook,
                ty: TypeId::of::<T>(),
                name: std::any::type_name::<T>(),
                id,
            },
            mark: ObservedTypes::observe::<T>,
        });
        id
    }
}

/// Takes the hooks fired so far, as triggers for the observers of each
/// (in firing order, then registration order).
pub(crate) fn take_triggers(
    observers: &[Observer],
    registry: &mut Registry,
) -> Vec<(OneShotId, Fired)> {
    let Some(FiredHooks(fired)) = registry.remove_resource::<FiredHooks>() else {
        return Vec::new();
    };
    fired
        .into_iter()
        .flat_map(|(hook, ty, entity)| {
            observers
                .iter()
                .filter(move |o| o.hook == hook && o.ty == ty)
                .map(move |o| {
                    let trigger = Trigger { hook, entity };
                    let component = o.name;
                    (o.id, Fired { trigger, component })
                })
        })
        .collect()
}

/// `true` when some fired hook waits for its observers.
pub(crate) fn has_fired(registry: &Registry) -> bool {
    registry.contains_resource::<FiredHooks>()
}
