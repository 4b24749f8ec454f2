//! Applying buffers to a registry: one buffer, or many in a fixed order.
//!
//! # Flush order
//!
//! Within a buffer, commands run in recording order. [`apply_all`] applies
//! buffers one after the other in the order given (the scheduler gives
//! system registration order); each buffer's reserve is topped up right
//! after its own commands, before the next buffer runs. Nothing here
//! depends on which thread recorded what first.
//!
//! # Strict mode
//!
//! With [`ApplyMode::Strict`], the first skipped command stops the apply
//! with an [`ApplyError`], which names the command and carries the report
//! of what was applied. The registry then holds the effects of every
//! command before it (and of every earlier buffer in [`apply_all_with`]);
//! the failing command and the rest of its buffer are dropped, their
//! reserved spawn handles cancelled, and the buffer is empty and reusable
//! (its reserve topped up as after any apply). Later buffers are untouched:
//! still recorded, not applied.
//!
//! `CommandBuffer` methods here: `apply`, `apply_strict`, `apply_with`,
//! `try_apply` and `try_apply_with`.

use std::any::Any;
use std::borrow::Cow;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

use ecs_engine::{EcsError, Entity, RawArena, Registry, panic_message};

use crate::report::Outcome;
use crate::reserve::SpawnHandles;
use crate::{
    ApplyError, ApplyReport, CommandBuffer, CommandKind, ResolvedPlaceholder, SkippedCommand,
    is_placeholder,
};

/// What to do with a command whose target entity is not alive when it runs.
///
/// # Examples
///
/// ```
/// use command_buffer::ApplyMode;
///
/// assert_eq!(ApplyMode::default(), ApplyMode::Lenient);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ApplyMode {
    /// Skip it, count it in the [`ApplyReport`], and go on.
    #[default]
    Lenient,
    /// Stop at the first skipped command with an [`ApplyError`] that names
    /// it and carries the report of what ran before. The registry then
    /// holds the effects of every command before it (and of every earlier
    /// buffer of an [`apply_all_with`]); the skipped command and the rest
    /// of its buffer are dropped, the reserved handles of their spawns
    /// cancelled, and that buffer is empty and reusable, its reserve topped
    /// up as after any apply. Later buffers of an `apply_all_with` are
    /// untouched: their commands stay recorded. Removing something absent
    /// is a no-op, never an error.
    Strict,
}

/// The state one buffer's apply threads through its commands.
pub(crate) struct ApplyCtx<'a> {
    pub(crate) registry: &'a mut Registry,
    /// The buffer's run-time component values.
    pub(crate) raw: &'a mut RawArena,
    report: &'a mut ApplyReport,
    mode: ApplyMode,
    buffer: usize,
    /// Index of the next command in the buffer's recording order.
    index: usize,
    handles: SpawnHandles<'a>,
    /// Spawn commands run so far.
    spawned: usize,
    /// Where this buffer's resolved placeholders start in the report.
    base: usize,
    /// `true` when some component type is observed (see `observe`).
    pub(crate) observing: bool,
}

