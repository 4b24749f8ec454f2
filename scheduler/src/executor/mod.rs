//! The executor: runs a schedule's waves, each wave's systems in parallel
//! on the pool (a single-system wave, every wave of a one-thread schedule,
//! and a wave or tick too cheap to pay for the pool, inline), then the
//! wave's events and command buffers applied in registration order,
//! turning the first failure into the tick's error; `awake` keeps the
//! pool's threads ready between ticks.

pub(crate) mod awake;

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use command_buffer::{ApplyMode, ApplyReport, CommandBuffer, SpawnLanes};
use ecs_engine::{Registry, panic_message};
use rayon::prelude::*;
use tracing::Dispatch;

use crate::events::hooks::EventHooks;
use crate::slot::{Failure, Slot};
use crate::{RunError, Tick};
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

/// A tick of a schedule with a pool runs on the caller's thread, with no
/// hand-off to the pool, while its systems' expected costs (each one's
/// recent runs, see [`expected_cost`]) add up to less than this...
pub(crate) const INLINE_TICK_BELOW: Duration = Duration::from_micros(40);
/// ...and goes back to the pool once they add up to more than this (the
/// gap keeps a tick near the line from switching every tick). Where the
/// line lies was measured with the harness on 2 cores: a 1,000-entity
/// `movers` tick (16 µs) ran 0.85x on 2 threads against 1, a 10,000-entity
/// one (55 µs) 1.03x, the default `shmup` tick (250 µs) 1.44x (issue 24).
pub(crate) const PARALLEL_TICK_ABOVE: Duration = Duration::from_micros(80);
/// A wave of several systems runs them as tasks on the pool only when that
/// could save at least this much: the sum of their expected costs less the
/// largest (what the others add to the longest one when run in turn).
/// Below it, handing tasks to other threads and moving their data between
/// cores costs about as much as it saves.
pub(crate) const PARALLEL_WAVE_GAIN: Duration = Duration::from_micros(10);

/// A system's expected cost after a run that took `run`, `previous` being
/// the estimate before it: a shorter run (or the first) is taken at once, a
/// longer one moves the estimate an eighth of the way, so that one run
/// stretched by the operating system (a preemption on a busy machine) does
/// not send the next ticks to the pool, while a system whose work grows
/// reaches its new cost within a few ticks.
pub(crate) fn expected_cost(previous: Duration, run: Duration) -> Duration {
    if previous.is_zero() || run <= previous {
        run
    } else {
        previous + (run - previous) / 8
    }
}

/// Whether running a wave's systems as separate tasks could pay, from
/// their expected costs (see [`PARALLEL_WAVE_GAIN`]).
fn parallel_pays(costs: impl Iterator<Item = Duration>) -> bool {
    let (total, largest) = costs.fold((Duration::ZERO, Duration::ZERO), |(sum, max), cost| {
        (sum + cost, max.max(cost))
    });
    total - largest >= PARALLEL_WAVE_GAIN
}

/// Whether the next tick runs on the caller's thread: `inline` is the
/// last tick's answer, `costs` every system's expected cost (see
/// [`INLINE_TICK_BELOW`] and [`PARALLEL_TICK_ABOVE`]).
pub(crate) fn tick_inline(inline: bool, costs: impl Iterator<Item = Duration>) -> bool {
    let expected: Duration = costs.sum();
    if inline {
        expected <= PARALLEL_TICK_ABOVE
    } else {
        expected < INLINE_TICK_BELOW
    }
}

/// The executor's state for the work between waves.
pub(crate) struct Between {
    /// The fresh-index lanes of the running wave's command buffers.
    pub(crate) lanes: SpawnLanes,
    /// Every system's apply report of the last tick, merged.
    pub(crate) tick_report: ApplyReport,
    /// Ages the event channels and merges the writers' buffers.
    pub(crate) events: EventHooks,
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
            return Err(RunError::MissingResource {
                tick: tick.number,
                system: slot.name.clone(),
                resource: crate::short_name(missing.name),
            });
        }
    }
    Ok(())
}

