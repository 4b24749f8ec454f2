//! The snapshot document: the serde types both formats write, and the two
//! codecs that nest each entry's values in it.
//!
//! A document is `{ version, checksum, entities, components, resources,
//! hierarchy, engine }` (`engine`: see [`crate::engine`]): `entities` mirrors [`AllocatorState`], each component
//! entry is a name, the slot indices of its entities (in the pool's dense
//! order), the values in the same order and a checksum, each resource
//! entry a name, a value and a checksum. The values are nested as a
//! `serde_json::Value` in JSON and as postcard bytes in the compact format,
//! so one document type serves every registered type without a
//! type-erased serializer. Every struct refuses unknown keys, so a
//! misspelt key in a JSON file is an error, not a field silently dropped.
//!
//! A run-time component's values ([`crate::Snapshots::register_runtime`])
//! are their size and their bytes: in JSON `{ "size": 12, "values":
//! ["0a00…", …] }` (each value in hexadecimal), in postcard the bytes of
//! `(size, count, bytes)` (all values one after the other); the entry is
//! otherwise a component entry like any other, so the format version is
//! unchanged.
//!
//! Slot index lists are plain numbers in JSON; in the compact format they
//! are runs of consecutive slots (start difference, length), so a pool
//! filled in spawn order costs a few bytes for all its slots.
//!
//! # Checksums
//!
//! Each checksum is the CRC-32 (IEEE) of the format's own encoding of what
//! it covers: in JSON, compact JSON with object keys sorted
//! ([`json_checksum`](crate::json_checksum)), so spacing and key order do
//! not matter; in postcard, the bytes as written. A component entry's
//! covers `[name, entities, values]`, a resource entry's `[name, value]`,
//! the document's `[version, entities, hierarchy]`. A postcard file ends
//! with four more bytes, the CRC-32 of everything before them
//! (little-endian). A load checks them all before it looks at any value
//! (see [`crate::integrity`]).

use ecs_engine::{AllocatorState, Entity, HierarchyState};

pub(crate) use crate::engine::document::EngineSection;
use serde::de::{DeserializeOwned, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The version this build writes and reads; a document with another
/// version is refused with
/// [`SnapshotError::Version`](crate::SnapshotError::Version).
///
/// Version 2 added the checksums, version 3 the engine's state (change
/// ticks, system states, command reserves, the tick counter); a file of
/// an older version is refused as such.
pub const FORMAT_VERSION: u32 = 3;

/// Just the version, read before the rest so that a document of another
/// version is refused as such, not as a shape error.
#[derive(Deserialize)]
pub(crate) struct Header {
    pub(crate) version: u32,
}

/// The whole document; `V` is how a codec nests values. The compact
/// decoder ([`crate::integrity::decode_postcard`]) reads its fields one by
/// one in this order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Document<V> {
    pub(crate) version: u32,
    /// Covers `[version, entities, hierarchy]`.
    pub(crate) checksum: u32,
    pub(crate) entities: Entities,
    pub(crate) components: Vec<ComponentEntry<V>>,
    pub(crate) resources: Vec<ResourceEntry<V>>,
    /// Present when the hierarchy is registered and not empty.
    pub(crate) hierarchy: Option<Hierarchy>,
    /// Present in a snapshot of a whole engine
    /// ([`Snapshots::save_engine`](crate::Snapshots::save_engine)).
    pub(crate) engine: Option<EngineSection<V>>,
}

/// [`HierarchyState`] in serde form: handles as their
/// [`Entity::to_bits`] values.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Hierarchy {
    /// `(child, parent)`, in the `ChildOf` pool's order.
    links: Vec<(u64, u64)>,
    /// `(parent, children)`, in the `Children` pool's order.
    lists: Vec<(u64, Vec<u64>)>,
}

impl From<HierarchyState> for Hierarchy {
    fn from(state: HierarchyState) -> Hierarchy {
        Hierarchy {
            links: state
                .links
                .iter()
                .map(|(c, p)| (c.to_bits(), p.to_bits()))
                .collect(),
            lists: state
                .lists
                .iter()
                .map(|(p, list)| (p.to_bits(), list.iter().map(|e| e.to_bits()).collect()))
                .collect(),
        }
    }
}

impl From<Hierarchy> for HierarchyState {
    /// Bits that are no handle become [`Entity::NULL`], which
    /// [`HierarchyState::check`] reports as not alive.
    fn from(doc: Hierarchy) -> HierarchyState {
        let entity = |bits: u64| Entity::from_bits(bits).unwrap_or(Entity::NULL);
        HierarchyState {
            links: doc
                .links
                .into_iter()
                .map(|(c, p)| (entity(c), entity(p)))
                .collect(),
            lists: doc
                .lists
                .into_iter()
                .map(|(p, list)| (entity(p), list.into_iter().map(entity).collect()))
                .collect(),
        }
    }
}

