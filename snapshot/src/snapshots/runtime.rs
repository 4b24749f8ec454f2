//! Run-time components in snapshots ([`Snapshots::register_runtime`]):
//! a component registered at run time by name and layout (as the C API
//! does), saved by its values' bytes.
//!
//! An entry of a run-time component has the same name, slots and
//! checksum as a typed one; its values are
//!
//! - in JSON, `{ "size": N, "values": ["0700…", …] }`: the size of a
//!   value and each value's bytes in lowercase hexadecimal, in the pool's
//!   dense order;
//! - in postcard, the postcard bytes of `(size, count, bytes)`: the size
//!   of a value, the number of values and all their bytes one after the
//!   other, in dense order.
//!
//! The bytes are the values as they lie in memory (the component's own
//! byte order: a file is read back on a machine of the same endianness).
//! A run-time pool keeps no change ticks, so an engine snapshot holds
//! none for it: after a load its values are neither added nor changed
//! for any system.

use ecs_engine::{ComponentId, Entity, PoolTicks, PoolTicksError, Registry};
use serde::{Deserialize, Serialize};

use super::{ComponentCodec, LoadFailure, Snapshots, Staged};
use crate::SnapshotError;
use crate::document::{Bytes, Codec, DecodeError, IndexList, JsonCodec, PostcardCodec};

/// A run-time component's values in JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonValues {
    /// The size of one value, in bytes.
    size: usize,
    /// Each value's bytes, in lowercase hexadecimal.
    values: Vec<String>,
}

/// A run-time component's values in postcard: `(size, count, bytes)`.
#[derive(Serialize, Deserialize)]
struct PostcardValues {
    size: u64,
    count: u64,
    bytes: Bytes,
}

/// The run-time component named `name`, resolved in a registry.
struct Resolved {
    id: ComponentId,
    size: usize,
}

/// The savable run-time component `name` of `registry`.
fn resolve(registry: &Registry, name: &str) -> Result<Resolved, SnapshotError> {
    let id = registry
        .component_by_name(name)
        .ok_or_else(|| SnapshotError::RuntimeMissing {
            name: name.to_owned(),
        })?;
    let values = registry
        .runtime_bytes(id)
        .map_err(|source| SnapshotError::RuntimeNotSavable {
            name: name.to_owned(),
            source,
        })?;
    Ok(Resolved {
        id,
        size: values.info().layout().size(),
    })
}

/// Hexadecimal digits, lowercase.
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The bytes of `text` (hexadecimal, either case), appended to `out`.
fn from_hex(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        match pair {
            &[high, low] => match (digit(high), digit(low)) {
                (Some(high), Some(low)) => out.push(high << 4 | low),
                _ => return Err(format!("`{text}` is not hexadecimal (byte {i})")),
            },
            _ => return Err(format!("`{text}` has an odd number of digits")),
        }
    }
    Ok(())
}

/// A run-time component registered by name: its values saved as bytes.
struct Runtime {
    name: String,
}

impl Runtime {
    /// The entities' slots and the values' bytes, `None` for an empty
    /// pool (a registry [`check_save`](ComponentCodec::check_save)
    /// accepted).
    fn values<'r>(
        &self,
        registry: &'r Registry,
    ) -> Option<(IndexList, ecs_engine::RuntimeBytes<'r>)> {
        let id = registry.component_by_name(&self.name)?;
        let values = registry.runtime_bytes(id).ok()?;
        if values.is_empty() {
            return None;
        }
        let slots = IndexList::from_indices(values.entities().iter().map(|e| e.index()));
        Some((slots, values))
    }

    /// Checks decoded `bytes` (`size` each) against `target` and the
    /// entities, and stages them.
    fn stage(
        &self,
        target: &Registry,
        entities: Vec<Entity>,
        size: usize,
        count: usize,
        bytes: Vec<u8>,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        if count != entities.len() {
            return Err(LoadFailure::Count {
                values: count,
                entities: entities.len(),
            });
        }
        let resolved =
            resolve(target, &self.name).map_err(|e| LoadFailure::Refused(Box::new(e)))?;
        if resolved.size != size {
            return Err(LoadFailure::Size {
                expected: resolved.size,
                found: size,
            });
        }
        Ok(Box::new(StagedRuntime {
            id: resolved.id,
            size,
            entities,
            bytes,
        }))
    }
}

