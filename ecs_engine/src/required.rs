//! Required components (bevy's `#[require(B)]`): registering `A` as
//! requiring `B` makes every insert of an `A` (spawn, insert, a bundle, the
//! batch paths the command buffers apply through) also insert a `B`, made
//! by its constructor, when the entity has none.
//!
//! # Order and termination
//!
//! After the components given are in, each is visited in bundle order;
//! for each, its requirements in registration order: a missing one is
//! inserted and its own requirements are visited at once (depth first).
//! A component the entity already has (given, or inserted earlier in the
//! walk) is left alone, so what was given always wins, and a cycle (`A`
//! requires `B`, `B` requires `A`) ends: every step inserts a type the
//! entity lacked.
//!
//! # Cost
//!
//! None for a registry with no requirement: each insert path checks one
//! `bool`. With requirements, an insert looks its types up in one hash
//! map keyed by `TypeId` (types without requirements stop there), and a
//! batch of a type with requirements (`insert_many`, `spawn_batch`,
//! `spawn_reserved_batch`) goes one entity at a time.
//!
//! Components inserted by raw id ([`RawComponent`](crate::RawComponent))
//! and the hierarchy's links do not take part.

use std::any::TypeId;
use std::sync::Arc;

use crate::{Component, EcsError, Entity, Registry, TypeIdMap};

/// Inserts the required component into an entity that lacks it (and then
/// its own requirements); `false` when the entity had it.
type Insert = Arc<dyn Fn(&mut Registry, Entity) -> bool + Send + Sync>;

/// [`Registry::fill_required`] for each of `types` in order (a bundle's),
/// out of line so that the insert paths stay as small as without
/// requirements.
#[cold]
#[inline(never)]
pub(crate) fn fill_types(registry: &mut Registry, entity: Entity, types: &[TypeId]) {
    for &id in types {
        registry.fill_required(id, entity);
    }
}

/// One requirement: the required type and how to insert it.
#[derive(Clone)]
struct Requirement {
    target: TypeId,
    insert: Insert,
}

/// Every requirement of a registry, by requiring type.
#[derive(Default, Clone)]
pub(crate) struct Requirements {
    /// The requirements of each type that has some, in registration order
    /// (shared, so a walk holds them while it inserts).
    by_type: TypeIdMap<Arc<[Requirement]>>,
}

impl std::fmt::Debug for Requirements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requirements")
            .field("types", &self.by_type.len())
            .finish()
    }
}

impl Requirements {
    /// `true` when no type has a requirement: every insert path skips the
    /// walk on this one check.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.by_type.is_empty()
    }

    /// `true` when type `id` has requirements.
    #[inline]
    pub(crate) fn has(&self, id: TypeId) -> bool {
        !self.is_empty() && self.by_type.contains_key(&id)
    }
}

impl Registry {
    /// Registers component `A` as requiring `B`, made by `B::default()`:
    /// from now on, inserting an `A` into an entity without a `B` inserts
    /// one too (see [`register_required_with`](Self::register_required_with)
    /// for the rules).
    ///
    /// # Errors
    ///
    /// As [`register_required_with`](Self::register_required_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Health(u32);
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Armor(u32);
    /// struct Player;
    ///
    /// let mut registry = Registry::new();
    /// registry.register_required::<Player, Health>().unwrap();
    /// registry.register_required::<Health, Armor>().unwrap(); // transitive
    /// let a = registry.spawn((Player,));
    /// assert_eq!(registry.get::<Health>(a), Some(&Health(0)));
    /// assert_eq!(registry.get::<Armor>(a), Some(&Armor(0)));
    /// // A value given wins over the requirement.
    /// let b = registry.spawn((Player, Health(100)));
    /// assert_eq!(registry.get::<Health>(b), Some(&Health(100)));
    /// ```
    pub fn register_required<A: Component, B: Component + Default>(
        &mut self,
    ) -> Result<(), EcsError> {
        self.register_required_with::<A, B>(B::default)
    }