/// [`AllocatorState`] in serde form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
            alive: IndexList::from_indices(s.alive),
            reserved: IndexList::from_indices(s.reserved),
            free: IndexList::from_indices(s.free),
            max_live: s.max_live,
            max_generation: s.max_generation,
            retired: s.retired,
        }
    }
}

impl Entities {
    /// The allocator state, each list expanded after checking that it
    /// is no longer than the slot count (so a corrupt run length cannot
    /// make the load allocate more than the input's slots).
    pub(crate) fn into_state(self) -> Result<AllocatorState, crate::SnapshotError> {
        let slots = self.generations.len();
        let expand = |list: &'static str, runs: IndexList| {
            runs.to_indices(slots)
                .map_err(|count| crate::SnapshotError::ListTooLong {
                    list: list.to_owned(),
                    count,
                    slots,
                })
        };
        Ok(AllocatorState {
            alive: expand("entities.alive", self.alive)?,
            reserved: expand("entities.reserved", self.reserved)?,
            free: expand("entities.free", self.free)?,
            generations: self.generations,
            max_live: self.max_live,
            max_generation: self.max_generation,
            retired: self.retired,
        })
    }
}

/// One component type: its entities' slots and their values, in the
/// pool's dense order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ComponentEntry<V> {
    pub(crate) name: String,
    pub(crate) entities: IndexList,
    pub(crate) values: V,
    /// Covers `[name, entities, values]`.
    pub(crate) checksum: u32,
    /// Where `values`' bytes start in a compact file (not written: set by
    /// [`crate::integrity::decode_postcard`]), so that a value that does
    /// not decode is located in the file.
    #[serde(skip)]
    pub(crate) values_at: Option<usize>,
}

/// One resource.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResourceEntry<V> {
    pub(crate) name: String,
    pub(crate) value: V,
    /// Covers `[name, value]`.
    pub(crate) checksum: u32,
    /// Where `value`'s bytes start in a compact file (not written), as
    /// [`ComponentEntry::values_at`].
    #[serde(skip)]
    pub(crate) value_at: Option<usize>,
}

/// Slot indices in order, held as runs of consecutive indices
/// (`(start, len)`, `len` at least 1): a plain list of numbers in a
/// human-readable format; in a compact one, each run as the difference of
/// its start from the previous run's end (zigzag) and its length, so the
/// slots of a pool filled in spawn order cost a few bytes in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct IndexList {
    runs: Vec<(u32, u32)>,
}

impl IndexList {
    /// The runs of `indices`.
    pub(crate) fn from_indices(indices: impl IntoIterator<Item = u32>) -> IndexList {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for index in indices {
            match runs.last_mut() {
                Some((start, len))
                    if u64::from(*start) + u64::from(*len) == u64::from(index)
                        && *len < u32::MAX =>
                {
                    *len += 1
                }
                _ => runs.push((index, 1)),
            }
        }
        IndexList { runs }
    }

    /// The number of indices.
    pub(crate) fn count(&self) -> u64 {
        self.runs.iter().map(|&(_, len)| u64::from(len)).sum()
    }

    /// The indices, or their count when it is above `limit`.
    pub(crate) fn to_indices(&self, limit: usize) -> Result<Vec<u32>, u64> {
        let count = self.count();
        if count > limit as u64 {
            return Err(count);
        }
        let mut out = Vec::with_capacity(count as usize);
        for &(start, len) in &self.runs {
            out.extend((0..len).map(|k| start + k));
        }
        Ok(out)
    }
}

