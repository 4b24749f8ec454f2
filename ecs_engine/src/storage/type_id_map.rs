//! [`TypeIdMap`]: a hash map keyed by [`TypeId`], with a hasher that does
//! not hash again what is already a hash.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for [`TypeId`] keys only: a `TypeId` is already a well-mixed
/// hash of its type, so its bits are used as they are (folded into 64
/// bits) instead of being hashed again by SipHash. The registry's type
/// tables, its resources and the command buffer's queue lookup use it.
///
/// Not for keys chosen by an adversary or with poorly mixed bits.
///
/// # Examples
///
/// ```
/// use std::any::TypeId;
/// use ecs_engine::TypeIdMap;
///
/// let mut names: TypeIdMap<&str> = TypeIdMap::default();
/// names.insert(TypeId::of::<u32>(), "u32");
/// assert_eq!(names[&TypeId::of::<u32>()], "u32");
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(5) ^ n;
    }
}

/// A `HashMap` keyed by [`TypeId`], hashed by [`TypeIdHasher`].
pub type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn distinct_types_hash_apart_and_one_type_hashes_alike() {
        let build = BuildHasherDefault::<TypeIdHasher>::default();
        let hash = |id: TypeId| build.hash_one(id);
        assert_eq!(hash(TypeId::of::<u8>()), hash(TypeId::of::<u8>()));
        assert_ne!(hash(TypeId::of::<u8>()), hash(TypeId::of::<u16>()));
        let mut map: TypeIdMap<usize> = TypeIdMap::default();
        map.insert(TypeId::of::<u8>(), 1);
        map.insert(TypeId::of::<String>(), 2);
        assert_eq!(map.get(&TypeId::of::<String>()), Some(&2));
        assert_eq!(map.get(&TypeId::of::<u16>()), None);
    }
}
