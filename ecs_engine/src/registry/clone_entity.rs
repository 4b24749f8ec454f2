//! [`Registry::clone_entity`]: a new entity with copies of another's
//! components, through the per-type copies that in-memory states use
//! (`storage/pool_copy.rs`); [`Registry::clone_entities_into`]: copies of
//! entities in another registry, their handles following an
//! [`EntityMap`].

use std::borrow::Cow;

use super::Registry;
use crate::{Component, EcsError, Entity, EntityMap, MapEntities};

/// Why [`Registry::clone_entity`] made no clone; the registry is
/// unchanged then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloneEntityError {
    /// The entity is not alive, or the live-entity limit is reached.
    #[error("cannot clone entity: {0}")]
    Registry(#[from] EcsError),
    /// The entity has a component that cannot be copied (a Rust type
    /// whose clone was never registered with
    /// [`Registry::register_clone`], or a run-time component with a
    /// destructor).
    #[error(
        "cannot clone entity {entity}: its component `{component}` has no clone; call \
         `Registry::register_clone::<T>()` for it"
    )]
    NotClonable {
        /// The entity asked to clone.
        entity: Entity,
        /// The component's name (its type name for a Rust type).
        component: Cow<'static, str>,
    },
    /// The entity has a run-time component (of the C API), which cannot
    /// be copied into another registry: its id is this registry's own.
    #[error(
        "cannot copy entity {entity} into another registry: its run-time component \
         `{component}` has an id of this registry only"
    )]
    RunTimeComponent {
        /// The entity asked to copy.
        entity: Entity,
        /// The component's name.
        component: Cow<'static, str>,
    },
}

impl Registry {
    /// Spawns a new entity with a copy of each of `entity`'s components
    /// (each type's clone, registered with
    /// [`register_clone`](Self::register_clone); run-time components of
    /// plain bytes copied byte for byte). The copies are new components:
    /// they read as added now. In a hierarchy the clone gets `entity`'s
    /// parent (a sibling of it), never its children.
    ///
    /// # Errors
    ///
    /// [`CloneEntityError::Registry`] with [`EcsError::NoSuchEntity`] when
    /// `entity` is not alive, or [`EcsError::TooManyEntities`];
    /// [`CloneEntityError::NotClonable`] naming the first component of
    /// `entity` that has no clone. Nothing is spawned then.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Hp(u32);
    ///
    /// let mut registry = Registry::new();
    /// registry.register_clone::<Hp>();
    /// let orc = registry.spawn((Hp(7),));
    /// let twin = registry.clone_entity(orc).unwrap();
    /// assert_ne!(twin, orc);
    /// assert_eq!(registry.get::<Hp>(twin), Some(&Hp(7)));
    /// ```
    pub fn clone_entity(&mut self, entity: Entity) -> Result<Entity, CloneEntityError> {
        self.check_alive(entity)?;
        if let Some(info) = self.pools.first_unclonable(entity) {
            return Err(CloneEntityError::NotClonable {
                entity,
                component: info.name_cow(),
            });
        }
        let clone = self.allocator.allocate()?;
        self.pools.clone_components(entity, clone);
        if let Some(parent) = self.parent(entity) {
            self.set_parent(clone, parent)
                .expect("both are alive, and a sibling is never an ancestor");
        }
        Ok(clone)
    }

    /// [`register_clone`](Self::register_clone) for a type that holds
    /// entity handles: when [`clone_entities_into`](Self::clone_entities_into)
    /// copies a `T` into another registry, its handles follow the
    /// [`EntityMap`] (a [`clone_entity`](Self::clone_entity) within this
    /// registry keeps them: they still name the same entities).
    pub fn register_clone_mapped<T: Component + Clone + MapEntities>(&mut self) {
        self.pools.register_clone_mapped::<T>();
    }

