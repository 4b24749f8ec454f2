//! Tick-stamped input from other threads: values reach systems at exactly
//! their tick, in (tick, producer, sequence) order, whatever the timing.

use std::time::Duration;

use ecs_runtime::prelude::*;
use ecs_runtime::{InputError, InputStats};

/// What each tick's reader saw: `(tick, producer tag, value)`.
#[derive(Debug, Default)]
struct Seen(Vec<(u64, char, u32)>);

fn record(tick: Tick, inputs: EventReader<(char, u32)>, mut seen: ResMut<Seen>) {
    seen.0
        .extend(inputs.iter().map(|&(tag, value)| (tick.number, tag, value)));
}

/// Runs 12 ticks with two producer threads (`a` then `b`), each pausing
/// `pause(k)` before its `k`-th value.
fn run(threads: usize, pause: fn(u32) -> Duration) -> Vec<(u64, char, u32)> {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.insert_resource(Seen::default());
    builder.add_system(record);
    let mut a = builder.input_producer::<(char, u32)>();
    let mut b = builder.bounded_input_producer::<(char, u32)>(2);
    assert_eq!((a.id(), b.id()), (0, 1));
    let mut engine = builder.build().unwrap();
    let producers = [
        std::thread::spawn(move || {
            for k in 0..8 {
                std::thread::sleep(pause(k));
                a.send_at(u64::from(k / 2) * 3, ('a', k)).unwrap();
            }
        }),
        std::thread::spawn(move || {
            for k in 0..8 {
                std::thread::sleep(pause(k + 1));
                b.send_at(u64::from(k), ('b', k)).unwrap();
            }
            b.through(20).unwrap();
        }),
    ];
    engine.run(12).unwrap();
    for producer in producers {
        producer.join().unwrap();
    }
    let stats: InputStats = engine.input_stats::<(char, u32)>().unwrap();
    assert_eq!((stats.delivered, stats.late), (16, 0));
    std::mem::take(&mut engine.registry_mut().resource_mut::<Seen>().unwrap().0)
}

#[test]
fn values_arrive_at_their_tick_in_tick_producer_sequence_order() {
    let seen = run(2, |_| Duration::ZERO);
    let mut expected = Vec::new();
    for tick in 0..12u64 {
        for k in 0..8u32 {
            if u64::from(k / 2) * 3 == tick {
                expected.push((tick, 'a', k));
            }
        }
        if tick < 8 {
            expected.push((tick, 'b', tick as u32));
        }
    }
    assert_eq!(seen, expected);
    // The same whatever the threads and the producers' timing.
    let slow = |k: u32| Duration::from_micros(u64::from(k % 3) * 300);
    assert_eq!(run(1, slow), expected);
    assert_eq!(
        run(4, |k| Duration::from_micros(u64::from(k % 2) * 500)),
        expected
    );
}

#[test]
fn a_value_for_a_completed_tick_is_refused_and_a_dropped_engine_closes_producers() {
    let mut builder = Engine::builder();
    let mut producer = builder.input_producer::<u8>();
    let engine = builder.build().unwrap();
    producer.send_at(5, 1).unwrap();
    assert_eq!(
        producer.send_at(3, 2),
        Err(InputError::Late {
            tick: 3,
            through: 4
        })
    );
    producer.through(9).unwrap();
    assert!(producer.is_open());
    drop(engine);
    assert_eq!(producer.send_at(12, 3), Err(InputError::Closed));
    assert!(!producer.is_open());
}

#[test]
fn as_soon_as_possible_input_lands_in_the_next_tick() {
    let mut builder = Engine::builder();
    builder.insert_resource(Seen::default());
    builder.add_system(record);
    let sender = builder.input_sender::<(char, u32)>();
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    sender.send(('s', 1)).unwrap();
    sender.send(('s', 2)).unwrap();
    engine.tick().unwrap();
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<Seen>().unwrap().0,
        [(1, 's', 1), (1, 's', 2)]
    );
}

#[test]
fn a_producer_far_ahead_is_held_back_by_its_queue_not_piled_up_in_the_engine() {
    const TICKS: u64 = 5_000;
    const PER_TICK: u32 = 3;
    let mut builder = Engine::builder();
    builder.insert_resource(Seen::default());
    builder.add_system(record);
    let mut producer = builder.bounded_input_producer::<(char, u32)>(4);
    let mut engine = builder.build().unwrap();
    // As fast as it can: it would be thousands of ticks ahead if the
    // engine took everything queued.
    let thread = std::thread::spawn(move || {
        for tick in 0..TICKS {
            for k in 0..PER_TICK {
                producer.send_at(tick, ('p', k)).unwrap();
            }
        }
    });
    engine.run(TICKS).unwrap();
    thread.join().unwrap();
    let stats = engine.input_stats::<(char, u32)>().unwrap();
    assert_eq!(stats.delivered, TICKS * u64::from(PER_TICK));
    assert_eq!(stats.late, 0);
    // At most the first value of the next tick is held between ticks.
    assert!(
        stats.max_pending <= 1,
        "the engine held {} values waiting for later ticks",
        stats.max_pending
    );
    let seen = &engine.registry().resource::<Seen>().unwrap().0;
    assert_eq!(seen.len() as u64, TICKS * u64::from(PER_TICK));
    assert!(
        seen.iter()
            .enumerate()
            .all(|(i, &(tick, _, k))| tick == i as u64 / 3 && k == i as u32 % 3)
    );
}

#[test]
fn a_fast_producer_is_held_back_while_the_engine_waits_for_a_slow_one() {
    const TICKS: u64 = 2_000;
    let mut builder = Engine::builder();
    builder.insert_resource(Seen::default());
    builder.add_system(record);
    let mut fast = builder.bounded_input_producer::<(char, u32)>(4);
    let mut slow = builder.bounded_input_producer::<(char, u32)>(4);
    let mut engine = builder.build().unwrap();
    let threads = [
        std::thread::spawn(move || {
            for tick in 0..TICKS {
                fast.send_at(tick, ('f', tick as u32)).unwrap();
            }
        }),
        std::thread::spawn(move || {
            for tick in 0..TICKS {
                // The engine waits for this one now and then.
                if tick % 100 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
                slow.send_at(tick, ('s', tick as u32)).unwrap();
            }
        }),
    ];
    engine.run(TICKS).unwrap();
    for thread in threads {
        thread.join().unwrap();
    }
    let stats = engine.input_stats::<(char, u32)>().unwrap();
    assert_eq!((stats.delivered, stats.late), (2 * TICKS, 0));
    // At most one value per producer waits between ticks, however far
    // ahead the fast one got while the engine waited for the slow one.
    assert!(
        stats.max_pending <= 2,
        "the engine held {} values waiting for later ticks",
        stats.max_pending
    );
    let seen = &engine.registry().resource::<Seen>().unwrap().0;
    let expected: Vec<(u64, char, u32)> = (0..TICKS)
        .flat_map(|t| [(t, 'f', t as u32), (t, 's', t as u32)])
        .collect();
    assert_eq!(seen, &expected);
}
