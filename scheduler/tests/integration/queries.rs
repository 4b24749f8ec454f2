//! System queries: filters (`Or`, tuples), entity-only and `Has` queries,
//! read-only queries without `mut`, `get_many_mut` and `par_fold` inside
//! systems, and the access each declares.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_engine::{EcsError, Entity, Has, Or, Registry, With, Without};
use scheduler::{BuildError, Commands, Query, Res, ResMut, Schedule, Tick};

use common::wave_names;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shield;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Player;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Enemy;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Boss;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dead;

#[derive(Debug, Default)]
struct Seen(Vec<Entity>);

#[test]
fn entity_only_and_or_filtered_queries_select_the_right_entities() {
    fn players(q: Query<Entity, With<Player>>, mut seen: ResMut<Seen>) {
        seen.0 = q.iter().collect();
    }
    /// Enemies and bosses that are not dead.
    type Targets = (Or<(With<Enemy>, With<Boss>)>, Without<Dead>);
    fn hurt(mut q: Query<&mut Health, Targets>) {
        q.each(|h| h.0 -= 1);
    }
    let mut registry = Registry::new();
    registry.insert_resource(Seen::default());
    let hero = registry.spawn((Health(10), Player));
    let grunt = registry.spawn((Health(10), Enemy));
    let boss = registry.spawn((Health(10), Boss));
    let corpse = registry.spawn((Health(10), Enemy, Dead));
    let mut builder = Schedule::builder();
    builder.add(players);
    builder.add(hurt);
    let mut schedule = builder.build(&mut registry).unwrap();
    for _ in 0..3 {
        schedule.run(&mut registry, Tick::default()).unwrap();
    }
    assert_eq!(registry.resource::<Seen>().unwrap().0, [hero]);
    let health = |e| registry.get::<Health>(e).unwrap().0;
    assert_eq!(
        [health(hero), health(grunt), health(boss), health(corpse)],
        [10, 7, 7, 10]
    );
}

#[test]
fn has_and_with_declare_reads_so_they_wait_for_writers() {
    fn give_shields(q: Query<Entity, Without<Shield>>, mut commands: Commands) {
        for e in q.iter() {
            commands.insert(e, Shield);
        }
    }
    fn write_shields(mut q: Query<&mut Shield>) {
        q.each(|_| {});
    }
    fn count_shields(q: Query<Has<Shield>>, count: Res<Counter>) {
        count
            .0
            .store(q.iter().filter(|&h| h).count(), Ordering::SeqCst);
    }
    fn read_health(q: Query<&Health, With<Player>>) {
        let _ = q.count();
    }
    struct Counter(Arc<AtomicUsize>);
    let counted = Arc::new(AtomicUsize::new(usize::MAX));
    let mut registry = Registry::new();
    registry.insert_resource(Counter(counted.clone()));
    registry.spawn((Health(1), Player));
    registry.spawn((Health(1),));
    let mut builder = Schedule::builder();
    builder.add(write_shields).named("write_shields");
    builder.add(count_shields).named("count_shields");
    builder.add(read_health).named("read_health");
    builder.add(give_shields).named("give_shields");
    let mut schedule = builder.build(&mut registry).unwrap();
    // `Has<Shield>` reads Shield: not beside its writer; `give_shields`
    // reads it (Without) and `read_health` reads nothing written.
    let waves = wave_names(&schedule);
    let wave_of = |name: &str| {
        waves
            .iter()
            .position(|w| w.iter().any(|n| n == name))
            .unwrap()
    };
    assert_ne!(wave_of("write_shields"), wave_of("count_shields"));
    assert_eq!(wave_of("read_health"), 0);
    schedule.run(&mut registry, Tick::default()).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    // After the first tick's commands, both entities have a shield.
    assert_eq!(counted.load(Ordering::SeqCst), 2);
}

