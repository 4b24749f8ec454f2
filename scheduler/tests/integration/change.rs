//! Change detection in systems: each system sees the changes made since
//! its own last run, whether it ran every tick, was skipped by a run
//! condition, or was disabled.

use ecs_engine::{Added, Changed, Entity, Ref, Registry};
use scheduler::{Commands, Query, RemovedComponents, Res, ResMut, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker;

/// What each observer saw on each of its runs (sorted entity indices).
#[derive(Default)]
struct Seen(Vec<Vec<u32>>);
#[derive(Default)]
struct SeenAdded(Vec<Vec<u32>>);
#[derive(Default)]
struct SeenRemoved(Vec<Vec<u32>>);
/// Which entities `writer` writes on this tick.
#[derive(Default)]
struct Plan(Vec<Entity>);
struct Run(bool);

fn indices(mut v: Vec<Entity>) -> Vec<u32> {
    v.sort_by_key(|e| e.index());
    v.into_iter().map(|e| e.index()).collect()
}

fn writer(mut q: Query<(Entity, &mut Health)>, plan: Res<Plan>) {
    for &e in &plan.0 {
        if let Ok((_, h)) = q.get(e) {
            h.0 += 1;
        }
    }
}

fn observer(q: Query<(Entity, &Health), Changed<Health>>, mut seen: ResMut<Seen>) {
    let found = q.iter().map(|(e, _)| e).collect();
    seen.0.push(indices(found));
}

fn run_flag(run: Res<Run>) -> bool {
    run.0
}

fn world(n: u32) -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    registry.insert_resource(Seen::default());
    registry.insert_resource(SeenAdded::default());
    registry.insert_resource(SeenRemoved::default());
    registry.insert_resource(Plan::default());
    registry.insert_resource(Run(true));
    let entities = (0..n).map(|i| registry.spawn((Health(i),))).collect();
    (registry, entities)
}

#[test]
fn build_enables_tracking_of_observed_types_only() {
    let (mut registry, _) = world(1);
    let mut builder = Schedule::builder();
    builder.add(writer);
    builder.add(observer);
    builder.build(&mut registry).unwrap();
    assert!(registry.is_tracking_changes::<Health>());
    assert!(!registry.is_tracking_changes::<Marker>());
}

/// Writer before observer and after it (next tick): both orders report
/// each write exactly once, and the first run sees everything.
#[test]
fn observer_sees_writes_from_earlier_and_later_waves() {
    for writer_first in [true, false] {
        let (mut registry, e) = world(4);
        let mut builder = Schedule::builder();
        if writer_first {
            builder.add(writer);
            builder.add(observer);
        } else {
            builder.add(observer);
            builder.add(writer);
        }
        let mut schedule = builder.build(&mut registry).unwrap();
        let plans = [vec![], vec![e[1]], vec![], vec![e[2], e[3]], vec![]];
        for plan in plans {
            registry.resource_mut::<Plan>().unwrap().0 = plan;
            schedule.run(&mut registry, Tick::default()).unwrap();
        }
        let seen = &registry.resource::<Seen>().unwrap().0;
        let expect: Vec<Vec<u32>> = if writer_first {
            vec![vec![0, 1, 2, 3], vec![1], vec![], vec![2, 3], vec![]]
        } else {
            // The observer runs first: a write shows on the next tick.
            vec![vec![0, 1, 2, 3], vec![], vec![1], vec![], vec![2, 3]]
        };
        assert_eq!(seen, &expect, "writer first: {writer_first}");
    }
}

/// A system skipped by its run condition, then run again, sees every
/// change made while it was skipped; a disabled system likewise.
#[test]
fn skipped_and_disabled_systems_see_changes_since_their_last_run() {
    for disable in [false, true] {
        let (mut registry, e) = world(4);
        let mut builder = Schedule::builder();
        builder.add(writer);
        if disable {
            builder.add(observer).named("observer");
        } else {
            builder.add(observer).named("observer").run_if(run_flag);
        }
        let mut schedule = builder.build(&mut registry).unwrap();
        let set_running = |registry: &mut Registry, schedule: &mut Schedule, on: bool| {
            if disable {
                schedule.set_enabled("observer", on).unwrap();
            } else {
                registry.resource_mut::<Run>().unwrap().0 = on;
            }
        };
        schedule.run(&mut registry, Tick::default()).unwrap();
        set_running(&mut registry, &mut schedule, false);
        for plan in [vec![e[0]], vec![], vec![e[2]]] {
            registry.resource_mut::<Plan>().unwrap().0 = plan;
            schedule.run(&mut registry, Tick::default()).unwrap();
        }
        set_running(&mut registry, &mut schedule, true);
        registry.resource_mut::<Plan>().unwrap().0 = vec![];
        schedule.run(&mut registry, Tick::default()).unwrap();
        schedule.run(&mut registry, Tick::default()).unwrap();
        let seen = &registry.resource::<Seen>().unwrap().0;
        assert_eq!(
            seen,
            &vec![vec![0, 1, 2, 3], vec![0, 2], vec![]],
            "disabled: {disable}"
        );
    }
}

