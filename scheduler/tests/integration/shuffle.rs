//! The shuffle check mode (`Schedule::set_shuffle`): a wave's systems run
//! in a drawn order, the same for the same seed; a correct program gives
//! the unshuffled world, and an order dependency the declarations hide
//! shows.

use std::sync::Mutex;

use ecs_engine::{Entity, Registry};
use scheduler::{Commands, Query, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Heat(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Light(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sound(u64);

fn warm(mut q: Query<&mut Heat>) {
    q.each(|h| h.0 = h.0 * 3 + 1);
}
fn glow(mut q: Query<&mut Light>) {
    q.par_each(|l| l.0 = l.0 * 5 + 2);
}
/// Spawns one entity every tick: the spawns of a wave are applied in
/// registration order whatever order its systems ran in.
fn ring(mut q: Query<&mut Sound>, mut commands: Commands) {
    q.each(|s| s.0 += 7);
    commands.spawn((Sound(0),));
}

/// Runs ticks `0..n`.
fn run_ticks(schedule: &mut Schedule, registry: &mut Registry, n: u64) {
    for number in 0..n {
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

fn run(
    shuffle: Option<u64>,
    systems: &[fn(&mut scheduler::ScheduleBuilder)],
) -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let first = registry.spawn((Heat(1), Light(1), Sound(1)));
    let mut builder = Schedule::builder();
    builder.threads(1);
    for add in systems {
        add(&mut builder);
    }
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1, "one wave of independent systems");
    schedule.set_shuffle(shuffle);
    assert_eq!(schedule.shuffle(), shuffle);
    run_ticks(&mut schedule, &mut registry, 20);
    let mut all: Vec<Entity> = registry.entities().iter().collect();
    all.sort_by_key(|e| e.to_bits());
    assert_eq!(all[0], first);
    (registry, all)
}

fn correct(builder: &mut scheduler::ScheduleBuilder) {
    builder.add(warm);
    builder.add(glow);
    builder.add(ring);
}

#[test]
fn a_correct_program_gives_the_unshuffled_world() {
    let (plain, plain_entities) = run(None, &[correct]);
    for seed in [1, 2, 99] {
        let (shuffled, entities) = run(Some(seed), &[correct]);
        assert_eq!(entities, plain_entities, "seed {seed}");
        for &e in &entities {
            assert_eq!(shuffled.get::<Sound>(e), plain.get::<Sound>(e));
        }
        let e = entities[0];
        assert_eq!(shuffled.get::<Heat>(e), plain.get::<Heat>(e));
        assert_eq!(shuffled.get::<Light>(e), plain.get::<Light>(e));
    }
}

/// The order the planted systems ran in, tick after tick: the hidden
/// state two systems of one wave share.
static ORDER: Mutex<Vec<char>> = Mutex::new(Vec::new());

fn first(_: Query<&Heat>) {
    ORDER.lock().unwrap().push('a');
}
fn second(_: Query<&Light>) {
    ORDER.lock().unwrap().push('b');
}
fn third(_: Query<&Sound>) {
    ORDER.lock().unwrap().push('c');
}

fn planted(builder: &mut scheduler::ScheduleBuilder) {
    builder.add(first);
    builder.add(second);
    builder.add(third);
}

#[test]
fn a_seed_draws_the_same_orders_and_another_seed_others() {
    let orders = |shuffle| {
        ORDER.lock().unwrap().clear();
        run(shuffle, &[planted]);
        let log: Vec<String> = ORDER
            .lock()
            .unwrap()
            .chunks(3)
            .map(|c| c.iter().collect())
            .collect();
        log
    };
    // Registration order without the mode (one thread, no pool).
    let plain = orders(None);
    assert!(plain.iter().all(|o| o == "abc"), "{plain:?}");
    let drawn = orders(Some(5));
    assert_eq!(drawn.len(), 20);
    assert!(drawn.iter().any(|o| o != "abc"), "{drawn:?}");
    for order in &drawn {
        let mut sorted: Vec<char> = order.chars().collect();
        sorted.sort_unstable();
        assert_eq!(sorted, ['a', 'b', 'c'], "each system once per tick");
    }
    assert_eq!(orders(Some(5)), drawn, "the same seed, the same orders");
    assert_ne!(orders(Some(6)), drawn);
}

/// The first value each tick's parallel walk visited.
static FIRSTS: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn listen(mut q: Query<&mut Sound>) {
    let seen = Mutex::new(Vec::new());
    q.par_each(|s| seen.lock().unwrap().push(s.0));
    FIRSTS.lock().unwrap().push(seen.into_inner().unwrap()[0]);
}

#[test]
fn a_parallel_walk_visits_its_chunks_in_a_drawn_order() {
    let firsts = |shuffle| {
        FIRSTS.lock().unwrap().clear();
        let mut registry = Registry::new();
        for i in 0..2_000 {
            registry.spawn((Sound(i),));
        }
        let mut builder = Schedule::builder();
        builder.threads(1);
        builder.add(listen);
        let mut schedule = builder.build(&mut registry).unwrap();
        schedule.set_shuffle(shuffle);
        run_ticks(&mut schedule, &mut registry, 10);
        std::mem::take(&mut *FIRSTS.lock().unwrap())
    };
    assert_eq!(firsts(None), [0; 10]);
    let drawn = firsts(Some(4));
    assert!(drawn.iter().any(|&f| f != 0), "{drawn:?}");
    assert_eq!(firsts(Some(4)), drawn);
}
