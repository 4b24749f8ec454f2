//! The snapshot document: the serde types both formats write, and the two
//! codecs that nest each entry's values in it.
//!
//! A document is `{ version, entities, components, resources }`:
//! `entities` mirrors [`AllocatorState`], each component entry is a name,
//! the slot indices of its entities (in the pool's dense order) and the
//! values in the same order, each resource entry a name and a value. The
//! values are nested as a `serde_json::Value` in JSON and as postcard bytes
//! in the compact format, so one document type serves every registered
//! type without a type-erased serializer.
//!
//! Slot index lists are plain numbers in JSON; in the compact format they
//! are differences from the previous index (zigzag varints in postcard),
//! so a run of neighbouring slots costs a byte each.

use ecs_engine::AllocatorState;
use serde::de::{DeserializeOwned, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The version this build writes and reads; a document with another
/// version is refused with
/// [`SnapshotError::Version`](crate::SnapshotError::Version).
pub const FORMAT_VERSION: u32 = 1;

/// Just the version, read before the rest so that a document of another
/// version is refused as such, not as a shape error.
#[derive(Deserialize)]
pub(crate) struct Header {
    pub(crate) version: u32,
}

/// The whole document; `V` is how a codec nests values.
#[derive(Serialize, Deserialize)]
pub(crate) struct Document<V> {
    pub(crate) version: u32,
    pub(crate) entities: Entities,
    pub(crate) components: Vec<ComponentEntry<V>>,
    pub(crate) resources: Vec<ResourceEntry<V>>,
}

/// [`AllocatorState`] in serde form.
#[derive(Serialize, Deserialize)]
pub(crate) struct Entities {
    generations: Vec<u32>,
    alive: IndexList,
    reserved: IndexList,
    free: IndexList,
    max_live: u32,
    max_generation: u32,
    retired: u32,
}

impl From<AllocatorState> for Entities {
    fn from(s: AllocatorState) -> Entities {
        Entities {
            generations: s.generations,
            alive: IndexList(s.alive),
            reserved: IndexList(s.reserved),
            free: IndexList(s.free),
            max_live: s.max_live,
            max_generation: s.max_generation,
            retired: s.retired,
        }
    }
}

impl From<Entities> for AllocatorState {
    fn from(e: Entities) -> AllocatorState {
        AllocatorState {
            generations: e.generations,
            alive: e.alive.0,
            reserved: e.reserved.0,
            free: e.free.0,
            max_live: e.max_live,
            max_generation: e.max_generation,
            retired: e.retired,
        }
    }
}

/// One component type: its entities' slots and their values, in the
/// pool's dense order.
#[derive(Serialize, Deserialize)]
pub(crate) struct ComponentEntry<V> {
    pub(crate) name: String,
    pub(crate) entities: IndexList,
    pub(crate) values: V,
}

/// One resource.
#[derive(Serialize, Deserialize)]
pub(crate) struct ResourceEntry<V> {
    pub(crate) name: String,
    pub(crate) value: V,
}

/// Slot indices: numbers in a human-readable format, differences from the
/// previous index otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct IndexList(pub(crate) Vec<u32>);

impl Serialize for IndexList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return self.0.serialize(serializer);
        }
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        let mut previous = 0i64;
        for &index in &self.0 {
            seq.serialize_element(&(i64::from(index) - previous))?;
            previous = i64::from(index);
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for IndexList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IndexList, D::Error> {
        if deserializer.is_human_readable() {
            return Vec::<u32>::deserialize(deserializer).map(IndexList);
        }
        struct Deltas;
        impl<'de> Visitor<'de> for Deltas {
            type Value = IndexList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of slot index differences")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IndexList, A::Error> {
                // Capped: a corrupt length must not allocate gigabytes.
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                let mut previous = 0i64;
                while let Some(delta) = seq.next_element::<i64>()? {
                    let index = previous
                        .checked_add(delta)
                        .and_then(|i| u32::try_from(i).ok())
                        .ok_or_else(|| {
                            serde::de::Error::custom(format!(
                                "slot index difference {delta} after {previous} leaves the u32 range"
                            ))
                        })?;
                    out.push(index);
                    previous = i64::from(index);
                }
                Ok(IndexList(out))
            }
        }
        deserializer.deserialize_seq(Deltas)
    }
}

/// Bytes nested in the compact document (postcard's byte string: a
/// length and a copy).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Bytes(pub(crate) Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Bytes(out))
            }
        }
        deserializer.deserialize_byte_buf(Visit)
    }
}

/// How a format nests one entry's values in the document.
pub(crate) trait Codec {
    /// The nested form.
    type Value: Serialize + DeserializeOwned;
    /// Encodes `value`; the error is the format's message.
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Self::Value, String>;
    /// Decodes a value; the error is the format's message.
    fn decode<T: DeserializeOwned>(value: &Self::Value) -> Result<T, String>;
}

/// JSON: values nested as JSON values, readable in place.
pub(crate) struct JsonCodec;

impl Codec for JsonCodec {
    type Value = serde_json::Value;
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<serde_json::Value, String> {
        serde_json::to_value(value).map_err(|e| e.to_string())
    }
    fn decode<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
        T::deserialize(value).map_err(|e| e.to_string())
    }
}

/// postcard: values nested as the postcard bytes of their sequence.
pub(crate) struct PostcardCodec;

impl Codec for PostcardCodec {
    type Value = Bytes;
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Bytes, String> {
        postcard::to_allocvec(value)
            .map(Bytes)
            .map_err(|e| e.to_string())
    }
    fn decode<T: DeserializeOwned>(value: &Bytes) -> Result<T, String> {
        match postcard::take_from_bytes::<T>(&value.0) {
            Ok((decoded, [])) => Ok(decoded),
            Ok((_, rest)) => Err(format!(
                "{} bytes left after the values, at byte {}",
                rest.len(),
                value.0.len() - rest.len()
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}
