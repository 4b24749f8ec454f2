//! Engine tags: the number each engine puts in the high 48 bits of its
//! component ids (`component.rs` encodes and decodes them), so an id from
//! another engine is refused.

use std::sync::atomic::{AtomicU64, Ordering};

/// An engine's tag: 1..=`MAX_TAG`, never reused in a process.
pub(crate) type Tag = u64;

/// The largest tag: a component id keeps 16 bits for the component's
/// index and 48 for the tag.
pub(crate) const MAX_TAG: Tag = (1 << 48) - 1;

/// Tags handed out so far (process-wide, but only to tell engines' ids
/// apart: engines share nothing else).
static ENGINES: AtomicU64 = AtomicU64::new(0);

/// A tag for a new engine, 1..=`MAX_TAG` (never 0, so a bare index is
/// never a valid id), each handed out once: `None` once all are used
/// (after 2^48 - 1 engines; at a million engines a second, nine years).
pub(crate) fn next_tag() -> Option<Tag> {
    ENGINES
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            (used < MAX_TAG).then_some(used + 1)
        })
        .ok()
        .map(|used| used + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_never_zero_and_never_repeat() {
        let a = next_tag().unwrap();
        let b = next_tag().unwrap();
        assert!(a >= 1 && b > a && b <= MAX_TAG);
    }
}
