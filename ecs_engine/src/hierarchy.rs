//! Parent/child relations between entities: a [`ChildOf`] component on the
//! child and a [`Children`] list on the parent, kept consistent by the
//! registry.
//!
//! # Invariants
//!
//! After every `&mut Registry` operation returns (a panic included):
//!
//! - an entity with `ChildOf(p)` has a live parent `p`, and appears exactly
//!   once in `p`'s `Children`;
//! - every entity in a `Children` list is alive and has `ChildOf` naming
//!   the list's owner;
//! - a `Children` list is never empty: the component is removed with the
//!   last child, so `view::<&Children>()` visits exactly the parents;
//! - following `ChildOf` from any entity reaches a root (an entity without
//!   `ChildOf`): no cycle is ever linked ([`EcsError::HierarchyCycle`]).
//!
//! Traversal ([`Registry::depth_first`], [`Registry::breadth_first`],
//! [`Registry::root`]) follows the links whatever the entities'
//! [`Disabled`](crate::Disabled) markers; [`Registry::disable_recursive`]
//! and [`Registry::enable_recursive`] mark a whole subtree.
//!
//! Children are kept in the order they were attached (a re-attached child
//! goes last); this order depends only on the order of the calls, so
//! command buffers applied in registration order give the same lists on
//! any thread count.
//!
//! Both components have private fields and are neither constructible nor
//! cloneable outside this module, so no value can be inserted from outside:
//! they change through [`Registry::set_parent`],
//! [`Registry::remove_parent`], [`Registry::despawn`] (which detaches the
//! children of the despawned entity) and [`Registry::despawn_recursive`].
//! Every removal path keeps the lists consistent: [`Registry::remove`],
//! [`Registry::remove_many`], [`Registry::remove_bundle`] and
//! [`Registry::remove_by_id`] (and so the command buffer's `remove`,
//! `remove_bundle` and `remove_by_id`) of `ChildOf` detach the child, and
//! of `Children` detach every child, as `remove_parent` would. Views
//! refuse `&mut` access to either ([`EcsError::ReadOnlyComponent`]):
//! swapping two `&mut ChildOf` would break the lists; so does
//! [`PoolMut`](crate::PoolMut), which holds one pool and cannot reach the
//! other list: its `insert` and `remove` of either type are refused with
//! that error, and its `get_mut` gives `None`.

mod state;

pub use state::{HierarchyState, HierarchyStateError};

use std::any::{Any, TypeId};
use std::collections::VecDeque;

use crate::{Component, EcsError, Entity, Registry};

/// The parent of the entity that has it. Read it with
/// [`parent`](Self::parent) or [`Registry::parent`]; change it with
/// [`Registry::set_parent`] and [`Registry::remove_parent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildOf {
    parent: Entity,
}

impl ChildOf {
    /// The parent entity (always alive while this component is in a
    /// registry).
    pub fn parent(&self) -> Entity {
        self.parent
    }
}

/// The children of the entity that has it, in the order they were
/// attached. Never empty while in a registry. Read it with
/// [`as_slice`](Self::as_slice) or [`Registry::children`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Children {
    list: Vec<Entity>,
}

impl Children {
    /// The children, in attachment order.
    pub fn as_slice(&self) -> &[Entity] {
        &self.list
    }

    /// The children, in attachment order.
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, Entity>> {
        self.list.iter().copied()
    }

