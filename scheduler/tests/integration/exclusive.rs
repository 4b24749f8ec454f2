//! Exclusive systems with parameters besides `&mut Registry` (issue 27,
//! item 7): `Local`s kept from run to run and saved with the system
//! states, the frame `Tick`, tuples of these, and their errors, on 1 and
//! 2 threads.

use ecs_engine::Registry;
use scheduler::{EventReader, Events, Local, Query, ResMut, RunError, Schedule, SystemError, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(i64);

/// What the exclusive systems saw, one entry per run.
#[derive(Debug, Default, PartialEq)]
struct Log(Vec<String>);

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

fn log(registry: &mut Registry, line: String) {
    registry
        .resource_mut::<Log>()
        .expect("the test inserts a Log")
        .0
        .push(line);
}

fn lines(registry: &Registry) -> Vec<String> {
    registry.resource::<Log>().unwrap().0.clone()
}

fn movement(mut q: Query<&mut Position>) {
    q.each(|p| p.0 += 1);
}

fn also_moves(mut q: Query<&mut Position>) {
    q.each(|p| p.0 += 10);
}

/// Counts its runs in a `Local` and spawns one entity per run.
fn counter(registry: &mut Registry, mut runs: Local<u32>) {
    *runs += 1;
    registry.spawn((Position(0),));
    log(registry, format!("counter {}", *runs));
}

#[test]
fn a_local_counts_the_runs_of_an_exclusive_system() {
    for threads in [1, 2] {
        let mut registry = Registry::new();
        registry.insert_resource(Log::default());
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(movement);
        builder.add(counter);
        builder.add(also_moves);
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(schedule.waves().len(), 3, "counter runs alone");
        for number in 0..3 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        assert_eq!(
            lines(&registry),
            ["counter 1", "counter 2", "counter 3"],
            "threads {threads}"
        );
        // Spawned at ticks 0, 1, 2 after movement: each moved by also_moves
        // that tick and by both systems on the later ticks.
        let mut x: Vec<i64> = registry.view::<&Position>().iter().map(|p| p.0).collect();
        x.sort_unstable();
        assert_eq!(x, [10, 21, 32], "threads {threads}");
    }
}

/// Two `Local`s of different types, and the frame tick.
fn two_locals(
    registry: &mut Registry,
    mut sum: Local<u64>,
    mut names: Local<Vec<String>>,
    tick: Tick,
) {
    *sum += tick.number;
    names.push(format!("t{}", tick.number));
    log(registry, format!("{} {}", *sum, names.join(",")));
}

#[test]
fn two_locals_and_the_tick_keep_apart() {
    for threads in [1, 2] {
        let mut registry = Registry::new();
        registry.insert_resource(Log::default());
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(movement);
        builder.add(two_locals);
        let mut schedule = builder.build(&mut registry).unwrap();
        for number in [3, 4, 10] {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        assert_eq!(
            lines(&registry),
            ["3 t3", "7 t3,t4", "17 t3,t4,t10"],
            "threads {threads}"
        );
    }
}

/// The same function added twice keeps one `Local` per system.
#[test]
fn each_exclusive_system_has_its_own_local() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(counter).named("first");
    builder.add(counter).named("second");
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(
        lines(&registry),
        ["counter 1", "counter 1", "counter 2", "counter 2"]
    );
}

/// Fails on its third run, counted in its `Local`.
fn fails_third(registry: &mut Registry, mut runs: Local<u32>) -> Result<(), String> {
    *runs += 1;
    if *runs == 3 {
        return Err(format!(
            "run {} refused with {} entities",
            *runs,
            registry.len()
        ));
    }
    registry.spawn((Position(0),));
    Ok(())
}

#[test]
fn a_failing_exclusive_system_with_a_local_is_named_in_the_error() {
    for threads in [1, 2] {
        let mut registry = Registry::new();
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(movement);
        builder.add(fails_third);
        let mut schedule = builder.build(&mut registry).unwrap();
        schedule.run(&mut registry, tick(0)).unwrap();
        schedule.run(&mut registry, tick(1)).unwrap();
        assert_eq!(
            schedule.run(&mut registry, tick(2)).unwrap_err(),
            RunError::System {
                tick: 2,
                source: SystemError::Failed {
                    system: "fails_third".into(),
                    message: "run 3 refused with 2 entities".into(),
                },
            },
            "threads {threads}"
        );
        // The Local moved on: the fourth run succeeds.
        schedule.run(&mut registry, tick(3)).unwrap();
        assert_eq!(registry.len(), 3, "threads {threads}");
    }
}

#[test]
fn a_saved_state_restores_an_exclusive_systems_locals() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(movement);
    builder.add(counter);
    builder.add(two_locals);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.register_state_clone::<u32>();
    schedule.register_state_clone::<u64>();
    schedule.register_state_clone::<Vec<String>>();
    schedule.run(&mut registry, tick(1)).unwrap();
    schedule.run(&mut registry, tick(2)).unwrap();
    let saved = schedule.save_system_states().unwrap();
    schedule.run(&mut registry, tick(3)).unwrap();
    schedule.run(&mut registry, tick(4)).unwrap();
    schedule.restore_system_states(&saved).unwrap();
    registry.resource_mut::<Log>().unwrap().0.clear();
    schedule.run(&mut registry, tick(3)).unwrap();
    // As after the save: the third run of counter, two_locals at 1 + 2 + 3.
    assert_eq!(lines(&registry), ["counter 3", "6 t1,t2,t3"]);
}

