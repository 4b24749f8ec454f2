//! The sparse-set registry: generational entities, one sparse set per
//! component type, views that join several types, and resources.
//!
//! A game or simulation keeps its world in a [`Registry`]. An [`Entity`] is a
//! generational handle (index + generation), so a handle kept after its
//! entity died never reads the data of the slot's next owner. Components are
//! plain `'static + Send + Sync` values, stored in one [`SparseSet`] per type:
//! packed arrays for fast iteration, and a paged sparse array for O(1) lookup
//! by entity. A [`View`] joins several types by walking the smallest pool and
//! looking the entity up in the others; [`View::par_each`] splits the walk
//! over a rayon pool. Each pool sits behind its own lock, so a
//! [`RegistryCell`] can be shared by parallel systems that touch disjoint
//! types.
//! A system's `Query<Q, F>` parameter (in the `scheduler` crate) is such a
//! [`View`], opened on the [`RegistryCell`] the scheduler lends for one wave,
//! after the schedule checked that no system of the same wave writes what it
//! reads.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::{Entity, Registry};
//!
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! struct Position { x: f32, y: f32 }
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! struct Velocity { x: f32, y: f32 }
//!
//! let mut registry = Registry::new();
//! let ship = registry.spawn((Position { x: 0.0, y: 0.0 }, Velocity { x: 1.0, y: 2.0 }));
//! let rock = registry.spawn((Position { x: 5.0, y: 5.0 },));
//!
//! registry.view_mut::<(&mut Position, &Velocity)>().each(|(p, v)| {
//!     p.x += v.x;
//!     p.y += v.y;
//! });
//!
//! assert_eq!(registry.get::<Position>(ship), Some(&Position { x: 1.0, y: 2.0 }));
//! assert_eq!(registry.get::<Position>(rock), Some(&Position { x: 5.0, y: 5.0 }));
//! let moving: Vec<Entity> = registry.view::<(Entity, &Velocity)>().iter().map(|(e, _)| e).collect();
//! assert_eq!(moving, vec![ship]);
//! ```
//!
//! # Hierarchies and disabled entities
//!
//! [`Registry::set_parent`] links a child to a parent: a [`ChildOf`] on the
//! child and a [`Children`] list, in attachment order, on the parent, kept
//! consistent through every change ([`Registry::despawn`] detaches the
//! children, [`Registry::despawn_recursive`] takes them along). An entity
//! with the [`Disabled`] marker ([`Registry::disable`]) keeps its components
//! but every view skips it unless the query names `Disabled`.
//!
//! # Change detection
//!
//! Opt-in per component type ([`Registry::track_changes`]; the scheduler
//! enables it for the types its systems ask about): the [`Added`] and
//! [`Changed`] filters, the [`Ref`] term (`is_added()`, `is_changed()`),
//! and the removal log ([`Registry::removed`]), all relative to a change
//! tick (a system's last run, or one the caller saved:
//! [`Registry::view_since`]). A tracked pool keeps two `u32` ticks per
//! component beside its arrays; `&mut T` marks what it hands out,
//! [`Mut`] marks on write, and [`Untracked`] opts out. Ticks compare modulo 2^32 with a clamped
//! horizon ([`MAX_CHANGE_AGE`]). Details in the module docs of `change/mod.rs`,
//! reproduced on [`Added`]'s and [`Changed`]'s pages.
//!
//! # Components registered at run time
//!
//! Beside Rust types, a registry holds components described at run time by
//! a name, a [`Layout`](std::alloc::Layout) and an optional destructor
//! ([`ComponentDescriptor`], [`Registry::register_runtime`]), for the C
//! API. They live in untyped pools of the same table, so despawn, the
//! id-based methods and the scheduler treat both kinds alike; their values
//! are reached through pointers ([`Registry::insert_raw`],
//! [`Registry::get_raw`], [`RawView`]) and held outside the registry as
//! [`RawComponent`]s and in [`RawArena`]s.
//!
//! # What the compiler refuses
//!
//! The rules the unsafe code relies on are enforced by types, and these
//! refusals are tested. A structural change from inside a view's pass
//! (record it with [`Registry::visit`] or a command buffer instead):
//!
//! ```compile_fail
//! let mut registry = ecs_engine::Registry::new();
//! let e = registry.spawn((1u32,));
//! registry.view_mut::<&mut u32>().each(|_| {
//!     registry.despawn(e).unwrap();
//! });
//! ```
//!
//! Two live mutable borrows of one pool:
//!
//! ```compile_fail
//! let mut registry = ecs_engine::Registry::new();
//! let a = registry.spawn((1u32,));
//! let b = registry.spawn((2u32,));
//! let first = registry.get_mut::<u32>(a).unwrap();
//! let second = registry.get_mut::<u32>(b).unwrap();
//! std::mem::swap(first, second);
//! ```
//!
//! The others sit beside their types: an outside read-only impl for a
//! write term ([`ReadOnlyQueryData`]), a run-time value used twice or after
//! its source is gone ([`RawComponent`]), an unlocked read beside a
//! [`RegistryCell`].
//!
//! # Unsafe code
//!
//! Confined to a few places, all covered by the crate's tests under Miri:
//! views hand out `&mut T` for many entities of one write-locked pool
//! through a raw pointer (`query/terms.rs`, `query/tracked.rs`); the registry's `&self` accessors
//! read pools and resources without taking their locks, which is sound
//! because write locks are only ever taken through an exclusive borrow
//! (`storage/pools.rs`), and views and cells hold a lock-only handle with no path
//! to those unlocked reads (`storage/locked.rs`); the entity slice cast of [`Entity::slice_as_bits`]; and
//! the byte storage of run-time components (`storage/blob_pool.rs`, the aligned
//! column; `raw_value.rs`, the arena), whose public entry points
//! ([`Registry::insert_raw`], [`RawComponent::new`],
//! [`ComponentDescriptor::with_drop`]) are `unsafe fn`s with a `# Safety`
//! contract.

