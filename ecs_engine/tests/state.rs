//! In-memory states (`Registry::save_state` / `restore_state`) and
//! `Registry::clone_entity`: what a restore brings back (entities,
//! handles, components, dense order, change ticks, removal logs,
//! hierarchy, disabled marks, resources), what a save refuses, and a
//! model test of random operations around a save and a restore. Sizes are
//! small enough for Miri.

use std::alloc::Layout;
use std::collections::BTreeMap;

use ecs_engine::{
    Added, ChangeTick, Changed, CloneEntityError, ComponentDescriptor, Disabled, EcsError, Entity,
    Mut, Registry, RemovedCursor, StateError,
};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
struct Position(f32, f32);
#[derive(Debug, Clone, PartialEq)]
struct Name(String);
#[derive(Debug, Clone, PartialEq)]
struct Score(u64);

/// A component whose clone is never registered.
#[derive(Debug)]
struct Opaque;

fn registry() -> Registry {
    let mut registry = Registry::new();
    // Position's saves copy only what was written (by its ticks); Name's
    // copy every value.
    registry.register_clone_delta::<Position>();
    registry.register_clone::<Name>();
    registry.track_changes::<Position>();
    registry
}

/// The live handles, and the two typed pools' owners in dense order with
/// their values.
type Contents = (Vec<Entity>, Vec<(Entity, Position)>, Vec<(Entity, Name)>);

/// Everything a reader sees of the two typed pools.
fn contents(registry: &Registry) -> Contents {
    let live = registry.entities().iter().collect();
    let positions = registry
        .pool::<Position>()
        .map(|p| p.iter().map(|(e, v)| (e, v.clone())).collect())
        .unwrap_or_default();
    let names = registry
        .pool::<Name>()
        .map(|p| p.iter().map(|(e, v)| (e, v.clone())).collect())
        .unwrap_or_default();
    (live, positions, names)
}

#[test]
fn restore_brings_back_entities_handles_and_dense_order() {
    let mut registry = registry();
    let mut handles = Vec::new();
    for i in 0..20 {
        handles.push(registry.spawn((Position(i as f32, 0.0), Name(format!("e{i}")))));
    }
    for &e in handles.iter().step_by(3) {
        registry.despawn(e).unwrap();
    }
    registry.remove::<Name>(handles[4]).unwrap();
    let saved = contents(&registry);
    let state = registry.save_state().unwrap();
    assert_eq!(state.len(), registry.len());
    // What the next spawns get after the save.
    let next: Vec<Entity> = (0..8).map(|_| registry.spawn(())).collect();

    registry.despawn(handles[1]).unwrap();
    registry.get_mut::<Position>(handles[2]).unwrap().0 = 99.0;
    registry.insert(handles[4], Name("back".into())).unwrap();
    registry.restore_state(&state).unwrap();

    assert_eq!(contents(&registry), saved);
    assert!(!registry.is_alive(next[0]) || next[0] == handles[0]);
    let again: Vec<Entity> = (0..8).map(|_| registry.spawn(())).collect();
    assert_eq!(
        again, next,
        "the allocator's free list and generations came back"
    );
    // A state restores as often as wanted.
    registry.restore_state(&state).unwrap();
    assert_eq!(contents(&registry), saved);
}

#[test]
fn restore_makes_no_spurious_added_or_changed() {
    let mut registry = registry();
    let a = registry.spawn((Position(0.0, 0.0),));
    let b = registry.spawn((Position(1.0, 0.0),));
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<Position>(a).unwrap().1 = 5.0;
    let state = registry.save_state().unwrap();
    assert_eq!(state.change_tick(), registry.change_tick());

    let changed = |r: &Registry, since: ChangeTick| -> Vec<Entity> {
        r.view_since::<(Entity, &Position), Changed<Position>>(since)
            .iter()
            .map(|(e, _)| e)
            .collect()
    };
    let added = |r: &Registry, since: ChangeTick| -> Vec<Entity> {
        r.view_since::<(Entity, &Position), Added<Position>>(since)
            .iter()
            .map(|(e, _)| e)
            .collect()
    };
    assert_eq!(changed(&registry, since), vec![a]);
    assert!(added(&registry, since).is_empty());

    for _ in 0..3 {
        registry.advance_change_tick();
    }
    registry.get_mut::<Position>(b).unwrap().0 = 7.0;
    let c = registry.spawn((Position(2.0, 0.0),));
    registry.restore_state(&state).unwrap();

    assert_eq!(registry.change_tick(), state.change_tick());
    assert_eq!(changed(&registry, since), vec![a]);
    assert!(added(&registry, since).is_empty());
    assert_eq!(
        registry.pool::<Position>().unwrap().change_ticks(b),
        Some((since, since))
    );
    assert!(!registry.is_alive(c));
}

