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
