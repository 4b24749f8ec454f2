//! Owned run-time component values outside the registry: [`RawComponent`]
//! (the promise that some bytes are a value of a component) and
//! [`RawArena`] (a reused, aligned buffer of such values, for command
//! buffers).
//!
//! The unsafe part is making a [`RawComponent`]: its caller vouches for the
//! bytes. Everything after that (storing the value, inserting it into a
//! registry, dropping it unapplied) is safe, so crates that forbid unsafe
//! code, like the command buffer, can hold run-time values.

use std::alloc::{self, Layout};
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use crate::panic::FirstPanic;
use crate::{ComponentId, ComponentInfo, DropFn, EcsError, Entity, Registry};

/// A value of run-time component `id`, given by its bytes, whose ownership
/// moves to whoever consumes this (e.g. [`RawArena::push`], or
/// `CommandBuffer::insert_raw` in the command buffer crate).
///
/// Made only by the `unsafe` [`RawComponent::new`]. It is move-only (not
/// `Clone`, not `Copy`), so each value is consumed at most once: its
/// destructor cannot run twice through two copies. It borrows its source
/// bytes for `'a`, so it cannot outlive them. Dropping a `RawComponent`
/// without consuming it leaves the value with the caller.
///
/// ```compile_fail
/// use std::alloc::Layout;
/// use ecs_engine::{ComponentDescriptor, RawArena, RawComponent, Registry};
///
/// let mut registry = Registry::new();
/// let id = registry
///     .register_runtime(ComponentDescriptor::new("hp", Layout::new::<u32>()))
///     .unwrap();
/// let info = registry.component_info(id).unwrap();
/// let hp = 30u32;
/// // SAFETY: `info` is `id`'s, and `hp` a valid u32 (plain bytes).
/// let value = unsafe { RawComponent::new(id, info, RawComponent::bytes_of(&hp)) };
/// let mut arena = RawArena::new();
/// arena.push(value);
/// arena.push(value); // used twice: refused, the value was moved
/// ```
///
/// ```compile_fail
/// use std::alloc::Layout;
/// use ecs_engine::{ComponentDescriptor, RawArena, RawComponent, Registry};
///
/// let mut registry = Registry::new();
/// let id = registry
///     .register_runtime(ComponentDescriptor::new("hp", Layout::new::<u32>()))
///     .unwrap();
/// let info = registry.component_info(id).unwrap();
/// let value = {
///     let hp = 30u32;
///     // SAFETY: `info` is `id`'s, and `hp` a valid u32 (plain bytes).
///     unsafe { RawComponent::new(id, info, RawComponent::bytes_of(&hp)) }
/// }; // `hp` is gone: refused, the value borrows it
/// RawArena::new().push(value);
/// ```
pub struct RawComponent<'a> {
    id: ComponentId,
    info: &'a ComponentInfo,
    src: &'a [MaybeUninit<u8>],
}

impl fmt::Debug for RawComponent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawComponent")
            .field("id", &self.id)
            .field("component", &self.info.name())
            .finish()
    }
}

impl<'a> RawComponent<'a> {
    /// The value held in `src` of component `id`, described by `info`.
    ///
    /// # Safety
    ///
    /// - `info` is the [`ComponentInfo`] of `id` in the registry the value
    ///   will be inserted into (a different layout is caught there and
    ///   refused with [`EcsError::LayoutMismatch`]; a different destructor
    ///   is not);
    /// - the first `info.layout().size()` bytes of `src` (at any alignment)
    ///   hold a valid value of the component, which may be sent to and
    ///   shared between threads;
    /// - once this is consumed, the bytes at `src` are moved out: the
    ///   caller must not drop that value, nor count on it being dropped
    ///   at `src`.
    ///
    /// # Panics
    ///
    /// When `src` is shorter than the component's size.
    #[track_caller]
    pub unsafe fn new(
        id: ComponentId,
        info: &'a ComponentInfo,
        src: &'a [MaybeUninit<u8>],
    ) -> Self {
        assert!(
            src.len() >= info.layout().size(),
            "RawComponent::new: {} bytes given for component {} of {} bytes",
            src.len(),
            info.name(),
            info.layout().size()
        );
        RawComponent { id, info, src }
    }

