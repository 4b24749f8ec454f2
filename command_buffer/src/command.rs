//! The [`Command`] trait and the command types a buffer stores, and what
//! each does when applied.
//!
//! Each command resolves its target handle first (a placeholder from the
//! same buffer becomes the entity apply created for it), then calls the
//! registry operation that checks liveness itself, so a handle that is not
//! alive at that moment, a stale one included, is refused by generation and
//! never reaches a reused slot. A refused command's payload is dropped by
//! the registry.
//!
//! The hierarchy commands (attaching and detaching children, despawning a
//! subtree) are counted under the existing [`CommandKind`]s, as the
//! generic commands on the same component would be: attaching as an
//! [`Insert`](CommandKind::Insert) of [`ChildOf`], detaching as a
//! [`Remove`](CommandKind::Remove) of `ChildOf` (a no-op for a root), and
//! a recursive despawn as one [`Despawn`](CommandKind::Despawn).
//!
//! Every command implements [`Command`], which `storage` applies them
//! through.

use std::any::TypeId;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::VecDeque;
use std::marker::PhantomData;

use ecs_engine::{
    Bundle, ChildOf, Children, Component, ComponentId, Disabled, EcsError, Entity, InsertError,
    RawSlot, Registry,
};

use crate::apply::ApplyCtx;
use crate::observe::{self, Hook};
use crate::report::Outcome;
use crate::{CommandKind, SkippedCommand, is_placeholder};

/// One recorded command, applied by value.
pub(crate) trait Command: Send + 'static {
    /// Runs the command against `ctx`'s registry and counts its outcome.
    ///
    /// # Errors
    ///
    /// In strict mode, when the command was skipped.
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand>;

    /// Applies the oldest `len` commands of `queue`, a run of consecutive
    /// commands of this type, in order. The default applies them one by
    /// one; the hot commands override it with a loop that hoists what the
    /// run's commands share. Stops at the first error (strict mode); the
    /// rest of the run is then dropped.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    #[inline]
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand>
    where
        Self: Sized,
    {
        for command in queue.drain(..len) {
            command.apply(ctx)?;
        }
        Ok(())
    }

    /// `true` for the spawn commands whose runs
    /// [`apply_spawns`](Self::apply_spawns) can apply grouped with the
    /// spawn runs of other bundle types around them (those the registry
    /// never refuses on a reserved handle).
    fn groups_spawns() -> bool {
        false
    }

    /// Applies the oldest `handles.len()` commands of `queue`, spawns whose
    /// reserved handles are `handles` (checked to be reserved), as one
    /// batch. Only called when [`groups_spawns`](Self::groups_spawns) is
    /// `true`.
    ///
    /// # Errors
    ///
    /// `Err((k, error))` when `handles[k]` could not be activated: the
    /// spawns before it are applied, it and the rest dropped.
    fn apply_spawns(
        queue: &mut VecDeque<Self>,
        handles: &[Entity],
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), (usize, EcsError)>
    where
        Self: Sized,
    {
        let _ = (queue, handles, ctx);
        unreachable!("apply_spawns is only called on spawn commands")
    }
}

/// Spawn of a bundle. Its handle is not stored: the `k`-th spawn of a batch
/// gets the `k`-th handle the reserve handed out, or a placeholder.
pub(crate) struct Spawn<B> {
    pub(crate) bundle: B,
}

