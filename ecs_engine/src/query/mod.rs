//! Queries and views. What a view asks for: [`QueryData`] terms (`&T`,
//! `&mut T`, `Option<Q>`, [`Entity`], [`Has`] and tuples of them, and the
//! change-tracking [`Ref`], [`Mut`] and [`Untracked`]) and
//! [`QueryFilter`]s ([`With`], [`Without`], [`Or`], [`Added`],
//! [`Changed`] and tuples of them).
//!
//! A view borrows every pool its query names (a read lock for `&T`, a write
//! lock for `&mut T`), picks the smallest pool among the required terms as
//! the *driver* (when the query has no required term: the smallest pool a
//! filter requires, e.g. [`With`]'s; when neither has one: every alive
//! entity), walks the driver's dense entities and, for each, looks the
//! entity up in the other pools in O(1). The lookup first tries the same
//! dense position as in the driver, so pools that hold the same entities in
//! the same order are joined without touching their sparse arrays.
//!
//! # Files
//!
//! - `traits.rs`: the traits and the driver (runs, blocks, run cache);
//! - `terms.rs`: `&T`, `&mut T`, `Option<Q>`, [`Entity`], [`Has`], tuples;
//! - `filters.rs`: every filter;
//! - `tracked.rs`: [`Ref`], [`Mut`], [`Untracked`];
//! - `view.rs` and `par.rs`: [`View`], [`ExclusiveView`], [`ViewIter`],
//!   sequential and parallel passes;
//! - `open.rs`: the view entry points of `Registry` and `RegistryCell`;
//! - `raw_view.rs`: [`RawView`] over run-time components;
//! - `shape.rs`: [`QueryShape`], what proves two views disjoint.

pub(crate) mod filters;
mod open;
pub(crate) mod par;
pub(crate) mod raw_view;
pub(crate) mod shape;
pub(crate) mod terms;
pub(crate) mod tracked;
pub(crate) mod traits;
pub(crate) mod view;

pub use filters::{Added, Changed, Or, With, Without};
pub use par::{run_serial, run_shuffled, shuffled_order, walk_threads};
pub use raw_view::{RawChunk, RawView};
pub use shape::QueryShape;
pub use terms::{Has, HasBlock, MutCursor};
pub use tracked::{
    ComponentMut, ComponentRef, Mut, MutTermBlock, MutTermCursor, Ref, RefBlock, RefCursor,
    Untracked,
};
pub use traits::{QueryData, QueryFilter, ReadOnlyQueryData};
pub use view::{ExclusiveView, View, ViewIter};
