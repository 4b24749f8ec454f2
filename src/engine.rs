//! The [`Engine`]: one registry, one schedule on its thread pool, and the
//! clock that numbers the ticks; a [`SystemHandle`] reads a system's state.
//!
//! Each [`tick`](Engine::tick) sets the [`Tick`] resource (number, fixed
//! step, wall-clock delta), then runs every wave of the schedule once:
//! the systems of a wave in parallel, each system's command buffer applied
//! after its wave in registration order. Systems that must be
//! deterministic use the fixed step, never the delta.

mod builder;
mod error;
mod input;
mod plugin;
mod replay;
mod ring;
mod state;

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use command_buffer::ApplyReport;
use ecs_engine::Registry;
use event_queue::EventQueue;
use scheduler::{IntoSystem, OneShotId, RunError, Schedule, SystemId, Tick};

pub use builder::{DEFAULT_STEP, EngineBuilder, SystemEntry};
pub use error::EngineError;
pub use input::{InputError, InputProducer, InputSender, InputStats};
pub use plugin::Plugin;
pub use ring::EngineRing;
pub use state::{EngineParts, EngineState, EngineStateError};

use input::InputPump;

/// A world and the systems that update it, tick after tick.
///
/// Made by [`Engine::builder`]. The engine is `Send`: it can be built on
/// one thread and run on another.
///
/// # Examples
///
/// ```
/// use ecs_runtime::prelude::*;
///
/// struct Health(i32);
///
/// #[derive(Default)]
/// struct CountWounded {
///     wounded: usize,
/// }
///
/// impl StatefulSystem for CountWounded {
///     type Params = Query<'static, &'static Health>;
///     fn run(&mut self, mut health: Query<'_, &Health>) {
///         self.wounded = health.iter().filter(|h| h.0 < 10).count();
///     }
/// }
///
/// fn bleed(mut q: Query<&mut Health>) {
///     q.each(|h| h.0 -= 1);
/// }
///
/// let mut builder = Engine::builder();
/// builder.add_system(bleed);
/// let counter = builder.add_system(CountWounded::default()).handle();
/// let mut engine = builder.build().unwrap();
/// engine.registry_mut().spawn((Health(10),));
/// engine.registry_mut().spawn((Health(20),));
/// engine.tick().unwrap();
/// assert_eq!(engine.state(counter).unwrap().wounded, 1);
/// assert_eq!(engine.registry().resource::<Tick>().unwrap().number, 0);
/// assert_eq!(engine.ticks(), 1);
/// ```
pub struct Engine {
    registry: Registry,
    schedule: Schedule,
    step: f64,
    ticks: u64,
    last_start: Option<Instant>,
    /// Tick-stamped input, delivered before each tick.
    inputs: Vec<Box<dyn InputPump>>,
    /// How long the last tick spent delivering `inputs`.
    input_time: Duration,
    /// Real time given to [`advance`](Engine::advance) and not simulated
    /// yet, in seconds (less than one step between calls).
    unticked: f64,
    /// The most ticks one `advance` runs.
    max_catch_up: u32,
}

/// The most ticks one [`Engine::advance`] runs by default: a frame that
/// took longer than this many steps (a debugger pause, a slow machine)
/// drops the rest instead of spending the next frames catching up (and
/// falling further behind). 8 ticks is 133 ms at 60 Hz.
pub const DEFAULT_MAX_CATCH_UP: u32 = 8;

/// What one [`Engine::advance`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Advance {
    /// Fixed ticks run (0 when less than a step has accumulated).
    pub ticks: u32,
    /// Seconds of real time dropped because the catch-up cap was reached
    /// (0 unless the frame took longer than the cap's steps).
    pub dropped: f64,
    /// The time accumulated past the last tick, as a fraction of a step
    /// in `[0, 1)`: how far to interpolate between the last two ticks'
    /// states when drawing.
    pub overstep: f64,
}