impl<'a> ApplyCtx<'a> {
    /// The handle the next spawn command was given when recorded.
    #[inline]
    pub(crate) fn next_spawn(&mut self) -> Entity {
        let entity = self.handles.get(self.spawned);
        self.spawned += 1;
        entity
    }
    /// The reserved handles of the next spawns, at most `max` of them:
    /// those spawns can be applied as a batch. Empty when the next spawn
    /// got a placeholder.
    #[inline]
    pub(crate) fn next_reserved_spawns(&self, max: usize) -> &'a [Entity] {
        let reserved = self.handles.reserved;
        let start = self.spawned.min(reserved.len());
        let end = self.spawned.saturating_add(max).min(reserved.len());
        &reserved[start..end]
    }

    /// Counts `n` commands of `kind` in a row, spawns among them too when
    /// `kind` is [`CommandKind::Spawn`], that were applied.
    #[inline]
    pub(crate) fn applied_run(&mut self, kind: CommandKind, n: usize) {
        self.index += n;
        if kind == CommandKind::Spawn {
            self.spawned += n;
        }
        self.report.count_applied(kind, n);
    }

    /// `true` when this buffer handed out placeholders since its last
    /// apply, so command targets may need [`resolve`](Self::resolve).
    #[inline]
    pub(crate) fn has_placeholders(&self) -> bool {
        !self.handles.window.is_empty()
    }

    /// The handle a command should act on: a placeholder from this buffer
    /// becomes the entity created for it; anything else is unchanged (so a
    /// foreign or failed placeholder stays a handle that is never alive).
    #[inline]
    pub(crate) fn resolve(&self, entity: Entity) -> Entity {
        if !is_placeholder(entity) {
            return entity;
        }
        self.handles
            .window
            .offset(entity)
            .and_then(|offset| self.report.placeholders.get(self.base + offset))
            .and_then(|resolved| resolved.entity)
            .unwrap_or(entity)
    }

    /// Records what a placeholder spawn created.
    pub(crate) fn resolved(&mut self, placeholder: Entity, entity: Option<Entity>) {
        debug_assert_eq!(
            self.handles.window.offset(placeholder),
            Some(self.report.placeholders.len() - self.base),
            "placeholder spawns are applied in the order they were handed out"
        );
        self.report.placeholders.push(ResolvedPlaceholder {
            buffer: self.buffer,
            placeholder,
            entity,
        });
    }
    /// Applies a run of `kind` commands about `T` through a registry batch
    /// call that stops at the first target it refuses, and resumes after
    /// it until the run is done: the insert and remove runs share it.
    ///
    /// `batch` applies commands until one is refused, returning how many
    /// it applied and why it stopped; `last` holds the target of the last
    /// command the batch took (the refused one, after a stop);
    /// `refused` turns a stop into the command's outcome (a skip, or a
    /// no-op such as removing something absent), which is counted as
    /// [`finish_for`](Self::finish_for) does.
    ///
    /// # Errors
    ///
    /// In strict mode, the first skipped command.
    pub(crate) fn apply_batches<T: ?Sized, E>(
        &mut self,
        kind: CommandKind,
        last: &Cell<Entity>,
        mut batch: impl FnMut(&mut Registry) -> (usize, Result<(), E>),
        mut refused: impl FnMut(E) -> Result<Outcome, EcsError>,
    ) -> Result<(), SkippedCommand> {
        loop {
            let (done, stop) = batch(self.registry);
            self.applied_run(kind, done);
            match stop {
                Ok(()) => return Ok(()),
                Err(stop) => self.finish_for::<T>(kind, last.get(), refused(stop))?,
            }
        }
    }

    /// [`finish`](Self::finish) for a command about the Rust type `T`.
    pub(crate) fn finish_for<T: ?Sized>(
        &mut self,
        kind: CommandKind,
        entity: Entity,
        result: Result<Outcome, EcsError>,
    ) -> Result<(), SkippedCommand> {
        self.finish(
            kind,
            entity,
            Some(std::any::type_name::<T>().into()),
            result,
        )
    }

    /// Counts the outcome of the command just run.
    ///
    /// # Errors
    ///
    /// In strict mode, the skipped command.
    #[inline]
    pub(crate) fn finish(
        &mut self,
        kind: CommandKind,
        entity: Entity,
        type_name: Option<Cow<'static, str>>,
        result: Result<Outcome, EcsError>,
    ) -> Result<(), SkippedCommand> {
        let index = self.index;
        self.index += 1;
        match result {
            Ok(outcome) => {
                self.report.count(kind, Ok(outcome));
                Ok(())
            }
            Err(reason) => {
                let error = SkippedCommand {
                    buffer: self.buffer,
                    index,
                    kind,
                    entity,
                    type_name,
                    reason,
                };
                match self.mode {
                    ApplyMode::Strict => Err(error),
                    ApplyMode::Lenient => {
                        self.report.count(kind, Err(&error));
                        Ok(())
                    }
                }
            }
        }
    }
}

