//! Staging a decoded document: every name looked up, every entity
//! checked alive and listed once, every value decoded, before the
//! registry changes (see [`Snapshots::load`]).

use std::collections::HashMap;

use ecs_engine::{EntityAllocator, HierarchyState, Registry};

use super::{LoadFailure, Loaded, Snapshots, Wire};
use crate::document::Document;
use crate::{EntryKind, SnapshotError};

impl Snapshots {
    /// Decodes and checks `document` into what the swap applies to
    /// `target`.
    pub(crate) fn stage<C: Wire>(
        &self,
        document: Document<C::Value>,
        target: &Registry,
    ) -> Result<Loaded, SnapshotError> {
        let allocator = EntityAllocator::from_state(document.entities.into_state()?)?;
        let mut first_entry: HashMap<usize, usize> = HashMap::new();
        let mut components = Vec::with_capacity(document.components.len());
        let mut seen = Vec::new();
        for (entry, item) in document.components.iter().enumerate() {
            let name = &item.name;
            let &index =
                self.component_names
                    .get(name)
                    .ok_or_else(|| SnapshotError::UnknownName {
                        kind: EntryKind::Component,
                        name: name.clone(),
                        entry,
                    })?;
            if let Some(&first) = first_entry.get(&index) {
                return Err(SnapshotError::DuplicateEntry {
                    kind: EntryKind::Component,
                    name: name.clone(),
                    first,
                    entry,
                });
            }
            first_entry.insert(index, entry);
            // Every slot alive, none twice.
            let slots = allocator.slot_count();
            let indices =
                item.entities
                    .to_indices(slots)
                    .map_err(|count| SnapshotError::ListTooLong {
                        list: format!("component `{name}` (entry {entry})"),
                        count,
                        slots,
                    })?;
            seen.clear();
            seen.resize(slots, false);
            let mut entities = Vec::with_capacity(indices.len());
            for (position, slot) in indices.into_iter().enumerate() {
                let entity =
                    allocator
                        .entity_at(slot)
                        .ok_or_else(|| SnapshotError::DeadEntity {
                            name: name.clone(),
                            entry,
                            item: position,
                            index: slot,
                        })?;
                if std::mem::replace(&mut seen[slot as usize], true) {
                    return Err(SnapshotError::DuplicateEntity {
                        name: name.clone(),
                        entry,
                        item: position,
                        index: slot,
                    });
                }
                entities.push(entity);
            }
            let staged = C::load_component(
                self.components[index].as_ref(),
                target,
                entities,
                &item.values,
            )
            .map_err(|failure| match failure {
                LoadFailure::Decode(error) => SnapshotError::Value {
                    kind: EntryKind::Component,
                    name: name.clone(),
                    entry,
                    message: error.message,
                    offset: error.at.zip(item.values_at).map(|(at, start)| start + at),
                },
                LoadFailure::Refused(error) => *error,
                LoadFailure::Size { expected, found } => SnapshotError::RuntimeSize {
                    name: name.clone(),
                    entry,
                    expected,
                    found,
                },
                LoadFailure::Count { values, entities } => SnapshotError::CountMismatch {
                    name: name.clone(),
                    entry,
                    values,
                    entities,
                },
            })?;
            components.push(staged);
        }
        let mut first_entry: HashMap<usize, usize> = HashMap::new();
        let mut resources = Vec::with_capacity(document.resources.len());
        for (entry, item) in document.resources.iter().enumerate() {
            let name = &item.name;
            let &index =
                self.resource_names
                    .get(name)
                    .ok_or_else(|| SnapshotError::UnknownName {
                        kind: EntryKind::Resource,
                        name: name.clone(),
                        entry,
                    })?;
            if let Some(&first) = first_entry.get(&index) {
                return Err(SnapshotError::DuplicateEntry {
                    kind: EntryKind::Resource,
                    name: name.clone(),
                    first,
                    entry,
                });
            }
            first_entry.insert(index, entry);
            let staged =
                C::load_resource(self.resources[index].as_ref(), &item.value).map_err(|error| {
                    SnapshotError::Value {
                        kind: EntryKind::Resource,
                        name: name.clone(),
                        entry,
                        message: error.message,
                        offset: error.at.zip(item.value_at).map(|(at, start)| start + at),
                    }
                })?;
            resources.push(staged);
        }
        let absent: Vec<usize> = (0..self.resources.len())
            .filter(|index| !first_entry.contains_key(index))
            .collect();
        if let Some(&missing) = absent.iter().find(|&&i| self.resources[i].required()) {
            return Err(SnapshotError::MissingResource {
                name: self.resources[missing].name().to_owned(),
            });
        }
        let hierarchy = match document.hierarchy {
            Some(_) if !self.hierarchy => return Err(SnapshotError::HierarchyNotRegistered),
            Some(doc) => {
                let state = HierarchyState::from(doc);
                state.check(&allocator)?;
                Some(state)
            }
            None => None,
        };
        Ok(Loaded {
            allocator,
            components,
            resources,
            absent,
            hierarchy,
        })
    }
}
