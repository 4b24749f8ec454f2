//! Observers: each hook fires with the right entity and in a fixed
//! order, their commands are applied and fire observers in turn, a loop
//! stops at the cap, the log is the same on 1, 2 and 8 threads, and an
//! unobserved type fires nothing.

use ecs_engine::{Entity, Registry};
use scheduler::{
    Commands, Hook, MAX_ONE_SHOT_CHAIN, Query, Res, ResMut, RunError, Schedule, Tick, Trigger,
};

struct Health(u32);
#[derive(Default)]
struct Armor;
struct Unwatched;

/// What the observers saw, in order.
#[derive(Default)]
struct Log(Vec<String>);

/// The entities the driver works on.
struct Targets(Vec<Entity>);

/// Tick 0 inserts `Health` on every target (and `Unwatched`); tick 1
/// overwrites the first target's and removes the second's.
fn driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    match tick.number {
        0 => {
            for (i, &entity) in targets.0.iter().enumerate() {
                commands.insert(entity, Health(i as u32));
                commands.insert(entity, Unwatched);
            }
        }
        _ => {
            commands.insert(targets.0[0], Health(10));
            commands.remove::<Health>(targets.0[1]);
            commands.remove::<Unwatched>(targets.0[1]);
        }
    }
}

fn log(trigger: Res<Trigger>, mut log: ResMut<Log>) {
    let Trigger { hook, entity } = *trigger;
    log.0.push(format!("{hook:?} {}", entity.index()));
}

/// Adds `Armor` to every entity that gets `Health`.
fn arm(trigger: Res<Trigger>, mut commands: Commands) {
    commands.insert(trigger.entity, Armor);
}

fn log_armor(trigger: Res<Trigger>, mut log: ResMut<Log>) {
    log.0.push(format!("armed {}", trigger.entity.index()));
}

/// A registry with three targets and a schedule of `driver` on `threads`.
fn world(threads: usize) -> (Registry, Schedule) {
    let mut registry = Registry::new();
    let targets = (0..3).map(|_| registry.spawn_empty()).collect();
    registry.insert_resource(Targets(targets));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(driver);
    builder.threads(threads);
    let schedule = builder.build(&mut registry).unwrap();
    (registry, schedule)
}

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

fn run_two_ticks(threads: usize) -> Vec<String> {
    let (mut registry, mut schedule) = world(threads);
    for hook in [Hook::Add, Hook::Insert, Hook::Replace, Hook::Remove] {
        schedule.observe::<Health, _>(&mut registry, hook, log);
    }
    schedule.observe::<Health, _>(&mut registry, Hook::Add, arm);
    schedule.observe::<Armor, _>(&mut registry, Hook::Add, log_armor);
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    std::mem::take(&mut registry.resource_mut::<Log>().unwrap().0)
}

#[test]
fn hooks_fire_in_apply_order_then_registration_order_with_chains() {
    let expected = [
        // Tick 0: per insert, Add then Insert, observers in registration
        // order (`log` for Add, `arm`, then `log` for Insert) ...
        "Add 0",
        "Insert 0",
        "Add 1",
        "Insert 1",
        "Add 2",
        "Insert 2",
        // ... then the hooks the observers' commands fired.
        "armed 0",
        "armed 1",
        "armed 2",
        // Tick 1: an overwrite, then a removal.
        "Replace 0",
        "Insert 0",
        "Remove 1",
    ];
    assert_eq!(run_two_ticks(1), expected);
}

/// As [`run_two_ticks`], with the observers registered on the builder
/// (`ScheduleBuilder::observe`), and one more added after the build.
fn run_two_ticks_observed_at_build(threads: usize) -> Vec<String> {
    let mut registry = Registry::new();
    let targets = (0..3).map(|_| registry.spawn_empty()).collect();
    registry.insert_resource(Targets(targets));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(driver);
    builder.threads(threads);
    for hook in [Hook::Add, Hook::Insert, Hook::Replace, Hook::Remove] {
        builder.observe::<Health, _>(hook, log);
    }
    let arm_id = builder.observe::<Health, _>(Hook::Add, arm);
    let mut schedule = builder.build(&mut registry).unwrap();
    let late = schedule.observe::<Armor, _>(&mut registry, Hook::Add, log_armor);
    assert_ne!(arm_id, late);
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    std::mem::take(&mut registry.resource_mut::<Log>().unwrap().0)
}

