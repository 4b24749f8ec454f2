//! Disjoint access: queries whose filters make their entities disjoint
//! (`With<A>` beside `Without<A>`) share a component type in one system
//! and in one wave; what filters cannot prove goes in a `ParamSet`.

use ecs_engine::{Changed, Entity, Mut, Ref, Registry, With, Without};
use scheduler::{BuildError, ParamSet, Query, Res, ResMut, Schedule, ScheduleBuilder, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(i64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(i64);
#[derive(Debug)]
struct Enemy;

#[derive(Debug, Default, PartialEq)]
struct Seen(Vec<i64>);

/// Four movers (positions 0..4, velocity 1) and three enemies (positions
/// 100, 200, 300, velocity 5).
fn world() -> (Registry, Vec<Entity>, Vec<Entity>) {
    let mut registry = Registry::new();
    registry.insert_resource(Seen::default());
    let movers = (0..4)
        .map(|i| registry.spawn((Position(i), Velocity(1))))
        .collect();
    let enemies = (1..4)
        .map(|i| registry.spawn((Position(i * 100), Velocity(5), Enemy)))
        .collect();
    (registry, movers, enemies)
}

fn positions(registry: &Registry, entities: &[Entity]) -> Vec<i64> {
    entities
        .iter()
        .map(|&e| registry.get::<Position>(e).unwrap().0)
        .collect()
}

/// Each mover moves by its velocity plus the number of enemies ahead of it.
fn chase(
    mut movers: Query<(&mut Position, &Velocity), Without<Enemy>>,
    enemies: Query<&Position, With<Enemy>>,
) {
    for (position, velocity) in movers.iter_mut() {
        let ahead = enemies.iter().filter(|e| e.0 > position.0).count() as i64;
        position.0 += velocity.0 + ahead;
    }
}

#[test]
fn two_queries_of_one_system_with_disjoint_filters_build_and_run() {
    let (mut registry, movers, enemies) = world();
    let mut builder = Schedule::builder();
    builder.add(chase);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(positions(&registry, &movers), [4, 5, 6, 7]);
    assert_eq!(positions(&registry, &enemies), [100, 200, 300]);
}

fn clash_of(result: Result<Schedule, BuildError>) -> String {
    match result {
        Err(BuildError::ParamClash { name, .. }) => name.into_owned(),
        other => panic!("expected a clash, got {other:?}"),
    }
}

#[test]
fn queries_that_filters_do_not_separate_still_clash() {
    fn unfiltered(_: Query<&mut Position, Without<Enemy>>, _: Query<&Position>) {}
    fn optional(_: Query<&mut Position, Without<Enemy>>, _: Query<(&Position, Option<&Enemy>)>) {}
    fn tracked(_: Query<&mut Position, Without<Enemy>>, _: Query<Ref<Position>, With<Enemy>>) {}
    fn both_without(_: Query<&mut Position, Without<Enemy>>, _: Query<&Position, Without<Enemy>>) {}
    let adds: [fn(&mut ScheduleBuilder); 4] = [
        |b| {
            b.add(unfiltered);
        },
        |b| {
            b.add(optional);
        },
        |b| {
            b.add(tracked);
        },
        |b| {
            b.add(both_without);
        },
    ];
    for add in adds {
        let (mut registry, ..) = world();
        let mut builder = Schedule::builder();
        add(&mut builder);
        assert!(clash_of(builder.build(&mut registry)).ends_with("Position"));
    }
}

fn move_movers(mut q: Query<(&mut Position, &Velocity), Without<Enemy>>) {
    q.each(|(p, v)| p.0 += v.0);
}

fn move_enemies(mut q: Query<(&mut Position, &Velocity), With<Enemy>>) {
    q.each(|(p, v)| p.0 -= v.0);
}

fn watch_enemies(q: Query<&Position, With<Enemy>>, mut seen: ResMut<Seen>) {
    seen.0.push(q.iter().map(|p| p.0).sum());
}

#[test]
fn disjoint_systems_share_a_wave_and_give_one_world_on_1_2_and_8_threads() {
    let mut results = Vec::new();
    for threads in [1, 2, 8] {
        let (mut registry, movers, enemies) = world();
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(move_movers);
        builder.add(move_enemies);
        builder.add(watch_enemies);
        builder.add(chase);
        let mut schedule = builder.build(&mut registry).unwrap();
        let waves: Vec<Vec<String>> = schedule
            .waves()
            .iter()
            .map(|w| {
                w.iter()
                    .map(|(_, name)| name.rsplit("::").next().unwrap().to_owned())
                    .collect()
            })
            .collect();
        // The movers' writer runs beside the enemies' writer; the enemies'
        // reader waits for their writer (registration order) but not for
        // the movers'; `chase` writes the movers and reads the enemies.
        assert_eq!(
            waves,
            [
                vec!["move_movers", "move_enemies"],
                vec!["watch_enemies", "chase"]
            ],
            "{threads} threads"
        );
        for number in 0..3 {
            schedule
                .run(
                    &mut registry,
                    Tick {
                        number,
                        ..Tick::default()
                    },
                )
                .unwrap();
        }
        results.push((
            positions(&registry, &movers),
            positions(&registry, &enemies),
            registry.resource::<Seen>().unwrap().0.clone(),
        ));
    }
    // Each tick: movers +1 (move) +1 +3 (chase: velocity, three enemies
    // ahead); enemies -5.
    let expected = (
        vec![15, 16, 17, 18],
        vec![85, 185, 285],
        vec![585, 570, 555],
    );
    assert_eq!(results, [expected.clone(), expected.clone(), expected]);
}

#[test]
fn a_param_set_holds_queries_that_filters_cannot_separate() {
    /// Every mover moves to the nearest enemy's position minus one.
    type EnemiesAndAll<'s, 'q> = ParamSet<
        's,
        (
            Query<'q, &'q Position, With<Enemy>>,
            Query<'q, &'q mut Position>,
        ),
    >;
    fn approach(mut set: EnemiesAndAll<'_, '_>) {
        let nearest = set.p0().iter().map(|p| p.0).min().unwrap();
        for position in set.p1().iter_mut() {
            if position.0 < nearest {
                position.0 = nearest - 1;
            }
        }
    }
    let (mut registry, movers, enemies) = world();
    let mut builder = Schedule::builder();
    builder.add(approach);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(positions(&registry, &movers), [99, 99, 99, 99]);
    assert_eq!(positions(&registry, &enemies), [100, 200, 300]);
}

#[test]
fn a_param_set_member_still_clashes_with_the_other_parameters() {
    type Set<'s, 'q, F> = ParamSet<'s, (Query<'q, &'q Position, F>, Query<'q, &'q mut Velocity>)>;
    fn outside(_: Set<'_, '_, ()>, _: Query<&mut Position>) {}
    fn disjoint_outside(_: Set<'_, '_, With<Enemy>>, _: Query<&mut Position, Without<Enemy>>) {}
    let (mut registry, ..) = world();
    let mut builder = Schedule::builder();
    builder.add(outside);
    assert!(clash_of(builder.build(&mut registry)).ends_with("Position"));
    let mut builder = Schedule::builder();
    builder.add(disjoint_outside);
    assert!(builder.build(&mut registry).is_ok());
}

#[test]
fn a_param_set_member_borrowed_twice_in_a_run_sees_the_same_changes() {
    #[derive(Debug)]
    struct Score(u32);
    /// Per run: the changed positions and whether `Score` changed, by the
    /// first and by the second borrow of each member.
    #[derive(Debug, Default)]
    struct Log(Vec<(usize, usize, bool, bool)>);
    type Set<'s, 'q> = ParamSet<'s, (Query<'q, &'q Position, Changed<Position>>, Res<'q, Score>)>;
    fn count_twice(mut set: Set<'_, '_>, mut log: ResMut<Log>) {
        let first = set.p0().iter().count();
        let second = set.p0().iter().count();
        let score_first = set.p1().is_changed();
        let score_second = set.p1().is_changed();
        log.0.push((first, second, score_first, score_second));
    }
    let (mut registry, movers, _) = world();
    registry.insert_resource(Score(0));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(count_twice);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.get_mut::<Position>(movers[2]).unwrap().0 = 42;
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.resource_mut::<Score>().unwrap().0 = 1;
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(
        registry.resource::<Log>().unwrap().0,
        [(7, 7, true, true), (1, 1, false, false), (0, 0, true, true)]
    );
}

#[test]
fn a_query_may_filter_by_membership_on_a_type_it_writes() {
    fn bump(mut q: Query<&mut Position, (With<Position>, Without<Enemy>)>) {
        for p in &mut q {
            p.0 += 10;
        }
    }
    type EitherFilter = ecs_engine::Or<(With<Velocity>, With<Enemy>)>;
    fn bump_either(mut q: Query<&mut Velocity, EitherFilter>) {
        for v in &mut q {
            v.0 *= 2;
        }
    }
    let (mut registry, movers, enemies) = world();
    let mut builder = Schedule::builder();
    builder.add(bump);
    builder.add(bump_either);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(positions(&registry, &movers), [10, 11, 12, 13]);
    assert_eq!(positions(&registry, &enemies), [100, 200, 300]);
    let velocities: Vec<i64> = enemies
        .iter()
        .map(|&e| registry.get::<Velocity>(e).unwrap().0)
        .collect();
    assert_eq!(velocities, [10, 10, 10]);
}

/// Doubles the position of every entity whose position changed since the
/// system's last run, and logs the doubled values: its own writes are not
/// changes it sees next time (bevy's rule).
fn double_changed(mut q: Query<&mut Position, Changed<Position>>, mut seen: ResMut<Seen>) {
    for p in &mut q {
        p.0 *= 2;
        seen.0.push(p.0);
    }
}

/// Adds 1 to every enemy position that is a multiple of 200, marking only
/// those (`Mut`); it runs before `double_changed`, which writes the same
/// type.
fn nudge_even_enemies(mut q: Query<Mut<Position>, With<Enemy>>) {
    for mut p in &mut q {
        if p.0 % 200 == 0 {
            p.0 += 1;
        }
    }
}

#[test]
fn a_query_may_filter_by_change_on_a_type_it_writes_on_1_2_and_8_threads() {
    let mut logs = Vec::new();
    for threads in [1, 2, 8] {
        let (mut registry, movers, enemies) = world();
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(nudge_even_enemies);
        builder.add(double_changed);
        let mut schedule = builder.build(&mut registry).unwrap();
        // First run: 200 is nudged to 201, then everything is new to
        // `double_changed`.
        schedule.run(&mut registry, Tick::default()).unwrap();
        assert_eq!(positions(&registry, &movers), [0, 2, 4, 6]);
        assert_eq!(positions(&registry, &enemies), [200, 402, 600]);
        // Second run: the nudge moves 200 and 600 to 201 and 601, and
        // `double_changed` sees those two only, not its own writes of the
        // first run.
        schedule.run(&mut registry, Tick::default()).unwrap();
        assert_eq!(positions(&registry, &enemies), [402, 402, 1202]);
        // Third run: the nudge finds no multiple of 200; only a write
        // made outside the schedule is seen.
        registry.get_mut::<Position>(movers[3]).unwrap().0 = 7;
        schedule.run(&mut registry, Tick::default()).unwrap();
        assert_eq!(positions(&registry, &movers), [0, 2, 4, 14]);
        logs.push(registry.resource::<Seen>().unwrap().0.clone());
    }
    assert_eq!(logs[0], [0, 2, 4, 6, 200, 402, 600, 402, 1202, 14]);
    assert!(logs.iter().all(|log| *log == logs[0]), "{logs:?}");
}

/// Logs the enemy positions that changed since the system's last run.
fn watch_changed_enemies(
    q: Query<&Position, (Changed<Position>, With<Enemy>)>,
    mut seen: ResMut<Seen>,
) {
    seen.0.extend(q.iter().map(|p| p.0));
}

#[test]
fn a_change_filter_waits_for_a_disjoint_writer_of_its_type_on_1_2_and_8_threads() {
    let mut logs = Vec::new();
    for threads in [1, 2, 8] {
        let (mut registry, movers, enemies) = world();
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(move_movers);
        builder.add(watch_changed_enemies);
        let mut schedule = builder.build(&mut registry).unwrap();
        // A change filter reads ticks of entities its query then rejects
        // (the movers' here): disjoint from no writer of its type.
        assert_eq!(schedule.waves().len(), 2, "{threads} threads");
        for number in 0..3 {
            if number == 2 {
                registry.get_mut::<Position>(enemies[1]).unwrap().0 = 250;
            }
            schedule.run(&mut registry, Tick::default()).unwrap();
        }
        assert_eq!(positions(&registry, &movers), [3, 4, 5, 6]);
        logs.push(registry.resource::<Seen>().unwrap().0.clone());
    }
    assert_eq!(logs[0], [100, 200, 300, 250]);
    assert!(logs.iter().all(|log| *log == logs[0]), "{logs:?}");
}