#[test]
fn a_local_without_a_registered_clone_refuses_the_save() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(counter);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let error = schedule.save_system_states().unwrap_err().to_string();
    assert!(
        error.contains("cannot save system `counter`: its state `u32` has no clone"),
        "{error}"
    );
}

/// Tuples of exclusive parameters, and four parameters.
fn nested(
    registry: &mut Registry,
    (mut a, tick): (Local<u32>, Tick),
    mut b: Local<u32>,
    (mut c, (mut d,)): (Local<u8>, (Local<i16>,)),
    again: Tick,
) {
    *a += 1;
    *b += 2;
    *c += 3;
    *d -= 4;
    assert_eq!(tick, again);
    log(
        registry,
        format!("{} {} {} {} {}", tick.number, *a, *b, *c, *d),
    );
}

#[test]
fn tuples_and_four_parameters() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(nested);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(5)).unwrap();
    schedule.run(&mut registry, tick(6)).unwrap();
    assert_eq!(lines(&registry), ["5 1 2 3 -4", "6 2 4 6 -8"]);
}

#[test]
fn a_closure_with_a_local_is_an_exclusive_system() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder
        .add(|registry: &mut Registry, mut n: Local<u32>| {
            *n += 5;
            log(registry, format!("closure {}", *n));
        })
        .named("closure");
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(lines(&registry), ["closure 5", "closure 10"]);
}

#[test]
fn startup_and_one_shot_exclusive_systems_keep_their_locals() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add_startup(counter);
    let mut schedule = builder.build(&mut registry).unwrap();
    let id = schedule.register_system(&mut registry, counter);
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    schedule.run_system(&mut registry, id, tick(1)).unwrap();
    schedule.run_system(&mut registry, id, tick(1)).unwrap();
    assert_eq!(lines(&registry), ["counter 1", "counter 1", "counter 2"]);
}

struct Alarm(u32);

/// Sends an event through the registry, every other run.
fn raise(registry: &mut Registry, mut runs: Local<u32>) {
    *runs += 1;
    if *runs % 2 == 1 {
        Events::send_to(registry, Alarm(*runs));
    }
}

fn hear(alarms: EventReader<Alarm>, mut log: ResMut<Log>) {
    for alarm in alarms.read() {
        log.0.push(format!("alarm {}", alarm.0));
    }
}

#[test]
fn an_exclusive_system_sends_events_through_the_registry() {
    for threads in [1, 2] {
        let mut registry = Registry::new();
        registry.insert_resource(Log::default());
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(raise);
        builder.add(hear);
        let mut schedule = builder.build(&mut registry).unwrap();
        for number in 0..4 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        // Sent at runs 1 and 3, heard in the same tick by the later reader.
        assert_eq!(
            lines(&registry),
            ["alarm 1", "alarm 3"],
            "threads {threads}"
        );
        assert_eq!(registry.resource::<Events<Alarm>>().unwrap().sent(), 2);
    }
}
