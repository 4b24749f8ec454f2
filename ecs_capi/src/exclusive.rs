//! Exclusive C systems: a system that runs alone, between waves, with the
//! whole world, as Rust's `fn(&mut Registry)` systems do. Its callback gets
//! the engine itself, and the engine lends the system's world to the
//! world calls (`ecs_spawn`, `ecs_insert`, the hierarchy, resources, ...)
//! that callback makes on its thread ([`World`]); every other engine call
//! stays refused until the tick ends.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use std::thread::ThreadId;

use ::ecs_engine::Registry;
use parking_lot::{Mutex, MutexGuard};
use scheduler::{System, SystemAccess, SystemContext, SystemError, Tick};

use crate::SendPtr;
use crate::boundary::foreign;
use crate::context::ecs_tick;
use crate::engine::{EngineState, ecs_engine};
use crate::resource::ResourceStore;
use crate::status::{ECS_ERR_WRONG_STATE, Failure};
use crate::tag::Tag;

/// An exclusive system's body: called once per tick, alone (no other
/// system runs meanwhile), on the thread that runs the tick or a worker,
/// with the engine, the tick being run (as `ecs_ctx_tick` gives a system;
/// valid during the call) and the descriptor's `user_data`. During the call the
/// engine's world calls work on it (see `ecs_system_desc.run_exclusive`);
/// a pointer `ecs_get` gives there is valid until the call returns. No C++
/// exception may leave the callback: one that does aborts the process.
pub type ecs_exclusive_fn = Option<
    unsafe extern "C" fn(engine: *mut ecs_engine, tick: *const ecs_tick, user_data: *mut c_void),
>;

/// The world of a running exclusive system, lent to its thread.
pub(crate) struct Lent {
    thread: ThreadId,
    registry: NonNull<Registry>,
    tag: Tag,
    resources: Arc<ResourceStore>,
}

// SAFETY: a `Lent` only travels inside its engine's slot; the registry
// behind it is used only on `thread` (`ecs_engine::world` checks), while
// the exclusive system that lent it waits for its callback to return.
unsafe impl Send for Lent {}

/// The slot of an engine's lent world (empty outside exclusive systems).
pub(crate) type LentSlot = Mutex<Option<Lent>>;

/// The world for one engine call: the engine's own between ticks, or the
/// world an exclusive system lends its callback during a tick.
pub(crate) enum World<'a> {
    Engine(MutexGuard<'a, EngineState>),
    Lent {
        slot: &'a LentSlot,
        lent: Option<Lent>,
    },
}

impl World<'_> {
    /// The engine's id tag.
    pub(crate) fn tag(&self) -> Tag {
        match self {
            World::Engine(state) => state.tag,
            World::Lent { lent, .. } => lent.as_ref().expect("held until dropped").tag,
        }
    }

    /// The resources registered from C.
    pub(crate) fn resources(&self) -> &ResourceStore {
        match self {
            World::Engine(state) => &state.resources,
            World::Lent { lent, .. } => &lent.as_ref().expect("held until dropped").resources,
        }
    }

    pub(crate) fn registry(&self) -> &Registry {
        match self {
            World::Engine(state) => state.registry(),
            // SAFETY: see `registry_mut`.
            World::Lent { lent, .. } => unsafe { lent.as_ref().expect("held").registry.as_ref() },
        }
    }

    pub(crate) fn registry_mut(&mut self) -> &mut Registry {
        match self {
            World::Engine(state) => state.registry_mut(),
            // SAFETY: the exclusive system lent its `&mut Registry` for its
            // callback's duration and does not touch it meanwhile; this
            // `World` took the loan out of the slot, so no other `World`
            // reaches it until this one is dropped (a nested call, from a
            // component destructor, finds the slot empty and is refused).
            World::Lent { lent, .. } => unsafe { lent.as_mut().expect("held").registry.as_mut() },
        }
    }
}

impl Drop for World<'_> {
    fn drop(&mut self) {
        if let World::Lent { slot, lent } = self {
            *slot.lock() = lent.take();
        }
    }
}

impl ecs_engine {
    /// The world for the world call `function`: the engine's between
    /// ticks, or the world lent to this thread by the exclusive system
    /// running now; `ECS_ERR_WRONG_STATE` otherwise (another call holds
    /// the engine).
    pub(crate) fn world(&self, function: &str) -> Result<World<'_>, Failure> {
        if let Some(state) = self.state_if_free() {
            return Ok(World::Engine(state));
        }
        let slot = self.lent();
        let mut lent = slot.lock();
        if lent
            .as_ref()
            .is_some_and(|l| l.thread == std::thread::current().id())
        {
            return Ok(World::Lent {
                slot,
                lent: lent.take(),
            });
        }
        drop(lent);
        Err(busy(function))
    }
}

/// A C exclusive system, as the scheduler's [`System`]: declares
/// exclusive access, so the schedule runs it alone between waves with the
/// registry, which it lends to its engine for the callback.
pub(crate) struct CExclusive {
    pub(crate) name: String,
    pub(crate) run: unsafe extern "C" fn(*mut ecs_engine, *const ecs_tick, *mut c_void),
    pub(crate) user_data: SendPtr,
    /// The engine that owns the system (its address is stable: C holds it
    /// boxed, and the engine drops its systems before it is freed).
    pub(crate) engine: SendPtr,
    pub(crate) tag: Tag,
    pub(crate) resources: Arc<ResourceStore>,
}

impl System for CExclusive {
    fn default_name(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Owned(self.name.clone())
    }

    fn access(&self) -> SystemAccess {
        SystemAccess::new().exclusive()
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        Err(SystemError::Failed {
            system: ctx.system_name().to_owned(),
            message: "an exclusive C system runs with the registry, not a context".to_owned(),
        })
    }

    fn state(&self) -> &dyn std::any::Any {
        &()
    }

    fn run_exclusive(
        &mut self,
        _name: &str,
        registry: &mut Registry,
        tick: Tick,
    ) -> Result<(), SystemError> {
        let engine = self.engine.get().cast::<ecs_engine>();
        // SAFETY: the engine owns this system and outlives its run.
        let slot = unsafe { &*engine }.lent();
        *slot.lock() = Some(Lent {
            thread: std::thread::current().id(),
            registry: NonNull::from(registry),
            tag: self.tag,
            resources: Arc::clone(&self.resources),
        });
        // The loan ends when this returns, however it returns: the
        // registry is the schedule's again.
        struct EndLoan<'a>(&'a LentSlot);
        impl Drop for EndLoan<'_> {
            fn drop(&mut self) {
                *self.0.lock() = None;
            }
        }
        let _end = EndLoan(slot);
        let (run, user_data) = (self.run, self.user_data);
        let tick = ecs_tick {
            number: tick.number,
            step: tick.step,
            delta: tick.delta,
        };
        // SAFETY: the C caller promised `run` is sound with its user data
        // on any thread; the engine is live; `tick` outlives the call.
        foreign(|| unsafe { run(engine, &tick, user_data.get()) });
        Ok(())
    }
}

/// `ECS_ERR_WRONG_STATE` for an engine call refused while the engine is
/// held by another call.
pub(crate) fn busy(function: &str) -> Failure {
    Failure::new(
        ECS_ERR_WRONG_STATE,
        format!(
            "{function}: the engine is busy: a tick is running (a system must use its \
             ecs_system_ctx and ecs_ctx_commands, not the engine; an exclusive system may make \
             world calls only), it is being destroyed (a component destructor must not call \
             the engine), or another thread is using it"
        ),
    )
}
