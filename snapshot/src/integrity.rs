//! The checksums of a snapshot (see [`crate::document`]'s "Checksums"):
//! written by [`seal`] at save, checked by [`verify`] before a load looks
//! at any value. The compact format is read part by part by
//! [`decode_postcard`], so that a part that does not decode, or does not
//! match its checksum, is named with its byte offsets.

use std::io::Write;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::SnapshotError;
use crate::document::{
    Bytes, Codec, ComponentEntry, Document, EngineSection, Entities, Hierarchy, JsonCodec,
    PostcardCodec, ResourceEntry,
};

/// A writer that feeds a CRC-32 and keeps nothing.
struct Crc(crc32fast::Hasher);

impl Write for Crc {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `value` as compact JSON with every object's keys sorted, so the
/// bytes depend neither on the file's spacing nor on serde_json's map
/// order (its `preserve_order` feature may be on in one build and off in
/// another). Recursion is bounded by serde_json's nesting limit (128) for
/// parsed values and by the types' depth for saved ones.
fn write_canonical(out: &mut impl Write, value: &Value) -> std::io::Result<()> {
    match value {
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.write_all(b"{")?;
            for (i, (key, item)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_canonical(out, item)?;
            }
            out.write_all(b"}")
        }
        scalar => Ok(serde_json::to_writer(out, scalar)?),
    }
}

/// The CRC-32 of `parts` as one JSON array in canonical form, without
/// building the array.
fn json_crc(parts: &[&Value]) -> u32 {
    let mut out = Crc(crc32fast::Hasher::new());
    let mut write = || -> std::io::Result<()> {
        out.write_all(b"[")?;
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_canonical(&mut out, part)?;
        }
        out.write_all(b"]")
    };
    // The writer never fails.
    let _ = write();
    out.0.finalize()
}

/// A typed part as a JSON value (`null` if it does not convert, which a
/// part that was just saved or parsed cannot do).
fn json_value<T: Serialize + ?Sized>(part: &T) -> Value {
    serde_json::to_value(part).unwrap_or(Value::Null)
}

/// The checksum a JSON snapshot stores for a part: the CRC-32 (IEEE) of
/// `value` written as compact JSON with every object's keys sorted.
///
/// A component entry's `checksum` is that of `[name, entities, values]`,
/// a resource entry's of `[name, value]`, the document's of `[version,
/// entities, hierarchy]` (`hierarchy` is `null` when absent), an engine
/// section's of `[ticks, clock, pool_ticks, resource_ticks, seed,
/// startup_pending, states_started, systems, reserves]`. A tool that
/// edits a JSON snapshot on purpose recomputes them with this function; a
/// load refuses a part whose checksum does not match
/// ([`SnapshotError::Checksum`]).
///
/// # Examples
///
/// ```
/// use ecs_snapshot::json_checksum;
/// use serde_json::json;
///
/// // Spacing and key order do not change it; a value does.
/// let a = json_checksum(&serde_json::from_str(r#"{ "y": 2, "x": 1 }"#).unwrap());
/// assert_eq!(a, json_checksum(&json!({"x": 1, "y": 2})));
/// assert_ne!(a, json_checksum(&json!({"x": 1, "y": 3})));
/// ```
pub fn json_checksum(value: &Value) -> u32 {
    let mut out = Crc(crc32fast::Hasher::new());
    let _ = write_canonical(&mut out, value);
    out.0.finalize()
}

/// The checksums of each format.
pub(crate) trait Seal: Codec {
    fn document_crc(document: &Document<Self::Value>) -> u32;
    fn component_crc(entry: &ComponentEntry<Self::Value>) -> u32;
    fn resource_crc(entry: &ResourceEntry<Self::Value>) -> u32;
    fn engine_crc(section: &EngineSection<Self::Value>) -> u32;
}

/// Every field of an engine section but its checksum, in order.
fn engine_fields<V>(e: &EngineSection<V>) -> impl Serialize + '_
where
    V: Serialize,
{
    (
        e.ticks,
        e.clock,
        &e.pool_ticks,
        &e.resource_ticks,
        e.seed,
        e.startup_pending,
        &e.states_started,
        &e.systems,
        &e.reserves,
    )
}