#[test]
fn get_many_mut_in_a_system_moves_health_between_two_entities() {
    #[derive(Debug)]
    struct Pair(Entity, Entity);
    fn transfer(mut q: Query<&mut Health>, pair: Res<Pair>, mut seen: ResMut<Seen>) {
        let duplicate = q.get_many_mut([pair.0, pair.0]).map(|_| ()).unwrap_err();
        assert!(
            matches!(duplicate, EcsError::DuplicateEntity { .. }),
            "{duplicate}"
        );
        let [a, b] = q.get_many_mut([pair.0, pair.1]).unwrap();
        a.0 -= 3;
        b.0 += 3;
        seen.0.push(pair.0);
    }
    let mut registry = Registry::new();
    let a = registry.spawn((Health(10),));
    let b = registry.spawn((Health(0),));
    registry.insert_resource(Pair(a, b));
    registry.insert_resource(Seen::default());
    let mut builder = Schedule::builder();
    builder.add(transfer);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(registry.get::<Health>(a), Some(&Health(7)));
    assert_eq!(registry.get::<Health>(b), Some(&Health(3)));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "par_fold runs on rayon's pool (crossbeam-epoch trips Stacked Borrows)"
)]
fn par_fold_in_a_system_is_the_same_on_one_and_many_threads() {
    #[derive(Debug, Default)]
    struct Total(u64);
    fn total(mut q: Query<&Health, Without<Dead>>, mut out: ResMut<Total>) {
        let sum = q.par_fold(|| 0.0_f64, |s, h| s + 1.0 / f64::from(h.0), |a, b| a + b);
        out.0 = sum.to_bits();
    }
    let run = |threads: usize| {
        let mut registry = Registry::new();
        registry.insert_resource(Total::default());
        for i in 1..5_000 {
            registry.spawn((Health(i),));
        }
        let mut builder = Schedule::builder();
        builder.add(total);
        let mut schedule = builder.build(&mut registry).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| schedule.run(&mut registry, Tick::default()))
            .unwrap();
        registry.resource::<Total>().unwrap().0
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}

#[test]
fn a_query_writing_what_its_has_term_reads_fails_naming_the_system() {
    fn clash(mut q: Query<(&mut Health, Has<Health>)>) {
        q.each(|_| {});
    }
    let mut registry = Registry::new();
    registry.spawn((Health(1),));
    let mut builder = Schedule::builder();
    builder.add(clash).named("clash");
    let error = builder.build(&mut registry).unwrap_err();
    assert_eq!(
        error,
        BuildError::ParamClash {
            system: "clash".into(),
            name: "integration::queries::Health".into(),
        }
    );
}

#[test]
fn single_names_why_there_is_not_exactly_one() {
    use scheduler::QuerySingleError;
    type Seen = Arc<std::sync::Mutex<Vec<Result<i32, QuerySingleError>>>>;
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let mut builder = Schedule::builder();
    builder.add(move |mut players: Query<&mut Health, With<Player>>| {
        let found = players.single_mut().map(|h| {
            h.0 += 1;
            h.0
        });
        log.lock().unwrap().push(found);
    });
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    let hero = registry.spawn((Health(10), Player));
    schedule.run(&mut registry, Tick::default()).unwrap();
    registry.spawn((Health(5), Player));
    schedule.run(&mut registry, Tick::default()).unwrap();

    let seen = seen.lock().unwrap();
    assert!(
        matches!(seen[0], Err(QuerySingleError::NoEntities { query }) if query.contains("Health")),
        "{:?}",
        seen[0]
    );
    assert_eq!(seen[1], Ok(11));
    assert!(
        matches!(seen[2], Err(QuerySingleError::MultipleEntities { .. })),
        "{:?}",
        seen[2]
    );
    assert!(
        seen[2]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("more than one")
    );
    // The failed `single_mut` wrote nothing.
    assert_eq!(registry.get::<Health>(hero), Some(&Health(11)));
}