mod access;
mod bundle;
mod cell;
mod change;
mod component;
mod descriptor;
mod disabled;
mod entity;
mod error;
mod hierarchy;
mod panic;
mod parallel;
mod query;
mod raw_value;
mod registry;
mod required;
mod resources;
mod sort;
mod storage;

pub use access::{Access, ComponentAccess, ComponentKey};
pub use bundle::{Bundle, SpawnBatch};
pub use cell::RegistryCell;
pub use change::{
    CHECK_INTERVAL, ChangeClockState, ChangeTick, MAX_CHANGE_AGE, PoolTicks, PoolTicksError,
    REMOVED_CAPACITY, Removed, RemovedCursor, STALE_AGE, is_newer,
};
pub use component::{Component, ComponentId, ComponentInfo};
pub use descriptor::{ComponentDescriptor, DropFn};
pub use disabled::Disabled;
pub use entity::{
    AllocatorState, AllocatorStateError, Entity, EntityAllocator, EntityMap, IndexLane, MapEntities,
};
pub use error::EcsError;
pub use hierarchy::{
    BreadthFirst, ChildOf, Children, DepthFirst, HierarchyState, HierarchyStateError,
};
pub use panic::panic_message;
pub use parallel::{par_for_each, par_map, yield_core};
pub use query::{
    Added, Changed, ComponentMut, ComponentRef, ExclusiveView, Has, Mut, Or, QueryData,
    QueryFilter, QueryShape, RawChunk, RawView, ReadOnlyQueryData, Ref, Untracked, View, ViewIter,
    With, Without, run_serial, run_shuffled, shuffled_order, walk_threads,
};
pub use raw_value::{RawArena, RawComponent, RawSlot};
pub use registry::{
    CloneEntityError, EntityChanges, InsertError, Registry, RegistryState, RuntimeBytes,
    StateError, StateRing,
};
pub use resources::{ResourceTicks, ResourceTicksMut};
pub use storage::{PAGE_LEN, PoolMut, SparseSet, TypeIdHasher, TypeIdMap};

#[doc(hidden)]
pub use query::{HasBlock, MutCursor, MutTermBlock, MutTermCursor, RefBlock, RefCursor};
#[doc(hidden)]
pub use storage::Claimed;
