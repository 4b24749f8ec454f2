//! [`Entity`]: the generational handle (a slot index and the generation of
//! that slot), and the largest index a live entity can have.

use std::fmt;
use std::num::NonZeroU32;

/// A handle to an entity: a slot index and the generation of that slot.
///
/// Handles are plain values: cheap to copy, compare, hash and order (by index,
/// then generation), and safe to keep. A handle whose slot was freed, or
/// reused by a newer entity, is *stale*: every registry operation treats it as
/// not alive. The generation is never zero, so `Option<Entity>` is as small as
/// `Entity` (8 bytes).
///
/// The layout is fixed (`#[repr(C, align(8))]`, index first), so on
/// little-endian targets a `&[Entity]` has the bytes of the `&[u64]` of
/// their [`to_bits`](Entity::to_bits) values: see
/// [`Entity::slice_as_bits`].
///
/// # Examples
///
/// ```
/// use ecs_engine::Entity;
///
/// assert_eq!(std::mem::size_of::<Option<Entity>>(), 8);
/// assert!(Entity::NULL.is_null());
/// let e = Entity::from_bits(5 | (2 << 32)).unwrap();
/// assert_eq!((e.index(), e.generation()), (5, 2));
/// assert_eq!(e.to_string(), "5:2");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C, align(8))]
pub struct Entity {
    pub(super) index: u32,
    pub(super) generation: NonZeroU32,
}

impl Entity {
    /// The null handle: never alive in any registry, and the value that
    /// `Default` gives. Its index and generation are both `u32::MAX`.
    pub const NULL: Entity = Entity {
        index: u32::MAX,
        generation: NonZeroU32::MAX,
    };

    /// [`NULL`](Self::NULL) under bevy's name, for a handle field that
    /// gets its real entity later.
    pub const PLACEHOLDER: Entity = Entity::NULL;

    /// The slot index: the position of the entity in the allocator and in
    /// every sparse array.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this handle was made (1 for a slot's
    /// first entity).
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation.get()
    }

    /// `true` for [`Entity::NULL`].
    #[inline]
    pub const fn is_null(self) -> bool {
        self.index == u32::MAX
    }

    /// The handle as one 64-bit value: the generation in the high 32 bits and
    /// the index in the low 32 bits. Round-trips through [`Entity::from_bits`].
    #[inline]
    pub const fn to_bits(self) -> u64 {
        ((self.generation.get() as u64) << 32) | self.index as u64
    }

    /// Rebuilds a handle from [`Entity::to_bits`]; `None` when the generation
    /// part is zero, which no handle has.
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Entity> {
        match NonZeroU32::new((bits >> 32) as u32) {
            Some(generation) => Some(Entity {
                index: bits as u32,
                generation,
            }),
            None => None,
        }
    }

    /// The handles as their [`to_bits`](Entity::to_bits) values, without
    /// copying (for the C API, whose handles are `u64`s).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let entities = [registry.spawn(()), registry.spawn(())];
    /// let bits = ecs_engine::Entity::slice_as_bits(&entities);
    /// assert_eq!(bits, &[entities[0].to_bits(), entities[1].to_bits()]);
    /// ```
    #[cfg(target_endian = "little")]
    #[inline]
    pub fn slice_as_bits(entities: &[Entity]) -> &[u64] {
        // SAFETY: `Entity` is `repr(C, align(8))` with two `u32` fields
        // (`index` at offset 0, `generation` at 4): 8 bytes, no padding,
        // the size and alignment of `u64`, and every `Entity` bit pattern
        // is a valid `u64`. On a little-endian target those bytes read as
        // `index | generation << 32`, which is `to_bits()`. The slice keeps
        // the borrow's lifetime and length.
        unsafe { std::slice::from_raw_parts(entities.as_ptr().cast::<u64>(), entities.len()) }
    }

    #[inline]
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Entity {
        Entity { index, generation }
    }
}

impl Default for Entity {
    fn default() -> Self {
        Entity::NULL
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The largest index a live entity can have; `u32::MAX` is the null index.
pub(crate) const MAX_INDEX: u32 = u32::MAX - 1;

/// With the `serde` feature: an [`Entity`] is written as its
/// [`to_bits`](Entity::to_bits) value (a `u64`: the index in the low 32
/// bits, the generation in the high ones), so a component or resource
/// holding handles can derive `Serialize`. Handles are only meaningful
/// with the allocator state they came from (see
/// [`AllocatorState`](crate::AllocatorState)).
#[cfg(feature = "serde")]
impl serde::Serialize for Entity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.to_bits())
    }
}

/// With the `serde` feature: reads the `u64` that
/// [`Serialize`](serde::Serialize) writes.
///
/// # Errors
///
/// A `u64` whose high 32 bits (the generation) are 0, which no handle
/// has: the deserializer's "invalid value" error.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Entity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Entity, D::Error> {
        let bits = <u64 as serde::Deserialize>::deserialize(deserializer)?;
        Entity::from_bits(bits).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Unsigned(bits),
                &"an entity handle (index in the low 32 bits, a generation of 1 or more in the high 32)",
            )
        })
    }
}
