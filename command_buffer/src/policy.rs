//! The reserve policy: how many reserved handles a buffer keeps.

/// How many reserved handles a buffer keeps after each apply, so that the
/// next wave's spawns get real ids instead of placeholders.
///
/// After an apply that recorded `s` spawns, the reserve is topped up to
/// `target(s) = clamp(s * per_spawn, min, max)` handles (`max` wins over
/// `min`), and shrunk to the target when it holds more than twice as many.
/// Reserved handles count toward the registry's live-entity limit.
///
/// # Examples
///
/// ```
/// use command_buffer::ReservePolicy;
///
/// let policy = ReservePolicy::default();
/// assert_eq!(policy.target(0), 64);
/// assert_eq!(policy.target(1_000), 2_000);
/// assert_eq!(policy.target(1_000_000), 65_536);
/// assert_eq!(ReservePolicy::NONE.target(1_000), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservePolicy {
    /// Handles kept even when nothing was spawned.
    pub min: usize,
    /// Handles kept per spawn recorded before the last apply.
    pub per_spawn: usize,
    /// The most handles kept.
    pub max: usize,
}

impl ReservePolicy {
    /// Keep no handle: every spawn gets a placeholder unless
    /// [`reserve_entities`](crate::CommandBuffer::reserve_entities) was
    /// called. The buffer then never holds reserved slots between applies.
    pub const NONE: ReservePolicy = ReservePolicy {
        min: 0,
        per_spawn: 0,
        max: 0,
    };

    /// What a schedule's systems get unless they set their own
    /// (`min: 0, per_spawn: 2, max: 65_536`): no handle until the system
    /// first spawns, so building a schedule reserves nothing and the first
    /// entity a program spawns after the build is index 0. A system's
    /// spawns past its reserve take handles from its
    /// [spawn lane](crate::SpawnLanes) for the wave (real handles, as
    /// deterministic as reserved ones), and after each apply its reserve is
    /// topped up to twice what it spawned. A buffer used on its own, with
    /// no lane, keeps [`ReservePolicy::default`] instead, whose minimum
    /// spares it placeholders.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::ReservePolicy;
    ///
    /// assert_eq!(ReservePolicy::SCHEDULED.target(0), 0);
    /// assert_eq!(ReservePolicy::SCHEDULED.target(3), 6);
    /// ```
    pub const SCHEDULED: ReservePolicy = ReservePolicy {
        min: 0,
        per_spawn: 2,
        max: 65_536,
    };

    /// The reserve size after an apply that recorded `spawns` spawns.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::ReservePolicy;
    ///
    /// let policy = ReservePolicy { min: 10, per_spawn: 3, max: 100 };
    /// assert_eq!((policy.target(2), policy.target(20), policy.target(50)), (10, 60, 100));
    /// ```
    pub fn target(&self, spawns: usize) -> usize {
        spawns
            .saturating_mul(self.per_spawn)
            .max(self.min)
            .min(self.max)
    }
}

impl Default for ReservePolicy {
    /// `min: 64, per_spawn: 2, max: 65_536`.
    fn default() -> Self {
        ReservePolicy {
            min: 64,
            per_spawn: 2,
            max: 65_536,
        }
    }
}
