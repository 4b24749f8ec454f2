//! Building a schedule: systems, names, constraints, the DAG;
//! [`Schedule::builder`] starts one.

mod chain;

pub use chain::SystemChain;

use std::borrow::Cow;

use command_buffer::ReservePolicy;
use ecs_engine::Registry;

use crate::graph::{Dag, Node, SetNode};
use crate::names::{self, NameSource};
use crate::schedule::Schedule;
use crate::slot::{Slot, system_buffer};
use crate::system::condition::{SharedCondition, share};
use crate::{BuildError, IntoCondition, IntoSystem, Label, Policy, System, SystemAccess, SystemId};

/// The most threads a schedule's pool takes: a larger request is a
/// [`BuildError::TooManyThreads`] before any thread starts.
pub const MAX_THREADS: usize = 1024;

/// The most threads a schedule's pool starts per core the process may use
/// ([`std::thread::available_parallelism`]): a larger request is cut to
/// this many (16 on 2 cores). Threads past the cores only take turns on
/// them, and each idle rayon worker that a new task wakes scans every
/// other worker's queue: 1,024 threads on 2 cores ran `small.toml` at 2
/// ticks per second against 21,000 on 2 threads (issue 24).
pub const THREADS_PER_CORE: usize = 8;

struct Entry {
    system: Box<dyn System>,
    name: Option<Cow<'static, str>>,
    before: Vec<String>,
    after: Vec<String>,
    reserve: Option<ReservePolicy>,
    strict: Option<bool>,
    conditions: Vec<SharedCondition>,
    sets: Vec<String>,
}

/// A system set's configuration: constraints and run conditions that
/// apply to every member.
#[derive(Default)]
struct SetEntry {
    name: String,
    before: Vec<String>,
    after: Vec<String>,
    conditions: Vec<SharedCondition>,
}

/// Collects systems and their constraints; [`build`](Self::build) checks
/// them and freezes the schedule.
#[derive(Default)]
pub struct ScheduleBuilder {
    entries: Vec<Entry>,
    startup: Vec<Box<dyn System>>,
    sets: Vec<SetEntry>,
    policy: Policy,
    threads: Option<usize>,
    strict: bool,
    /// The state types and their enter and exit systems (`state/`).
    pub(crate) states: crate::state::builder::StateBuilder,
    /// The one-shot systems registered before the build (`oneshot.rs`).
    pub(crate) oneshots: Vec<Box<dyn System>>,
    /// The observers registered before the build (`observer.rs`).
    pub(crate) observers: Vec<crate::observer::PendingObserver>,
    /// `(earlier, later)` registration indices of `add_chain` links.
    chained: Vec<(usize, usize)>,
}

impl std::fmt::Debug for ScheduleBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScheduleBuilder")
            .field("systems", &self.entries.len())
            .field("policy", &self.policy)
            .field("threads", &self.threads)
            .field("strict", &self.strict)
            .finish()
    }
}

/// The system just added to a [`ScheduleBuilder`], to name it and
/// constrain its order.
#[derive(Debug)]
pub struct SystemConfig<'b> {
    builder: &'b mut ScheduleBuilder,
    index: usize,
}

