//! Reserved handles: how `spawn` returns an entity's final id while systems
//! run in parallel, without touching the registry.
//!
//! # Mechanism
//!
//! Each buffer keeps a private FIFO *reserve* of handles taken with
//! [`Registry::reserve_entity`]: real handles, not alive, whose slots no one
//! else can get. `spawn` hands out the oldest one not handed out yet, and
//! apply makes it alive with [`Registry::spawn_reserved`]: the `k`-th spawn
//! command applied in a batch is the `k`-th handle handed out, so the
//! commands do not store their handles. The reserve is only filled in sequential
//! code that holds `&mut Registry`: at the end of every apply (up to the
//! [`ReservePolicy`] target, computed from the buffer's own history) and by
//! [`CommandBuffer::reserve_entities`] / [`CommandBuffer::prepare`]. Buffers
//! are applied in a fixed order, so what each reserve holds, and so every
//! id, depends on that order alone, never on which thread recorded first.
//!
//! When the reserve runs dry, `spawn` returns a *placeholder*: a handle whose
//! index is `u32::MAX` (an index no registry hands out) and whose generation
//! is the buffer's own placeholder sequence number, so placeholders are
//! deterministic too. Once a batch (the spawns since the last apply) has
//! had a placeholder, its later spawns get placeholders as well, so a
//! batch's reserved handles always precede its placeholders. Apply creates
//! the entity at that point of the buffer's order and remaps the
//! placeholder in the later commands of the same buffer; the
//! [`ApplyReport`](crate::ApplyReport) lists the mapping.
//!
//! # Invariants
//!
//! - A buffer holding any reserved handle (in its reserve, in a recorded
//!   spawn, or waiting to be cancelled) is bound to the registry's *ledger*,
//!   a private resource of that registry; applying it to another registry
//!   panics before any command runs.
//! - Reserved handles are never handed out twice: a discarded spawn's handle
//!   is cancelled (its generation bumped) rather than put back, since the
//!   system may have stored it.
//! - A dropped buffer gives its reserved handles to the ledger; the next
//!   apply, prepare or release of any buffer on that registry cancels them,
//!   sorted, so the free queue order does not depend on drop order.
//!
//! `CommandBuffer` methods here: `reserve_entities`, `prepare`, `release`,
//! `reserved_len`, `policy`, `set_policy` and `has_open_lane`. The spawn
//! lanes of a wave are in `lanes`, the reserve's snapshot in `state`.

mod lanes;
mod state;

pub use lanes::SpawnLanes;
pub use state::ReserveState;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ecs_engine::{EcsError, Entity, IndexLane, Registry};

use crate::placeholder::{PlaceholderWindow, Placeholders};
use crate::{CommandBuffer, ReservePolicy};

/// The shared record of one registry's reserved handles that dropped
/// buffers gave back; stored in the registry as [`LedgerResource`].
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Handles of dropped buffers, with the registry's entities epoch they
    /// were reserved in.
    orphans: Mutex<Vec<(u64, Entity)>>,
    has_orphans: AtomicBool,
}

impl Ledger {
    fn adopt(&self, epoch: u64, handles: impl IntoIterator<Item = Entity>) {
        let mut orphans = self.orphans.lock().unwrap_or_else(PoisonError::into_inner);
        orphans.extend(handles.into_iter().map(|entity| (epoch, entity)));
        self.has_orphans
            .store(!orphans.is_empty(), Ordering::Release);
    }

    /// Cancels every orphaned handle, sorted, so their slots return to the
    /// free queue in an order that does not depend on which buffer dropped
    /// first. Handles from an earlier entities epoch are dropped: they name
    /// nothing of the registry's present allocator.
    fn reclaim(&self, registry: &mut Registry) {
        if !self.has_orphans.swap(false, Ordering::Acquire) {
            return;
        }
        let mut orphans =
            std::mem::take(&mut *self.orphans.lock().unwrap_or_else(PoisonError::into_inner));
        let epoch = registry.entities_epoch();
        orphans.retain(|&(from, _)| from == epoch);
        orphans.sort_unstable();
        for (_, entity) in orphans {
            // A handle the user already activated or cancelled by hand is
            // simply not reserved any more.
            let _ = registry.cancel_reserved(entity);
        }
    }
}