    /// Registers component `A` as requiring `B`, made by `constructor`:
    /// from now on every insert of an `A` (by
    /// [`spawn`](Self::spawn), [`insert`](Self::insert),
    /// [`insert_bundle`](Self::insert_bundle), the batch paths and the
    /// command buffers, which use them) into an entity without a `B`
    /// inserts `constructor()` too, and then what `B` requires, and so on.
    /// The components given are visited in bundle order, each one's
    /// requirements in registration order, depth first; a type the entity
    /// already has is left alone, so given values win and a cycle (`A`
    /// requires `B`, `B` requires `A`) ends. Entities that already have an
    /// `A` are not changed. Components inserted by raw id and the
    /// hierarchy's links take no part.
    ///
    /// A registry without requirements pays one `bool` check per insert;
    /// with some, an insert looks its types up in a `TypeId` map, and a
    /// batch of a type with requirements goes one entity at a time.
    /// Registering `A` → `B` again replaces the constructor, keeping its
    /// place in the order.
    ///
    /// # Errors
    ///
    /// [`EcsError::ReadOnlyComponent`] when `A` or `B` is
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children): links
    /// change only through [`set_parent`](Self::set_parent) and its kin.
    pub fn register_required_with<A: Component, B: Component>(
        &mut self,
        constructor: impl Fn() -> B + Send + Sync + 'static,
    ) -> Result<(), EcsError> {
        for (is_link, name) in [
            (
                crate::hierarchy::is_hierarchy::<A>(),
                std::any::type_name::<A>(),
            ),
            (
                crate::hierarchy::is_hierarchy::<B>(),
                std::any::type_name::<B>(),
            ),
        ] {
            if is_link {
                return Err(EcsError::ReadOnlyComponent {
                    component: name.into(),
                });
            }
        }
        let insert: Insert = Arc::new(move |registry: &mut Registry, entity: Entity| {
            let pool = registry.pools.get_or_create::<B>();
            if pool.contains(entity) {
                return false;
            }
            drop(pool.insert_live(entity, constructor()));
            registry.fill_required(TypeId::of::<B>(), entity);
            true
        });
        let requirement = Requirement {
            target: TypeId::of::<B>(),
            insert,
        };
        let mut list: Vec<Requirement> = self
            .required
            .by_type
            .get(&TypeId::of::<A>())
            .map(|list| list.to_vec())
            .unwrap_or_default();
        match list.iter_mut().find(|r| r.target == requirement.target) {
            Some(existing) => *existing = requirement,
            None => list.push(requirement),
        }
        self.required.by_type.insert(TypeId::of::<A>(), list.into());
        Ok(())
    }

    /// Inserts what type `id`'s requirements name into `entity` where it
    /// lacks them, depth first. Out of line: the insert paths only test
    /// [`Requirements::is_empty`] before calling it.
    #[cold]
    #[inline(never)]
    pub(crate) fn fill_required(&mut self, id: TypeId, entity: Entity) {
        let Some(list) = self.required.by_type.get(&id).cloned() else {
            return;
        };
        for requirement in list.iter() {
            (requirement.insert)(self, entity);
        }
    }

    /// [`insert_many`](Self::insert_many) one item at a time, for a type
    /// with requirements: the same results, each insert followed by its
    /// requirements.
    pub(crate) fn insert_each<T: Component>(
        &mut self,
        items: &mut impl Iterator<Item = (Entity, T)>,
    ) -> (usize, Result<(), crate::InsertError<T>>) {
        let mut done = 0;
        for (entity, value) in items {
            if !self.is_alive(entity) {
                let error = EcsError::NoSuchEntity { entity };
                return (done, Err(crate::InsertError { error, value }));
            }
            drop(self.insert(entity, value));
            done += 1;
        }
        (done, Ok(()))
    }

    /// [`fill_required`](Self::fill_required) for `T`, after an insert of
    /// a `T`: one check when no type has requirements.
    #[inline]
    pub(crate) fn after_insert<T: Component>(&mut self, entity: Entity) {
        if !self.required.is_empty() {
            self.fill_required(TypeId::of::<T>(), entity);
        }
    }
}
