//! Errors of building a schedule and of running a tick.

use std::borrow::Cow;

use command_buffer::SkippedCommand;

use crate::{Hook, OneShotId};
use ecs_engine::{Access, EcsError, Entity};

/// Why a schedule could not be built. Each names the systems involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two systems share a name.
    #[error("two systems are named `{name}`; system names must be unique")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A `before`/`after` constraint names a system that is not in the
    /// schedule.
    #[error(
        "{kind} `{system}` must run {relation} `{target}`, but no system or set is named `{target}`"
    )]
    UnknownSystem {
        /// The system or set with the constraint.
        system: String,
        /// `"system"` or `"set"`: what `system` names.
        kind: &'static str,
        /// `"before"` or `"after"`.
        relation: &'static str,
        /// The unknown name.
        target: String,
    },
    /// A system's parameters borrow one type twice, at least once for
    /// writing (e.g. `Query<(&mut A, &A)>`, or `Res<R>` beside `ResMut<R>`):
    /// it could never run.
    #[error(
        "system `{system}` borrows `{name}` twice, at least once for writing: merge the parameters or put them in a `ParamSet`"
    )]
    ParamClash {
        /// The system.
        system: String,
        /// The type borrowed twice.
        name: Cow<'static, str>,
    },
    /// `threads(0)` was asked for: a schedule needs at least one thread.
    #[error("a schedule needs at least one thread; threads(0) was asked for")]
    ZeroThreads,
    /// More threads were asked for than [`MAX_THREADS`](crate::MAX_THREADS).
    #[error("{threads} threads asked for; a schedule's pool takes at most {max}")]
    TooManyThreads {
        /// The threads asked for.
        threads: usize,
        /// The limit, [`MAX_THREADS`](crate::MAX_THREADS).
        max: usize,
    },
    /// The schedule's thread pool could not start (too many threads for
    /// the machine's limits, for example).
    #[error("cannot start the schedule's pool of {threads} threads: {message}")]
    ThreadPool {
        /// The threads asked for.
        threads: usize,
        /// The operating system's reason.
        message: String,
    },
    /// The explicit `before`/`after` constraints form a cycle. Conflicting
    /// accesses alone never do: their automatic edges are only added where
    /// they close no cycle.
    #[error(
        "the `before`/`after` constraints form a cycle: {}; remove or reverse one of these constraints to break it",
        describe_cycle(.cycle)
    )]
    Cycle {
        /// The edges of one cycle, in order: each edge's `to` is the next
        /// edge's `from`, and the last edge's `to` is the first's `from`.
        cycle: Vec<CycleEdge>,
    },
    /// A run condition ([`in_state`](crate::in_state)) or an enter or
    /// exit system names a state type that was never added with
    /// [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state).
    #[error(
        "system `{system}` uses state `{state}`, which was never added; call add_state::<{state}>(initial) on the builder"
    )]
    UnknownState {
        /// The system.
        system: String,
        /// The state type's name.
        state: String,
    },
    /// A state type was added twice with
    /// [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state).
    #[error("state `{state}` was added twice; add each state type once")]
    DuplicateState {
        /// The state type's name.
        state: String,
    },
}

/// One edge of a cycle in a [`BuildError::Cycle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleEdge {
    /// The system that must run first.
    pub from: String,
    /// The system that must run after it.
    pub to: String,
    /// Why, as text (the type and rule, or the explicit constraint).
    pub reasons: Vec<String>,
}

fn describe_cycle(cycle: &[CycleEdge]) -> String {
    cycle
        .iter()
        .map(|e| format!("`{}` before `{}` ({})", e.from, e.to, e.reasons.join("; ")))
        .collect::<Vec<_>>()
        .join(", then ")
}

/// Why a system could not finish its run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SystemError {
    /// The system touched a component or resource outside its declared
    /// access.
    #[error("system `{system}` accessed {kind} `{name}` {access} without declaring it")]
    Undeclared {
        /// The system.
        system: String,
        /// `"component"`, `"resource"` or `"command buffer"`.
        kind: &'static str,
        /// The type's name (the registered name of a run-time component).
        name: Cow<'static, str>,
        /// The access it asked for.
        access: Access,
    },
    /// The registry refused a borrow (a missing resource, or a conflict the
    /// schedule should have prevented).
    #[error("system `{system}`: {source}")]
    Registry {
        /// The system.
        system: String,
        /// What the registry said.
        source: EcsError,
    },
    /// The system's own code reported a failure.
    #[error("system `{system}` failed: {message}")]
    Failed {
        /// The system.
        system: String,
        /// Its message.
        message: String,
    },
}

