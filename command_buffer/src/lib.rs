//! Deferred structural changes (spawn, despawn, insert, remove, resources)
//! recorded by parallel systems and applied to an [`ecs_engine::Registry`]
//! between waves, with results that do not depend on thread timing.
//!
//! Systems of one wave run in parallel and may only read or write component
//! values in place. Every change to the registry's structure goes into the
//! system's own [`CommandBuffer`] instead, and the engine applies the
//! buffers one after the other, in system registration order, once the
//! wave is done ([`apply_all`]). The buffer is on the hot path of every
//! tick, so typed commands are stored by value, packed per command type
//! (no allocation per command, none at all once a reused buffer has warmed
//! up), and it is where determinism is decided, so entity ids come from a
//! per-buffer reserve that is only refilled in that fixed apply order:
//! [`spawn`](CommandBuffer::spawn) returns the entity's final handle while
//! recording, and the ids, like the final world, are the same whichever
//! thread recorded first and however many threads there were.
//!
//! A command whose target entity is not alive when it runs (despawned
//! earlier in the same buffer or by an earlier buffer, or a stale handle)
//! is skipped and counted in the [`ApplyReport`], never applied to a slot
//! that was reused; [`ApplyMode::Strict`] turns the first skip into an
//! [`ApplyError`] (which still carries the report of what was applied).
//!
//! # Examples
//!
//! ```
//! use command_buffer::{CommandBuffer, CommandKind, apply_all};
//! use ecs_engine::{Entity, Registry};
//!
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! struct Position([f32; 3]);
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! struct Target(Entity);
//!
//! let mut registry = Registry::new();
//! let old = registry.spawn((Position([0.0; 3]),));
//!
//! // One buffer per system, reserves filled in a fixed order.
//! let mut buffers = vec![CommandBuffer::new(), CommandBuffer::new()];
//! for buffer in &mut buffers {
//!     buffer.prepare(&mut registry);
//! }
//!
//! // The wave: each system records into its own buffer, on any thread.
//! std::thread::scope(|s| {
//!     let (first, second) = buffers.split_at_mut(1);
//!     s.spawn(|| {
//!         let ship = first[0].spawn((Position([1.0, 2.0, 3.0]),));
//!         first[0].insert(ship, Target(old));
//!     });
//!     s.spawn(|| second[0].despawn(old));
//! });
//!
//! // Between waves: apply in registration order.
//! let report = apply_all(&mut registry, &mut buffers);
//! assert_eq!(report.applied(CommandKind::Spawn), 1);
//! assert_eq!(report.applied(CommandKind::Despawn), 1);
//! assert!(!registry.is_alive(old));
//! assert_eq!(registry.len(), 1);
//! ```
//!
//! # Determinism and its limits
//!
//! Each buffer keeps a FIFO of handles reserved from the registry
//! ([`Registry::reserve_entity`](ecs_engine::Registry::reserve_entity)).
//! `spawn` hands out the next one; apply makes it alive. Reserves are
//! refilled only at
//! the end of each buffer's apply (to a [`ReservePolicy`] target computed
//! from that buffer's own history) and by [`CommandBuffer::prepare`] /
//! [`CommandBuffer::reserve_entities`], all with `&mut Registry`, in the
//! fixed apply order. So every id depends on the order of applies only.
//!
//! - If a buffer's reserve runs dry while a [`SpawnLanes`] lane is open on
//!   it (the scheduler opens one per buffer for every wave), `spawn` hands
//!   out fresh indices from that lane: real handles whose ids depend only
//!   on the wave's layout and the buffer's own spawn count. So a buffer run
//!   by a schedule never returns a placeholder.
//! - If a buffer's reserve runs dry with no lane open (a buffer used on
//!   its own), `spawn` returns a
//!   [placeholder](is_placeholder) (and keeps doing so until the next
//!   apply), deterministic too, that apply replaces by a new entity in that
//!   command's place. Later commands of the same
//!   buffer are remapped; a placeholder stored in a component value,
//!   captured by a [`push`](CommandBuffer::push)ed closure or used in
//!   another buffer is not (it stays a handle that is never alive). The
//!   [`ApplyReport`] lists the mapping. Size the reserve with
//!   [`ReservePolicy`] or `reserve_entities` to avoid placeholders.
//! - Reserved handles count toward the registry's live-entity limit, and a
//!   buffer binds itself to the registry it reserved from: applying it to
//!   another one panics until it is [released](CommandBuffer::release).
//! - The buffer keeps a small private resource in the registry to receive
//!   the reserved handles of dropped buffers; it cancels them, sorted, at
//!   the next apply, prepare or release, so nothing leaks.
//!
//! # Strict mode
//!
//! See [`ApplyMode::Strict`]: the commands before the skipped one are
//! applied, it and the rest of its buffer are dropped (their reserved spawn
//! handles cancelled), and later buffers of an [`apply_all_with`] are left
//! untouched.
#![forbid(unsafe_code)]

mod apply;
mod buffer;
mod command;
mod entity_commands;
mod observe;
mod placeholder;
mod policy;
mod report;
mod reserve;
mod storage;

pub use apply::{ApplyMode, CommandPanic, apply_all, apply_all_with};
pub use buffer::CommandBuffer;
pub use entity_commands::{ChildBuilder, EntityCommands};
pub use observe::{FiredHooks, Hook, ObservedTypes};
pub use placeholder::is_placeholder;
pub use policy::ReservePolicy;
pub use report::{ApplyError, ApplyReport, CommandKind, ResolvedPlaceholder, SkippedCommand};
pub use reserve::{ReserveState, SpawnLanes};