impl Drop for Engine {
    /// Closes the input channels, so producer threads see the engine gone.
    fn drop(&mut self) {
        self.close_inputs();
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("schedule", &self.schedule)
            .field("entities", &self.registry.len())
            .field("step", &self.step)
            .field("ticks", &self.ticks)
            .finish_non_exhaustive()
    }
}

/// The engine moves between threads.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Engine>();
};

impl Engine {
    fn new(
        registry: Registry,
        schedule: Schedule,
        step: f64,
        inputs: Vec<Box<dyn InputPump>>,
    ) -> Engine {
        let mut registry = registry;
        registry.register_resource_clone::<Tick>();
        registry.register_resource_clone::<scheduler::WorldSeed>();
        Engine {
            registry,
            schedule,
            step,
            ticks: 0,
            last_start: None,
            inputs,
            input_time: Duration::ZERO,
            unticked: 0.0,
            max_catch_up: DEFAULT_MAX_CATCH_UP,
        }
    }

    /// Runs one tick: sets the [`Tick`] resource, then every wave of the
    /// schedule. Returns the tick that ran. The tick counter advances even
    /// when the tick fails, since the waves before the failure did run.
    ///
    /// The tick is a [`tracing`] span `tick` (field `number`) on the
    /// calling thread, around the scheduler's `system` and `apply` spans
    /// (see [`Schedule::run`]): a subscriber, the default of this thread
    /// or the global one, sees the whole tick.
    ///
    /// # Errors
    ///
    /// [`EngineError::Run`] when a system returns an error or panics: the
    /// failing system's commands are discarded, the rest of its wave
    /// finishes, later waves do not run. Also when a command panics while
    /// the buffers are applied between waves ([`RunError::CommandPanic`],
    /// naming the system and the command): the rest of that buffer is
    /// dropped, the wave's other buffers are applied, later waves do not
    /// run, and nothing of this tick is applied in a later one. The
    /// registry stays consistent and the engine usable.
    pub fn tick(&mut self) -> Result<Tick, EngineError> {
        let _span = tracing::info_span!("tick", number = self.ticks).entered();
        let now = Instant::now();
        let delta = self
            .last_start
            .map_or(0.0, |last| now.duration_since(last).as_secs_f64());
        self.last_start = Some(now);
        let tick = Tick {
            number: self.ticks,
            step: self.step,
            delta,
        };
        self.ticks += 1;
        match self.registry.resource_mut::<Tick>() {
            Some(resource) => *resource = tick,
            None => {
                self.registry.insert_resource(tick);
            }
        }
        if !self.inputs.is_empty() {
            let started = Instant::now();
            for input in &mut self.inputs {
                input.deliver(&mut self.registry, tick.number);
            }
            self.input_time = started.elapsed();
        }
        self.schedule.run(&mut self.registry, tick)?;
        Ok(tick)
    }

    /// The real-time loop's step: adds `elapsed` (the real time since the
    /// previous call, e.g. the frame time) to the time not yet simulated,
    /// and runs as many fixed [`tick`](Self::tick)s as fit, at most
    /// [`max_catch_up`](Self::set_max_catch_up) (the rest is dropped and
    /// reported, never run later). Each tick simulates one fixed
    /// [`step`](Self::step), so the results depend on the number of ticks
    /// alone, not on how the frames were cut. The leftover fraction
    /// ([`Advance::overstep`]) is for interpolating what is drawn.
    ///
    /// # Errors
    ///
    /// The first [`EngineError::Run`] of a tick; the ticks before it ran,
    /// the failed one counts as run (its step is used up), and the time
    /// left stays for the next call.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ecs_runtime::Engine;
    ///
    /// let mut builder = Engine::builder();
    /// builder.step(0.01);
    /// let mut engine = builder.build().unwrap();
    /// let frame = engine.advance(Duration::from_millis(25)).unwrap();
    /// assert_eq!(frame.ticks, 2);
    /// assert!((frame.overstep - 0.5).abs() < 1e-9);
    /// let frame = engine.advance(Duration::from_millis(5)).unwrap(); // 5 + 5 ms
    /// assert_eq!((frame.ticks, engine.ticks()), (1, 3));
    ///
    /// // A 1 s stall runs the cap (8 ticks) and drops the rest.
    /// let frame = engine.advance(Duration::from_secs(1)).unwrap();
    /// assert_eq!(frame.ticks, 8);
    /// assert!((frame.dropped - 0.92).abs() < 1e-9);
    /// ```
    pub fn advance(&mut self, elapsed: Duration) -> Result<Advance, EngineError> {
        self.unticked += elapsed.as_secs_f64();
        // A hair of rounding must not lose a step: 0.025 s at 0.01 s per
        // step is 2.5 steps, 0.03 s is 3 (not 2.9999...).
        let due = (self.unticked / self.step + 1e-9).floor();
        let run = due.min(f64::from(self.max_catch_up));
        let mut dropped = 0.0;
        if due > run {
            dropped = (due - run) * self.step;
            self.unticked -= dropped;
        }
        let mut ticks = 0;
        while f64::from(ticks) < run {
            self.unticked = (self.unticked - self.step).max(0.0);
            ticks += 1;
            self.tick()?;
        }
        Ok(Advance {
            ticks,
            dropped,
            overstep: (self.unticked / self.step).min(1.0 - f64::EPSILON),
        })
    }

