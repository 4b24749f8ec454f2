//! What applying commands tells observers: the component types someone
//! observes ([`ObservedTypes`], a registry resource the scheduler keeps)
//! and the hooks fired by the commands applied since the scheduler last
//! looked ([`FiredHooks`], a registry resource while some are pending).
//!
//! Only commands fire hooks: [`Insert`](crate::CommandBuffer::insert) and
//! [`Remove`](crate::CommandBuffer::remove) of one component, and
//! [`despawn`](crate::CommandBuffer::despawn) and
//! [`despawn_recursive`](crate::CommandBuffer::despawn_recursive), which
//! fire [`Hook::Remove`] for each observed component the despawned
//! entities had, and spawns ([`spawn`](crate::CommandBuffer::spawn)),
//! which fire [`Hook::Add`] then [`Hook::Insert`] for each observed
//! component the new entity has. Direct `Registry` calls and bundle
//! inserts on existing entities fire nothing.

use std::any::TypeId;
use std::collections::HashSet;

use ecs_engine::{Component, ComponentId, Entity, Registry};

/// The moment of a component's life an observer runs after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hook {
    /// The component was inserted on an entity that did not have it.
    Add,
    /// The component was inserted, new or replacing a value (fired after
    /// [`Add`](Hook::Add) or [`Replace`](Hook::Replace)).
    Insert,
    /// An insert overwrote an existing value (the old value is gone by
    /// the time observers run).
    Replace,
    /// The component was removed from an entity that had it (the value is
    /// gone by the time observers run).
    Remove,
}

/// The component types some observer watches: a registry resource.
/// Commands on other types check one flag per buffer and fire nothing.
#[derive(Debug, Default)]
pub struct ObservedTypes {
    types: HashSet<TypeId>,
    /// The same types with their pools' ids, in the order they were first
    /// observed: the order a despawn fires their hooks in.
    ids: Vec<(ComponentId, TypeId)>,
}

impl ObservedTypes {
    /// Adds `T` (registering its pool in `registry` if needed) to the
    /// observed types of `registry`, creating the resource on first use.
    /// Observing a type twice keeps one entry.
    pub fn observe<T: Component>(registry: &mut Registry) {
        let id = registry.register::<T>();
        if registry.resource::<ObservedTypes>().is_none() {
            registry.insert_resource(ObservedTypes::default());
        }
        let observed = registry
            .resource_mut::<ObservedTypes>()
            .expect("inserted above");
        if observed.types.insert(TypeId::of::<T>()) {
            observed.ids.push((id, TypeId::of::<T>()));
        }
    }

    /// `true` when `ty` is observed.
    pub fn contains(&self, ty: TypeId) -> bool {
        self.types.contains(&ty)
    }
}

/// The hooks fired by applied commands and not yet handed to observers,
/// in the order the commands were applied: (hook, component type,
/// entity). A registry resource while some are pending.
#[derive(Debug, Default)]
pub struct FiredHooks(pub Vec<(Hook, TypeId, Entity)>);

/// `true` when the registry has any observed type at all (checked once
/// per buffer apply).
pub(crate) fn any_observed(registry: &Registry) -> bool {
    registry.contains_resource::<ObservedTypes>()
}

/// `true` when `T` is observed.
pub(crate) fn observed<T: Component>(registry: &Registry) -> bool {
    registry
        .resource::<ObservedTypes>()
        .is_some_and(|types| types.contains(TypeId::of::<T>()))
}

/// Appends to `out` a [`Hook::Remove`] for each observed component that
/// `entity` has and, when `recursive`, that each of its descendants has
/// (depth first, children in order): what despawning them will fire. To
/// be recorded with [`fire_all`] once the despawn succeeded.
pub(crate) fn despawn_hooks(
    registry: &Registry,
    entity: Entity,
    recursive: bool,
    out: &mut Vec<(Hook, TypeId, Entity)>,
) {
    let Some(observed) = registry.resource::<ObservedTypes>() else {
        return;
    };
    let mut stack = vec![entity];
    while let Some(entity) = stack.pop() {
        out.extend(
            observed
                .ids
                .iter()
                .filter(|&&(id, _)| registry.has_id(entity, id))
                .map(|&(_, ty)| (Hook::Remove, ty, entity)),
        );
        if recursive {
            stack.extend(registry.children(entity).iter().rev());
        }
    }
}

/// Records, for a just spawned `entity`, [`Hook::Add`] for each observed
/// component it has (its bundle's and their required components), then
/// [`Hook::Insert`] for each, as bevy fires `OnAdd` before `OnInsert`.
pub(crate) fn fire_spawned(registry: &mut Registry, entity: Entity) {
    let Some(observed) = registry.resource::<ObservedTypes>() else {
        return;
    };
    let has: Vec<TypeId> = observed
        .ids
        .iter()
        .filter(|&&(id, _)| registry.has_id(entity, id))
        .map(|&(_, ty)| ty)
        .collect();
    let fired = [Hook::Add, Hook::Insert]
        .into_iter()
        .flat_map(|hook| has.iter().map(move |&ty| (hook, ty, entity)));
    fire_all(registry, fired.collect());
}

/// The observed component types `entity` lacks, before an insert: those
/// the insert adds (the inserted type, and types it requires) fire
/// [`Hook::Add`] (see [`fire_inserted`]).
pub(crate) fn lacking(registry: &Registry, entity: Entity) -> Vec<(ComponentId, TypeId)> {
    registry
        .resource::<ObservedTypes>()
        .map(|observed| {
            observed
                .ids
                .iter()
                .copied()
                .filter(|&(id, _)| !registry.has_id(entity, id))
                .collect()
        })
        .unwrap_or_default()
}

/// Records the hooks of an insert of `T` on `entity` that replaced a value
/// or not: [`Hook::Add`] for each observed type of `lacking` the entity
/// now has (`T`'s required components included), [`Hook::Replace`] for a
/// replaced observed `T`, then [`Hook::Insert`] for `T` (when observed)
/// and each added type.
pub(crate) fn fire_inserted<T: Component>(
    registry: &mut Registry,
    entity: Entity,
    lacking: &[(ComponentId, TypeId)],
    replaced: bool,
) {
    let ty = TypeId::of::<T>();
    let added: Vec<TypeId> = lacking
        .iter()
        .filter(|&&(id, _)| registry.has_id(entity, id))
        .map(|&(_, ty)| ty)
        .collect();
    let watched = observed::<T>(registry);
    let mut fired: Vec<(Hook, TypeId, Entity)> =
        added.iter().map(|&t| (Hook::Add, t, entity)).collect();
    if watched && replaced {
        fired.push((Hook::Replace, ty, entity));
    }
    if watched && !added.contains(&ty) {
        fired.push((Hook::Insert, ty, entity));
    }
    fired.extend(added.iter().map(|&t| (Hook::Insert, t, entity)));
    fire_all(registry, fired);
}

/// Records hooks gathered by [`despawn_hooks`] or [`fire_spawned`].
pub(crate) fn fire_all(registry: &mut Registry, hooks: Vec<(Hook, TypeId, Entity)>) {
    if hooks.is_empty() {
        return;
    }
    match registry.resource_mut::<FiredHooks>() {
        Some(pending) => pending.0.extend(hooks),
        None => {
            registry.insert_resource(FiredHooks(hooks));
        }
    }
}

/// Records `hooks` about `T` on `entity`.
pub(crate) fn fire<T: Component>(registry: &mut Registry, entity: Entity, hooks: &[Hook]) {
    let fired = hooks.iter().map(|&hook| (hook, TypeId::of::<T>(), entity));
    fire_all(registry, fired.collect());
}
