//! The frozen schedule: its systems in waves, its pool, and what the last
//! tick measured; [`Schedule::run`] hands the tick to the executor.

use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use command_buffer::{ApplyReport, SpawnLanes};
use ecs_engine::Registry;

use crate::SystemAccess;
use crate::events::hooks::EventHooks;
use crate::executor::awake::{DoneSignal, MAX_IDLE, Watches, wait_for};
use crate::executor::placement::TickPlacement;
use crate::executor::{
    Between, Pass, Stage, WaveTiming, check_resources, listening_dispatch, run_waves, with_dispatch,
};
use crate::graph::Dag;
use crate::oneshot::OneShots;
use crate::slot::{Slot, SystemRun};
use crate::state::builder::StateRunner;
use crate::{RunError, SystemId, Tick};

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
    /// The pool of a schedule of two threads or more; `None` for one
    /// thread, whose ticks run on the caller's thread.
    pub(crate) pool: Option<rayon::ThreadPool>,
    wave_timings: Vec<WaveTiming>,
    /// A tick has found every declared resource in the registry.
    resources_checked: bool,
    /// The startup systems, each a wave of its own, until they have run.
    pub(crate) startup: Vec<Slot>,
    /// What happens between waves besides the commands (boxed: a
    /// schedule stays small to move).
    pub(crate) between: Box<Between>,
    /// Keeps the pool's threads awake while ticks come.
    watches: Watches,
    /// When the last tick on the pool ended: the gap to the next tick's
    /// start says whether the caller paces its ticks (see
    /// [`Watches::release`]).
    last_tick_end: Option<Instant>,
    /// Ticks and waves too cheap to pay for the pool run inline (see
    /// [`Schedule::set_adaptive`]).
    adaptive: bool,
    /// The check mode's seed ([`Schedule::set_shuffle`]).
    shuffle: Option<u64>,
    /// Whether the next tick of a schedule with a pool runs on the
    /// caller's thread.
    placement: TickPlacement,
    /// The state types, and their enter and exit systems.
    pub(crate) states: StateRunner,
    /// The clones of system state types, for saved system states
    /// (`system_state.rs`).
    pub(crate) state_copies: crate::system_state::StateCopies,
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

impl Schedule {
    pub(crate) fn new(mut slots: Vec<Slot>, dag: Dag, pool: Option<rayon::ThreadPool>) -> Schedule {
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
        let events = EventHooks::new(
            wave_ranges
                .iter()
                .map(|range| slots[range.clone()].iter().map(|s| &s.access).collect()),
        );
        let threads = pool
            .as_ref()
            .map_or(1, rayon::ThreadPool::current_num_threads);
        Schedule {
            slots,
            position,
            wave_ranges,
            dag,
            pool,
            wave_timings,
            between: Box::new(Between {
                lanes: SpawnLanes::new(),
                tick_report: ApplyReport::default(),
                events,
                oneshots: OneShots::default(),
            }),
            resources_checked: false,
            startup: Vec::new(),
            watches: Watches::new(threads),
            last_tick_end: None,
            adaptive: true,
            shuffle: None,
            placement: TickPlacement::default(),
            states: StateRunner::default(),
            state_copies: crate::system_state::StateCopies::default(),
        }
    }

    pub(crate) fn set_startup(&mut self, startup: Vec<Slot>) {
        self.startup = startup;
    }

    /// Runs the startup systems once, one at a time in registration order,
    /// each followed by its commands; then drops them.
    fn run_startup(&mut self, registry: &mut Registry, tick: Tick) -> Result<(), RunError> {
        let mut startup = std::mem::take(&mut self.startup);
        let order: Vec<usize> = (0..startup.len()).collect();
        let (pool, between) = (self.pool.as_ref(), &mut *self.between);
        run_alone(pool, between, &mut startup, &order, registry, tick)
    }

    /// Applies the due transition of each state type, in the order the
    /// types were added: the exit systems, the change of `State`, the
    /// enter systems (see [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state)).
    fn run_transitions(&mut self, registry: &mut Registry, tick: Tick) -> Result<(), RunError> {
        let (pool, between) = (self.pool.as_ref(), &mut *self.between);
        let StateRunner { drivers, slots } = &mut self.states;
        for driver in drivers {
            if let Some((exits, enters)) = driver.take(registry) {
                run_alone(pool, between, slots, &exits, registry, tick)?;
                driver.commit(registry);
                run_alone(pool, between, slots, &enters, registry, tick)?;
            }
        }
        Ok(())
    }