    /// Sets the most ticks one [`advance`](Self::advance) runs (default
    /// [`DEFAULT_MAX_CATCH_UP`]).
    ///
    /// # Panics
    ///
    /// When `max` is 0 (no tick would ever run).
    pub fn set_max_catch_up(&mut self, max: u32) {
        assert!(
            max > 0,
            "Engine::set_max_catch_up(0): no tick would ever run"
        );
        self.max_catch_up = max;
    }

    /// Runs `n` ticks, stopping at the first failure.
    ///
    /// # Errors
    ///
    /// The first [`EngineError::Run`] of [`tick`](Self::tick).
    pub fn run(&mut self, n: u64) -> Result<(), EngineError> {
        for _ in 0..n {
            self.tick()?;
        }
        Ok(())
    }

    /// The world.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The world, to spawn, despawn or edit between ticks.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// The frozen schedule: its [`waves`](Schedule::waves),
    /// [`explain`](Schedule::explain), [`to_dot`](Schedule::to_dot) and the
    /// timings of the last tick ([`system_timings`](Schedule::system_timings),
    /// [`wave_timings`](Schedule::wave_timings)).
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Sends `value` on the [`Events<T>`](scheduler::Events) channel from
    /// outside a tick: the readers of `T` see it in the next tick.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::prelude::*;
    ///
    /// #[derive(Default)]
    /// struct Said(Vec<&'static str>);
    /// fn listen(words: EventReader<&'static str>, mut said: ResMut<Said>) {
    ///     said.0.extend(words.iter().copied());
    /// }
    /// let mut builder = Engine::builder();
    /// builder.insert_resource(Said::default());
    /// builder.add_system(listen);
    /// let mut engine = builder.build().unwrap();
    /// engine.send_event("hello");
    /// engine.tick().unwrap();
    /// engine.tick().unwrap();
    /// assert_eq!(engine.registry().resource::<Said>().unwrap().0, ["hello"]);
    /// ```
    pub fn send_event<T: Send + Sync + 'static>(&mut self, value: T) {
        scheduler::Events::send_to(&mut self.registry, value);
    }

    /// The counts of the tick-stamped input of type `T` (see
    /// [`EngineBuilder::input_producer`]); `None` when there is none.
    pub fn input_stats<T: Send + Sync + 'static>(&self) -> Option<InputStats> {
        self.inputs
            .iter()
            .find(|input| input.input_type() == std::any::TypeId::of::<T>())
            .map(|input| input.stats())
    }

    /// How long the last [`tick`](Self::tick) spent delivering its
    /// tick-stamped input (see [`EngineBuilder::input_producer`]): waiting
    /// for the producers to finish that tick, then moving the values into
    /// the registry. [`Duration::ZERO`] for an engine without such input or
    /// before the first tick.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ecs_runtime::Engine;
    ///
    /// let mut engine = Engine::builder().build().unwrap();
    /// engine.tick().unwrap();
    /// assert_eq!(engine.last_input_time(), Duration::ZERO);
    /// ```
    pub fn last_input_time(&self) -> Duration {
        self.input_time
    }

    /// Closes every input channel: producers' sends fail from now on, and
    /// ticks no longer wait for them (values already received are still
    /// delivered). Dropping the engine does this too.
    pub fn close_inputs(&self) {
        for input in &self.inputs {
            input.close();
        }
    }

    /// What the command buffers' applies did in the last tick, all systems
    /// together: commands applied, skipped and no-ops by kind, and the
    /// first few skipped commands (see
    /// [`Schedule::command_report`]; per system:
    /// [`Schedule::system_command_reports`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::command_buffer::CommandKind;
    /// use ecs_runtime::prelude::*;
    ///
    /// struct Doomed;
    /// fn despawn_twice(mut commands: Commands, q: Query<(Entity, &Doomed)>) {
    ///     for (e, _) in q.iter() {
    ///         commands.despawn(e);
    ///         commands.despawn(e);
    ///     }
    /// }
    /// let mut builder = Engine::builder();
    /// builder.add_system(despawn_twice);
    /// let mut engine = builder.build().unwrap();
    /// engine.registry_mut().spawn((Doomed,));
    /// engine.tick().unwrap();
    /// assert_eq!(engine.command_report().skipped(CommandKind::Despawn), 1);
    /// ```
    pub fn command_report(&self) -> &ApplyReport {
        self.schedule.command_report()
    }

    /// Enables or disables the system named `name`; a disabled system
    /// keeps its place in the schedule and does not run.
    ///
    /// # Errors
    ///
    /// [`EngineError::Run`] with [`RunError::UnknownSystem`] when no system
    /// has that name.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<(), EngineError> {
        self.schedule
            .set_enabled(name, enabled)
            .map_err(|e: RunError| e.into())
    }

    /// The state of the system behind `handle` (see [`SystemHandle`]);
    /// `None` when the handle comes from another engine or the system's
    /// state is not an `S`.
    pub fn state<S: 'static>(&self, handle: SystemHandle<S>) -> Option<&S> {
        self.schedule.state::<S>(handle.id())
    }

    /// Registers a one-shot system and returns its id: it is in no wave
    /// and runs only when asked, by [`run_system`](Self::run_system) or by
    /// a system's [`Commands::run_system`](scheduler::Commands::run_system)
    /// (see [`Schedule::register_system`]; before the build:
    /// [`EngineBuilder::register_system`](crate::EngineBuilder::register_system)).
    pub fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> OneShotId {
        self.schedule.register_system(&mut self.registry, system)
    }

    /// Registers `system` as an observer of `hook` on component `T` and
    /// returns its one-shot id: it runs after the wave whose commands
    /// (`insert`, `entity(e).insert((A, B))`, `remove`, `remove_bundle`,
    /// `spawn`, `despawn`, hierarchy links) fired the hook, with
    /// [`scheduler::Trigger`] as a resource (see [`Schedule::observe`]
    /// and the README's "Observers and hooks").
    pub fn observe<T: ecs_engine::Component, M>(
        &mut self,
        hook: scheduler::Hook,
        system: impl IntoSystem<M>,
    ) -> OneShotId {
        self.schedule
            .observe::<T, M>(&mut self.registry, hook, system)
    }

    /// Runs the one-shot system `id` now, between ticks, then its
    /// commands, then the one-shot systems those asked for. Its `Tick`
    /// parameter reads the last tick that ran (the [`Tick`] resource).
    ///
    /// # Errors
    ///
    /// [`EngineError::Run`] with a
    /// [`RunError::BetweenTicks`](scheduler::RunError::BetweenTicks)
    /// around the failure ([`RunError::root`](scheduler::RunError::root)
    /// gives it):
    /// [`RunError::UnknownOneShot`](scheduler::RunError::UnknownOneShot)
    /// for an id this engine did not register, or the system's failure
    /// (see [`Schedule::run_system`]).
    pub fn run_system(&mut self, id: OneShotId) -> Result<(), EngineError> {
        let tick = self
            .registry
            .resource::<Tick>()
            .copied()
            .unwrap_or_default();
        Ok(self.schedule.run_system(&mut self.registry, id, tick)?)
    }

    /// Number of ticks run so far (also the number of the next tick).
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Sets the number of ticks run so far, so the next [`tick`](Self::tick)
    /// is number `ticks`: for resuming a world loaded from a snapshot
    /// taken after that many ticks. The event channels are aged to tick
    /// `ticks - 1` ([`Schedule::begin_events`]), as after that tick, so
    /// the input delivered before the next tick is kept; the registry's
    /// entities and components and the systems' own state are not
    /// touched.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut engine = ecs_runtime::Engine::builder().build().unwrap();
    /// engine.set_ticks(120);
    /// assert_eq!(engine.tick().unwrap().number, 120);
    /// assert_eq!(engine.ticks(), 121);
    /// ```
    pub fn set_ticks(&mut self, ticks: u64) {
        self.ticks = ticks;
        if let Some(last) = ticks.checked_sub(1) {
            self.schedule.begin_events(&mut self.registry, last);
        }
    }

    /// Gives the systems' command buffers their saved reserves (from
    /// [`Schedule::command_reserves`] of the engine a snapshot was taken
    /// from), after the registry's entities were replaced by the
    /// snapshot's: so the resumed world's spawns get the handles they got
    /// in the saved run. See [`Schedule::restore_command_reserves`].
    ///
    /// # Errors
    ///
    /// [`RestoreReservesError`](scheduler::RestoreReservesError) for an
    /// unknown system or a handle the registry does not hold as reserved;
    /// nothing changes then.
    pub fn restore_command_reserves(
        &mut self,
        reserves: Vec<(String, command_buffer::ReserveState)>,
    ) -> Result<(), scheduler::RestoreReservesError> {
        self.schedule
            .restore_command_reserves(&mut self.registry, reserves)
    }

    /// The fixed step, in seconds.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Threads in the engine's pool.
    pub fn threads(&self) -> usize {
        self.schedule.threads()
    }

    /// Turns on (the default) or off the schedule's cost-based choice of
    /// running ticks and waves too cheap for the pool on one thread: see
    /// [`Schedule::set_adaptive`] and [`Schedule::run`].
    pub fn set_adaptive(&mut self, adaptive: bool) {
        self.schedule.set_adaptive(adaptive);
    }

    /// Turns the shuffle check mode on (`Some(seed)`) or off; see
    /// [`Schedule::set_shuffle`].
    pub fn set_shuffle(&mut self, seed: Option<u64>) {
        self.schedule.set_shuffle(seed);
    }

    /// Another handle to the input queue of `T` registered with
    /// [`EngineBuilder::input_queue`], or `None` when there is none.
    pub fn input_queue<T: Send + 'static>(&self) -> Option<EventQueue<T>> {
        self.registry.resource::<EventQueue<T>>().cloned()
    }
}

/// Names a system of an [`Engine`] and the type of its state, to read it
/// between ticks with [`Engine::state`].
///
/// The state is the [`StatefulSystem`](scheduler::StatefulSystem) struct
/// for a stateful system, and the function or closure itself for a
/// function system.
pub struct SystemHandle<S> {
    id: SystemId,
    _state: PhantomData<fn() -> S>,
}

impl<S> SystemHandle<S> {
    /// The scheduler's id of the system (its registration index).
    pub fn id(&self) -> SystemId {
        self.id
    }
}

impl<S> Clone for SystemHandle<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for SystemHandle<S> {}

impl<S> std::fmt::Debug for SystemHandle<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemHandle")
            .field("id", &self.id)
            .field("state", &std::any::type_name::<S>())
            .finish()
    }
}