/// The registry resource that identifies a registry to its buffers.
#[derive(Debug)]
struct LedgerResource(Arc<Ledger>);

/// A buffer's reserved handles and its placeholder sequence.
///
/// `handles` is the FIFO reserve. Its first `handed_out` handles belong to
/// spawns recorded since the last apply (the `k`-th spawn of the batch got
/// `handles[k]`); they leave the reserve when the batch is applied or
/// dropped. Spawns past the reserve got placeholders, numbered on from the
/// last apply. So a spawn command needs to store neither.
#[derive(Debug, Default)]
pub(crate) struct Reserve {
    handles: VecDeque<Entity>,
    handed_out: usize,
    /// Reserved handles of discarded spawns, cancelled at the next apply.
    to_cancel: Vec<Entity>,
    ledger: Option<Arc<Ledger>>,
    /// The registry's [`entities_epoch`](Registry::entities_epoch) the
    /// handles were reserved in.
    epoch: u64,
    pub(crate) policy: ReservePolicy,
    /// Spawns recorded since the last apply or clear.
    spawns: usize,
    /// Spawns recorded before the last apply.
    last_spawns: usize,
    placeholders: Placeholders,
    /// The fresh-index lane of the running wave, if any (see
    /// [`SpawnLanes`](crate::SpawnLanes)).
    lane: Option<IndexLane>,
    /// Lane handles handed out since the lane opened; they follow the
    /// batch's reserved handles.
    lane_spawns: usize,
}

/// What one apply needs from the reserve to give each spawn its handle.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnHandles<'a> {
    /// The reserved handles handed out, in hand-out order: the `k`-th
    /// spawn of the batch got `reserved[k]`.
    pub(crate) reserved: &'a [Entity],
    pub(crate) window: PlaceholderWindow,
}

impl SpawnHandles<'_> {
    /// The handle the `k`-th spawn of the batch was given.
    #[inline]
    pub(crate) fn get(&self, k: usize) -> Entity {
        match self.reserved.get(k) {
            Some(&entity) => entity,
            None => self.window.placeholder(k - self.reserved.len()),
        }
    }
}

impl Reserve {
    pub(crate) fn with_policy(policy: ReservePolicy) -> Self {
        Reserve {
            policy,
            ..Reserve::default()
        }
    }

    /// Handles not yet handed out.
    pub(crate) fn len(&self) -> usize {
        self.handles.len() - self.handed_out
    }

    /// The handle for a new spawn: the oldest reserved one not handed out,
    /// or the next placeholder. Once a batch has had a placeholder, the rest
    /// of it gets placeholders too (handles reserved meanwhile serve the
    /// next batch), so a batch's reserved handles always precede its
    /// placeholders.
    #[inline]
    #[track_caller]
    pub(crate) fn hand_out(&mut self) -> Entity {
        self.spawns += 1;
        if self.lane_spawns == 0
            && self.placeholders.pending() == 0
            && let Some(&entity) = self.handles.get(self.handed_out)
        {
            self.handed_out += 1;
            return entity;
        }
        self.hand_out_past_reserve()
    }

    /// The handle for a spawn past the reserve: the lane's next one while
    /// a lane is open (and the index space lasts), else a placeholder.
    #[cold]
    #[track_caller]
    fn hand_out_past_reserve(&mut self) -> Entity {
        if self.placeholders.pending() == 0
            && let Some(entity) = self.lane.and_then(|lane| lane.handle(self.lane_spawns))
        {
            self.lane_spawns += 1;
            return entity;
        }
        self.placeholders.hand_out()
    }

    /// Opens `lane` for the spawns past the reserve until
    /// [`close_lane`](Self::close_lane).
    ///
    /// # Panics
    ///
    /// When a lane is already open.
    #[track_caller]
    pub(crate) fn open_lane(&mut self, lane: IndexLane) {
        assert!(
            self.lane.is_none(),
            "CommandBuffer: a spawn lane is already open; close it with SpawnLanes::close"
        );
        self.lane = Some(lane);
    }

