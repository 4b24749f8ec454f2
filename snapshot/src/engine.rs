//! Snapshots of a whole [`Engine`]: [`Snapshots::save_engine`] and
//! [`Snapshots::load_engine`], one call each.
//!
//! Besides the registry's document (entities, registered components and
//! resources, hierarchy), an engine snapshot holds an engine section
//! (`document::EngineSection`): the tick counter, the change clock,
//! the change ticks and removal logs of every registered component type
//! that tracks changes (run-time components keep none: their pools do not
//! track changes), the change ticks of every registered resource,
//! the [`WorldSeed`], every system's state (tick systems, enter and exit
//! systems of states, one-shot systems and observers: enabled or not,
//! its own value, its parameters' values: `Local`s, last-run change
//! ticks, removal cursors, what its run conditions keep for it), whether
//! the startup systems and each state type's initial enter have run, and
//! every command buffer's reserve. Event channels and bevy-style states
//! are resources ([`Snapshots::register_events`],
//! [`Snapshots::register_states`]).

pub(crate) mod app_state;
pub(crate) mod document;
pub(crate) mod events;
pub(crate) mod states;

use std::collections::HashMap;

use command_buffer::ReserveState;
use ecs_engine::{ChangeClockState, ChangeTick, PoolTicks, Registry, ResourceTicks};
use ecs_runtime::Engine;
use scheduler::{LoadedSystem, LoadedValue, ScheduleProgress, StateVisit, WorldSeed};

use self::document::{EngineSection, PoolTicksEntry, StateEntry, SystemEntry};
use crate::document::{JsonCodec, PostcardCodec};
use crate::snapshots::{Loaded, Wire};
use crate::{EntryKind, Format, SnapshotError, Snapshots};

/// The engine section decoded and checked, waiting for the swap.
struct StagedEngine {
    ticks: u64,
    clock: ChangeClockState,
    /// `(component codec, ticks)`.
    pool_ticks: Vec<(usize, PoolTicks)>,
    /// `(resource codec, ticks)`.
    resource_ticks: Vec<(usize, ResourceTicks)>,
    seed: Option<u64>,
    progress: ScheduleProgress,
    systems: Vec<LoadedSystem>,
    reserves: Vec<(String, ReserveState)>,
}

fn engine_error(part: impl Into<String>, message: impl Into<String>) -> SnapshotError {
    SnapshotError::EngineState {
        part: part.into(),
        message: message.into(),
    }
}

impl Snapshots {
    /// Saves a whole engine in `format`, between ticks: what
    /// [`save`](Self::save) holds of its registry, and the engine's own
    /// state: the tick counter, the change clock, the change ticks and
    /// removal logs of every registered component type that tracks
    /// changes, the change ticks of every registered resource, the
    /// [`WorldSeed`], every system's state (the tick systems, the enter
    /// and exit systems of states, the one-shot systems and observers:
    /// enabled or not, its own value, its parameters' `Local`s, last-run
    /// change ticks and removal cursors, what its run conditions keep for
    /// it) and command reserve, and whether the startup systems and each
    /// state type's initial enter have run. Event channels are resources, saved once registered
    /// ([`register_events`](Self::register_events)). A load into an engine built
    /// the same way ([`load_engine`](Self::load_engine)) goes on exactly
    /// as the saved one, with the same entity handles, the same `Added`
    /// and `Changed` results, the same `Local` values and the same
    /// events.
    ///
    /// Run-time components ([`register_runtime`](Self::register_runtime))
    /// are saved by their bytes, as by `save`; their pools keep no change
    /// ticks, so none are saved for them.
    ///
    /// Not saved: components and resources of unregistered types (the
    /// `Disabled` marker, the hierarchy and event channels included, until
    /// registered), input still in the input queues, the real-time clock
    /// of [`Engine::advance`]. A pipe is refused (its parts' state is not
    /// saved yet), as is a closure that captures values.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::UnsavedState`] naming the first system that keeps
    /// a value of a type with no codec ([`register_state`](Self::register_state));
    /// the errors of [`save`](Self::save).
    pub fn save_engine(&self, engine: &Engine, format: Format) -> Result<Vec<u8>, SnapshotError> {
        match format {
            Format::Json => JsonCodec::write(self.engine_document::<JsonCodec>(engine)?),
            Format::Postcard => {
                PostcardCodec::write(self.engine_document::<PostcardCodec>(engine)?)
            }
        }
    }

