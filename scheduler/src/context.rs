//! What a running system sees: the registry through checked borrows, its
//! own command buffer, and the tick.

use std::cell::{RefCell, RefMut};

use command_buffer::CommandBuffer;
use ecs_engine::{Access, ComponentAccess, QueryData, QueryFilter, RegistryCell, View};
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::{SystemAccess, SystemError, Tick};

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
        }
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

    fn undeclared(&self, kind: &'static str, name: &'static str, access: Access) -> SystemError {
        SystemError::Undeclared {
            system: self.name.to_owned(),
            kind,
            name,
            access,
        }
    }

    fn check_components(
        &self,
        each: impl FnOnce(&mut dyn FnMut(ComponentAccess)),
    ) -> Result<(), SystemError> {
        let mut refused = None;
        each(&mut |c: ComponentAccess| {
            if refused.is_none() && !self.access.allows_component(c.type_id, c.access) {
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

    /// A view over `Q` with filter `F`.
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

    /// A view over `Q`.
    ///
    /// # Errors
    ///
    /// As [`query_filtered`](Self::query_filtered).
    pub fn query<Q: QueryData>(&self) -> Result<View<'_, Q>, SystemError> {
        self.query_filtered::<Q, ()>()
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

    /// Write access to resource `R`.
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