    /// Lane handles handed out since the lane opened.
    pub(crate) fn lane_spawns(&self) -> usize {
        self.lane_spawns
    }

    /// `true` while a lane is open.
    pub(crate) fn lane_is_open(&self) -> bool {
        self.lane.is_some()
    }

    /// Closes the lane after the registry reserved its handles
    /// ([`Registry::reserve_lanes`]): they join the reserve as handed out,
    /// right after the batch's reserved handles, in hand-out order.
    pub(crate) fn close_lane(&mut self, registry: &mut Registry) {
        let Some(lane) = self.lane.take() else {
            return;
        };
        let count = std::mem::take(&mut self.lane_spawns);
        if count == 0 {
            return;
        }
        self.connect(registry, true);
        // Handles reserved after the batch's first lane spawn (none, in a
        // schedule) move behind the lane's.
        let later = self.handles.split_off(self.handed_out);
        self.handles.reserve(count + later.len());
        self.handles
            .extend((0..count).map(|j| lane.handle(j).expect("handed out, so in the index space")));
        self.handles.extend(later);
        self.handed_out += count;
    }

    /// The handles of the spawns recorded since the last apply (the reserve
    /// is made contiguous in place, without allocating, so they are one
    /// slice).
    pub(crate) fn spawn_handles(&mut self) -> SpawnHandles<'_> {
        let window = self.placeholders.window();
        let handed_out = self.handed_out;
        SpawnHandles {
            reserved: &self.handles.make_contiguous()[..handed_out],
            window,
        }
    }

    fn holds_reserved(&self) -> bool {
        !self.handles.is_empty() || !self.to_cancel.is_empty()
    }

    /// Ends a batch whose first `applied` spawns ran: their handles leave
    /// the reserve, those of the dropped ones wait to be cancelled, and the
    /// placeholders handed out so far can no longer be resolved.
    pub(crate) fn settle(&mut self, applied: usize) {
        let used = applied.min(self.handed_out);
        self.handles.drain(..used);
        self.to_cancel
            .extend(self.handles.drain(..self.handed_out - used));
        self.handed_out = 0;
        self.placeholders.forget();
    }

    /// Ends an apply: the spawn count becomes the policy's input.
    pub(crate) fn end_batch(&mut self) {
        self.last_spawns = std::mem::take(&mut self.spawns);
    }

    /// Ends a clear: the spawns recorded were never applied.
    pub(crate) fn reset_spawns(&mut self) {
        self.spawns = 0;
    }

    /// Binds this buffer to `registry`'s ledger (creating it if `create`),
    /// drops its handles if the registry's entities were replaced since
    /// they were reserved, reclaims the registry's orphaned handles, and
    /// cancels this buffer's discarded ones.
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry, or
    /// spawns recorded with handles of replaced entities.
    #[track_caller]
    pub(crate) fn connect(&mut self, registry: &mut Registry, create: bool) {
        self.forget_replaced(registry.entities_epoch());
        let current = registry.resource::<LedgerResource>().map(|r| &r.0);
        let same = match (&self.ledger, current) {
            (Some(mine), Some(theirs)) => Arc::ptr_eq(mine, theirs),
            _ => false,
        };
        if !same {
            assert!(
                !(self.ledger.is_some() && self.holds_reserved()),
                "CommandBuffer holds entity handles reserved from another registry; \
                 apply it to that registry, or call `release` there first"
            );
            self.ledger = match current {
                Some(ledger) => Some(Arc::clone(ledger)),
                None if create => {
                    let ledger = Arc::new(Ledger::default());
                    registry.insert_resource(LedgerResource(Arc::clone(&ledger)));
                    Some(ledger)
                }
                None => None,
            };
        }
        if let Some(ledger) = &self.ledger {
            ledger.reclaim(registry);
        }
        for entity in self.to_cancel.drain(..) {
            let _ = registry.cancel_reserved(entity);
        }
    }

    /// Drops every held handle when they were reserved in an earlier
    /// entities epoch than `epoch` (the registry's allocator was replaced
    /// since: they name nothing, or an unrelated entity, so they are
    /// neither spawned nor cancelled).
    ///
    /// # Panics
    ///
    /// When spawns recorded since the last apply got such handles.
    #[track_caller]
    fn forget_replaced(&mut self, epoch: u64) {
        if self.epoch == epoch {
            return;
        }
        assert!(
            self.handed_out == 0 && self.lane.is_none(),
            "CommandBuffer holds spawns recorded with handles reserved before the \
             registry's entities were replaced (Registry::replace_entities, a snapshot \
             load); apply or clear the buffer before replacing them"
        );
        self.handles.clear();
        self.to_cancel.clear();
        self.epoch = epoch;
    }

    /// Reserves handles until `target` are not handed out; stops early at
    /// the live-entity limit.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the limit stopped it.
    #[track_caller]
    pub(crate) fn fill_to(
        &mut self,
        registry: &mut Registry,
        target: usize,
    ) -> Result<(), EcsError> {
        if self.len() >= target {
            return Ok(());
        }
        self.connect(registry, true);
        let wanted = target - self.len();
        self.handles.reserve(wanted);
        registry.reserve_entities(wanted, &mut self.handles)
    }

    /// Cancels reserved handles from the back until `target` are left (never
    /// one already handed out).
    fn shrink_to(&mut self, registry: &mut Registry, target: usize) {
        while self.len() > target {
            let entity = self.handles.pop_back().expect("longer than target");
            let _ = registry.cancel_reserved(entity);
        }
    }

    /// Brings the reserve to the policy's target after an apply.
    #[track_caller]
    pub(crate) fn adjust(&mut self, registry: &mut Registry) {
        let target = self.policy.target(self.last_spawns);
        if self.len() > target.saturating_mul(2) {
            self.shrink_to(registry, target);
        } else {
            // Past the live-entity limit the reserve stays short and later
            // spawns get placeholders, which apply then reports as skipped.
            let _ = self.fill_to(registry, target);
        }
    }

    /// Cancels every handle in the reserve that no spawn was given.
    #[track_caller]
    pub(crate) fn release(&mut self, registry: &mut Registry) {
        self.connect(registry, false);
        self.shrink_to(registry, 0);
    }

    /// On drop: hands every reserved handle still held, including those of
    /// unapplied spawns, to the registry's ledger.
    pub(crate) fn orphan(&mut self) {
        if let Some(ledger) = self.ledger.take() {
            let handles: Vec<Entity> = self
                .handles
                .drain(..)
                .chain(self.to_cancel.drain(..))
                .collect();
            if !handles.is_empty() {
                ledger.adopt(self.epoch, handles);
            }
        }
    }
}