    /// The bytes of `value`, for [`new`](Self::new) (a `Copy` type holds
    /// no interior mutability, so its bytes can be read through a shared
    /// borrow).
    pub fn bytes_of<T: Copy>(value: &T) -> &[MaybeUninit<u8>] {
        // SAFETY: `value` is readable for `size_of::<T>()` bytes for the
        // borrow's lifetime; `MaybeUninit<u8>` accepts any byte (padding
        // included) and has alignment 1; `T: Copy` has no `UnsafeCell`, so
        // nothing writes these bytes while the shared borrow lives.
        unsafe {
            std::slice::from_raw_parts(
                std::ptr::from_ref(value).cast::<MaybeUninit<u8>>(),
                std::mem::size_of::<T>(),
            )
        }
    }

    /// The component's id.
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// The component's info.
    pub fn info(&self) -> &'a ComponentInfo {
        self.info
    }
}

/// Why a [`RawArena`] could not grow.
#[derive(Debug)]
enum Grow {
    /// The size would exceed `isize::MAX` bytes.
    Overflow,
    /// The allocator refused this layout.
    Refused(Layout),
}

/// Where one value sits in a [`RawArena`]; returned by [`RawArena::push`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawSlot(usize);

struct Entry {
    id: ComponentId,
    offset: usize,
    layout: Layout,
    drop: Option<DropFn>,
    /// Moved into a registry or dropped already.
    taken: bool,
}

/// Run-time component values, each stored aligned to its layout in one
/// byte buffer that is reused after [`clear`](Self::clear): after warm-up,
/// pushing allocates nothing.
///
/// Each value leaves exactly once: inserted into a registry by
/// [`insert_into`](Self::insert_into) (or dropped there when the insert is
/// refused), or dropped by [`clear`](Self::clear) or the arena's drop,
/// always with a pointer aligned to its layout.
///
/// # Examples
///
/// ```
/// use std::alloc::Layout;
/// use ecs_engine::{ComponentDescriptor, RawArena, RawComponent, Registry};
///
/// let mut registry = Registry::new();
/// let id = registry
///     .register_runtime(ComponentDescriptor::new("hp", Layout::new::<u32>()))
///     .unwrap();
/// let e = registry.spawn(());
/// let mut arena = RawArena::new();
/// let hp = 30u32;
/// let info = registry.component_info(id).unwrap();
/// // SAFETY: `info` is `id`'s, and `hp` a valid u32 (plain bytes).
/// let slot = arena.push(unsafe { RawComponent::new(id, info, RawComponent::bytes_of(&hp)) });
/// arena.insert_into(slot, &mut registry, e).unwrap();
/// arena.clear();
/// assert!(registry.has_id(e, id));
/// ```
pub struct RawArena {
    buf: NonNull<u8>,
    /// Bytes allocated (0: `buf` is dangling).
    cap: usize,
    /// Alignment of the allocation: the largest alignment pushed so far.
    align: usize,
    /// Bytes in use.
    used: usize,
    entries: Vec<Entry>,
}

// SAFETY: the arena owns its buffer like a `Vec<u8>`; the values in it were
// vouched `Send + Sync` by `RawComponent::new`'s caller, and the
// destructors are `Send + Sync`.
unsafe impl Send for RawArena {}
// SAFETY: as above; `&RawArena` reads nothing but its own fields.
unsafe impl Sync for RawArena {}

impl fmt::Debug for RawArena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawArena")
            .field("values", &self.entries.len())
            .field("bytes", &self.used)
            .finish()
    }
}

impl Default for RawArena {
    fn default() -> Self {
        Self::new()
    }
}

