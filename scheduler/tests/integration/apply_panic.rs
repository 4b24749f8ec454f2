//! A panic while a command buffer is applied between waves is a `RunError`
//! naming the system and the command, the wave's other buffers are still
//! applied, and nothing recorded in one tick is applied in another.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_engine::Registry;
use scheduler::{Commands, Query, RunError, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u32);

/// Panics in `Drop` when its flag says so.
struct Fragile(bool);

impl Drop for Fragile {
    fn drop(&mut self) {
        if self.0 {
            panic!("Fragile panics in Drop");
        }
    }
}

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 1.0 / 60.0,
    }
}

#[test]
fn a_panicking_command_is_a_run_error_naming_system_and_command() {
    let later_runs = Arc::new(AtomicUsize::new(0));
    let first_tick = Arc::new(AtomicUsize::new(1));
    let mut builder = Schedule::builder();
    builder.threads(2);
    let armed = first_tick.clone();
    builder
        .add(move |mut commands: Commands| {
            if armed.swap(0, Ordering::SeqCst) == 1 {
                commands.spawn((Age(1),));
                commands.push(|_| panic!("command boom"));
                commands.spawn((Age(100),)); // dropped with the panic
            }
        })
        .named("faulty");
    builder
        .add(|mut commands: Commands| {
            commands.spawn((Age(2),));
        })
        .named("healthy");
    let runs = later_runs.clone();
    builder
        .add(move |_ages: Query<&mut Age>| {
            runs.fetch_add(1, Ordering::SeqCst);
        })
        .named("later")
        .after("healthy")
        .after("faulty");
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();

    let error = schedule.run(&mut registry, tick(3)).unwrap_err();
    assert_eq!(
        error,
        RunError::CommandPanic {
            tick: 3,
            system: "faulty".into(),
            command: 1,
            message: "command boom".into(),
        }
    );
    assert!(error.to_string().contains("command 1 of system `faulty`"));
    // The command before the panic and the other buffer of the wave are
    // applied; the later wave did not run.
    let mut ages: Vec<u32> = registry.view::<&Age>().iter().map(|a| a.0).collect();
    ages.sort_unstable();
    assert_eq!(ages, [1, 2]);
    assert_eq!(later_runs.load(Ordering::SeqCst), 0);

    // Next tick: nothing of tick 3 shows up (the dropped spawn stays
    // dropped), and the schedule runs normally.
    schedule.run(&mut registry, tick(4)).unwrap();
    let mut ages: Vec<u32> = registry.view::<&Age>().iter().map(|a| a.0).collect();
    ages.sort_unstable();
    assert_eq!(ages, [1, 2, 2]);
    assert_eq!(later_runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panicking_drop_while_applying_is_a_run_error() {
    let mut registry = Registry::new();
    let victim = registry.spawn((Fragile(true), Age(7)));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder
        .add(move |mut commands: Commands, ages: Query<&Age>| {
            drop(ages);
            commands.despawn(victim);
        })
        .named("reaper");
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(1)).unwrap_err();
    let RunError::CommandPanic {
        system, command, ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!((system.as_str(), *command), ("reaper", 0));
    // The despawn completed: no pool holds the dead entity.
    assert!(!registry.is_alive(victim));
    assert_eq!(registry.get::<Age>(victim), None);
    assert_eq!(registry.count::<Age>(), 0);
    assert_eq!(registry.count::<Fragile>(), 0);
}
