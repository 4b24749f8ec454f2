//! Building a schedule: systems, names, constraints, the DAG.

use std::borrow::Cow;
use std::time::Duration;

use command_buffer::{CommandBuffer, ReservePolicy};
use ecs_engine::Registry;

use crate::graph::{Dag, Node};
use crate::{BuildError, IntoSystem, Policy, System, SystemAccess};

/// A system's number: its position in registration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemId(pub(crate) usize);

impl SystemId {
    /// The registration index (0 for the first system added).
    pub fn index(self) -> usize {
        self.0
    }
}

struct Entry {
    system: Box<dyn System>,
    name: Option<Cow<'static, str>>,
    before: Vec<String>,
    after: Vec<String>,
    reserve: Option<ReservePolicy>,
}

/// Collects systems and their constraints; [`build`](Self::build) checks
/// them and freezes the schedule.
#[derive(Default)]
pub struct ScheduleBuilder {
    entries: Vec<Entry>,
    policy: Policy,
    threads: Option<usize>,
}

impl std::fmt::Debug for ScheduleBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScheduleBuilder")
            .field("systems", &self.entries.len())
            .field("policy", &self.policy)
            .field("threads", &self.threads)
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

    /// Names the system (default: its function or type name, without the
    /// module path).
    pub fn named(&mut self, name: impl Into<Cow<'static, str>>) -> &mut Self {
        self.entry().name = Some(name.into());
        self
    }

    /// The system runs before the one named `name`, in an earlier wave.
    pub fn before(&mut self, name: impl Into<String>) -> &mut Self {
        self.entry().before.push(name.into());
        self
    }

    /// The system runs after the one named `name`, in a later wave.
    pub fn after(&mut self, name: impl Into<String>) -> &mut Self {
        self.entry().after.push(name.into());
        self
    }

    /// How many entity handles the system's command buffer keeps reserved
    /// between applies (default [`ReservePolicy::default`]: at least 64).
    /// Spawns beyond the reserve get placeholder handles that only the
    /// same buffer's later commands resolve; a system that spawns many
    /// entities in one run and hands their handles on raises the minimum.
    pub fn reserve(&mut self, policy: ReservePolicy) -> &mut Self {
        self.entry().reserve = Some(policy);
        self
    }

    /// The system's id (its registration index).
    pub fn id(&self) -> SystemId {
        SystemId(self.index)
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).finish()
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
        });
        SystemConfig {
            index: self.entries.len() - 1,
            builder: self,
        }
    }

    /// How conflicts are ordered (default [`Policy::WriterFirst`]).
    pub fn policy(&mut self, policy: Policy) -> &mut Self {
        self.policy = policy;
        self
    }

    /// Threads of the schedule's rayon pool (default: one per core; at
    /// least 1).
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = Some(threads.max(1));
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
    /// the systems involved.
    ///
    /// # Panics
    ///
    /// When the operating system refuses to start the pool's threads.
    pub fn build(self, registry: &mut Registry) -> Result<crate::Schedule, BuildError> {
        let names: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                e.name
                    .clone()
                    .unwrap_or_else(|| e.system.default_name())
                    .into_owned()
            })
            .collect();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(BuildError::DuplicateName { name: name.clone() });
            }
        }
        let accesses: Vec<SystemAccess> = self.entries.iter().map(|e| e.system.access()).collect();
        for (name, access) in names.iter().zip(&accesses) {
            if let Some(clash) = access.clashes().first() {
                return Err(BuildError::ParamClash {
                    system: name.clone(),
                    name: clash.clone(),
                });
            }
        }
        let nodes: Vec<Node<'_>> = self
            .entries
            .iter()
            .zip(&names)
            .zip(&accesses)
            .map(|((entry, name), access)| Node {
                name,
                access,
                before: &entry.before,
                after: &entry.after,
            })
            .collect();
        let dag = Dag::build(&nodes, self.policy)?;
        for access in &accesses {
            access.register_pools(registry);
        }
        let threads = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("ecs-worker-{i}"))
            .build()
            .map_err(|error| BuildError::ThreadPool {
                threads,
                message: error.to_string(),
            })?;
        let slots = self
            .entries
            .into_iter()
            .zip(names)
            .zip(accesses)
            .enumerate()
            .map(|(index, ((entry, name), access))| {
                let mut buffer = match entry.reserve {
                    Some(policy) => CommandBuffer::with_policy(policy),
                    None => CommandBuffer::new(),
                };
                if access.commands() {
                    buffer.prepare(registry);
                }
                Slot {
                    id: SystemId(index),
                    name,
                    access,
                    system: entry.system,
                    buffer,
                    enabled: true,
                    last_run: Duration::ZERO,
                    failure: None,
                }
            })
            .collect();
        Ok(crate::Schedule::new(slots, dag, pool))
    }
}

/// Why a system's last run failed.
#[derive(Debug)]
pub(crate) enum Failure {
    Error(crate::SystemError),
    Panic(String),
    /// A command of the system's buffer panicked while applied.
    CommandPanic(command_buffer::CommandPanic),
}

/// A system with everything the executor keeps for it.
pub(crate) struct Slot {
    pub(crate) id: SystemId,
    pub(crate) name: String,
    pub(crate) access: SystemAccess,
    pub(crate) system: Box<dyn System>,
    pub(crate) buffer: CommandBuffer,
    pub(crate) enabled: bool,
    pub(crate) last_run: Duration,
    pub(crate) failure: Option<Failure>,
}