    /// Number of children (at least one while in a registry).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// `true` when the list holds no child (never the case in a registry).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Takes `child` out of `parent`'s list, removing the list when it empties.
fn unlist(registry: &mut Registry, parent: Entity, child: Entity) {
    let Some(pool) = registry.pools.get_mut::<Children>() else {
        return;
    };
    let Some(children) = pool.get_mut(parent) else {
        return;
    };
    if let Some(at) = children.list.iter().position(|&c| c == child) {
        children.list.remove(at);
    }
    if children.list.is_empty() {
        pool.remove(parent);
    }
}

/// Unlinks `entity` from the hierarchy: out of its parent's list, and its
/// children become roots. Called by [`Registry::despawn`] once the entity
/// is freed, in a registry that has had a parent set.
pub(crate) fn unlink(registry: &mut Registry, entity: Entity) {
    let Some(pool) = registry.pools.get_mut::<ChildOf>() else {
        return;
    };
    if let Some(ChildOf { parent }) = pool.remove(entity) {
        unlist(registry, parent, entity);
    }
    let children = registry
        .pools
        .get_mut::<Children>()
        .and_then(|pool| pool.remove(entity));
    if let Some(children) = children {
        let pool = registry.pools.get_mut::<ChildOf>().expect("checked above");
        for child in children.list {
            pool.remove(child);
        }
    }
}

/// `true` when `T` is [`ChildOf`] or [`Children`], whose removal must go
/// through [`remove_typed`] (folded to a constant for each `T`).
#[inline(always)]
pub(crate) fn is_hierarchy<T: Component>() -> bool {
    let id = TypeId::of::<T>();
    id == TypeId::of::<ChildOf>() || id == TypeId::of::<Children>()
}

/// [`Registry::remove`] of a hierarchy type `T` (see [`is_hierarchy`]):
/// detaches the child (`ChildOf`) or every child (`Children`), keeping the
/// lists consistent, and gives the value back.
pub(crate) fn remove_typed<T: Component>(registry: &mut Registry, entity: Entity) -> Option<T> {
    let value: Box<dyn Any> = if TypeId::of::<T>() == TypeId::of::<ChildOf>() {
        let ChildOf { parent } = registry.pools.get_mut::<ChildOf>()?.remove(entity)?;
        unlist(registry, parent, entity);
        Box::new(ChildOf { parent })
    } else {
        let children = registry.pools.get_mut::<Children>()?.remove(entity)?;
        let pool = registry
            .pools
            .get_mut::<ChildOf>()
            .expect("a child has a ChildOf pool");
        for &child in &children.list {
            pool.remove(child);
        }
        Box::new(children)
    };
    value.downcast().ok().map(|value| *value)
}

/// The error for a bundle `B` that holds a [`ChildOf`] or [`Children`]
/// value (one taken out by [`Registry::remove`]), which no spawn or insert
/// accepts: links change only through [`Registry::set_parent`] and its
/// kin, [`EcsError::NotAComponent`] for one holding a type that cannot be
/// a component, or [`EcsError::DuplicateBundleComponent`] for one that
/// names a type twice. `None` for any other bundle (folded to a constant per `B`).
#[inline(always)]
pub(crate) fn refuse_bundle<B: crate::Bundle>() -> Option<EcsError> {
    if B::names_hierarchy() {
        return Some(EcsError::ReadOnlyComponent {
            component: std::any::type_name::<B>().into(),
        });
    }
    if let Some((component, reason)) = B::not_a_component() {
        return Some(EcsError::NotAComponent {
            component: component.into(),
            reason,
        });
    }
    // Compares of constant type ids: folded to `None` for a bundle of
    // distinct types, so the normal path pays nothing.
    B::duplicate().map(|component| EcsError::DuplicateBundleComponent {
        bundle: std::any::type_name::<B>().into(),
        component: component.into(),
    })
}

/// Takes `entity`'s `T` out of its pool, through [`remove_typed`] for a
/// hierarchy type (so the lists stay consistent): the removal of
/// [`Registry::remove_bundle`]. `entity` is alive.
#[inline(always)]
pub(crate) fn remove_component<T: Component>(registry: &mut Registry, entity: Entity) -> Option<T> {
    if is_hierarchy::<T>() {
        return remove_typed(registry, entity);
    }
    registry.pools.get_mut::<T>()?.remove(entity)
}

impl Registry {
    /// Makes `child` a child of `parent`, last in `parent`'s
    /// [`Children`]; a child of another parent is moved (taken out of the
    /// old list). Already `parent`'s child: nothing changes (it keeps its
    /// place).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `child` or `parent` is not alive;
    /// [`EcsError::HierarchyCycle`] when `parent` is `child` or one of its
    /// descendants. Nothing changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let (ship, turret, gun) = (registry.spawn(()), registry.spawn(()), registry.spawn(()));
    /// registry.set_parent(turret, ship).unwrap();
    /// registry.set_parent(gun, turret).unwrap();
    /// assert_eq!(registry.children(ship), [turret]);
    /// assert_eq!(registry.parent(gun), Some(turret));
    /// assert_eq!(registry.root(gun), Some(ship));
    /// assert!(registry.set_parent(ship, gun).is_err()); // a cycle
    /// ```
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), EcsError> {
        self.check_alive(child)?;
        self.check_alive(parent)?;
        // `parent` must not be `child` or below it: walk up from `parent`.
        let mut up = Some(parent);
        while let Some(at) = up {
            if at == child {
                return Err(EcsError::HierarchyCycle { child, parent });
            }
            up = self.parent(at);
        }
        let old = self.parent(child);
        if old == Some(parent) {
            return Ok(());
        }
        self.has_hierarchy = true;
        if let Some(old) = old {
            unlist(self, old, child);
        }
        self.pools
            .get_or_create::<ChildOf>()
            .insert_live(child, ChildOf { parent });
        let pool = self.pools.get_or_create::<Children>();
        match pool.get_mut(parent) {
            Some(children) => children.list.push(child),
            None => {
                pool.insert_live(parent, Children { list: vec![child] });
            }
        }
        Ok(())
    }

