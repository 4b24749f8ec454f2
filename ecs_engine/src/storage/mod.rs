//! Component storage, from the bottom up: the paged sparse array and the
//! run bookkeeping views join by (`lookup.rs`), the [`SparseSet`] of one
//! Rust type (`sparse_set.rs`, with its batch removal in
//! `sparse_set/remove_many.rs`), the untyped pool of a run-time component
//! (`blob_pool.rs`), the type-erased pool trait (`erased.rs`), the table of pools behind their locks (`pools.rs`,
//! keyed through `type_id_map.rs`), the [`PoolMut`] borrow of one pool
//! (`pool_mut.rs`), the claims that let disjoint views share a pool
//! (`claims.rs`), and the lock-only handle views and cells reach the
//! registry through (`locked.rs`); `prefetch.rs` holds the cache hint the
//! batch paths use.

pub(crate) mod blob_pool;
pub(crate) mod claims;
pub(crate) mod erased;
pub(crate) mod locked;
pub(crate) mod lookup;
pub(crate) mod pool_copy;
pub(crate) mod pool_mut;
pub(crate) mod pool_ring;
pub(crate) mod pools;
pub(crate) mod prefetch;
pub(crate) mod sparse_set;
pub(crate) mod type_id_map;

pub use claims::Claimed;
pub use lookup::PAGE_LEN;
pub use pool_mut::PoolMut;
pub use sparse_set::SparseSet;
pub use type_id_map::{TypeIdHasher, TypeIdMap};
