//! Spawn lanes: real entity handles for every spawn of a wave; see [`SpawnLanes`].
//! (`CommandBuffer::has_open_lane` is with the other reserve methods.)

use ecs_engine::{IndexLane, Registry};

use crate::CommandBuffer;

/// The lanes of one wave's command buffers.
/// Keep one and reuse it from wave to wave (it keeps a small buffer).
///
/// Spawn lanes: real entity handles for every spawn of a wave, however
/// many, with ids that do not depend on thread timing.
///
/// A buffer's reserve (see [`ReservePolicy`](crate::ReservePolicy)) covers
/// the usual spawns. For the spawns past it, [`SpawnLanes::open`] gives
/// each buffer of the wave an [`IndexLane`] before the wave runs: lane `p`
/// of `n` hands out the fresh indices `base + p + n * j`, where `base` is
/// the registry's slot count when the wave starts and `j` the buffer's own
/// count of spawns past its reserve. So a handle depends only on the wave's
/// layout and the buffer's own history, never on which thread ran first,
/// and no two buffers ever hand out the same one. [`SpawnLanes::close`],
/// after the wave and before any apply, has the registry create those slots
/// ([`Registry::reserve_lanes`]): the claimed ones reserved, like any
/// reserved handle, the gaps freed in index order for later spawns.
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, ReservePolicy, SpawnLanes, is_placeholder};
/// use ecs_engine::{Entity, Registry};
///
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct ChildOf(Entity);
///
/// let mut registry = Registry::new();
/// // No reserve at all: every spawn goes past it, into the lane.
/// let mut buffers = vec![
///     CommandBuffer::with_policy(ReservePolicy::NONE),
///     CommandBuffer::with_policy(ReservePolicy::NONE),
/// ];
/// let mut lanes = SpawnLanes::new();
/// lanes.open(&registry, &mut buffers, |b| Some(b));
/// // The wave: each buffer on its own thread.
/// let parents: Vec<Entity> = std::thread::scope(|s| {
///     let handles: Vec<_> = buffers
///         .iter_mut()
///         .map(|b| s.spawn(move || {
///             let parent = b.spawn(());
///             b.spawn((ChildOf(parent),));
///             parent
///         }))
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert!(parents.iter().all(|&p| !is_placeholder(p)));
/// assert_ne!(parents[0], parents[1]);
/// assert_eq!(lanes.close(&mut registry, &mut buffers, |b| Some(b)), 0);
/// for buffer in &mut buffers {
///     buffer.apply(&mut registry);
/// }
/// assert!(parents.iter().all(|&p| registry.is_alive(p)));
/// ```
#[derive(Debug, Default)]
pub struct SpawnLanes {
    base: usize,
    /// Spawns per lane, filled by `close`.
    counts: Vec<usize>,
    open: bool,
}

impl SpawnLanes {
    /// No lanes open.
    pub fn new() -> SpawnLanes {
        SpawnLanes::default()
    }

    /// Opens one lane for each item of `items` for which `buffer` gives a
    /// command buffer, in slice order, at the registry's current slot
    /// count. Call it in sequential code, before the buffers record; then
    /// create no entity slot (no spawn, no reserve) until
    /// [`close`](Self::close).
    ///
    /// # Panics
    ///
    /// When lanes are already open, or a buffer already has a lane.
    #[track_caller]
    pub fn open<T>(
        &mut self,
        registry: &Registry,
        items: &mut [T],
        buffer: fn(&mut T) -> Option<&mut CommandBuffer>,
    ) {
        assert!(
            !self.open,
            "SpawnLanes::open: the previous lanes are not closed"
        );
        let lanes = items.iter_mut().filter_map(|item| buffer(item)).count();
        self.base = registry.entities().slot_count();
        self.open = true;
        if lanes == 0 {
            return;
        }
        for (lane, commands) in items.iter_mut().filter_map(buffer).enumerate() {
            commands
                .reserve
                .open_lane(IndexLane::new(self.base, lanes, lane));
        }
    }

    /// Closes the lanes opened by [`open`](Self::open) over the same items
    /// (the same `buffer` selection, in the same order): the registry
    /// reserves every handle the lanes handed out, and each buffer takes
    /// its lane's handles into its reserve, so its next apply makes them
    /// alive. Call it before applying any of the buffers. Returns how many
    /// handles the live-entity limit refused (their spawns are skipped, and
    /// reported, at apply; the handles are never alive).
    ///
    /// # Panics
    ///
    /// When no lanes are open, or when entity slots were created since
    /// [`open`](Self::open).
    #[track_caller]
    pub fn close<T>(
        &mut self,
        registry: &mut Registry,
        items: &mut [T],
        buffer: fn(&mut T) -> Option<&mut CommandBuffer>,
    ) -> usize {
        assert!(self.open, "SpawnLanes::close: no lanes are open");
        self.open = false;
        self.counts.clear();
        self.counts.extend(
            items
                .iter_mut()
                .filter_map(buffer)
                .map(|commands| commands.reserve.lane_spawns()),
        );
        let refused = if self.counts.iter().any(|&n| n > 0) {
            registry.reserve_lanes(self.base, &self.counts)
        } else {
            0
        };
        for commands in items.iter_mut().filter_map(buffer) {
            commands.reserve.close_lane(registry);
        }
        refused
    }
}
