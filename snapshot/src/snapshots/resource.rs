//! Registered resource types: how each is saved, loaded (checked when
//! asked) and removed ([`ResourceCodec`], [`TypedResource`]).

use std::any::{Any, TypeId, type_name};

use ecs_engine::{Registry, ResourceTicks};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::document::{Codec, DecodeError, JsonCodec, PostcardCodec};

/// A resource loaded and waiting for the swap.
pub(crate) type StagedResource = Box<dyn FnOnce(&mut Registry)>;

/// A registered resource type.
pub(crate) trait ResourceCodec: Send + Sync {
    fn name(&self) -> &str;
    fn rust_type(&self) -> TypeId;
    fn type_name(&self) -> &'static str;
    fn save_json(&self, registry: &Registry) -> Option<Result<serde_json::Value, String>>;
    fn save_postcard(&self, registry: &Registry) -> Option<Result<crate::document::Bytes, String>>;
    fn load_json(&self, value: &serde_json::Value) -> Result<StagedResource, DecodeError>;
    fn load_postcard(&self, value: &crate::document::Bytes) -> Result<StagedResource, DecodeError>;
    fn remove(&self, registry: &mut Registry);
    /// The resource's change ticks, when the registry has it.
    fn ticks(&self, registry: &Registry) -> Option<ResourceTicks>;
    /// Sets the change ticks of the resource the load just inserted.
    fn set_ticks(&self, registry: &mut Registry, ticks: ResourceTicks);
    /// `true` when a snapshot without the resource is refused
    /// ([`Snapshots::register_resource_checked`]).
    fn required(&self) -> bool {
        false
    }
}

/// What a loaded value of `S` must pass before anything changes
/// ([`Snapshots::register_resource_checked`]).
pub(super) type ResourceCheck<S> = Box<dyn Fn(&S) -> Result<(), String> + Send + Sync>;

/// A resource type `R` stored as `S`, converted by two functions; maybe
/// checked when loaded, maybe required in every snapshot loaded.
pub(super) struct TypedResource<R, S> {
    pub(super) name: String,
    pub(super) to: fn(&R) -> S,
    pub(super) from: fn(S) -> R,
    pub(super) check: Option<ResourceCheck<S>>,
    pub(super) required: bool,
}

impl<R, S> TypedResource<R, S>
where
    R: Send + Sync + 'static,
    S: Serialize + DeserializeOwned + 'static,
{
    fn save<C: Codec>(&self, registry: &Registry) -> Option<Result<C::Value, String>> {
        let value = registry.resource::<R>()?;
        // Stored as itself: encoded in place, `to` never called.
        let encoded = match (value as &dyn Any).downcast_ref::<S>() {
            Some(same) => C::encode(same),
            None => C::encode(&(self.to)(value)),
        };
        Some(encoded.and_then(|v| C::check::<S>(&v).map(|()| v)))
    }

    fn load<C: Codec>(&self, value: &C::Value) -> Result<StagedResource, DecodeError> {
        let decoded = C::decode::<S>(value)?;
        if let Some(check) = &self.check {
            check(&decoded)?;
        }
        let value = (self.from)(decoded);
        Ok(Box::new(move |registry: &mut Registry| {
            registry.insert_resource(value);
        }))
    }
}

impl<R, S> ResourceCodec for TypedResource<R, S>
where
    R: Send + Sync + 'static,
    S: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn rust_type(&self) -> TypeId {
        TypeId::of::<R>()
    }
    fn type_name(&self) -> &'static str {
        type_name::<R>()
    }
    fn save_json(&self, registry: &Registry) -> Option<Result<serde_json::Value, String>> {
        self.save::<JsonCodec>(registry)
    }
    fn save_postcard(&self, registry: &Registry) -> Option<Result<crate::document::Bytes, String>> {
        self.save::<PostcardCodec>(registry)
    }
    fn load_json(&self, value: &serde_json::Value) -> Result<StagedResource, DecodeError> {
        self.load::<JsonCodec>(value)
    }
    fn load_postcard(&self, value: &crate::document::Bytes) -> Result<StagedResource, DecodeError> {
        self.load::<PostcardCodec>(value)
    }
    fn remove(&self, registry: &mut Registry) {
        registry.remove_resource::<R>();
    }
    fn ticks(&self, registry: &Registry) -> Option<ResourceTicks> {
        registry.resource_ticks::<R>()
    }
    fn set_ticks(&self, registry: &mut Registry, ticks: ResourceTicks) {
        // The resource was inserted by the load just before.
        let _ = registry.set_resource_ticks::<R>(ticks);
    }
    fn required(&self) -> bool {
        self.required
    }
}
