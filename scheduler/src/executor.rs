//! The frozen schedule and its executor: waves run in parallel on a rayon
//! pool, each system's commands applied between waves in registration
//! order.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ecs_engine::{Registry, RegistryCell};
use rayon::prelude::*;

use crate::graph::Dag;
use crate::schedule::{Failure, Slot};
use crate::{RunError, SystemContext, SystemId, Tick};

/// Time spent by one wave in the last tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaveTiming {
    /// From the wave's start to the end of its last system (commands not
    /// included).
    pub wall: Duration,
    /// Thread time the pool sat idle at the wave's barrier:
    /// `wall x threads - sum of the wave's system times` (0 if negative).
    pub idle: Duration,
    /// Time spent applying the wave's command buffers.
    pub apply: Duration,
}

/// A built schedule: systems in waves, a thread pool, and the timings of
/// the last tick.
pub struct Schedule {
    /// Systems sorted by (wave, registration order).
    pub(crate) slots: Vec<Slot>,
    /// Slot position of each system id.
    pub(crate) position: Vec<usize>,
    /// Slot ranges of the waves, in order.
    pub(crate) wave_ranges: Vec<Range<usize>>,
    pub(crate) dag: Dag,
    pool: rayon::ThreadPool,
    wave_timings: Vec<WaveTiming>,
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedule")
            .field("systems", &self.slots.len())
            .field("waves", &self.wave_ranges.len())
            .field("threads", &self.threads())
            .finish()
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

impl Slot {
    /// Runs the system once, catching a panic; records time and failure.
    fn run(&mut self, cell: &RegistryCell<'_>, tick: Tick) {
        self.failure = None;
        if !self.enabled {
            self.last_run = Duration::ZERO;
            return;
        }
        let start = Instant::now();
        let ctx = SystemContext::new(&self.name, &self.access, cell, &mut self.buffer, tick);
        let system = &mut self.system;
        let outcome = catch_unwind(AssertUnwindSafe(|| system.run(&ctx)));
        self.last_run = start.elapsed();
        self.failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(Failure::Error(error)),
            Err(payload) => Some(Failure::Panic(panic_message(&*payload))),
        };
    }
}

impl Schedule {
    pub(crate) fn new(mut slots: Vec<Slot>, dag: Dag, pool: rayon::ThreadPool) -> Schedule {
        let mut wave_of = vec![0; slots.len()];
        for (k, wave) in dag.waves.iter().enumerate() {
            for &i in wave {
                wave_of[i] = k;
            }
        }
        slots.sort_by_key(|slot| (wave_of[slot.id.0], slot.id));
        let mut position = vec![0; slots.len()];
        for (p, slot) in slots.iter().enumerate() {
            position[slot.id.0] = p;
        }
        let mut wave_ranges = Vec::with_capacity(dag.waves.len());
        let mut start = 0;
        for wave in &dag.waves {
            wave_ranges.push(start..start + wave.len());
            start += wave.len();
        }
        let wave_timings = vec![WaveTiming::default(); wave_ranges.len()];
        Schedule {
            slots,
            position,
            wave_ranges,
            dag,
            pool,
            wave_timings,
        }
    }

    /// A builder for a new schedule.
    pub fn builder() -> crate::ScheduleBuilder {
        crate::ScheduleBuilder::default()
    }

    /// Threads in the schedule's pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs every wave once: each wave's enabled systems in parallel (a
    /// single-system wave inline), then each system's command buffer
    /// applied to `registry` in registration order, then the next wave. The
    /// whole tick runs as one job on the pool, so systems may use `par_each`
    /// on it; no lock is held across a parallel call (views use try-locks
    /// only). Allocates nothing once warm, except the one boxed job rayon
    /// makes to carry the tick onto the pool.
    ///
    /// # Errors
    ///
    /// [`RunError::System`] or [`RunError::Panic`] for the first failing
    /// system (in registration order) of the first wave with a failure. The
    /// other systems of that wave finish and their commands are applied;
    /// the failing system's commands are discarded; later waves do not run.
    /// The registry stays consistent and the schedule usable.
    ///
    /// [`RunError::CommandPanic`] when a command panics while a buffer is
    /// applied between waves, naming the system whose buffer it was and the
    /// command's index: the commands before it stay applied, the rest of
    /// that buffer is dropped, the wave's other buffers are still applied
    /// (in registration order), and later waves do not run. Every buffer is
    /// empty when `run` returns, so nothing recorded in one tick is ever
    /// applied in another.
    pub fn run(&mut self, registry: &mut Registry, tick: Tick) -> Result<(), RunError> {
        let threads = self.threads();
        let Schedule {
            slots,
            wave_ranges,
            pool,
            wave_timings,
            ..
        } = self;
        if cfg!(miri) {
            // Under Miri the tick goes through `install`, which carries it
            // onto the pool as one job too: rayon's `in_place_scope` sets
            // its completion latch while the spawned closure's captured
            // references are still protected (a rayon-internal violation
            // of Tree Borrows, reported as soon as the caller returns
            // first), which would hide any finding of ours.
            return pool
                .install(|| run_waves(slots, wave_ranges, wave_timings, registry, tick, threads));
        }
        // The tick runs as one job on the pool, so systems and their
        // `par_each` run on its threads. The caller waits for it by
        // spinning briefly, then parking: a blocking `install` would put
        // the caller to sleep and wake it up again on every tick, which
        // costs more than a short tick itself.
        let mut outcome = None;
        let done = AtomicBool::new(false);
        let caller = std::thread::current();
        pool.in_place_scope(|scope| {
            scope.spawn(|_| {
                let _signal = DoneSignal {
                    done: &done,
                    caller: &caller,
                };
                outcome = Some(run_waves(
                    slots,
                    wave_ranges,
                    wave_timings,
                    registry,
                    tick,
                    threads,
                ));
            });
            wait_for(&done);
        });
        outcome.expect("the tick job ran to completion")
    }

