//! A ring of in-memory states of a whole [`Engine`]: [`EngineRing`],
//! saved by [`Engine::save_frame`] and restored by
//! [`Engine::restore_frame`], the registry's part kept by a
//! [`StateRing`] (what changed per frame), the rest (systems' states,
//! command reserves, the tick counter) whole per frame.

use std::collections::VecDeque;

use command_buffer::ReserveState;
use ecs_engine::{StateError, StateRing};
use scheduler::SystemStates;

use super::{Engine, EngineStateError};

/// The last `capacity` frames of an [`Engine`]: what [`EngineState`](super::EngineState)
/// holds, per frame, with the registry's part kept as a [`StateRing`]
/// (one whole copy of the newest frame, and what each save replaced), so
/// a rollback loop that saves every tick copies what changed, not the
/// world. The systems' states, the command buffers' reserves and the tick
/// counter are small and kept whole in every frame.
///
/// # Examples
///
/// ```
/// use ecs_runtime::prelude::*;
/// use ecs_runtime::EngineRing;
///
/// #[derive(Clone)]
/// struct Counter(u64);
///
/// fn count(mut q: Query<&mut Counter>) {
///     q.each(|c| c.0 += 1);
/// }
///
/// let mut builder = Engine::builder();
/// builder.add_system(count);
/// let mut engine = builder.build().unwrap();
/// engine.register_clone_delta::<Counter>();
/// engine.registry_mut().track_changes::<Counter>();
/// let e = engine.registry_mut().spawn((Counter(0),));
/// let mut ring = EngineRing::new(4);
/// for _ in 0..6 {
///     engine.save_frame(&mut ring).unwrap();
///     engine.tick().unwrap();
/// }
/// engine.restore_frame(&mut ring, 3).unwrap(); // saved before the third tick
/// assert_eq!(engine.ticks(), 2);
/// assert_eq!(engine.registry().get::<Counter>(e).map(|c| c.0), Some(2));
/// ```
#[derive(Debug)]
pub struct EngineRing {
    registry: StateRing,
    /// Oldest first, one per frame of `registry`.
    rest: VecDeque<Rest>,
}

/// The part of a frame kept whole.
#[derive(Debug)]
struct Rest {
    systems: SystemStates,
    reserves: Vec<(String, ReserveState)>,
    ticks: u64,
}

impl EngineRing {
    /// An empty ring that keeps the last `capacity` frames.
    ///
    /// # Panics
    ///
    /// When `capacity` is 0.
    pub fn new(capacity: usize) -> Self {
        EngineRing {
            registry: StateRing::new(capacity),
            rest: VecDeque::with_capacity(capacity),
        }
    }

    /// Frames saved and still kept.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// `true` before the first save.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The registry's part.
    pub fn registry(&self) -> &StateRing {
        &self.registry
    }

    /// The tick counter ([`Engine::ticks`]) of the frame `back` saves
    /// before the newest; `None` when the ring holds no such frame.
    pub fn ticks(&self, back: usize) -> Option<u64> {
        let at = self.rest.len().checked_sub(back + 1)?;
        Some(self.rest[at].ticks)
    }
}

/// Live entities from which [`Engine::save_frame`] copies the component
/// pools on the schedule's threads. Below, handing the save to them
/// costs more than it saves: the workers sleep between ticks, and waking
/// them took 20 to 30 µs per save on the harness's 2-core machine, while
/// the default scenario (about 5,600 entities) saves in about 40 µs on
/// one thread; handed to 2 threads its saves took 70 to 80 µs, on the
/// calling thread 57 to 60 µs.
const PARALLEL_SAVE_FROM: usize = 1 << 16;

impl Engine {
    /// Saves the engine as the ring's newest frame, between ticks,
    /// dropping the oldest once the ring is full: see [`EngineRing`]. In
    /// a world of 65,536 live entities or more the component pools are
    /// copied in parallel on the schedule's threads.
    ///
    /// # Errors
    ///
    /// As [`save_state`](Self::save_state); the ring is unchanged then.
    pub fn save_frame(&self, ring: &mut EngineRing) -> Result<(), EngineStateError> {
        let systems = self.schedule.save_system_states()?;
        let registry = &self.registry;
        let mirror = &mut ring.registry;
        if registry.len() >= PARALLEL_SAVE_FROM {
            // On the schedule's threads: the pools are copied in parallel.
            self.schedule.install(|| registry.save_frame(mirror))?;
        } else {
            registry.save_frame(mirror)?;
        }
        ring.rest.push_back(Rest {
            systems,
            reserves: self.schedule.command_reserves(),
            ticks: self.ticks,
        });
        if ring.rest.len() > ring.registry.len() {
            ring.rest.pop_front();
        }
        Ok(())
    }

    /// Makes the engine what it was at the frame `back` saves before the
    /// ring's newest (0: the newest), as [`restore_state`](Self::restore_state)
    /// of that frame would, and drops the `back` newer frames from the
    /// ring. Call it between ticks.
    ///
    /// # Errors
    ///
    /// [`EngineStateError::Registry`] with [`StateError::NoSuchFrame`]
    /// when the ring holds `back` frames or fewer, or when its component
    /// types differ; [`EngineStateError::Systems`] when its systems are
    /// not this schedule's. All checked before anything changes.
    pub fn restore_frame(
        &mut self,
        ring: &mut EngineRing,
        back: usize,
    ) -> Result<(), EngineStateError> {
        let Some(at) = ring.rest.len().checked_sub(back + 1) else {
            return Err(StateError::NoSuchFrame {
                back,
                frames: ring.rest.len(),
            }
            .into());
        };
        ring.rest[at].systems.check(&self.schedule)?;
        self.registry.restore_frame(&mut ring.registry, back)?;
        ring.rest.truncate(at + 1);
        let rest = &ring.rest[at];
        self.schedule
            .restore_command_reserves(&mut self.registry, rest.reserves.clone())?;
        self.schedule.restore_system_states(&rest.systems)?;
        self.ticks = rest.ticks;
        Ok(())
    }
}
