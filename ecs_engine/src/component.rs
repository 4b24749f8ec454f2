//! Component identity: the [`Component`] trait, a registry's [`ComponentId`]s
//! and [`ComponentInfo`]s.

use std::alloc::Layout;
use std::any::{TypeId, type_name};
use std::borrow::Cow;

use crate::{ComponentDescriptor, DropFn};

/// A component: any `'static + Send + Sync` type. Implemented for every such
/// type; nothing to derive.
pub trait Component: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Component for T {}

/// Why `T` cannot be a component, `None` for a type that can: a tuple (a
/// bundle nested in a bundle, or `()`), an [`Entity`](crate::Entity) or a
/// `&'static str`. Compares of constant type ids and a constant name, folded
/// per `T`.
#[inline(always)]
pub(crate) fn not_a_component<T: 'static>() -> Option<&'static str> {
    let id = TypeId::of::<T>();
    if id == TypeId::of::<crate::Entity>() {
        return Some(
            "an `Entity` is a handle, not a component; wrap it in a named type \
             (`struct Target(Entity)`)",
        );
    }
    if id == TypeId::of::<&'static str>() {
        return Some(
            "a `&str` says nothing of what it is; wrap it in a named type \
             (`struct Name(&'static str)`)",
        );
    }
    if type_name::<T>().starts_with('(') {
        return Some(
            "a tuple is a bundle, and bundles do not nest; list its components \
             in the outer tuple (`(A, B, C)`, not `((A, B), C)`)",
        );
    }
    None
}

/// The error that refuses a value of type `T` in a spawn or insert, `None`
/// for a type any insert accepts: [`EcsError::ReadOnlyComponent`] for
/// [`ChildOf`](crate::ChildOf) and [`Children`](crate::Children) (links
/// change only through the hierarchy methods),
/// [`EcsError::NotAComponent`] for the types of [`not_a_component`].
#[inline(always)]
pub(crate) fn refuse_component<T: Component>() -> Option<crate::EcsError> {
    if crate::hierarchy::is_hierarchy::<T>() {
        return Some(crate::EcsError::ReadOnlyComponent {
            component: type_name::<T>().into(),
        });
    }
    not_a_component::<T>().map(|reason| crate::EcsError::NotAComponent {
        component: type_name::<T>().into(),
        reason,
    })
}

/// The registry-local number of a component type: the position of its pool
/// in the registry. Ids are handed out in order of first use (or of
/// [`Registry::register_runtime`](crate::Registry::register_runtime)), starting at 0, so they differ between
/// registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId(u32);

impl ComponentId {
    /// The id as an index, `0..registry.component_types()`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id as a plain number (what the C API hands out).
    #[inline]
    pub const fn to_u32(self) -> u32 {
        self.0
    }

    /// The id with number `raw`. Any number is accepted: an id that names no
    /// component of a registry is refused by that registry's operations
    /// ([`EcsError::UnknownComponent`](crate::EcsError::UnknownComponent)),
    /// never misread.
    #[inline]
    pub const fn from_u32(raw: u32) -> Self {
        ComponentId(raw)
    }
}

impl std::fmt::Display for ComponentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What the registry knows of a component type: its name, its Rust
/// `TypeId` (none for a run-time component), its layout and, for a run-time
/// component, its destructor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentInfo {
    name: Cow<'static, str>,
    type_id: Option<TypeId>,
    layout: Layout,
    drop: Option<DropFn>,
    /// Declared [`ComponentDescriptor::savable`].
    savable: bool,
}

impl ComponentInfo {
    /// The info of the Rust type `T` (allocates nothing).
    pub fn of<T: Component>() -> Self {
        ComponentInfo {
            name: Cow::Borrowed(type_name::<T>()),
            type_id: Some(TypeId::of::<T>()),
            layout: Layout::new::<T>(),
            drop: None,
            savable: false,
        }
    }

    /// The info of a run-time component described by `descriptor`.
    pub(crate) fn runtime(descriptor: ComponentDescriptor) -> Self {
        let (name, layout, drop, savable) = descriptor.into_parts();
        ComponentInfo {
            name: Cow::Owned(name),
            type_id: None,
            layout,
            drop,
            savable,
        }
    }

    /// The type's name: `std::any::type_name` for a Rust type, the
    /// registered name for a run-time component.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as an owned value for an error message: free for a Rust
    /// type (a borrowed `&'static str`), a copy for a run-time name.
    pub(crate) fn name_cow(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    /// The Rust `TypeId`; `None` for a type registered at run time.
    pub fn type_id(&self) -> Option<TypeId> {
        self.type_id
    }

    /// `true` for a component registered at run time
    /// ([`Registry::register_runtime`](crate::Registry::register_runtime)).
    pub fn is_runtime(&self) -> bool {
        self.type_id.is_none()
    }

    /// Size and alignment of one component, in bytes.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Bytes from one stored value to the next in a column: the size
    /// rounded up to the alignment (equal to the size for every C type).
    pub fn stride(&self) -> usize {
        self.layout.pad_to_align().size()
    }

    /// The destructor of a run-time component, if it has one. `None` for a
    /// Rust type (its pool drops its values) and for a run-time component
    /// of plain bytes.
    pub fn drop_fn(&self) -> Option<&DropFn> {
        self.drop.as_ref()
    }

    /// `true` for a run-time component whose values snapshots save by
    /// their bytes: declared [`ComponentDescriptor::savable`], with no
    /// destructor. Always `false` for a Rust type (saved through its own
    /// traits).
    pub fn is_savable(&self) -> bool {
        self.savable && self.drop.is_none()
    }
}
