//! What applying command buffers did: per-kind counts, the placeholders that
//! got real ids, and the error strict mode returns.
//!
//! Every applied command ends in exactly one of three outcomes, so
//! `applied + skipped + noops` over all kinds is the number of commands that
//! were applied:
//!
//! - *applied*: it changed the registry as asked;
//! - *skipped*: its target entity was not alive at that moment (or a spawn
//!   could not get its entity), so it changed nothing; its payload was
//!   dropped;
//! - *no-op*: it was valid but had nothing to do (removing a component or a
//!   resource that is not there).
//!
//! The commands of a system that failed are not applied at all: the
//! schedule counts them as *discarded* in that system's report and the
//! tick's ([`ApplyReport::discarded`]), apart from the three outcomes.

use std::borrow::Cow;
use std::fmt;

use ecs_engine::{EcsError, Entity};

/// The kinds of command a [`CommandBuffer`](crate::CommandBuffer) records, as
/// counted in an [`ApplyReport`].
///
/// # Examples
///
/// ```
/// use command_buffer::CommandKind;
///
/// assert_eq!(CommandKind::InsertBundle.to_string(), "insert_bundle");
/// assert_eq!(CommandKind::ALL.len(), 10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommandKind {
    /// [`CommandBuffer::spawn`](crate::CommandBuffer::spawn) and
    /// [`spawn_empty`](crate::CommandBuffer::spawn_empty).
    Spawn,
    /// [`CommandBuffer::despawn`](crate::CommandBuffer::despawn).
    Despawn,
    /// [`CommandBuffer::insert`](crate::CommandBuffer::insert).
    Insert,
    /// [`CommandBuffer::insert_bundle`](crate::CommandBuffer::insert_bundle).
    InsertBundle,
    /// [`CommandBuffer::remove`](crate::CommandBuffer::remove).
    Remove,
    /// [`CommandBuffer::insert_resource`](crate::CommandBuffer::insert_resource).
    InsertResource,
    /// [`CommandBuffer::remove_resource`](crate::CommandBuffer::remove_resource).
    RemoveResource,
    /// A closure recorded with [`CommandBuffer::push`](crate::CommandBuffer::push).
    Custom,
    /// [`CommandBuffer::insert_raw`](crate::CommandBuffer::insert_raw): a
    /// run-time component value.
    InsertRaw,
    /// [`CommandBuffer::remove_by_id`](crate::CommandBuffer::remove_by_id).
    RemoveById,
}

impl CommandKind {
    /// Every kind, in declaration order.
    pub const ALL: [CommandKind; 10] = [
        CommandKind::Spawn,
        CommandKind::Despawn,
        CommandKind::Insert,
        CommandKind::InsertBundle,
        CommandKind::Remove,
        CommandKind::InsertResource,
        CommandKind::RemoveResource,
        CommandKind::Custom,
        CommandKind::InsertRaw,
        CommandKind::RemoveById,
    ];

    /// The name of the recording method, e.g. `"insert_bundle"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandKind;
    ///
    /// assert_eq!(CommandKind::RemoveResource.name(), "remove_resource");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            CommandKind::Spawn => "spawn",
            CommandKind::Despawn => "despawn",
            CommandKind::Insert => "insert",
            CommandKind::InsertBundle => "insert_bundle",
            CommandKind::Remove => "remove",
            CommandKind::InsertResource => "insert_resource",
            CommandKind::RemoveResource => "remove_resource",
            CommandKind::Custom => "custom",
            CommandKind::InsertRaw => "insert_raw",
            CommandKind::RemoveById => "remove_by_id",
        }
    }
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A command that was skipped because its target was not alive when it
/// ran (or a spawn that could not create its entity). Kept as
/// [`ApplyReport::skips`] (the first few) in lenient mode; in strict mode it stops the
/// apply, as [`ApplyError::skipped`].
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, CommandKind, SkippedCommand};
/// use ecs_engine::{EcsError, Registry};
///
/// let mut registry = Registry::new();
/// let gone = registry.spawn(());
/// registry.despawn(gone).unwrap();
///
/// let mut commands = CommandBuffer::new();
/// commands.insert(gone, 7_u32);
/// let report = commands.apply(&mut registry);
/// assert_eq!(
///     report.first_skip(),
///     Some(&SkippedCommand {
///         buffer: 0,
///         index: 0,
///         kind: CommandKind::Insert,
///         entity: gone,
///         type_name: Some("u32".into()),
///         reason: EcsError::NoSuchEntity { entity: gone },
///     })
/// );
/// assert_eq!(
///     report.first_skip().unwrap().to_string(),
///     "command #0 of buffer 0 (insert `u32` on 0:1) was skipped: \
///      entity 0:1 is not alive (null, stale or never allocated)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedCommand {
    /// Position of the buffer in the list given to
    /// [`apply_all`](crate::apply_all); 0 for a single buffer.
    pub buffer: usize,
    /// Position of the command in its buffer's recording order (0-based).
    pub index: usize,
    /// What the command was.
    pub kind: CommandKind,
    /// The entity handle as recorded (a reserved handle or a placeholder for
    /// a spawn); [`Entity::NULL`] for commands without one.
    pub entity: Entity,
    /// The component, bundle or resource type, if the command has one (for
    /// a run-time component: its registered name).
    pub type_name: Option<Cow<'static, str>>,
    /// Why it was skipped: [`EcsError::NoSuchEntity`] for a target that is
    /// not alive (or a spawn whose reserved handle was no longer reserved),
    /// [`EcsError::TooManyEntities`] for a placeholder spawn past the live
    /// limit.
    pub reason: EcsError,
}

