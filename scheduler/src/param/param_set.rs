//! [`ParamSet`]: parameters that conflict with each other, borrowed one at
//! a time.

use ecs_engine::{QueryData, QueryFilter};

use crate::{
    LastRun, LocalState, Query, Res, ResMut, SystemAccess, SystemContext, SystemError, SystemParam,
};

/// A system parameter holding two to four parameters ([`Query`], [`Res`],
/// [`ResMut`]) that could not be
/// borrowed at once (two queries writing one type whose filters do not
/// prove them disjoint): each is borrowed only when asked for, through
/// `p0()`, `p1()`, ..., and the borrow checker lets only one live at a
/// time. Bevy's `ParamSet`.
///
/// Its access is every member's; the members are checked against the
/// system's other parameters, not against each other. Each member keeps
/// its own state (a query's last run for change detection, a `Local`).
/// A member borrowed several times in one run sees the same changes each
/// time: every borrow compares with the system's previous run, not with
/// the borrow before it.
///
/// # Panics
///
/// `pN()` panics (the run fails with a [`RunError`](crate::RunError)
/// naming the system) when the member cannot be borrowed: what its
/// `fetch` would return as an error, e.g. a resource that is missing.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry};
/// use scheduler::{ParamSet, Query, Schedule, Tick};
///
/// struct Health(u32);
/// struct Target(Entity);
///
/// // Both queries reach `Health`, one writing it: refused as two
/// // parameters, accepted in a set.
/// fn hit(mut set: ParamSet<(Query<(&Health, &Target)>, Query<&mut Health>)>) {
///     let hits: Vec<(Entity, u32)> = set.p0().iter().map(|(h, t)| (t.0, h.0 / 2)).collect();
///     let mut targets = set.p1();
///     for (target, damage) in hits {
///         if let Ok(health) = targets.get(target) {
///             health.0 -= damage;
///         }
///     }
/// }
///
/// let mut registry = Registry::new();
/// let a = registry.spawn((Health(10),));
/// let b = registry.spawn((Health(8),));
/// registry.insert(a, Target(b)).unwrap();
/// let mut builder = Schedule::builder();
/// builder.add(hit);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.get::<Health>(b).unwrap().0, 3);
/// ```
pub struct ParamSet<'s, T: ParamSetMembers> {
    fetchers: T::Fetchers<'s>,
    local: Option<&'s mut LocalState>,
    /// Per member, once it was borrowed in this run: its [`LastRun`] as
    /// it was before the first borrow, put back before each later one (a
    /// borrow records this run as the last, which would hide this run's
    /// changes from the next borrow).
    before: [Option<LastRun>; 4],
}

impl<T: ParamSetMembers> std::fmt::Debug for ParamSet<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamSet")
            .field("members", &std::any::type_name::<T>())
            .finish()
    }
}

/// The tuples a [`ParamSet`] holds: 2 to 4 [`SetMember`]s.
pub trait ParamSetMembers {
    #[doc(hidden)]
    type Fetchers<'s>;
}

/// A parameter that may be a member of a [`ParamSet`]: [`Query`],
/// [`Res`] and [`ResMut`], written with any lifetime (as a function's
/// parameter types elide it).
pub trait SetMember {
    /// The same parameter with its lifetime `'static`: what the set
    /// declares and fetches.
    type Param: SystemParam + 'static;
}

impl<Q: QueryData, F: QueryFilter + 'static> SetMember for Query<'_, Q, F> {
    type Param = Query<'static, Q::Static, F>;
}

impl<R: Send + Sync + 'static> SetMember for Res<'_, R> {
    type Param = Res<'static, R>;
}

impl<R: Send + Sync + 'static> SetMember for ResMut<'_, R> {
    type Param = ResMut<'static, R>;
}

/// Fetches one member of a [`ParamSet`] from the context it was made
/// with: a trait object, so the set need not name the context's lifetime.
#[doc(hidden)]
pub trait FetchMember<P: SystemParam> {
    /// Fetches `P`, with its state when the system keeps one.
    ///
    /// # Errors
    ///
    /// As `P`'s fetch.
    fn fetch_member<'b>(
        &'b self,
        local: Option<&'b mut LocalState>,
    ) -> Result<P::Item<'b>, SystemError>;
}

impl<P: SystemParam> FetchMember<P> for SystemContext<'_> {
    fn fetch_member<'b>(
        &'b self,
        local: Option<&'b mut LocalState>,
    ) -> Result<P::Item<'b>, SystemError> {
        match local {
            Some(local) => P::fetch_local(self, local),
            None => P::fetch(self),
        }
    }
}

/// Before a member's borrow: on the first of this run, keeps its
/// [`LastRun`] in `before`; on a later one, puts it back, so that every
/// borrow of the run compares with the same previous run. A member whose
/// state is not a `LastRun` is left alone.
fn rewind(member: &mut LocalState, before: &mut Option<LastRun>) {
    match before {
        None => *before = Some(member.value_mut::<LastRun>().copied().unwrap_or_default()),
        Some(kept) => {
            if let Some(last_run) = member.value_mut::<LastRun>() {
                *last_run = *kept;
            }
        }
    }
}

macro_rules! param_set {
    ($n:literal; $($p:ident $method:ident $index:tt),+) => {
        impl<$($p: SetMember),+> ParamSetMembers for ($($p,)+) {
            type Fetchers<'s> = ($(&'s dyn FetchMember<$p::Param>,)+);
        }

        impl<$($p: SetMember),+> ParamSet<'_, ($($p,)+)> {
            $(
                #[doc = concat!("Borrows member ", stringify!($index), " of the set (the others stay unborrowed while it lives).")]
                ///
                /// # Panics
                ///
                /// When the member cannot be borrowed (see [`ParamSet`]).
                #[track_caller]
                pub fn $method(&mut self) -> <$p::Param as SystemParam>::Item<'_> {
                    let before = &mut self.before[$index];
                    let local = self.local.as_deref_mut().map(|l| {
                        let member = &mut l.children($n)[$index];
                        rewind(member, before);
                        member
                    });
                    self.fetchers.$index
                        .fetch_member(local)
                        .unwrap_or_else(|e| panic!("ParamSet::{}: {e}", stringify!($method)))
                }
            )+
        }

        impl<$($p: SetMember),+> SystemParam for ParamSet<'_, ($($p,)+)> {
            type Item<'s> = ParamSet<'s, ($($p,)+)>;

            fn declare(access: &mut SystemAccess) {
                let members = [$({
                    let mut member = SystemAccess::new();
                    $p::Param::declare(&mut member);
                    member
                },)+];
                access.add_param_set(&members);
            }

            fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
                Ok(ParamSet {
                    fetchers: ($(ctx as &dyn FetchMember<$p::Param>,)+),
                    local: None,
                    before: [None; 4],
                })
            }

            fn fetch_local<'s>(
                ctx: &'s SystemContext<'_>,
                local: &'s mut LocalState,
            ) -> Result<Self::Item<'s>, SystemError> {
                Ok(ParamSet {
                    fetchers: ($(ctx as &dyn FetchMember<$p::Param>,)+),
                    local: Some(local),
                    before: [None; 4],
                })
            }
        }
    };
}

param_set!(2; P0 p0 0, P1 p1 1);
param_set!(3; P0 p0 0, P1 p1 1, P2 p2 2);
param_set!(4; P0 p0 0, P1 p1 1, P2 p2 2, P3 p3 3);