impl CommandBuffer {
    /// Applies every recorded command to `registry`, in recording order,
    /// and empties the buffer (keeping its capacity). A command whose
    /// target is not alive when it runs is skipped and counted in the
    /// report. Then the reserve is topped up for the next wave (see
    /// [`ReservePolicy`](crate::ReservePolicy)).
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry
    /// (nothing is applied then), or when a [`push`](Self::push)ed closure
    /// panics (the commands before it stay applied, the rest are dropped,
    /// and the buffer is empty and usable).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let target = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.insert(target, 2_u32);
    /// commands.despawn(target);
    /// commands.insert(target, 3_u32); // target is dead by then
    /// let report = commands.apply(&mut registry);
    /// assert!(commands.is_empty());
    /// assert!(!registry.is_alive(target));
    /// assert_eq!(report.skipped(CommandKind::Insert), 1);
    /// ```
    #[track_caller]
    pub fn apply(&mut self, registry: &mut Registry) -> ApplyReport {
        let mut report = ApplyReport::default();
        let lenient = self.apply_into(registry, &mut report, ApplyMode::Lenient, 0);
        debug_assert!(lenient.is_ok(), "lenient mode never fails");
        report
    }

    /// Like [`apply`](Self::apply), but the first command whose target is
    /// not alive stops the apply.
    ///
    /// # Errors
    ///
    /// An [`ApplyError`] naming the skipped command, with the report of the
    /// commands before it, which are applied; it and the rest are dropped
    /// (see the crate docs on strict mode).
    ///
    /// # Panics
    ///
    /// As [`apply`](Self::apply).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// let e = commands.spawn((1_u32,));
    /// commands.despawn(e);
    /// commands.despawn(e);
    /// commands.insert_resource(5_u64);
    /// let error = commands.apply_strict(&mut registry).unwrap_err();
    /// assert_eq!((error.skipped.index, error.skipped.kind), (2, CommandKind::Despawn));
    /// assert_eq!(error.report.total_applied(), 2);
    /// // The spawn and the first despawn ran; the resource was dropped.
    /// assert!(!registry.is_alive(e) && registry.resource::<u64>().is_none());
    /// assert!(commands.is_empty());
    /// ```
    #[track_caller]
    pub fn apply_strict(&mut self, registry: &mut Registry) -> Result<ApplyReport, ApplyError> {
        self.apply_with(registry, ApplyMode::Strict)
    }

    /// [`apply`](Self::apply) or [`apply_strict`](Self::apply_strict),
    /// chosen by `mode`.
    ///
    /// # Errors
    ///
    /// In [`ApplyMode::Strict`], as [`apply_strict`](Self::apply_strict);
    /// never in [`ApplyMode::Lenient`].
    ///
    /// # Panics
    ///
    /// As [`apply`](Self::apply).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{ApplyMode, CommandBuffer};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.spawn_empty();
    /// let report = commands.apply_with(&mut registry, ApplyMode::Strict).unwrap();
    /// assert_eq!((report.total_applied(), registry.len()), (1, 1));
    /// ```
    #[track_caller]
    pub fn apply_with(
        &mut self,
        registry: &mut Registry,
        mode: ApplyMode,
    ) -> Result<ApplyReport, ApplyError> {
        let mut report = ApplyReport::default();
        match self.apply_into(registry, &mut report, mode, 0) {
            Ok(()) => Ok(report),
            Err(skipped) => Err(ApplyError {
                skipped,
                report: Box::new(report),
            }),
        }
    }

    /// Like [`apply`](Self::apply), but a panic while a command runs (a
    /// [`push`](Self::push)ed closure, or a component's `Drop` run by the
    /// registry) is caught and returned, naming the command, instead of
    /// unwinding. The commands before it stay applied; it and the rest are
    /// dropped, and the buffer is empty and usable, as after a panic out of
    /// [`apply`](Self::apply): nothing recorded now is ever applied by a
    /// later apply.
    ///
    /// # Errors
    ///
    /// A [`CommandPanic`] with the command's index and the panic's message.
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry
    /// (nothing is applied then).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::new();
    /// commands.spawn_empty();
    /// commands.push(|_| panic!("boom"));
    /// commands.spawn_empty();
    /// let panic = commands.try_apply(&mut registry).unwrap_err();
    /// assert_eq!((panic.index, panic.message.as_str()), (1, "boom"));
    /// assert_eq!(registry.len(), 1);
    /// assert!(commands.is_empty());
    /// ```
    #[track_caller]
    pub fn try_apply(&mut self, registry: &mut Registry) -> Result<ApplyReport, CommandPanic> {
        self.try_apply_with(registry, ApplyMode::Lenient)
            .map(|lenient| lenient.expect("lenient mode never fails"))
    }

