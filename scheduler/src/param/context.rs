//! What a running system sees: the registry through checked borrows, its
//! own command buffer, the tick, and its [`SystemId`].

use std::borrow::Cow;
use std::cell::{RefCell, RefMut};
use std::ptr::NonNull;

use command_buffer::CommandBuffer;
use ecs_engine::{
    Access, ChangeTick, ComponentAccess, ComponentId, ComponentInfo, Entity, QueryData,
    QueryFilter, RawView, RegistryCell, RemovedCursor, View,
};
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::{SystemAccess, SystemError, Tick};

/// A system's number: its position in registration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemId(pub(crate) usize);

impl SystemId {
    /// The registration index (0 for the first system added).
    pub fn index(self) -> usize {
        self.0
    }
}

/// The view of the world a system gets for one run.
///
/// Every borrow is checked against the system's declared
/// [`SystemAccess`]: touching an undeclared type is a
/// [`SystemError::Undeclared`] naming the system and the type, never a data
/// race. The scheduler guarantees the declared borrows of systems running at
/// the same time never conflict.
pub struct SystemContext<'a> {
    name: &'a str,
    access: &'a SystemAccess,
    cell: &'a RegistryCell<'a>,
    commands: RefCell<&'a mut CommandBuffer>,
    tick: Tick,
    /// The running system ([`with_system_id`](Self::with_system_id)).
    system: SystemId,
    /// The key of its event cursors and its place in the merge order of
    /// sent events ([`with_events_key`](Self::with_events_key)).
    events_key: usize,
}

impl std::fmt::Debug for SystemContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemContext")
            .field("system", &self.name)
            .field("tick", &self.tick)
            .finish()
    }
}

impl<'a> SystemContext<'a> {
    /// A context for system `name` with `access`, over `cell`, recording
    /// into `commands`. The scheduler makes these; tests of a single system
    /// may too.
    pub fn new(
        name: &'a str,
        access: &'a SystemAccess,
        cell: &'a RegistryCell<'a>,
        commands: &'a mut CommandBuffer,
        tick: Tick,
    ) -> Self {
        SystemContext {
            name,
            access,
            cell,
            commands: RefCell::new(commands),
            tick,
            system: SystemId(0),
            events_key: 0,
        }
    }

    /// Sets the running system (default: `SystemId` 0), and with it the
    /// key of its event cursors and its place in the order sent events
    /// are merged in: its index (a schedule keys its startup systems'
    /// events after the tick systems' instead, leaving
    /// [`system_index`](Self::system_index) the system's own index). The
    /// scheduler sets it.
    pub fn with_system_id(mut self, id: SystemId) -> Self {
        self.system = id;
        self.events_key = id.index();
        self
    }

    /// Sets the key of the running system's event cursors and of its
    /// place in the order sent events are merged in, leaving its
    /// [`system_index`](Self::system_index) alone (the scheduler's:
    /// startup systems are keyed after the tick systems, so a startup
    /// reader never shares a cursor with a tick system).
    pub(crate) fn with_events_key(mut self, key: usize) -> Self {
        self.events_key = key;
        self
    }

    /// The running system's registration index ([`SystemId::index`]):
    /// its place among the tick systems, or for a startup system among
    /// the startup systems.
    pub fn system_index(&self) -> usize {
        self.system.index()
    }

    /// The key of the running system's event cursors and its place in
    /// the merge order of sent events (see
    /// [`with_events_key`](Self::with_events_key)).
    pub(crate) fn events_key(&self) -> usize {
        self.events_key
    }