#[test]
fn removal_logs_are_restored_as_they_were() {
    let mut registry = registry();
    let e: Vec<Entity> = (0..4)
        .map(|i| registry.spawn((Position(i as f32, 0.0),)))
        .collect();
    registry.remove::<Position>(e[0]).unwrap();
    registry.despawn(e[1]).unwrap();
    let state = registry.save_state().unwrap();
    registry.remove::<Position>(e[2]).unwrap();
    registry.despawn(e[3]).unwrap();
    let mut cursor = RemovedCursor::default();
    assert_eq!(registry.removed::<Position>(&mut cursor).len(), 4);

    registry.restore_state(&state).unwrap();
    let mut fresh = RemovedCursor::default();
    let lost: Vec<Entity> = registry.removed::<Position>(&mut fresh).iter().collect();
    assert_eq!(lost, vec![e[0], e[1]]);
    // The removals after a restore are numbered from where the save was.
    registry.remove::<Position>(e[2]).unwrap();
    let lost: Vec<Entity> = registry.removed::<Position>(&mut fresh).iter().collect();
    assert_eq!(lost, vec![e[2]]);
}

#[test]
fn hierarchy_disabled_marks_and_types_registered_later() {
    let mut registry = registry();
    let root = registry.spawn((Name("root".into()),));
    let child = registry.spawn((Name("child".into()),));
    registry.set_parent(child, root).unwrap();
    registry.insert(root, Disabled).unwrap();
    let state = registry.save_state().unwrap();

    registry.remove_parent(child).unwrap();
    registry.remove::<Disabled>(root).unwrap();
    registry.register_clone::<Score>();
    registry.insert(child, Score(3)).unwrap();
    registry.restore_state(&state).unwrap();

    assert_eq!(registry.parent(child), Some(root));
    assert_eq!(registry.children(root), &[child]);
    assert!(registry.has::<(Disabled,)>(root));
    assert_eq!(
        registry.count::<Score>(),
        0,
        "a pool registered after the save is emptied"
    );
    let mut cursor = RemovedCursor::default();
    assert!(registry.removed::<Score>(&mut cursor).is_empty());
}

#[test]
fn a_save_refuses_a_pool_without_clone_by_name() {
    let mut registry = registry();
    registry.spawn((Position(0.0, 0.0), Opaque));
    let error = registry.save_state().unwrap_err();
    assert_eq!(
        error,
        StateError::NotClonable {
            component: std::any::type_name::<Opaque>().into()
        }
    );
    assert!(error.to_string().contains("register_clone"), "{error}");

    // A run-time component with a destructor: refused by its name.
    let mut registry = Registry::new();
    // SAFETY: the destructor does nothing.
    let owned =
        unsafe { ComponentDescriptor::new("Owned", Layout::new::<u64>()).with_drop(|_| {}) };
    registry.register_runtime(owned).unwrap();
    let error = registry.save_state().unwrap_err();
    assert_eq!(
        error,
        StateError::NotClonable {
            component: "Owned".into()
        }
    );
}

#[test]
fn run_time_components_of_plain_bytes_are_copied() {
    let mut registry = Registry::new();
    let id = registry
        .register_runtime(ComponentDescriptor::new("Pair", Layout::new::<[u32; 2]>()))
        .unwrap();
    let read = |r: &Registry, e: Entity| {
        // SAFETY: the pool stores aligned `[u32; 2]` values.
        r.get_raw(e, id)
            .ok()
            .map(|p| unsafe { *p.cast::<[u32; 2]>().as_ptr() })
    };
    let e: Vec<Entity> = (0..5).map(|_| registry.spawn(())).collect();
    for (i, &entity) in e.iter().enumerate() {
        let value = [i as u32, 10 * i as u32];
        // SAFETY: a valid `[u32; 2]`, plain bytes.
        unsafe { registry.insert_raw(entity, id, value.as_ptr().cast()) }.unwrap();
    }
    let state = registry.save_state().unwrap();
    assert_eq!(registry.remove_by_id(e[1], id), Ok(true));
    let other = [7u32, 7];
    // SAFETY: as above.
    unsafe { registry.insert_raw(e[2], id, other.as_ptr().cast()) }.unwrap();
    registry.restore_state(&state).unwrap();
    for (i, &entity) in e.iter().enumerate() {
        assert_eq!(read(&registry, entity), Some([i as u32, 10 * i as u32]));
    }

    // Into a fresh registry: the pool is registered under its id.
    let mut fresh = Registry::new();
    fresh.restore_state(&state).unwrap();
    assert_eq!(fresh.component_by_name("Pair"), Some(id));
    assert_eq!(read(&fresh, e[3]), Some([3, 30]));
}

