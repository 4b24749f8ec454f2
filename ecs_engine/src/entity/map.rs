//! [`EntityMap`]: which entity of one registry became which entity of
//! another, and [`MapEntities`]: how a component's handle fields follow
//! that map when the component is copied across
//! ([`Registry::clone_entities_into`](crate::Registry::clone_entities_into)).

use std::collections::BTreeMap;

use super::Entity;

/// Source handle to destination handle, for copies of entities from one
/// registry into another. Filled by
/// [`Registry::clone_entities_into`](crate::Registry::clone_entities_into)
/// with every entity it copies; a caller may seed it beforehand (say, the
/// source's player to the destination's player), and an entity already in
/// the map is not copied again, so one map carries over several calls.
///
/// When a copied component's handle names an entity that is not in the
/// map, the handle becomes [`Entity::NULL`] (never alive, so it names
/// nothing in the destination instead of an unrelated entity), and
/// [`unmapped`](Self::unmapped) counts it.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, EntityMap, Registry};
///
/// let mut registry = Registry::new();
/// let (a, b) = (registry.spawn(()), registry.spawn(()));
/// let mut map = EntityMap::new();
/// assert_eq!(map.insert(a, b), None);
/// assert_eq!(map.get(a), Some(b));
/// assert_eq!(map.map(a), b);
/// assert_eq!(map.map(b), Entity::NULL); // not in the map
/// assert_eq!(map.unmapped(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityMap {
    map: BTreeMap<Entity, Entity>,
    unmapped: usize,
}

impl EntityMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The destination handle of `source`, if it is in the map.
    pub fn get(&self, source: Entity) -> Option<Entity> {
        self.map.get(&source).copied()
    }

    /// Maps `source` to `destination`; returns the destination it had.
    pub fn insert(&mut self, source: Entity, destination: Entity) -> Option<Entity> {
        self.map.insert(source, destination)
    }

    /// Removes `source` from the map; returns its destination.
    pub fn remove(&mut self, source: Entity) -> Option<Entity> {
        self.map.remove(&source)
    }

    /// The destination of a handle held by a copied component:
    /// [`get`](Self::get), or [`Entity::NULL`] (counted by
    /// [`unmapped`](Self::unmapped)) for a handle not in the map. A null
    /// handle stays null and is not counted.
    pub fn map(&mut self, source: Entity) -> Entity {
        if source.is_null() {
            return source;
        }
        self.get(source).unwrap_or_else(|| {
            self.count_unmapped();
            Entity::NULL
        })
    }

    /// Counts a handle that names nothing in the destination.
    pub(crate) fn count_unmapped(&mut self) {
        self.unmapped += 1;
    }

    /// How many handles [`map`](Self::map) replaced with [`Entity::NULL`]
    /// because they were not in the map (including a copied entity's parent
    /// left behind), since the map was made.
    pub fn unmapped(&self) -> usize {
        self.unmapped
    }

    /// The number of mapped entities.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// `true` when no entity is mapped.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// (source, destination) pairs, in the order of the source handles.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.map
            .iter()
            .map(|(&source, &destination)| (source, destination))
    }
}

/// A component that holds entity handles, and can point them at their
/// copies when it is copied into another registry (bevy's `MapEntities`).
/// Register it with
/// [`Registry::register_clone_mapped`](crate::Registry::register_clone_mapped).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, EntityMap, MapEntities};
///
/// #[derive(Clone)]
/// struct Target(Entity);
///
/// impl MapEntities for Target {
///     fn map_entities(&mut self, map: &mut EntityMap) {
///         self.0 = map.map(self.0);
///     }
/// }
/// ```
pub trait MapEntities {
    /// Replaces every handle the value holds with `map.map(handle)`.
    fn map_entities(&mut self, map: &mut EntityMap);
}
