//! Placeholder handles: what `spawn` returns when its buffer's reserve is
//! empty.
//!
//! A placeholder's index is `u32::MAX`, which no registry hands out, and its
//! generation is `1 + n mod (2^32 - 2)` for the buffer's `n`-th placeholder
//! (never the generation of [`Entity::NULL`]). The numbering depends only on
//! the buffer's own history, so placeholders are deterministic. An apply
//! resolves the placeholders numbered from the buffer's last apply on (its
//! *window*), in hand-out order, which is also the order their spawns run.

use ecs_engine::Entity;

/// `true` when `entity` is a placeholder handed out by
/// [`CommandBuffer::spawn`](crate::CommandBuffer::spawn) while the buffer's reserve was empty: it is
/// never alive in any registry, and is meaningful only in later commands of
/// the buffer that returned it, until that buffer is applied. After the
/// apply, [`ApplyReport::resolve`](crate::ApplyReport::resolve) gives the
/// real entity. [`Entity::is_null`] is also `true` for placeholders (their
/// index is the null index), but they are not equal to [`Entity::NULL`].
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, ReservePolicy, is_placeholder};
/// use ecs_engine::{Entity, Registry};
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
/// let e = commands.spawn((1_u32,));
/// assert!(is_placeholder(e) && !is_placeholder(Entity::NULL));
/// let report = commands.apply(&mut registry);
/// let real = report.resolve(0, e).unwrap();
/// assert_eq!(registry.get::<u32>(real), Some(&1));
/// ```
pub fn is_placeholder(entity: Entity) -> bool {
    entity.index() == u32::MAX && entity != Entity::NULL
}

/// Number of distinct placeholder generations: `1..=u32::MAX - 1`.
const PLACEHOLDER_SPAN: u64 = u32::MAX as u64 - 1;

/// Placeholder sequence numbers: `next` is the next one to hand out,
/// `start` the first one not yet applied.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Placeholders {
    next: u64,
    start: u64,
}

/// The placeholders of one buffer that one apply can resolve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlaceholderWindow {
    start: u64,
    len: u64,
}

/// The placeholder with sequence number `sequence`.
fn placeholder_number(sequence: u64) -> Entity {
    let generation = sequence % PLACEHOLDER_SPAN + 1;
    Entity::from_bits((generation << 32) | u64::from(u32::MAX)).expect("generation is not zero")
}

impl PlaceholderWindow {
    /// The `offset`-th placeholder of this window.
    #[inline]
    pub(crate) fn placeholder(&self, offset: usize) -> Entity {
        placeholder_number(self.start + offset as u64)
    }

    /// `true` when no placeholder was handed out since the last apply.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The position of `placeholder` in this apply's spawn order, if it was
    /// handed out by this buffer since its last apply.
    pub(crate) fn offset(&self, placeholder: Entity) -> Option<usize> {
        let sequence = u64::from(placeholder.generation()) - 1;
        let offset =
            (sequence + PLACEHOLDER_SPAN - self.start % PLACEHOLDER_SPAN) % PLACEHOLDER_SPAN;
        (offset < self.len).then_some(offset as usize)
    }
}

impl Placeholders {
    /// The next placeholder.
    ///
    /// # Panics
    ///
    /// When `2^32 - 2` placeholders are pending (handed out since the last
    /// apply): one more would repeat a pending one.
    #[cold]
    #[track_caller]
    pub(crate) fn hand_out(&mut self) -> Entity {
        let pending = self.next - self.start;
        assert!(
            pending < PLACEHOLDER_SPAN,
            "CommandBuffer::spawn: more than {PLACEHOLDER_SPAN} placeholder spawns before one apply"
        );
        let placeholder = placeholder_number(self.next);
        self.next += 1;
        placeholder
    }

    /// Number of placeholders handed out since the last apply.
    pub(crate) fn pending(&self) -> u64 {
        self.next - self.start
    }

    /// The placeholders handed out since the last apply.
    pub(crate) fn window(&self) -> PlaceholderWindow {
        PlaceholderWindow {
            start: self.start,
            len: self.next - self.start,
        }
    }

    /// Makes every placeholder handed out so far unresolvable.
    pub(crate) fn forget(&mut self) {
        self.start = self.next;
    }
}
