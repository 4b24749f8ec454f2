//! The crate's error type.

use std::alloc::Layout;
use std::borrow::Cow;

use crate::{Access, ComponentId, Entity};

/// Everything a registry operation can refuse. Each variant names the entity,
/// the component or resource type, and what was expected; the registry is
/// unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EcsError {
    /// The handle is null, stale (its slot was freed or reused) or was never
    /// handed out by this registry.
    #[error("entity {entity} is not alive (null, stale or never allocated)")]
    NoSuchEntity {
        /// The handle that was used.
        entity: Entity,
    },
    /// The entity is alive but does not have the component.
    #[error("entity {entity} has no component `{component}`")]
    MissingComponent {
        /// The entity asked about.
        entity: Entity,
        /// The component's name (its type name for a Rust type).
        component: Cow<'static, str>,
    },
    /// `try_insert` found the component already there and kept the old value.
    #[error("entity {entity} already has component `{component}`; use `insert` to replace it")]
    ComponentExists {
        /// The entity asked about.
        entity: Entity,
        /// The component's name (its type name for a Rust type).
        component: Cow<'static, str>,
    },
    /// A component pool was given a handle whose slot (its index) the pool
    /// holds for another generation: the handle is stale, or the pool's
    /// entry is. The pool refuses it and keeps the holder's value.
    #[error(
        "entity {entity} does not own its slot in the pool of `{component}`: \
         the slot is held by {holder} (a stale handle, or a handle of another owner of the index)"
    )]
    SlotHeld {
        /// The handle that was given.
        entity: Entity,
        /// The handle that holds the slot in the pool.
        holder: Entity,
        /// The component's name (its type name for a Rust type).
        component: Cow<'static, str>,
    },
    /// The configured limit of live entities is reached.
    #[error("cannot spawn: the limit of {limit} live entities is reached")]
    TooManyEntities {
        /// The limit in force.
        limit: u32,
    },
    /// No resource of this type is in the registry.
    #[error("no resource `{resource}` in the registry")]
    MissingResource {
        /// The resource's type name.
        resource: &'static str,
    },
    /// A pool or resource is already borrowed in a way that conflicts with
    /// the borrow asked for (for example the same type twice in one view, or
    /// two parallel systems writing one type).
    #[error("cannot borrow `{name}` {wanted}: it is already borrowed {held}")]
    BorrowConflict {
        /// The component or resource name.
        name: Cow<'static, str>,
        /// The access that was asked for.
        wanted: Access,
        /// The access that holds it (`Access::Write` if any writer holds it).
        held: Access,
    },
    /// [`Registry::register_runtime`](crate::Registry::register_runtime)
    /// was given a name that a run-time component already has.
    #[error(
        "a component named `{name}` is already registered; run-time component names must be unique"
    )]
    DuplicateComponentName {
        /// The repeated name.
        name: String,
    },
    /// The id names no component of this registry (it came from another
    /// registry, or was made up).
    #[error("no component has id {id} in this registry")]
    UnknownComponent {
        /// The id that was used.
        id: ComponentId,
    },
    /// A raw (byte-level) operation named a Rust-typed component; raw access
    /// is only for components registered at run time.
    #[error(
        "component `{component}` is a Rust type; raw access is only for components registered at run time"
    )]
    TypedComponent {
        /// The Rust type's name.
        component: Cow<'static, str>,
    },
    /// A raw view names one component twice.
    #[error("a raw view names component `{component}` twice; name each component once")]
    DuplicateTerm {
        /// The component named twice.
        component: Cow<'static, str>,
    },
    /// A change filter named a run-time component that keeps no change
    /// ticks.
    #[error(
        "component `{component}` keeps no change ticks: track its changes (`track_changes_raw`) before filtering on them"
    )]
    Untracked {
        /// The component.
        component: Cow<'static, str>,
    },
    /// A raw view was asked for with no component.
    #[error("a raw view needs at least one component")]
    NoTerms,
    /// A raw value was recorded with a layout other than the one its
    /// component has in the registry it is applied to (its `ComponentInfo`
    /// came from another registry).
    #[error(
        "value for component `{component}` has size {} and alignment {}, \
         but the registry stores it with size {} and alignment {}",
        .found.size(), .found.align(), .expected.size(), .expected.align()
    )]
    LayoutMismatch {
        /// The component, as the registry names it.
        component: Cow<'static, str>,
        /// The layout in the registry.
        expected: Layout,
        /// The layout the value was recorded with.
        found: Layout,
    },
    /// A view asked for `&mut` access to a component that views only read:
    /// [`Disabled`](crate::Disabled) (changed by inserting and removing
    /// it, so that every view can read its pool), [`ChildOf`](crate::ChildOf)
    /// and [`Children`](crate::Children) (changed by the hierarchy methods,
    /// which keep both sides consistent).
    #[error(
        "a view cannot borrow `{component}` for writing: it is changed only through \
         the registry's methods or commands (disable/enable, set_parent/remove_parent); \
         read it with `&{component}`"
    )]
    ReadOnlyComponent {
        /// The component's type name.
        component: Cow<'static, str>,
    },
    /// A bundle spawned or inserted names one component type more than
    /// once, e.g. `(A(1), A(2))` (bevy panics on such a bundle too). Nothing
    /// changed: the bundle was dropped.
    #[error(
        "bundle `{bundle}` holds component `{component}` more than once; \
         each component type may appear once in a bundle"
    )]
    DuplicateBundleComponent {
        /// The bundle's type name.
        bundle: Cow<'static, str>,
        /// The component type named twice.
        component: Cow<'static, str>,
    },
    /// A spawn or insert gave a value whose type is no component: a tuple
    /// (a nested bundle such as `((A, B), C)`, which does not flatten, or
    /// `()`), an [`Entity`] or a `&'static str`, each almost always a
    /// mistake for a bundle element or a named wrapper type. Nothing
    /// changed: the value was dropped.
    #[error("`{component}` cannot be a component: {reason}")]
    NotAComponent {
        /// The refused type's name.
        component: Cow<'static, str>,
        /// Why, and what to write instead.
        reason: &'static str,
    },
    /// [`Registry::set_parent`](crate::Registry::set_parent) would close a
    /// cycle: `parent` is `child` itself or one of its descendants.
    #[error(
        "entity {parent} cannot become the parent of {child}: it is {child} or one of its descendants"
    )]
    HierarchyCycle {
        /// The entity that was to get a parent.
        child: Entity,
        /// The refused parent.
        parent: Entity,
    },
    /// [`View::get_many_mut`](crate::View::get_many_mut) was given one
    /// handle twice: two `&mut` to the same component would alias.
    #[error(
        "get_many_mut: entity {entity} is named twice (positions {first} and {second}); \
         pass distinct handles"
    )]
    DuplicateEntity {
        /// The repeated handle.
        entity: Entity,
        /// Its first position in the array.
        first: usize,
        /// Its second position in the array.
        second: usize,
    },
    /// The entity is alive but the view does not visit it: it lacks a
    /// required component, a filter rejects it, or it is disabled.
    #[error(
        "entity {entity} does not match the view `{query}` (a required component \
         is missing, a filter rejects it, or it is disabled)"
    )]
    NotInView {
        /// The entity asked about.
        entity: Entity,
        /// The view's query and filter types.
        query: Cow<'static, str>,
    },
    /// A run-time component's values were read or written as bytes (a
    /// snapshot), but the component is not savable
    /// ([`ComponentInfo::is_savable`](crate::ComponentInfo::is_savable)).
    #[error("component `{component}` cannot be saved by its bytes: {reason}")]
    NotSavable {
        /// The component, as the registry names it.
        component: Cow<'static, str>,
        /// Why: it has a destructor, or was not declared savable.
        reason: &'static str,
    },
    /// The allocator could not give the memory a run-time component's
    /// value needs (a component too large for the memory or address space
    /// left). Nothing changed: the value stays the caller's.
    #[error("cannot store a value of component `{component}`: the allocator refused {bytes} bytes")]
    OutOfMemory {
        /// The component, as the registry names it.
        component: Cow<'static, str>,
        /// The size of the allocation that was refused, in bytes
        /// (`usize::MAX` when the size itself overflows).
        bytes: usize,
    },
}
