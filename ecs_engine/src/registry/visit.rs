//! `Registry` methods that change entities while walking them: `visit`
//! (with the [`EntityChanges`] it hands out) and `retain`.

use super::Registry;
use crate::{Component, Entity, QueryData};

impl Registry {
    /// Visits every entity matching `Q` once, like [`View::each_with_entity`](crate::View::each_with_entity),
    /// and lets the closure despawn the visited entity or remove its
    /// components through [`EntityChanges`]. The changes are applied when
    /// the pass ends, so every other entity is still visited exactly once;
    /// returns the number of changes that took effect (a removal of a
    /// component the entity lacks, or any change after its despawn, does
    /// not count).
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut).
    #[track_caller]
    pub fn visit<Q: QueryData>(
        &mut self,
        mut f: impl FnMut(Entity, Q::Item<'_>, &mut EntityChanges),
    ) -> usize {
        let mut changes = EntityChanges::default();
        self.view_mut::<Q>().each_with_entity(|entity, item| {
            changes.entity = entity;
            f(entity, item, &mut changes);
        });
        let mut applied = 0;
        for (entity, change) in changes.pending {
            // An entity despawned by an earlier change of this pass is skipped.
            if self.is_alive(entity) {
                applied += match change {
                    Change::Despawn => {
                        self.despawn(entity).expect("checked alive");
                        1
                    }
                    Change::Remove(remove) => usize::from(remove(self, entity)),
                };
            }
        }
        applied
    }

    /// Despawns every entity matching `Q` for which `keep` returns `false`;
    /// returns how many were despawned.
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut).
    #[track_caller]
    pub fn retain<Q: QueryData>(&mut self, mut keep: impl FnMut(Q::Item<'_>) -> bool) -> usize {
        self.visit::<Q>(|_, item, changes| {
            if !keep(item) {
                changes.despawn();
            }
        })
    }
}

/// Removes one component type from an entity; `true` if it had one.
type RemoveFn = fn(&mut Registry, Entity) -> bool;

enum Change {
    Despawn,
    Remove(RemoveFn),
}

/// Structural changes to the entity being visited by [`Registry::visit`],
/// applied when the pass ends.
#[derive(Default)]
pub struct EntityChanges {
    entity: Entity,
    pending: Vec<(Entity, Change)>,
}

impl std::fmt::Debug for EntityChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityChanges")
            .field("entity", &self.entity)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl EntityChanges {
    /// Despawns the visited entity when the pass ends.
    pub fn despawn(&mut self) {
        self.pending.push((self.entity, Change::Despawn));
    }

    /// Removes (and drops) the visited entity's `T` when the pass ends.
    pub fn remove<T: Component>(&mut self) {
        fn remove<T: Component>(registry: &mut Registry, entity: Entity) -> bool {
            registry
                .pools
                .get_mut::<T>()
                .is_some_and(|pool| pool.remove(entity).is_some())
        }
        self.pending
            .push((self.entity, Change::Remove(remove::<T>)));
    }
}
