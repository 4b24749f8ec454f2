//! A system's slot in a built schedule: the system with everything the
//! executor keeps for it (its buffer, conditions, last failure and run),
//! and one run of it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use command_buffer::{ApplyReport, CommandBuffer, ReservePolicy, SkippedCommand};
use ecs_engine::{Registry, RegistryCell, panic_message};

use crate::system::condition::SharedCondition;
use crate::{System, SystemAccess, SystemContext, SystemId, Tick};

/// One run of one system, as the scheduler measured it: see
/// [`Schedule::system_runs`](crate::Schedule::system_runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemRun {
    /// The system.
    pub system: SystemId,
    /// The number of the frame tick it ran in
    /// ([`Tick::number`](crate::Tick::number)).
    pub tick: u64,
    /// Index of the pool's worker thread that ran it (`0..threads`), or
    /// `None` when it ran on another thread.
    pub worker: Option<usize>,
    /// When it started (its run conditions included).
    pub start: Instant,
    /// How long it ran.
    pub duration: Duration,
}

/// Why a system's last run failed.
#[derive(Debug)]
pub(crate) enum Failure {
    Error(crate::SystemError),
    Panic(String),
    /// A strict system's command was skipped at apply.
    Skipped(Box<SkippedCommand>),
    /// A command of the system's buffer panicked while applied.
    CommandPanic(command_buffer::CommandPanic),
}

/// A system with everything the executor keeps for it.
pub(crate) struct Slot {
    pub(crate) id: SystemId,
    /// The key of the system's event cursors and its place in the order
    /// its sent events are merged in: its index for a tick system, the
    /// number of tick systems plus its index for a startup system (so a
    /// startup reader never shares a cursor with a tick system).
    pub(crate) events_key: usize,
    pub(crate) name: String,
    pub(crate) access: SystemAccess,
    pub(crate) system: Box<dyn System>,
    pub(crate) buffer: CommandBuffer,
    /// A skipped command stops the tick.
    pub(crate) strict: bool,
    /// What the last tick's apply of `buffer` did.
    pub(crate) report: ApplyReport,
    pub(crate) enabled: bool,
    /// How long the last tick's run took (zero when it did not run).
    pub(crate) last_run: Duration,
    /// What the executor expects a run to cost when it decides whether a
    /// wave or a tick pays for the pool: from its real runs (kept over
    /// ticks a run condition skips; zero while disabled), see
    /// `executor::expected_cost`.
    pub(crate) cost: Duration,
    pub(crate) failure: Option<Failure>,
    /// Run conditions: its own, then its sets'.
    pub(crate) conditions: Vec<SharedCondition>,
    /// How many of `conditions` are its own (the rest, its sets', are
    /// evaluated once per tick).
    pub(crate) own_conditions: usize,
    /// A run condition skipped the last run.
    pub(crate) skipped: bool,
    /// The last run that happened.
    pub(crate) last: Option<crate::SystemRun>,
}

/// A scheduled system's command buffer, with `policy`, or
/// [`ReservePolicy::SCHEDULED`] (no handle reserved until it spawns).
pub(crate) fn system_buffer(policy: Option<ReservePolicy>) -> CommandBuffer {
    CommandBuffer::with_policy(policy.unwrap_or(ReservePolicy::SCHEDULED))
}

impl Slot {
    /// A slot for `system`, enabled, without run conditions, its buffer
    /// prepared when it records commands and its pools registered.
    pub(crate) fn plain(
        id: SystemId,
        events_key: usize,
        name: String,
        system: Box<dyn System>,
        buffer: CommandBuffer,
        strict: bool,
        registry: &mut Registry,
    ) -> Slot {
        let access = system.access();
        Self::with_access(
            id, events_key, name, access, system, buffer, strict, registry,
        )
    }

    /// As [`plain`](Self::plain), with the access given (a system's merged
    /// with its conditions').
    #[expect(clippy::too_many_arguments, reason = "one per field a caller chooses")]
    pub(crate) fn with_access(
        id: SystemId,
        events_key: usize,
        name: String,
        access: SystemAccess,
        system: Box<dyn System>,
        mut buffer: CommandBuffer,
        strict: bool,
        registry: &mut Registry,
    ) -> Slot {
        if access.commands() {
            buffer.prepare(registry);
        }
        access.register_pools(registry);
        Slot {
            id,
            events_key,
            name,
            access,
            system,
            buffer,
            strict,
            report: ApplyReport::default(),
            enabled: true,
            last_run: Duration::ZERO,
            cost: Duration::ZERO,
            failure: None,
            conditions: Vec::new(),
            own_conditions: 0,
            skipped: false,
            last: None,
        }
    }

