//! The errors of observers and of one-shot runs between ticks: an
//! observer's failure names it, its hook, the component type and the
//! entity; a system reading `Res<Trigger>` without a hook says so (no
//! "insert `Trigger`"); a run between ticks says "between ticks", not a
//! tick number.

use ecs_engine::{Entity, Registry};
use scheduler::{Commands, Hook, OneShotId, Res, RunError, Schedule, Tick, Trigger};

struct Tower;
struct Gold;

/// The entity the driver works on, and what it does at each tick.
struct Target(Entity);

/// Tick 0 inserts `Tower` on the target (Add, Insert), tick 1 again
/// (Replace, Insert), tick 2 removes it (Remove).
fn driver(target: Res<Target>, tick: Tick, mut commands: Commands) {
    match tick.number {
        0 | 1 => commands.insert(target.0, Tower),
        _ => commands.remove::<Tower>(target.0),
    }
}

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

/// A registry with one target, a schedule of `driver` on 2 threads, and
/// the target.
fn world() -> (Registry, Schedule, Entity) {
    let mut registry = Registry::new();
    let target = registry.spawn_empty();
    registry.insert_resource(Target(target));
    let mut builder = Schedule::builder();
    builder.add(driver);
    builder.threads(2);
    let schedule = builder.build(&mut registry).unwrap();
    (registry, schedule, target)
}

fn no_room(_trigger: Res<Trigger>) -> Result<(), String> {
    Err("no room".to_owned())
}

fn explodes(_trigger: Res<Trigger>) {
    panic!("boom");
}

fn pays(_trigger: Res<Trigger>, _gold: Res<Gold>) {}

#[test]
fn a_failing_observer_names_itself_its_hook_the_type_and_the_entity() {
    let (mut registry, mut schedule, target) = world();
    schedule.observe::<Tower, _>(&mut registry, Hook::Add, no_room);
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "tick 0: observer `no_room` on Add of `Tower` for entity {target}: failed: no room"
        )
    );
    assert!(
        matches!(&error, RunError::Observer { observer, hook: Hook::Add, component, entity, .. }
            if observer == "no_room" && component == "Tower" && *entity == target)
    );
    assert!(matches!(error.root(), RunError::System { tick: 0, .. }));
    assert_eq!(error.tick(), Some(0));
}

#[test]
fn a_panicking_observer_names_its_hook() {
    for (hook, at) in [(Hook::Insert, 0), (Hook::Replace, 1), (Hook::Remove, 2)] {
        let (mut registry, mut schedule, target) = world();
        schedule.observe::<Tower, _>(&mut registry, hook, explodes);
        for number in 0..at {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        let error = schedule.run(&mut registry, tick(at)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "tick {at}: observer `explodes` on {hook:?} of `Tower` for entity {target}: panicked: boom"
            )
        );
        assert!(
            matches!(error.root(), RunError::Panic { system, message, .. }
                if system == "explodes" && message == "boom")
        );
    }
}

#[test]
fn an_observer_missing_a_resource_names_it() {
    let (mut registry, mut schedule, target) = world();
    schedule.observe::<Tower, _>(&mut registry, Hook::Add, pays);
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "tick 0: observer `pays` on Add of `Tower` for entity {target}: needs resource `Gold`, which the registry does not hold"
        )
    );
}

#[test]
fn an_observer_run_by_id_between_ticks_has_no_trigger() {
    let (mut registry, mut schedule, _) = world();
    let id = schedule.observe::<Tower, _>(&mut registry, Hook::Add, explodes);
    let error = schedule.run_system(&mut registry, id, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "between ticks: observer `explodes` reads `Res<Trigger>`, which only a run for a hook \
         that fired has; it was run by id, without one (take `Option<Res<Trigger>>` to allow both)"
    );
    assert_eq!(error.tick(), None);
    assert!(matches!(
        error.root(),
        RunError::NoTrigger {
            kind: "observer",
            how: "by id",
            ..
        }
    ));
}

/// The observer to run by id, for [`asks_for_the_observer`].
struct Asked(OneShotId);

fn asks_for_the_observer(asked: Res<Asked>, tick: Tick, mut commands: Commands) {
    if tick.number == 1 {
        commands.run_system(asked.0);
    }
}

#[test]
fn an_observer_run_by_id_from_commands_has_no_trigger_and_names_the_tick() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add(asks_for_the_observer);
    let id = builder.observe::<Tower, _>(Hook::Add, explodes);
    registry.insert_resource(Asked(id));
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let error = schedule.run(&mut registry, tick(1)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tick 1: observer `explodes` reads `Res<Trigger>`, which only a run for a hook that \
         fired has; it was run by id, without one (take `Option<Res<Trigger>>` to allow both)"
    );
}

fn reads_trigger(_trigger: Res<Trigger>) {}

#[test]
fn a_system_of_the_waves_reading_the_trigger_is_told_so() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add(reads_trigger);
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tick 0: system `reads_trigger` reads `Res<Trigger>`, which only a run for a hook that \
         fired has; it was run as a system of the schedule, without one (take \
         `Option<Res<Trigger>>` to allow both)"
    );
}

fn builds(target: Res<Target>, mut commands: Commands) {
    commands.insert(target.0, Tower);
}

fn panics_alone() {
    panic!("boom");
}

#[test]
fn a_one_shot_run_between_ticks_says_so_not_tick_0() {
    let (mut registry, mut schedule, target) = world();
    let alone = schedule.register_system(&mut registry, panics_alone);
    let error = schedule
        .run_system(&mut registry, alone, tick(0))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "between ticks: system `panics_alone` panicked: boom"
    );
    assert!(matches!(error.root(), RunError::Panic { .. }));

    // An observer that a one-shot's commands fire, between ticks.
    schedule.observe::<Tower, _>(&mut registry, Hook::Add, no_room);
    let build = schedule.register_system(&mut registry, builds);
    let error = schedule
        .run_system(&mut registry, build, tick(0))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "between ticks: observer `no_room` on Add of `Tower` for entity {target}: failed: no room"
        )
    );
}

/// Re-inserts the component it observes: a loop.
fn reinsert(trigger: Res<Trigger>, mut commands: Commands) {
    commands.insert(trigger.entity, Tower);
}

#[test]
fn an_observer_loop_past_the_limit_is_asked_for_by_its_hook() {
    let (mut registry, mut schedule, target) = world();
    schedule.observe::<Tower, _>(&mut registry, Hook::Insert, reinsert);
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "tick 0: observer `reinsert` on Insert of `Tower` for entity {target}: more than 4096 \
             chained links of one-shot runs after one wave; the last, of #0, asked for by its hook"
        )
    );
}

fn asks_for_itself(me: Res<Asked>, mut commands: Commands) {
    commands.run_system(me.0);
}

#[test]
fn a_one_shot_loop_past_the_limit_names_the_system_that_asked() {
    let (mut registry, mut schedule, _) = world();
    let id = schedule.register_system(&mut registry, asks_for_itself);
    registry.insert_resource(Asked(id));
    let error = schedule.run_system(&mut registry, id, tick(0)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "between ticks: more than 4096 chained links of one-shot runs after one wave; the last, \
         of #0, asked for by system `asks_for_itself`"
    );
}