impl SystemConfig<'_> {
    fn entry(&mut self) -> &mut Entry {
        &mut self.builder.entries[self.index]
    }

    /// Names the system. Chosen names must be unique. Default: its
    /// function or type name, with as much of the module path as tells it
    /// apart from the other systems (`update`, or `physics::update` beside
    /// a `render::update`), and a numbered suffix (`setup::{{closure}}#2`)
    /// for systems of the same path.
    pub fn named(&mut self, name: impl Into<Cow<'static, str>>) -> &mut Self {
        self.entry().name = Some(name.into());
        self
    }

    /// The system runs before the one named `name`, in an earlier wave.
    pub fn before(&mut self, name: impl Label) -> &mut Self {
        self.entry().before.push(name.into_name());
        self
    }

    /// The system runs after the one named `name`, in a later wave.
    pub fn after(&mut self, name: impl Label) -> &mut Self {
        self.entry().after.push(name.into_name());
        self
    }

    /// How many entity handles the system's command buffer keeps reserved
    /// between applies (default [`ReservePolicy::SCHEDULED`]: none until
    /// the system spawns, then twice what it spawned in its last run).
    /// A tuning knob only: spawns past the reserve still get real handles,
    /// from the buffer's [spawn lane](command_buffer::SpawnLanes) for the
    /// wave (fresh slots created after the wave, the gaps between lanes
    /// reused later). A system that spawns many entities every tick can
    /// raise the minimum to keep its ids packed.
    pub fn reserve(&mut self, policy: ReservePolicy) -> &mut Self {
        self.entry().reserve = Some(policy);
        self
    }

    /// Strict commands for this system (overriding the schedule's
    /// [`strict_commands`](ScheduleBuilder::strict_commands)): a command of
    /// its buffer that is skipped at apply (its target not alive) stops the
    /// tick with [`RunError::CommandSkipped`](crate::RunError::CommandSkipped)
    /// naming the system and the command. The commands before it stay
    /// applied, it and the rest of that buffer are dropped, the other
    /// systems of the wave are applied, later waves do not run.
    pub fn strict_commands(&mut self, strict: bool) -> &mut Self {
        self.entry().strict = Some(strict);
        self
    }

    /// The system's id (its registration index).
    pub fn id(&self) -> SystemId {
        SystemId(self.index)
    }

    /// Runs the system only on ticks where `condition` (a function of
    /// system parameters, usually `Res<R>`, returning `bool`) is `true`;
    /// evaluated right before the system would run, each tick. A skipped
    /// system records nothing. The condition's access is added to the
    /// system's, so it is ordered like the system. Several conditions must
    /// all hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Query, Res, Schedule, Tick};
    ///
    /// struct Paused(bool);
    /// struct Position(f32);
    ///
    /// fn running(paused: Res<Paused>) -> bool {
    ///     !paused.0
    /// }
    /// fn movement(mut q: Query<&mut Position>) {
    ///     q.each(|p| p.0 += 1.0);
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Paused(false));
    /// let ship = registry.spawn((Position(0.0),));
    /// let mut builder = Schedule::builder();
    /// builder.add(movement).run_if(running);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// registry.insert_resource(Paused(true));
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.get::<Position>(ship).unwrap().0, 1.0);
    /// ```
    pub fn run_if<M>(&mut self, condition: impl IntoCondition<M>) -> &mut Self {
        let condition = share(condition.into_condition());
        self.entry().conditions.push(condition);
        self
    }

    /// Puts the system in the set named `set` (see
    /// [`ScheduleBuilder::set`]): the set's constraints and run conditions
    /// apply to it, and `before`/`after` of other systems may name the set.
    pub fn in_set(&mut self, set: impl Label) -> &mut Self {
        self.entry().sets.push(set.into_name());
        self
    }
}

/// A system set being configured: see [`ScheduleBuilder::set`].
#[derive(Debug)]
pub struct SetConfig<'b> {
    builder: &'b mut ScheduleBuilder,
    index: usize,
}

impl SetConfig<'_> {
    fn entry(&mut self) -> &mut SetEntry {
        &mut self.builder.sets[self.index]
    }

    /// Every member runs before the system or every member of the set
    /// named `name`.
    pub fn before(&mut self, name: impl Label) -> &mut Self {
        self.entry().before.push(name.into_name());
        self
    }

    /// Every member runs after the system or every member of the set named
    /// `name`.
    pub fn after(&mut self, name: impl Label) -> &mut Self {
        self.entry().after.push(name.into_name());
        self
    }

    /// Every member runs only on ticks where `condition` holds: evaluated
    /// once per tick, before the set's first member would run (at the
    /// start of its wave, by the first enabled member of that wave in
    /// registration order, whose state the condition's parameters keep),
    /// and that verdict holds for every member that tick, even when a
    /// member changes what the condition reads (bevy's rule). See
    /// [`SystemConfig::run_if`].
    pub fn run_if<M>(&mut self, condition: impl IntoCondition<M>) -> &mut Self {
        let condition = share(condition.into_condition());
        self.entry().conditions.push(condition);
        self
    }
}

impl std::fmt::Debug for SetEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetEntry")
            .field("name", &self.name)
            .finish()
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).finish()
    }
}

impl Schedule {
    /// A builder for a new schedule.
    pub fn builder() -> crate::ScheduleBuilder {
        crate::ScheduleBuilder::default()
    }
}

impl ScheduleBuilder {
    /// Adds a system (a function with system parameters, a
    /// [`StatefulSystem`](crate::StatefulSystem) or any [`System`]); the
    /// registration order is the order of calls.
    pub fn add<M>(&mut self, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        self.entries.push(Entry {
            system: Box::new(system.into_system()),
            name: None,
            before: Vec::new(),
            after: Vec::new(),
            reserve: None,
            strict: None,
            conditions: Vec::new(),
            sets: Vec::new(),
        });
        SystemConfig {
            index: self.entries.len() - 1,
            builder: self,
        }
    }

