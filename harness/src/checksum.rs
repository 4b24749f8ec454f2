//! The world checksum of the harness's scenarios: the facade's
//! [`world_checksum`](ecs_runtime::checksum::world_checksum) (FNV-1a over
//! every live entity in increasing handle order), fed, for each component
//! type of the scenario in a fixed order, a presence byte and the
//! component's fields (floats by their bit patterns). Two worlds have the
//! same checksum when they hold the same entities with bit-identical
//! components.

use ecs_engine::{Component, Entity, Registry};
pub(crate) use ecs_runtime::checksum::Fnv1a;

/// A component that feeds its fields into the checksum.
pub(crate) trait Canonical: Component {
    fn hash(&self, h: &mut Fnv1a);
}

/// Feeds `T`'s presence and value for `entity` into `h`.
pub(crate) fn component<T: Canonical>(registry: &Registry, entity: Entity, h: &mut Fnv1a) {
    h.optional(registry.get::<T>(entity), |h, value| value.hash(h));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Mass(f32);

    impl Canonical for Mass {
        fn hash(&self, h: &mut Fnv1a) {
            h.f32(self.0);
        }
    }

    fn checksum(registry: &Registry) -> u64 {
        ecs_runtime::checksum::world_checksum(registry, component::<Mass>)
    }

    #[test]
    fn the_checksum_ignores_storage_order_but_not_values() {
        // The same entities and values, inserted in two orders.
        let mut a = Registry::new();
        let mut b = Registry::new();
        let ea: Vec<Entity> = (0..4).map(|_| a.spawn_empty()).collect();
        let eb: Vec<Entity> = (0..4).map(|_| b.spawn_empty()).collect();
        for i in 0..4 {
            a.insert(ea[i], Mass(i as f32)).unwrap();
            b.insert(eb[3 - i], Mass((3 - i) as f32)).unwrap();
        }
        assert_ne!(
            a.pool::<Mass>().unwrap().entities(),
            b.pool::<Mass>().unwrap().entities()
        );
        assert_eq!(checksum(&a), checksum(&b));
        b.insert(eb[2], Mass(2.5)).unwrap();
        assert_ne!(checksum(&a), checksum(&b));
        b.insert(eb[2], Mass(2.0)).unwrap();
        b.remove::<Mass>(eb[1]).unwrap();
        assert_ne!(checksum(&a), checksum(&b));
    }
}
