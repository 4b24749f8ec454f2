//! The executor: runs a schedule's waves, each wave's systems in parallel
//! on the pool (a single-system wave, every wave of a one-thread schedule,
//! and a wave or tick too cheap to pay for the pool, inline), then the
//! wave's events and command buffers applied in registration order,
//! turning the first failure into the tick's error; `awake` keeps the
//! pool's threads ready between ticks.

pub(crate) mod awake;
pub(crate) mod placement;

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use command_buffer::{ApplyMode, ApplyReport, CommandBuffer, SpawnLanes};
use ecs_engine::{Registry, panic_message};
use tracing::Dispatch;

use crate::events::hooks::EventHooks;
use crate::oneshot::{OneShots, drop_requests, has_requests, run_requested};
use crate::slot::{Failure, Slot};
use crate::{RunError, Tick};
use placement::parallel_pays;
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
    /// The wave's systems were handed to the pool's threads as tasks of
    /// their own; `false` when they ran one after another on one thread
    /// (a single system, a one-thread schedule, or a wave or tick whose
    /// measured cost was too small to pay for the pool: see
    /// [`Schedule::run`](crate::Schedule::run)).
    pub parallel: bool,
}

/// The executor's state for the work between waves.
pub(crate) struct Between {
    /// The fresh-index lanes of the running wave's command buffers.
    pub(crate) lanes: SpawnLanes,
    /// Every system's apply report of the last tick, merged.
    pub(crate) tick_report: ApplyReport,
    /// Ages the event channels and merges the writers' buffers.
    pub(crate) events: EventHooks,
    /// The one-shot systems, run on request after a wave's apply.
    pub(crate) oneshots: OneShots,
}

/// The command buffer of a system that declared commands.
fn commands_of(slot: &mut Slot) -> Option<&mut CommandBuffer> {
    slot.access.commands().then_some(&mut slot.buffer)
}

/// Every resource the `slots` require must be in `registry`: the first
/// missing one (by slot order) is the error. Optional ones
/// (`Option<Res<R>>`) may be absent.
pub(crate) fn check_resources<'a>(
    slots: impl IntoIterator<Item = &'a Slot>,
    registry: &Registry,
    tick: Tick,
) -> Result<(), RunError> {
    for slot in slots {
        if let Some(missing) = slot
            .access
            .resources()
            .iter()
            .find(|r| r.is_required() && !r.is_present(registry))
        {
            // `Trigger` is there only while an observer runs for a hook:
            // inserting it is no advice to give.
            if missing.type_id == std::any::TypeId::of::<crate::Trigger>() {
                return Err(RunError::NoTrigger {
                    tick: tick.number,
                    kind: "system",
                    system: slot.name.clone(),
                    how: "as a system of the schedule",
                });
            }
            return Err(RunError::MissingResource {
                tick: tick.number,
                system: slot.name.clone(),
                resource: crate::short_name(missing.name),
            });
        }
    }
    Ok(())
}

/// Which waves [`run_waves`] runs: the schedule's, or those of the
/// systems outside them (one each, not in the event hooks' waves).
#[derive(Clone, Copy)]
pub(crate) enum Stage {
    Tick,
    Startup,
    /// A one-shot system: as a startup one, and the requests its
    /// commands queue are run by the caller's loop, not by it.
    OneShot,
}

/// The `tracing` dispatcher of the calling thread (its scoped default, or
/// the global one), or `None` when no subscriber was ever set in the
/// process: then the spans cost one relaxed load each and nothing is
/// carried to the workers.
pub(crate) fn listening_dispatch() -> Option<Dispatch> {
    tracing::dispatcher::has_been_set().then(|| tracing::dispatcher::get_default(Dispatch::clone))
}

/// Runs `f` with `dispatch` as the thread's default, so the spans of a
/// worker thread reach the subscriber of the thread that called
/// [`Schedule::run`](crate::Schedule::run).
pub(crate) fn with_dispatch<R>(dispatch: Option<&Dispatch>, f: impl FnOnce() -> R) -> R {
    match dispatch {
        Some(dispatch) => tracing::dispatcher::with_default(dispatch, f),
        None => f(),
    }
}

