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
//! # Unsafe code
//!
//! Two places, both covered by the crate's tests under Miri: views hand out
//! `&mut T` for many entities of one write-locked pool through a raw pointer
//! (`query.rs`), and the registry's `&self` accessors read pools and
//! resources without taking their locks, which is sound because write locks
//! are only ever taken through an exclusive borrow (`pools.rs`).

mod bundle;
mod cell;
mod entity;
mod error;
mod pools;
mod query;
mod registry;
mod resources;
mod sparse_set;
mod view;

pub use bundle::Bundle;
pub use cell::RegistryCell;
pub use entity::{Entity, EntityAllocator};
pub use error::{Access, EcsError};
pub use pools::{Component, ComponentAccess, ComponentId, ComponentInfo};
pub use query::{QueryData, QueryFilter, ReadOnlyQueryData, With, Without};
pub use registry::{EntityChanges, InsertError, Registry};
pub use sparse_set::{PAGE_LEN, SparseSet};
pub use view::{View, ViewIter};

#[doc(hidden)]
pub use query::MutCursor;
