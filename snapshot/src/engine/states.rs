//! The codecs of the values systems keep ([`Snapshots::register_state`]),
//! by type: each encodes a value found in a schedule, decodes one for
//! [`Schedule::load_system_states`](scheduler::Schedule::load_system_states),
//! and replaces a system's own value.

use std::any::{Any, TypeId, type_name};

use ecs_engine::{ChangeTick, RemovedCursor};
use scheduler::LastRun;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::document::{Bytes, Codec, JsonCodec, PostcardCodec};
use crate::snapshots::check_unique;
use crate::{EntryKind, SnapshotError, Snapshots};

/// A registered state type.
pub(crate) trait StateCodec: Send + Sync {
    fn name(&self) -> &str;
    fn rust_type(&self) -> TypeId;
    fn type_name(&self) -> &'static str;
    fn save_json(&self, value: &dyn Any) -> Result<serde_json::Value, String>;
    fn save_postcard(&self, value: &dyn Any) -> Result<Bytes, String>;
    fn load_json(&self, value: &serde_json::Value) -> Result<Box<dyn Any + Send>, String>;
    fn load_postcard(&self, value: &Bytes) -> Result<Box<dyn Any + Send>, String>;
    /// Replaces `dst` with `src`; `false` when either is not of this type.
    fn put(&self, dst: &mut dyn Any, src: Box<dyn Any + Send>) -> bool;
}

/// A state type `T` stored as `S`.
struct TypedState<T, S> {
    name: String,
    to: fn(&T) -> S,
    from: fn(S) -> T,
}

impl<T: Send + 'static, S: Serialize + DeserializeOwned + 'static> TypedState<T, S> {
    fn save<C: Codec>(&self, value: &dyn Any) -> Result<C::Value, String> {
        let value = value
            .downcast_ref::<T>()
            .ok_or_else(|| format!("not a `{}`", type_name::<T>()))?;
        // Stored as itself: encoded in place, `to` never called.
        let encoded = match (value as &dyn Any).downcast_ref::<S>() {
            Some(same) => C::encode(same)?,
            None => C::encode(&(self.to)(value))?,
        };
        C::check::<S>(&encoded)?;
        Ok(encoded)
    }

    fn load<C: Codec>(&self, value: &C::Value) -> Result<Box<dyn Any + Send>, String> {
        let stored: S = C::decode(value)?;
        Ok(Box::new((self.from)(stored)))
    }
}

impl<T: Send + 'static, S: Serialize + DeserializeOwned + 'static> StateCodec for TypedState<T, S> {
    fn name(&self) -> &str {
        &self.name
    }
    fn rust_type(&self) -> TypeId {
        TypeId::of::<T>()
    }
    fn type_name(&self) -> &'static str {
        type_name::<T>()
    }
    fn save_json(&self, value: &dyn Any) -> Result<serde_json::Value, String> {
        self.save::<JsonCodec>(value)
    }
    fn save_postcard(&self, value: &dyn Any) -> Result<Bytes, String> {
        self.save::<PostcardCodec>(value)
    }
    fn load_json(&self, value: &serde_json::Value) -> Result<Box<dyn Any + Send>, String> {
        self.load::<JsonCodec>(value)
    }
    fn load_postcard(&self, value: &Bytes) -> Result<Box<dyn Any + Send>, String> {
        self.load::<PostcardCodec>(value)
    }
    fn put(&self, dst: &mut dyn Any, src: Box<dyn Any + Send>) -> bool {
        match (
            dst.downcast_mut::<T>(),
            (src as Box<dyn Any>).downcast::<T>(),
        ) {
            (Some(dst), Ok(src)) => {
                *dst = *src;
                true
            }
            _ => false,
        }
    }
}

/// The state types every schedule's parameters keep: a query's last run
/// and a removal cursor.
pub(crate) fn built_in() -> Vec<Box<dyn StateCodec>> {
    vec![
        Box::new(TypedState::<LastRun, Option<u32>> {
            name: "LastRun".to_owned(),
            to: |last| last.tick().map(ChangeTick::get),
            from: |raw| LastRun::at(raw.map(ChangeTick::new)),
        }),
        Box::new(TypedState::<RemovedCursor, u64> {
            name: "RemovedCursor".to_owned(),
            to: RemovedCursor::next,
            from: RemovedCursor::at,
        }),
    ]
}

impl Snapshots {
    /// Registers a state type `T` under `name` for engine snapshots
    /// ([`save_engine`](Self::save_engine)): the value of a
    /// [`Local<T>`](scheduler::Local), or a
    /// [`StatefulSystem`](scheduler::StatefulSystem) of type `T`.
    /// `LastRun` and `RemovedCursor` (what queries and removal readers
    /// keep) are registered from the start under those names.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::DuplicateName`] or [`SnapshotError::DuplicateType`]
    /// (kind [`EntryKind::State`]); nothing changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_snapshot::Snapshots;
    ///
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_state::<u32>("cooldown")?;
    /// assert!(snapshots.register_state::<u32>("again").is_err());
    /// # Ok::<(), ecs_snapshot::SnapshotError>(())
    /// ```
    pub fn register_state<T>(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        self.register_state_codec(Box::new(TypedState::<T, T> {
            name: name.to_owned(),
            to: |_| unreachable!("a type stored as itself is encoded in place"),
            from: |value| value,
        }))
    }

    pub(crate) fn register_state_codec(
        &mut self,
        codec: Box<dyn StateCodec>,
    ) -> Result<&mut Snapshots, SnapshotError> {
        check_unique(
            EntryKind::State,
            self.states.iter().map(|c| (c.name(), Some(c.rust_type()))),
            (codec.name(), Some(codec.rust_type()), codec.type_name()),
        )?;
        self.states.push(codec);
        Ok(self)
    }

    /// The codec of a value's type.
    pub(crate) fn state_codec(&self, value: &dyn Any) -> Option<&dyn StateCodec> {
        let id = value.type_id();
        self.states
            .iter()
            .find(|c| c.rust_type() == id)
            .map(|c| &**c)
    }

    /// The codec registered under `name`.
    pub(crate) fn state_codec_named(&self, name: &str) -> Option<&dyn StateCodec> {
        self.states.iter().find(|c| c.name() == name).map(|c| &**c)
    }
}
