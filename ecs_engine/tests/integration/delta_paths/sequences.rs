//! Sequences of saves and restores around one write: the wrap of the
//! change tick, clamps, imports, ring restores and rollback loops.

use super::*;

/// Every path, with the change tick near the wrap (the save before the
/// write at `u32::MAX - 1`, the write past 0).
#[test]
#[cfg(not(miri))]
fn write_paths_across_the_wrap() {
    let mut failed = Vec::new();
    for &(name, write) in PATHS.iter().chain(PAR_PATHS).chain(UNMARKED_PATHS) {
        for mode in 0..2 {
            let (mut registry, e) = world();
            registry.set_change_tick_for_tests(ChangeTick::new(u32::MAX - 2));
            registry.advance_change_tick();
            let mut state = RegistryState::default();
            let mut ring = StateRing::new(3);
            if mode == 0 {
                registry.save_state_into(&mut state).unwrap();
            } else {
                registry.save_frame(&mut ring).unwrap();
            }
            registry.advance_change_tick(); // u32::MAX
            registry.advance_change_tick(); // 0
            write(&mut registry, &e, 1_000_000);
            registry.advance_change_tick();
            let saved = contents(&registry);
            let mut fresh = types();
            if mode == 0 {
                registry.save_state_into(&mut state).unwrap();
                fresh.restore_state(&state).unwrap();
            } else {
                registry.save_frame(&mut ring).unwrap();
                fresh.restore_state(ring.newest().unwrap()).unwrap();
            }
            let got = contents(&fresh);
            if got != saved {
                failed.push(format!("{name} (mode {mode}): {}", diff(&got, &saved)));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A jump of the clock that clamps the old ticks between the saves.
#[test]
#[cfg(not(miri))]
fn a_clamp_between_saves() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    let mut ring = StateRing::new(3);
    registry.save_frame(&mut ring).unwrap();
    // Many advances, one at a time, would take too long: advance past a
    // check interval the way the clock does it, by a jump.
    let now = registry.change_tick().get();
    registry.set_change_tick_for_tests(ChangeTick::new(now.wrapping_add(10)));
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 77;
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "state").unwrap();
    same(&restored(ring.newest().unwrap()), &saved, "ring").unwrap();
}

/// `export_pool_ticks`, `restore_change_clock` and `import_pool_ticks`
/// between saves (what a load does), then a write and a delta save.
#[test]
#[cfg(not(miri))]
fn import_pool_ticks_between_saves() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 5;
    let ticks = registry.export_pool_ticks::<A>().unwrap();
    let clock = registry.export_change_clock();
    registry.restore_change_clock(clock);
    registry.import_pool_ticks::<A>(ticks).unwrap();
    registry.get_mut::<A>(e[TARGET + APART]).unwrap().0 = 6;
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "a fresh restore").unwrap();
}

/// The clock put back a few ticks (`restore_change_clock`, without an
/// import), a write, then a delta save.
#[test]
#[cfg(not(miri))]
fn restore_change_clock_back_then_a_write() {
    let (mut registry, e) = world();
    for _ in 0..5 {
        registry.advance_change_tick();
    }
    let early = registry.export_change_clock();
    for _ in 0..5 {
        registry.advance_change_tick();
    }
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 9;
    registry.restore_change_clock(early);
    registry.get_mut::<A>(e[TARGET + 2 * APART]).unwrap().0 = 10;
    for _ in 0..7 {
        registry.advance_change_tick();
    }
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "a fresh restore").unwrap();
}