/// Why a tick stopped. The registry stays consistent: the failing system's
/// commands are discarded, the other systems of its wave finish and have
/// their commands applied, and the later waves do not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A system returned an error.
    #[error("tick {tick}: {source}")]
    System {
        /// The tick's number.
        tick: u64,
        /// The system's error, naming it.
        source: SystemError,
    },
    /// A system panicked.
    #[error("tick {tick}: system `{system}` panicked: {message}")]
    Panic {
        /// The tick's number.
        tick: u64,
        /// The system.
        system: String,
        /// The panic message (`<non-string panic payload>` when it has none).
        message: String,
    },
    /// A command of a system with strict commands was skipped at apply
    /// (its target was not alive). The commands before it are applied; it
    /// and the rest of the system's buffer are dropped.
    #[error("tick {tick}: system `{system}`: {command} (strict commands)")]
    CommandSkipped {
        /// The tick's number.
        tick: u64,
        /// The system whose command it was.
        system: String,
        /// The command: its index in the system's recording order, kind,
        /// entity and type; its `buffer` is the system's registration
        /// index.
        command: Box<SkippedCommand>,
    },
    /// A system (or its run condition) needs a resource the registry does
    /// not hold. Checked before the first system of a tick runs, until a
    /// tick has found every declared resource.
    #[error(
        "tick {tick}: system `{system}` needs resource `{resource}`, which the registry does not hold; insert it before running the schedule"
    )]
    MissingResource {
        /// The tick's number.
        tick: u64,
        /// The first system (in registration order) that needs it.
        system: String,
        /// The resource's type name.
        resource: String,
    },
    /// A command of a system's buffer panicked while the buffers were
    /// applied between waves (a pushed closure, or a component's `Drop`).
    /// The commands before it are applied; it and the rest of that buffer
    /// are dropped. The other buffers of the wave are applied all the same
    /// (their systems succeeded); later waves do not run. Nothing recorded
    /// in this tick is applied in another.
    #[error(
        "tick {tick}: command {command} of system `{system}`'s buffer panicked while applied: {message}"
    )]
    CommandPanic {
        /// The tick's number.
        tick: u64,
        /// The system whose buffer was applied.
        system: String,
        /// The command's index in that buffer's recording order.
        command: usize,
        /// The panic message (`<non-string panic payload>` when it has none).
        message: String,
    },
    /// A one-shot system was asked for by an id its schedule did not
    /// register (see
    /// [`Schedule::register_system`](crate::Schedule::register_system)).
    #[error(
        "tick {tick}: {} asked to run one-shot system {id}, which this schedule did not register",
        requester(.requested_by)
    )]
    UnknownOneShot {
        /// The tick's number.
        tick: u64,
        /// The id asked for.
        id: OneShotId,
        /// The system whose commands asked; `None` for
        /// [`Schedule::run_system`](crate::Schedule::run_system).
        requested_by: Option<String>,
    },
    /// The one-shot runs after one wave chained more than
    /// [`MAX_ONE_SHOT_CHAIN`](crate::MAX_ONE_SHOT_CHAIN) links (a one-shot
    /// system or an observer that asks for itself each run), or numbered
    /// more than [`MAX_ONE_SHOT_RUNS`](crate::MAX_ONE_SHOT_RUNS) in all;
    /// the rest of the requests are dropped.
    #[error(
        "tick {tick}: more than {limit} {of} of one-shot runs after one wave; the last, of {id}, asked for by {}",
        asker(.requested_by)
    )]
    OneShotLimit {
        /// The tick's number.
        tick: u64,
        /// The one-shot system of the run past the limit.
        id: OneShotId,
        /// The system whose commands asked for that run; `None` for an
        /// observer's run, asked for by a hook (the
        /// [`RunError::Observer`] around this error names it).
        requested_by: Option<String>,
        /// The limit.
        limit: usize,
        /// What it limits: `"chained links"` or `"runs"`.
        of: &'static str,
    },
    /// A system reads `Res<Trigger>` (see [`Trigger`](crate::Trigger)),
    /// which the registry holds only while an observer runs for a hook
    /// that fired, but it ran otherwise: an observer run by id
    /// ([`Schedule::run_system`](crate::Schedule::run_system),
    /// [`Commands::run_system`](crate::Commands::run_system)), or a
    /// system of the waves. Take `Option<Res<Trigger>>` in a system that
    /// runs both ways.
    #[error(
        "tick {tick}: {kind} `{system}` reads `Res<Trigger>`, which only a run for a hook that fired has; it was run {how}, without one (take `Option<Res<Trigger>>` to allow both)"
    )]
    NoTrigger {
        /// The tick's number.
        tick: u64,
        /// `"observer"` (a system registered with `observe`) or
        /// `"system"`.
        kind: &'static str,
        /// The system.
        system: String,
        /// How it ran: `"by id"` (a one-shot run) or `"in the waves"`.
        how: &'static str,
    },
    /// An observer (a system registered with
    /// [`observe`](crate::Schedule::observe)) run for a hook that fired
    /// failed: its error, panic, missing resource, command panic or the
    /// one-shot limit, as `source`, named after the observer, the hook,
    /// the component type and the entity.
    #[error(
        "tick {tick}: observer `{observer}` on {hook:?} of `{component}` for entity {entity}: {}",
        source.reason()
    )]
    Observer {
        /// The tick's number.
        tick: u64,
        /// The observer's name.
        observer: String,
        /// The hook that fired.
        hook: Hook,
        /// The observed component type's name.
        component: String,
        /// The entity the hook fired for.
        entity: Entity,
        /// What went wrong, as it would be reported for a system.
        source: Box<RunError>,
    },
    /// A failure of a one-shot run between ticks
    /// ([`Schedule::run_system`](crate::Schedule::run_system), and the
    /// one-shot systems and observers it led to): `source`, whose tick
    /// number is only what the run's `Tick` parameter read.
    #[error("between ticks: {}", source.without_tick())]
    BetweenTicks {
        /// What went wrong.
        source: Box<RunError>,
    },
    /// No system has that name (from `set_enabled`).
    #[error("no system is named `{name}`")]
    UnknownSystem {
        /// The name asked for.
        name: String,
    },
}

