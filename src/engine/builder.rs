//! [`EngineBuilder`]: threads, fixed step, policy, resources, input queues
//! and systems, checked and frozen by [`EngineBuilder::build`].

use std::borrow::Cow;
use std::marker::PhantomData;

use command_buffer::ReservePolicy;
use ecs_engine::Registry;
use event_queue::EventQueue;
use scheduler::{IntoSystem, Policy, Schedule, ScheduleBuilder, SystemConfig, SystemId, Tick};

use crate::{Engine, EngineError};

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
        }
    }
}

impl EngineBuilder {
    /// Threads of the engine's pool (default: one per core, as
    /// [`std::thread::available_parallelism`] reports). 0 is refused by
    /// [`build`](Self::build) with [`EngineError::ZeroThreads`].
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

    /// How conflicting accesses are ordered (default
    /// [`Policy::WriterFirst`]).
    pub fn policy(&mut self, policy: Policy) -> &mut Self {
        self.schedule.policy(policy);
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
            ..
        } = self;
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
        Ok(Engine::new(registry, schedule, step))
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
    /// Names the system (default: its function or type name, without the
    /// module path). Names must be unique.
    pub fn named(&mut self, name: impl Into<Cow<'static, str>>) -> &mut Self {
        self.config.named(name);
        self
    }

    /// The system runs before the one named `name`.
    pub fn before(&mut self, name: impl Into<String>) -> &mut Self {
        self.config.before(name);
        self
    }

    /// The system runs after the one named `name`.
    pub fn after(&mut self, name: impl Into<String>) -> &mut Self {
        self.config.after(name);
        self
    }

    /// How many entity handles the system's command buffer keeps reserved
    /// between ticks (default [`ReservePolicy::default`]; see
    /// [`SystemConfig::reserve`]). A system that spawns many entities in
    /// one tick and hands their handles on raises the minimum.
    pub fn reserve(&mut self, policy: ReservePolicy) -> &mut Self {
        self.config.reserve(policy);
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
