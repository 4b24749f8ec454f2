//! The parameters an exclusive system takes after its `&mut Registry`:
//! values kept in the system itself, never borrowed from the registry.

use super::{Local, LocalState};
use crate::{SystemError, Tick};

/// A parameter an exclusive system (`fn(&mut Registry, P1, .., Pn)`, see
/// [`ExclusiveSystem`](crate::ExclusiveSystem)) may take after the
/// registry: a value fetched from the system's own state and the frame
/// tick, never from the registry, so it cannot alias the `&mut Registry`
/// the function also holds.
///
/// Implemented for [`Local<T>`] (its value lives in the system, from run
/// to run, and is saved with the system states), [`Tick`] (the frame tick
/// of the run) and tuples of up to 4 of these. The parameters that borrow
/// the registry ([`Res`](crate::Res), [`ResMut`](crate::ResMut),
/// [`Query`](crate::Query), [`Commands`](crate::Commands),
/// [`EventReader`](crate::EventReader),
/// [`EventWriter`](crate::EventWriter), ...) are not: an exclusive system
/// reaches all of that through the registry itself
/// (`registry.resource::<R>()`, `registry.resource_mut::<R>()`,
/// `registry.view::<Q>()`, [`Events::send_to(registry,
/// event)`](crate::Events::send_to), `registry.resource::<Events<E>>()`
/// and its [`iter`](crate::Events::iter)).
///
/// Such a parameter does not compile:
///
/// ```compile_fail,E0277
/// use ecs_engine::Registry;
/// use scheduler::{Res, Schedule};
///
/// struct Score(u32);
///
/// fn reset(registry: &mut Registry, score: Res<Score>) {} // Res aliases the registry
///
/// let mut builder = Schedule::builder();
/// builder.add(reset); // error: `fn(&mut Registry, Res<Score>) {reset}` is not a system
/// ```
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Local, Schedule, Tick};
///
/// struct Marker;
///
/// // Spawns one entity every third tick, counting its own runs.
/// fn every_third(registry: &mut Registry, mut runs: Local<u32>, tick: Tick) {
///     *runs += 1;
///     if tick.number % 3 == 0 {
///         registry.spawn((Marker,));
///     }
/// }
///
/// let mut registry = Registry::new();
/// let mut builder = Schedule::builder();
/// builder.add(every_third);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// for number in 0..7 {
///     schedule.run(&mut registry, Tick { number, ..Tick::default() }).unwrap();
/// }
/// assert_eq!(registry.len(), 3); // ticks 0, 3 and 6
/// ```
pub trait ExclusiveParam {
    /// The value for one run, borrowing the system's state for `'s`.
    type Item<'s>;

    /// The parameter for one run of the system named `system`, from
    /// `local` (the state this parameter keeps in its system from run to
    /// run) and `tick` (the frame tick of the run).
    ///
    /// # Errors
    ///
    /// A [`SystemError`] naming `system` when the value cannot be made
    /// (here only a [`Local`] whose slot holds a value of another type,
    /// put there by a restore of states from another version of the
    /// system).
    fn fetch_exclusive<'s>(
        system: &str,
        local: &'s mut LocalState,
        tick: Tick,
    ) -> Result<Self::Item<'s>, SystemError>;
}

impl<T: Default + Send + 'static> ExclusiveParam for Local<'_, T> {
    type Item<'s> = Local<'s, T>;

    fn fetch_exclusive<'s>(
        system: &str,
        local: &'s mut LocalState,
        _: Tick,
    ) -> Result<Self::Item<'s>, SystemError> {
        Ok(Local(local.value_or_default::<T>(system)?))
    }
}

impl ExclusiveParam for Tick {
    type Item<'s> = Tick;

    fn fetch_exclusive<'s>(
        _: &str,
        _: &'s mut LocalState,
        tick: Tick,
    ) -> Result<Self::Item<'s>, SystemError> {
        Ok(tick)
    }
}

macro_rules! exclusive_tuple {
    ($($p:ident),*) => {
        impl<$($p: ExclusiveParam),*> ExclusiveParam for ($($p,)*) {
            type Item<'s> = ($($p::Item<'s>,)*);

            #[allow(unused_variables, unused_mut, reason = "the empty tuple fetches nothing")]
            fn fetch_exclusive<'s>(
                system: &str,
                local: &'s mut LocalState,
                tick: Tick,
            ) -> Result<Self::Item<'s>, SystemError> {
                let mut slots = local.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                Ok(($($p::fetch_exclusive(system, slots.next().expect("one local slot per element"), tick)?,)*))
            }
        }
    };
}

exclusive_tuple!();
exclusive_tuple!(A);
exclusive_tuple!(A, B);
exclusive_tuple!(A, B, C);
exclusive_tuple!(A, B, C, D);