impl fmt::Display for SkippedCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "command #{} of buffer {} ({}) was skipped: {}",
            self.index,
            self.buffer,
            describe(self.kind, self.type_name.as_deref(), self.entity),
            self.reason
        )
    }
}

/// Strict mode ([`ApplyMode::Strict`](crate::ApplyMode::Strict)) stopped at
/// a skipped command. The commands before it were applied (and are counted
/// in [`report`](Self::report), with the entities created for their
/// placeholders); it and the rest of its buffer were dropped.
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, CommandKind, ReservePolicy};
/// use ecs_engine::Registry;
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
/// let e = commands.spawn((1_u8,));
/// commands.despawn(e);
/// commands.despawn(e);
/// let error = commands.apply_strict(&mut registry).unwrap_err();
/// assert_eq!((error.skipped.index, error.skipped.kind), (2, CommandKind::Despawn));
/// assert_eq!(error.report.total_applied(), 2);
/// assert!(error.report.resolve(0, e).is_some());
/// assert!(error.to_string().starts_with("strict apply stopped: command #2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("strict apply stopped: {skipped}")]
pub struct ApplyError {
    /// The command that was skipped.
    pub skipped: SkippedCommand,
    /// What was applied before it, across every buffer of the flush.
    pub report: Box<ApplyReport>,
}

fn describe(kind: CommandKind, type_name: Option<&str>, entity: Entity) -> String {
    let mut text = kind.name().to_owned();
    if let Some(name) = type_name {
        text.push_str(&format!(" `{name}`"));
    }
    if entity != Entity::NULL {
        text.push_str(&format!(" on {entity}"));
    }
    text
}

/// One spawn that was recorded with a placeholder handle (the buffer's
/// reserve was empty) and the real entity apply created for it.
///
/// See [`is_placeholder`](crate::is_placeholder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedPlaceholder {
    /// Position of the buffer in the applied list; 0 for a single buffer.
    pub buffer: usize,
    /// The handle [`CommandBuffer::spawn`](crate::CommandBuffer::spawn)
    /// returned.
    pub placeholder: Entity,
    /// The entity created for it; `None` when the spawn was skipped (the
    /// live-entity limit was reached).
    pub entity: Option<Entity>,
}

const KINDS: usize = CommandKind::ALL.len();

/// What [`CommandBuffer::apply`](crate::CommandBuffer::apply) or
/// [`apply_all`](crate::apply_all) did: how many commands of each kind were
/// applied, skipped (target not alive) or were no-ops (nothing to remove),
/// and the entities created for placeholder handles.
///
/// A report is built without allocating unless commands were skipped or
/// placeholders resolved.
///
/// # Examples
///
/// ```
/// use command_buffer::{CommandBuffer, CommandKind};
/// use ecs_engine::Registry;
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::new();
/// let e = commands.spawn((1_u8,));
/// commands.despawn(e);
/// commands.despawn(e); // already gone when it runs: skipped
/// commands.remove::<u16>(e); // skipped too
/// let report = commands.apply(&mut registry);
///
/// assert_eq!(report.applied(CommandKind::Spawn), 1);
/// assert_eq!(report.applied(CommandKind::Despawn), 1);
/// assert_eq!(report.skipped(CommandKind::Despawn), 1);
/// assert_eq!(report.skipped(CommandKind::Remove), 1);
/// assert_eq!((report.total_skipped(), report.commands()), (2, 4));
/// assert_eq!(report.first_skip().unwrap().index, 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyReport {
    applied: [usize; KINDS],
    skipped: [usize; KINDS],
    noops: [usize; KINDS],
    pub(crate) placeholders: Vec<ResolvedPlaceholder>,
    /// The first skipped command (kept inline: a single skip allocates
    /// nothing).
    first_skip: Option<SkippedCommand>,
    /// The next ones, up to [`ApplyReport::KEPT_SKIPS`] in all.
    more_skips: Vec<SkippedCommand>,
    /// Commands dropped unapplied with a failed system's buffer.
    discarded: usize,
}