    fn engine_document<C: Wire>(
        &self,
        engine: &Engine,
    ) -> Result<crate::document::Document<C::Value>, SnapshotError> {
        let registry = engine.registry();
        let schedule = engine.schedule();
        let mut systems: Vec<SystemEntry<C::Value>> = Vec::new();
        schedule.visit_system_states(|visit| {
            match visit {
                StateVisit::System { name, enabled } => systems.push(SystemEntry {
                    name: name.to_owned(),
                    enabled,
                    values: Vec::new(),
                }),
                StateVisit::Value(value) => {
                    let system = systems
                        .last_mut()
                        .expect("a system comes before its values");
                    let codec = self.state_codec(value.value).ok_or_else(|| {
                        SnapshotError::UnsavedState {
                            system: system.name.clone(),
                            state: value.type_name.clone().into_owned(),
                        }
                    })?;
                    let encoded = C::save_state(codec, value.value).map_err(|message| {
                        SnapshotError::Value {
                            kind: EntryKind::State,
                            name: format!("{} of system `{}`", codec.name(), system.name),
                            entry: system.values.len(),
                            message,
                            offset: None,
                        }
                    })?;
                    system.values.push(StateEntry {
                        place: value.place.into(),
                        kind: codec.name().to_owned(),
                        value: encoded,
                    });
                }
            }
            Ok::<(), SnapshotError>(())
        })?;
        let mut document = self.document::<C>(registry)?;
        let clock = registry.export_change_clock();
        let progress = schedule.progress();
        document.engine = Some(EngineSection {
            ticks: engine.ticks(),
            clock: (clock.now, clock.last_check),
            pool_ticks: self.pool_ticks(registry),
            resource_ticks: self
                .resources
                .iter()
                .filter_map(|codec| {
                    let ticks = codec.ticks(registry)?;
                    Some((
                        codec.name().to_owned(),
                        ticks.added().get(),
                        ticks.changed().get(),
                    ))
                })
                .collect(),
            seed: registry.resource::<WorldSeed>().map(|seed| seed.0),
            startup_pending: progress.startup_pending,
            states_started: progress.states_started,
            systems,
            reserves: schedule.command_reserves(),
            checksum: 0,
        });
        Ok(document)
    }

    fn pool_ticks(&self, registry: &Registry) -> Vec<PoolTicksEntry> {
        self.components
            .iter()
            .filter_map(|codec| {
                let ticks = codec.export_ticks(registry)?;
                Some(PoolTicksEntry {
                    name: codec.name().to_owned(),
                    added: ticks.added,
                    changed: ticks.changed,
                    removed: ticks.removed,
                    removed_first: ticks.removed_first,
                })
            })
            .collect()
    }

    /// Loads a snapshot written by [`save_engine`](Self::save_engine)
    /// into `engine`, built the same way as the saved one (the same
    /// systems; the component types registered here), between ticks: the
    /// registry is loaded as by [`load`](Self::load), then the change
    /// ticks, the systems' states, the command reserves and the tick
    /// counter are put back, so the next ticks run as they ran after the
    /// save, and every handle a `commands.spawn()` returns names the
    /// entity it becomes.
    ///
    /// Everything is decoded and checked first: on any error the engine
    /// is exactly as before. Systems are matched by name, in order; a
    /// value of another type than the system keeps at its place (a save
    /// of another version of the system) is refused here when the
    /// engine's system has run, and otherwise makes that system's first
    /// run fail with an error naming it and both types.
    ///
    /// # Errors
    ///
    /// [`SnapshotError::NotAnEngine`] for a snapshot written by
    /// [`save`](Self::save); [`SnapshotError::Systems`] when the saved
    /// systems are not this engine's; [`SnapshotError::Reserves`] when
    /// the command reserves do not fit; [`SnapshotError::EngineState`]
    /// when the change ticks do not fit the loaded pools;
    /// [`SnapshotError::UnknownName`] (kind [`EntryKind::State`]) for a
    /// state type not registered; the errors of [`load`](Self::load).
    pub fn load_engine(
        &self,
        engine: &mut Engine,
        bytes: &[u8],
        format: Format,
    ) -> Result<(), SnapshotError> {
        let (loaded, staged) = match format {
            Format::Json => self.stage_engine::<JsonCodec>(engine, bytes)?,
            Format::Postcard => self.stage_engine::<PostcardCodec>(engine, bytes)?,
        };
        // The swap: nothing below can fail.
        let parts = engine.parts_mut();
        loaded.apply(self, parts.registry);
        parts.registry.restore_change_clock(staged.clock);
        for (index, ticks) in staged.pool_ticks {
            self.components[index]
                .import_ticks(parts.registry, ticks)
                .expect("the tick counts were checked against the loaded pools");
        }
        for (index, ticks) in staged.resource_ticks {
            self.resources[index].set_ticks(parts.registry, ticks);
        }
        if let Some(seed) = staged.seed {
            parts.registry.insert_resource(WorldSeed(seed));
        }
        parts
            .schedule
            .restore_command_reserves(parts.registry, staged.reserves)
            .expect("the reserves were checked against the loaded entities");
        let states = &self.states;
        parts
            .schedule
            .load_system_states(staged.systems, &staged.progress, &|dst, src| {
                let id = (*src).type_id();
                states
                    .iter()
                    .find(|c| c.rust_type() == id)
                    .is_some_and(|c| c.put(dst, src))
            })
            .expect("the system states were checked against the schedule");
        *parts.ticks = staged.ticks;
        Ok(())
    }

