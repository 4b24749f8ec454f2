//! [`EngineBuilder`]: threads, fixed step, policy, resources, input queues
//! and systems, checked and frozen by [`EngineBuilder::build`].

use std::borrow::Cow;
use std::marker::PhantomData;

use command_buffer::ReservePolicy;
use ecs_engine::Registry;
use event_queue::EventQueue;
use scheduler::{
    IntoCondition, IntoSystem, Label, OneShotId, Policy, Schedule, ScheduleBuilder, SetConfig,
    States, SystemConfig, Tick,
};

use super::input::{InputChannel, InputProducer, InputPump, InputSender};
use crate::{Engine, EngineError, SystemHandle};

/// The default fixed step: 1/60 s.
pub const DEFAULT_STEP: f64 = 1.0 / 60.0;

/// Collects what an [`Engine`] is made of; [`build`](Self::build) checks it
/// and freezes the schedule. Made by [`Engine::builder`].
///
/// # Examples
///
/// ```
/// use ecs_runtime::prelude::*;
///
/// struct Position(f32);
/// struct Velocity(f32);
///
/// fn movement(tick: Tick, mut q: Query<(&mut Position, &Velocity)>) {
///     let dt = tick.step as f32;
///     q.each(|(p, v)| p.0 += v.0 * dt);
/// }
///
/// let mut builder = Engine::builder();
/// builder.threads(2).step(0.5);
/// builder.add_system(movement);
/// let mut engine = builder.build().unwrap();
/// let ship = engine.registry_mut().spawn((Position(0.0), Velocity(4.0)));
/// engine.run(3).unwrap();
/// assert_eq!(engine.registry().get::<Position>(ship).unwrap().0, 6.0);
/// ```
pub struct EngineBuilder {
    registry: Registry,
    schedule: ScheduleBuilder,
    threads: Option<usize>,
    step: f64,
    inputs: Vec<Box<dyn InputPump>>,
    /// The names of the unique plugins added (`plugin.rs`).
    pub(super) plugins: Vec<String>,
    /// The first unique plugin added twice: the build fails with it.
    pub(super) duplicate_plugin: Option<String>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("schedule", &self.schedule)
            .field("threads", &self.threads)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            registry: Registry::new(),
            schedule: Schedule::builder(),
            threads: None,
            step: DEFAULT_STEP,
            inputs: Vec::new(),
            plugins: Vec::new(),
            duplicate_plugin: None,
        }
    }
}

impl Engine {
    /// A builder with the defaults: one thread per core, a step of 1/60 s,
    /// [`Policy::RegistrationOrder`](scheduler::Policy::RegistrationOrder), no system.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }
}

