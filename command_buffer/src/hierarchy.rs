//! Hierarchy commands: attaching and detaching children, and despawning a
//! subtree, recorded now and applied with the rest of the buffer.
//!
//! They are counted under the existing [`CommandKind`]s, as the generic
//! commands on the same component would be: attaching as an
//! [`Insert`](CommandKind::Insert) of [`ChildOf`], detaching as a
//! [`Remove`](CommandKind::Remove) of `ChildOf` (a no-op for a root), and
//! a recursive despawn as one [`Despawn`](CommandKind::Despawn).
//!
//! `CommandBuffer` methods here: `set_parent`, `remove_parent` and
//! `despawn_recursive`.

use ecs_engine::{ChildOf, Entity};

use crate::apply::ApplyCtx;
use crate::report::Outcome;
use crate::storage::Command;
use crate::{CommandBuffer, CommandKind, SkippedCommand};

/// `Registry::set_parent`, deferred.
pub(crate) struct SetParent {
    child: Entity,
    parent: Entity,
}

impl Command for SetParent {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let child = ctx.resolve(self.child);
        let parent = ctx.resolve(self.parent);
        let result = ctx
            .registry
            .set_parent(child, parent)
            .map(|()| Outcome::Applied);
        ctx.finish_for::<ChildOf>(CommandKind::Insert, self.child, result)
    }
}

/// `Registry::remove_parent`, deferred.
pub(crate) struct RemoveParent {
    child: Entity,
}

impl Command for RemoveParent {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let child = ctx.resolve(self.child);
        let result = ctx.registry.remove_parent(child).map(|old| match old {
            Some(_) => Outcome::Applied,
            None => Outcome::NoOp,
        });
        ctx.finish_for::<ChildOf>(CommandKind::Remove, self.child, result)
    }
}

/// `Registry::despawn_recursive`, deferred.
pub(crate) struct DespawnRecursive {
    entity: Entity,
}

impl Command for DespawnRecursive {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let result = ctx
            .registry
            .despawn_recursive(target)
            .map(|_| Outcome::Applied);
        ctx.finish(CommandKind::Despawn, self.entity, None, result)
    }
}

impl CommandBuffer {
    /// Records making `child` a child of `parent`, as
    /// [`Registry::set_parent`](ecs_engine::Registry::set_parent): last in
    /// `parent`'s [`Children`](ecs_engine::Children). Counted as an
    /// [`Insert`](CommandKind::Insert) of [`ChildOf`]; skipped when either
    /// entity is not alive when the command runs, or when it would close a
    /// cycle. Either handle may be a [placeholder](crate::is_placeholder)
    /// from this buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let ship = registry.spawn(());
    /// let mut commands = CommandBuffer::new();
    /// let turret = commands.spawn(());
    /// commands.set_parent(turret, ship);
    /// let report = commands.apply(&mut registry);
    /// let turret = report.resolve(0, turret).unwrap_or(turret);
    /// assert_eq!(registry.children(ship), [turret]);
    /// ```
    pub fn set_parent(&mut self, child: Entity, parent: Entity) {
        self.queues.push(SetParent { child, parent });
    }

    /// Records detaching `child` from its parent, as
    /// [`Registry::remove_parent`](ecs_engine::Registry::remove_parent).
    /// Counted as a [`Remove`](CommandKind::Remove) of [`ChildOf`]: a
    /// no-op for a root, skipped when `child` is not alive.
    pub fn remove_parent(&mut self, child: Entity) {
        self.queues.push(RemoveParent { child });
    }

    /// Records despawning `entity` with its whole subtree, as
    /// [`Registry::despawn_recursive`](ecs_engine::Registry::despawn_recursive).
    /// Counted as one [`Despawn`](CommandKind::Despawn); skipped when
    /// `entity` is not alive when the command runs (a subtree already
    /// despawned by an earlier command, for instance). A plain
    /// [`despawn`](Self::despawn) detaches the children instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::{CommandBuffer, CommandKind};
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [ship, turret] = [(); 2].map(|()| registry.spawn(()));
    /// registry.set_parent(turret, ship).unwrap();
    /// let mut commands = CommandBuffer::new();
    /// commands.despawn_recursive(ship);
    /// commands.despawn_recursive(turret);
    /// let report = commands.apply(&mut registry);
    /// assert!(registry.is_empty());
    /// assert_eq!(report.applied(CommandKind::Despawn), 1);
    /// assert_eq!(report.skipped(CommandKind::Despawn), 1);
    /// ```
    pub fn despawn_recursive(&mut self, entity: Entity) {
        self.queues.push(DespawnRecursive { entity });
    }
}