    /// [`apply_with`](Self::apply_with) in `mode`, returning a panic of a
    /// command as a [`CommandPanic`] (as [`try_apply`](Self::try_apply)
    /// does) instead of resuming it: the outer `Err` is a panic, the inner
    /// one a command skipped in [`ApplyMode::Strict`]. The scheduler applies
    /// each system's buffer this way between waves.
    ///
    /// # Panics
    ///
    /// When this buffer holds handles reserved from another registry
    /// (nothing is applied then).
    #[track_caller]
    pub fn try_apply_with(
        &mut self,
        registry: &mut Registry,
        mode: ApplyMode,
    ) -> Result<Result<ApplyReport, ApplyError>, CommandPanic> {
        let mut report = ApplyReport::default();
        match self.apply_caught(registry, &mut report, mode, 0) {
            Ok(Ok(())) => Ok(Ok(report)),
            Ok(Err(skipped)) => Ok(Err(ApplyError {
                skipped,
                report: Box::new(report),
            })),
            Err((index, payload)) => Err(CommandPanic {
                index,
                message: panic_message(&*payload),
            }),
        }
    }

    /// Applies this buffer as number `buffer` of a flush, adding to
    /// `report`.
    #[track_caller]
    fn apply_into(
        &mut self,
        registry: &mut Registry,
        report: &mut ApplyReport,
        mode: ApplyMode,
        buffer: usize,
    ) -> Result<(), SkippedCommand> {
        match self.apply_caught(registry, report, mode, buffer) {
            Ok(result) => result,
            Err((_, payload)) => panic::resume_unwind(payload),
        }
    }

    /// [`apply_into`](Self::apply_into), returning a panic of a command
    /// with the command's index instead of resuming it.
    #[track_caller]
    fn apply_caught(
        &mut self,
        registry: &mut Registry,
        report: &mut ApplyReport,
        mode: ApplyMode,
        buffer: usize,
    ) -> Result<Result<(), SkippedCommand>, (usize, Box<dyn Any + Send>)> {
        assert!(
            !self.reserve.lane_is_open(),
            "CommandBuffer applied while its spawn lane is open; call SpawnLanes::close first"
        );
        self.reserve.connect(registry, false);
        let base = report.placeholders.len();
        let observing = crate::observe::any_observed(registry);
        let mut ctx = ApplyCtx {
            registry: &mut *registry,
            raw: &mut self.raw,
            report,
            mode,
            buffer,
            index: 0,
            handles: self.reserve.spawn_handles(),
            spawned: 0,
            base,
            observing,
        };
        let queues = &mut self.queues;
        // However the commands end (all applied, a strict error, a panic in
        // a pushed closure), drop what is left, so the buffer is empty and
        // consistent, before returning or resuming the panic.
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| queues.apply(&mut ctx)));
        let spawned = ctx.spawned;
        // The command that was running: `index` counts the commands that
        // finished (a run of like commands applied as a batch is counted
        // when the batch ends, so a panic inside one names its first).
        let index = ctx.index;
        // Dropping the commands left may run a panicking `Drop`: both
        // complete anyway (every value dropped once, the buffer empty), and
        // such a panic counts as the command's when nothing else panicked.
        let (queues, raw) = (&mut self.queues, &mut self.raw);
        let discarded = panic::catch_unwind(AssertUnwindSafe(|| queues.discard()));
        let cleared = panic::catch_unwind(AssertUnwindSafe(|| raw.clear()));
        let outcome = outcome.and_then(|result| discarded.and(cleared).map(|()| result));
        self.reserve.settle(spawned);
        self.reserve.end_batch();
        // Cancels the reserved handles of dropped spawns, then tops up.
        self.reserve.connect(registry, false);
        self.reserve.adjust(registry);
        outcome.map_err(|payload| (index, payload))
    }
}

