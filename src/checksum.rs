//! The world checksum: one 64-bit value that two worlds share exactly when
//! they hold the same live entities with bit-identical components, so runs
//! can be compared across thread counts, machines and languages (the
//! harness prints it; the C API's `ecs_world_checksum` computes the same
//! value over components registered from C).
//!
//! The format: FNV-1a, 64 bits (Fowler, Noll, Vo; offset basis
//! `0xCBF29CE484222325`, prime `0x100000001B3`), fed with the live entity
//! count (u64, little-endian), then, for each live entity in increasing
//! handle order (so the order of the pools' dense arrays does not matter),
//! its handle bits (u64 LE) and what the caller feeds for it: by
//! convention, for each component type in a fixed order, a presence byte
//! (0 or 1) and, when present, the component's fields, little-endian,
//! floats by their bit patterns ([`Fnv1a::optional`]). A component whose
//! fields are laid out without padding feeds the same bytes as its memory,
//! which is what the C API hashes.

use ecs_engine::{Entity, Registry};

/// The FNV-1a 64-bit hash, fed field by field, little-endian.
///
/// # Examples
///
/// ```
/// use ecs_runtime::checksum::Fnv1a;
///
/// let mut h = Fnv1a::default();
/// h.bytes(b"a");
/// assert_eq!(h.finish(), 0xAF63_DC4C_8601_EC8C);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    /// The offset basis: the hash of no bytes.
    fn default() -> Self {
        Fnv1a(0xCBF2_9CE4_8422_2325)
    }
}

impl Fnv1a {
    /// Feeds `bytes` in order.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01B3);
        }
    }

    /// Feeds one byte.
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }

    /// Feeds `v`, little-endian.
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds `v`, little-endian.
    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds `v`, little-endian.
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds `v`'s bit pattern, little-endian (so `-0.0` and `0.0`, or two
    /// NaNs, differ).
    #[inline]
    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    /// Feeds an optional component: a presence byte (0 or 1), then, when
    /// present, what `feed` feeds for the value.
    #[inline]
    pub fn optional<T>(&mut self, value: Option<T>, feed: impl FnOnce(&mut Self, T)) {
        match value {
            Some(value) => {
                self.u8(1);
                feed(self, value);
            }
            None => self.u8(0),
        }
    }

    /// The hash of everything fed so far.
    #[inline]
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// What a component's fields are fed into, field by field: the
/// checksum's [`Fnv1a`], or a divergence digest
/// ([`Digest`](crate::divergence::Digest)), so one function per type
/// serves both.
pub trait Feed {
    /// Feeds `bytes` in order.
    fn bytes(&mut self, bytes: &[u8]);

    /// Feeds one byte.
    fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }

    /// Feeds `v`, little-endian.
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds `v`, little-endian.
    fn i32(&mut self, v: i32) {
        self.u32(v as u32);
    }

    /// Feeds `v`, little-endian.
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// Feeds `v`'s bit pattern (so `-0.0` and `0.0`, or two NaNs, differ).
    fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
}

impl Feed for Fnv1a {
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        Fnv1a::bytes(self, bytes);
    }
}

/// The world checksum of `registry` (see the [module docs](self)): the
/// live entity count, then each live entity in increasing handle order,
/// its handle bits followed by what `entity` feeds for it.
///
/// # Examples
///
/// ```
/// use ecs_runtime::checksum::world_checksum;
/// use ecs_runtime::prelude::*;
///
/// struct Mass(f32);
///
/// let hash = |registry: &Registry| {
///     world_checksum(registry, |registry, entity, h| {
///         h.optional(registry.get::<Mass>(entity), |h, m| h.f32(m.0));
///     })
/// };
/// let mut a = Registry::new();
/// let mut b = Registry::new();
/// a.spawn((Mass(1.0),));
/// b.spawn((Mass(1.0),));
/// assert_eq!(hash(&a), hash(&b));
/// b.spawn(());
/// assert_ne!(hash(&a), hash(&b));
/// ```
pub fn world_checksum(
    registry: &Registry,
    mut entity: impl FnMut(&Registry, Entity, &mut Fnv1a),
) -> u64 {
    let mut entities: Vec<Entity> = registry.entities().iter().collect();
    entities.sort_unstable_by_key(|e| e.to_bits());
    let mut h = Fnv1a::default();
    h.u64(entities.len() as u64);
    for e in entities {
        h.u64(e.to_bits());
        entity(registry, e, &mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Mass(f32);

    fn checksum(registry: &Registry) -> u64 {
        world_checksum(registry, |registry, entity, h| {
            h.optional(registry.get::<Mass>(entity), |h, m| h.f32(m.0));
        })
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        let mut h = Fnv1a::default();
        assert_eq!(h.finish(), 0xCBF2_9CE4_8422_2325);
        h.bytes(b"a");
        assert_eq!(h.finish(), 0xAF63_DC4C_8601_EC8C);
        let mut fields = Fnv1a::default();
        fields.u32(0x6463_6261);
        let mut bytes = Fnv1a::default();
        bytes.bytes(b"abcd");
        assert_eq!(fields, bytes, "little-endian");
    }

    #[test]
    fn the_checksum_ignores_storage_order_but_not_values() {
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
