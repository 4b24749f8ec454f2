//! A buffer's reserve as plain data, for snapshots: which handles its next
//! spawns get, and the history its [`ReservePolicy`](crate::ReservePolicy)
//! target is computed from.
//!
//! A world saved between ticks and loaded into a fresh engine gives the
//! same handles to the same spawns only if every system's buffer holds
//! the same reserve as before: [`CommandBuffer::reserve_state`] reads it,
//! [`CommandBuffer::restore_reserve`] puts it back into a buffer of the
//! engine the world was loaded into.

use std::collections::VecDeque;

use ecs_engine::{EcsError, Entity, Registry};

use crate::CommandBuffer;

/// What decides the handles of a buffer's next spawns: see
/// [`CommandBuffer::reserve_state`]. With the `serde` feature it
/// implements serde's traits (handles as their
/// [`Entity::to_bits`](ecs_engine::Entity::to_bits) values).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct ReserveState {
    /// The reserved handles not handed out yet, oldest first: the next
    /// spawns get them in this order.
    pub handles: Vec<Entity>,
    /// The spawns recorded before the last apply, which the policy's
    /// target after the next apply depends on.
    pub last_spawns: usize,
}

impl CommandBuffer {
    /// The buffer's reserve: the reserved handles its next spawns get, in
    /// order, and the spawn count of its last batch. Between ticks (no
    /// command recorded) this is the whole of the buffer's state that the
    /// world's future depends on.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.reserve_entities(&mut registry, 2).unwrap();
    /// let state = commands.reserve_state();
    /// assert_eq!(state.handles.len(), 2);
    /// assert_eq!(commands.spawn_empty(), state.handles[0]);
    /// ```
    pub fn reserve_state(&self) -> ReserveState {
        let reserve = &self.reserve;
        ReserveState {
            handles: reserve
                .handles
                .iter()
                .skip(reserve.handed_out)
                .copied()
                .collect(),
            last_spawns: reserve.last_spawns,
        }
    }

    /// Makes `state` the buffer's reserve, for a buffer whose registry's
    /// entities were just replaced by a snapshot's
    /// ([`Registry::replace_entities`]): the handles the buffer held
    /// belong to the replaced allocator and are forgotten (not cancelled),
    /// and the buffer takes `state.handles`, which the new allocator must
    /// hold as reserved.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] naming the first handle of `state` that
    /// `registry` does not hold as reserved (or a handle listed twice);
    /// nothing changes then.
    ///
    /// # Panics
    ///
    /// When the buffer holds recorded commands: restore between ticks,
    /// after an apply.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::{EntityAllocator, Registry};
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.prepare(&mut registry);
    /// let (saved, state) = (registry.entities().export_state(), commands.reserve_state());
    ///
    /// // Later, in another engine: the world and the reserve come back.
    /// let mut other = CommandBuffer::new();
    /// other.prepare(&mut registry);
    /// registry.replace_entities(EntityAllocator::from_state(saved).unwrap());
    /// other.restore_reserve(&mut registry, state.clone()).unwrap();
    /// assert_eq!(other.spawn_empty(), state.handles[0]);
    /// ```
    #[track_caller]
    pub fn restore_reserve(
        &mut self,
        registry: &mut Registry,
        state: ReserveState,
    ) -> Result<(), EcsError> {
        assert!(
            self.is_empty() && self.reserve.handed_out == 0,
            "CommandBuffer::restore_reserve: the buffer holds recorded commands"
        );
        let mut seen = std::collections::HashSet::with_capacity(state.handles.len());
        if let Some(&entity) = state
            .handles
            .iter()
            .find(|&&e| !registry.entities().is_reserved(e) || !seen.insert(e))
        {
            return Err(EcsError::NoSuchEntity { entity });
        }
        let reserve = &mut self.reserve;
        reserve.handles = VecDeque::from(state.handles);
        reserve.to_cancel.clear();
        reserve.last_spawns = state.last_spawns;
        reserve.spawns = 0;
        // Bound to this registry's ledger (created if it has none).
        reserve.ledger = None;
        // The handles are the present allocator's, whatever the buffer held.
        reserve.epoch = registry.entities_epoch();
        reserve.connect(registry, true);
        Ok(())
    }
}