    /// Detaches `child` from its parent (it becomes a root, with its own
    /// subtree); returns the parent it had, `None` when it was a root.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `child` is not alive.
    pub fn remove_parent(&mut self, child: Entity) -> Result<Option<Entity>, EcsError> {
        self.check_alive(child)?;
        let old = self
            .pools
            .get_mut::<ChildOf>()
            .and_then(|pool| pool.remove(child));
        Ok(old.map(|ChildOf { parent }| {
            unlist(self, parent, child);
            parent
        }))
    }

    /// The parent of `entity`; `None` for a root or an entity that is not
    /// alive.
    pub fn parent(&self, entity: Entity) -> Option<Entity> {
        self.get::<ChildOf>(entity).map(ChildOf::parent)
    }

    /// The children of `entity` in attachment order; empty for a leaf or an
    /// entity that is not alive.
    pub fn children(&self, entity: Entity) -> &[Entity] {
        self.get::<Children>(entity).map_or(&[], Children::as_slice)
    }

    /// The root of `entity`'s tree (`entity` itself when it has no
    /// parent); `None` when `entity` is not alive. O(depth).
    pub fn root(&self, entity: Entity) -> Option<Entity> {
        if !self.is_alive(entity) {
            return None;
        }
        let mut at = entity;
        while let Some(parent) = self.parent(at) {
            at = parent;
        }
        Some(at)
    }

