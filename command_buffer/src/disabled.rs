//! Disabling and enabling entities through a command buffer.
//!
//! `CommandBuffer` methods here: `disable` and `enable`.

use ecs_engine::{Disabled, Entity};

use crate::CommandBuffer;

impl CommandBuffer {
    /// Records disabling `entity` (see
    /// [`Registry::disable`](ecs_engine::Registry::disable)): an
    /// [`insert`](Self::insert) of the [`Disabled`] marker, counted as an
    /// [`Insert`](crate::CommandKind::Insert) and skipped when `entity` is
    /// not alive when the command runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u32,));
    /// let mut commands = CommandBuffer::new();
    /// commands.disable(e);
    /// commands.apply(&mut registry);
    /// assert!(registry.is_disabled(e));
    /// assert_eq!(registry.view::<&u32>().count(), 0);
    /// commands.enable(e);
    /// commands.apply(&mut registry);
    /// assert_eq!(registry.view::<&u32>().count(), 1);
    /// ```
    pub fn disable(&mut self, entity: Entity) {
        self.insert(entity, Disabled);
    }

    /// Records enabling `entity` again: a [`remove`](Self::remove) of the
    /// [`Disabled`] marker, counted as a
    /// [`Remove`](crate::CommandKind::Remove) (a no-op when it was not
    /// disabled) and skipped when `entity` is not alive.
    pub fn enable(&mut self, entity: Entity) {
        self.remove::<Disabled>(entity);
    }
}
