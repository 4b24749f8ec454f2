//! Engine tags and the ids built on them. Every id the C API hands out
//! (component, resource, event channel) is one `u64`: the top 2 bits say
//! what it names ([`IdKind`]), the next 46 are the engine's tag and the
//! low 16 the index in that engine. So an id from another engine, or of
//! another kind (a resource id passed as a component id), is refused
//! instead of naming something else that happens to share its index.

use std::sync::atomic::{AtomicU64, Ordering};

/// An engine's tag: 1..=`MAX_TAG`, never reused in a process.
pub(crate) type Tag = u64;

/// Bits of an id that hold the index: an engine holds at most 65,536 of
/// each kind.
const INDEX_BITS: u32 = 16;

/// How many indexes an id can hold: 65,536.
pub(crate) const MAX_INDEXES: usize = 1 << INDEX_BITS;

/// Where the kind starts: the top 2 bits.
const KIND_SHIFT: u32 = 62;

/// The largest tag: 46 bits, between the kind and the index.
pub(crate) const MAX_TAG: Tag = (1 << (KIND_SHIFT - INDEX_BITS)) - 1;

/// What an id names, in its top 2 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdKind {
    /// `ecs_component_id` (0: a component id keeps the form it had before
    /// the kind bits).
    Component = 0,
    /// `ecs_resource_id`.
    Resource = 1,
    /// `ecs_event_id`.
    Event = 2,
}

impl IdKind {
    /// The C type's name, for messages.
    fn c_name(self) -> &'static str {
        match self {
            Self::Component => "a component id",
            Self::Resource => "a resource id",
            Self::Event => "an event channel id",
        }
    }
}

/// The id of index `index` (below [`MAX_INDEXES`]) of kind `kind` in the
/// engine tagged `tag`.
pub(crate) fn encode_id(kind: IdKind, tag: Tag, index: usize) -> u64 {
    debug_assert!(index < MAX_INDEXES && (1..=MAX_TAG).contains(&tag));
    (kind as u64) << KIND_SHIFT | tag << INDEX_BITS | index as u64
}

/// The index `id` holds when it is an id of `kind` from the engine tagged
/// `tag`; otherwise a note for the caller's refusal: empty for an id of
/// another engine (or no id at all), " (... is a resource id)" when the id
/// is of this engine but of another kind.
pub(crate) fn decode_id(kind: IdKind, tag: Tag, id: u64) -> Result<usize, String> {
    let index = (id & (MAX_INDEXES as u64 - 1)) as usize;
    let id_tag = (id >> INDEX_BITS) & MAX_TAG;
    let id_kind = id >> KIND_SHIFT;
    if id_tag != tag {
        return Err(String::new());
    }
    if id_kind != kind as u64 {
        let other = [IdKind::Component, IdKind::Resource, IdKind::Event]
            .into_iter()
            .find(|k| *k as u64 == id_kind);
        return Err(other.map_or_else(String::new, |other| {
            format!(" ({id:#x} is {}, not {})", other.c_name(), kind.c_name())
        }));
    }
    Ok(index)
}

/// Tags handed out so far (process-wide, but only to tell engines' ids
/// apart: engines share nothing else).
static ENGINES: AtomicU64 = AtomicU64::new(0);

/// A tag for a new engine, 1..=`MAX_TAG` (never 0, so a bare index is
/// never a valid id), each handed out once: `None` once all are used
/// (after 2^46 - 1 engines; at a million engines a second, two years).
pub(crate) fn next_tag() -> Option<Tag> {
    // A compare-exchange loop rather than `fetch_update`, which nightly
    // deprecates (renamed `try_update`, not yet stable): a warning there
    // would fail the Miri lane's build once stable follows.
    let mut used = ENGINES.load(Ordering::Relaxed);
    loop {
        if used >= MAX_TAG {
            return None;
        }
        match ENGINES.compare_exchange_weak(used, used + 1, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some(used + 1),
            Err(now) => used = now,
        }
    }
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

    #[test]
    fn an_id_decodes_only_as_its_kind_in_its_engine() {
        let id = encode_id(IdKind::Resource, 5, 3);
        assert_eq!(decode_id(IdKind::Resource, 5, id), Ok(3));
        assert_eq!(
            decode_id(IdKind::Component, 5, id),
            Err(format!(" ({id:#x} is a resource id, not a component id)"))
        );
        assert_eq!(decode_id(IdKind::Resource, 6, id), Err(String::new()));
        let last = encode_id(IdKind::Event, MAX_TAG, MAX_INDEXES - 1);
        assert_eq!(decode_id(IdKind::Event, MAX_TAG, last), Ok(MAX_INDEXES - 1));
        assert!(decode_id(IdKind::Component, MAX_TAG, last).is_err());
        // A component id keeps its old form: the tag above the index.
        assert_eq!(encode_id(IdKind::Component, 7, 2), 7 << 16 | 2);
        // Bits above the kinds' values (3) are no kind: refused, no note.
        assert_eq!(
            decode_id(IdKind::Component, 7, 3 << 62 | 7 << 16),
            Err(String::new())
        );
    }
}