impl Serialize for IndexList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            let indices = self
                .runs
                .iter()
                .flat_map(|&(start, len)| (0..len).map(move |k| start + k));
            return serializer.collect_seq(indices);
        }
        let mut seq = serializer.serialize_seq(Some(self.runs.len()))?;
        let mut end = 0i64;
        for &(start, len) in &self.runs {
            seq.serialize_element(&(i64::from(start) - end, len))?;
            end = i64::from(start) + i64::from(len);
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for IndexList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IndexList, D::Error> {
        if deserializer.is_human_readable() {
            return Vec::<u32>::deserialize(deserializer).map(IndexList::from_indices);
        }
        struct Runs;
        impl<'de> Visitor<'de> for Runs {
            type Value = IndexList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of (start difference, length) runs of slot indices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IndexList, A::Error> {
                // Capped: a corrupt length must not allocate gigabytes.
                let mut runs = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                let mut end = 0i64;
                while let Some((delta, len)) = seq.next_element::<(i64, u32)>()? {
                    let start = end
                        .checked_add(delta)
                        .filter(|s| (0..=i64::from(u32::MAX)).contains(s));
                    let Some(start) =
                        start.filter(|s| len > 0 && s + i64::from(len) <= i64::from(u32::MAX))
                    else {
                        return Err(serde::de::Error::custom(format!(
                            "slot run (difference {delta}, length {len}) after slot {end} leaves the slot range"
                        )));
                    };
                    runs.push((start as u32, len));
                    end = start + i64::from(len);
                }
                Ok(IndexList { runs })
            }
        }
        deserializer.deserialize_seq(Runs)
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

/// Why nested values did not decode: the format's message and, in the
/// compact format, the byte (counted from the first byte of the nested
/// values) at which the decoder found the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError {
    pub(crate) message: String,
    /// The offset, within the nested values, of the read that failed or
    /// gave an invalid value (an unexpected end: the end of the values).
    pub(crate) at: Option<usize>,
}

impl From<String> for DecodeError {
    fn from(message: String) -> DecodeError {
        DecodeError { message, at: None }
    }
}

/// The message, with the position within the values when known (for
/// values that the document does not locate in the file: a system's
/// state).
impl From<DecodeError> for String {
    fn from(error: DecodeError) -> String {
        match error.at {
            Some(at) => format!("{} (at byte {at} of the values)", error.message),
            None => error.message,
        }
    }
}

/// How a format nests one entry's values in the document.
pub(crate) trait Codec {
    /// The nested form.
    type Value: Serialize + DeserializeOwned;
    /// Encodes `value`; the error is the format's message.
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Self::Value, String>;
    /// Decodes a value; the error is the format's message (and, in the
    /// compact format, where in the value's bytes it was found).
    fn decode<T: DeserializeOwned>(value: &Self::Value) -> Result<T, DecodeError>;
    /// Checks, at save, that an encoded value reads back as a `T`, for a
    /// format that cannot hold every value (JSON).
    fn check<T: DeserializeOwned>(value: &Self::Value) -> Result<(), String> {
        let _ = value;
        Ok(())
    }
}

/// JSON: values nested as JSON values, readable in place.
pub(crate) struct JsonCodec;

impl Codec for JsonCodec {
    type Value = serde_json::Value;
    fn encode<T: Serialize + ?Sized>(value: &T) -> Result<serde_json::Value, String> {
        serde_json::to_value(value).map_err(|e| e.to_string())
    }
    fn decode<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, DecodeError> {
        T::deserialize(value).map_err(|e| DecodeError::from(e.to_string()))
    }

    /// serde_json writes a NaN or infinite float as `null`, which then
    /// does not load: refused at save rather than found at load.
    fn check<T: DeserializeOwned>(value: &serde_json::Value) -> Result<(), String> {
        Self::decode::<T>(value).map(drop).map_err(|e| {
            format!(
                "the saved values do not read back ({}); JSON writes a NaN or infinite float as null: save as postcard",
                e.message
            )
        })
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
    fn decode<T: DeserializeOwned>(value: &Bytes) -> Result<T, DecodeError> {
        let mut decoder = postcard::Deserializer::from_flavor(Tracked {
            bytes: &value.0,
            next: 0,
            last: 0,
        });
        let decoded = T::deserialize(&mut decoder);
        let (next, last) = decoder
            .finalize()
            .expect("the tracked flavor always finalizes");
        match decoded {
            Ok(decoded) if next == value.0.len() => Ok(decoded),
            Ok(_) => Err(DecodeError {
                message: format!("{} bytes left after the values", value.0.len() - next),
                at: Some(next),
            }),
            Err(e) => Err(DecodeError {
                message: e.to_string(),
                at: Some(last),
            }),
        }
    }
}

/// A postcard input that keeps where it is: `next`, the first byte not
/// read yet, and `last`, where the latest read began (the byte at which a
/// decode error was found: the byte of a bad tag or varint, the start of
/// a string that is not UTF-8 or of bytes that run past the end, the end
/// for a byte or varint past it).
struct Tracked<'de> {
    bytes: &'de [u8],
    next: usize,
    last: usize,
}

impl<'de> postcard::de_flavors::Flavor<'de> for Tracked<'de> {
    /// `(next, last)`.
    type Remainder = (usize, usize);
    type Source = &'de [u8];

    fn pop(&mut self) -> postcard::Result<u8> {
        self.last = self.next;
        let byte = *self
            .bytes
            .get(self.next)
            .ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
        self.next += 1;
        Ok(byte)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.bytes.len() - self.next)
    }

    fn try_take_n(&mut self, ct: usize) -> postcard::Result<&'de [u8]> {
        self.last = self.next;
        let end = self
            .next
            .checked_add(ct)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(postcard::Error::DeserializeUnexpectedEnd)?;
        let taken = &self.bytes[self.next..end];
        self.next = end;
        Ok(taken)
    }

    fn finalize(self) -> postcard::Result<(usize, usize)> {
        Ok((self.next, self.last))
    }
}