#[test]
fn resources_opt_in_and_the_others_are_named() {
    let mut registry = registry();
    registry.register_resource_clone::<Score>();
    registry.insert_resource(Score(1));
    registry.insert_resource(Opaque);
    let state = registry.save_state().unwrap();
    assert_eq!(
        state.unsaved_resources(),
        &[std::any::type_name::<Opaque>()]
    );

    registry.resource_mut::<Score>().unwrap().0 = 9;
    registry.remove_resource::<Opaque>();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(1)));
    assert!(
        registry.resource::<Opaque>().is_none(),
        "unsaved resources stay as they are"
    );

    registry.remove_resource::<Score>();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(1)));
}

#[test]
fn restore_into_a_fresh_registry_and_a_mismatched_one() {
    let mut registry = registry();
    let a = registry.spawn((Position(1.0, 2.0), Name("a".into())));
    let state = registry.save_state().unwrap();

    let mut fresh = Registry::new();
    fresh.restore_state(&state).unwrap();
    assert_eq!(contents(&fresh), contents(&registry));
    assert!(fresh.is_tracking_changes::<Position>());
    fresh.advance_change_tick();
    fresh.get_mut::<Position>(a).unwrap().0 = 3.0;
    let now = fresh.change_tick();
    assert_eq!(
        fresh.pool::<Position>().unwrap().change_ticks(a).unwrap().1,
        now
    );
    assert_eq!(
        fresh.clone_entity(a).map(|e| fresh.get::<Name>(e).cloned()),
        Ok(Some(Name("a".into())))
    );

    let mut other = Registry::new();
    other.register_clone::<Name>();
    let error = other.restore_state(&state).unwrap_err();
    assert!(
        matches!(error, StateError::OtherTypes { position: 0, .. }),
        "{error}"
    );
    assert_eq!(other.count::<Name>(), 0);
}

#[test]
fn save_into_reuses_the_state_and_equals_a_fresh_save() {
    let mut registry = registry();
    let mut state = ecs_engine::RegistryState::default();
    for round in 0..3u32 {
        for i in 0..10 {
            registry.spawn((Position(i as f32, round as f32),));
        }
        registry.save_state_into(&mut state).unwrap();
        let saved = contents(&registry);
        registry.clear();
        registry.restore_state(&state).unwrap();
        assert_eq!(contents(&registry), saved);
        assert_eq!(
            state.count_by_name(std::any::type_name::<Position>()),
            Some(10 * (round as usize + 1))
        );
    }
}

#[test]
fn clone_entity_copies_clonable_components_and_refuses_others() {
    let mut registry = registry();
    registry.track_changes::<Name>();
    let parent = registry.spawn(());
    let orc = registry.spawn((Position(1.0, 1.0), Name("orc".into())));
    registry.set_parent(orc, parent).unwrap();
    registry.advance_change_tick();
    let twin = registry.clone_entity(orc).unwrap();
    assert_eq!(registry.get::<Position>(twin), Some(&Position(1.0, 1.0)));
    assert_eq!(registry.get::<Name>(twin), Some(&Name("orc".into())));
    assert_eq!(registry.parent(twin), Some(parent));
    assert_eq!(registry.children(parent), &[orc, twin]);
    let now = registry.change_tick();
    assert_eq!(
        registry.pool::<Name>().unwrap().change_ticks(twin),
        Some((now, now))
    );
    assert!(registry.clone_entity(parent).unwrap() != parent);
    assert!(
        registry.children(parent).len() == 2,
        "children are not cloned"
    );

    let secret = registry.spawn((Name("x".into()), Opaque));
    let before = registry.len();
    assert_eq!(
        registry.clone_entity(secret),
        Err(CloneEntityError::NotClonable {
            entity: secret,
            component: std::any::type_name::<Opaque>().into()
        })
    );
    assert_eq!(registry.len(), before);
    registry.despawn(secret).unwrap();
    assert_eq!(
        registry.clone_entity(secret),
        Err(CloneEntityError::Registry(EcsError::NoSuchEntity {
            entity: secret
        }))
    );
}

