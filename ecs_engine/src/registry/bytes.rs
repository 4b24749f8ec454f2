//! `Registry` methods on the bytes of savable run-time components: read
//! a pool's values as bytes, and insert a value from bytes, with no
//! `unsafe` at the call site (the component's
//! [`ComponentDescriptor::savable`](crate::ComponentDescriptor::savable)
//! declaration vouches for both).

use std::alloc::Layout;

use super::Registry;
use crate::storage::blob_pool::BlobPool;
use crate::{ComponentId, ComponentInfo, EcsError, Entity};

/// The values of a savable run-time component, in its pool's dense order
/// (the order raw views visit them): each entity with its value's
/// `layout.size()` bytes. From [`Registry::runtime_bytes`].
pub struct RuntimeBytes<'a> {
    pool: &'a BlobPool,
    info: &'a ComponentInfo,
}

impl<'a> RuntimeBytes<'a> {
    /// The component's info (name, layout).
    pub fn info(&self) -> &'a ComponentInfo {
        self.info
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// `true` when the pool holds no value.
    pub fn is_empty(&self) -> bool {
        self.pool.len() == 0
    }

    /// The owners, in dense order.
    pub fn entities(&self) -> &'a [Entity] {
        self.pool.entities()
    }

    /// The bytes of the value at dense position `i`, or `None` past the
    /// end.
    pub fn value(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.pool.len() {
            return None;
        }
        let size = self.info.layout().size();
        // SAFETY: `i < len`, so the value is live: `size` bytes at an
        // aligned address inside the column (a dangling, aligned address
        // for a zero-size value, read as an empty slice). Every byte is
        // initialised: the component was declared savable, whose contract
        // is that every inserted value has all its bytes initialised, and
        // the pool only copies whole values. The slice borrows the pool
        // through `self`, so no `&mut` access overlaps it.
        Some(unsafe { std::slice::from_raw_parts(self.pool.ptr_at(i), size) })
    }

    /// Every value with its owner, in dense order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Entity, &'a [u8])> + '_ {
        (0..self.len()).map(|i| {
            let bytes = self.value(i).expect("i is below the length");
            (self.pool.entities()[i], bytes)
        })
    }
}

impl std::fmt::Debug for RuntimeBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBytes")
            .field("component", &self.info.name())
            .field("len", &self.len())
            .finish()
    }
}

/// `info`, when its values are saved by their bytes.
fn savable(info: &ComponentInfo) -> Result<(), EcsError> {
    if info.is_savable() {
        return Ok(());
    }
    let reason = if info.drop_fn().is_some() {
        "it has a destructor, so a byte copy would own its resources twice"
    } else {
        "it was not registered as savable (`ComponentDescriptor::savable`)"
    };
    Err(EcsError::NotSavable {
        component: info.name_cow(),
        reason,
    })
}

impl Registry {
    /// The values of run-time component `id` as bytes, for a snapshot.
    ///
    /// # Errors
    ///
    /// [`EcsError::UnknownComponent`] when `id` names no component here,
    /// [`EcsError::TypedComponent`] when it names a Rust type,
    /// [`EcsError::NotSavable`] when the component was not declared
    /// [`savable`](crate::ComponentDescriptor::savable) or has a
    /// destructor.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use ecs_engine::{ComponentDescriptor, Registry};
    ///
    /// let mut registry = Registry::new();
    /// // SAFETY: a `u32` has no padding and owns nothing.
    /// let descriptor = unsafe { ComponentDescriptor::new("hp", Layout::new::<u32>()).savable() };
    /// let hp = registry.register_runtime(descriptor)?;
    /// let e = registry.spawn(());
    /// registry.insert_runtime_bytes(e, hp, &7u32.to_ne_bytes())?;
    /// let values = registry.runtime_bytes(hp)?;
    /// assert_eq!(values.iter().collect::<Vec<_>>(), [(e, &7u32.to_ne_bytes()[..])]);
    /// # Ok::<(), ecs_engine::EcsError>(())
    /// ```
    pub fn runtime_bytes(&self, id: ComponentId) -> Result<RuntimeBytes<'_>, EcsError> {
        let (pool, info) = self.pools.blob(id)?;
        savable(info)?;
        Ok(RuntimeBytes { pool, info })
    }

    /// Gives `entity` the value of savable run-time component `id` held
    /// in `bytes` (exactly the component's size), replacing the value it
    /// had, as [`insert_raw`](Self::insert_raw) does.
    ///
    /// # Errors
    ///
    /// As [`runtime_bytes`](Self::runtime_bytes), and
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive,
    /// [`EcsError::LayoutMismatch`] when `bytes` is not the component's
    /// size, [`EcsError::SlotHeld`] and [`EcsError::OutOfMemory`] as
    /// `insert_raw`. Nothing changes on an error.
    pub fn insert_runtime_bytes(
        &mut self,
        entity: Entity,
        id: ComponentId,
        bytes: &[u8],
    ) -> Result<(), EcsError> {
        let (_, info) = self.pools.blob(id)?;
        savable(info)?;
        let expected = info.layout();
        if bytes.len() != expected.size() {
            return Err(EcsError::LayoutMismatch {
                component: info.name_cow(),
                expected,
                found: Layout::from_size_align(bytes.len(), expected.align()).unwrap_or(expected),
            });
        }
        // SAFETY: `bytes` is readable for the component's size (checked
        // just above; `insert_raw` reads unaligned), and is a valid value:
        // the component is savable, whose contract makes any bytes saved
        // from a value a valid value, owning nothing, so it may be sent
        // and shared between threads. It is a shared borrow, so it cannot
        // point into the storage `insert_raw` writes (`&mut self`).
        unsafe { self.insert_raw(entity, id, bytes.as_ptr()) }
    }
}
