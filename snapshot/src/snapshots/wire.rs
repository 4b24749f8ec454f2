//! One trait over the two formats ([`Wire`]): how each writes and reads a
//! whole document and each registered type's values, so that save and
//! load (of a registry, or of a whole engine) are written once.

use ecs_engine::{Entity, Registry};

use super::{ComponentCodec, LoadFailure, ResourceCodec, Staged, StagedResource, check_version};
use crate::SnapshotError;
use crate::document::{Bytes, DecodeError, Document, Header, IndexList, JsonCodec, PostcardCodec};
use crate::engine::states::StateCodec;
use crate::integrity::{self, Seal};

/// A format: its document's nested values, and the codecs' entry points
/// for it.
pub(crate) trait Wire: Seal {
    /// Seals `document` (its checksums) and writes it.
    fn write(document: Document<Self::Value>) -> Result<Vec<u8>, SnapshotError>;
    /// Reads a document, its version and checksums checked.
    fn read(bytes: &[u8]) -> Result<Document<Self::Value>, SnapshotError>;
    fn save_component(
        codec: &dyn ComponentCodec,
        registry: &Registry,
    ) -> Option<Result<(IndexList, Self::Value), String>>;
    fn save_resource(
        codec: &dyn ResourceCodec,
        registry: &Registry,
    ) -> Option<Result<Self::Value, String>>;
    fn save_state(codec: &dyn StateCodec, value: &dyn std::any::Any)
    -> Result<Self::Value, String>;
    fn load_component(
        codec: &dyn ComponentCodec,
        target: &Registry,
        entities: Vec<Entity>,
        values: &Self::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure>;
    fn load_resource(
        codec: &dyn ResourceCodec,
        value: &Self::Value,
    ) -> Result<StagedResource, DecodeError>;
    fn load_state(
        codec: &dyn StateCodec,
        value: &Self::Value,
    ) -> Result<Box<dyn std::any::Any + Send>, String>;
}

impl Wire for JsonCodec {
    fn write(mut document: Document<serde_json::Value>) -> Result<Vec<u8>, SnapshotError> {
        integrity::seal::<JsonCodec>(&mut document);
        Ok(serde_json::to_vec_pretty(&document)?)
    }
    fn read(bytes: &[u8]) -> Result<Document<serde_json::Value>, SnapshotError> {
        let header: Header = serde_json::from_slice(bytes)?;
        check_version(header.version)?;
        let document: Document<serde_json::Value> = serde_json::from_slice(bytes)?;
        integrity::verify::<JsonCodec>(&document, None)?;
        Ok(document)
    }
    fn save_component(
        codec: &dyn ComponentCodec,
        registry: &Registry,
    ) -> Option<Result<(IndexList, serde_json::Value), String>> {
        codec.save_json(registry)
    }
    fn save_resource(
        codec: &dyn ResourceCodec,
        registry: &Registry,
    ) -> Option<Result<serde_json::Value, String>> {
        codec.save_json(registry)
    }
    fn save_state(
        codec: &dyn StateCodec,
        value: &dyn std::any::Any,
    ) -> Result<serde_json::Value, String> {
        codec.save_json(value)
    }
    fn load_component(
        codec: &dyn ComponentCodec,
        target: &Registry,
        entities: Vec<Entity>,
        values: &serde_json::Value,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        codec.load_json(target, entities, values)
    }
    fn load_resource(
        codec: &dyn ResourceCodec,
        value: &serde_json::Value,
    ) -> Result<StagedResource, DecodeError> {
        codec.load_json(value)
    }
    fn load_state(
        codec: &dyn StateCodec,
        value: &serde_json::Value,
    ) -> Result<Box<dyn std::any::Any + Send>, String> {
        codec.load_json(value)
    }
}

impl Wire for PostcardCodec {
    fn write(mut document: Document<Bytes>) -> Result<Vec<u8>, SnapshotError> {
        integrity::seal::<PostcardCodec>(&mut document);
        let mut bytes = postcard::to_allocvec(&document)?;
        let closing = integrity::trailer(&bytes);
        bytes.extend_from_slice(&closing);
        Ok(bytes)
    }
    fn read(bytes: &[u8]) -> Result<Document<Bytes>, SnapshotError> {
        check_version(integrity::postcard_version(bytes)?)?;
        integrity::decode_postcard(bytes)
    }
    fn save_component(
        codec: &dyn ComponentCodec,
        registry: &Registry,
    ) -> Option<Result<(IndexList, Bytes), String>> {
        codec.save_postcard(registry)
    }
    fn save_resource(
        codec: &dyn ResourceCodec,
        registry: &Registry,
    ) -> Option<Result<Bytes, String>> {
        codec.save_postcard(registry)
    }
    fn save_state(codec: &dyn StateCodec, value: &dyn std::any::Any) -> Result<Bytes, String> {
        codec.save_postcard(value)
    }
    fn load_component(
        codec: &dyn ComponentCodec,
        target: &Registry,
        entities: Vec<Entity>,
        values: &Bytes,
    ) -> Result<Box<dyn Staged>, LoadFailure> {
        codec.load_postcard(target, entities, values)
    }
    fn load_resource(
        codec: &dyn ResourceCodec,
        value: &Bytes,
    ) -> Result<StagedResource, DecodeError> {
        codec.load_postcard(value)
    }
    fn load_state(
        codec: &dyn StateCodec,
        value: &Bytes,
    ) -> Result<Box<dyn std::any::Any + Send>, String> {
        codec.load_postcard(value)
    }
}
