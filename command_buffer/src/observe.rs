//! What applying commands tells observers: the component types someone
//! observes ([`ObservedTypes`], a registry resource the scheduler keeps)
//! and the hooks fired by the commands applied since the scheduler last
//! looked ([`FiredHooks`], a registry resource while some are pending).
//!
//! Only commands fire hooks, each once it succeeded (a command on a dead
//! handle fires nothing):
//!
//! - [`insert`](crate::CommandBuffer::insert) of one component and
//!   [`insert_bundle`](crate::CommandBuffer::insert_bundle) (so
//!   `entity(e).insert(..)`): [`Hook::Add`] for each observed component
//!   the entity lacked and now has (the inserted ones and those they
//!   require), [`Hook::Replace`] then [`Hook::Insert`] for each observed
//!   inserted value that overwrote one, then [`Hook::Insert`] for each
//!   added one; each group in the order the types were first observed;
//! - [`spawn`](crate::CommandBuffer::spawn): [`Hook::Add`] then
//!   [`Hook::Insert`] for each observed component the new entity has;
//! - [`remove`](crate::CommandBuffer::remove),
//!   [`remove_bundle`](crate::CommandBuffer::remove_bundle) and
//!   [`remove_by_id`](crate::CommandBuffer::remove_by_id):
//!   [`Hook::Remove`] for each observed component the entity had;
//! - [`despawn`](crate::CommandBuffer::despawn) and
//!   [`despawn_recursive`](crate::CommandBuffer::despawn_recursive):
//!   [`Hook::Remove`] for each observed component of each despawned
//!   entity (the root, then its descendants depth first);
//! - the hierarchy: an observed [`ChildOf`] fires [`Hook::Add`] and
//!   [`Hook::Insert`] when a child is attached
//!   ([`set_parent`](crate::CommandBuffer::set_parent), `add_child`,
//!   `with_children`), [`Hook::Replace`] and [`Hook::Insert`] when it
//!   moves to another parent, [`Hook::Remove`] when it is detached (by
//!   `remove_parent`, or the despawn of its parent); an observed
//!   [`Children`] fires [`Hook::Add`] and [`Hook::Insert`] when a parent
//!   gets its first child and [`Hook::Remove`] when it loses its last (a
//!   despawned child included); a list that only grows or shrinks is
//!   changed in place and fires nothing, as bevy's `Children`;
//! - [`disable_recursive`](crate::CommandBuffer::disable_recursive) and
//!   `enable_recursive`: an observed [`Disabled`](ecs_engine::Disabled)
//!   fires [`Hook::Add`] and [`Hook::Insert`] (or [`Hook::Remove`]) on
//!   each entity of the subtree whose marker changed, depth first.
//!
//! Direct `Registry` calls, [`push`](crate::CommandBuffer::push)ed
//! closures and [`insert_raw`](crate::CommandBuffer::insert_raw) (a
//! run-time component, which no type names) fire nothing. A world with no
//! observed type checks one flag per buffer apply and keeps every batched
//! path.

use std::any::TypeId;
use std::collections::HashSet;

use ecs_engine::{Bundle, ChildOf, Children, Component, ComponentId, Entity, Registry};

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

