//! One-shot systems (bevy's `register_system` / `run_system`): systems
//! kept by a schedule outside its waves, run by id on demand, from the
//! caller between ticks ([`Schedule::run_system`]) or from a system's
//! commands ([`Commands::run_system`]).
//!
//! A run request recorded by commands is queued when its command is
//! applied, and the queue is run once every buffer of the wave is
//! applied: in the order the requests were applied (registration order of
//! the requesting systems, then recording order), each one-shot system
//! followed by its own commands, whose requests join the end of the
//! queue. So the order is fixed whatever the thread count. A chain of
//! runs asking for more runs is at most [`MAX_ONE_SHOT_CHAIN`] links long
//! (and [`MAX_ONE_SHOT_RUNS`] runs in all) after one wave: a system that
//! keeps asking for itself stops the tick with [`RunError::OneShotLimit`]
//! instead of looping for ever.

use std::collections::VecDeque;

use ecs_engine::Registry;

use crate::executor::{Between, Pass, Stage, WaveTiming, check_resources, run_waves};
use crate::observer::{Fired, Trigger, has_fired, take_triggers};
use crate::slot::{Slot, system_buffer};
use crate::{Commands, IntoSystem, RunError, Schedule, SystemId, Tick};

/// The longest chain of one-shot runs after one wave (or one
/// [`Schedule::run_system`]): the runs the wave asked for (its commands'
/// requests and the observers its hooks fired) are the first link, the
/// runs those asked for the second, and so on. A one-shot system or an
/// observer that keeps asking for itself stops here; a wave that fires
/// 100,000 hooks is one link.
pub const MAX_ONE_SHOT_CHAIN: usize = 4096;

/// The most one-shot runs after one wave, all links together: a guard
/// against chains that grow at every link (an observer that fires two
/// more of itself), which would take too long to reach
/// [`MAX_ONE_SHOT_CHAIN`] links.
pub const MAX_ONE_SHOT_RUNS: usize = 1 << 24;

/// Names a one-shot system of one schedule (or engine): what
/// [`Schedule::register_system`] returns, for
/// [`Schedule::run_system`] and [`Commands::run_system`]. Copy it
/// anywhere (a resource, a component, a system's state). Not the
/// [`SystemId`] of a system in the waves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OneShotId(pub(crate) usize);

impl OneShotId {
    /// Its index in registration order (0 for the first registered).
    pub fn index(self) -> usize {
        self.0
    }
}

impl std::fmt::Display for OneShotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A schedule's one-shot systems.
#[derive(Default)]
pub(crate) struct OneShots {
    pub(crate) slots: Vec<Slot>,
    /// The events key of the first (after every other system's).
    pub(crate) key_base: usize,
    /// The observers among them, in registration order.
    pub(crate) observers: Vec<crate::observer::Observer>,
}

/// The run requests applied and not run yet, a resource while some are
/// queued.
pub(crate) struct Requests(VecDeque<Request>);

/// One run request: the system, and who asked.
type Request = (OneShotId, Asker);

/// Who asked for a one-shot run.
#[derive(Clone)]
enum Asker {
    /// The commands of the system of that name.
    System(String),
    /// A hook that fired, for an observer.
    Hook(Fired),
}

impl Commands<'_> {
    /// Runs the one-shot system `id` once this command's wave is applied
    /// (see [`Schedule::register_system`] for the order), with its own
    /// commands applied after it. An id this schedule did not register
    /// stops the tick with [`RunError::UnknownOneShot`] naming this
    /// system.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, OneShotId, Res, ResMut, Schedule, Tick};
    ///
    /// struct Boom(OneShotId);
    ///
    /// fn explode(mut blasts: ResMut<u32>) {
    ///     *blasts += 1;
    /// }
    /// fn trigger(boom: Res<Boom>, mut commands: Commands) {
    ///     commands.run_system(boom.0);
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_u32);
    /// let mut builder = Schedule::builder();
    /// builder.add(trigger);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// let boom = schedule.register_system(&mut registry, explode);
    /// registry.insert_resource(Boom(boom));
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<u32>(), Some(&1));
    /// ```
    pub fn run_system(&mut self, id: OneShotId) {
        let requester = self.1.to_owned();
        self.push(move |registry: &mut Registry| {
            queue(registry, [(id, Asker::System(requester))]);
        });
    }
}

/// Queues `requests` after those already queued.
fn queue(registry: &mut Registry, requests: impl IntoIterator<Item = Request>) {
    let mut requests = requests.into_iter().peekable();
    if requests.peek().is_none() {
        return;
    }
    match registry.resource_mut::<Requests>() {
        Some(queued) => queued.0.extend(requests),
        None => {
            registry.insert_resource(Requests(requests.collect()));
        }
    }
}

