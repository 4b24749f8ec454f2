//! Change detection in schedules: a run condition that asks
//! about changes, startup systems.

use ecs_engine::{Added, ChangeTick, Changed, Entity, Registry};
use scheduler::{Commands, Query, ResMut, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);

#[derive(Default)]
struct Runs(u32);
#[derive(Default)]
struct Writes(u32);

/// Writes one Health on odd ticks.
fn writer(mut q: Query<&mut Health>, mut writes: ResMut<Writes>) {
    writes.0 += 1;
    if !writes.0.is_multiple_of(2)
        && let Some(h) = q.iter().next()
    {
        h.0 += 1;
    }
}

fn observer(mut runs: ResMut<Runs>) {
    runs.0 += 1;
}

fn any_changed(q: Query<&Health, Changed<Health>>) -> bool {
    q.count() > 0
}

#[test]
fn a_condition_on_changed_sees_the_writes_of_earlier_waves() {
    let mut registry = Registry::new();
    registry.insert_resource(Runs::default());
    registry.insert_resource(Writes::default());
    registry.spawn((Health(1),));
    registry.spawn((Health(1),));
    let mut builder = Schedule::builder();
    builder.add(writer);
    builder.add(observer).after("writer").run_if(any_changed);
    let mut schedule = builder.build(&mut registry).unwrap();
    for _ in 0..6 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    // Ticks 1, 3, 5 write (tick 1 also sees every component as new); the
    // condition must let the observer run on exactly those.
    assert_eq!(registry.resource::<Runs>().unwrap().0, 3);
}

#[derive(Default)]
struct SeenAdded(Vec<usize>);

fn spawn_at_startup(mut c: Commands) {
    c.spawn((Health(7),));
}

fn startup_reader(q: Query<(Entity, &Health), Added<Health>>, mut seen: ResMut<SeenAdded>) {
    seen.0.push(q.count());
}

fn tick_reader(q: Query<(Entity, &Health), Added<Health>>, mut seen: ResMut<SeenAdded>) {
    seen.0.push(q.count());
}

#[test]
fn startup_systems_see_and_make_changes() {
    let mut registry = Registry::new();
    registry.insert_resource(SeenAdded::default());
    registry.spawn((Health(1),));
    let mut builder = Schedule::builder();
    builder.add_startup(spawn_at_startup);
    builder.add_startup(startup_reader);
    builder.add(tick_reader);
    let mut schedule = builder.build(&mut registry).unwrap();
    for _ in 0..3 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    let seen = &registry.resource::<SeenAdded>().unwrap().0;
    // The startup reader runs once and sees the spawned-before-build entity
    // (and the startup spawn if it ran after its apply); the tick reader
    // sees both on its first run, then nothing new.
    assert!(seen[0] >= 1, "{seen:?}");
    assert_eq!(&seen[1..], &[2, 0, 0], "{seen:?}");
}

#[derive(Default)]
struct LateRuns(u32);

fn late_observer(mut runs: ResMut<LateRuns>) {
    runs.0 += 1;
}

#[test]
fn a_set_condition_on_changed_is_evaluated_once_per_tick_for_the_set() {
    let mut registry = Registry::new();
    registry.insert_resource(Runs::default());
    registry.insert_resource(LateRuns::default());
    registry.insert_resource(Writes::default());
    registry.spawn((Health(1),));
    let mut builder = Schedule::builder();
    builder.set("watchers").run_if(any_changed);
    builder.add(writer);
    builder.add(observer).after("writer").in_set("watchers");
    // In a later wave than `observer`: it must see the same writes.
    builder
        .add(late_observer)
        .after("observer")
        .in_set("watchers");
    let mut schedule = builder.build(&mut registry).unwrap();
    for _ in 0..6 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    assert_eq!(registry.resource::<Runs>().unwrap().0, 3);
    assert_eq!(registry.resource::<LateRuns>().unwrap().0, 3);
}

#[test]
fn a_condition_may_keep_a_local() {
    let mut registry = Registry::new();
    registry.insert_resource(Runs::default());
    let mut builder = Schedule::builder();
    builder
        .add(observer)
        .run_if(|mut n: scheduler::Local<u32>| {
            *n += 1;
            n.is_multiple_of(2)
        });
    let mut schedule = builder.build(&mut registry).unwrap();
    for _ in 0..6 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    assert_eq!(registry.resource::<Runs>().unwrap().0, 3);
}

#[derive(Default)]
struct Counts(Vec<usize>);

fn count_changed(q: Query<&Health, Changed<Health>>, mut counts: ResMut<Counts>) {
    counts.0.push(q.count());
}

#[test]
fn a_schedule_runs_across_the_wrap() {
    let mut registry = Registry::new();
    registry.insert_resource(Counts::default());
    registry.insert_resource(Writes::default());
    let e: Vec<Entity> = (0..3).map(|i| registry.spawn((Health(i),))).collect();
    let mut builder = Schedule::builder();
    builder.add(writer);
    builder.add(count_changed).after("writer");
    let mut schedule = builder.build(&mut registry).unwrap();
    registry.set_change_tick_for_tests(ChangeTick::new(u32::MAX - 6));
    for _ in 0..8 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    assert!(registry.change_tick().get() < 100, "wrapped");
    // First run: all 3 new; then the writer's one write on odd runs.
    assert_eq!(
        registry.resource::<Counts>().unwrap().0,
        [3, 0, 1, 0, 1, 0, 1, 0]
    );
    let _ = e;
}