impl CommandBuffer {
    /// Makes sure the next `count` spawns get real handles: reserves handles
    /// from `registry` until this buffer's reserve holds at least `count`.
    /// (If spawns since the last apply already got placeholders, the rest
    /// of them get placeholders too, and the new handles serve the spawns
    /// after the next apply.)
    /// Call it in sequential code, for every buffer in a fixed order (the
    /// scheduler does so in system registration order), so the ids stay
    /// deterministic.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the registry's live-entity limit
    /// (which counts reserved handles) stops it; the handles reserved before
    /// stay in the reserve.
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy, is_placeholder};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    /// commands.reserve_entities(&mut registry, 2).unwrap();
    /// assert_eq!(commands.reserved_len(), 2);
    /// let a = commands.spawn(());
    /// assert!(registry.entities().is_reserved(a) && !is_placeholder(a));
    /// commands.apply(&mut registry);
    /// assert!(registry.is_alive(a));
    /// commands.release(&mut registry);
    /// assert_eq!(registry.entities().reserved(), 0);
    /// ```
    #[track_caller]
    pub fn reserve_entities(
        &mut self,
        registry: &mut Registry,
        count: usize,
    ) -> Result<(), EcsError> {
        self.reserve.connect(registry, false);
        self.reserve.fill_to(registry, count)
    }

    /// Tops the reserve up to the [`ReservePolicy`] target for the spawns
    /// recorded before the last apply (the policy's `min` for a new
    /// buffer). [`apply`](Self::apply) does this itself at its end; call
    /// `prepare` once for each new buffer, in a fixed order, before its
    /// first wave. It stops quietly at the live-entity limit, as the top-up
    /// in apply does. Handles reserved before the registry's entities were
    /// replaced are dropped first (see [`resync`](Self::resync)).
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry, or
    /// unapplied spawns recorded before the registry's entities were
    /// replaced.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// assert_eq!(commands.reserved_len(), 0);
    /// commands.prepare(&mut registry);
    /// assert_eq!(commands.reserved_len(), 64);
    /// assert_eq!(registry.entities().reserved(), 64);
    /// ```
    #[track_caller]
    pub fn prepare(&mut self, registry: &mut Registry) {
        self.reserve.connect(registry, false);
        self.reserve.adjust(registry);
    }

    /// Re-reserves after `registry`'s entities were replaced
    /// ([`Registry::replace_entities`], which a snapshot load calls) since
    /// this buffer reserved its handles: they name nothing of the new
    /// allocator, or an unrelated entity, so they are dropped (neither
    /// spawned nor cancelled) and the reserve is refilled as by
    /// [`prepare`](Self::prepare). Returns whether it did; otherwise it
    /// does nothing, in O(1). The scheduler calls it for every buffer
    /// before each wave, so a `spawn` after a load never returns a handle
    /// of the loaded world.
    ///
    /// # Panics
    ///
    /// When spawns recorded before the replacement are still unapplied
    /// (apply or clear the buffer first), or the buffer holds handles
    /// reserved from another registry.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.prepare(&mut registry);
    /// let saved = registry.entities().clone();
    /// let a = registry.spawn(());
    /// registry.replace_entities(saved); // `a` was never spawned here
    /// assert!(commands.resync(&mut registry));
    /// assert!(!commands.resync(&mut registry));
    /// let b = commands.spawn_empty();
    /// assert!(registry.entities().is_reserved(b));
    /// ```
    #[track_caller]
    pub fn resync(&mut self, registry: &mut Registry) -> bool {
        if self.reserve.epoch == registry.entities_epoch() {
            return false;
        }
        self.prepare(registry);
        true
    }

    /// Gives every handle in the reserve back to `registry` (they become
    /// stale); spawns already recorded keep theirs. Call it before dropping
    /// a buffer you will not apply again, or before using it with another
    /// registry. A buffer dropped with a non-empty reserve hands its
    /// handles to the registry, which cancels them at the next apply,
    /// prepare or release of any buffer on it.
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.prepare(&mut registry);
    /// commands.release(&mut registry);
    /// assert_eq!((commands.reserved_len(), registry.entities().reserved()), (0, 0));
    /// ```
    #[track_caller]
    pub fn release(&mut self, registry: &mut Registry) {
        self.reserve.release(registry);
    }

    /// Number of reserved handles left: how many more spawns get real ids
    /// before [placeholders](crate::is_placeholder) are handed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.reserve_entities(&mut registry, 3).unwrap();
    /// commands.spawn_empty();
    /// assert_eq!(commands.reserved_len(), 2);
    /// ```
    pub fn reserved_len(&self) -> usize {
        self.reserve.len()
    }

    /// The buffer's [`ReservePolicy`].
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy};
    ///
    /// let commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    /// assert_eq!(commands.policy(), ReservePolicy::NONE);
    /// ```
    pub fn policy(&self) -> ReservePolicy {
        self.reserve.policy
    }

    /// Replaces the [`ReservePolicy`]; it takes effect at the next apply or
    /// [`prepare`](Self::prepare).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.set_policy(ReservePolicy { min: 2, per_spawn: 1, max: 10 });
    /// commands.prepare(&mut registry);
    /// assert_eq!(commands.reserved_len(), 2);
    /// ```
    pub fn set_policy(&mut self, policy: ReservePolicy) {
        self.reserve.policy = policy;
    }

    /// `true` while a [`SpawnLanes`] lane is open on this buffer: its
    /// spawns past the reserve get lane handles, and it must not be
    /// applied before [`SpawnLanes::close`].
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    ///
    /// assert!(!CommandBuffer::new().has_open_lane());
    /// ```
    pub fn has_open_lane(&self) -> bool {
        self.reserve.lane_is_open()
    }
}