impl ApplyReport {
    /// How many skipped commands a report keeps in full
    /// ([`skips`](Self::skips)); the rest are only counted.
    pub const KEPT_SKIPS: usize = 8;

    /// The first skipped commands, in the order they ran, at most
    /// [`KEPT_SKIPS`](Self::KEPT_SKIPS) of them (the counts by kind cover
    /// every one). Keeping the first allocates nothing; the next ones
    /// share one small allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{ApplyReport, CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn(());
    /// registry.despawn(e).unwrap();
    /// let mut commands = CommandBuffer::new();
    /// for _ in 0..20 {
    ///     commands.despawn(e);
    /// }
    /// let report = commands.apply(&mut registry);
    /// assert_eq!(report.skipped(CommandKind::Despawn), 20);
    /// assert_eq!(report.skips().count(), ApplyReport::KEPT_SKIPS);
    /// assert_eq!(report.skips().nth(3).unwrap().index, 3);
    /// ```
    pub fn skips(&self) -> impl Iterator<Item = &SkippedCommand> {
        // `more_skips` is empty whenever `first_skip` is `None`.
        self.first_skip.iter().chain(self.more_skips.iter())
    }

    /// Keeps `skip` if fewer than [`KEPT_SKIPS`](Self::KEPT_SKIPS) are kept.
    fn keep_skip(&mut self, skip: SkippedCommand) {
        if self.first_skip.is_none() {
            self.first_skip = Some(skip);
        } else if self.more_skips.len() + 1 < Self::KEPT_SKIPS {
            self.more_skips.push(skip);
        }
    }

    /// Adds `other`'s counts, kept skipped commands (up to
    /// [`KEPT_SKIPS`](Self::KEPT_SKIPS) in all) and placeholders to this
    /// report, relabelling `other`'s skipped commands and placeholders as
    /// buffer `buffer` (the scheduler passes the system's registration
    /// index).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{ApplyReport, CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn(());
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.despawn(e);
    /// let mut tick = ApplyReport::default();
    /// tick.merge(&commands.apply(&mut registry), 3);
    /// assert_eq!((tick.applied(CommandKind::Despawn), tick.skipped(CommandKind::Despawn)), (1, 1));
    /// assert_eq!(tick.first_skip().unwrap().buffer, 3);
    /// ```
    pub fn merge(&mut self, other: &ApplyReport, buffer: usize) {
        for i in 0..KINDS {
            self.applied[i] += other.applied[i];
            self.skipped[i] += other.skipped[i];
            self.noops[i] += other.noops[i];
        }
        self.discarded += other.discarded;
        for skip in other.skips() {
            self.keep_skip(SkippedCommand {
                buffer,
                ..skip.clone()
            });
        }
        self.placeholders.extend(
            other
                .placeholders
                .iter()
                .map(|resolved| ResolvedPlaceholder {
                    buffer,
                    ..*resolved
                }),
        );
    }

    /// Commands of `kind` that changed the registry.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.insert(e, 2_u8);
    /// assert_eq!(commands.apply(&mut registry).applied(CommandKind::Insert), 1);
    /// ```
    pub fn applied(&self, kind: CommandKind) -> usize {
        self.applied[kind as usize]
    }

    /// Commands of `kind` skipped because their target was not alive when
    /// they ran (or, for a spawn, its entity could not be created).
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.insert(e, 2_u8);
    /// assert_eq!(commands.apply(&mut registry).skipped(CommandKind::Insert), 1);
    /// ```
    pub fn skipped(&self, kind: CommandKind) -> usize {
        self.skipped[kind as usize]
    }

    /// Commands of `kind` that had nothing to do: a [`remove`] of a
    /// component the (live) entity did not have, a [`remove_resource`] of an
    /// absent resource. Never an error, not even in strict mode.
    ///
    /// [`remove`]: crate::CommandBuffer::remove
    /// [`remove_resource`]: crate::CommandBuffer::remove_resource
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.remove::<u16>(e);
    /// assert_eq!(commands.apply(&mut registry).noops(CommandKind::Remove), 1);
    /// ```
    pub fn noops(&self, kind: CommandKind) -> usize {
        self.noops[kind as usize]
    }

    /// Applied commands of every kind.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.insert(e, 2_u8);
    /// commands.insert_resource(3_u32);
    /// assert_eq!(commands.apply(&mut registry).total_applied(), 2);
    /// ```
    pub fn total_applied(&self) -> usize {
        self.applied.iter().sum()
    }