impl<B: Bundle> Command for Spawn<B> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let entity = ctx.next_spawn();
        let spawned = if is_placeholder(entity) {
            let spawned = ctx.registry.try_spawn(self.bundle);
            ctx.resolved(entity, spawned.as_ref().ok().copied());
            spawned
        } else {
            ctx.registry
                .spawn_reserved(entity, self.bundle)
                .map(|()| entity)
        };
        if ctx.observing
            && let Ok(spawned) = spawned
        {
            observe::fire_spawned(ctx.registry, spawned);
        }
        let result = spawned.map(|_| Outcome::Applied);
        ctx.finish_for::<B>(CommandKind::Spawn, entity, result)
    }

    /// The spawns with reserved handles go to the registry as one batch
    /// (each pool found and grown once); a handle that is no longer
    /// reserved is skipped as in `apply`, and the batch goes on after it.
    /// Placeholder spawns, which always come last, run one by one.
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand> {
        let mut bundles = queue.drain(..len).map(|spawn| spawn.bundle);
        // An observed world spawns one at a time, to fire the hooks of
        // each in order.
        let mut left = if ctx.observing { 0 } else { len };
        while left > 0 {
            let reserved = ctx.next_reserved_spawns(left);
            if reserved.is_empty() {
                break;
            }
            match ctx.registry.spawn_reserved_batch(reserved, &mut bundles) {
                Ok(()) => {
                    ctx.applied_run(CommandKind::Spawn, reserved.len());
                    left -= reserved.len();
                }
                Err((k, reason)) => {
                    ctx.applied_run(CommandKind::Spawn, k);
                    let entity = ctx.next_spawn();
                    ctx.finish_for::<B>(CommandKind::Spawn, entity, Err(reason))?;
                    left -= k + 1;
                }
            }
        }
        for bundle in bundles {
            Spawn { bundle }.apply(ctx)?;
        }
        Ok(())
    }

    fn groups_spawns() -> bool {
        // A bundle with a hierarchy value, a type that cannot be a
        // component or a type named twice is refused: one by one, in order.
        !B::names_hierarchy() && B::not_a_component().is_none() && B::duplicate().is_none()
    }

    fn apply_spawns(
        queue: &mut VecDeque<Self>,
        handles: &[Entity],
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), (usize, EcsError)> {
        let mut bundles = queue.drain(..handles.len()).map(|spawn| spawn.bundle);
        ctx.registry.spawn_reserved_batch(handles, &mut bundles)
    }
}

/// Spawn of a child of `parent` ([`ChildBuilder::spawn`](crate::ChildBuilder::spawn)),
/// the link recorded next as a [`SetParent`]. When `parent` is not alive
/// as the command runs, nothing is spawned (bevy's `with_children` on a
/// despawned entity spawns nothing either): the spawn is skipped and
/// reported with [`EcsError::NoSuchEntity`] naming the parent, its
/// reserved handle is given back, and the link and every later command
/// about the child are skipped as commands on a dead entity are. Never
/// grouped with other spawns, so the check runs in recording order.
pub(crate) struct SpawnChild<B> {
    pub(crate) parent: Entity,
    pub(crate) bundle: B,
}

impl<B: Bundle> Command for SpawnChild<B> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let parent = ctx.resolve(self.parent);
        if ctx.registry.is_alive(parent) {
            return Spawn {
                bundle: self.bundle,
            }
            .apply(ctx);
        }
        let entity = ctx.next_spawn();
        if is_placeholder(entity) {
            ctx.resolved(entity, None);
        } else {
            // A lane handle that was never reserved has nothing to give back.
            let _ = ctx.registry.cancel_reserved(entity);
        }
        drop(self.bundle);
        let reason = EcsError::NoSuchEntity { entity: parent };
        ctx.finish_for::<B>(CommandKind::Spawn, entity, Err(reason))
    }
}

/// Despawns handed to the registry at once by a run of despawns.
const DESPAWN_BATCH: usize = 512;

pub(crate) struct Despawn {
    pub(crate) entity: Entity,
}

/// Despawns `target` (its subtree when `recursive`), firing
/// [`Hook::Remove`](crate::Hook::Remove) for the observed components it
/// had once it is gone, then the hooks of the links it changed on the
/// entities left (see [`observe::fire_links`]).
fn despawn_observed(
    ctx: &mut ApplyCtx<'_>,
    target: Entity,
    recursive: bool,
) -> Result<(), EcsError> {
    let mut hooks = Vec::new();
    let mut links = None;
    if ctx.observing && ctx.registry.is_alive(target) {
        observe::despawn_hooks(ctx.registry, target, recursive, &mut hooks);
        // Its parent's list shrinks; a plain despawn detaches its children.
        let reached = observe::neighbours(ctx.registry, target, !recursive);
        links = observe::links_before(ctx.registry, reached);
    }
    if recursive {
        ctx.registry.despawn_recursive(target)?;
    } else {
        ctx.registry.despawn(target)?;
    }
    observe::fire_all(ctx.registry, hooks);
    observe::fire_links(ctx.registry, links, None);
    Ok(())
}