/// `true` when inserting a `B` may fire hooks: one of its types is
/// observed, or one has required components (which may be). A bundle of
/// unobserved types without required components is inserted as in an
/// unobserved world.
pub(crate) fn insert_concerns<B: Bundle>(registry: &Registry) -> bool {
    B::has_required(registry)
        || registry
            .resource::<ObservedTypes>()
            .is_some_and(|observed| observed.ids.iter().any(|&(_, ty)| B::has_type(ty)))
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
/// the insert adds (the inserted types, and types they require) fire
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

/// Records the hooks of an insert on `entity` of the component types for
/// which `inserted` is `true` (one type for `insert`, a bundle's for
/// `insert_bundle`), given what the entity `lacking` before it:
/// [`Hook::Add`] for each observed type of `lacking` the entity now has
/// (required components included), [`Hook::Replace`] for each observed
/// inserted type it had (its value overwritten), [`Hook::Insert`] for
/// those replaced ones, then [`Hook::Insert`] for each added type. Each
/// group in the order the types were first observed.
pub(crate) fn fire_inserted(
    registry: &mut Registry,
    entity: Entity,
    lacking: &[(ComponentId, TypeId)],
    inserted: impl Fn(TypeId) -> bool,
) {
    let Some(observed) = registry.resource::<ObservedTypes>() else {
        return;
    };
    let added = || {
        lacking
            .iter()
            .filter(|&&(id, _)| registry.has_id(entity, id))
            .map(|&(_, ty)| ty)
    };
    let replaced = || {
        observed
            .ids
            .iter()
            .filter(|&&(id, ty)| inserted(ty) && !lacking.iter().any(|&(l, _)| l == id))
            .map(|&(_, ty)| ty)
    };
    let fired: Vec<(Hook, TypeId, Entity)> = (added().map(|t| (Hook::Add, t, entity)))
        .chain(replaced().map(|t| (Hook::Replace, t, entity)))
        .chain(replaced().map(|t| (Hook::Insert, t, entity)))
        .chain(added().map(|t| (Hook::Insert, t, entity)))
        .collect();
    fire_all(registry, fired);
}

/// The observed component types among those for which `removed` is
/// `true` that `entity` has, in first-observed order: what removing them
/// fires [`Hook::Remove`] for (see [`fire_removed`]).
pub(crate) fn present(
    registry: &Registry,
    entity: Entity,
    removed: impl Fn(ComponentId, TypeId) -> bool,
) -> Vec<TypeId> {
    let Some(observed) = registry.resource::<ObservedTypes>() else {
        return Vec::new();
    };
    observed
        .ids
        .iter()
        .filter(|&&(id, ty)| removed(id, ty) && registry.has_id(entity, id))
        .map(|&(_, ty)| ty)
        .collect()
}

/// Records [`Hook::Remove`] on `entity` for each type of `present` (as
/// [`present`] found them before a removal that succeeded).
pub(crate) fn fire_removed(registry: &mut Registry, entity: Entity, present: Vec<TypeId>) {
    let fired = present.into_iter().map(|ty| (Hook::Remove, ty, entity));
    fire_all(registry, fired.collect());
}

/// `true` when `ty` is [`ChildOf`] or [`Children`], whose changes reach
/// other entities (a parent's list, a child's link).
#[inline(always)]
pub(crate) fn is_link(ty: TypeId) -> bool {
    ty == TypeId::of::<ChildOf>() || ty == TypeId::of::<Children>()
}

/// The [`ChildOf`] and [`Children`] a hierarchy change may add or remove
/// on entities besides its target, as they were before it: taken by
/// [`links_before`] only when one of the two types is observed, and
/// turned into hooks by [`fire_links`].
pub(crate) struct Links {
    /// The observed ones of `ChildOf` and `Children`, in first-observed
    /// order.
    types: Vec<(ComponentId, TypeId)>,
    /// Each entity watched, and which of `types` it had (bit `i` for
    /// `types[i]`).
    before: Vec<(Entity, u8)>,
}

/// Which of `types` `entity` has, bit `i` for `types[i]`.
fn link_bits(registry: &Registry, entity: Entity, types: &[(ComponentId, TypeId)]) -> u8 {
    types
        .iter()
        .enumerate()
        .filter(|&(_, &(id, _))| registry.has_id(entity, id))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Takes the [`Links`] of `entities` (duplicates kept once) before a
/// hierarchy change; `None`, at the cost of one scan of the observed
/// types, when neither `ChildOf` nor `Children` is observed.
pub(crate) fn links_before(
    registry: &Registry,
    entities: impl IntoIterator<Item = Entity>,
) -> Option<Links> {
    let observed = registry.resource::<ObservedTypes>()?;
    let types: Vec<(ComponentId, TypeId)> = observed
        .ids
        .iter()
        .copied()
        .filter(|&(_, ty)| is_link(ty))
        .collect();
    if types.is_empty() {
        return None;
    }
    let mut before: Vec<(Entity, u8)> = Vec::new();
    for entity in entities {
        if !before.iter().any(|&(e, _)| e == entity) {
            before.push((entity, link_bits(registry, entity, &types)));
        }
    }
    Some(Links { types, before })
}

/// The entities a change of `target`'s links reaches: its parent and,
/// when `children`, its children (in order).
pub(crate) fn neighbours(
    registry: &Registry,
    target: Entity,
    children: bool,
) -> impl Iterator<Item = Entity> + '_ {
    let children = if children {
        registry.children(target)
    } else {
        &[]
    };
    registry
        .parent(target)
        .into_iter()
        .chain(children.iter().copied())
}

/// Records the hooks of what a hierarchy change did to the entities of
/// `links` that are still alive, in their order: per entity, [`Hook::Add`]
/// then [`Hook::Insert`] for an observed `ChildOf`/`Children` it gained,
/// [`Hook::Replace`] then [`Hook::Insert`] for the `ChildOf` of
/// `relinked` (a child moved to another parent), and [`Hook::Remove`] for
/// one it lost. A list that only grew or shrank fires nothing (it is
/// changed in place, as bevy's relationship hooks change `Children`).
pub(crate) fn fire_links(registry: &mut Registry, links: Option<Links>, relinked: Option<Entity>) {
    let Some(Links { types, before }) = links else {
        return;
    };
    let mut fired = Vec::new();
    for (entity, had) in before {
        if !registry.is_alive(entity) {
            continue;
        }
        let has = link_bits(registry, entity, &types);
        let child_of = types
            .iter()
            .position(|&(_, ty)| ty == TypeId::of::<ChildOf>())
            .map_or(0, |i| 1 << i);
        let replaced = if relinked == Some(entity) {
            had & has & child_of
        } else {
            0
        };
        let of = |bits: u8| {
            types
                .iter()
                .enumerate()
                .filter(move |&(i, _)| bits & 1 << i != 0)
                .map(|(_, &(_, ty))| ty)
        };
        let (added, removed) = (has & !had, had & !has);
        fired.extend(of(added).map(|ty| (Hook::Add, ty, entity)));
        fired.extend(of(replaced).map(|ty| (Hook::Replace, ty, entity)));
        fired.extend(of(replaced | added).map(|ty| (Hook::Insert, ty, entity)));
        fired.extend(of(removed).map(|ty| (Hook::Remove, ty, entity)));
    }
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
