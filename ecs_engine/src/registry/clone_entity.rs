//! [`Registry::clone_entity`]: a new entity with copies of another's
//! components, through the per-type copies that in-memory states use
//! (`storage/pool_copy.rs`).

use std::borrow::Cow;

use super::Registry;
use crate::{EcsError, Entity};

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
}