    /// Copies `entities` into `dst`: each gets a new entity there with a
    /// copy of each of its components (each type's clone, see
    /// [`register_clone`](Self::register_clone)), recorded in `map`
    /// (source to copy). An entity already in `map` is not copied again.
    /// After every copy is made, components registered with
    /// [`register_clone_mapped`](Self::register_clone_mapped) have their
    /// handles mapped: a handle to an entity copied now (or mapped before)
    /// names its copy; any other becomes [`Entity::NULL`] and is counted
    /// by [`EntityMap::unmapped`]. The hierarchy follows the same rule: a
    /// copy's parent is the copy of its parent, in the source's child
    /// order; a parent not in the map (or not alive in `dst`) leaves the
    /// copy a root, counted as unmapped. The copies read as added now in
    /// `dst`. Hooks and required components do not run (a direct
    /// registry call).
    ///
    /// # Errors
    ///
    /// Checked before anything changes: [`CloneEntityError::Registry`] with
    /// [`EcsError::NoSuchEntity`] for an entity not alive here;
    /// [`CloneEntityError::NotClonable`] for a component whose type has no
    /// registered clone; [`CloneEntityError::RunTimeComponent`] for a
    /// run-time component. [`EcsError::TooManyEntities`] when `dst` runs out
    /// of handles; the copies made by this call are removed again then.
    /// `dst` and `map` are unchanged on every error.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Entity, EntityMap, MapEntities, Registry};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Name(&'static str);
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Follows(Entity);
    /// impl MapEntities for Follows {
    ///     fn map_entities(&mut self, map: &mut EntityMap) {
    ///         self.0 = map.map(self.0);
    ///     }
    /// }
    ///
    /// let mut level = Registry::new();
    /// level.register_clone::<Name>();
    /// level.register_clone_mapped::<Follows>();
    /// let leader = level.spawn((Name("leader"),));
    /// let scout = level.spawn((Name("scout"), Follows(leader)));
    ///
    /// let mut world = Registry::new();
    /// world.spawn((Name("already here"),));
    /// let mut map = EntityMap::new();
    /// level.clone_entities_into(&[leader, scout], &mut world, &mut map).unwrap();
    /// let (leader2, scout2) = (map.get(leader).unwrap(), map.get(scout).unwrap());
    /// assert_eq!(world.get::<Follows>(scout2), Some(&Follows(leader2)));
    /// assert_eq!(world.get::<Name>(leader2), Some(&Name("leader")));
    ///
    /// // A handle whose entity is not copied names nothing in the copy.
    /// let mut alone = EntityMap::new();
    /// level.clone_entities_into(&[scout], &mut world, &mut alone).unwrap();
    /// assert_eq!(world.get::<Follows>(alone.get(scout).unwrap()), Some(&Follows(Entity::NULL)));
    /// assert_eq!(alone.unmapped(), 1);
    /// ```
    pub fn clone_entities_into(
        &self,
        entities: &[Entity],
        dst: &mut Registry,
        map: &mut EntityMap,
    ) -> Result<(), CloneEntityError> {
        for &entity in entities {
            self.check_alive(entity)?;
            if let Some(info) = self.pools.first_unclonable_into(entity) {
                let component = info.name_cow();
                return Err(if info.type_id().is_some() {
                    CloneEntityError::NotClonable { entity, component }
                } else {
                    CloneEntityError::RunTimeComponent { entity, component }
                });
            }
        }
        let mut copied: Vec<(Entity, Entity)> = Vec::new();
        for &entity in entities {
            if map.get(entity).is_some() {
                continue;
            }
            match dst.allocator.allocate() {
                Ok(copy) => {
                    map.insert(entity, copy);
                    copied.push((entity, copy));
                }
                Err(error) => {
                    for &(source, copy) in &copied {
                        map.remove(source);
                        dst.despawn(copy)
                            .expect("allocated by this call, with no component");
                    }
                    return Err(error.into());
                }
            }
        }
        for &(source, copy) in &copied {
            self.pools
                .clone_components_into(source, &mut dst.pools, copy, map);
        }
        self.link_copies(&copied, dst, map);
        Ok(())
    }

    /// [`clone_entities_into`](Self::clone_entities_into) for one entity:
    /// returns its copy in `dst`.
    ///
    /// # Errors
    ///
    /// As [`clone_entities_into`](Self::clone_entities_into).
    pub fn clone_entity_into(
        &self,
        entity: Entity,
        dst: &mut Registry,
        map: &mut EntityMap,
    ) -> Result<Entity, CloneEntityError> {
        self.clone_entities_into(&[entity], dst, map)?;
        Ok(map.get(entity).expect("a copied entity is in the map"))
    }

    /// Gives each copy in `dst` the copy of its parent (see
    /// [`clone_entities_into`](Self::clone_entities_into)), siblings in the
    /// source's order.
    fn link_copies(&self, copied: &[(Entity, Entity)], dst: &mut Registry, map: &mut EntityMap) {
        let fresh: std::collections::BTreeSet<Entity> =
            copied.iter().map(|&(source, _)| source).collect();
        let mut parents_done = std::collections::BTreeSet::new();
        for &(source, _) in copied {
            let Some(parent) = self.parent(source) else {
                continue;
            };
            let parent_copy = map.map(parent);
            if !dst.is_alive(parent_copy) {
                if !parent_copy.is_null() {
                    map.count_unmapped();
                }
                continue;
            }
            if !parents_done.insert(parent) {
                continue;
            }
            for &child in self.children(parent).iter().filter(|c| fresh.contains(c)) {
                let child_copy = map.get(child).expect("a copied entity is in the map");
                dst.set_parent(child_copy, parent_copy)
                    .expect("both are alive, and a fresh copy is no one's ancestor");
            }
        }
    }
}