#[test]
fn observers_registered_on_the_builder_run_as_those_added_after() {
    assert_eq!(run_two_ticks_observed_at_build(1), run_two_ticks(1));
    assert_eq!(run_two_ticks_observed_at_build(2), run_two_ticks(1));
}

#[test]
fn the_log_is_the_same_on_any_thread_count() {
    let one = run_two_ticks(1);
    assert_eq!(run_two_ticks(2), one);
    assert_eq!(run_two_ticks(8), one);
}

#[test]
fn observer_commands_are_applied_before_the_next_wave() {
    let (mut registry, mut schedule) = world(1);
    schedule.observe::<Health, _>(&mut registry, Hook::Add, arm);
    schedule.run(&mut registry, tick(0)).unwrap();
    let targets = registry.resource::<Targets>().unwrap().0.clone();
    for (i, &entity) in targets.iter().enumerate() {
        assert!(registry.has::<(Armor,)>(entity));
        assert_eq!(registry.get::<Health>(entity).map(|h| h.0), Some(i as u32));
    }
}

#[test]
fn unobserved_types_and_direct_calls_fire_nothing() {
    let (mut registry, mut schedule) = world(1);
    schedule.observe::<Armor, _>(&mut registry, Hook::Insert, log);
    let first = registry.resource::<Targets>().unwrap().0[0];
    // A direct registry call is not a command: no observer runs.
    registry.insert(first, Armor).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    assert!(registry.resource::<Log>().unwrap().0.is_empty());
}

/// Re-inserts the component it observes: a loop.
fn reinsert(trigger: Res<Trigger>, mut commands: Commands) {
    commands.insert(trigger.entity, Health(0));
}

#[test]
fn an_observer_loop_stops_at_the_cap_with_an_error() {
    let (mut registry, mut schedule) = world(2);
    schedule.observe::<Health, _>(&mut registry, Hook::Insert, reinsert);
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    // The run past the limit is the observer's, asked for by its hook.
    assert!(
        matches!(error.root(), RunError::OneShotLimit { limit, requested_by: None, .. }
            if *limit == MAX_ONE_SHOT_CHAIN),
        "{error}"
    );
    assert!(
        matches!(&error, RunError::Observer { observer, hook: Hook::Insert, component, .. }
            if observer == "reinsert" && component == "Health"),
        "{error}"
    );
}

/// Tick 0 gives the targets `Health` (and the first `Armor`), makes the
/// third a child of the second; tick 1 despawns the first and the fourth
/// (a run of two despawns), then the second with its subtree; tick 2
/// despawns a handle already gone.
fn despawner(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    match tick.number {
        0 => {
            for &entity in t {
                commands.insert(entity, Health(1));
            }
            commands.insert(t[0], Armor);
            commands.set_parent(t[2], t[1]);
        }
        1 => {
            commands.despawn(t[0]);
            commands.despawn(t[3]);
            commands.despawn_recursive(t[1]);
        }
        _ => commands.despawn(t[0]),
    }
}

fn log_armor_removed(trigger: Res<Trigger>, mut log: ResMut<Log>) {
    log.0.push(format!("unarmed {}", trigger.entity.index()));
}

fn despawn_log(threads: usize) -> Vec<String> {
    let mut registry = Registry::new();
    let targets = (0..4).map(|_| registry.spawn_empty()).collect();
    registry.insert_resource(Targets(targets));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(despawner);
    builder.threads(threads);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.observe::<Health, _>(&mut registry, Hook::Remove, log);
    schedule.observe::<Armor, _>(&mut registry, Hook::Remove, log_armor_removed);
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let targets = registry.resource::<Targets>().unwrap().0.clone();
    assert!(targets.iter().all(|&e| !registry.is_alive(e)));
    std::mem::take(&mut registry.resource_mut::<Log>().unwrap().0)
}

