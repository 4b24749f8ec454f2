//! The hierarchy as plain data, for snapshots: every [`ChildOf`] link and
//! every [`Children`] list, each in its pool's dense order, exported by
//! [`Registry::export_hierarchy`], checked by [`HierarchyState::check`]
//! and put back by [`Registry::restore_hierarchy`], so a loaded registry
//! has the same links, the same child order and the same pool order (so
//! views over either type visit entities in the same order).

use std::collections::HashMap;

use super::{ChildOf, Children};
use crate::{Entity, EntityAllocator, Registry};

/// Every parent/child link of a registry: see
/// [`Registry::export_hierarchy`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HierarchyState {
    /// `(child, parent)` for every entity with a [`ChildOf`], in the
    /// `ChildOf` pool's dense order.
    pub links: Vec<(Entity, Entity)>,
    /// `(parent, children)` for every entity with [`Children`], the
    /// children in attachment order, in the `Children` pool's dense order.
    pub lists: Vec<(Entity, Vec<Entity>)>,
}

/// Why a [`HierarchyState`] was refused: the first inconsistency, naming
/// the entity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HierarchyStateError {
    /// An entity of a link or list is not alive.
    #[error("hierarchy: entity {entity} is not alive")]
    NotAlive {
        /// The entity.
        entity: Entity,
    },
    /// A child has two links, or appears in two lists or twice in one.
    #[error("hierarchy: child {child} is linked or listed twice")]
    DuplicateChild {
        /// The child.
        child: Entity,
    },
    /// A parent has two lists, or an empty one.
    #[error("hierarchy: parent {parent} has two lists or an empty one")]
    BadList {
        /// The parent.
        parent: Entity,
    },
    /// A link and the lists disagree: the child is not in its parent's
    /// list, or is listed under another parent.
    #[error("hierarchy: the link of child {child} to {parent} does not match the lists")]
    Mismatch {
        /// The child.
        child: Entity,
        /// Its parent by its link (or by the list it is in, when it has no
        /// link).
        parent: Entity,
    },
    /// Following the links from this child comes back to it.
    #[error("hierarchy: the links from {child} form a cycle")]
    Cycle {
        /// An entity on the cycle.
        child: Entity,
    },
    /// [`Registry::restore_hierarchy`] found `ChildOf` or `Children`
    /// components already there.
    #[error("hierarchy: the registry already has ChildOf or Children components")]
    NotEmpty,
}

impl HierarchyState {
    /// Checks the invariants of the [hierarchy module](crate::ChildOf)
    /// against `allocator`: every entity alive, each child linked once and
    /// listed once under its parent, no empty list, no cycle.
    ///
    /// # Errors
    ///
    /// The first [`HierarchyStateError`] found.
    pub fn check(&self, allocator: &EntityAllocator) -> Result<(), HierarchyStateError> {
        let alive = |entity: Entity| {
            if allocator.is_alive(entity) {
                Ok(())
            } else {
                Err(HierarchyStateError::NotAlive { entity })
            }
        };
        let mut parent_of: HashMap<Entity, Entity> = HashMap::with_capacity(self.links.len());
        for &(child, parent) in &self.links {
            alive(child)?;
            alive(parent)?;
            if parent_of.insert(child, parent).is_some() {
                return Err(HierarchyStateError::DuplicateChild { child });
            }
        }
        let mut listed: HashMap<Entity, ()> = HashMap::with_capacity(self.links.len());
        let mut parents: HashMap<Entity, ()> = HashMap::with_capacity(self.lists.len());
        for (parent, children) in &self.lists {
            alive(*parent)?;
            if children.is_empty() || parents.insert(*parent, ()).is_some() {
                return Err(HierarchyStateError::BadList { parent: *parent });
            }
            for &child in children {
                alive(child)?;
                if parent_of.get(&child) != Some(parent) {
                    return Err(HierarchyStateError::Mismatch {
                        child,
                        parent: *parent,
                    });
                }
                if listed.insert(child, ()).is_some() {
                    return Err(HierarchyStateError::DuplicateChild { child });
                }
            }
        }
        if let Some(&(child, parent)) = self.links.iter().find(|(c, _)| !listed.contains_key(c)) {
            return Err(HierarchyStateError::Mismatch { child, parent });
        }
        // No cycle: walk up from each child, marking the walked path; a
        // walk that meets its own path is a cycle, one that meets an
        // earlier walk's is not.
        let mut walk_of: HashMap<Entity, usize> = HashMap::with_capacity(self.links.len());
        for (walk, &(start, _)) in self.links.iter().enumerate() {
            let mut at = start;
            loop {
                match walk_of.get(&at) {
                    Some(&w) if w == walk => {
                        return Err(HierarchyStateError::Cycle { child: at });
                    }
                    Some(_) => break,
                    None => {
                        walk_of.insert(at, walk);
                    }
                }
                match parent_of.get(&at) {
                    Some(&parent) => at = parent,
                    None => break,
                }
            }
        }
        Ok(())
    }
}