impl Seal for JsonCodec {
    fn document_crc(d: &Document<Value>) -> u32 {
        let version = Value::from(d.version);
        json_crc(&[
            &version,
            &json_value(&d.entities),
            &json_value(&d.hierarchy),
        ])
    }
    fn component_crc(entry: &ComponentEntry<Value>) -> u32 {
        let name = Value::from(entry.name.as_str());
        json_crc(&[&name, &json_value(&entry.entities), &entry.values])
    }
    fn resource_crc(entry: &ResourceEntry<Value>) -> u32 {
        json_crc(&[&Value::from(entry.name.as_str()), &entry.value])
    }
    fn engine_crc(section: &EngineSection<Value>) -> u32 {
        json_checksum(&json_value(&engine_fields(section)))
    }
}

/// The CRC-32 of `value`'s postcard bytes.
fn postcard_crc<T: Serialize + ?Sized>(value: &T) -> u32 {
    let mut out = Crc(crc32fast::Hasher::new());
    // The writer never fails, and these parts always encode.
    let _ = postcard::to_io(value, &mut out);
    out.0.finalize()
}

impl Seal for PostcardCodec {
    fn document_crc(d: &Document<Bytes>) -> u32 {
        postcard_crc(&(d.version, &d.entities, &d.hierarchy))
    }
    fn component_crc(entry: &ComponentEntry<Bytes>) -> u32 {
        postcard_crc(&(&entry.name, &entry.entities, &entry.values))
    }
    fn resource_crc(entry: &ResourceEntry<Bytes>) -> u32 {
        postcard_crc(&(&entry.name, &entry.value))
    }
    fn engine_crc(section: &EngineSection<Bytes>) -> u32 {
        postcard_crc(&engine_fields(section))
    }
}

/// Writes every checksum of `document`.
pub(crate) fn seal<C: Seal>(document: &mut Document<C::Value>) {
    document.checksum = C::document_crc(document);
    for entry in &mut document.components {
        entry.checksum = C::component_crc(entry);
    }
    for entry in &mut document.resources {
        entry.checksum = C::resource_crc(entry);
    }
    if let Some(engine) = &mut document.engine {
        engine.checksum = C::engine_crc(engine);
    }
}

/// Where the parts of a compact document lie in its file: `(start, end)`
/// byte offsets.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    entities: (usize, usize),
    components: Vec<(usize, usize)>,
    resources: Vec<(usize, usize)>,
    engine: (usize, usize),
}

/// Checks every checksum of `document`, in file order; the error names
/// the first part that does not match (with its bytes, from `layout`,
/// for the compact format).
pub(crate) fn verify<C: Seal>(
    document: &Document<C::Value>,
    layout: Option<&Layout>,
) -> Result<(), SnapshotError> {
    if document.checksum != C::document_crc(document) {
        return Err(SnapshotError::Checksum {
            part: "the entities or the hierarchy".into(),
            bytes: layout.map(|l| l.entities),
        });
    }
    for (entry, item) in document.components.iter().enumerate() {
        if item.checksum != C::component_crc(item) {
            return Err(SnapshotError::Checksum {
                part: format!("component `{}` (entry {entry})", item.name),
                bytes: layout.and_then(|l| l.components.get(entry).copied()),
            });
        }
    }
    for (entry, item) in document.resources.iter().enumerate() {
        if item.checksum != C::resource_crc(item) {
            return Err(SnapshotError::Checksum {
                part: format!("resource `{}` (entry {entry})", item.name),
                bytes: layout.and_then(|l| l.resources.get(entry).copied()),
            });
        }
    }
    if let Some(engine) = &document.engine
        && engine.checksum != C::engine_crc(engine)
    {
        return Err(SnapshotError::Checksum {
            part: "the engine's state".into(),
            bytes: layout.map(|l| l.engine),
        });
    }
    Ok(())
}

/// The CRC-32 that closes a compact file, as its four bytes.
pub(crate) fn trailer(body: &[u8]) -> [u8; 4] {
    crc32fast::hash(body).to_le_bytes()
}

/// Whether a compact file matches its closing checksum.
fn is_sound(bytes: &[u8]) -> bool {
    bytes
        .len()
        .checked_sub(4)
        .is_some_and(|body| trailer(&bytes[..body]) == bytes[body..])
}

/// The format version a compact file starts with.
///
/// # Errors
///
/// [`SnapshotError::PostcardAt`] (at byte 0) when it does not decode.
pub(crate) fn postcard_version(bytes: &[u8]) -> Result<u32, SnapshotError> {
    postcard::take_from_bytes::<u32>(bytes)
        .map(|(version, _)| version)
        .map_err(|source| SnapshotError::PostcardAt {
            offset: 0,
            part: "the format version".into(),
            source,
            damaged: !is_sound(bytes),
        })
}

