//! Resource change detection: exact per-tick sequences a reader sees.

use ecs_engine::Registry;
use scheduler::{Res, ResMut, Schedule, Tick};

struct Value(u32);
#[derive(Default)]
struct Seen(Vec<(bool, bool)>);

// Tick 1 writes, tick 2 fetches without writing, tick 3 set_changed,
// tick 4 bypasses, tick 5 nothing.
fn writer(mut v: ResMut<Value>, tick: Tick) {
    match tick.number {
        1 => v.0 += 1,
        2 => {
            let _ = v.0;
        }
        3 => v.set_changed(),
        4 => v.bypass_change_detection().0 += 10,
        _ => {}
    }
}

fn reader(v: Res<Value>, mut seen: ResMut<Seen>) {
    seen.0.push((v.is_changed(), v.is_added()));
}

fn run(threads: usize) -> Vec<(bool, bool)> {
    let mut registry = Registry::new();
    registry.insert_resource(Value(0));
    registry.insert_resource(Seen::default());
    let mut builder = Schedule::builder();
    builder.threads(threads);
    builder.add(writer);
    // Both touch `Value`: registration order puts the reader after.
    builder.add(reader);
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..6 {
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
    std::mem::take(&mut registry.resource_mut::<Seen>().unwrap().0)
}

#[test]
fn reader_sees_exact_changes_on_1_and_2_threads() {
    let expected = vec![
        (true, true),   // first run
        (true, false),  // written
        (false, false), // fetched, not written
        (true, false),  // set_changed
        (false, false), // bypassed
        (false, false), // untouched
    ];
    assert_eq!(run(1), expected);
    assert_eq!(run(2), expected);
}

#[test]
fn restored_resource_ticks_match() {
    let mut registry = Registry::new();
    registry.register_resource_clone::<u32>();
    registry.insert_resource(1_u32);
    let since = registry.change_tick();
    registry.advance_change_tick();
    let state = registry.save_state().unwrap();
    assert_eq!(registry.resource_changed_since::<u32>(since), Some(false));
    *registry.resource_mut::<u32>().unwrap() = 2;
    assert_eq!(registry.resource_changed_since::<u32>(since), Some(true));
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<u32>(), Some(&1));
    assert_eq!(registry.resource_changed_since::<u32>(since), Some(false));
}