impl RunError {
    /// The tick the error happened in; `None` between ticks
    /// ([`RunError::BetweenTicks`]) and for
    /// [`RunError::UnknownSystem`].
    pub fn tick(&self) -> Option<u64> {
        match self {
            RunError::System { tick, .. }
            | RunError::Panic { tick, .. }
            | RunError::CommandSkipped { tick, .. }
            | RunError::MissingResource { tick, .. }
            | RunError::CommandPanic { tick, .. }
            | RunError::UnknownOneShot { tick, .. }
            | RunError::OneShotLimit { tick, .. }
            | RunError::NoTrigger { tick, .. }
            | RunError::Observer { tick, .. } => Some(*tick),
            RunError::BetweenTicks { .. } | RunError::UnknownSystem { .. } => None,
        }
    }

    /// The failure itself, out of the [`RunError::Observer`] and
    /// [`RunError::BetweenTicks`] that name where it happened: a
    /// [`RunError::Panic`] of an observer run between ticks, for
    /// instance, to match on.
    ///
    /// # Examples
    ///
    /// ```
    /// use scheduler::RunError;
    ///
    /// let panic = RunError::Panic {
    ///     tick: 0,
    ///     system: "explode".to_owned(),
    ///     message: "boom".to_owned(),
    /// };
    /// let error = RunError::BetweenTicks {
    ///     source: Box::new(panic.clone()),
    /// };
    /// assert_eq!(error.to_string(), "between ticks: system `explode` panicked: boom");
    /// assert_eq!(error.root(), &panic);
    /// assert_eq!(error.tick(), None);
    /// ```
    pub fn root(&self) -> &RunError {
        match self {
            RunError::Observer { source, .. } | RunError::BetweenTicks { source } => source.root(),
            other => other,
        }
    }

    /// The message without its leading `tick N: `.
    fn without_tick(&self) -> String {
        let text = self.to_string();
        match self.tick() {
            Some(tick) => match text.strip_prefix(&format!("tick {tick}: ")) {
                Some(rest) => rest.to_owned(),
                None => text,
            },
            None => text,
        }
    }

    /// What went wrong in an observer's run, for [`RunError::Observer`]:
    /// the message without the tick and the system's name.
    fn reason(&self) -> String {
        match self {
            RunError::System { source, .. } => match source {
                SystemError::Failed { message, .. } => format!("failed: {message}"),
                SystemError::Undeclared {
                    kind, name, access, ..
                } => format!("accessed {kind} `{name}` {access} without declaring it"),
                SystemError::Registry { source, .. } => source.to_string(),
            },
            RunError::Panic { message, .. } => format!("panicked: {message}"),
            RunError::MissingResource { resource, .. } => {
                format!("needs resource `{resource}`, which the registry does not hold")
            }
            RunError::CommandPanic {
                command, message, ..
            } => format!("command {command} of its buffer panicked while applied: {message}"),
            RunError::CommandSkipped { command, .. } => format!("{command} (strict commands)"),
            other => other.without_tick(),
        }
    }
}

/// Who asked for a one-shot run that went past the limit.
fn asker(requested_by: &Option<String>) -> String {
    match requested_by {
        Some(system) => format!("system `{system}`"),
        None => "its hook".to_owned(),
    }
}

/// Who asked for a one-shot run, for its errors.
fn requester(requested_by: &Option<String>) -> String {
    match requested_by {
        Some(system) => format!("system `{system}`"),
        None => "the caller".to_owned(),
    }
}