/// The address of `entry`'s value in a buffer starting at `buf`.
fn value_ptr(buf: NonNull<u8>, entry: &Entry) -> NonNull<u8> {
    if entry.layout.size() == 0 {
        NonNull::new(ptr::without_provenance_mut(entry.layout.align())).expect("non-zero")
    } else {
        NonNull::new(buf.as_ptr().wrapping_add(entry.offset)).expect("in the allocation")
    }
}

impl RawArena {
    /// An empty arena; allocates nothing.
    pub fn new() -> Self {
        RawArena {
            buf: NonNull::dangling(),
            cap: 0,
            align: 1,
            used: 0,
            entries: Vec::new(),
        }
    }

    /// Number of values pushed since the last [`clear`](Self::clear)
    /// (taken or not).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when nothing was pushed since the last clear.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Copies `value`'s bytes into the arena, which now owns the value.
    ///
    /// # Panics
    ///
    /// When the buffer would exceed `isize::MAX` bytes; aborts (as `Vec`
    /// does) when the allocator refuses the memory. Call
    /// [`try_reserve`](Self::try_reserve) first to get those as an error.
    pub fn push(&mut self, value: RawComponent<'_>) -> RawSlot {
        let layout = value.info.layout();
        let size = layout.size();
        let offset = match self.room_for(layout) {
            Ok(offset) => offset,
            Err(Grow::Overflow) => panic!("raw arena overflow"),
            Err(Grow::Refused(layout)) => alloc::handle_alloc_error(layout),
        };
        if size != 0 {
            let dst = self.buf.as_ptr().wrapping_add(offset);
            // SAFETY: `src` is a slice of at least `size` bytes (checked by
            // `RawComponent::new`); `dst..dst + size` lies in our allocation
            // (`room_for` made room), which `src` cannot point into (nobody
            // outside sees it).
            unsafe { ptr::copy_nonoverlapping(value.src.as_ptr().cast::<u8>(), dst, size) };
            self.used = offset + size;
        }
        self.entries.push(Entry {
            id: value.id,
            offset,
            layout,
            drop: value.info.drop_fn().cloned(),
            taken: false,
        });
        RawSlot(self.entries.len() - 1)
    }

    /// Makes room for one more value of component `info`, so that the next
    /// [`push`](Self::push) of such a value allocates nothing.
    ///
    /// # Errors
    ///
    /// [`EcsError::OutOfMemory`] when the buffer would exceed
    /// `isize::MAX` bytes or the allocator refuses the memory; the arena
    /// is unchanged then.
    pub fn try_reserve(&mut self, info: &ComponentInfo) -> Result<(), EcsError> {
        let refused = |bytes| EcsError::OutOfMemory {
            component: info.name_cow(),
            bytes,
        };
        match self.room_for(info.layout()) {
            Ok(_) => {}
            Err(Grow::Overflow) => return Err(refused(usize::MAX)),
            Err(Grow::Refused(layout)) => return Err(refused(layout.size())),
        }
        self.entries.try_reserve(1).map_err(|_| {
            refused((self.entries.len() + 1).saturating_mul(std::mem::size_of::<Entry>()))
        })
    }

    /// The offset at which a value of `layout` goes, growing the buffer
    /// when it has no room there (a zero-size value takes no room: 0).
    fn room_for(&mut self, layout: Layout) -> Result<usize, Grow> {
        let size = layout.size();
        if size == 0 {
            return Ok(0);
        }
        let offset = self.used.next_multiple_of(layout.align());
        let end = offset.checked_add(size).ok_or(Grow::Overflow)?;
        if end > self.cap || layout.align() > self.align {
            self.grow(end, layout.align())?;
        }
        Ok(offset)
    }