    /// Adds a startup system: the startup systems run once, before the
    /// first tick's systems, one at a time in registration order, each
    /// followed by its commands (so a later one sees what an earlier one
    /// spawned). For setting up the world: spawning the level, inserting
    /// resources the tick's systems need. Named like other systems; a
    /// failure stops that first tick with an error naming it, and the
    /// stage is not run again.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, Query, Schedule, Tick};
    ///
    /// struct Position(f32);
    ///
    /// fn spawn_level(mut commands: Commands) {
    ///     commands.spawn((Position(0.0),));
    /// }
    /// fn movement(mut q: Query<&mut Position>) {
    ///     q.each(|p| p.0 += 1.0);
    /// }
    ///
    /// let mut registry = Registry::new();
    /// let mut builder = Schedule::builder();
    /// builder.add_startup(spawn_level);
    /// builder.add(movement);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// for _ in 0..3 {
    ///     schedule.run(&mut registry, Tick::default()).unwrap();
    /// }
    /// assert_eq!(registry.view::<&Position>().iter().next().unwrap().0, 3.0);
    /// ```
    pub fn add_startup<M>(&mut self, system: impl IntoSystem<M>) -> &mut Self {
        self.startup.push(Box::new(system.into_system()));
        self
    }

    /// The system set named `name`, to order and condition its members as
    /// one: plugins order against each other's sets without knowing system
    /// names. Systems join with [`SystemConfig::in_set`]; `before`/`after`
    /// of a system or a set may name a set (meaning every member). Calling
    /// it again for the same name configures the same set. A name in
    /// `before`/`after` must be a system, a set with a member, or a set
    /// declared here (possibly empty: a plugin that is not added); anything
    /// else is a [`BuildError::UnknownSystem`], so a typo is caught.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Query, Schedule};
    ///
    /// struct Position(f32);
    /// struct Velocity(f32);
    ///
    /// fn draw(_q: Query<&Position>) {}
    /// fn integrate(mut q: Query<(&mut Position, &Velocity)>) {
    ///     q.each(|(p, v)| p.0 += v.0);
    /// }
    /// fn damp(mut q: Query<&mut Velocity>) {
    ///     q.each(|v| v.0 *= 0.9);
    /// }
    ///
    /// let mut builder = Schedule::builder();
    /// builder.set("physics").before("render");
    /// builder.add(draw).in_set("render");
    /// builder.add(integrate).in_set("physics");
    /// builder.add(damp).in_set("physics");
    /// let schedule = builder.build(&mut Registry::new()).unwrap();
    /// let order: Vec<String> = schedule.waves().concat().iter().map(|(_, n)| n.to_string()).collect();
    /// assert_eq!(order, ["integrate", "damp", "draw"]);
    /// ```
    pub fn set(&mut self, name: impl Label) -> SetConfig<'_> {
        let name = name.into_name();
        let index = match self.sets.iter().position(|s| s.name == name) {
            Some(index) => index,
            None => {
                self.sets.push(SetEntry {
                    name,
                    ..SetEntry::default()
                });
                self.sets.len() - 1
            }
        };
        SetConfig {
            builder: self,
            index,
        }
    }

    /// How conflicts that the explicit constraints leave unordered are
    /// ordered (default [`Policy::RegistrationOrder`]).
    pub fn policy(&mut self, policy: Policy) -> &mut Self {
        self.policy = policy;
        self
    }

    /// Strict commands for every system that does not choose for itself
    /// (default `false`: a skipped command is counted and reported, see
    /// [`Schedule::command_report`](crate::Schedule::command_report)); see
    /// [`SystemConfig::strict_commands`].
    pub fn strict_commands(&mut self, strict: bool) -> &mut Self {
        self.strict = strict;
        self
    }

    /// Threads of the schedule's rayon pool (default: one per core, as
    /// [`std::thread::available_parallelism`] reports, at most
    /// [`MAX_THREADS`]). 0 and more than [`MAX_THREADS`] are refused by
    /// [`build`](Self::build), before any thread starts; more than
    /// [`THREADS_PER_CORE`] per core start that many
    /// ([`Schedule::threads`](crate::Schedule::threads) says how many). A schedule of one
    /// thread starts no pool: it runs every tick on the thread that calls
    /// [`Schedule::run`](crate::Schedule::run). A wave, or a parallel walk
    /// ([`ecs_engine::par_for_each`]), uses no more of the pool's threads
    /// at once than the machine has cores: on 2 cores, the systems of a
    /// wave of 4 run two at a time even on a pool of 8.
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = Some(threads);
        self
    }

    /// Checks the systems, builds the DAG and its waves, creates the pool of
    /// every declared component type in `registry`, and starts the thread
    /// pool.
    ///
    /// # Errors
    ///
    /// [`BuildError::DuplicateName`], [`BuildError::ParamClash`],
    /// [`BuildError::UnknownSystem`] or [`BuildError::Cycle`], each naming
    /// the systems involved; [`BuildError::ZeroThreads`] or
    /// [`BuildError::TooManyThreads`] for a thread count outside
    /// `1..=MAX_THREADS`; [`BuildError::ThreadPool`] when the operating
    /// system refuses the threads.
    ///
    /// # Panics
    ///
    /// When the operating system refuses to start the pool's threads.
    pub fn build(self, registry: &mut Registry) -> Result<crate::Schedule, BuildError> {
        match self.threads {
            Some(0) => return Err(BuildError::ZeroThreads),
            Some(threads) if threads > MAX_THREADS => {
                return Err(BuildError::TooManyThreads {
                    threads,
                    max: MAX_THREADS,
                });
            }
            _ => {}
        }
        let sources: Vec<NameSource> = self
            .entries
            .iter()
            .map(|e| match (&e.name, e.system.type_path()) {
                (Some(name), _) => NameSource::Chosen(name.clone().into_owned()),
                (None, Some(path)) => NameSource::Path(path.into_owned()),
                (None, None) => NameSource::Chosen(e.system.default_name().into_owned()),
            })
            .collect();
        let names = names::assign(&sources)?;
        // Each member takes its sets' conditions, after its own.
        let mut entries = self.entries;
        // A chain link is the later system's `after` the earlier one.
        for &(earlier, later) in &self.chained {
            entries[later].after.push(names[earlier].clone());
        }
        let own_conditions: Vec<usize> = entries.iter().map(|e| e.conditions.len()).collect();
        for entry in &mut entries {
            for set in &self.sets {
                if entry.sets.contains(&set.name) {
                    entry.conditions.extend(set.conditions.iter().cloned());
                }
            }
        }
        let accesses: Vec<SystemAccess> = entries
            .iter()
            .map(|e| {
                let mut access = e.system.access();
                for condition in &e.conditions {
                    access.merge(&condition.lock().access());
                }
                access
            })
            .collect();
        for (name, access) in names.iter().zip(&accesses) {
            if let Some(clash) = access.clashes().first() {
                return Err(BuildError::ParamClash {
                    system: name.clone(),
                    name: clash.clone(),
                });
            }
        }
        self.states
            .check_conditions(names.iter().zip(entries.iter().map(|e| &e.conditions)))?;
        let nodes: Vec<Node<'_>> = entries
            .iter()
            .zip(&names)
            .zip(&accesses)
            .map(|((entry, name), access)| Node {
                name,
                access,
                before: &entry.before,
                after: &entry.after,
                sets: &entry.sets,
            })
            .collect();
        let sets: Vec<SetNode<'_>> = self
            .sets
            .iter()
            .map(|set| SetNode {
                name: &set.name,
                before: &set.before,
                after: &set.after,
            })
            .collect();
        let dag = Dag::build(&nodes, &sets, self.policy)?;
        for (index, access) in accesses.iter().enumerate() {
            access.register_pools(registry);
            access.register_readers(registry, index);
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = self
            .threads
            .unwrap_or(cores)
            .min(MAX_THREADS)
            .min(cores.saturating_mul(THREADS_PER_CORE));
        // One thread runs every tick on the caller's thread: no pool.
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("ecs-worker-{i}"))
                    .build()
                    .map_err(|error| BuildError::ThreadPool {
                        threads,
                        message: error.to_string(),
                    })?,
            )
        } else {
            None
        };
        let strict = self.strict;
        let startup_sources: Vec<NameSource> = self
            .startup
            .iter()
            .map(|system| match system.type_path() {
                Some(path) => NameSource::Path(path.into_owned()),
                None => NameSource::Chosen(system.default_name().into_owned()),
            })
            .collect();
        let tick_systems = accesses.len();
        let startup: Vec<Slot> = names::assign(&startup_sources)?
            .into_iter()
            .zip(self.startup)
            .enumerate()
            .map(|(index, (name, system))| {
                let id = SystemId(index);
                let buffer = system_buffer(None);
                Slot::plain(
                    id,
                    tick_systems + index,
                    name,
                    system,
                    buffer,
                    strict,
                    registry,
                )
            })
            .collect();
        let states = self
            .states
            .build(registry, tick_systems + startup.len(), strict)?;
        let slots = entries
            .into_iter()
            .zip(names)
            .zip(accesses)
            .zip(own_conditions)
            .enumerate()
            .map(|(index, (((entry, name), access), own_conditions))| {
                let buffer = system_buffer(entry.reserve);
                let strict = entry.strict.unwrap_or(strict);
                let mut slot = Slot::with_access(
                    SystemId(index),
                    index,
                    name,
                    access,
                    entry.system,
                    buffer,
                    strict,
                    registry,
                );
                slot.conditions = entry.conditions;
                slot.own_conditions = own_conditions;
                slot
            })
            .collect();
        let mut schedule = Schedule::new(slots, dag, pool);
        schedule.between.oneshots.key_base = tick_systems + startup.len() + states.slots.len();
        for system in self.oneshots {
            schedule.register_boxed(registry, system);
        }
        for pending in self.observers {
            pending.attach(&mut schedule, registry);
        }
        schedule.set_startup(startup);
        schedule.states = states;
        Ok(schedule)
    }
}
