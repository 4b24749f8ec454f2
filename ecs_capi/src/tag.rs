//! Engine tags: the number each engine puts in the high bits of its
//! component ids (`component.rs` encodes and decodes them), so an id from
//! another engine is refused.

use std::sync::atomic::{AtomicU32, Ordering};

/// Engines created so far, for their id tags (process-wide, but only to
/// tell engines' ids apart: engines share nothing else).
static ENGINES: AtomicU32 = AtomicU32::new(0);

/// A tag for a new engine, 1..=65535 (never 0, so a bare index is never a
/// valid id), cycling after 65,535 engines.
pub(crate) fn next_tag() -> u32 {
    ENGINES.fetch_add(1, Ordering::Relaxed) % 0xFFFF + 1
}