/// What one call of [`run_waves`] runs under.
#[derive(Clone, Copy)]
pub(crate) struct Pass<'d> {
    pub(crate) tick: Tick,
    /// Threads of the pool (for the idle figures); 1 runs every wave
    /// inline, on the calling thread.
    pub(crate) threads: usize,
    /// A wave of several systems too cheap to pay for the pool runs them
    /// in turn on the tick's thread (see [`placement::PARALLEL_WAVE_GAIN`]).
    pub(crate) adaptive: bool,
    pub(crate) stage: Stage,
    /// The caller's `tracing` dispatcher, carried onto the workers.
    pub(crate) dispatch: Option<&'d Dispatch>,
    /// A check mode: each wave of several systems runs them in turn, on
    /// the tick's thread, in an order drawn from this seed, the tick and
    /// the wave ([`Schedule::set_shuffle`](crate::Schedule::set_shuffle)).
    pub(crate) shuffle: Option<u64>,
}

/// The seed of the order a shuffled wave runs in: the mode's seed mixed
/// with the tick number and the wave index.
fn wave_seed(seed: u64, tick: u64, wave: usize) -> u64 {
    seed ^ tick.rotate_left(32) ^ (wave as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One tick: every wave, then its commands. See [`Schedule::run`](crate::Schedule::run).
pub(crate) fn run_waves(
    slots: &mut [Slot],
    wave_ranges: &[Range<usize>],
    wave_timings: &mut [WaveTiming],
    between: &mut Between,
    registry: &mut Registry,
    pass: Pass<'_>,
) -> Result<(), RunError> {
    let Pass {
        tick,
        threads,
        adaptive,
        stage,
        dispatch,
        shuffle,
    } = pass;
    // A set's conditions are decided once per tick (`Slot::decide_sets`).
    for slot in slots.iter() {
        slot.reset_sets();
    }
    for (wave_index, (range, timing)) in wave_ranges.iter().zip(wave_timings.iter_mut()).enumerate()
    {
        let wave = &mut slots[range.clone()];
        // If the registry's entities were replaced (a snapshot load, between
        // ticks or by an earlier exclusive system), a buffer's reserved
        // handles name nothing of the new world, or an unrelated entity:
        // each buffer of the wave reserves anew, in slot order, before its
        // system can spawn. One comparison per buffer otherwise.
        for slot in wave.iter_mut().filter(|slot| slot.access.commands()) {
            slot.buffer.resync(registry);
        }
        // Each wave runs at a change tick of its own, after every earlier
        // change (`Added`/`Changed` compare with a system's last run).
        registry.advance_change_tick();
        // Spawns past a buffer's reserve take fresh indices from the
        // buffer's lane: real handles, the same on any thread count.
        between.lanes.open(registry, wave, commands_of);
        let start = Instant::now();
        timing.parallel = false;
        if wave.len() > 1 {
            // Before the wave, in registration order: the verdict of a set
            // whose first members share this wave comes from the same
            // member whatever the thread count.
            let cell = registry.cell();
            for slot in wave.iter_mut() {
                slot.decide_sets(&cell, tick);
            }
        }
        match &mut *wave {
            // An exclusive system conflicts with every other: always alone.
            [single] if single.access.is_exclusive() => single.run_exclusive(registry, tick),
            // The check mode: in turn, in a drawn order, each system's
            // parallel walks serial with their chunks in a drawn order
            // (the events and commands below still go in registration
            // order).
            many if shuffle.is_some() => {
                let cell = registry.cell();
                let seed = wave_seed(shuffle.unwrap_or_default(), tick.number, wave_index);
                for i in ecs_engine::shuffled_order(many.len(), seed) {
                    ecs_engine::run_shuffled(seed ^ i as u64, || many[i].run(&cell, tick));
                }
            }
            [single] => single.run(&registry.cell(), tick),
            // One thread, or too little work to pay for the pool: in
            // registration order, on this thread (their `par_each` calls
            // still use the pool, when there is one).
            many if threads == 1 || (adaptive && !parallel_pays(many.iter().map(|s| s.cost))) => {
                let cell = registry.cell();
                many.iter_mut().for_each(|slot| slot.run(&cell, tick));
            }
            // The threads take the systems one at a time, in registration
            // order, and the tick's thread waits for the last ones awake.
            many => {
                timing.parallel = true;
                let cell = registry.cell();
                ecs_engine::par_for_each(many.iter_mut(), |slot| {
                    with_dispatch(dispatch, || slot.run(&cell, tick));
                });
            }
        }
        timing.wall = start.elapsed();
        let busy: Duration = wave.iter().map(|s| s.last_run).sum();
        timing.idle = (timing.wall * threads as u32).saturating_sub(busy);
        // The wave's commands land after the tick its systems ran at, so
        // every system (the wave's own too) sees them on its next run.
        registry.advance_change_tick();
        let apply_span = tracing::info_span!("apply", wave = wave_index).entered();
        let apply_start = Instant::now();
        // The events the wave's writers sent, in registration order, before
        // its commands.
        let failed: Vec<usize> = wave
            .iter()
            .filter(|slot| slot.failure.is_some())
            .map(|slot| slot.events_key)
            .collect();
        match stage {
            Stage::Tick => between.events.flush(registry, wave_index, &failed),
            Stage::Startup | Stage::OneShot => {
                between.events.flush_all(registry, &failed);
                // A type only startup systems use is in no wave's hooks.
                for slot in wave.iter() {
                    for event in slot.access.events() {
                        (event.flush)(registry, event.key, &failed);
                    }
                }
            }
        }
        // Refused handles (past the live-entity limit) are reported as
        // skipped spawns by the apply.
        let _refused = between.lanes.close(registry, wave, commands_of);
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
                    let mode = if slot.strict {
                        ApplyMode::Strict
                    } else {
                        ApplyMode::Lenient
                    };
                    match slot.buffer.try_apply_with(registry, mode) {
                        Ok(Ok(report)) => slot.report = report,
                        Ok(Err(error)) => {
                            slot.report = *error.report;
                            let command = Box::new(command_buffer::SkippedCommand {
                                buffer: slot.id.0,
                                ..error.skipped
                            });
                            first_failure
                                .get_or_insert((slot.name.clone(), Failure::Skipped(command)));
                        }
                        Err(panic) => {
                            slot.report = ApplyReport::default();
                            first_failure
                                .get_or_insert((slot.name.clone(), Failure::CommandPanic(panic)));
                        }
                    }
                    between.tick_report.merge(&slot.report, slot.id.0);
                }
                Some(failure) => {
                    // The failed system's commands are dropped, and counted
                    // as discarded in its report and the tick's. A recorded
                    // payload that panics in `Drop` meanwhile neither hides
                    // the system's own failure nor escapes the tick: the
                    // buffer is empty either way, and the panic is logged.
                    slot.report = ApplyReport::default();
                    slot.report.discard(slot.buffer.len());
                    between.tick_report.merge(&slot.report, slot.id.0);
                    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| slot.buffer.clear())) {
                        tracing::error!(
                            system = %slot.name,
                            "dropping the failed system's unapplied commands panicked: {}",
                            panic_message(&*panic)
                        );
                    }
                    first_failure.get_or_insert((slot.name.clone(), failure));
                }
            }
        }
        timing.apply = apply_start.elapsed();
        drop(apply_span);
        if let Some((system, failure)) = first_failure {
            drop_requests(registry);
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
                Failure::Skipped(command) => RunError::CommandSkipped {
                    tick: tick.number,
                    system,
                    command,
                },
                Failure::CommandPanic(panic) => RunError::CommandPanic {
                    tick: tick.number,
                    system,
                    command: panic.index,
                    message: panic.message,
                },
            });
        }
        // The one-shot systems the wave's commands asked for (a one-shot
        // system's own requests are run by the loop that runs it).
        if !matches!(stage, Stage::OneShot) && has_requests(registry) {
            run_requested(between, registry, pass)?;
        }
    }
    Ok(())
}