    /// Ages every event channel the systems declare as the start of tick
    /// `tick` would, without running anything: for a world resumed from a
    /// snapshot after tick `tick`, so that the events sent before the
    /// next tick are stamped and kept as in the uninterrupted run (a fresh
    /// channel would stamp them with tick 0 and drop them at once).
    pub fn begin_events(&mut self, registry: &mut Registry, tick: u64) {
        self.between.events.begin_tick(registry, tick);
    }

    /// Turns the cost-based choice of where ticks and waves run (see
    /// [`run`](Self::run)) on (the default) or off. Off, a schedule with a
    /// pool hands every tick to the pool and runs the systems of every wave
    /// of several as tasks of their own, however cheap: for programs whose
    /// systems of one wave must run at the same time, and for measuring
    /// the pool itself.
    pub fn set_adaptive(&mut self, adaptive: bool) {
        self.adaptive = adaptive;
    }

    /// Whether ticks and waves too cheap to pay for the pool run inline
    /// (see [`set_adaptive`](Self::set_adaptive)).
    pub fn is_adaptive(&self) -> bool {
        self.adaptive
    }

    /// Turns the shuffle check mode on (`Some(seed)`) or off (`None`, the
    /// default). On, each wave of several systems runs them one after
    /// another on the tick's thread, in an order drawn from the seed, the
    /// tick number and the wave index, instead of in registration order
    /// or at the same time; their events and commands still land in
    /// registration order. Systems of one wave declare no conflicting
    /// access, so a correct program gives the same world: a run that
    /// differs from the unshuffled one has an order dependency the
    /// declarations do not show (interior mutability, a global), which
    /// comparing thread counts can miss when the pool happens to keep
    /// registration order. In the mode, each system's `par_each` /
    /// `par_each_init` walks run serially with their chunks in a drawn
    /// order too ([`ecs_engine::run_shuffled`]); `par_fold` and
    /// `par_filter_map` combine their chunks in order, as always.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Query, Schedule, Tick};
    ///
    /// struct Heat(u32);
    /// struct Light(u32);
    /// fn warm(mut q: Query<&mut Heat>) { q.each(|h| h.0 += 1); }
    /// fn glow(mut q: Query<&mut Light>) { q.each(|l| l.0 += 2); }
    ///
    /// let world = |shuffle| {
    ///     let mut registry = Registry::new();
    ///     let e = registry.spawn((Heat(0), Light(0)));
    ///     let mut builder = Schedule::builder();
    ///     builder.add(warm);
    ///     builder.add(glow);
    ///     let mut schedule = builder.build(&mut registry).unwrap();
    ///     schedule.set_shuffle(shuffle);
    ///     for number in 0..10 {
    ///         schedule.run(&mut registry, Tick { number, ..Tick::default() }).unwrap();
    ///     }
    ///     (registry.get::<Heat>(e).unwrap().0, registry.get::<Light>(e).unwrap().0)
    /// };
    /// assert_eq!(world(None), world(Some(7)));
    /// ```
    pub fn set_shuffle(&mut self, seed: Option<u64>) {
        self.shuffle = seed;
    }

    /// The shuffle check mode's seed (see [`set_shuffle`](Self::set_shuffle)).
    pub fn shuffle(&self) -> Option<u64> {
        self.shuffle
    }

