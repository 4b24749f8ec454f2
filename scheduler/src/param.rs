//! System parameters: the types a function system takes, from which its
//! access is derived, so the declaration cannot drift from the code.

use std::cell::RefMut;
use std::ops::{Deref, DerefMut};

use command_buffer::CommandBuffer;
use ecs_engine::{Access, QueryData, QueryFilter, View};
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::{ResourceAccess, SystemAccess, SystemContext, SystemError, Tick};

/// A value a system function receives, fetched from the [`SystemContext`]
/// at each run, with the access it needs declared once at build.
///
/// Implemented for [`Query`], [`Res`], [`ResMut`], [`Commands`], [`Tick`]
/// and tuples of up to 8 parameters.
pub trait SystemParam {
    /// The value for one run, borrowing the context for `'s`.
    type Item<'s>;

    /// Adds what the parameter touches to `access`.
    fn declare(access: &mut SystemAccess);

    /// Borrows the parameter for one run.
    ///
    /// # Errors
    ///
    /// What the context's accessors return (an undeclared type, a missing
    /// resource, a borrow conflict).
    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError>;
}

/// A system parameter: a view over the components of `Q` (e.g.
/// `Query<(&mut Position, &Velocity)>`), filtered by `F` (e.g.
/// `Without<Frozen>`). Dereferences to [`View`] (`each`, `iter`,
/// `par_each`, `get`).
pub struct Query<'s, Q: QueryData, F: QueryFilter = ()>(View<'s, Q, F>);

impl<Q: QueryData, F: QueryFilter> std::fmt::Debug for Query<'_, Q, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<'s, Q: QueryData, F: QueryFilter> Deref for Query<'s, Q, F> {
    type Target = View<'s, Q, F>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<Q: QueryData, F: QueryFilter> DerefMut for Query<'_, Q, F> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<Q: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Query<'_, Q, F> {
    type Item<'s> = Query<'s, Q, F>;

    fn declare(access: &mut SystemAccess) {
        // The filter's types are read-locked by the same view: a clash with
        // the query's own types too.
        let mut own = SystemAccess::new();
        Q::access(&mut |c| own.add_component_borrow(c));
        F::access(&mut |c| own.add_component_borrow(c));
        for name in own.clashes() {
            access.record_clash(name.clone());
        }
        for c in own.components() {
            access.add_component_borrow(c.clone());
        }
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.query_filtered::<Q, F>().map(Query)
    }
}

/// A system parameter: shared access to resource `R`.
pub struct Res<'s, R: Send + Sync + 'static>(MappedRwLockReadGuard<'s, R>);

/// A system parameter: exclusive access to resource `R`.
pub struct ResMut<'s, R: Send + Sync + 'static>(MappedRwLockWriteGuard<'s, R>);

impl<R: Send + Sync + 'static + std::fmt::Debug> std::fmt::Debug for Res<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<R: Send + Sync + 'static + std::fmt::Debug> std::fmt::Debug for ResMut<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<R: Send + Sync + 'static> Deref for Res<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.0
    }
}

impl<R: Send + Sync + 'static> Deref for ResMut<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.0
    }
}

impl<R: Send + Sync + 'static> DerefMut for ResMut<'_, R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.0
    }
}

impl<R: Send + Sync + 'static> SystemParam for Res<'_, R> {
    type Item<'s> = Res<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.resource::<R>().map(Res)
    }
}

impl<R: Send + Sync + 'static> SystemParam for ResMut<'_, R> {
    type Item<'s> = ResMut<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Write));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.resource_mut::<R>().map(ResMut)
    }
}

/// A system parameter: the system's own [`CommandBuffer`], applied after
/// its wave in registration order. Dereferences to the buffer. A system
/// takes at most one: a second is refused when the schedule is built
/// ([`BuildError::ParamClash`](crate::BuildError::ParamClash)).
pub struct Commands<'s>(RefMut<'s, CommandBuffer>);

impl std::fmt::Debug for Commands<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.0.len())
            .finish()
    }
}

impl Deref for Commands<'_> {
    type Target = CommandBuffer;
    fn deref(&self) -> &CommandBuffer {
        &self.0
    }
}

impl DerefMut for Commands<'_> {
    fn deref_mut(&mut self) -> &mut CommandBuffer {
        &mut self.0
    }
}

impl SystemParam for Commands<'_> {
    type Item<'s> = Commands<'s>;

    fn declare(access: &mut SystemAccess) {
        // Each `Commands` borrows the system's one buffer for the whole
        // run: a second one would fail every run, so it is a clash that
        // `build` refuses, naming the system.
        if access.commands() {
            access.record_clash("Commands".into());
        }
        access.set_commands(true);
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.commands().map(Commands)
    }
}

impl SystemParam for Tick {
    type Item<'s> = Tick;

    fn declare(_: &mut SystemAccess) {}

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        Ok(ctx.tick())
    }
}

macro_rules! param_tuple {
    ($($p:ident),*) => {
        impl<$($p: SystemParam),*> SystemParam for ($($p,)*) {
            type Item<'s> = ($($p::Item<'s>,)*);

            #[allow(unused_variables, reason = "the empty tuple declares nothing")]
            fn declare(access: &mut SystemAccess) {
                $($p::declare(access);)*
            }

            #[allow(unused_variables, reason = "the empty tuple fetches nothing")]
            fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
                Ok(($($p::fetch(ctx)?,)*))
            }
        }
    };
}

param_tuple!();
param_tuple!(A);
param_tuple!(A, B);
param_tuple!(A, B, C);
param_tuple!(A, B, C, D);
param_tuple!(A, B, C, D, E);
param_tuple!(A, B, C, D, E, F);
param_tuple!(A, B, C, D, E, F, G);
param_tuple!(A, B, C, D, E, F, G, H);