// --- model ------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Spawn(u8),
    InsertPosition(u8, u8),
    InsertName(u8, u8),
    RemovePosition(u8),
    Despawn(u8),
    /// Writes in place: `get_mut` (marks), a `&mut` view (marks every
    /// one), `get_mut_untracked` and an `Untracked` view (mark nothing).
    Write(u8, u8, WriteBy),
    /// Advances the change tick.
    Advance,
}

#[derive(Debug, Clone, Copy)]
enum WriteBy {
    GetMut,
    View,
    GetMutUntracked,
    UntrackedView,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<u8>().prop_map(Op::Spawn),
        (any::<u8>(), any::<u8>()).prop_map(|(e, v)| Op::InsertPosition(e, v)),
        (any::<u8>(), any::<u8>()).prop_map(|(e, v)| Op::InsertName(e, v)),
        any::<u8>().prop_map(Op::RemovePosition),
        any::<u8>().prop_map(Op::Despawn),
    ]
}

/// [`op`] and writes in place of every kind, and advances of the clock.
fn write_op() -> impl Strategy<Value = Op> {
    let by = prop_oneof![
        Just(WriteBy::GetMut),
        Just(WriteBy::View),
        Just(WriteBy::GetMutUntracked),
        Just(WriteBy::UntrackedView),
    ];
    prop_oneof![
        3 => op(),
        4 => (any::<u8>(), any::<u8>(), by).prop_map(|(e, v, by)| Op::Write(e, v, by)),
        2 => Just(Op::Advance),
    ]
}

/// Each entity's (position x, name), by handle.
type Model = BTreeMap<Entity, (Option<u8>, Option<u8>)>;

/// Runs `op` on the registry and the model; returns the handle a spawn
/// made. `pick` chooses among the live entities (in handle order).
fn apply(registry: &mut Registry, model: &mut Model, op: &Op) -> Option<Entity> {
    let pick = |model: &Model, k: u8| model.keys().nth(k as usize % model.len().max(1)).copied();
    match *op {
        Op::Spawn(v) => {
            let e = registry.spawn((Position(f32::from(v), 0.0),));
            model.insert(e, (Some(v), None));
            return Some(e);
        }
        Op::InsertPosition(k, v) => {
            if let Some(e) = pick(model, k) {
                registry.insert(e, Position(f32::from(v), 0.0)).unwrap();
                model.get_mut(&e).unwrap().0 = Some(v);
            }
        }
        Op::InsertName(k, v) => {
            if let Some(e) = pick(model, k) {
                registry.insert(e, Name(v.to_string())).unwrap();
                model.get_mut(&e).unwrap().1 = Some(v);
            }
        }
        Op::RemovePosition(k) => {
            if let Some(e) = pick(model, k) {
                let _ = registry.remove::<Position>(e);
                model.get_mut(&e).unwrap().0 = None;
            }
        }
        Op::Despawn(k) => {
            if let Some(e) = pick(model, k) {
                registry.despawn(e).unwrap();
                model.remove(&e);
            }
        }
        Op::Write(k, v, by) => {
            let e = pick(model, k)?;
            let x = model.get_mut(&e).unwrap().0.as_mut()?;
            let value = f32::from(v);
            match by {
                WriteBy::GetMut => registry.get_mut::<Position>(e).unwrap().0 = value,
                WriteBy::GetMutUntracked => {
                    registry.get_mut_untracked::<Position>(e).unwrap().0 = value;
                }
                WriteBy::View => registry
                    .view_mut::<(Entity, &mut Position)>()
                    .each(|(at, p)| {
                        if at == e {
                            p.0 = value;
                        }
                    }),
                WriteBy::UntrackedView => registry
                    .view_mut::<(Entity, ecs_engine::Untracked<Position>)>()
                    .each(|(at, p)| {
                        if at == e {
                            p.0 = value;
                        }
                    }),
            }
            *x = v;
        }
        Op::Advance => {
            registry.advance_change_tick();
        }
    }
    None
}