impl crate::ScheduleBuilder {
    /// Registers a one-shot system before the build, so a plugin can keep
    /// its id (in a resource, say) for its systems to run; as
    /// [`Schedule::register_system`], which numbers on after these.
    pub fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> OneShotId {
        self.oneshots.push(Box::new(system.into_system()));
        OneShotId(self.oneshots.len() - 1)
    }
}

impl Schedule {
    /// Registers a one-shot system (anything [`add`](crate::ScheduleBuilder::add)
    /// takes: a function, a [`StatefulSystem`](crate::StatefulSystem), an
    /// exclusive `fn(&mut Registry)`) and returns its id. It is in no wave
    /// and runs only when asked: [`run_system`](Self::run_system) between
    /// ticks, or [`Commands::run_system`] from a system, after the wave
    /// that asked. It keeps its state (its `Local`s, its struct) from run
    /// to run. Named after its function, like other systems (names need
    /// not be unique among one-shot systems).
    pub fn register_system<M>(
        &mut self,
        registry: &mut Registry,
        system: impl IntoSystem<M>,
    ) -> OneShotId {
        self.register_boxed(registry, Box::new(system.into_system()))
    }

    /// [`register_system`](Self::register_system) of a boxed system.
    pub(crate) fn register_boxed(
        &mut self,
        registry: &mut Registry,
        system: Box<dyn crate::System>,
    ) -> OneShotId {
        let shots = &mut self.between.oneshots;
        let index = shots.slots.len();
        let name = system.default_name().into_owned();
        let key = shots.key_base + index;
        let (buffer, strict) = (system_buffer(None), false);
        let slot = Slot::plain(SystemId(index), key, name, system, buffer, strict, registry);
        shots.slots.push(slot);
        OneShotId(index)
    }

    /// Runs the one-shot system `id` now, with the tick `tick` (what its
    /// `Tick` parameter reads), then its commands, then the one-shot
    /// systems those commands asked for (as after a wave). On the
    /// schedule's pool when it has one, so the outcome does not depend on
    /// the thread count.
    ///
    /// # Errors
    ///
    /// Every error is a [`RunError::BetweenTicks`] (its message starts
    /// with "between ticks", not with a tick number) around the failure
    /// ([`RunError::root`] gives it): [`RunError::UnknownOneShot`] for an
    /// id this schedule did not register; [`RunError::MissingResource`]
    /// when the system needs a resource the registry lacks;
    /// [`RunError::NoTrigger`] when it reads `Res<Trigger>` (an observer
    /// run by id); the system's failure as a tick's ([`RunError::System`],
    /// [`RunError::Panic`], ...), its commands then discarded;
    /// [`RunError::Observer`] for an observer its commands' hooks ran;
    /// [`RunError::OneShotLimit`] past [`MAX_ONE_SHOT_RUNS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, Local, Schedule, Tick};
    ///
    /// struct Crate;
    /// fn drop_crate(mut commands: Commands, mut dropped: Local<u32>) {
    ///     *dropped += 1;
    ///     commands.spawn((Crate,));
    /// }
    ///
    /// let mut registry = Registry::new();
    /// let mut schedule = Schedule::builder().build(&mut registry).unwrap();
    /// let id = schedule.register_system(&mut registry, drop_crate);
    /// schedule.run_system(&mut registry, id, Tick::default()).unwrap();
    /// schedule.run_system(&mut registry, id, Tick::default()).unwrap();
    /// assert_eq!(registry.view::<&Crate>().count(), 2);
    /// ```
    pub fn run_system(
        &mut self,
        registry: &mut Registry,
        id: OneShotId,
        tick: Tick,
    ) -> Result<(), RunError> {
        let threads = self.threads();
        let (pool, between) = (self.pool.as_ref(), &mut *self.between);
        let pass = Pass {
            tick,
            threads,
            adaptive: false,
            stage: Stage::OneShot,
            dispatch: None,
            shuffle: None,
        };
        let run = || {
            run_one(between, registry, id, None, pass)?;
            run_requested(between, registry, pass)
        };
        let outcome = match pool {
            Some(pool) => pool.install(run),
            None => ecs_engine::run_serial(run),
        };
        outcome.map_err(|error| RunError::BetweenTicks {
            source: Box::new(error),
        })
    }

    /// Number of one-shot systems registered.
    pub fn one_shot_count(&self) -> usize {
        self.between.oneshots.slots.len()
    }
}