    /// The subtree of `root` in depth-first pre-order: `root` first, then
    /// each child's subtree in attachment order. Empty when `root` is not
    /// alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [a, b, c, d] = [(); 4].map(|()| registry.spawn(()));
    /// registry.set_parent(b, a).unwrap();
    /// registry.set_parent(d, a).unwrap();
    /// registry.set_parent(c, b).unwrap();
    /// assert_eq!(registry.depth_first(a).collect::<Vec<_>>(), [a, b, c, d]);
    /// assert_eq!(registry.breadth_first(a).collect::<Vec<_>>(), [a, b, d, c]);
    /// ```
    pub fn depth_first(&self, root: Entity) -> DepthFirst<'_> {
        let stack = if self.is_alive(root) {
            vec![root]
        } else {
            Vec::new()
        };
        DepthFirst {
            registry: self,
            stack,
        }
    }

    /// The subtree of `root` in breadth-first order: `root`, then its
    /// children, then their children, each level in attachment order.
    /// Empty when `root` is not alive.
    pub fn breadth_first(&self, root: Entity) -> BreadthFirst<'_> {
        let mut queue = VecDeque::new();
        if self.is_alive(root) {
            queue.push_back(root);
        }
        BreadthFirst {
            registry: self,
            queue,
        }
    }

    /// Despawns `entity` and its whole subtree (dropping every component);
    /// returns how many entities were despawned. `entity` is first taken
    /// out of its parent's list. Use [`despawn`](Self::despawn) to despawn
    /// one entity and detach its children instead.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive (nothing
    /// changes).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [ship, turret, gun] = [(); 3].map(|()| registry.spawn(()));
    /// registry.set_parent(turret, ship).unwrap();
    /// registry.set_parent(gun, turret).unwrap();
    /// assert_eq!(registry.despawn_recursive(turret), Ok(2));
    /// assert!(registry.is_alive(ship) && !registry.is_alive(gun));
    /// assert!(registry.children(ship).is_empty());
    /// ```
    pub fn despawn_recursive(&mut self, entity: Entity) -> Result<usize, EcsError> {
        self.check_alive(entity)?;
        self.remove_parent(entity)?;
        let doomed: Vec<Entity> = self.depth_first(entity).collect();
        // Leaves last-to-first would also work; plain `despawn` unlinks each
        // one, so any order keeps the invariants at every step.
        for &e in doomed.iter().rev() {
            self.despawn(e).expect("a subtree holds only live entities");
        }
        Ok(doomed.len())
    }
}

impl Registry {
    /// Disables `root` and every descendant (see [`Registry::disable`]);
    /// returns how many were enabled before. Children attached later are
    /// not disabled by this call.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `root` is not alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let [ship, turret] = [(); 2].map(|()| registry.spawn((0_u8,)));
    /// registry.set_parent(turret, ship).unwrap();
    /// assert_eq!(registry.disable_recursive(ship), Ok(2));
    /// assert_eq!(registry.view::<&u8>().count(), 0);
    /// assert_eq!(registry.enable_recursive(ship), Ok(2));
    /// ```
    pub fn disable_recursive(&mut self, root: Entity) -> Result<usize, EcsError> {
        self.check_alive(root)?;
        let subtree: Vec<Entity> = self.depth_first(root).collect();
        let mut changed = 0;
        for entity in subtree {
            changed += usize::from(self.disable(entity)?);
        }
        Ok(changed)
    }

    /// Enables `root` and every descendant; returns how many were disabled
    /// before.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `root` is not alive.
    pub fn enable_recursive(&mut self, root: Entity) -> Result<usize, EcsError> {
        self.check_alive(root)?;
        let subtree: Vec<Entity> = self.depth_first(root).collect();
        let mut changed = 0;
        for entity in subtree {
            changed += usize::from(self.enable(entity)?);
        }
        Ok(changed)
    }
}

/// The iterator of [`Registry::depth_first`].
#[derive(Debug)]
pub struct DepthFirst<'w> {
    registry: &'w Registry,
    stack: Vec<Entity>,
}

impl Iterator for DepthFirst<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        let at = self.stack.pop()?;
        self.stack
            .extend(self.registry.children(at).iter().rev().copied());
        Some(at)
    }
}

/// The iterator of [`Registry::breadth_first`].
#[derive(Debug)]
pub struct BreadthFirst<'w> {
    registry: &'w Registry,
    queue: VecDeque<Entity>,
}

impl Iterator for BreadthFirst<'_> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        let at = self.queue.pop_front()?;
        self.queue
            .extend(self.registry.children(at).iter().copied());
        Some(at)
    }
}