impl EngineBuilder {
    /// Threads of the engine's pool (default: one per core, as
    /// [`std::thread::available_parallelism`] reports). 0 is refused by
    /// [`build`](Self::build) with [`EngineError::ZeroThreads`], more than
    /// [`MAX_THREADS`](scheduler::MAX_THREADS) with
    /// [`BuildError::TooManyThreads`](scheduler::BuildError::TooManyThreads),
    /// both before any thread starts.
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = Some(threads);
        self
    }

    /// The fixed simulation step, in seconds (default [`DEFAULT_STEP`],
    /// 1/60 s). Anything but a finite value above 0 is refused by
    /// [`build`](Self::build) with [`EngineError::InvalidStep`].
    pub fn step(&mut self, seconds: f64) -> &mut Self {
        self.step = seconds;
        self
    }

    /// How conflicting accesses that the explicit `before`/`after`
    /// constraints leave unordered are ordered (default
    /// [`Policy::RegistrationOrder`]).
    pub fn policy(&mut self, policy: Policy) -> &mut Self {
        self.schedule.policy(policy);
        self
    }

    /// Strict commands for every system (default `false`): a command
    /// skipped at apply (its target not alive) stops the tick with
    /// [`RunError::CommandSkipped`](scheduler::RunError::CommandSkipped)
    /// naming the system and the command, instead of only being counted in
    /// [`Engine::command_report`](crate::Engine::command_report). A system
    /// can choose otherwise with [`SystemEntry::strict_commands`].
    pub fn strict_commands(&mut self, strict: bool) -> &mut Self {
        self.schedule.strict_commands(strict);
        self
    }

    /// The registry the engine will own, to read it before the schedule is
    /// built.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The registry the engine will own, to spawn the first entities or
    /// insert resources before the schedule is built.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// Inserts resource `value`, replacing any value of the same type.
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> &mut Self {
        self.registry.insert_resource(value);
        self
    }

    /// An unbounded input queue of `T`, kept as a resource of type
    /// [`EventQueue<T>`] (systems read it with `Res<EventQueue<T>>` and
    /// drain it); the returned handle is for the producer thread. Calling
    /// it again for the same `T` returns another handle to the same queue.
    ///
    /// Not deterministic: which tick drains an event depends on when the
    /// producer ran, and systems that push to the queue and drain it are
    /// two readers of one resource, free to share a wave. For input that
    /// must replay identically use [`input_producer`](Self::input_producer);
    /// for messages between systems, events
    /// ([`EventWriter`](scheduler::EventWriter),
    /// [`EventReader`](scheduler::EventReader)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::prelude::*;
    ///
    /// #[derive(Default)]
    /// struct Keys(Vec<char>);
    ///
    /// fn read_keys(queue: Res<EventQueue<char>>, mut keys: ResMut<Keys>) {
    ///     keys.0.extend(queue.drain());
    /// }
    ///
    /// let mut builder = Engine::builder();
    /// let keyboard = builder.input_queue::<char>();
    /// builder.insert_resource(Keys::default());
    /// builder.add_system(read_keys);
    /// let mut engine = builder.build().unwrap();
    /// std::thread::spawn(move || keyboard.push('w').unwrap()).join().unwrap();
    /// engine.tick().unwrap();
    /// assert_eq!(engine.registry().resource::<Keys>().unwrap().0, ['w']);
    /// ```
    pub fn input_queue<T: Send + 'static>(&mut self) -> EventQueue<T> {
        if let Some(queue) = self.registry.resource::<EventQueue<T>>() {
            return queue.clone();
        }
        let queue = EventQueue::new();
        self.registry.insert_resource(queue.clone());
        queue
    }

    /// As [`input_queue`](Self::input_queue), but the queue holds at most
    /// `capacity` events, so a producer that runs ahead waits for the
    /// systems to catch up. An existing queue of `T` is replaced.
    ///
    /// # Panics
    ///
    /// When `capacity` is 0.
    #[track_caller]
    pub fn bounded_input_queue<T: Send + 'static>(&mut self, capacity: usize) -> EventQueue<T> {
        let queue = EventQueue::bounded(capacity);
        self.registry.insert_resource(queue.clone());
        queue
    }

    /// The engine's input channel of `T`, created on first use, with its
    /// [`Events<T>`](scheduler::Events) channel.
    fn input_channel<T: Send + Sync + 'static>(&mut self) -> &mut InputChannel<T> {
        let position = self
            .inputs
            .iter()
            .position(|pump| pump.input_type() == std::any::TypeId::of::<T>());
        let position = position.unwrap_or_else(|| {
            self.inputs.push(Box::new(InputChannel::<T>::new()));
            self.inputs.len() - 1
        });
        scheduler::Events::<T>::channel(&mut self.registry);
        self.inputs[position]
            .as_any_mut()
            .downcast_mut()
            .expect("the channel of T")
    }

    /// A producer of tick-stamped input of type `T` for another thread:
    /// each value names the tick it applies at, and reaches systems as an
    /// event ([`EventReader<T>`](scheduler::EventReader)) at exactly that
    /// tick, in (tick, producer, sequence) order, whatever the threads'
    /// timing. Before each tick the engine waits until every producer of
    /// `T` has sent everything for it (see [`InputProducer`]). Producers
    /// are numbered in creation order. Each producer has its own queue,
    /// unbounded for this one (see
    /// [`bounded_input_producer`](Self::bounded_input_producer)).
    pub fn input_producer<T: Send + Sync + 'static>(&mut self) -> InputProducer<T> {
        self.input_channel::<T>().producer(None)
    }

    /// As [`input_producer`](Self::input_producer), but this producer's
    /// queue holds at most `capacity` messages, so a producer that runs
    /// ahead waits for the engine.
    ///
    /// # Panics
    ///
    /// When `capacity` is 0.
    #[track_caller]
    pub fn bounded_input_producer<T: Send + Sync + 'static>(
        &mut self,
        capacity: usize,
    ) -> InputProducer<T> {
        self.input_channel::<T>().producer(Some(capacity))
    }

    /// A sender of "as soon as possible" input of type `T`: the engine
    /// stamps each value, on arrival, with the tick about to run, and never
    /// waits for it. **Not deterministic**: which tick a value lands in
    /// depends on thread timing (see [`InputSender`]).
    pub fn input_sender<T: Send + Sync + 'static>(&mut self) -> InputSender<T> {
        self.input_channel::<T>().sender()
    }

    /// Keeps copies of the `T` input delivered in the last `window` ticks,
    /// so that ticks run again after
    /// [`Engine::restore_state`](crate::Engine::restore_state) (a rollback:
    /// restore a state saved `n` ticks ago, run those ticks again) get the
    /// same values, in the same order, without asking the producers again;
    /// the producers' values for the ticks after the newest one delivered
    /// wait in their queues meanwhile. Without it a tick run again gets no
    /// `T` input, and [`InputStats`](crate::InputStats) counts what it
    /// missed (`not_replayed`, `unknown_reruns`). The window is in ticks
    /// behind the newest tick delivered: at least the rollback's depth.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::prelude::*;
    ///
    /// #[derive(Clone, Default)]
    /// struct Log(Vec<(u64, char)>);
    ///
    /// let mut builder = Engine::builder();
    /// let mut keys = builder.input_producer::<char>();
    /// builder.replay_inputs::<char>(8);
    /// builder.insert_resource(Log::default());
    /// builder.add_system(|tick: Tick, keys: EventReader<char>, mut log: ResMut<Log>| {
    ///     log.0.extend(keys.iter().map(|&k| (tick.number, k)));
    /// });
    /// let mut engine = builder.build().unwrap();
    /// engine
    ///     .register_resource_clone::<Log>()
    ///     .register_resource_clone::<Events<char>>();
    /// keys.send_at(1, 'a').unwrap();
    /// keys.send_at(2, 'b').unwrap();
    /// drop(keys); // closed: the engine waits for nothing more
    ///
    /// engine.tick().unwrap(); // tick 0
    /// let saved = engine.save_state().unwrap();
    /// engine.run(3).unwrap(); // ticks 1, 2, 3
    /// engine.restore_state(&saved).unwrap();
    /// engine.run(3).unwrap(); // ticks 1, 2, 3 again, with the same keys
    /// let log = &engine.registry().resource::<Log>().unwrap().0;
    /// assert_eq!(log, &[(1, 'a'), (2, 'b')]);
    /// assert_eq!(engine.input_stats::<char>().unwrap().replayed, 2);
    /// ```
    pub fn replay_inputs<T: Clone + Send + Sync + 'static>(&mut self, window: u64) -> &mut Self {
        self.input_channel::<T>().replay(window);
        self
    }

    /// Adds a system (a function of system parameters, a
    /// [`StatefulSystem`](scheduler::StatefulSystem) or any
    /// [`System`](scheduler::System)); systems are registered in call
    /// order. The returned entry names and orders the system, and gives
    /// the [`SystemHandle`] that reads its state after a tick.
    pub fn add_system<M, S>(&mut self, system: S) -> SystemEntry<'_, S>
    where
        S: IntoSystem<M> + 'static,
    {
        SystemEntry {
            config: self.schedule.add(system),
            _state: PhantomData,
        }
    }

    /// The system set named `name`: `before`/`after`/`run_if` for all its
    /// members at once (see [`ScheduleBuilder::set`]).
    pub fn set(&mut self, name: impl Label) -> SetConfig<'_> {
        self.schedule.set(name)
    }

    /// Adds a startup system: it runs once, before the first tick's
    /// systems (see
    /// [`ScheduleBuilder::add_startup`](scheduler::ScheduleBuilder::add_startup)).
    pub fn add_startup_system<M>(&mut self, system: impl IntoSystem<M>) -> &mut Self {
        self.schedule.add_startup(system);
        self
    }

    /// Adds state type `S` starting at `initial`: the resources
    /// [`State<S>`](scheduler::State) and
    /// [`NextState<S>`](scheduler::NextState), with transitions applied at
    /// the start of each tick, before its first wave (see
    /// [`ScheduleBuilder::add_state`]).
    pub fn add_state<S: States>(&mut self, initial: S) -> &mut Self {
        self.schedule.add_state(initial);
        self
    }

    /// Adds a system that runs each time state `S` becomes `value` (bevy's
    /// `OnEnter`; see [`ScheduleBuilder::add_on_enter`]).
    pub fn add_on_enter<M, S: States>(
        &mut self,
        value: S,
        system: impl IntoSystem<M>,
    ) -> &mut Self {
        self.schedule.add_on_enter(value, system);
        self
    }

    /// Adds a system that runs each time state `S` leaves `value` (bevy's
    /// `OnExit`; see [`ScheduleBuilder::add_on_exit`]).
    pub fn add_on_exit<M, S: States>(&mut self, value: S, system: impl IntoSystem<M>) -> &mut Self {
        self.schedule.add_on_exit(value, system);
        self
    }

    /// Registers a one-shot system before the build and returns its id
    /// (see [`Engine::register_system`]).
    pub fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> OneShotId {
        self.schedule.register_system(system)
    }

    /// Registers `system` as an observer of `hook` on component `T`
    /// before the build, so that a plugin can add its observers, and
    /// returns its one-shot id (see [`Engine::observe`] and
    /// [`ScheduleBuilder::observe`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::prelude::*;
    /// use ecs_runtime::scheduler::{Hook, Trigger};
    ///
    /// struct Tower;
    /// struct Turret;
    ///
    /// fn towers(builder: &mut EngineBuilder) {
    ///     builder.add_startup_system(|mut commands: Commands| {
    ///         commands.spawn((Tower,));
    ///     });
    ///     builder.observe::<Tower, _>(Hook::Add, |trigger: Res<Trigger>, mut commands: Commands| {
    ///         commands.entity(trigger.entity).with_children(|c| {
    ///             c.spawn((Turret,));
    ///         });
    ///     });
    /// }
    ///
    /// let mut builder = Engine::builder();
    /// builder.add_plugin(towers);
    /// let mut engine = builder.build().unwrap();
    /// engine.tick().unwrap();
    /// assert_eq!(engine.registry().view::<&Turret>().count(), 1);
    /// ```
    pub fn observe<T: ecs_engine::Component, M>(
        &mut self,
        hook: scheduler::Hook,
        system: impl IntoSystem<M>,
    ) -> OneShotId {
        self.schedule.observe::<T, M>(hook, system)
    }

    /// Checks the settings, builds the schedule (its DAG, waves and thread
    /// pool) and inserts the [`Tick`] resource.
    ///
    /// # Errors
    ///
    /// [`EngineError::ZeroThreads`], [`EngineError::InvalidStep`], or
    /// [`EngineError::Build`] with the scheduler's error (duplicate names,
    /// an unknown `before`/`after` target, a cycle).
    ///
    /// # Panics
    ///
    /// When the operating system refuses to start the pool's threads.
    pub fn build(self) -> Result<Engine, EngineError> {
        self.build_or_keep_registry().map_err(|(error, _)| error)
    }

    /// As [`build`](Self::build), but a failed build hands the registry
    /// back (its entities, components and resources, as they were), so a
    /// caller that keeps its world across a failed build loses only the
    /// systems. The C API uses it: its world outlives a schedule that
    /// could not be built.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build), each with the registry (boxed: it is
    /// large).
    ///
    /// # Panics
    ///
    /// As [`build`](Self::build).
    pub fn build_or_keep_registry(self) -> Result<Engine, (EngineError, Box<Registry>)> {
        let EngineBuilder {
            mut registry,
            mut schedule,
            threads,
            step,
            inputs,
            duplicate_plugin,
            ..
        } = self;
        if let Some(name) = duplicate_plugin {
            return Err((EngineError::DuplicatePlugin { name }, Box::new(registry)));
        }
        if threads == Some(0) {
            return Err((EngineError::ZeroThreads, Box::new(registry)));
        }
        if !(step.is_finite() && step > 0.0) {
            return Err((EngineError::InvalidStep { step }, Box::new(registry)));
        }
        if let Some(threads) = threads {
            schedule.threads(threads);
        }
        let schedule = match schedule.build(&mut registry) {
            Ok(schedule) => schedule,
            Err(error) => return Err((error.into(), Box::new(registry))),
        };
        registry.insert_resource(Tick {
            number: 0,
            step,
            delta: 0.0,
        });
        Ok(Engine::new(registry, schedule, step, inputs))
    }
}