/// Runs one-shot system `id` and applies its commands; `requester` is the
/// system that asked, for the error of an unknown id.
fn run_one(
    between: &mut Between,
    registry: &mut Registry,
    id: OneShotId,
    requester: Option<String>,
    pass: Pass<'_>,
) -> Result<(), RunError> {
    let mut slots = std::mem::take(&mut between.oneshots.slots);
    let outcome = if id.0 < slots.len() {
        let checked = check_resources(std::iter::once(&slots[id.0]), registry, pass.tick);
        let checked = checked.map_err(|error| match error {
            RunError::NoTrigger {
                tick, system, kind, ..
            } => RunError::NoTrigger {
                tick,
                kind: if between.oneshots.observers.iter().any(|o| o.id == id) {
                    "observer"
                } else {
                    kind
                },
                system,
                how: "by id",
            },
            other => other,
        });
        checked.and_then(|()| {
            let range = id.0..id.0 + 1;
            let mut timing = [WaveTiming::default()];
            let pass = Pass {
                stage: Stage::OneShot,
                ..pass
            };
            run_waves(
                &mut slots,
                std::slice::from_ref(&range),
                &mut timing,
                between,
                registry,
                pass,
            )
        })
    } else {
        Err(RunError::UnknownOneShot {
            tick: pass.tick.number,
            id,
            requested_by: requester,
        })
    };
    between.oneshots.slots = slots;
    outcome
}

/// Runs the queued requests in order, those they queue included; on a
/// failure the rest of the queue is dropped (nothing of it runs later).
pub(crate) fn run_requested(
    between: &mut Between,
    registry: &mut Registry,
    pass: Pass<'_>,
) -> Result<(), RunError> {
    let mut runs = 0;
    // The queue runs first in, first out, so the requests of one link
    // are those queued when the link before it ended.
    let mut link = 0;
    let mut left_in_link = 0;
    let outcome = loop {
        let triggers = take_triggers(&between.oneshots.observers, registry);
        let observed = triggers
            .into_iter()
            .map(|(id, fired)| (id, Asker::Hook(fired)));
        queue(registry, observed);
        if left_in_link == 0 {
            left_in_link = registry.resource::<Requests>().map_or(0, |r| r.0.len());
            link += 1;
        }
        let Some((id, asker)) = registry
            .resource_mut::<Requests>()
            .and_then(|requests| requests.0.pop_front())
        else {
            break Ok(());
        };
        let (requester, fired) = match asker {
            Asker::System(system) => (Some(system), None),
            Asker::Hook(fired) => (None, Some(fired)),
        };
        left_in_link -= 1;
        runs += 1;
        let past = if link > MAX_ONE_SHOT_CHAIN {
            Some((MAX_ONE_SHOT_CHAIN, "chained links"))
        } else if runs > MAX_ONE_SHOT_RUNS {
            Some((MAX_ONE_SHOT_RUNS, "runs"))
        } else {
            None
        };
        let run = match past {
            Some((limit, of)) => Err(RunError::OneShotLimit {
                tick: pass.tick.number,
                id,
                requested_by: requester,
                limit,
                of,
            }),
            None => {
                if let Some(fired) = fired {
                    registry.insert_resource(fired.trigger);
                }
                let run = run_one(between, registry, id, requester, pass);
                if fired.is_some() {
                    registry.remove_resource::<Trigger>();
                }
                run
            }
        };
        if let Err(error) = run {
            break Err(match fired {
                Some(fired) => observer_error(between, id, fired, pass, error),
                None => error,
            });
        }
    };
    drop_requests(registry);
    outcome
}

/// `error` of the observer `id` run for `fired`, named after them.
fn observer_error(
    between: &Between,
    id: OneShotId,
    fired: Fired,
    pass: Pass<'_>,
    error: RunError,
) -> RunError {
    let observer = between
        .oneshots
        .slots
        .get(id.0)
        .map_or_else(|| id.to_string(), |slot| slot.name.clone());
    RunError::Observer {
        tick: pass.tick.number,
        observer,
        hook: fired.trigger.hook,
        component: crate::short_name(fired.component),
        entity: fired.trigger.entity,
        source: Box::new(error),
    }
}

/// Forgets the queued requests (after a failure of their wave).
pub(crate) fn drop_requests(registry: &mut Registry) {
    if registry.contains_resource::<Requests>() {
        registry.remove_resource::<Requests>();
    }
    if has_fired(registry) {
        registry.remove_resource::<command_buffer::FiredHooks>();
    }
}

/// `true` when some request is queued or some hook fired.
pub(crate) fn has_requests(registry: &Registry) -> bool {
    registry.contains_resource::<Requests>() || has_fired(registry)
}
