//! `Registry` methods on resources: one value per type, outside any entity.

use super::Registry;
use crate::resources::Resources;
use crate::{ChangeTick, ResourceTicks};

impl Registry {
    /// Stores `value` as the resource of its type; returns the one it
    /// replaces. Stamps it changed at the current change tick, and added
    /// too when there was none (a replace keeps the added tick, as in
    /// bevy); see [`resource_ticks`](Self::resource_ticks).
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        let now = self.change.now;
        self.resources.insert(value, now)
    }

    /// Takes the resource of type `R` out.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove::<R>()
    }

    /// The resource of type `R`.
    pub fn resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get::<R>()
    }

    /// The resource of type `R`, mutable, marked changed at the current
    /// change tick (on fetch, as [`get_mut`](Self::get_mut) marks a
    /// component).
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        let now = self.change.now;
        self.resources.get_mut::<R>(now)
    }

    /// The resource of type `R`, mutable, without marking it changed (for
    /// a write that leaves the value as it was).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(1_u32);
    /// let since = registry.change_tick();
    /// registry.advance_change_tick();
    /// *registry.resource_mut_untracked::<u32>().unwrap() = 1;
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(false));
    /// *registry.resource_mut::<u32>().unwrap() = 2;
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(true));
    /// ```
    pub fn resource_mut_untracked<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        self.resources.get_mut_untracked::<R>()
    }

    /// The change ticks of resource `R` (when it was added, when last
    /// changed); `None` when there is none.
    pub fn resource_ticks<R: Send + Sync + 'static>(&self) -> Option<ResourceTicks> {
        self.resources.ticks::<R>()
    }

    /// `Some(true)` when resource `R` was changed (or added) after change
    /// tick `since`, read at the current tick; `None` when there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let before = registry.change_tick();
    /// assert_eq!(registry.resource_changed_since::<u32>(before), None);
    /// registry.advance_change_tick();
    /// registry.insert_resource(7_u32);
    /// let since = registry.change_tick();
    /// registry.advance_change_tick();
    /// assert_eq!(registry.resource_changed_since::<u32>(before), Some(true));
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(false));
    /// ```
    pub fn resource_changed_since<R: Send + Sync + 'static>(
        &self,
        since: ChangeTick,
    ) -> Option<bool> {
        let now = self.change_tick();
        Some(self.resource_ticks::<R>()?.is_changed(since, now))
    }

    /// `Some(true)` when resource `R` was added after change tick
    /// `since`, read at the current tick; `None` when there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let before = registry.change_tick();
    /// registry.advance_change_tick();
    /// registry.insert_resource(7_u32);
    /// assert_eq!(registry.resource_added_since::<u32>(before), Some(true));
    /// let since = registry.change_tick();
    /// registry.advance_change_tick();
    /// registry.insert_resource(8_u32); // a replace: changed, not added
    /// assert_eq!(registry.resource_added_since::<u32>(since), Some(false));
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(true));
    /// ```
    pub fn resource_added_since<R: Send + Sync + 'static>(
        &self,
        since: ChangeTick,
    ) -> Option<bool> {
        let now = self.change_tick();
        Some(self.resource_ticks::<R>()?.is_added(since, now))
    }

    /// `true` when a resource of type `R` is stored.
    pub fn contains_resource<R: Send + Sync + 'static>(&self) -> bool {
        self.resources.contains::<R>()
    }

    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }
}