    /// Threads in the schedule's pool.
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or(1, rayon::ThreadPool::current_num_threads)
    }

    /// Runs `f` on the schedule's thread pool, or on the calling thread
    /// inside [`ecs_engine::run_serial`] when the schedule has one
    /// thread, and returns what it returns: work `f` splits with rayon (a
    /// parallel walk, a ring's save) then uses the schedule's threads,
    /// never rayon's global pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => ecs_engine::run_serial(f),
        }
    }

    /// Runs every wave once: each wave's enabled systems in parallel (a
    /// single-system wave inline), then each system's command buffer
    /// applied to `registry` in registration order, then the next wave. On
    /// a schedule of one thread the whole tick runs on the calling thread,
    /// every wave, apply and `par_each` included, with nothing handed to
    /// any pool (see [`ecs_engine::run_serial`]).
    ///
    /// # Where a tick and a wave run
    ///
    /// A schedule with a pool decides from measured costs (each system's
    /// recent runs: a shorter run counts at once, a longer one an eighth
    /// of the way, so one run stretched by a busy machine does not count)
    /// how much of a tick the pool gets, unless
    /// [`set_adaptive(false)`](Self::set_adaptive) turned that off:
    ///
    /// - a tick whose systems' costs add up to less than 40 µs runs on the
    ///   calling thread as a one-thread schedule's does (and keeps doing
    ///   so until they add up to more than 80 µs); the first tick, with no
    ///   cost measured yet, is one of these;
    /// - in a tick on the pool, a wave of several systems runs them as
    ///   tasks of their own only when that could save 10 µs or more (their
    ///   costs' sum less the largest); otherwise in turn, on the tick's
    ///   thread.
    ///
    /// Measured on 2 cores with the harness, a tick of about 16 µs ran
    /// 0.85x on 2 threads against 1, one of 55 µs 1.03x and one of 250 µs
    /// 1.44x: handing work to other threads and moving its data between
    /// cores costs about as much as parallel saves below the lines above.
    /// Results never depend on the decision (systems of one wave do not
    /// conflict, and buffers are applied in registration order either
    /// way); [`wave_timings`](Self::wave_timings) says how each wave ran.
    /// Systems of one wave are never promised to run at the same time.
    ///
    /// Otherwise the whole tick
    /// runs as one job on the pool, so systems may use `par_each` on it; no lock is held across a parallel call (views use
    /// try-locks only). The pool's threads stay awake while ticks come
    /// (each runs the pool's work as it comes and yields its core between,
    /// for at most 500 µs without work), so no wave waits for a sleeping
    /// thread to wake up. Allocates nothing once warm, except the one boxed
    /// job rayon makes to carry the tick onto the pool (and, after a pause
    /// between ticks long enough for the threads to sleep, the one job
    /// that wakes them).
    ///
    /// # Spans
    ///
    /// Each system run is a [`tracing`] span `system` (field `name`) and
    /// each wave's apply a span `apply` (field `wave`, from 0), at the
    /// `INFO` level, on the worker thread that ran it. They go to the
    /// subscriber that is the default on the thread calling `run` (a
    /// scoped one too: it is carried onto the pool's threads for the
    /// tick). Without any subscriber in the process they cost a few
    /// relaxed atomic loads each. (With one scoped subscriber as the only
    /// dispatcher of the process, `tracing` decides whether a span site is
    /// on from the default of the thread that reaches it first: a program
    /// that ticks other schedules without a subscriber at the same time
    /// keeps a second dispatcher registered, as the harness does.)
    ///
    /// # Errors
    ///
    /// [`RunError::MissingResource`], before any system runs, when a
    /// system declares a resource the registry lacks (checked until a tick
    /// has found them all).
    /// [`RunError::System`] or [`RunError::Panic`] for the first failing
    /// system (in registration order) of the first wave with a failure. The
    /// other systems of that wave finish and their commands are applied;
    /// the failing system's commands are discarded; later waves do not run.
    /// [`RunError::CommandSkipped`] when a system with
    /// [strict commands](crate::SystemConfig::strict_commands) had a
    /// command skipped at apply (the same rules, except that its commands
    /// before the skipped one stay applied).
    /// [`RunError::Observer`] around the failure of an observer (naming
    /// it, its hook, the component type and the entity);
    /// [`RunError::NoTrigger`] for a system that reads `Res<Trigger>`
    /// outside an observer's run.
    /// The registry stays consistent and the schedule usable. Without strict
    /// commands, skipped commands are counted in
    /// [`command_report`](Self::command_report), never an error.
    ///
    /// [`RunError::CommandPanic`] when a command panics while a buffer is
    /// applied between waves, naming the system whose buffer it was and the
    /// command's index: the commands before it stay applied, the rest of
    /// that buffer is dropped, the wave's other buffers are still applied
    /// (in registration order), and later waves do not run. Every buffer is
    /// empty when `run` returns, so nothing recorded in one tick is ever
    /// applied in another.
    pub fn run(&mut self, registry: &mut Registry, tick: Tick) -> Result<(), RunError> {
        if !self.startup.is_empty() {
            self.run_startup(registry, tick)?;
        }
        if !self.states.drivers.is_empty() {
            self.run_transitions(registry, tick)?;
        }
        if !self.resources_checked {
            let by_registration: Vec<&Slot> =
                self.position.iter().map(|&p| &self.slots[p]).collect();
            check_resources(by_registration, registry, tick)?;
            self.resources_checked = true;
        }
        let threads = self.threads();
        let Schedule {
            slots,
            wave_ranges,
            pool,
            wave_timings,
            between,
            watches,
            adaptive,
            shuffle,
            placement,
            last_tick_end,
            ..
        } = self;
        between.events.begin_tick(registry, tick.number);
        between.tick_report = ApplyReport::default();
        for slot in slots.iter_mut() {
            slot.report = ApplyReport::default();
        }
        let dispatch = listening_dispatch();
        let dispatch = dispatch.as_ref();
        let pass = Pass {
            tick,
            threads,
            adaptive: *adaptive,
            stage: Stage::Tick,
            dispatch,
            shuffle: *shuffle,
        };
        let placed = *adaptive && pool.is_some();
        let inline = placed && placement.next(slots.iter().map(|s| s.cost));
        let start = Instant::now();
        let Some(pool) = pool.as_ref().filter(|_| !inline) else {
            // One thread, or a tick too cheap to pay for the pool: the
            // tick on the caller's thread, no hand-off.
            let pass = Pass { threads: 1, ..pass };
            let outcome = ecs_engine::run_serial(|| {
                run_waves(slots, wave_ranges, wave_timings, between, registry, pass)
            });
            if placed {
                placement.record(true, start.elapsed());
            }
            return outcome;
        };
        if cfg!(miri) {
            // Under Miri the tick goes through `install`, which carries it
            // onto the pool as one job too: rayon's `in_place_scope` sets
            // its completion latch while the spawned closure's captured
            // references are still protected (a rayon-internal violation
            // of Tree Borrows, reported as soon as the caller returns
            // first), which would hide any finding of ours.
            return pool
                .install(|| run_waves(slots, wave_ranges, wave_timings, between, registry, pass));
        }
        // The tick runs as one job on the pool, so systems and their
        // `par_each` run on its threads, which watch for work from tick to
        // tick (see `awake`). The caller waits for it by spinning briefly,
        // then parking until the job's end unparks it: a blocking
        // `install` would put the caller to sleep and wake it up again on
        // every tick, which costs more than a short tick itself.
        watches.keep_awake(pool);
        let mut outcome = None;
        let done = AtomicBool::new(false);
        let caller = std::thread::current();
        pool.in_place_scope(|scope| {
            scope.spawn(|_| {
                let _signal = DoneSignal {
                    done: &done,
                    caller: &caller,
                };
                outcome = Some(with_dispatch(dispatch, || {
                    run_waves(slots, wave_ranges, wave_timings, between, registry, pass)
                }));
            });
            wait_for(&done);
        });
        if placed {
            placement.record(false, start.elapsed());
        }
        // A caller that paces its ticks (a frame loop) would leave the
        // watches spinning for nothing until the next tick.
        let end = Instant::now();
        if last_tick_end.is_some_and(|last| start - last > MAX_IDLE) {
            watches.release();
        }
        *last_tick_end = Some(end);
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

    /// What system `id` declared it reads and writes (its parameters'
    /// access, or a `StatefulSystem`'s `access()`).
    ///
    /// # Panics
    ///
    /// When `id` is not from this schedule.
    #[track_caller]
    pub fn access(&self, id: SystemId) -> &SystemAccess {
        &self.slot(id).access
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

    /// What the command buffers' applies did in the last tick, all systems
    /// together: commands applied, skipped (target not alive) and no-ops by
    /// kind, and the first few skipped commands
    /// ([`ApplyReport::skips`]), each with its system's registration index
    /// as [`buffer`](command_buffer::SkippedCommand::buffer). Empty before
    /// the first tick; covers the waves the tick reached.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandKind;
    /// use ecs_engine::{Entity, Registry};
    /// use scheduler::{Commands, Query, Schedule, Tick};
    ///
    /// struct Doomed;
    /// // Two despawns of the same entity: the second is skipped.
    /// fn twice(mut commands: Commands, q: Query<(Entity, &Doomed)>) {
    ///     for (e, _) in q.iter() {
    ///         commands.despawn(e);
    ///         commands.despawn(e);
    ///     }
    /// }
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((Doomed,));
    /// let mut builder = Schedule::builder();
    /// builder.add(twice);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// let report = schedule.command_report();
    /// assert_eq!(report.applied(CommandKind::Despawn), 1);
    /// assert_eq!(report.skipped(CommandKind::Despawn), 1);
    /// let skip = report.first_skip().unwrap();
    /// assert_eq!((skip.buffer, skip.index, skip.entity), (0, 1, e));
    /// ```
    pub fn command_report(&self) -> &ApplyReport {
        &self.between.tick_report
    }

    /// Each system's apply report of the last tick, by registration
    /// order: `(id, name, report)`; an empty report for a system that
    /// declared no commands, did not run, or was not reached. Skipped
    /// commands there carry buffer 0.
    pub fn system_command_reports(&self) -> impl Iterator<Item = (SystemId, &str, &ApplyReport)> {
        self.position.iter().map(|&p| {
            let slot = &self.slots[p];
            (slot.id, slot.name.as_str(), &slot.report)
        })
    }

    /// The record of each system's latest run ([`SystemRun`]), for the
    /// systems that have run, by registration order: its frame tick
    /// number, worker thread, start and duration, measured by the
    /// scheduler (so a caller need not wrap systems to time them). A
    /// system skipped by a run condition, disabled, or in a wave the tick
    /// did not reach keeps the record of an earlier tick: compare
    /// [`SystemRun::tick`]. A restore of system states
    /// ([`restore_system_states`](Self::restore_system_states)) forgets
    /// every record: they belong to the timeline left behind. (Not the
    /// change tick a system last ran at: that is its parameters'
    /// [`LastRun`](crate::LastRun).)
    pub fn system_runs(&self) -> impl Iterator<Item = SystemRun> + '_ {
        self.position.iter().filter_map(|&p| self.slots[p].last)
    }

    /// The systems that run between a tick's waves rather than in one:
    /// the enter and exit systems of states, then the one-shot systems
    /// and observers, in registration order, each with its name, its
    /// declared access and the record of its latest run (`None` before
    /// its first run, or since a restore of system states). A one-shot
    /// system run between ticks records the frame tick before it.
    pub fn runs_between_waves(
        &self,
    ) -> impl Iterator<Item = (&str, &SystemAccess, Option<SystemRun>)> {
        self.states
            .slots
            .iter()
            .chain(self.between.oneshots.slots.iter())
            .map(|slot| (slot.name.as_str(), &slot.access, slot.last))
    }

    /// The timings of each wave in the last tick.
    pub fn wave_timings(&self) -> &[WaveTiming] {
        &self.wave_timings
    }
}

