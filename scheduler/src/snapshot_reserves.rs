//! Snapshots of the systems' command-buffer reserves: reading them all, and
//! restoring them (by system name) into a resumed schedule.
//!
//! Each system that records commands owns a [`CommandBuffer`](command_buffer::CommandBuffer)
//! whose reserve decides the handles of its next spawns: the tick
//! systems, the enter and exit systems of states, the one-shot systems and
//! the observers alike. A world saved between ticks and resumed in a fresh
//! engine spawns the same handles (and leaks no reserved one) only if
//! every buffer gets its reserve back:
//! [`Schedule::command_reserves`] reads them all,
//! [`Schedule::restore_command_reserves`] puts them back, by system name.

use std::collections::HashSet;

use command_buffer::ReserveState;
use ecs_engine::{EcsError, EntityAllocator, Registry};

use crate::Schedule;
use crate::system_state::saved_slots_mut;

/// Why [`Schedule::restore_command_reserves`] refused the reserves;
/// nothing changed then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreReservesError {
    /// No system of the schedule with a command buffer has this name (or
    /// every one that has was given a reserve by an earlier entry).
    #[error("command reserves: no system `{system}` with commands in the schedule")]
    UnknownSystem {
        /// The name given.
        system: String,
    },
    /// A handle is not reserved in the registry, or given twice.
    #[error("command reserves of system `{system}`: {source}")]
    Handle {
        /// The system whose reserve lists it.
        system: String,
        /// The handle, as [`EcsError::NoSuchEntity`].
        #[source]
        source: EcsError,
    },
}

impl Schedule {
    /// The reserve of every system that declared commands, by system name:
    /// the tick systems in the order the schedule runs them, then the
    /// enter and exit systems of states, then the one-shot systems and
    /// observers in registration order (startup systems left out: they
    /// never run again). Read it between ticks, with the registry's
    /// [`AllocatorState`](ecs_engine::AllocatorState).
    pub fn command_reserves(&self) -> Vec<(String, ReserveState)> {
        self.saved_slots()
            .filter(|slot| slot.access.commands())
            .map(|slot| (slot.name.clone(), slot.buffer.reserve_state()))
            .collect()
    }

    /// Gives each named system's command buffer its saved reserve (see
    /// [`CommandBuffer::restore_reserve`](command_buffer::CommandBuffer::restore_reserve)),
    /// after `registry`'s entities were replaced by a snapshot's. Systems
    /// not named keep their buffers as they are.
    ///
    /// # Errors
    ///
    /// [`RestoreReservesError`] for an unknown system, or a handle that
    /// `registry` does not hold as reserved or that two reserves list;
    /// checked before any buffer changes.
    ///
    /// # Panics
    ///
    /// When a named buffer holds recorded commands (call it between
    /// ticks).
    pub fn restore_command_reserves(
        &mut self,
        registry: &mut Registry,
        reserves: Vec<(String, ReserveState)>,
    ) -> Result<(), RestoreReservesError> {
        let targets = self.check_command_reserves(registry.entities(), &reserves)?;
        let mut slots: Vec<&mut crate::slot::Slot> =
            saved_slots_mut(&mut self.slots, &mut self.states, &mut self.between)
                .filter(|slot| slot.access.commands())
                .collect();
        for (position, (_, state)) in targets.into_iter().zip(reserves) {
            slots[position]
                .buffer
                .restore_reserve(registry, state)
                .expect("every handle was checked reserved, and listed once");
        }
        Ok(())
    }

    /// Checks `reserves` as [`restore_command_reserves`](Self::restore_command_reserves)
    /// does before it changes anything, against `allocator` (the one the
    /// registry will have: a load checks before it swaps): every system
    /// known and with commands, every handle reserved there and listed
    /// once. Returns each entry's position among the systems with
    /// commands, in the order of [`command_reserves`](Self::command_reserves);
    /// a name that several systems share (a one-shot system registered
    /// twice, say) goes to them in that order.
    ///
    /// # Errors
    ///
    /// As [`restore_command_reserves`](Self::restore_command_reserves).
    pub fn check_command_reserves(
        &self,
        allocator: &EntityAllocator,
        reserves: &[(String, ReserveState)],
    ) -> Result<Vec<usize>, RestoreReservesError> {
        let names: Vec<&str> = self
            .saved_slots()
            .filter(|slot| slot.access.commands())
            .map(|slot| slot.name.as_str())
            .collect();
        let mut taken = vec![false; names.len()];
        let mut targets = Vec::with_capacity(reserves.len());
        let mut seen = HashSet::new();
        for (system, state) in reserves {
            let Some(position) =
                (0..names.len()).find(|&k| !taken[k] && names[k] == system.as_str())
            else {
                return Err(RestoreReservesError::UnknownSystem {
                    system: system.clone(),
                });
            };
            if let Some(&entity) = state
                .handles
                .iter()
                .find(|&&e| !allocator.is_reserved(e) || !seen.insert(e))
            {
                return Err(RestoreReservesError::Handle {
                    system: system.clone(),
                    source: EcsError::NoSuchEntity { entity },
                });
            }
            taken[position] = true;
            targets.push(position);
        }
        Ok(targets)
    }
}