impl ComponentCodec for Runtime {
    fn name(&self) -> &str {
        &self.name
    }
    fn rust_type(&self) -> Option<std::any::TypeId> {
        None
    }
    fn type_name(&self) -> &'static str {
        "a run-time component"
    }
    fn check_save(&self, registry: &Registry) -> Result<(), SnapshotError> {
        resolve(registry, &self.name).map(drop)
    }
    fn save_json(
        &self,
        registry: &Registry,
    ) -> Option<Result<(IndexList, serde_json::Value), String>> {
        let (slots, values) = self.values(registry)?;
        let doc = JsonValues {
            size: values.info().layout().size(),
            values: values.iter().map(|(_, bytes)| to_hex(bytes)).collect(),
        };
        Some(JsonCodec::encode(&doc).map(|v| (slots, v)))
    }
    fn save_postcard(&self, registry: &Registry) -> Option<Result<(IndexList, Bytes), String>> {
        let (slots, values) = self.values(registry)?;
        let size = values.info().layout().size();
        let mut bytes = Vec::with_capacity(size * values.len());
        for (_, value) in values.iter() {
            bytes.extend_from_slice(value);
        }
        let doc = PostcardValues {
            size: size as u64,
            count: values.len() as u64,
            bytes: Bytes(bytes),
        };
        Some(PostcardCodec::encode(&doc).map(|v| (slots, v)))
    }
    fn load_json(
        &self,
        target: &Registry,
        entities: Vec<Entity>,
        values: &serde_json::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        let doc: JsonValues = JsonCodec::decode(values).map_err(LoadFailure::Decode)?;
        let mut bytes = Vec::with_capacity(doc.size.saturating_mul(doc.values.len()).min(1 << 20));
        for (item, text) in doc.values.iter().enumerate() {
            let before = bytes.len();
            from_hex(text, &mut bytes).map_err(|message| {
                LoadFailure::Decode(format!("values[{item}]: {message}").into())
            })?;
            if bytes.len() - before != doc.size {
                return Err(LoadFailure::Decode(
                    format!(
                        "values[{item}] is {} bytes, but the entry's size is {}",
                        bytes.len() - before,
                        doc.size
                    )
                    .into(),
                ));
            }
        }
        self.stage(target, entities, doc.size, doc.values.len(), bytes)
    }
    fn load_postcard(
        &self,
        target: &Registry,
        entities: Vec<Entity>,
        values: &Bytes,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        let doc: PostcardValues = PostcardCodec::decode(values).map_err(LoadFailure::Decode)?;
        let expected = doc.size.checked_mul(doc.count);
        if expected != Some(doc.bytes.0.len() as u64) {
            return Err(LoadFailure::Decode(DecodeError::from(format!(
                "{} values of {} bytes, but {} bytes",
                doc.count,
                doc.size,
                doc.bytes.0.len()
            ))));
        }
        // Both fit in memory: their product is the length of the bytes,
        // unless the size is 0 (then the count is checked against the
        // entities before anything is allocated for it).
        let size = usize::try_from(doc.size).unwrap_or(usize::MAX);
        let count = usize::try_from(doc.count).unwrap_or(usize::MAX);
        self.stage(target, entities, size, count, doc.bytes.0)
    }
    fn export_ticks(&self, registry: &Registry) -> Option<PoolTicks> {
        registry.export_pool_ticks_raw(registry.component_by_name(&self.name)?)
    }
    fn import_ticks(
        &self,
        registry: &mut Registry,
        ticks: PoolTicks,
    ) -> Result<(), PoolTicksError> {
        let id = registry
            .component_by_name(&self.name)
            .unwrap_or(ComponentId::from_u32(u32::MAX));
        registry.import_pool_ticks_raw(id, ticks)
    }
}

