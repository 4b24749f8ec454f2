//! Generational entity handles and the allocator that hands them out.
//!
//! An [`Entity`] is a slot index plus the generation of that slot. The
//! [`EntityAllocator`] keeps one generation per slot and a first-in, first-out
//! queue of free slots:
//!
//! - a freed slot goes to the back of the queue and is reused only after every
//!   slot freed before it, so a handle that was just destroyed stays dead for as
//!   long as possible;
//! - every reuse bumps the slot's generation, so a stale handle never matches
//!   the slot's new owner;
//! - a slot whose generation has reached the limit is retired for good instead
//!   of wrapping around to a generation an old handle might still carry.
//!
//! Files: `handle.rs` ([`Entity`]), `allocator.rs` ([`EntityAllocator`],
//! and [`IndexLane`], fresh indices handed out by several command buffers
//! at once) and `allocator_state.rs` ([`AllocatorState`], the allocator as
//! plain data for snapshots) and `map.rs` ([`EntityMap`] and
//! [`MapEntities`], handles of one registry's entities in another).

mod allocator;
mod allocator_state;
mod handle;
mod map;

pub(crate) use allocator::AllocatorVersion;
pub use allocator::{EntityAllocator, IndexLane};
pub use allocator_state::{AllocatorState, AllocatorStateError};
pub use handle::Entity;
pub(crate) use handle::MAX_INDEX;
pub use map::{EntityMap, MapEntities};
