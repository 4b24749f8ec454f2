//! A model test: random operations (spawns, inserts, removals, writes by
//! every path) around a save and a restore, checked against a map.

use super::*;

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
    /// Reorders every pool (`sort_pools`).
    SortPools,
    /// Despawns every entity.
    Clear,
    /// Sets how many removals of `Position` the log keeps.
    RemovalCapacity(u8),
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

/// [`op`] and writes in place of every kind, advances of the clock, pool
/// sorts, removal-log capacities and (rarely) a clear.
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
        1 => Just(Op::SortPools),
        1 => prop_oneof![
            10 => any::<u8>().prop_map(|n| Op::RemovalCapacity(n % 12)),
            1 => Just(Op::Clear),
        ],
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
        Op::SortPools => registry.sort_pools(),
        Op::Clear => {
            registry.clear();
            model.clear();
        }
        Op::RemovalCapacity(n) => registry.set_removed_capacity::<Position>(usize::from(n)),
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

/// What else a ring's restore must give back: the pools' entities in
/// dense order with their values, and `Position`'s removal log (every
/// entry a reader from the start would see, and how many it missed).
type Layout = (Contents, Vec<Entity>, u64);

fn layout(registry: &Registry) -> Layout {
    let mut cursor = RemovedCursor::default();
    let log = registry.removed::<Position>(&mut cursor);
    let missed = log.missed();
    (contents(registry), log.iter().collect(), missed)
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
    /// entities, dense order, removal log, change ticks and change tick
    /// of that frame's save, and the ring then holds the frames up to it.
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
        // A short removal log, so that saves see it trimmed.
        registry.set_removed_capacity::<Position>(8);
        let mut model = Model::new();
        let mut ring = ecs_engine::StateRing::new(CAPACITY);
        let mut frames: std::collections::VecDeque<Frame> = std::collections::VecDeque::new();
        let mut layouts: std::collections::VecDeque<Layout> = std::collections::VecDeque::new();
        for (ops, restore) in &rounds {
            for op in ops {
                apply(&mut registry, &mut model, op);
            }
            match restore {
                Some(back) if *back < frames.len() => {
                    registry.restore_frame(&mut ring, *back).unwrap();
                    frames.truncate(frames.len() - back);
                    layouts.truncate(layouts.len() - back);
                    let (at_save, ticks, tick) = frames.back().unwrap();
                    check(&registry, at_save)?;
                    prop_assert_eq!(&layout(&registry), layouts.back().unwrap());
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
                    layouts.push_back(layout(&registry));
                    if frames.len() > CAPACITY {
                        frames.pop_front();
                        layouts.pop_front();
                    }
                }
            }
            prop_assert_eq!(ring.len(), frames.len());
        }
    }
}