impl Command for Despawn {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let result = despawn_observed(ctx, target, false).map(|()| Outcome::Applied);
        ctx.finish(CommandKind::Despawn, self.entity, None, result)
    }

    /// As `apply` for each, counting the applied ones in bulk, the run
    /// given to the registry as one batch (`Registry::despawn_many`).
    /// Despawns own nothing to drop, so the run is read in place and
    /// removed from the queue at the end (after an error, `discard`
    /// removes it).
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand> {
        let remap = ctx.has_placeholders();
        // An observed world despawns one at a time, to fire the hooks of
        // each in order.
        if len > 1 && !ctx.observing {
            // Batches for the registry (components removed pool by pool),
            // staged on the stack so a warm buffer allocates nothing; a
            // target that is not alive is reported as `apply` would, and
            // the batch goes on after it.
            let mut targets = [Entity::NULL; DESPAWN_BATCH];
            let mut done = 0;
            while done < len {
                let n = (len - done).min(DESPAWN_BATCH);
                for (slot, d) in targets.iter_mut().zip(queue.range(done..done + n)) {
                    *slot = if remap {
                        ctx.resolve(d.entity)
                    } else {
                        d.entity
                    };
                }
                let mut rest = 0;
                while rest < n {
                    match ctx.registry.despawn_many(&targets[rest..n]) {
                        Ok(()) => {
                            ctx.applied_run(CommandKind::Despawn, n - rest);
                            rest = n;
                        }
                        Err((at, reason)) => {
                            let entity = queue[done + rest + at].entity;
                            ctx.applied_run(CommandKind::Despawn, at);
                            rest += at + 1;
                            ctx.finish(CommandKind::Despawn, entity, None, Err(reason))?;
                        }
                    }
                }
                done += n;
            }
            queue.drain(..len);
            return Ok(());
        }
        let mut applied = 0;
        let (front, back) = queue.as_slices();
        for &Despawn { entity } in front.iter().chain(back).take(len) {
            let target = if remap { ctx.resolve(entity) } else { entity };
            if let Err(reason) = despawn_observed(ctx, target, false) {
                ctx.applied_run(CommandKind::Despawn, std::mem::take(&mut applied));
                ctx.finish(CommandKind::Despawn, entity, None, Err(reason))?;
            } else {
                applied += 1;
            }
        }
        ctx.applied_run(CommandKind::Despawn, applied);
        queue.drain(..len);
        Ok(())
    }
}

pub(crate) struct Insert<T> {
    pub(crate) entity: Entity,
    pub(crate) value: T,
}

impl<T: Component> Command for Insert<T> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let hooked = ctx.observing && observe::insert_concerns::<(T,)>(ctx.registry);
        let lacking = if hooked {
            observe::lacking(ctx.registry, target)
        } else {
            Vec::new()
        };
        let result = ctx.registry.insert(target, self.value).map(|_replaced| {
            if hooked {
                let ty = TypeId::of::<T>();
                observe::fire_inserted(ctx.registry, target, &lacking, |t| t == ty);
            }
            Outcome::Applied
        });
        ctx.finish_for::<T>(CommandKind::Insert, self.entity, result)
    }

    /// Without placeholders to resolve, the run goes to the registry as
    /// one batch (the pool found once); a target that is not alive is
    /// skipped as in `apply`, and the batch goes on after it.
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand> {
        // Observed: one by one, for the hooks of the type and of the
        // components it requires (when either may be observed).
        let hooked = ctx.observing && observe::insert_concerns::<(T,)>(ctx.registry);
        if ctx.has_placeholders() || hooked {
            return apply_each(queue, len, ctx);
        }
        let last = Cell::new(Entity::NULL);
        let mut items = queue.drain(..len).map(|Insert { entity, value }| {
            last.set(entity);
            (entity, value)
        });
        ctx.apply_batches::<T, _>(
            CommandKind::Insert,
            &last,
            |registry| registry.insert_many(&mut items),
            |InsertError { error, value }| {
                drop(value);
                Err(error)
            },
        )
    }
}

pub(crate) struct InsertBundle<B> {
    pub(crate) entity: Entity,
    pub(crate) bundle: B,
}