/// A reader registered before the writer sees each tick's writes on its
/// next run, once, and nothing once the writer stops.
#[test]
fn writes_are_reported_once_to_a_reader() {
    #[derive(Default)]
    struct Own(Vec<usize>);
    fn bump(mut q: Query<(Ref<Health>, &mut Marker)>, mut own: ResMut<Own>) {
        own.0.push(q.iter().filter(|(h, _)| h.is_changed()).count());
    }
    fn touch(mut q: Query<&mut Health>) {
        q.each(|h| h.0 += 1);
    }
    let (mut registry, e) = world(2);
    registry.insert_resource(Own::default());
    for &entity in &e {
        registry.insert(entity, Marker).unwrap();
    }
    let mut builder = Schedule::builder();
    builder.add(bump);
    builder.add(touch).run_if(run_flag);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.resource_mut::<Run>().unwrap().0 = false;
    schedule.run(&mut registry, Tick::default()).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    // First run: all new; then `touch`'s writes of the previous tick;
    // then once more for the last write, then nothing.
    assert_eq!(registry.resource::<Own>().unwrap().0, [2, 2, 2, 0]);
}

/// Components inserted by commands are `Added` for every system on its
/// next run, the spawning system and one of its own wave included.
#[test]
fn commands_are_seen_as_added_by_everyone() {
    #[derive(Default)]
    struct Mine(Vec<usize>);
    fn spawner(mut c: Commands, q: Query<&Health, Added<Health>>, mut mine: ResMut<Mine>) {
        mine.0.push(q.count());
        c.spawn((Health(100),));
    }
    fn added(q: Query<(Entity, &Health), Added<Health>>, mut seen: ResMut<SeenAdded>) {
        let found = q.iter().map(|(e, _)| e).collect();
        seen.0.push(indices(found));
    }
    let (mut registry, _) = world(2);
    registry.insert_resource(Mine::default());
    let mut builder = Schedule::builder();
    builder.add(spawner);
    builder.add(added);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1, "both in one wave");
    for _ in 0..3 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    assert_eq!(registry.resource::<Mine>().unwrap().0, [2, 1, 1]);
    assert_eq!(
        registry.resource::<SeenAdded>().unwrap().0,
        vec![vec![0, 1], vec![2], vec![3]]
    );
}

/// Two readers of removals, one skipping ticks: each reads every removal
/// once.
#[test]
fn removed_components_per_system() {
    fn watch(removed: RemovedComponents<Health>, mut seen: ResMut<SeenRemoved>) {
        assert_eq!(removed.missed(), 0);
        seen.0.push(indices(removed.iter().collect()));
    }
    fn slow_watch(removed: RemovedComponents<Health>, mut seen: ResMut<Seen>) {
        seen.0.push(indices(removed.iter().collect()));
    }
    fn reaper(mut c: Commands, plan: Res<Plan>) {
        for &e in &plan.0 {
            c.despawn(e);
        }
    }
    let (mut registry, e) = world(5);
    let mut builder = Schedule::builder();
    builder.add(reaper);
    builder.add(watch);
    builder.add(slow_watch).run_if(run_flag);
    let mut schedule = builder.build(&mut registry).unwrap();
    registry.remove::<Health>(e[4]).unwrap();
    registry.resource_mut::<Plan>().unwrap().0 = vec![e[0]];
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.resource_mut::<Run>().unwrap().0 = false;
    registry.resource_mut::<Plan>().unwrap().0 = vec![e[1]];
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.resource_mut::<Plan>().unwrap().0 = vec![e[2], e[3]];
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.resource_mut::<Run>().unwrap().0 = true;
    registry.resource_mut::<Plan>().unwrap().0 = vec![];
    schedule.run(&mut registry, Tick::default()).unwrap();
    // Commands of a wave land after its systems ran: seen next tick.
    assert_eq!(
        registry.resource::<SeenRemoved>().unwrap().0,
        vec![vec![4], vec![0], vec![1], vec![2, 3]]
    );
    assert_eq!(
        registry.resource::<Seen>().unwrap().0,
        vec![vec![4], vec![0, 1, 2, 3]]
    );
}

/// `Mut` in a system: only the components written through it are
/// reported to a later reader; `RemovedComponents` counts what its log
/// dropped before a skipped reader came back.
#[test]
fn ref_mut_marks_written_only_and_drops_are_counted() {
    fn heal(mut q: Query<ecs_engine::Mut<Health>>) {
        q.each(|mut h| {
            if h.0 == 0 {
                h.0 = 10;
            }
        });
    }
    #[derive(Default)]
    struct Missed(Vec<(usize, u64)>);
    fn watch(removed: RemovedComponents<Health>, mut missed: ResMut<Missed>) {
        missed.0.push((removed.len(), removed.missed()));
    }
    let (mut registry, e) = world(4);
    registry.insert_resource(Missed::default());
    registry.insert(e[2], Health(0)).unwrap();
    let mut builder = Schedule::builder();
    builder.add(heal);
    builder.add(observer);
    builder.add(watch).run_if(run_flag);
    let mut schedule = builder.build(&mut registry).unwrap();
    registry.set_removed_capacity::<Health>(2);
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.insert(e[1], Health(0)).unwrap();
    registry.resource_mut::<Run>().unwrap().0 = false;
    schedule.run(&mut registry, Tick::default()).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    for &entity in &e[..3] {
        registry.despawn(entity).unwrap();
    }
    registry.resource_mut::<Run>().unwrap().0 = true;
    schedule.run(&mut registry, Tick::default()).unwrap();
    let seen = &registry.resource::<Seen>().unwrap().0;
    // First run: all; then `e[1]` (the insert and the heal); then nothing.
    assert_eq!(seen[..3], [vec![0, 1, 2, 3], vec![1], vec![]]);
    assert_eq!(registry.get::<Health>(e[3]), Some(&Health(3)));
    assert_eq!(registry.resource::<Missed>().unwrap().0, [(0, 0), (2, 1)]);
}