    /// Skipped commands of every kind.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.despawn(e);
    /// commands.remove::<u8>(e);
    /// assert_eq!(commands.apply(&mut registry).total_skipped(), 2);
    /// ```
    pub fn total_skipped(&self) -> usize {
        self.skipped.iter().sum()
    }

    /// No-op commands of every kind.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.remove::<u16>(e);
    /// commands.remove_resource::<u64>();
    /// assert_eq!(commands.apply(&mut registry).total_noops(), 2);
    /// ```
    pub fn total_noops(&self) -> usize {
        self.noops.iter().sum()
    }

    /// Every command the apply ran: applied, skipped or no-op.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.insert(e, 2_u8);
    /// commands.remove::<u16>(e);
    /// commands.despawn(e);
    /// commands.despawn(e);
    /// assert_eq!(commands.apply(&mut registry).commands(), 4);
    /// ```
    pub fn commands(&self) -> usize {
        self.total_applied() + self.total_skipped() + self.total_noops()
    }

    /// Commands dropped unapplied because the system that recorded them
    /// failed (returned an error or panicked): its whole buffer, whatever
    /// the kinds. Not part of [`commands`](Self::commands), which counts
    /// the commands that were applied. The schedule sets it in the failed
    /// system's report and adds it to the tick's; a buffer applied by
    /// hand discards nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::ApplyReport;
    ///
    /// let mut failed = ApplyReport::default();
    /// failed.discard(3);
    /// let mut tick = ApplyReport::default();
    /// tick.merge(&failed, 0);
    /// assert_eq!((tick.discarded(), tick.commands()), (3, 0));
    /// ```
    pub fn discarded(&self) -> usize {
        self.discarded
    }

    /// Counts `commands` more as [`discarded`](Self::discarded): what the
    /// schedule records for a failed system's buffer as it drops it.
    pub fn discard(&mut self, commands: usize) {
        self.discarded += commands;
    }

    /// The first skipped command (the one strict mode would have stopped
    /// at); `None` when nothing was skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.insert(e, 2_u8);
    /// let report = commands.apply(&mut registry);
    /// let skip = report.first_skip().unwrap();
    /// assert_eq!((skip.index, skip.kind, skip.entity), (1, CommandKind::Insert, e));
    /// ```
    pub fn first_skip(&self) -> Option<&SkippedCommand> {
        self.first_skip.as_ref()
    }

    /// Every placeholder handle the applied buffers handed out, with the
    /// entity created for it, in apply order.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    /// let placeholder = commands.spawn_empty();
    /// let report = commands.apply(&mut registry);
    /// let resolved = report.placeholders()[0];
    /// assert_eq!((resolved.buffer, resolved.placeholder), (0, placeholder));
    /// assert!(registry.is_alive(resolved.entity.unwrap()));
    /// ```
    pub fn placeholders(&self) -> &[ResolvedPlaceholder] {
        &self.placeholders
    }

    /// The entity created for `placeholder`, recorded in the buffer at
    /// position `buffer`; `None` if there is no such placeholder in this
    /// report or its spawn was skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, ReservePolicy, apply_all};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut buffers = [
    ///     CommandBuffer::with_policy(ReservePolicy::NONE),
    ///     CommandBuffer::with_policy(ReservePolicy::NONE),
    /// ];
    /// let first = buffers[0].spawn((1_u8,));
    /// let second = buffers[1].spawn((2_u8,));
    /// assert_eq!(first, second, "placeholders are numbered per buffer");
    /// let report = apply_all(&mut registry, &mut buffers);
    /// assert_eq!(registry.get::<u8>(report.resolve(1, second).unwrap()), Some(&2));
    /// assert_eq!(report.resolve(2, second), None);
    /// ```
    pub fn resolve(&self, buffer: usize, placeholder: Entity) -> Option<Entity> {
        self.placeholders
            .iter()
            .find(|p| p.buffer == buffer && p.placeholder == placeholder)
            .and_then(|p| p.entity)
    }

    /// Counts `n` commands of `kind` that were applied.
    #[inline]
    pub(crate) fn count_applied(&mut self, kind: CommandKind, n: usize) {
        self.applied[kind as usize] += n;
    }

    pub(crate) fn count(&mut self, kind: CommandKind, outcome: Result<Outcome, &SkippedCommand>) {
        let i = kind as usize;
        match outcome {
            Ok(Outcome::Applied) => self.applied[i] += 1,
            Ok(Outcome::NoOp) => self.noops[i] += 1,
            Err(error) => {
                self.skipped[i] += 1;
                self.keep_skip(error.clone());
            }
        }
    }
}

/// How a command that ran ended, when it was not skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Applied,
    NoOp,
}
