//! Where views are opened: every view entry point of [`Registry`]
//! (`view`, `view_mut`, `view_filtered`, `view_since`, `view_mut_since`,
//! `raw_view`) and of [`RegistryCell`] (`view`, `view_filtered`,
//! `view_since`, `raw_view`), each a [`View`] or a [`RawView`] over the
//! registry's lock-only handle.

use super::raw_view::RawView;
use super::traits::{QueryData, QueryFilter, ReadOnlyQueryData};
use super::view::View;
use crate::storage::locked::Locked;
use crate::{Access, ChangeTick, ComponentId, EcsError, Registry, RegistryCell};

impl Registry {
    /// A read-only view over `Q` (e.g. `(Entity, &Position, Option<&Name>)`).
    ///
    /// # Panics
    ///
    /// Never for a well-formed program: read locks taken through `&self`
    /// cannot conflict, since write locks need `&mut Registry`.
    #[track_caller]
    pub fn view<Q: ReadOnlyQueryData>(&self) -> View<'_, Q> {
        View::new(Locked::shared(self)).unwrap_or_else(|e| panic!("Registry::view: {e}"))
    }

    /// A view over `Q` that may write components (e.g.
    /// `(&mut Position, &Velocity)`).
    ///
    /// # Panics
    ///
    /// When `Q` names one component type twice and one of them is `&mut`.
    #[track_caller]
    pub fn view_mut<Q: QueryData>(&mut self) -> View<'_, Q> {
        View::new(Locked::exclusive_for::<Q, ()>(self))
            .unwrap_or_else(|e| panic!("Registry::view_mut: query names a type twice: {e}"))
    }

    /// A view over `Q` with filter `F` (e.g. `Without<Frozen>`), for code
    /// that names the filter as a type.
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut), also for a filter type the query
    /// writes.
    #[track_caller]
    pub fn view_filtered<Q: QueryData, F: QueryFilter>(&mut self) -> View<'_, Q, F> {
        View::new(Locked::exclusive_for::<Q, F>(self))
            .unwrap_or_else(|e| panic!("Registry::view_filtered: {e}"))
    }

    /// A read-only view whose change filters and terms ([`Added`](crate::Added),
    /// [`Changed`](crate::Changed), [`Ref`](crate::Ref)) compare with `since`, a change tick the
    /// caller saved earlier ([`change_tick`](Self::change_tick)). Plain
    /// views ([`view`](Self::view)) compare with the tick before the
    /// current one: they see what changed since the last
    /// [`advance_change_tick`](Self::advance_change_tick).
    ///
    /// # Panics
    ///
    /// Never for a well-formed program (read locks through `&self`).
    #[track_caller]
    pub fn view_since<Q: ReadOnlyQueryData, F: QueryFilter>(
        &self,
        since: ChangeTick,
    ) -> View<'_, Q, F> {
        View::new(Locked::shared(self).with_since(since))
            .unwrap_or_else(|e| panic!("Registry::view_since: {e}"))
    }

    /// [`view_since`](Self::view_since) for a query that may write.
    ///
    /// # Panics
    ///
    /// As [`view_filtered`](Self::view_filtered).
    #[track_caller]
    pub fn view_mut_since<Q: QueryData, F: QueryFilter>(
        &mut self,
        since: ChangeTick,
    ) -> View<'_, Q, F> {
        View::new(Locked::exclusive_for::<Q, F>(self).with_since(since))
            .unwrap_or_else(|e| panic!("Registry::view_mut_since: {e}"))
    }

    /// A [`RawView`] over run-time components: the entities that have all
    /// of `terms`' components, each term read or written as given.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoTerms`] for an empty list,
    /// [`EcsError::UnknownComponent`] / [`EcsError::TypedComponent`] for an
    /// id that is not a run-time component here, and
    /// [`EcsError::DuplicateTerm`] for an id listed twice.
    pub fn raw_view(&mut self, terms: &[(ComponentId, Access)]) -> Result<RawView<'_>, EcsError> {
        RawView::new(Locked::exclusive(self), terms)
    }
}

impl<'w> RegistryCell<'w> {
    /// Borrows the pools of `Q` (read or write locks).
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] naming the type when a pool is already
    /// borrowed in a conflicting way (by another view alive on any thread,
    /// or because `Q` names a type twice with a write).
    pub fn view<Q: QueryData>(&self) -> Result<View<'_, Q>, EcsError> {
        View::new(self.registry)
    }

    /// Borrows the pools of `Q` and of the filter `F`.
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view).
    pub fn view_filtered<Q: QueryData, F: QueryFilter>(&self) -> Result<View<'_, Q, F>, EcsError> {
        View::new(self.registry)
    }

    /// Borrows the pools of run-time components for a [`RawView`]: a read
    /// lock per [`Access::Read`] term, a write lock per [`Access::Write`]
    /// term.
    ///
    /// # Errors
    ///
    /// As [`Registry::raw_view`], and [`EcsError::BorrowConflict`] naming
    /// the component when a pool is already borrowed in a conflicting way.
    pub fn raw_view(&self, terms: &[(ComponentId, Access)]) -> Result<RawView<'w>, EcsError> {
        RawView::new(self.registry, terms)
    }

    /// [`view_filtered`](Self::view_filtered) whose change filters and
    /// terms compare with `since` (the scheduler passes the tick the
    /// system last ran at).
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view).
    pub fn view_since<Q: QueryData, F: QueryFilter>(
        &self,
        since: ChangeTick,
    ) -> Result<View<'_, Q, F>, EcsError> {
        View::new(self.locked().with_since(since))
    }
}