impl<B: Bundle> InsertBundle<B> {
    /// Applies the insert, firing its hooks when `hooked` (an observed
    /// world where `B` concerns an observed type: see
    /// `observe::insert_concerns`).
    #[inline]
    fn apply_hooked(self, ctx: &mut ApplyCtx<'_>, hooked: bool) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let result = if hooked {
            insert_bundle_observed(ctx.registry, target, self.bundle)
        } else {
            ctx.registry.insert_bundle(target, self.bundle)
        };
        let result = result.map(|()| Outcome::Applied);
        ctx.finish_for::<B>(CommandKind::InsertBundle, self.entity, result)
    }
}

impl<B: Bundle> Command for InsertBundle<B> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let hooked = ctx.observing && observe::insert_concerns::<B>(ctx.registry);
        self.apply_hooked(ctx, hooked)
    }

    /// One by one, as `apply`, whether the run fires hooks decided once.
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand> {
        let hooked = ctx.observing && observe::insert_concerns::<B>(ctx.registry);
        for command in queue.drain(..len) {
            command.apply_hooked(ctx, hooked)?;
        }
        Ok(())
    }
}

/// `Registry::insert_bundle` in an observed world: firing the hooks of
/// each observed component, as an `Insert` command does. Out of line, so
/// the unobserved path stays as it was.
#[cold]
#[inline(never)]
fn insert_bundle_observed<B: Bundle>(
    registry: &mut Registry,
    target: Entity,
    bundle: B,
) -> Result<(), EcsError> {
    let lacking = observe::lacking(registry, target);
    registry.insert_bundle(target, bundle)?;
    observe::fire_inserted(registry, target, &lacking, B::has_type);
    Ok(())
}

pub(crate) struct Remove<T> {
    pub(crate) entity: Entity,
    pub(crate) component: PhantomData<fn() -> T>,
}

impl<T: Component> Command for Remove<T> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let ty = TypeId::of::<T>();
        // A link's removal also changes its parent's list or its children.
        let links = (ctx.observing && observe::is_link(ty) && ctx.registry.is_alive(target))
            .then(|| {
                let reached = observe::neighbours(ctx.registry, target, true);
                observe::links_before(ctx.registry, reached)
            })
            .flatten();
        let result = match ctx.registry.remove::<T>(target) {
            Ok(_removed) => {
                if ctx.observing && observe::observed::<T>(ctx.registry) {
                    observe::fire_removed(ctx.registry, target, vec![ty]);
                }
                observe::fire_links(ctx.registry, links, None);
                Ok(Outcome::Applied)
            }
            Err(EcsError::MissingComponent { .. }) => Ok(Outcome::NoOp),
            Err(error) => Err(error),
        };
        ctx.finish_for::<T>(CommandKind::Remove, self.entity, result)
    }

    /// Without placeholders to resolve, the run goes to the registry as
    /// one batch (the pool found once); a target that is not alive is
    /// skipped, one without a `T` is a no-op, as in `apply`, and the batch
    /// goes on after it.
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand> {
        // Observed: one by one, for the hooks of the type and those of
        // the links a `ChildOf` or `Children` removal changes.
        let hooked = ctx.observing
            && (observe::is_link(TypeId::of::<T>()) || observe::observed::<T>(ctx.registry));
        if ctx.has_placeholders() || hooked {
            return apply_each(queue, len, ctx);
        }
        // Removals own nothing to drop: read in place, as despawns.
        let last = Cell::new(Entity::NULL);
        let (front, back) = queue.as_slices();
        let mut entities = front.iter().chain(back).take(len).map(|command| {
            last.set(command.entity);
            command.entity
        });
        ctx.apply_batches::<T, _>(
            CommandKind::Remove,
            &last,
            |registry| registry.remove_many::<T>(&mut entities),
            |error| match error {
                EcsError::MissingComponent { .. } => Ok(Outcome::NoOp),
                error => Err(error),
            },
        )?;
        queue.drain(..len);
        Ok(())
    }
}

/// Removal of every component of a bundle that the entity has.
pub(crate) struct RemoveBundle<B> {
    pub(crate) entity: Entity,
    pub(crate) bundle: PhantomData<fn() -> B>,
}