#[test]
fn a_despawn_fires_remove_for_each_observed_component_of_its_subtree() {
    // Per despawned entity, its observed components in the order their
    // types were first observed (Health, then Armor); a recursive despawn
    // covers the root, then its descendants; the third tick's despawn of
    // a dead handle fires nothing.
    let expected = ["Remove 0", "unarmed 0", "Remove 3", "Remove 1", "Remove 2"];
    assert_eq!(despawn_log(1), expected);
    assert_eq!(despawn_log(2), expected);
}

fn spawner(tick: Tick, mut commands: Commands) {
    if tick.number == 0 {
        commands.spawn((Health(1), Armor));
        commands.spawn((Health(2),));
        commands.spawn((Health(3),));
        commands.spawn((Unwatched,));
    }
}

fn log_health(trigger: Res<Trigger>, q: Query<&Health>, mut log: ResMut<Log>) {
    let health = q.get(trigger.entity).map(|h| h.0).unwrap();
    log.0.push(format!("{:?} {health}", trigger.hook));
}

fn log_armored(trigger: Res<Trigger>, q: Query<&Health>, mut log: ResMut<Log>) {
    let health = q.get(trigger.entity).map(|h| h.0).unwrap();
    log.0.push(format!("armored {health}"));
}

fn spawn_log(threads: usize) -> Vec<String> {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(spawner);
    builder.threads(threads);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.observe::<Health, _>(&mut registry, Hook::Add, log_health);
    schedule.observe::<Health, _>(&mut registry, Hook::Insert, log_health);
    schedule.observe::<Armor, _>(&mut registry, Hook::Add, log_armored);
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(registry.view::<&Health>().count(), 3);
    std::mem::take(&mut registry.resource_mut::<Log>().unwrap().0)
}

#[test]
fn a_spawn_fires_add_then_insert_for_each_observed_component() {
    // Spawns in recording order (the two `(Health,)` spawns a run of one
    // type); per entity every Add (types in first-observed order), then
    // every Insert; the unobserved spawn fires nothing.
    let expected = [
        "Add 1",
        "armored 1",
        "Insert 1",
        "Add 2",
        "Insert 2",
        "Add 3",
        "Insert 3",
    ];
    assert_eq!(spawn_log(1), expected);
    assert_eq!(spawn_log(2), expected);
}

#[test]
fn an_insert_fires_add_for_the_components_it_requires() {
    for threads in [1, 2] {
        let (mut registry, mut schedule) = world(threads);
        registry.register_required::<Health, Armor>().unwrap();
        schedule.observe::<Health, _>(&mut registry, Hook::Add, log);
        schedule.observe::<Armor, _>(&mut registry, Hook::Add, log_armor);
        schedule.observe::<Health, _>(&mut registry, Hook::Insert, log);
        schedule.run(&mut registry, tick(0)).unwrap();
        // Per insert: Add of Health and of the Armor it requires (types in
        // first-observed order), then Insert of Health.
        let expected: Vec<String> = (0..3)
            .flat_map(|i| {
                [
                    format!("Add {i}"),
                    format!("armed {i}"),
                    format!("Insert {i}"),
                ]
            })
            .collect();
        assert_eq!(registry.resource::<Log>().unwrap().0, expected);
    }
}

/// Counts its runs.
fn count_added(_: Res<Trigger>, mut n: ResMut<usize>) {
    *n += 1;
}

#[test]
fn a_wave_firing_more_hooks_than_the_chain_limit_runs_every_observer() {
    // One wave spawns 5,000 entities with `Health` and arms each (a
    // second link of 5,000 runs): two links, 10,000 runs, no error.
    let spawns = if cfg!(miri) {
        10
    } else {
        MAX_ONE_SHOT_CHAIN + 904
    };
    let mut registry = Registry::new();
    registry.insert_resource(0_usize);
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(move |tick: Tick, mut commands: Commands| {
        if tick.number == 0 {
            for i in 0..spawns {
                commands.spawn((Health(i as u32),));
            }
        }
    });
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.observe::<Health, _>(&mut registry, Hook::Add, count_added);
    schedule.observe::<Health, _>(&mut registry, Hook::Add, arm);
    schedule.observe::<Armor, _>(&mut registry, Hook::Add, count_added);
    schedule.run(&mut registry, tick(0)).unwrap();
    assert_eq!(registry.resource::<usize>(), Some(&(2 * spawns)));
    assert_eq!(registry.view::<(&Health, &Armor)>().count(), spawns);
}