    fn stage_engine<C: Wire>(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> Result<(Loaded, StagedEngine), SnapshotError> {
        let mut document = C::read(bytes)?;
        let section = document.engine.take().ok_or(SnapshotError::NotAnEngine)?;
        let counts: HashMap<String, u64> = document
            .components
            .iter()
            .map(|entry| (entry.name.clone(), entry.entities.count()))
            .collect();
        let loaded = self.stage::<C>(document, engine.registry())?;
        let mut pool_ticks = Vec::with_capacity(section.pool_ticks.len());
        for (entry, item) in section.pool_ticks.into_iter().enumerate() {
            let &index =
                self.component_names
                    .get(&item.name)
                    .ok_or_else(|| SnapshotError::UnknownName {
                        kind: EntryKind::Component,
                        name: item.name.clone(),
                        entry,
                    })?;
            let count = counts.get(&item.name).copied().unwrap_or(0);
            if item.added.len() as u64 != count || item.changed.len() as u64 != count {
                return Err(engine_error(
                    format!("change ticks of component `{}`", item.name),
                    format!(
                        "{} added and {} changed ticks for {count} components",
                        item.added.len(),
                        item.changed.len()
                    ),
                ));
            }
            pool_ticks.push((
                index,
                PoolTicks {
                    added: item.added,
                    changed: item.changed,
                    removed: item.removed,
                    removed_first: item.removed_first,
                },
            ));
        }
        let mut resource_ticks = Vec::with_capacity(section.resource_ticks.len());
        for (entry, (name, added, changed)) in section.resource_ticks.into_iter().enumerate() {
            let &index =
                self.resource_names
                    .get(&name)
                    .ok_or_else(|| SnapshotError::UnknownName {
                        kind: EntryKind::Resource,
                        name: name.clone(),
                        entry,
                    })?;
            let ticks = ResourceTicks::new(ChangeTick::new(added), ChangeTick::new(changed));
            resource_ticks.push((index, ticks));
        }
        let systems = self.stage_systems::<C>(section.systems)?;
        let schedule = engine.schedule();
        let progress = ScheduleProgress {
            startup_pending: section.startup_pending,
            states_started: section.states_started,
        };
        schedule.check_system_states(&systems, &progress)?;
        let reserves = section.reserves;
        schedule.check_command_reserves(&loaded.allocator, &reserves)?;
        let staged = StagedEngine {
            ticks: section.ticks,
            clock: ChangeClockState {
                now: section.clock.0,
                last_check: section.clock.1,
            },
            pool_ticks,
            resource_ticks,
            seed: section.seed,
            progress,
            systems,
            reserves,
        };
        Ok((loaded, staged))
    }

    fn stage_systems<C: Wire>(
        &self,
        systems: Vec<SystemEntry<C::Value>>,
    ) -> Result<Vec<LoadedSystem>, SnapshotError> {
        let mut out = Vec::with_capacity(systems.len());
        for system in systems {
            let mut values = Vec::with_capacity(system.values.len());
            for (entry, item) in system.values.into_iter().enumerate() {
                let codec = self.state_codec_named(&item.kind).ok_or_else(|| {
                    SnapshotError::UnknownName {
                        kind: EntryKind::State,
                        name: format!("{} (system `{}`)", item.kind, system.name),
                        entry,
                    }
                })?;
                let value =
                    C::load_state(codec, &item.value).map_err(|message| SnapshotError::Value {
                        kind: EntryKind::State,
                        name: format!("{} of system `{}`", item.kind, system.name),
                        entry,
                        message,
                        offset: None,
                    })?;
                values.push(LoadedValue {
                    place: item.place.into(),
                    type_name: codec.type_name(),
                    value,
                });
            }
            out.push(LoadedSystem {
                name: system.name,
                enabled: system.enabled,
                values,
            });
        }
        Ok(out)
    }
}