impl<B: Bundle> Command for RemoveBundle<B> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let mut present = Vec::new();
        let mut links = None;
        if ctx.observing && ctx.registry.is_alive(target) {
            present = observe::present(ctx.registry, target, |_, ty| B::has_type(ty));
            if B::names_hierarchy() {
                let reached = observe::neighbours(ctx.registry, target, true);
                links = observe::links_before(ctx.registry, reached);
            }
        }
        let result = ctx.registry.remove_bundle::<B>(target).map(|()| {
            observe::fire_removed(ctx.registry, target, present);
            observe::fire_links(ctx.registry, links, None);
            Outcome::Applied
        });
        ctx.finish_for::<B>(CommandKind::Remove, self.entity, result)
    }
}

/// Applies the first `len` commands of `queue` one by one, in order (the
/// path of a run whose targets may be placeholders to resolve).
fn apply_each<C: Command>(
    queue: &mut VecDeque<C>,
    len: usize,
    ctx: &mut ApplyCtx<'_>,
) -> Result<(), SkippedCommand> {
    for command in queue.drain(..len) {
        command.apply(ctx)?;
    }
    Ok(())
}

pub(crate) struct InsertResource<R> {
    pub(crate) value: R,
}

impl<R: Send + Sync + 'static> Command for InsertResource<R> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        ctx.registry.insert_resource(self.value);
        ctx.finish_for::<R>(
            CommandKind::InsertResource,
            Entity::NULL,
            Ok(Outcome::Applied),
        )
    }
}

pub(crate) struct RemoveResource<R> {
    pub(crate) resource: PhantomData<fn() -> R>,
}

impl<R: Send + Sync + 'static> Command for RemoveResource<R> {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let outcome = match ctx.registry.remove_resource::<R>() {
            Some(_removed) => Outcome::Applied,
            None => Outcome::NoOp,
        };
        ctx.finish_for::<R>(CommandKind::RemoveResource, Entity::NULL, Ok(outcome))
    }
}

/// The name of component `id` in the registry, for a skipped command.
fn component_name(registry: &Registry, id: ComponentId) -> Cow<'static, str> {
    match registry.component_info(id) {
        Some(info) => Cow::Owned(info.name().to_owned()),
        None => Cow::Owned(format!("component {id}")),
    }
}

/// Insert of a run-time component value held in the buffer's arena.
pub(crate) struct InsertRaw {
    pub(crate) entity: Entity,
    pub(crate) slot: RawSlot,
}

impl Command for InsertRaw {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        // The arena drops the value when the registry refuses it.
        let result = ctx
            .raw
            .insert_into(self.slot, ctx.registry, target)
            .map(|()| Outcome::Applied);
        let name = result
            .is_err()
            .then(|| component_name(ctx.registry, ctx.raw.id(self.slot)));
        ctx.finish(CommandKind::InsertRaw, self.entity, name, result)
    }
}

/// Removal of a component by id (either kind).
pub(crate) struct RemoveById {
    pub(crate) entity: Entity,
    pub(crate) id: ComponentId,
}

impl Command for RemoveById {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let id = self.id;
        let mut present = Vec::new();
        let mut links = None;
        if ctx.observing && ctx.registry.is_alive(target) {
            present = observe::present(ctx.registry, target, |c, _| c == id);
            let link = |registry: &Registry| {
                registry.component_id::<ChildOf>() == Some(id)
                    || registry.component_id::<Children>() == Some(id)
            };
            if link(ctx.registry) {
                let reached = observe::neighbours(ctx.registry, target, true);
                links = observe::links_before(ctx.registry, reached);
            }
        }
        let result = match ctx.registry.remove_by_id(target, id) {
            Ok(true) => {
                observe::fire_removed(ctx.registry, target, present);
                observe::fire_links(ctx.registry, links, None);
                Ok(Outcome::Applied)
            }
            Ok(false) => Ok(Outcome::NoOp),
            Err(error) => Err(error),
        };
        let name = result
            .is_err()
            .then(|| component_name(ctx.registry, self.id));
        ctx.finish(CommandKind::RemoveById, self.entity, name, result)
    }
}

