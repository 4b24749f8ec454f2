//! Skipped commands are visible: per tick and per system, counts by kind
//! and the first skipped commands; strict commands make a skip an error
//! naming the system and the command.

use command_buffer::{ApplyReport, CommandKind};
use ecs_engine::{EcsError, Entity, Registry};
use scheduler::{Commands, Query, RunError, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Doomed;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Other;

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 0.0,
    }
}

/// Despawns each doomed entity, then marks it: the insert is skipped.
fn despawn_then_mark(mut commands: Commands, q: Query<(Entity, &Doomed)>) {
    for (e, _) in q.iter() {
        commands.despawn(e);
        commands.insert(e, Mark(1));
    }
}

/// Despawns each doomed entity too: skipped, the first system got it.
fn despawn_again(mut commands: Commands, q: Query<(Entity, &Doomed)>) {
    for (e, _) in q.iter() {
        commands.despawn(e);
    }
    commands.spawn((Other,));
}

fn world(doomed: usize) -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let entities = (0..doomed).map(|_| registry.spawn((Doomed,))).collect();
    (registry, entities)
}

#[test]
fn skips_are_counted_per_tick_and_per_system_with_the_first_ones_in_full() {
    let (mut registry, doomed) = world(20);
    let mut builder = Schedule::builder();
    builder.add(despawn_then_mark);
    builder.add(despawn_again);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1, "both only read Doomed");
    schedule.run(&mut registry, tick(0)).unwrap();

    let total = schedule.command_report();
    assert_eq!(total.applied(CommandKind::Despawn), 20);
    assert_eq!(total.skipped(CommandKind::Insert), 20);
    assert_eq!(total.skipped(CommandKind::Despawn), 20);
    assert_eq!(total.applied(CommandKind::Spawn), 1);
    assert_eq!(total.total_skipped(), 40);
    assert_eq!(total.skips().count(), ApplyReport::KEPT_SKIPS);
    // The first system's skips come first (registration order).
    let first = total.skips().next().unwrap();
    assert_eq!(
        (first.buffer, first.index, first.kind, first.entity),
        (0, 1, CommandKind::Insert, doomed[0])
    );
    assert!(first.type_name.as_deref().unwrap().ends_with("Mark"));
    assert_eq!(first.reason, EcsError::NoSuchEntity { entity: doomed[0] });
    assert_eq!(total.skips().nth(3).unwrap().index, 7);

    let per_system: Vec<(&str, usize, usize)> = schedule
        .system_command_reports()
        .map(|(_, name, report)| (name, report.total_applied(), report.total_skipped()))
        .collect();
    assert_eq!(
        per_system,
        [("despawn_then_mark", 20, 20), ("despawn_again", 1, 20)]
    );
    let (_, _, second) = schedule.system_command_reports().nth(1).unwrap();
    let skip = second.first_skip().unwrap();
    assert_eq!(
        (skip.buffer, skip.index, skip.kind, skip.entity),
        (0, 0, CommandKind::Despawn, doomed[0])
    );

    // The next tick has nothing doomed: the reports start over.
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(schedule.command_report().total_skipped(), 0);
    assert_eq!(schedule.command_report().applied(CommandKind::Spawn), 1);
}

#[test]
fn a_strict_system_stops_the_tick_naming_itself_and_the_command() {
    let (mut registry, doomed) = world(3);
    let mut builder = Schedule::builder();
    builder.add(despawn_then_mark);
    builder.add(despawn_again).strict_commands(true);
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(4)).unwrap_err();
    let RunError::CommandSkipped {
        tick: number,
        system,
        command,
    } = &error
    else {
        panic!("expected CommandSkipped, got {error:?}");
    };
    assert_eq!((*number, system.as_str()), (4, "despawn_again"));
    assert_eq!(
        (command.buffer, command.index, command.kind, command.entity),
        (1, 0, CommandKind::Despawn, doomed[0])
    );
    assert!(error.to_string().contains("system `despawn_again`"));
    assert!(error.to_string().contains("command #0"));
    // The lenient system of the wave was applied; the strict one stopped at
    // its first command, so its spawn was dropped.
    assert!(doomed.iter().all(|&e| !registry.is_alive(e)));
    assert_eq!(registry.view::<&Other>().iter().count(), 0);
    assert_eq!(schedule.command_report().skipped(CommandKind::Insert), 3);
    // Usable afterwards.
    schedule.run(&mut registry, tick(5)).unwrap();
    assert_eq!(registry.view::<&Other>().iter().count(), 1);
}

#[test]
fn strict_for_the_schedule_with_a_lenient_exception() {
    let (mut registry, _) = world(2);
    let mut builder = Schedule::builder();
    builder.strict_commands(true);
    builder.add(despawn_then_mark).strict_commands(false);
    builder.add(despawn_again);
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert!(
        matches!(&error, RunError::CommandSkipped { system, .. } if system == "despawn_again"),
        "{error:?}"
    );

    let (mut registry, _) = world(2);
    let mut builder = Schedule::builder();
    builder.strict_commands(true);
    builder.add(despawn_then_mark);
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert!(
        matches!(&error, RunError::CommandSkipped { system, command, .. }
            if system == "despawn_then_mark" && command.kind == CommandKind::Insert),
        "{error:?}"
    );
}

/// Records three spawns, then fails: nothing of it may land.
fn spawns_then_fails(mut commands: Commands) -> Result<(), String> {
    for _ in 0..3 {
        commands.spawn((Other,));
    }
    Err("out of room".to_owned())
}

#[test]
fn a_failed_systems_commands_are_counted_as_discarded() {
    let (mut registry, doomed) = world(1);
    let mut builder = Schedule::builder();
    builder.add(spawns_then_fails);
    builder.add(despawn_again);
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..2 {
        let error = schedule.run(&mut registry, tick(number)).unwrap_err();
        assert!(matches!(error, RunError::System { .. }), "{error}");
        // Per tick, not summed over ticks.
        let total = schedule.command_report();
        assert_eq!(total.discarded(), 3, "tick {number}");
        assert_eq!(total.applied(CommandKind::Spawn), 1, "the other system's");
        assert_eq!(total.commands(), 2 - number as usize, "tick {number}");
        let by_system: Vec<(usize, usize)> = schedule
            .system_command_reports()
            .map(|(_, _, report)| (report.discarded(), report.applied(CommandKind::Spawn)))
            .collect();
        assert_eq!(by_system, [(3, 0), (0, 1)], "tick {number}");
    }
    // Only the other system's spawns landed.
    assert!(!registry.is_alive(doomed[0]));
    assert_eq!(registry.count::<Other>(), 2);
}