/// Which waves [`run_waves`] runs: the schedule's, or the startup
/// systems' (one each, not in the schedule's event hooks' waves).
#[derive(Clone, Copy)]
pub(crate) enum Stage {
    Tick,
    Startup,
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
    /// in turn on the tick's thread (see [`PARALLEL_WAVE_GAIN`]).
    pub(crate) adaptive: bool,
    pub(crate) stage: Stage,
    /// The caller's `tracing` dispatcher, carried onto the workers.
    pub(crate) dispatch: Option<&'d Dispatch>,
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
    } = pass;
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
        match &mut *wave {
            // An exclusive system conflicts with every other: always alone.
            [single] if single.access.is_exclusive() => single.run_exclusive(registry, tick),
            [single] => single.run(&registry.cell(), tick),
            // One thread, or too little work to pay for the pool: in
            // registration order, on this thread (their `par_each` calls
            // still use the pool, when there is one).
            many if threads == 1 || (adaptive && !parallel_pays(many.iter().map(|s| s.cost))) => {
                let cell = registry.cell();
                many.iter_mut().for_each(|slot| slot.run(&cell, tick));
            }
            many => {
                timing.parallel = true;
                let cell = registry.cell();
                many.par_iter_mut()
                    .for_each(|slot| with_dispatch(dispatch, || slot.run(&cell, tick)));
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
            Stage::Startup => {
                between.events.flush_all(registry, &failed);
                // A type only startup systems use is in no wave's hooks.
                for slot in wave.iter() {
                    for event in slot.access.events() {
                        (event.flush)(registry, &failed);
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
                    // A recorded payload that panics in `Drop` as the failed
                    // system's commands are discarded neither hides the
                    // system's own failure nor escapes the tick: the buffer
                    // is empty either way, and the panic is logged.
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
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(micros: &[u64]) -> impl Iterator<Item = Duration> + '_ {
        micros.iter().map(|&m| Duration::from_micros(m))
    }

    #[test]
    fn a_cost_falls_at_once_and_rises_by_an_eighth() {
        let us = Duration::from_micros;
        assert_eq!(expected_cost(Duration::ZERO, us(500)), us(500));
        assert_eq!(expected_cost(us(20), us(5)), us(5));
        // A 4 ms preemption once: 520 µs, then back down with the next run.
        assert_eq!(expected_cost(us(20), us(4_020)), us(520));
        assert_eq!(expected_cost(us(520), us(21)), us(21));
        // A steady rise is followed.
        let mut cost = us(20);
        for _ in 0..30 {
            cost = expected_cost(cost, us(200));
        }
        assert!(cost > us(195) && cost <= us(200), "{cost:?}");
    }

    #[test]
    fn a_wave_goes_parallel_when_the_others_add_ten_microseconds_to_the_longest() {
        assert!(!parallel_pays(us(&[])));
        assert!(!parallel_pays(us(&[500])));
        assert!(!parallel_pays(us(&[3, 4, 2])));
        assert!(!parallel_pays(us(&[500, 9])));
        assert!(parallel_pays(us(&[500, 10])));
        assert!(parallel_pays(us(&[4, 4, 4, 4])));
    }

    #[test]
    fn a_tick_leaves_its_thread_above_80_microseconds_and_comes_back_below_40() {
        // Inline: stays up to 80 µs in all.
        assert!(tick_inline(true, us(&[])));
        assert!(tick_inline(true, us(&[50, 30])));
        assert!(!tick_inline(true, us(&[50, 31])));
        // On the pool: back below 40 µs only.
        assert!(!tick_inline(false, us(&[30, 10])));
        assert!(tick_inline(false, us(&[30, 9])));
        assert!(!tick_inline(false, us(&[60])));
    }
}
