//! What applying commands tells observers: the component types someone
//! observes ([`ObservedTypes`], a registry resource the scheduler keeps)
//! and the hooks fired by the commands applied since the scheduler last
//! looked ([`FiredHooks`], a registry resource while some are pending).
//!
//! Only commands fire hooks: [`Insert`](crate::CommandBuffer::insert) and
//! [`Remove`](crate::CommandBuffer::remove) of one component. Direct
//! `Registry` calls, bundles, spawns and despawns fire nothing.

use std::any::TypeId;
use std::collections::HashSet;

use ecs_engine::{Component, Entity, Registry};

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
pub struct ObservedTypes(pub HashSet<TypeId>);

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
        .is_some_and(|types| types.0.contains(&TypeId::of::<T>()))
}

/// Records `hooks` about `T` on `entity`.
pub(crate) fn fire<T: Component>(registry: &mut Registry, entity: Entity, hooks: &[Hook]) {
    let fired = hooks.iter().map(|&hook| (hook, TypeId::of::<T>(), entity));
    match registry.resource_mut::<FiredHooks>() {
        Some(pending) => pending.0.extend(fired),
        None => {
            registry.insert_resource(FiredHooks(fired.collect()));
        }
    }
}