    /// Reallocates to hold at least `min_cap` bytes with alignment `align`,
    /// keeping the bytes in use (values are moved by copying bytes). Tries
    /// twice the capacity first, then exactly `min_cap`; unchanged when
    /// the allocator refuses both.
    fn grow(&mut self, min_cap: usize, align: usize) -> Result<(), Grow> {
        let new_align = self.align.max(align);
        let doubled = min_cap.max(self.cap.saturating_mul(2)).max(64);
        let try_alloc = |cap: usize| {
            let layout = Layout::from_size_align(cap, new_align).map_err(|_| Grow::Overflow)?;
            // SAFETY: `layout` has a non-zero size (at least `min_cap`,
            // which covers a value of non-zero size).
            let new = unsafe { alloc::alloc(layout) };
            NonNull::new(new)
                .map(|new| (new, cap))
                .ok_or(Grow::Refused(layout))
        };
        let (new, new_cap) = match try_alloc(doubled) {
            Err(_) if min_cap < doubled => try_alloc(min_cap)?,
            result => result?,
        };
        if self.cap != 0 {
            // SAFETY: the old buffer holds `used <= cap` bytes, the new one
            // has room for them, and they are different allocations.
            unsafe { ptr::copy_nonoverlapping(self.buf.as_ptr(), new.as_ptr(), self.used) };
            // SAFETY: allocated by an earlier `grow` with this layout.
            unsafe { alloc::dealloc(self.buf.as_ptr(), self.layout()) };
        }
        self.buf = new;
        self.cap = new_cap;
        self.align = new_align;
        Ok(())
    }

    fn layout(&self) -> Layout {
        Layout::from_size_align(self.cap, self.align).expect("checked when allocated")
    }

    /// The component of the value at `slot`.
    ///
    /// # Panics
    ///
    /// When `slot` is not from this arena since its last clear.
    #[track_caller]
    pub fn id(&self, slot: RawSlot) -> ComponentId {
        self.entries[slot.0].id
    }

    /// Moves the value at `slot` into `registry` as `entity`'s component,
    /// as [`Registry::insert_raw`] (replacing and dropping an old value).
    ///
    /// # Errors
    ///
    /// Those of [`Registry::insert_raw`] (the entity is not alive, the id
    /// is unknown or a Rust type), and [`EcsError::LayoutMismatch`] when the
    /// value was pushed with another layout than `registry` has for its
    /// component. The value is dropped then; either way it has left the
    /// arena.
    ///
    /// # Panics
    ///
    /// When `slot` is not from this arena since its last clear, or its
    /// value has left already.
    #[track_caller]
    pub fn insert_into(
        &mut self,
        slot: RawSlot,
        registry: &mut Registry,
        entity: Entity,
    ) -> Result<(), EcsError> {
        let entry = &mut self.entries[slot.0];
        assert!(
            !entry.taken,
            "RawArena: the value of {slot:?} has left already"
        );
        entry.taken = true;
        let value = value_ptr(self.buf, entry);
        let result = match registry.component_info(entry.id) {
            Some(info) if info.is_runtime() && info.layout() != entry.layout => {
                Err(EcsError::LayoutMismatch {
                    component: info.name_cow(),
                    expected: info.layout(),
                    found: entry.layout,
                })
            }
            // SAFETY: `value` holds a valid value of the component
            // (`RawComponent::new` contract), readable for the registry's
            // size of it (same layout, checked above; an unknown or typed id
            // is refused before any read), outside the registry's storage.
            // It was marked taken: if the insert succeeds the registry owns
            // it, else it is dropped below.
            _ => unsafe { registry.insert_raw(entity, entry.id, value.as_ptr()) },
        };
        if let (Err(_), Some(drop)) = (&result, &entry.drop) {
            // SAFETY: the registry refused the value, so it is still ours,
            // live, aligned to its layout, and marked taken (never used again).
            unsafe { drop.call(value) };
        }
        result
    }

