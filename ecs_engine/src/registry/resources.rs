//! `Registry` methods on resources: one value per type, outside any entity.

use super::Registry;
use crate::resources::Resources;

impl Registry {
    /// Stores `value` as the resource of its type; returns the one it
    /// replaces.
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        self.resources.insert(value)
    }

    /// Takes the resource of type `R` out.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove::<R>()
    }

    /// The resource of type `R`.
    pub fn resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get::<R>()
    }

    /// The resource of type `R`, mutable.
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        self.resources.get_mut::<R>()
    }

    /// `true` when a resource of type `R` is stored.
    pub fn contains_resource<R: Send + Sync + 'static>(&self) -> bool {
        self.resources.contains::<R>()
    }

    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }
}