    /// Runs the system once (unless a run condition says no), catching a
    /// panic; records time and failure.
    pub(crate) fn run(&mut self, cell: &RegistryCell<'_>, tick: Tick) {
        self.failure = None;
        self.skipped = false;
        if !self.enabled {
            self.last_run = Duration::ZERO;
            self.cost = Duration::ZERO;
            return;
        }
        let _span = tracing::info_span!("system", name = %self.name).entered();
        let start = Instant::now();
        let ctx = SystemContext::new(&self.name, &self.access, cell, &mut self.buffer, tick)
            .with_system_id(self.id)
            .with_events_key(self.events_key);
        let system = &mut self.system;
        let (conditions, own) = (&self.conditions, self.own_conditions);
        let skipped = &mut self.skipped;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            for (k, condition) in conditions.iter().enumerate() {
                if !condition.lock().verdict(&ctx, k >= own)? {
                    *skipped = true;
                    return Ok(());
                }
            }
            system.run(&ctx)
        }));
        self.last_run = if self.skipped {
            Duration::ZERO
        } else {
            start.elapsed()
        };
        if !self.skipped {
            self.cost = crate::executor::placement::expected_cost(self.cost, self.last_run);
            self.record(tick, start);
        }
        self.failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(Failure::Error(error)),
            Err(payload) => Some(Failure::Panic(panic_message(&*payload))),
        };
    }

    /// Evaluates the set conditions that have no verdict yet this tick,
    /// for an enabled slot (the executor calls it for each slot of a wave,
    /// in registration order, before the wave runs, so the verdict comes
    /// from the same member on any thread count). A condition that fails
    /// keeps no verdict: the run evaluates it again and reports the failure.
    pub(crate) fn decide_sets(&mut self, cell: &RegistryCell<'_>, tick: Tick) {
        let sets = &self.conditions[self.own_conditions..];
        if !self.enabled || sets.is_empty() {
            return;
        }
        let ctx = SystemContext::new(&self.name, &self.access, cell, &mut self.buffer, tick)
            .with_system_id(self.id)
            .with_events_key(self.events_key);
        for condition in sets {
            let _ = catch_unwind(AssertUnwindSafe(|| condition.lock().verdict(&ctx, true)));
        }
    }

    /// Forgets the verdicts of its sets' conditions (each tick's start).
    pub(crate) fn reset_sets(&self) {
        for condition in &self.conditions[self.own_conditions..] {
            condition.lock().reset();
        }
    }

    /// Keeps the record of a run that just ended.
    fn record(&mut self, tick: Tick, start: Instant) {
        self.last = Some(SystemRun {
            system: self.id,
            tick: tick.number,
            worker: rayon::current_thread_index(),
            start,
            duration: self.last_run,
        });
    }

    /// Runs an exclusive system with the whole registry (its run
    /// conditions first, over a shared view of it).
    pub(crate) fn run_exclusive(&mut self, registry: &mut Registry, tick: Tick) {
        self.failure = None;
        self.skipped = false;
        if !self.enabled {
            self.last_run = Duration::ZERO;
            self.cost = Duration::ZERO;
            return;
        }
        let start = Instant::now();
        let mut run = true;
        if !self.conditions.is_empty() {
            let cell = registry.cell();
            let ctx = SystemContext::new(&self.name, &self.access, &cell, &mut self.buffer, tick);
            for (k, condition) in self.conditions.iter().enumerate() {
                let once = k >= self.own_conditions;
                match catch_unwind(AssertUnwindSafe(|| condition.lock().verdict(&ctx, once))) {
                    Ok(Ok(true)) => {}
                    Ok(Ok(false)) => run = false,
                    Ok(Err(error)) => self.failure = Some(Failure::Error(error)),
                    Err(payload) => self.failure = Some(Failure::Panic(panic_message(&*payload))),
                }
                if !run || self.failure.is_some() {
                    break;
                }
            }
        }
        if !run || self.failure.is_some() {
            self.skipped = !run;
            self.last_run = Duration::ZERO;
            return;
        }
        let (system, name) = (&mut self.system, self.name.as_str());
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            system.run_exclusive(name, registry, tick)
        }));
        self.last_run = start.elapsed();
        self.cost = crate::executor::placement::expected_cost(self.cost, self.last_run);
        self.record(tick, start);
        self.failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(Failure::Error(error)),
            Err(payload) => Some(Failure::Panic(panic_message(&*payload))),
        };
    }
}
