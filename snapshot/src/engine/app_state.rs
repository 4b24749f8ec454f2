//! Bevy-style states in snapshots ([`Snapshots::register_states`]): the
//! [`State<S>`] and [`NextState<S>`] resources of a state type `S`, so a
//! load resumes in the same state with the same pending transition.

use std::any::{TypeId, type_name};

use scheduler::{NextState, State, States};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::snapshots::check_unique;
use crate::{EntryKind, SnapshotError, Snapshots};

impl Snapshots {
    /// Registers the resources of state type `S` (added with
    /// `EngineBuilder::add_state`): [`State<S>`] under `name` and
    /// [`NextState<S>`] (a transition asked for and not yet made) under
    /// `name` followed by `" (next)"`.
    ///
    /// # Errors
    ///
    /// As [`register_resource`](Self::register_resource), for either name
    /// or type; neither is registered then.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use ecs_snapshot::{Format, Snapshots};
    /// use scheduler::{NextState, State};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    /// enum Level { One, Two }
    ///
    /// let mut snapshots = Snapshots::new();
    /// snapshots.register_states::<Level>("Level")?;
    /// let mut registry = Registry::new();
    /// registry.insert_resource(State::new(Level::One));
    /// let mut next = NextState::default();
    /// next.set_if_neq(Level::Two);
    /// registry.insert_resource(next);
    /// let bytes = snapshots.save(&registry, Format::Json)?;
    /// let mut loaded = Registry::new();
    /// snapshots.load(&mut loaded, &bytes, Format::Json)?;
    /// assert_eq!(loaded.resource::<State<Level>>().unwrap().get(), &Level::One);
    /// let next = loaded.resource::<NextState<Level>>().unwrap();
    /// assert_eq!(next.request(), Some((&Level::Two, true)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_states<S>(&mut self, name: &str) -> Result<&mut Snapshots, SnapshotError>
    where
        S: States + Serialize + DeserializeOwned,
    {
        let next_name = format!("{name} (next)");
        // Both checked first: a refusal registers neither.
        for (name, rust_type, type_name) in [
            (name, TypeId::of::<State<S>>(), type_name::<State<S>>()),
            (
                &next_name,
                TypeId::of::<NextState<S>>(),
                type_name::<NextState<S>>(),
            ),
        ] {
            check_unique(
                EntryKind::Resource,
                self.resources
                    .iter()
                    .map(|r| (r.name(), Some(r.rust_type()))),
                (name, Some(rust_type), type_name),
            )?;
        }
        self.register_resource_with::<State<S>, S>(name, |state| state.get().clone(), State::new)?
            .register_resource_with::<NextState<S>, Option<(S, bool)>>(
                &next_name,
                |next| {
                    next.request()
                        .map(|(value, if_neq)| (value.clone(), if_neq))
                },
                |request| {
                    let mut next = NextState::default();
                    match request {
                        Some((value, true)) => next.set_if_neq(value),
                        Some((value, false)) => next.set(value),
                        None => {}
                    }
                    next
                },
            )
    }
}
