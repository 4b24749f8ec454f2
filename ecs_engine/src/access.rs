//! Access: how a component pool or a resource is borrowed ([`Access`], for
//! reading or for writing), and the [`ComponentKey`] and [`ComponentAccess`]
//! a query or system declares.

use std::any::{TypeId, type_name};
use std::borrow::Cow;

use crate::{Component, ComponentId, Registry};

/// How a component pool or a resource is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Shared access: any number of readers at once.
    Read,
    /// Exclusive access: one writer and no reader.
    Write,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "for reading",
            Access::Write => "for writing",
        })
    }
}

/// What a component access is about: a Rust type, or a component
/// registered at run time (known only by its id in one registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComponentKey {
    /// A Rust type.
    Type(TypeId),
    /// A run-time component of the registry the access is used with.
    Runtime(ComponentId),
}

impl From<TypeId> for ComponentKey {
    fn from(type_id: TypeId) -> Self {
        ComponentKey::Type(type_id)
    }
}

impl From<ComponentId> for ComponentKey {
    fn from(id: ComponentId) -> Self {
        ComponentKey::Runtime(id)
    }
}

/// One component type that a query, filter or system borrows, and how:
/// what the scheduler needs to order systems and to check a system's
/// declaration.
#[derive(Debug, Clone)]
pub struct ComponentAccess {
    /// Which component: a Rust type or a run-time id.
    pub key: ComponentKey,
    /// The component's name (a borrowed type name for a Rust type, so
    /// making the access allocates nothing).
    pub name: Cow<'static, str>,
    /// Read or write.
    pub access: Access,
    /// Creates the type's pool in a registry if missing and returns its id;
    /// `None` for a run-time component, whose pool exists from its
    /// registration.
    pub register: Option<fn(&mut Registry) -> ComponentId>,
    /// Starts tracking the type's changes in a registry
    /// ([`Registry::track_changes`]): set by the change filters and terms
    /// ([`Added`](crate::Added), [`Changed`](crate::Changed),
    /// [`Ref`](crate::Ref)), so the scheduler enables tracking at build.
    pub track: Option<fn(&mut Registry)>,
}

impl ComponentAccess {
    /// `access` to the Rust type `T`.
    pub fn of<T: Component>(access: Access) -> Self {
        ComponentAccess {
            key: ComponentKey::Type(TypeId::of::<T>()),
            name: Cow::Borrowed(type_name::<T>()),
            access,
            register: Some(Registry::register::<T>),
            track: None,
        }
    }

    /// `access` to the Rust type `T`, whose changes the registry must
    /// track (a change filter or term).
    pub fn tracked<T: Component>(access: Access) -> Self {
        ComponentAccess {
            track: Some(Registry::track_changes::<T>),
            ..Self::of::<T>(access)
        }
    }

    /// `access` to the run-time component `id`, named `name` in messages
    /// (pass the registered name, [`ComponentInfo::name`](crate::ComponentInfo::name)).
    pub fn runtime(id: ComponentId, name: impl Into<Cow<'static, str>>, access: Access) -> Self {
        ComponentAccess {
            key: ComponentKey::Runtime(id),
            name: name.into(),
            access,
            register: None,
            track: None,
        }
    }
}