    /// The waves: for each, its systems' ids and names in registration
    /// order.
    pub fn waves(&self) -> Vec<Vec<(SystemId, &str)>> {
        self.wave_ranges
            .iter()
            .map(|range| {
                self.slots[range.clone()]
                    .iter()
                    .map(|s| (s.id, s.name.as_str()))
                    .collect()
            })
            .collect()
    }

    /// Number of systems.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// `true` when the schedule has no system.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(crate) fn slot(&self, id: SystemId) -> &Slot {
        &self.slots[self.position[id.0]]
    }

    /// The id of the system named `name`.
    pub fn system_id(&self, name: &str) -> Option<SystemId> {
        self.slots.iter().find(|s| s.name == name).map(|s| s.id)
    }

    /// The name of system `id`.
    ///
    /// # Panics
    ///
    /// When `id` is not from this schedule.
    #[track_caller]
    pub fn name(&self, id: SystemId) -> &str {
        &self.slot(id).name
    }

    /// The state of system `id` as type `S`: a
    /// [`StatefulSystem`](crate::StatefulSystem) struct, or the closure of
    /// a function system. `None` when `id` is unknown or `S` is not its type.
    pub fn state<S: 'static>(&self, id: SystemId) -> Option<&S> {
        let position = *self.position.get(id.0)?;
        self.slots[position].system.state().downcast_ref()
    }

    /// Enables or disables the system named `name`. A disabled system keeps
    /// its place and its edges; it just does not run (and records no
    /// commands).
    ///
    /// # Errors
    ///
    /// [`RunError::UnknownSystem`] when no system has that name.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<(), RunError> {
        let slot = self
            .slots
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| RunError::UnknownSystem {
                name: name.to_owned(),
            })?;
        slot.enabled = enabled;
        Ok(())
    }

    /// `true` when system `name` exists and is enabled.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.slots.iter().any(|s| s.name == name && s.enabled)
    }

    /// How long each system ran in the last tick, by registration order:
    /// `(id, name, time)`; zero for a disabled system or one in a wave the
    /// tick did not reach.
    pub fn system_timings(&self) -> impl Iterator<Item = (SystemId, &str, Duration)> {
        self.position.iter().map(|&p| {
            let slot = &self.slots[p];
            (slot.id, slot.name.as_str(), slot.last_run)
        })
    }

    /// The timings of each wave in the last tick.
    pub fn wave_timings(&self) -> &[WaveTiming] {
        &self.wave_timings
    }
}

/// Sets `done` and wakes the caller when the tick job ends, even by
/// unwinding.
struct DoneSignal<'a> {
    done: &'a AtomicBool,
    caller: &'a std::thread::Thread,
}

impl Drop for DoneSignal<'_> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        self.caller.unpark();
    }
}

/// How long the caller spins (yielding its core) before parking.
const SPIN: Duration = Duration::from_micros(50);

fn wait_for(done: &AtomicBool) {
    let start = Instant::now();
    while !done.load(Ordering::Acquire) {
        if start.elapsed() < SPIN {
            std::thread::yield_now();
        } else {
            std::thread::park_timeout(Duration::from_millis(1));
        }
    }
}

/// One tick: every wave, then its commands. See [`Schedule::run`].
fn run_waves(
    slots: &mut [Slot],
    wave_ranges: &[Range<usize>],
    wave_timings: &mut [WaveTiming],
    registry: &mut Registry,
    tick: Tick,
    threads: usize,
) -> Result<(), RunError> {
    for (range, timing) in wave_ranges.iter().zip(wave_timings.iter_mut()) {
        let wave = &mut slots[range.clone()];
        let start = Instant::now();
        {
            let cell = registry.cell();
            match &mut *wave {
                [single] => single.run(&cell, tick),
                many => many.par_iter_mut().for_each(|slot| slot.run(&cell, tick)),
            }
        }
        timing.wall = start.elapsed();
        let busy: Duration = wave.iter().map(|s| s.last_run).sum();
        timing.idle = (timing.wall * threads as u32).saturating_sub(busy);
        let apply_start = Instant::now();
        let mut first_failure = None;
        for slot in wave.iter_mut() {
            match slot.failure.take() {
                // A system that declared no commands cannot have recorded
                // any (its context refuses the buffer): nothing to apply,
                // and no reserve of handles to keep topped up for it.
                None if !slot.access.commands() => {}
                // A panic while applying is caught like a system's, and the
                // buffer is empty afterwards either way (nothing of this
                // tick is left for the next one); the wave's other buffers
                // are still applied, in registration order.
                None => {
                    if let Err(panic) = slot.buffer.try_apply(registry) {
                        first_failure
                            .get_or_insert((slot.name.clone(), Failure::CommandPanic(panic)));
                    }
                }
                Some(failure) => {
                    slot.buffer.clear();
                    first_failure.get_or_insert((slot.name.clone(), failure));
                }
            }
        }
        timing.apply = apply_start.elapsed();
        if let Some((system, failure)) = first_failure {
            return Err(match failure {
                Failure::Error(source) => RunError::System {
                    tick: tick.number,
                    source,
                },
                Failure::Panic(message) => RunError::Panic {
                    tick: tick.number,
                    system,
                    message,
                },
                Failure::CommandPanic(panic) => RunError::CommandPanic {
                    tick: tick.number,
                    system,
                    command: panic.index,
                    message: panic.message,
                },
            });
        }
    }
    Ok(())
}