/// A ring of frames with a write per frame, far apart; then two restores
/// to older frames one after the other (a scrub bar stepping back), with
/// no advance of the clock in between.
#[test]
#[cfg(not(miri))]
fn ring_restores_one_frame_back_twice() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(8);
    let mut frames = vec![];
    registry.save_frame(&mut ring).unwrap();
    frames.push(contents(&registry));
    for round in 0..3_u32 {
        registry.advance_change_tick();
        // The target every round, and one more entity per round.
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry
            .get_mut::<A>(e[APART + 5 * APART * round as usize])
            .unwrap()
            .0 = 20 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.advance_change_tick();
    let mut failed = vec![];
    for step in 0..3 {
        registry.restore_frame(&mut ring, 1).unwrap();
        frames.pop();
        let want = frames.last().unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("step {step}: {}", diff(&got, want)));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// As above, but with a write to another entity (far from the others)
/// between the two restores: the pool counts as written again.
#[test]
#[cfg(not(miri))]
fn ring_restores_one_frame_back_twice_with_a_write_between() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(8);
    let mut frames = vec![];
    registry.save_frame(&mut ring).unwrap();
    frames.push(contents(&registry));
    for round in 0..3_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.advance_change_tick();
    let mut failed = vec![];
    for step in 0..3 {
        registry.restore_frame(&mut ring, 1).unwrap();
        frames.pop();
        let want = frames.last().unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("step {step}: {}", diff(&got, want)));
        }
        // A write elsewhere, undone by the next restore.
        registry.get_mut::<A>(e[3]).unwrap().0 = 999;
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Two restores back, then the game runs again (advance, write, save)
/// a frame at a time, restoring one back after each save: the rollback
/// loop of a networked game.
#[test]
#[cfg(not(miri))]
fn rollback_loop_with_resimulation() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(6);
    let mut frames: Vec<Contents> = vec![];
    let step = |registry: &mut Registry, round: u32| {
        registry.advance_change_tick();
        let k = (round as usize * 977) % ENTITIES;
        registry.get_mut::<A>(e[k]).unwrap().0 = 50_000 + round;
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 60_000 + round;
    };
    let mut failed = vec![];
    for round in 0..40_u32 {
        step(&mut registry, round);
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
        if frames.len() > 6 {
            frames.remove(0);
        }
        if round % 5 == 4 && frames.len() > 2 {
            let back = 1 + (round as usize / 5) % 2;
            registry.restore_frame(&mut ring, back).unwrap();
            frames.truncate(frames.len() - back);
            let got = contents(&registry);
            if &got != frames.last().unwrap() {
                failed.push(format!(
                    "round {round} back {back}: {}",
                    diff(&got, frames.last().unwrap())
                ));
            }
            // Re-simulated with other writes.
            step(&mut registry, round + 1_000);
            registry.save_frame(&mut ring).unwrap();
            frames.push(contents(&registry));
            let mut fresh = types();
            fresh.restore_state(ring.newest().unwrap()).unwrap();
            let got = contents(&fresh);
            if &got != frames.last().unwrap() {
                failed.push(format!(
                    "round {round} resaved: {}",
                    diff(&got, frames.last().unwrap())
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A registry restored whole from a state becomes the live one: its
/// stamps came from the state. Written, saved (delta into the same
/// state), and restored into another fresh registry.
#[test]
#[cfg(not(miri))]
fn a_fresh_registry_restored_from_a_ring_then_written() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(4);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    for round in 0..3_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.get_mut::<A>(e[TARGET + 3]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
    }
    // Two frames back on the live registry: the mirror is the frame
    // before the second write.
    registry.restore_frame(&mut ring, 2).unwrap();
    let mut fresh = types();
    fresh.restore_state(ring.newest().unwrap()).unwrap();
    assert!(
        contents(&fresh) == contents(&registry),
        "{}",
        diff(&contents(&fresh), &contents(&registry))
    );
    // The fresh one goes on from there, and restores one back.
    fresh.get_mut::<A>(e[TARGET + 3]).unwrap().0 = 4_444;
    fresh.save_frame(&mut ring).unwrap();
    let saved = contents(&fresh);
    fresh.get_mut::<A>(e[TARGET]).unwrap().0 = 5_555;
    fresh.restore_frame(&mut ring, 0).unwrap();
    let got = contents(&fresh);
    assert!(got == saved, "{}", diff(&got, &saved));
    fresh.restore_frame(&mut ring, 1).unwrap();
    let mut other = types();
    other.restore_state(ring.newest().unwrap()).unwrap();
    assert!(
        contents(&fresh) == contents(&other),
        "{}",
        diff(&contents(&fresh), &contents(&other))
    );
}

/// Two states saved at different ticks and restored alternately into the
/// live registry, with a write before each.
#[test]
#[cfg(not(miri))]
fn two_states_alternately() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut s1 = registry.save_state().unwrap();
    let c1 = contents(&registry);
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 1;
    registry.advance_change_tick();
    let mut s2 = registry.save_state().unwrap();
    let c2 = contents(&registry);
    let mut failed = vec![];
    for round in 0..6_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET + 1]).unwrap().0 = 100 + round;
        let (state, want) = if round % 2 == 0 {
            (&s1, &c1)
        } else {
            (&s2, &c2)
        };
        registry.restore_state(state).unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("round {round}: {}", diff(&got, want)));
        }
    }
    // And the states again saved from the registry after restores.
    registry.get_mut::<A>(e[TARGET + 2]).unwrap().0 = 7;
    registry.save_state_into(&mut s1).unwrap();
    registry.save_state_into(&mut s2).unwrap();
    let saved = contents(&registry);
    for s in [&s1, &s2] {
        let mut fresh = types();
        fresh.restore_state(s).unwrap();
        if contents(&fresh) != saved {
            failed.push(format!("resave: {}", diff(&contents(&fresh), &saved)));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A registry that never heard of the types takes its pools from a ring
/// stepped back a frame (its mirror undone, so carrying the newest
/// frame's marks), then steps the ring back once more: it must get that
/// frame; then it writes one entity and saves a frame, which must hold
/// the write.
#[test]
#[cfg(not(miri))]
fn a_registry_without_the_types_restored_from_a_stepped_back_ring() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(5);
    let mut frames = Vec::new();
    registry.advance_change_tick();
    for round in 0..4_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.restore_frame(&mut ring, 2).unwrap();
    let mut bare = Registry::new();
    bare.restore_state(ring.newest().unwrap()).unwrap();
    same(&contents(&bare), &frames[1], "the bare restore").unwrap();
    bare.restore_frame(&mut ring, 1).unwrap();
    same(&contents(&bare), &frames[0], "one frame further back").unwrap();
    bare.get_mut::<A>(e[TARGET + APART]).unwrap().0 = 4_444;
    bare.save_frame(&mut ring).unwrap();
    same(
        &restored(ring.newest().unwrap()),
        &contents(&bare),
        "its frame",
    )
    .unwrap();
}