    /// Drops every value that has not left yet, and empties the arena,
    /// keeping its memory for reuse.
    ///
    /// # Panics
    ///
    /// When a destructor panics: the arena is emptied first and every
    /// other value still dropped (once), then the first panic resumes.
    pub fn clear(&mut self) {
        self.used = 0;
        let buf = self.buf;
        let mut panic = FirstPanic::default();
        for entry in self.entries.drain(..) {
            if let (false, Some(drop)) = (entry.taken, &entry.drop) {
                // SAFETY: an entry not taken holds a live value we own,
                // aligned to its layout; the entry is removed (never again).
                panic.run(|| unsafe { drop.call(value_ptr(buf, &entry)) });
            }
        }
        panic.resume();
    }

    /// Bytes held on the heap (buffer and bookkeeping capacity).
    pub fn heap_bytes(&self) -> usize {
        self.cap + self.entries.capacity() * std::mem::size_of::<Entry>()
    }
}

impl Drop for RawArena {
    fn drop(&mut self) {
        self.clear();
        if self.cap != 0 {
            // SAFETY: allocated by `grow` with this layout.
            unsafe { alloc::dealloc(self.buf.as_ptr(), self.layout()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ComponentDescriptor;

    /// A registry with a `u64` component and one of `huge` bytes.
    fn registry(huge: usize) -> (Registry, ComponentId, ComponentId) {
        let mut registry = Registry::new();
        let small = registry
            .register_runtime(ComponentDescriptor::new("small", Layout::new::<u64>()))
            .unwrap();
        let layout = Layout::from_size_align(huge, 8).unwrap();
        let huge = registry
            .register_runtime(ComponentDescriptor::new("huge", layout))
            .unwrap();
        (registry, small, huge)
    }

    /// Pushes a `u64` value of `small` and inserts it on a new entity.
    fn push_small(registry: &mut Registry, arena: &mut RawArena, small: ComponentId, v: u64) {
        let info = registry.component_info(small).unwrap();
        arena.try_reserve(info).unwrap();
        // SAFETY: `info` is `small`'s, and `v` a valid u64.
        let slot =
            arena.push(unsafe { RawComponent::new(small, info, RawComponent::bytes_of(&v)) });
        let e = registry.spawn(());
        arena.insert_into(slot, registry, e).unwrap();
        let stored = registry.get_raw(e, small).unwrap().cast::<u64>();
        // SAFETY: an aligned u64, read while the registry is not changed.
        assert_eq!(unsafe { *stored.as_ptr() }, v);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri stops at an allocation it cannot make instead of returning null"
    )]
    fn try_reserve_refuses_what_the_allocator_cannot_give() {
        let largest = isize::MAX as usize & !7;
        let (mut registry, small, huge) = registry(largest);
        let mut arena = RawArena::new();
        let refused = arena
            .try_reserve(registry.component_info(huge).unwrap())
            .unwrap_err();
        assert!(
            matches!(&refused, EcsError::OutOfMemory { component, bytes }
                if component == "huge" && *bytes == largest),
            "{refused:?}"
        );
        assert_eq!((arena.len(), arena.heap_bytes()), (0, 0));
        // The arena is still usable.
        push_small(&mut registry, &mut arena, small, 7);
    }

    #[test]
    fn try_reserve_refuses_a_buffer_past_isize_max() {
        // Room for the value alone fits `isize::MAX`; after a `u64` it
        // does not: refused before any allocation.
        let (mut registry, small, huge) = registry(isize::MAX as usize & !7);
        let mut arena = RawArena::new();
        push_small(&mut registry, &mut arena, small, 1);
        let used = arena.heap_bytes();
        let refused = arena
            .try_reserve(registry.component_info(huge).unwrap())
            .unwrap_err();
        assert!(
            matches!(
                &refused,
                EcsError::OutOfMemory {
                    bytes: usize::MAX,
                    ..
                }
            ),
            "{refused:?}"
        );
        assert_eq!(arena.heap_bytes(), used);
        push_small(&mut registry, &mut arena, small, 2);
    }
}