/// A run-time component's values, checked and waiting for the swap.
struct StagedRuntime {
    id: ComponentId,
    size: usize,
    entities: Vec<Entity>,
    /// `size` bytes per entity, in order.
    bytes: Vec<u8>,
}

impl Staged for StagedRuntime {
    fn apply(self: Box<Self>, registry: &mut Registry) {
        let StagedRuntime {
            id,
            size,
            entities,
            bytes,
        } = *self;
        for (i, entity) in entities.into_iter().enumerate() {
            let value = &bytes[i * size..(i + 1) * size];
            if let Err(error) = registry.insert_runtime_bytes(entity, id, value) {
                unreachable!(
                    "a staged run-time value was checked (entity alive, component savable, size): {error}"
                );
            }
        }
    }
}

impl Snapshots {
    /// Registers the run-time component named `name` (registered in a
    /// registry with [`Registry::register_runtime`], as the C API does),
    /// saved by its values' bytes, under the same name.
    ///
    /// A save refuses a registry that has no run-time component of that
    /// name, or whose component is not
    /// [`savable`](ecs_engine::ComponentDescriptor::savable) (declared
    /// plain data, with no destructor): its values are never dropped
    /// silently. A load of a snapshot holding its values refuses a
    /// registry without a savable run-time component of that name and of
    /// the same size; the registry is then unchanged. Values come back in
    /// the same dense order (views visit them in the same order). The
    /// bytes are saved as they lie in memory. An engine snapshot holds the
    /// change ticks and removal log of a component that tracks them
    /// ([`Registry::track_changes_raw`]), and a load puts them back.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::DuplicateName`] when a component is already
    /// registered under `name`; nothing changes then. The save's errors
    /// are [`SnapshotError::RuntimeMissing`] and
    /// [`SnapshotError::RuntimeNotSavable`], the load's those and
    /// [`SnapshotError::RuntimeSize`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use ecs_engine::{ComponentDescriptor, Registry};
    /// use ecs_snapshot::{Format, Snapshots};
    ///
    /// // SAFETY: a `u32` has no padding and owns nothing.
    /// let hp = || unsafe { ComponentDescriptor::new("hp", Layout::new::<u32>()).savable() };
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_runtime("hp")?;
    ///
    /// let mut registry = Registry::new();
    /// let id = registry.register_runtime(hp())?;
    /// let e = registry.spawn(());
    /// registry.insert_runtime_bytes(e, id, &7u32.to_ne_bytes())?;
    /// let bytes = snapshots.save(&registry, Format::Postcard)?;
    ///
    /// let mut loaded = Registry::new();
    /// let id = loaded.register_runtime(hp())?;
    /// snapshots.load(&mut loaded, &bytes, Format::Postcard)?;
    /// let values = loaded.runtime_bytes(id)?;
    /// assert_eq!(values.iter().collect::<Vec<_>>(), [(e, &7u32.to_ne_bytes()[..])]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_runtime(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError> {
        self.register_component(Runtime {
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_bad_digits() {
        let bytes = [0x00, 0x7f, 0x80, 0xff, 0x0a];
        let text = to_hex(&bytes);
        assert_eq!(text, "007f80ff0a");
        let mut back = Vec::new();
        from_hex(&text.to_uppercase(), &mut back).unwrap();
        assert_eq!(back, bytes);
        assert!(
            from_hex("0g", &mut Vec::new())
                .unwrap_err()
                .contains("not hexadecimal")
        );
        assert!(
            from_hex("123", &mut Vec::new())
                .unwrap_err()
                .contains("odd number")
        );
    }

    #[test]
    fn refusals_name_the_component() {
        let registry = Registry::new();
        let error = resolve(&registry, "hp").err().unwrap();
        assert!(matches!(&error, SnapshotError::RuntimeMissing { name } if name == "hp"));
    }
}