/// Runs the slots of `slots` at `order`, one at a time in that order, each
/// followed by its commands (startup, enter and exit systems): on `pool`
/// when there is one, so a system's `par_each` may use it, else on this
/// thread.
fn run_alone(
    pool: Option<&rayon::ThreadPool>,
    between: &mut Between,
    slots: &mut [Slot],
    order: &[usize],
    registry: &mut Registry,
    tick: Tick,
) -> Result<(), RunError> {
    if order.is_empty() {
        return Ok(());
    }
    check_resources(order.iter().map(|&i| &slots[i]), registry, tick)?;
    let ranges: Vec<Range<usize>> = order.iter().map(|&i| i..i + 1).collect();
    let mut timings = vec![WaveTiming::default(); ranges.len()];
    let threads = pool.map_or(1, rayon::ThreadPool::current_num_threads);
    let dispatch = listening_dispatch();
    let run = || {
        run_waves(
            slots,
            &ranges,
            &mut timings,
            between,
            registry,
            Pass {
                tick,
                threads,
                adaptive: false,
                stage: Stage::Startup,
                dispatch: dispatch.as_ref(),
                shuffle: None,
            },
        )
    };
    match pool {
        Some(pool) => pool.install(run),
        None => ecs_engine::run_serial(run),
    }
}
