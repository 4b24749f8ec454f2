//! The world checksum: FNV-1a (Fowler, Noll, Vo) over every live entity's
//! components, entities taken in increasing handle order, so the value does
//! not depend on the order of the pools' dense arrays.
//!
//! Each entity contributes its handle bits, then, for each component type
//! of the scenario in a fixed order, a presence byte and the component's
//! fields (floats by their bit patterns). Two worlds have the same checksum
//! when they hold the same entities with bit-identical components.

use ecs_engine::{Component, Entity, Registry};

/// FNV-1a, 64 bits.
#[derive(Debug, Clone)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xCBF2_9CE4_8422_2325)
    }
}

impl Fnv {
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01B3);
        }
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.bytes(&v.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    pub(crate) fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// A component that feeds its fields into the checksum.
pub(crate) trait Canonical: Component {
    fn hash(&self, h: &mut Fnv);
}

/// Feeds `T`'s presence and value for `entity` into `h`.
pub(crate) fn component<T: Canonical>(registry: &Registry, entity: Entity, h: &mut Fnv) {
    match registry.get::<T>(entity) {
        Some(value) => {
            h.u8(1);
            value.hash(h);
        }
        None => h.u8(0),
    }
}

/// The checksum of `registry`: every live entity in increasing handle
/// order, hashed by `entity_hash` after its handle bits.
pub(crate) fn world(registry: &Registry, entity_hash: impl Fn(&Registry, Entity, &mut Fnv)) -> u64 {
    let mut entities: Vec<Entity> = registry.entities().iter().collect();
    entities.sort_unstable_by_key(|e| e.to_bits());
    let mut h = Fnv::default();
    h.u64(entities.len() as u64);
    for entity in entities {
        h.u64(entity.to_bits());
        entity_hash(registry, entity, &mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Mass(f32);

    impl Canonical for Mass {
        fn hash(&self, h: &mut Fnv) {
            h.f32(self.0);
        }
    }

    fn checksum(registry: &Registry) -> u64 {
        world(registry, component::<Mass>)
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        let mut h = Fnv::default();
        assert_eq!(h.finish(), 0xCBF2_9CE4_8422_2325);
        h.bytes(b"a");
        assert_eq!(h.finish(), 0xAF63_DC4C_8601_EC8C);
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