impl Registry {
    /// Every [`ChildOf`] link and [`Children`] list, each in its pool's
    /// dense order (see [`HierarchyState`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let (ship, turret) = (registry.spawn(()), registry.spawn(()));
    /// registry.set_parent(turret, ship).unwrap();
    /// let state = registry.export_hierarchy();
    /// assert_eq!(state.links, [(turret, ship)]);
    /// assert_eq!(state.lists, [(ship, vec![turret])]);
    ///
    /// let mut copy = Registry::new();
    /// copy.replace_entities(registry.entities().clone());
    /// copy.restore_hierarchy(state).unwrap();
    /// assert_eq!(copy.children(ship), [turret]);
    /// ```
    pub fn export_hierarchy(&self) -> HierarchyState {
        let links = self.pools.get::<ChildOf>().map_or_else(Vec::new, |pool| {
            pool.entities()
                .iter()
                .zip(pool.components())
                .map(|(&child, link)| (child, link.parent))
                .collect()
        });
        let lists = self.pools.get::<Children>().map_or_else(Vec::new, |pool| {
            pool.entities()
                .iter()
                .zip(pool.components())
                .map(|(&parent, children)| (parent, children.list.clone()))
                .collect()
        });
        HierarchyState { links, lists }
    }

    /// Puts a checked [`HierarchyState`] back: inserts the [`ChildOf`]
    /// links and [`Children`] lists in their saved order, into a registry
    /// that has none (after [`replace_entities`](Self::replace_entities)).
    ///
    /// # Errors
    ///
    /// [`HierarchyStateError::NotEmpty`] when the registry already has
    /// `ChildOf` or `Children` components; what
    /// [`HierarchyState::check`] finds against this registry's entities.
    /// Nothing changes then.
    pub fn restore_hierarchy(&mut self, state: HierarchyState) -> Result<(), HierarchyStateError> {
        if self.count::<ChildOf>() + self.count::<Children>() > 0 {
            return Err(HierarchyStateError::NotEmpty);
        }
        state.check(&self.allocator)?;
        if state.links.is_empty() {
            return Ok(());
        }
        self.has_hierarchy = true;
        let links = self.pools.get_or_create::<ChildOf>();
        for (child, parent) in state.links {
            links.insert_live(child, ChildOf { parent });
        }
        let lists = self.pools.get_or_create::<Children>();
        for (parent, list) in state.lists {
            lists.insert_live(parent, Children { list });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family() -> (Registry, Vec<Entity>) {
        let mut registry = Registry::new();
        let e: Vec<Entity> = (0..6).map(|_| registry.spawn(())).collect();
        registry.set_parent(e[1], e[0]).unwrap();
        registry.set_parent(e[2], e[3]).unwrap();
        registry.set_parent(e[4], e[0]).unwrap();
        registry.set_parent(e[5], e[4]).unwrap();
        // Re-attached: last in e[0]'s list, its ChildOf keeps its place.
        registry.set_parent(e[1], e[3]).unwrap();
        registry.set_parent(e[1], e[0]).unwrap();
        (registry, e)
    }

    #[test]
    fn export_and_restore_keep_links_lists_and_pool_order() {
        let (registry, e) = family();
        let state = registry.export_hierarchy();
        assert_eq!(
            state.links,
            [(e[1], e[0]), (e[2], e[3]), (e[4], e[0]), (e[5], e[4])]
        );
        assert_eq!(
            state.lists,
            [
                (e[0], vec![e[4], e[1]]),
                (e[3], vec![e[2]]),
                (e[4], vec![e[5]])
            ]
        );
        let mut copy = Registry::new();
        copy.replace_entities(registry.entities().clone());
        copy.restore_hierarchy(state.clone()).unwrap();
        assert_eq!(copy.export_hierarchy(), state);
        assert_eq!(copy.root(e[5]), Some(e[0]));
        // Despawn keeps the lists consistent after a restore too.
        copy.despawn(e[4]).unwrap();
        assert_eq!(copy.children(e[0]), [e[1]]);
        assert_eq!(copy.parent(e[5]), None);
        assert_eq!(
            copy.restore_hierarchy(state),
            Err(HierarchyStateError::NotEmpty)
        );
    }

    #[test]
    fn inconsistent_states_are_refused() {
        let (registry, e) = family();
        let good = registry.export_hierarchy();
        let alloc = registry.entities();
        let check = |change: &dyn Fn(&mut HierarchyState), expected: HierarchyStateError| {
            let mut state = good.clone();
            change(&mut state);
            assert_eq!(state.check(alloc), Err(expected));
        };
        check(
            &|s| s.links[0].1 = Entity::NULL,
            HierarchyStateError::NotAlive {
                entity: Entity::NULL,
            },
        );
        check(
            &|s| s.links.push((e[1], e[0])),
            HierarchyStateError::DuplicateChild { child: e[1] },
        );
        check(
            &|s| s.lists[1].1.clear(),
            HierarchyStateError::BadList { parent: e[3] },
        );
        check(
            &|s| {
                s.lists[0].1.retain(|&c| c != e[1]);
                s.lists[1].1.push(e[1]);
            },
            HierarchyStateError::Mismatch {
                child: e[1],
                parent: e[3],
            },
        );
        check(
            &|s| s.lists[0].1.push(e[2]),
            HierarchyStateError::Mismatch {
                child: e[2],
                parent: e[0],
            },
        );
        check(
            &|s| {
                s.lists[2].1.pop();
            },
            HierarchyStateError::BadList { parent: e[4] },
        );
        check(
            &|s| {
                s.lists.pop();
            },
            HierarchyStateError::Mismatch {
                child: e[5],
                parent: e[4],
            },
        );
        // e[0] under e[5]: a cycle e[0] -> e[5] -> e[4] -> e[0].
        check(
            &|s| {
                s.links.push((e[0], e[5]));
                s.lists.push((e[5], vec![e[0]]));
            },
            HierarchyStateError::Cycle { child: e[0] },
        );
        assert_eq!(good.check(alloc), Ok(()));
    }
}