/// A closure recorded with `push`: the only command that is boxed.
pub(crate) struct Custom(pub(crate) Box<dyn FnOnce(&mut Registry) + Send>);

impl Command for Custom {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        (self.0)(ctx.registry);
        ctx.finish(
            CommandKind::Custom,
            Entity::NULL,
            None,
            Ok(Outcome::Applied),
        )
    }
}

/// `Registry::set_parent`, deferred.
pub(crate) struct SetParent {
    pub(crate) child: Entity,
    pub(crate) parent: Entity,
}

impl Command for SetParent {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let child = ctx.resolve(self.child);
        let parent = ctx.resolve(self.parent);
        // Observed links: the child's `ChildOf`, its old parent's list and
        // its new parent's (nothing changes when the parent is the same).
        let links = if ctx.observing {
            let old = ctx.registry.parent(child);
            let reached = [child].into_iter().chain(old).chain([parent]);
            (old != Some(parent))
                .then(|| observe::links_before(ctx.registry, reached))
                .flatten()
        } else {
            None
        };
        let result = ctx.registry.set_parent(child, parent).map(|()| {
            observe::fire_links(ctx.registry, links, Some(child));
            Outcome::Applied
        });
        ctx.finish_for::<ChildOf>(CommandKind::Insert, self.child, result)
    }
}

/// `Registry::remove_parent`, deferred.
pub(crate) struct RemoveParent {
    pub(crate) child: Entity,
}

impl Command for RemoveParent {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let child = ctx.resolve(self.child);
        let links = ctx
            .observing
            .then(|| {
                let reached = [child].into_iter().chain(ctx.registry.parent(child));
                observe::links_before(ctx.registry, reached)
            })
            .flatten();
        let result = ctx.registry.remove_parent(child).map(|old| match old {
            Some(_) => {
                observe::fire_links(ctx.registry, links, None);
                Outcome::Applied
            }
            None => Outcome::NoOp,
        });
        ctx.finish_for::<ChildOf>(CommandKind::Remove, self.child, result)
    }
}

/// `Registry::despawn_recursive`, deferred.
pub(crate) struct DespawnRecursive {
    pub(crate) entity: Entity,
}

impl Command for DespawnRecursive {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let target = ctx.resolve(self.entity);
        let result = despawn_observed(ctx, target, true).map(|()| Outcome::Applied);
        ctx.finish(CommandKind::Despawn, self.entity, None, result)
    }
}

/// `Registry::disable_recursive` (or `enable_recursive`), deferred: counted
/// as an insert (a remove) of the `Disabled` marker, a no-op when no
/// entity of the subtree changed.
pub(crate) struct DisableRecursive {
    pub(crate) entity: Entity,
    /// `false`: enable the subtree instead.
    pub(crate) disable: bool,
}

impl Command for DisableRecursive {
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let root = ctx.resolve(self.entity);
        // Observed: the subtree's entities whose marker this changes.
        let watched: Vec<(Entity, bool)> =
            if ctx.observing && observe::observed::<Disabled>(ctx.registry) {
                let registry = &*ctx.registry;
                let subtree = registry.depth_first(root);
                subtree.map(|e| (e, registry.is_disabled(e))).collect()
            } else {
                Vec::new()
            };
        let (kind, result) = if self.disable {
            (CommandKind::Insert, ctx.registry.disable_recursive(root))
        } else {
            (CommandKind::Remove, ctx.registry.enable_recursive(root))
        };
        let result = result.map(|changed| {
            let flipped = watched
                .into_iter()
                .filter(|&(e, was)| ctx.registry.is_disabled(e) != was);
            let ty = TypeId::of::<Disabled>();
            // Per entity, depth first: `Add` then `Insert`, or `Remove`.
            let hooks: &[Hook] = if self.disable {
                &[Hook::Add, Hook::Insert]
            } else {
                &[Hook::Remove]
            };
            let fired: Vec<_> = flipped
                .flat_map(|(e, _)| hooks.iter().map(move |&hook| (hook, ty, e)))
                .collect();
            observe::fire_all(ctx.registry, fired);
            if changed > 0 {
                Outcome::Applied
            } else {
                Outcome::NoOp
            }
        });
        ctx.finish_for::<Disabled>(kind, self.entity, result)
    }
}