    /// The channel of events `T`, checked against the declared event
    /// access.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare `access`
    /// to events of `T`; [`SystemError::Registry`] when the channel is
    /// missing or locked.
    pub(crate) fn events<T: Send + Sync + 'static>(
        &self,
        access: Access,
    ) -> Result<MappedRwLockReadGuard<'_, crate::Events<T>>, SystemError> {
        if !self.access.allows_event(crate::EventKey::of::<T>(), access) {
            return Err(self.undeclared("event", std::any::type_name::<T>(), access));
        }
        self.cell
            .resource::<crate::Events<T>>()
            .map_err(|e| self.registry_error(e))
    }

    /// Run-time event channel `id`, checked against the declared event
    /// access.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare `access`
    /// to the channel; [`SystemError::Registry`] when the registry has no
    /// run-time channels; [`SystemError::Failed`] when it has no channel
    /// `id`.
    pub(crate) fn raw_events(
        &self,
        id: crate::RawEventId,
        access: Access,
    ) -> Result<MappedRwLockReadGuard<'_, crate::events::raw::RawChannel>, SystemError> {
        let raw = self
            .cell
            .resource::<crate::RawEvents>()
            .map_err(|e| self.registry_error(e))?;
        let channel = crate::RawEvents::map(raw, id).ok_or_else(|| SystemError::Failed {
            system: self.name.to_owned(),
            message: format!("no event channel has id {} in this registry", id.index()),
        })?;
        let key = crate::EventKey::Raw(id);
        let allowed = match access {
            // A sender is no reader: reading needs a declared read.
            Access::Read => self.access.events().iter().any(|e| e.key == key && e.reads),
            Access::Write => self.access.allows_event(key, access),
        };
        if !allowed {
            return Err(self.undeclared("event", channel.name.clone(), access));
        }
        Ok(channel)
    }

    /// The running system's name.
    pub fn system_name(&self) -> &str {
        self.name
    }

    /// The current tick.
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// `true` when `entity` is alive (needs no declared access: the set of
    /// entities does not change while systems run).
    pub fn is_alive(&self, entity: ecs_engine::Entity) -> bool {
        self.cell.is_alive(entity)
    }

    /// Number of live entities.
    pub fn entity_count(&self) -> usize {
        self.cell.len()
    }

    fn undeclared(
        &self,
        kind: &'static str,
        name: impl Into<Cow<'static, str>>,
        access: Access,
    ) -> SystemError {
        SystemError::Undeclared {
            system: self.name.to_owned(),
            kind,
            name: name.into(),
            access,
        }
    }

    /// [`SystemError::Undeclared`] for run-time component `id`, named as
    /// the registry names it.
    fn undeclared_runtime(&self, id: ComponentId, access: Access) -> SystemError {
        let name = match self.cell.component_info(id) {
            Some(info) => info.name().to_owned(),
            None => format!("component {id}"),
        };
        self.undeclared("component", name, access)
    }

    fn check_components(
        &self,
        each: impl FnOnce(&mut dyn FnMut(ComponentAccess)),
    ) -> Result<(), SystemError> {
        let mut refused = None;
        each(&mut |c: ComponentAccess| {
            if refused.is_none() && !self.access.allows_component(c.key, c.access) {
                refused = Some(c);
            }
        });
        match refused {
            Some(c) => Err(self.undeclared("component", c.name, c.access)),
            None => Ok(()),
        }
    }

    fn registry_error(&self, source: ecs_engine::EcsError) -> SystemError {
        SystemError::Registry {
            system: self.name.to_owned(),
            source,
        }
    }

    /// A view over `Q` with filter `F`. Its change filters and terms
    /// ([`Changed`](ecs_engine::Changed), ...) compare with the change
    /// tick before this run's, which in a schedule covers only the
    /// previous wave's commands: to see every change since a system's
    /// last run, keep that tick and use [`query_since`](Self::query_since),
    /// as [`Query`](crate::Query) does.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when `Q` or `F` touches a type outside
    /// the declaration; [`SystemError::Registry`] on a borrow conflict.
    pub fn query_filtered<Q: QueryData, F: QueryFilter>(
        &self,
    ) -> Result<View<'_, Q, F>, SystemError> {
        self.check_components(|out| {
            Q::access(out);
            F::access(out);
        })?;
        self.cell
            .view_filtered::<Q, F>()
            .map_err(|e| self.registry_error(e))
    }

    /// A view over `Q` with filter `F` whose change filters and terms
    /// ([`Added`](ecs_engine::Added), [`Changed`](ecs_engine::Changed),
    /// [`Ref`](ecs_engine::Ref)) compare with change tick `since` (a
    /// [`Query`](crate::Query) passes the tick its system last ran at).
    ///
    /// # Errors
    ///
    /// As [`query_filtered`](Self::query_filtered).
    pub fn query_since<Q: QueryData, F: QueryFilter>(
        &self,
        since: ChangeTick,
    ) -> Result<View<'_, Q, F>, SystemError> {
        self.check_components(|out| {
            Q::access(out);
            F::access(out);
        })?;
        self.cell
            .view_since::<Q, F>(since)
            .map_err(|e| self.registry_error(e))
    }

    /// The registry's change tick for this run (the same for every system
    /// of a wave).
    pub fn change_tick(&self) -> ChangeTick {
        self.cell.change_tick()
    }

    /// The entities that lost a `T` since `cursor` last read (see
    /// [`Registry::removed`](ecs_engine::Registry::removed)).
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare reading
    /// `T`; [`SystemError::Registry`] on a borrow conflict.
    pub fn removed<T: ecs_engine::Component>(
        &self,
        cursor: &mut ecs_engine::RemovedCursor,
    ) -> Result<ecs_engine::Removed<'_, T>, SystemError> {
        self.check_components(|out| out(ComponentAccess::of::<T>(Access::Read)))?;
        self.cell
            .removed::<T>(cursor)
            .map_err(|e| self.registry_error(e))
    }

    /// A view over `Q`.
    ///
    /// # Errors
    ///
    /// As [`query_filtered`](Self::query_filtered).
    pub fn query<Q: QueryData>(&self) -> Result<View<'_, Q>, SystemError> {
        self.query_filtered::<Q, ()>()
    }

    /// A [`RawView`] over the run-time components `ids`, each borrowed with
    /// the system's declared access: for writing if declared write (write
    /// through its pointers only then), else for reading.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] naming the system and the component when
    /// an id is not declared; [`SystemError::Registry`] for an empty list,
    /// an id listed twice, an id that is not a run-time component, or a
    /// borrow conflict.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use ecs_engine::{ComponentDescriptor, Registry};
    /// use scheduler::{DeclaredSystem, Schedule, SystemAccess, Tick};
    ///
    /// let mut registry = Registry::new();
    /// let f32s = Layout::new::<f32>();
    /// let pos = registry.register_runtime(ComponentDescriptor::new("pos", f32s)).unwrap();
    /// let vel = registry.register_runtime(ComponentDescriptor::new("vel", f32s)).unwrap();
    /// let e = registry.spawn(());
    /// let (p, v) = (1.0f32, 2.0f32);
    /// // SAFETY: valid f32 values, plain bytes.
    /// unsafe {
    ///     registry.insert_raw(e, pos, (&raw const p).cast()).unwrap();
    ///     registry.insert_raw(e, vel, (&raw const v).cast()).unwrap();
    /// }
    /// let movement = DeclaredSystem::new(
    ///     "movement",
    ///     SystemAccess::new().write_runtime(pos, "pos").read_runtime(vel, "vel"),
    ///     move |ctx| {
    ///         ctx.raw_view(&[pos, vel])?.each(|_, values| {
    ///             // SAFETY: `pos` is declared write; both are f32.
    ///             unsafe { *values[0].cast::<f32>() += *values[1].cast::<f32>() };
    ///         });
    ///         Ok(())
    ///     },
    /// );
    /// let mut builder = Schedule::builder();
    /// builder.add(movement);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// // SAFETY: aligned f32, read between ticks.
    /// assert_eq!(unsafe { *registry.get_raw(e, pos).unwrap().cast::<f32>().as_ptr() }, 3.0);
    /// ```
    pub fn raw_view(&self, ids: &[ComponentId]) -> Result<RawView<'_>, SystemError> {
        self.raw_view_with(ids, &[], &[], &[])
    }

    /// [`raw_view`](Self::raw_view) over `ids` (read or written as
    /// declared), joined with `with` (each declared, read-locked: a
    /// filter, never written, so never marked changed), with the
    /// [optional terms](RawView::optional) `optional` (read or written as
    /// declared), whose pointers [`RawView::each`] hands out after those
    /// of `ids` and `with`, visiting only the entities with no component
    /// of `without` ([`RawView::without`]). Every id must be declared (a
    /// filter reads membership).
    ///
    /// # Errors
    ///
    /// As [`raw_view`](Self::raw_view), for the ids of every list.
    pub fn raw_view_with(
        &self,
        ids: &[ComponentId],
        with: &[ComponentId],
        optional: &[ComponentId],
        without: &[ComponentId],
    ) -> Result<RawView<'_>, SystemError> {
        let declared = |id| {
            self.access
                .component_access(id)
                .ok_or_else(|| self.undeclared_runtime(id, Access::Read))
        };
        let mut terms = ids
            .iter()
            .map(|&id| Ok((id, declared(id)?)))
            .collect::<Result<Vec<_>, SystemError>>()?;
        for &id in with {
            declared(id)?;
            terms.push((id, Access::Read));
        }
        let mut view = self
            .cell
            .raw_view(&terms)
            .map_err(|e| self.registry_error(e))?;
        for &id in optional {
            view.optional(id, declared(id)?)
                .map_err(|e| self.registry_error(e))?;
        }
        for &id in without {
            declared(id)?;
            view.without(id).map_err(|e| self.registry_error(e))?;
        }
        Ok(view)
    }

    /// A pointer to `entity`'s value of run-time component `id`, aligned to
    /// its layout and valid until the system returns. Write through it only
    /// if the system declared `id` for writing; reading needs a declared
    /// read or write.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when `id` is not declared;
    /// [`SystemError::Registry`] when the entity is not alive, has no such
    /// value, the id is not a run-time component, or the pool is
    /// write-locked by a raw view of this system.
    pub fn get_raw(&self, entity: Entity, id: ComponentId) -> Result<NonNull<u8>, SystemError> {
        if !self.access.allows_component(id, Access::Read) {
            return Err(self.undeclared_runtime(id, Access::Read));
        }
        self.cell
            .get_raw(entity, id)
            .map_err(|e| self.registry_error(e))
    }

    /// The access the running system declared for component `id` (a
    /// write covers reads); `None` when it declared none.
    pub fn declared(&self, id: ComponentId) -> Option<Access> {
        self.access.component_access(id)
    }

    /// [`get_raw`](Self::get_raw) for a write: needs `id` declared for
    /// writing, and marks the value changed when `id` is tracked.
    ///
    /// # Errors
    ///
    /// As [`get_raw`](Self::get_raw) ([`SystemError::Undeclared`] for an
    /// id not declared for writing).
    pub fn get_raw_mut(&self, entity: Entity, id: ComponentId) -> Result<NonNull<u8>, SystemError> {
        if !self.access.allows_component(id, Access::Write) {
            return Err(self.undeclared_runtime(id, Access::Write));
        }
        self.cell
            .get_raw_mut(entity, id)
            .map_err(|e| self.registry_error(e))
    }

    /// The entities that lost run-time component `id` since `cursor` last
    /// read ([`RegistryCell::removed_raw`]), each passed to `f`; returns
    /// the number the bounded log dropped unread. Needs `id` declared
    /// (read or write).
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`]; [`SystemError::Registry`] as
    /// [`RegistryCell::removed_raw`].
    pub fn removed_raw(
        &self,
        id: ComponentId,
        cursor: &mut RemovedCursor,
        f: impl FnMut(Entity),
    ) -> Result<u64, SystemError> {
        if !self.access.allows_component(id, Access::Read) {
            return Err(self.undeclared_runtime(id, Access::Read));
        }
        self.cell
            .removed_raw(id, cursor, f)
            .map_err(|e| self.registry_error(e))
    }

    /// What the registry knows of component `id` (name, layout,
    /// destructor), e.g. to record a raw insert in the command buffer;
    /// `None` for an unknown id. Needs no declared access.
    pub fn component_info(&self, id: ComponentId) -> Option<&ComponentInfo> {
        self.cell.component_info(id)
    }

    /// Read access to resource `R`.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when `R` is not declared;
    /// [`SystemError::Registry`] when it is missing or write-locked.
    pub fn resource<R: Send + Sync + 'static>(
        &self,
    ) -> Result<MappedRwLockReadGuard<'_, R>, SystemError> {
        if !self
            .access
            .allows_resource(std::any::TypeId::of::<R>(), Access::Read)
        {
            return Err(self.undeclared("resource", std::any::type_name::<R>(), Access::Read));
        }
        self.cell
            .resource::<R>()
            .map_err(|e| self.registry_error(e))
    }

    /// Write access to resource `R`, marked changed at this run's change
    /// tick (on fetch; [`ResMut`](crate::ResMut) marks on write instead).
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when `R` is not declared for writing;
    /// [`SystemError::Registry`] when it is missing or locked.
    pub fn resource_mut<R: Send + Sync + 'static>(
        &self,
    ) -> Result<MappedRwLockWriteGuard<'_, R>, SystemError> {
        if !self
            .access
            .allows_resource(std::any::TypeId::of::<R>(), Access::Write)
        {
            return Err(self.undeclared("resource", std::any::type_name::<R>(), Access::Write));
        }
        self.cell
            .resource_mut::<R>()
            .map_err(|e| self.registry_error(e))
    }

    /// Read access to resource `R`, with its change ticks.
    ///
    /// # Errors
    ///
    /// As [`resource`](Self::resource).
    pub fn resource_with_ticks<R: Send + Sync + 'static>(
        &self,
    ) -> Result<(MappedRwLockReadGuard<'_, R>, ecs_engine::ResourceTicks), SystemError> {
        if !self
            .access
            .allows_resource(std::any::TypeId::of::<R>(), Access::Read)
        {
            return Err(self.undeclared("resource", std::any::type_name::<R>(), Access::Read));
        }
        self.cell
            .resource_with_ticks::<R>()
            .map_err(|e| self.registry_error(e))
    }

    /// Write access to resource `R`, with its change ticks to mark: unlike
    /// [`resource_mut`](Self::resource_mut), marks nothing by itself.
    ///
    /// # Errors
    ///
    /// As [`resource_mut`](Self::resource_mut).
    pub fn resource_mut_with_ticks<R: Send + Sync + 'static>(
        &self,
    ) -> Result<
        (
            MappedRwLockWriteGuard<'_, R>,
            ecs_engine::ResourceTicksMut<'_>,
        ),
        SystemError,
    > {
        if !self
            .access
            .allows_resource(std::any::TypeId::of::<R>(), Access::Write)
        {
            return Err(self.undeclared("resource", std::any::type_name::<R>(), Access::Write));
        }
        self.cell
            .resource_mut_with_ticks::<R>()
            .map_err(|e| self.registry_error(e))
    }

    /// The system's command buffer, applied after its wave.
    ///
    /// # Errors
    ///
    /// [`SystemError::Undeclared`] when the system did not declare commands,
    /// or when the buffer is already borrowed by this run.
    pub fn commands(&self) -> Result<RefMut<'_, CommandBuffer>, SystemError> {
        if !self.access.commands() {
            return Err(self.undeclared("command buffer", "CommandBuffer", Access::Write));
        }
        let buffer = self.commands.try_borrow_mut().map_err(|_| {
            self.undeclared("command buffer", "CommandBuffer (twice)", Access::Write)
        })?;
        Ok(RefMut::map(buffer, |b| &mut **b))
    }
}