/// A panic caught while a command buffer was applied
/// ([`CommandBuffer::try_apply`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("command {index} of the buffer panicked while applied: {message}")]
pub struct CommandPanic {
    /// The command's index in the buffer's recording order (for a run of
    /// like commands applied as one batch, the run's first).
    pub index: usize,
    /// The panic's message (`<non-string panic payload>` when it has none).
    pub message: String,
}

/// Applies `buffers` to `registry` one after the other, in the order given
/// (each in recording order, each reserve topped up right after its own
/// commands), and returns one report for all of them. Placeholder
/// resolutions in the report carry each buffer's position.
///
/// This is the flush the scheduler runs after each wave, with the buffers
/// in system registration order.
///
/// # Panics
///
/// As [`CommandBuffer::apply`]; the buffers before the one that panicked
/// stay applied.
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, CommandKind, apply_all};
/// use ecs_engine::Registry;
///
/// let mut registry = Registry::new();
/// let victim = registry.spawn((0_u8,));
/// let mut buffers = [CommandBuffer::new(), CommandBuffer::new()];
/// buffers[1].despawn(victim); // recorded first, applied second
/// buffers[0].despawn(victim);
/// let report = apply_all(&mut registry, &mut buffers);
/// assert_eq!(report.applied(CommandKind::Despawn), 1);
/// assert_eq!(report.first_skip().unwrap().buffer, 1);
/// ```
#[track_caller]
pub fn apply_all<'a>(
    registry: &mut Registry,
    buffers: impl IntoIterator<Item = &'a mut CommandBuffer>,
) -> ApplyReport {
    let mut report = ApplyReport::default();
    for (index, buffer) in buffers.into_iter().enumerate() {
        let lenient = buffer.apply_into(registry, &mut report, ApplyMode::Lenient, index);
        debug_assert!(lenient.is_ok(), "lenient mode never fails");
    }
    report
}

/// [`apply_all`] with a choice of [`ApplyMode`].
///
/// # Errors
///
/// In [`ApplyMode::Strict`], the first skipped command, its
/// [`SkippedCommand::buffer`] naming its buffer, with the report of what was
/// applied before it. Earlier buffers are applied;
/// that buffer is applied up to the command and emptied; later buffers are
/// left as they were, still holding their commands.
///
/// # Panics
///
/// As [`apply_all`].
///
/// # Examples
///
/// ```
/// use command_buffer::{ApplyMode, CommandBuffer, apply_all_with};
/// use ecs_engine::Registry;
///
/// let mut registry = Registry::new();
/// let gone = registry.spawn(());
/// registry.despawn(gone).unwrap();
/// let mut buffers = [CommandBuffer::new(), CommandBuffer::new(), CommandBuffer::new()];
/// buffers[0].spawn_empty();
/// buffers[1].despawn(gone);
/// buffers[2].spawn_empty();
/// let error = apply_all_with(&mut registry, &mut buffers, ApplyMode::Strict).unwrap_err();
/// assert_eq!((error.skipped.buffer, error.skipped.index), (1, 0));
/// assert_eq!(error.report.total_applied(), 1);
/// assert_eq!((registry.len(), buffers[1].len(), buffers[2].len()), (1, 0, 1));
/// ```
#[track_caller]
pub fn apply_all_with<'a>(
    registry: &mut Registry,
    buffers: impl IntoIterator<Item = &'a mut CommandBuffer>,
    mode: ApplyMode,
) -> Result<ApplyReport, ApplyError> {
    let mut report = ApplyReport::default();
    for (index, buffer) in buffers.into_iter().enumerate() {
        if let Err(skipped) = buffer.apply_into(registry, &mut report, mode, index) {
            return Err(ApplyError {
                skipped,
                report: Box::new(report),
            });
        }
    }
    Ok(report)
}