/// What a restore must give back: the model, the `Position` ticks and
/// the change tick at the save.
type Frame = (
    Model,
    BTreeMap<Entity, (ChangeTick, ChangeTick)>,
    ChangeTick,
);

/// Each live entity's `Position` change ticks (added, changed), by
/// handle: what change filters see.
fn position_ticks(registry: &Registry) -> BTreeMap<Entity, (ChangeTick, ChangeTick)> {
    let pool = registry.pool::<Position>().unwrap();
    pool.entities()
        .iter()
        .map(|&e| (e, pool.change_ticks(e).unwrap()))
        .collect()
}

fn check(registry: &Registry, model: &Model) -> Result<(), TestCaseError> {
    let live: Vec<Entity> = {
        let mut live: Vec<Entity> = registry.entities().iter().collect();
        live.sort();
        live
    };
    prop_assert_eq!(live, model.keys().copied().collect::<Vec<_>>());
    for (&e, &(x, name)) in model {
        prop_assert_eq!(registry.get::<Position>(e).map(|p| p.0), x.map(f32::from));
        prop_assert_eq!(
            registry.get::<Name>(e).map(|n| n.0.clone()),
            name.map(|v| v.to_string())
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random operations, a save, more operations, a restore: the
    /// registry equals the model's copy from the save; replaying the
    /// operations after the save spawns the same handles and ends in the
    /// same world as the first time.
    #[test]
    fn restore_returns_to_the_model_at_the_save(
        before in proptest::collection::vec(op(), 0..if cfg!(miri) { 12 } else { 60 }),
        after in proptest::collection::vec(op(), 0..if cfg!(miri) { 12 } else { 60 }),
    ) {
        let mut registry = registry();
        let mut model = Model::new();
        for op in &before {
            apply(&mut registry, &mut model, op);
        }
        let state = registry.save_state().unwrap();
        let at_save = model.clone();
        let spawned: Vec<Option<Entity>> =
            after.iter().map(|op| apply(&mut registry, &mut model, op)).collect();
        let at_end = (model.clone(), contents(&registry));

        registry.restore_state(&state).unwrap();
        check(&registry, &at_save)?;
        let mut replay = at_save;
        let again: Vec<Option<Entity>> =
            after.iter().map(|op| apply(&mut registry, &mut replay, op)).collect();
        prop_assert_eq!(again, spawned);
        prop_assert_eq!(&replay, &at_end.0);
        prop_assert_eq!(contents(&registry), at_end.1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A rollback loop: one state saved into again and again
    /// (`save_state_into`, which copies only the values of a pool whose
    /// entities did not move since the last save or restore), each round
    /// restored once or twice: every restore equals the model at its save.
    #[test]
    fn one_state_saved_into_every_round(
        rounds in proptest::collection::vec(
            (
                proptest::collection::vec(op(), 0..if cfg!(miri) { 6 } else { 20 }),
                proptest::collection::vec(op(), 0..if cfg!(miri) { 6 } else { 20 }),
                any::<bool>(),
            ),
            1..if cfg!(miri) { 3 } else { 8 },
        ),
    ) {
        let mut registry = registry();
        let mut model = Model::new();
        let mut state = ecs_engine::RegistryState::default();
        for (before, after, twice) in &rounds {
            for op in before {
                apply(&mut registry, &mut model, op);
            }
            registry.save_state_into(&mut state).unwrap();
            let at_save = model.clone();
            for op in after {
                apply(&mut registry, &mut model, op);
            }
            registry.restore_state(&state).unwrap();
            check(&registry, &at_save)?;
            if *twice {
                model = at_save.clone();
                for op in after {
                    apply(&mut registry, &mut model, op);
                }
                registry.restore_state(&state).unwrap();
                check(&registry, &at_save)?;
            }
            model = at_save;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Three states, each saved into again and again, restored in any
    /// order, with writes in place of every kind in between (marked ones,
    /// which a save or restore copies alone when nothing else moved, and
    /// unmarked ones, which make it copy every value): every restore gives
    /// back the values, entities and change ticks of its state's save, and
    /// so does a fresh registry restored from it.
    #[test]
    fn saves_and_restores_in_any_order_with_writes_in_place(
        rounds in proptest::collection::vec(
            (
                proptest::collection::vec(write_op(), 0..if cfg!(miri) { 6 } else { 16 }),
                0..3_usize,
                any::<bool>(),
            ),
            1..if cfg!(miri) { 4 } else { 24 },
        ),
    ) {
        let mut registry = registry();
        let mut model = Model::new();
        let mut states: Vec<ecs_engine::RegistryState> =
            (0..3).map(|_| ecs_engine::RegistryState::default()).collect();
        let mut saved: Vec<Option<Frame>> = vec![None, None, None];
        for (ops, k, restore) in &rounds {
            for op in ops {
                apply(&mut registry, &mut model, op);
            }
            if *restore {
                if let Some((at_save, ticks, tick)) = &saved[*k] {
                    registry.restore_state(&states[*k]).unwrap();
                    check(&registry, at_save)?;
                    prop_assert_eq!(&position_ticks(&registry), ticks);
                    prop_assert_eq!(registry.change_tick(), *tick);
                    model = at_save.clone();
                }
            } else {
                registry.save_state_into(&mut states[*k]).unwrap();
                saved[*k] = Some((model.clone(), position_ticks(&registry), registry.change_tick()));
                let mut fresh = self::registry();
                fresh.restore_state(&states[*k]).unwrap();
                check(&fresh, &model)?;
                prop_assert_eq!(position_ticks(&fresh), position_ticks(&registry));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A `StateRing` of 4 frames saved every round, with writes in place
    /// of every kind and structural changes in between, restored now and
    /// then to a random frame: every restore gives back the values,
    /// entities, change ticks and change tick of that frame's save, and
    /// the ring then holds the frames up to it.
    #[test]
    fn a_ring_restores_any_frame_it_holds(
        rounds in proptest::collection::vec(
            (
                proptest::collection::vec(write_op(), 0..if cfg!(miri) { 6 } else { 12 }),
                proptest::option::weighted(0.25, 0..5_usize),
            ),
            1..if cfg!(miri) { 5 } else { 30 },
        ),
    ) {
        const CAPACITY: usize = 4;
        let mut registry = registry();
        let mut model = Model::new();
        let mut ring = ecs_engine::StateRing::new(CAPACITY);
        let mut frames: std::collections::VecDeque<Frame> = std::collections::VecDeque::new();
        for (ops, restore) in &rounds {
            for op in ops {
                apply(&mut registry, &mut model, op);
            }
            match restore {
                Some(back) if *back < frames.len() => {
                    registry.restore_frame(&mut ring, *back).unwrap();
                    frames.truncate(frames.len() - back);
                    let (at_save, ticks, tick) = frames.back().unwrap();
                    check(&registry, at_save)?;
                    prop_assert_eq!(&position_ticks(&registry), ticks);
                    prop_assert_eq!(registry.change_tick(), *tick);
                    model = at_save.clone();
                }
                Some(back) => {
                    let refused = registry.restore_frame(&mut ring, *back).unwrap_err();
                    prop_assert_eq!(
                        refused,
                        StateError::NoSuchFrame { back: *back, frames: frames.len() }
                    );
                }
                None => {
                    registry.save_frame(&mut ring).unwrap();
                    frames.push_back((model.clone(), position_ticks(&registry), registry.change_tick()));
                    if frames.len() > CAPACITY {
                        frames.pop_front();
                    }
                }
            }
            prop_assert_eq!(ring.len(), frames.len());
        }
    }
}

/// A resource that counts its clones, for the resource-delta test.
#[derive(Debug, PartialEq)]
struct Plan(Vec<u32>);

static PLAN_CLONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clone for Plan {
    fn clone(&self) -> Self {
        PLAN_CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Plan(self.0.clone())
    }
}

#[test]
fn a_delta_resource_is_copied_only_after_a_write() {
    let clones = || PLAN_CLONES.load(std::sync::atomic::Ordering::Relaxed);
    let mut registry = Registry::new();
    registry.register_resource_clone_delta::<Plan>();
    registry.insert_resource(Plan(vec![1]));
    let mut state = registry.save_state().unwrap();
    assert_eq!(clones(), 1);
    // Unwritten: the state's copy is shared, whatever else ticks.
    for _ in 0..3 {
        registry.advance_change_tick();
        registry.save_state_into(&mut state).unwrap();
    }
    assert_eq!(clones(), 1);
    // Taken for writing through the cell but not written (not marked):
    // still the same value.
    {
        let cell = registry.cell();
        let (plan, _ticks) = cell.resource_mut_with_ticks::<Plan>().unwrap();
        assert_eq!(plan.0, [1]);
    }
    registry.save_state_into(&mut state).unwrap();
    assert_eq!(clones(), 1);

    // Each way of writing makes the next save copy, and a restore gives
    // back the value of the save it restores.
    type Write = fn(&mut Registry, u32);
    let writes: [(&str, Write); 5] = [
        ("resource_mut", |r, v| {
            r.resource_mut::<Plan>().unwrap().0.push(v)
        }),
        ("resource_mut_untracked", |r, v| {
            r.resource_mut_untracked::<Plan>().unwrap().0.push(v)
        }),
        ("cell resource_mut", |r, v| {
            r.cell().resource_mut::<Plan>().unwrap().0.push(v)
        }),
        ("marked guard", |r, v| {
            let cell = r.cell();
            let (mut plan, ticks) = cell.resource_mut_with_ticks::<Plan>().unwrap();
            plan.0.push(v);
            ticks.mark(cell.change_tick());
        }),
        ("insert_resource", |r, v| {
            let mut plan = r.resource::<Plan>().unwrap().0.clone();
            plan.push(v);
            r.insert_resource(Plan(plan));
        }),
    ];
    let mut expected = vec![1];
    for (k, (how, write)) in writes.iter().enumerate() {
        let v = k as u32 + 2;
        write(&mut registry, v);
        expected.push(v);
        let before = clones();
        registry.save_state_into(&mut state).unwrap();
        assert!(
            clones() > before,
            "{how}: the save did not copy the written value"
        );
        write(&mut registry, 100);
        registry.restore_state(&state).unwrap();
        assert_eq!(registry.resource::<Plan>().unwrap().0, expected, "{how}");
        // The restored value is the saved one: the next save shares it.
        let before = clones();
        registry.save_state_into(&mut state).unwrap();
        assert_eq!(clones(), before, "{how}: a restored value copied again");
    }

    // In a ring, each frame keeps the value it saw.
    let mut ring = ecs_engine::StateRing::new(4);
    registry.save_frame(&mut ring).unwrap();
    registry.save_frame(&mut ring).unwrap();
    registry.resource_mut::<Plan>().unwrap().0.push(7);
    registry.save_frame(&mut ring).unwrap();
    registry.restore_frame(&mut ring, 1).unwrap();
    assert_eq!(registry.resource::<Plan>().unwrap().0, expected);
    registry.resource_mut::<Plan>().unwrap().0.clear();
    registry.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(registry.resource::<Plan>().unwrap().0, expected);
}

#[test]
fn a_restore_needs_no_registration_and_keeps_what_the_save_could_not_copy() {
    // Saved by a registry that registered `Score`'s clone: restored into
    // one that did not, the saved value comes back (no panic).
    let mut saver = Registry::new();
    saver.register_resource_clone_delta::<Score>();
    saver.insert_resource(Score(7));
    let state = saver.save_state().unwrap();
    let mut other = Registry::new();
    other.insert_resource(Score(1));
    other.restore_state(&state).unwrap();
    assert_eq!(other.resource::<Score>(), Some(&Score(7)));

    // A resource the save saw but could not copy (its clone registered
    // only after the save) stays as it is; one of a
    // registered type inserted after the save goes.
    let mut registry = Registry::new();
    registry.insert_resource(Score(3));
    let state = registry.save_state().unwrap();
    assert_eq!(state.unsaved_resources().len(), 1);
    registry.register_resource_clone_delta::<Score>();
    registry.register_resource_clone::<Name>();
    registry.insert_resource(Name("later".into()));
    registry.resource_mut::<Score>().unwrap().0 = 4;
    registry.advance_change_tick();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(4)));
    assert_eq!(registry.resource::<Name>(), None);
    // And its next save copies it (it was not the value of any save).
    let mut state = registry.save_state().unwrap();
    registry.restore_state(&state).unwrap();
    registry.save_state_into(&mut state).unwrap();
    registry.resource_mut::<Score>().unwrap().0 = 9;
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(4)));
}

/// A component that counts its clones, for the bypass test.
#[derive(Debug, PartialEq)]
struct Heat(u32);

static HEAT_CLONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clone for Heat {
    fn clone(&self) -> Self {
        HEAT_CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Heat(self.0)
    }
}

#[test]
fn a_write_that_bypasses_change_detection_is_saved_by_a_delta() {
    let clones = || HEAT_CLONES.load(std::sync::atomic::Ordering::Relaxed);
    let mut registry = Registry::new();
    registry.register_clone_delta::<Heat>();
    registry.track_changes::<Heat>();
    let first = registry.spawn((Heat(0),));
    for i in 1..10 {
        registry.spawn((Heat(i),));
    }
    let mut state = registry.save_state().unwrap();
    let mut ring = ecs_engine::StateRing::new(3);
    registry.save_frame(&mut ring).unwrap();
    registry.save_frame(&mut ring).unwrap();
    // Synced: a save after a read through `Mut` copies nothing.
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.view_mut::<Mut<Heat>>().each(|h| assert!(h.0 < 10));
    let before = clones();
    registry.save_state_into(&mut state).unwrap();
    assert_eq!(clones(), before);
    registry.save_frame(&mut ring).unwrap();
    // A write that bypasses change detection: seen by both saves.
    registry.advance_change_tick();
    registry
        .view_mut::<Mut<Heat>>()
        .each(|mut h| h.bypass_change_detection().0 += 100);
    registry.save_state_into(&mut state).unwrap();
    registry.save_frame(&mut ring).unwrap();
    registry.get_mut::<Heat>(first).unwrap().0 = 7;
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.get::<Heat>(first), Some(&Heat(100)));
    registry.get_mut::<Heat>(first).unwrap().0 = 7;
    registry.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(registry.get::<Heat>(first), Some(&Heat(100)));
}

/// The registry after `round` rounds of writes: spawns, in-place
/// `Position` writes (delta-saved), `Name` rewrites (copied whole) and a
/// despawn, so that a ring's saves take every path.
fn write_round(registry: &mut Registry, round: u32) {
    let e = registry.spawn((Position(round as f32, 0.0), Name(format!("n{round}"))));
    registry.spawn((Score(u64::from(round)),));
    for (i, p) in registry.view_mut::<&mut Position>().iter().enumerate() {
        if i % 2 == round as usize % 2 {
            p.1 += 1.0;
        }
    }
    if round.is_multiple_of(3) {
        registry
            .view_mut::<&mut Name>()
            .iter()
            .for_each(|n| n.0.push('+'));
    }
    if round % 4 == 1 {
        registry.despawn(e).unwrap();
    }
}

#[test]
#[cfg_attr(miri, ignore)] // a rayon pool: Miri's Tree Borrows lane runs it
fn a_ring_saved_on_a_thread_pool_equals_one_saved_serially() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let rounds = if cfg!(miri) { 4 } else { 9 };
    let (mut serial, mut parallel) = (registry(), registry());
    serial.register_clone::<Score>();
    parallel.register_clone::<Score>();
    let (mut serial_ring, mut parallel_ring) =
        (ecs_engine::StateRing::new(4), ecs_engine::StateRing::new(4));
    let mut saved = Vec::new();
    for round in 0..rounds {
        write_round(&mut serial, round);
        write_round(&mut parallel, round);
        serial.save_frame(&mut serial_ring).unwrap();
        pool.install(|| parallel.save_frame(&mut parallel_ring))
            .unwrap();
        saved.push((contents(&serial), position_ticks(&serial)));
    }
    for back in [1, 0, 2] {
        serial.restore_frame(&mut serial_ring, back).unwrap();
        parallel.restore_frame(&mut parallel_ring, back).unwrap();
        saved.truncate(saved.len() - back);
        let (contents_then, ticks_then) = saved.last().unwrap();
        for registry in [&serial, &parallel] {
            assert_eq!(&contents(registry), contents_then);
            assert_eq!(&position_ticks(registry), ticks_then);
        }
        assert_eq!(serial.change_tick(), parallel.change_tick());
        let scores = |r: &Registry| {
            let mut s: Vec<u64> = r.view::<&Score>().iter().map(|s| s.0).collect();
            s.sort_unstable();
            s
        };
        assert_eq!(scores(&serial), scores(&parallel));
    }
}