/// Reads a compact document's parts in order, keeping the offset.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
    /// Whether the whole file matches its closing checksum: a part that
    /// does not decode is then a format error, else damage.
    sound: bool,
}

impl Reader<'_> {
    fn take<T: DeserializeOwned>(
        &mut self,
        part: impl FnOnce() -> String,
    ) -> Result<(T, (usize, usize)), SnapshotError> {
        let start = self.offset;
        match postcard::take_from_bytes::<T>(&self.bytes[start..]) {
            Ok((value, rest)) => {
                self.offset = self.bytes.len() - rest.len();
                Ok((value, (start, self.offset)))
            }
            Err(source) => Err(SnapshotError::PostcardAt {
                offset: start,
                part: part(),
                source,
                damaged: !self.sound,
            }),
        }
    }
}

/// The number of bytes postcard writes for `value` (a varint: 7 bits a
/// byte). An entry ends with its checksum, so its values end that many
/// bytes before the entry does.
fn varint_len(value: u32) -> usize {
    let bits = (32 - value.leading_zeros()).max(1) as usize;
    bits.div_ceil(7)
}

/// Decodes a compact document (its version already checked), part by
/// part, and checks its checksums: the parts', then the closing one.
///
/// # Errors
///
/// [`SnapshotError::PostcardAt`] naming the part that does not decode and
/// its first byte; [`SnapshotError::Checksum`] naming the first part that
/// does not match its checksum, with its bytes;
/// [`SnapshotError::TrailingBytes`] for bytes after the closing checksum.
pub(crate) fn decode_postcard(bytes: &[u8]) -> Result<Document<Bytes>, SnapshotError> {
    let sound = is_sound(bytes);
    let mut reader = Reader {
        bytes,
        offset: 0,
        sound,
    };
    let mut layout = Layout::default();
    let (version, _) = reader.take::<u32>(|| "the format version".into())?;
    let (checksum, _) = reader.take::<u32>(|| "the document's checksum".into())?;
    let (entities, range) = reader.take::<Entities>(|| "the entities".into())?;
    layout.entities = range;
    // Entries are decoded one at a time: a corrupt count cannot make the
    // load allocate more than the input holds.
    let (count, _) = reader.take::<u64>(|| "the number of component entries".into())?;
    let mut components = Vec::new();
    for entry in 0..count {
        let (mut item, range) = reader
            .take::<ComponentEntry<Bytes>>(|| format!("component entry {entry} of {count}"))?;
        item.values_at = Some(range.1 - varint_len(item.checksum) - item.values.0.len());
        components.push(item);
        layout.components.push(range);
    }
    let (count, _) = reader.take::<u64>(|| "the number of resource entries".into())?;
    let mut resources = Vec::new();
    for entry in 0..count {
        let (mut item, range) =
            reader.take::<ResourceEntry<Bytes>>(|| format!("resource entry {entry} of {count}"))?;
        item.value_at = Some(range.1 - varint_len(item.checksum) - item.value.0.len());
        resources.push(item);
        layout.resources.push(range);
    }
    let (hierarchy, _) = reader.take::<Option<Hierarchy>>(|| "the hierarchy".into())?;
    let (engine, range) =
        reader.take::<Option<EngineSection<Bytes>>>(|| "the engine's state".into())?;
    layout.engine = range;
    let end = reader.offset;
    let document = Document {
        version,
        checksum,
        entities,
        components,
        resources,
        hierarchy,
        engine,
    };
    let Some(closing) = bytes.get(end..end + 4) else {
        return Err(SnapshotError::PostcardAt {
            offset: end,
            part: "the file's checksum".into(),
            source: postcard::Error::DeserializeUnexpectedEnd,
            damaged: true,
        });
    };
    verify::<PostcardCodec>(&document, Some(&layout))?;
    if trailer(&bytes[..end]) != closing {
        return Err(SnapshotError::Checksum {
            part: "the file's checksum".into(),
            bytes: Some((end, end + 4)),
        });
    }
    if bytes.len() > end + 4 {
        return Err(SnapshotError::TrailingBytes {
            offset: end + 4,
            count: bytes.len() - end - 4,
        });
    }
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::varint_len;

    #[test]
    fn varint_len_is_postcards_length() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            u32::MAX,
        ] {
            let written = postcard::to_allocvec(&value).unwrap();
            assert_eq!(varint_len(value), written.len(), "{value}");
        }
    }
}
