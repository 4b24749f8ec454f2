//! Change detection: which components were added, changed or removed since
//! a given change tick.
//!
//! # The clock
//!
//! A [`Registry`] keeps a *change tick* ([`ChangeTick`], a wrapping `u32`;
//! [`Registry::change_tick`]), advanced by
//! [`Registry::advance_change_tick`] (the scheduler advances it before
//! every wave and every apply, several times a frame: it is not the
//! scheduler's frame `Tick`). Every insert of a tracked component stamps its
//! *added* and *changed* ticks with the current tick; every write through
//! `&mut T` stamps its *changed* tick. A filter or term asks "newer than
//! `since`?", where `since` is the tick a system last ran at (the scheduler
//! keeps one per system parameter, so a system that was skipped or disabled
//! still sees everything changed since its last run), or a tick the caller
//! saved ([`Registry::view_since`]).
//!
//! # Opt-in per type, compact storage
//!
//! Tracking costs memory and time, so it is enabled per component type,
//! on demand: [`Registry::track_changes`], by the scheduler at build for
//! every type a system asks about ([`Added`], [`Changed`], [`Ref`],
//! `RemovedComponents`), and by the registry's `&mut self` views
//! ([`Registry::view_mut`], [`Registry::view_filtered`],
//! [`Registry::view_mut_since`]) for the types they ask about. A tracked type's pool keeps two `u32` arrays
//! (added, changed) parallel to its components, kept in step by every
//! structural path (insert, remove, swap-remove, despawn, `despawn_many`,
//! `spawn_batch`, [`PoolMut`](crate::PoolMut), command buffers), plus a
//! bounded log of removals. Enabling fills the arrays with the current
//! tick, so a system's first run sees every existing component as added
//! and changed (as in bevy). An untracked type costs nothing: its views
//! test one null pointer per pass. For a type nobody tracks (reachable only
//! through the `&self` views, which cannot start tracking), [`Added`] and
//! [`Changed`] match every entity and [`ComponentRef::is_changed`] is
//! `true`: a change is never missed, only over-reported.
//! Components registered at run time (`BlobPool`) are not tracked.
//!
//! # Writes mark on fetch
//!
//! A view term `&mut T` marks the component changed when the view hands
//! it out (in a block walk, one store per entity beside the `&mut T`), not
//! when the code writes through it: cheaper than the [`Mut<T>`] term,
//! which marks on `DerefMut`, and the same for the usual loop that writes
//! what it fetches. So do [`Registry::get_mut`](crate::Registry::get_mut),
//! [`SparseSet::get_mut`](crate::SparseSet::get_mut),
//! `components_mut`, `iter_mut` and a replacing insert. Code that writes
//! without changing the value opts out with [`Untracked<T>`] (a view term)
//! or [`Registry::get_mut_untracked`]. Where a pass reads many and writes
//! few, [`Mut<T>`] marks on `DerefMut` instead (as bevy's `Mut<T>` does), and
//! tells the state before the pass ([`ComponentMut::is_changed`]).
//!
//! # Wrap-around
//!
//! Ticks are compared by age, modulo 2^32: `tick` is newer than `since`
//! when `now - tick < now - since` (wrapping), so the clock may wrap freely.
//! Ages must stay below 2^32: every [`CHECK_INTERVAL`] advances, the
//! registry clamps every stored tick older than [`MAX_CHANGE_AGE`] to that
//! age (as bevy does), so no stored tick is ever [`STALE_AGE`] old, and a
//! `since` older than that counts as [`STALE_AGE`] old: older than every
//! stored tick. The horizon: a system (or a saved tick) that waits more
//! than [`MAX_CHANGE_AGE`] ticks between runs, or runs for the first time,
//! sees every component as changed, clamped ones included.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::{Added, Changed, Entity, Registry};
//!
//! struct Health(u32);
//!
//! let mut registry = Registry::new();
//! registry.track_changes::<Health>();
//! let a = registry.spawn((Health(3),));
//! let b = registry.spawn((Health(3),));
//! let since = registry.change_tick();
//! registry.advance_change_tick();
//!
//! registry.get_mut::<Health>(b).unwrap().0 = 2;
//! let c = registry.spawn((Health(5),));
//! let changed: Vec<Entity> = registry
//!     .view_since::<(Entity, &Health), Changed<Health>>(since)
//!     .iter()
//!     .map(|(e, _)| e)
//!     .collect();
//! assert_eq!(changed, vec![b, c]);
//! let added: Vec<Entity> = registry
//!     .view_since::<(Entity, &Health), Added<Health>>(since)
//!     .iter()
//!     .map(|(e, _)| e)
//!     .collect();
//! assert_eq!(added, vec![c]);
//! # let _ = a;
//! ```
//!
//! # Files
//!
//! `ticks.rs` ([`ChangeTick`], the constants, [`is_newer`], the tick arrays and the hooks
//! a sparse set calls), `stamps.rs` (the per-block summary of a pool's
//! changed ticks a delta save reads), `clock.rs` (the registry's clock and
//! [`Registry::track_changes`]) and `removed.rs` ([`Removed`]); the
//! filters [`Added`] and [`Changed`] are in `query/filters.rs`, the terms
//! [`Ref`], [`Mut`] and [`Untracked`] in `query/tracked.rs`, and
//! [`Registry::view_since`] with the other view entry points in
//! `query/view.rs`.

pub(crate) mod clock;
pub(crate) mod export;
pub(crate) mod removed;
pub(crate) mod stamps;
pub(crate) mod ticks;

pub use export::{ChangeClockState, PoolTicks, PoolTicksError};
pub use removed::{Removed, RemovedCursor};
pub use ticks::{
    CHECK_INTERVAL, ChangeTick, MAX_CHANGE_AGE, REMOVED_CAPACITY, STALE_AGE, is_newer,
};
