//! The world checksum of the harness's scenarios: the facade's
//! [`world_checksum`](ecs_runtime::checksum::world_checksum) (FNV-1a over
//! every live entity in increasing handle order), fed, for each component
//! type of the scenario in a fixed order, a presence byte and the
//! component's fields (floats by their bit patterns). Two worlds have the
//! same checksum when they hold the same entities with bit-identical
//! components.

use ecs_engine::{Component, Entity, Registry};
pub(crate) use ecs_runtime::checksum::{Feed, Fnv1a};

/// A component that feeds its fields into the checksum.
pub(crate) trait Canonical: Component {
    fn hash<H: Feed>(&self, h: &mut H);
}

/// Feeds `T`'s presence and value for `entity` into `h`.
pub(crate) fn component<T: Canonical>(registry: &Registry, entity: Entity, h: &mut Fnv1a) {
    h.optional(registry.get::<T>(entity), |h, value| value.hash(h));
}
