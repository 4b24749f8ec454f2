//! `EngineBuilder::replay_inputs`: ticks run again after a restore get the
//! input they got the first time, from producer threads that have moved
//! on; without replay, what they miss is counted.

use ecs_runtime::InputStats;
use ecs_runtime::prelude::*;

/// A running sum of what the reader saw, and its log.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    sum: u64,
    log: Vec<(u64, u32)>,
}

fn reader(tick: Tick, inputs: EventReader<u32>, mut seen: ResMut<Seen>) {
    for &value in inputs.iter() {
        seen.sum = seen.sum.wrapping_mul(31).wrapping_add(u64::from(value));
        seen.log.push((tick.number, value));
    }
}

/// 60 ticks fed by a producer thread (values at ticks divisible by 3, two
/// of them at multiples of 7); every `rollback` ticks (if any) the state
/// of `depth` ticks ago is restored and those ticks run again (once).
fn run(threads: usize, replay: Option<u64>, rollback: Option<(u64, u64)>) -> (Seen, InputStats) {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.insert_resource(Seen::default());
    builder.add_system(reader);
    let mut producer = builder.bounded_input_producer::<u32>(4);
    if let Some(window) = replay {
        builder.replay_inputs::<u32>(window);
    }
    let mut engine = builder.build().unwrap();
    engine
        .register_resource_clone::<Seen>()
        .register_resource_clone::<Events<u32>>();
    let thread = std::thread::spawn(move || {
        for tick in 0..60u32 {
            if tick % 3 == 0 {
                producer.send_at(u64::from(tick), tick * 10).unwrap();
            }
            if tick % 7 == 0 {
                producer.send_at(u64::from(tick), tick * 10 + 1).unwrap();
            }
            producer.through(u64::from(tick)).unwrap();
        }
    });
    let mut states = std::collections::VecDeque::new();
    let mut furthest = 0;
    while engine.ticks() < 60 {
        states.push_back(engine.save_state().unwrap());
        if states.len() > 16 {
            states.pop_front();
        }
        engine.tick().unwrap();
        let new = engine.ticks() > furthest;
        furthest = furthest.max(engine.ticks());
        if let Some((every, depth)) = rollback
            && new
            && engine.ticks().is_multiple_of(every)
        {
            let back = &states[states.len() - depth as usize];
            assert_eq!(back.ticks(), engine.ticks() - depth);
            engine.restore_state(back).unwrap();
            states.truncate(states.len() - depth as usize);
        }
    }
    thread.join().unwrap();
    let seen = engine.registry().resource::<Seen>().unwrap().clone();
    (seen, engine.input_stats::<u32>().unwrap())
}

#[test]
fn a_rollback_with_replay_gets_the_plain_runs_world_on_1_2_and_8_threads() {
    let (plain, plain_stats) = run(2, None, None);
    assert_eq!(plain.log.len(), 20 + 9);
    assert_eq!(plain_stats.delivered, 29);
    for threads in [1, 2, 8] {
        let (seen, stats) = run(threads, Some(8), Some((5, 4)));
        assert_eq!(seen, plain, "{threads} threads");
        // Each rollback runs 4 ticks again; what they got was delivered
        // once from the producer and again from the copies.
        assert_eq!(stats.delivered, 29);
        assert!(stats.replayed > 0, "{stats:?}");
        assert_eq!((stats.not_replayed, stats.unknown_reruns), (0, 0));
    }
}

#[test]
fn without_replay_the_ticks_run_again_miss_their_input_and_it_is_counted() {
    let (plain, _) = run(1, None, None);
    let (seen, stats) = run(1, None, Some((5, 4)));
    assert_ne!(seen, plain);
    assert_eq!(stats.replayed, 0);
    let missed = plain.log.len() - seen.log.len();
    assert_eq!(stats.not_replayed, missed as u64, "{stats:?}");
}

#[test]
fn a_rollback_deeper_than_the_window_is_counted() {
    let (_, stats) = run(1, Some(2), Some((10, 6)));
    // Rolled back 6 ticks with 2 kept: the older ticks run again unknown.
    assert!(stats.unknown_reruns > 0, "{stats:?}");
    assert!(stats.replayed > 0, "{stats:?}");
}
