//! Command reserves read from one schedule and restored into a fresh one
//! over a registry whose entities were replaced: the resumed schedule's
//! spawns get the handles the first one's get.

use ecs_engine::{Entity, EntityAllocator, Registry};
use scheduler::{Commands, Query, RestoreReservesError, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u64);

/// Spawns one entity per tick, plus one more every third tick, and
/// despawns the oldest once five are alive.
fn churn(tick: Tick, mut commands: Commands, ages: Query<(Entity, &Age)>) {
    commands.spawn((Age(tick.number),));
    if tick.number.is_multiple_of(3) {
        commands.spawn((Age(tick.number + 100),));
    }
    let mut all: Vec<(Entity, u64)> = Vec::new();
    ages.each(|(e, a)| all.push((e, a.0)));
    if all.len() >= 5 {
        all.sort_by_key(|&(e, a)| (a, e));
        commands.despawn(all[0].0);
    }
}

fn schedule(registry: &mut Registry) -> Schedule {
    let mut builder = Schedule::builder();
    builder.add(churn);
    builder.threads(2);
    builder.build(registry).unwrap()
}

fn run(schedule: &mut Schedule, registry: &mut Registry, ticks: std::ops::Range<u64>) {
    for number in ticks {
        schedule
            .run(
                registry,
                Tick {
                    number,
                    ..Tick::default()
                },
            )
            .unwrap();
    }
}

fn world(registry: &Registry) -> Vec<(Entity, Age)> {
    let mut all: Vec<(Entity, Age)> = registry
        .view::<(Entity, &Age)>()
        .iter()
        .map(|(e, a)| (e, *a))
        .collect();
    all.sort_by_key(|&(e, _)| e);
    all
}

#[test]
fn a_resumed_schedule_spawns_the_same_handles() {
    let mut registry = Registry::new();
    let mut first = schedule(&mut registry);
    run(&mut first, &mut registry, 0..7);
    let reserves = first.command_reserves();
    assert_eq!(reserves.len(), 1);
    assert!(!reserves[0].1.handles.is_empty());
    let entities = registry.entities().export_state();
    let saved = world(&registry);

    // A fresh schedule over a fresh registry, then the saved world put in.
    let mut other = Registry::new();
    let mut second = schedule(&mut other);
    other.replace_entities(EntityAllocator::from_state(entities).unwrap());
    other.insert_many(&mut saved.iter().copied()).1.unwrap();
    second
        .restore_command_reserves(&mut other, reserves.clone())
        .unwrap();
    assert_eq!(second.command_reserves(), reserves);

    run(&mut first, &mut registry, 7..20);
    run(&mut second, &mut other, 7..20);
    assert_eq!(world(&other), world(&registry));
    assert_eq!(
        other.entities().export_state(),
        registry.entities().export_state()
    );
}

#[test]
fn bad_reserves_are_refused_and_change_nothing() {
    let mut registry = Registry::new();
    let mut first = schedule(&mut registry);
    run(&mut first, &mut registry, 0..2);
    let reserves = first.command_reserves();
    let before = first.command_reserves();
    let error = first
        .restore_command_reserves(
            &mut registry,
            vec![("nobody".into(), reserves[0].1.clone())],
        )
        .unwrap_err();
    assert_eq!(
        error,
        RestoreReservesError::UnknownSystem {
            system: "nobody".into()
        }
    );
    let alive = registry.entities().iter().next().unwrap();
    let mut bad = reserves.clone();
    bad[0].1.handles.push(alive);
    let error = first
        .restore_command_reserves(&mut registry, bad)
        .unwrap_err();
    assert!(
        matches!(error, RestoreReservesError::Handle { ref system, .. } if system == &reserves[0].0),
        "{error:?}"
    );
    assert_eq!(first.command_reserves(), before);
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag(u64);

/// Spawns one entity per tick and then inserts a `Tag` on the handle the
/// spawn returned: the pattern that, with a stale reserve, would tag an
/// unrelated entity.
fn spawn_and_tag(tick: Tick, mut commands: Commands) {
    let entity = commands.spawn((Age(tick.number),));
    commands.insert(entity, Tag(tick.number));
}

#[test]
fn a_world_loaded_into_a_running_schedule_is_never_written_by_stale_handles() {
    // The world to load: 40 entities, saved as a snapshot loader sees it.
    let mut source = Registry::new();
    let saved: Vec<Entity> = (0..40).map(|n| source.spawn((Age(1_000 + n),))).collect();
    let entities = source.entities().export_state();

    for threads in [1, 2] {
        let mut registry = Registry::new();
        let mut builder = Schedule::builder();
        builder.add(spawn_and_tag);
        builder.threads(threads);
        let mut schedule = builder.build(&mut registry).unwrap();
        run(&mut schedule, &mut registry, 0..3);

        // The load: the buffer's reserve still holds handles of the old
        // allocator, and the loaded world's entities have the same indices.
        registry.replace_entities(EntityAllocator::from_state(entities.clone()).unwrap());
        for (n, &entity) in saved.iter().enumerate() {
            registry.insert(entity, Age(1_000 + n as u64)).unwrap();
        }
        run(&mut schedule, &mut registry, 3..5);

        for (n, &entity) in saved.iter().enumerate() {
            assert_eq!(registry.get::<Age>(entity), Some(&Age(1_000 + n as u64)));
            assert_eq!(registry.get::<Tag>(entity), None, "{threads} threads");
        }
        let mut tagged: Vec<(Entity, u64, u64)> = registry
            .view::<(Entity, &Age, &Tag)>()
            .iter()
            .map(|(e, a, t)| (e, a.0, t.0))
            .collect();
        tagged.sort_by_key(|&(_, age, _)| age);
        assert_eq!(
            tagged.iter().map(|&(_, a, t)| (a, t)).collect::<Vec<_>>(),
            vec![(3, 3), (4, 4)],
            "{threads} threads: the two spawns after the load, each with its own tag"
        );
        assert!(tagged.iter().all(|(e, ..)| !saved.contains(e)));
        assert_eq!(registry.len(), saved.len() + 2);
        assert_eq!(schedule.command_report().total_skipped(), 0);
    }
}