/// The system just added by [`EngineBuilder::add_system`]: name it, order
/// it, and take its [`SystemHandle`].
#[derive(Debug)]
pub struct SystemEntry<'b, S> {
    config: SystemConfig<'b>,
    _state: PhantomData<fn() -> S>,
}

impl<S> SystemEntry<'_, S> {
    /// Names the system. Chosen names must be unique. Default: its
    /// function or type name, with as much of the module path as tells it
    /// apart (see [`SystemConfig::named`]).
    pub fn named(&mut self, name: impl Into<Cow<'static, str>>) -> &mut Self {
        self.config.named(name);
        self
    }

    /// Runs the system only on ticks where `condition` holds (see
    /// [`SystemConfig::run_if`]).
    pub fn run_if<M>(&mut self, condition: impl IntoCondition<M>) -> &mut Self {
        self.config.run_if(condition);
        self
    }

    /// Puts the system in the set named `set` (see
    /// [`EngineBuilder::set`]).
    pub fn in_set(&mut self, set: impl Label) -> &mut Self {
        self.config.in_set(set);
        self
    }

    /// The system runs before the one named `name`.
    pub fn before(&mut self, name: impl Label) -> &mut Self {
        self.config.before(name);
        self
    }

    /// The system runs after the one named `name`.
    pub fn after(&mut self, name: impl Label) -> &mut Self {
        self.config.after(name);
        self
    }

    /// How many entity handles the system's command buffer keeps reserved
    /// between ticks (see [`SystemConfig::reserve`]). A tuning knob: every
    /// handle `Commands::spawn` returns is real whatever the reserve.
    pub fn reserve(&mut self, policy: ReservePolicy) -> &mut Self {
        self.config.reserve(policy);
        self
    }

    /// Strict commands for this system, whatever the engine's setting
    /// (see [`EngineBuilder::strict_commands`]).
    pub fn strict_commands(&mut self, strict: bool) -> &mut Self {
        self.config.strict_commands(strict);
        self
    }

    /// The handle that reads the system's state after a tick
    /// ([`Engine::state`]).
    pub fn handle(&self) -> SystemHandle<S> {
        SystemHandle {
            id: self.config.id(),
            _state: PhantomData,
        }
    }
}
