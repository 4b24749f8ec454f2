//! Delta saves (`change/stamps.rs`): a delta copies only the blocks of
//! dense positions whose summary says they were written since, so every
//! path that writes a tracked component in place must leave that trace.
//! Each path here writes one entity far from position 0 of a type
//! registered with `register_clone_delta`, in a world of several groups
//! of 1,024 positions; then a delta save (into a `RegistryState` or a
//! `StateRing`), a restore into a fresh registry, and a restore of the
//! live registry after another write, each compared value by value with
//! what the live world held.
//!
//! Also sequences of restores and saves (ring restores to older frames,
//! one after another), wrap-around of the change tick, clamps,
//! `import_pool_ticks` and `restore_change_clock`. Under Miri only the
//! parallel walks run (Tree Borrows lane: the stamps several threads
//! store), in a world of three blocks, through states only; the other tests would take minutes
//! there, and their unsafe paths are Miri's in `views.rs`,
//! `change_paths.rs` and `state/`.

// Under Miri, only the parallel test and what it uses are compiled in.
#![cfg_attr(miri, allow(dead_code, unused_imports))]

use ecs_engine::{
    ChangeTick, Changed, Entity, Mut, Registry, RegistryState, StateRing, Untracked, With, Without,
};

use crate::components::{A, B, C};

/// Entities with an `A`: three groups of 1,024 and a bit (under Miri,
/// three blocks of 16).
const ENTITIES: usize = if cfg!(miri) { 48 } else { 3_300 };
/// The entity each path writes: in the third group (under Miri, the
/// third block).
const TARGET: usize = ENTITIES * 3 / 4 + 7;
/// A step between other entities written, a sixteenth of the world.
const APART: usize = ENTITIES / 16;

fn types() -> Registry {
    let mut registry = Registry::new();
    registry.register_clone_delta::<A>();
    registry.register_clone::<B>();
    registry.register_clone_delta::<C>();
    registry.track_changes::<A>();
    registry.track_changes::<B>();
    registry.track_changes::<C>();
    registry
}

/// `ENTITIES` entities with an `A`; only the target has a `B`; every
/// third one has a `C` (the target too).
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = types();
    let e: Vec<Entity> = (0..ENTITIES as u32)
        .map(|i| registry.spawn((A(i),)))
        .collect();
    registry.insert(e[TARGET], B(0)).unwrap();
    for (i, &entity) in e.iter().enumerate() {
        if i % 3 == 0 || i == TARGET {
            registry.insert(entity, C(i as u32)).unwrap();
        }
    }
    (registry, e)
}

/// Every `A` and `C`, in dense order, with the live handles.
type Contents = (Vec<Entity>, Vec<(Entity, A)>, Vec<(Entity, C)>);

fn contents(registry: &Registry) -> Contents {
    (
        registry.entities().iter().collect(),
        registry
            .pool::<A>()
            .map(|p| p.iter().map(|(e, a)| (e, *a)).collect())
            .unwrap_or_default(),
        registry
            .pool::<C>()
            .map(|p| p.iter().map(|(e, c)| (e, *c)).collect())
            .unwrap_or_default(),
    )
}

/// The positions where two contents differ, for a readable failure.
fn diff(got: &Contents, want: &Contents) -> String {
    if got.0 != want.0 {
        return format!("live entities differ ({} vs {})", got.0.len(), want.0.len());
    }
    let a: Vec<_> = got
        .1
        .iter()
        .zip(&want.1)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("A at {i}: got {:?} want {:?}", g.1, w.1))
        .take(4)
        .collect();
    let c: Vec<_> = got
        .2
        .iter()
        .zip(&want.2)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("C at {i}: got {:?} want {:?}", g.1, w.1))
        .take(4)
        .collect();
    format!(
        "{a:?} {c:?} (lens A {} {}, C {} {})",
        got.1.len(),
        want.1.len(),
        got.2.len(),
        want.2.len()
    )
}

/// `Err` naming `what` and the first differences when `got` is not
/// `want`.
fn same(got: &Contents, want: &Contents, what: &str) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: {}", diff(got, want)))
    }
}

/// What a fresh registry restored from `state` holds.
fn restored(state: &RegistryState) -> Contents {
    let mut fresh = types();
    fresh.restore_state(state).unwrap();
    contents(&fresh)
}

mod paths;
mod sequences;

use paths::*;

/// Saves whole, writes the target through `write`, saves again (a delta)
/// and checks a fresh restore holds the write; then writes again and
/// restores the live registry, and checks the write is undone.
fn check_state(write: Write) -> Result<(), String> {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    write(&mut registry, &e, 1_000_000);
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    if registry.get::<A>(e[TARGET]) != Some(&A(1_000_000)) {
        return Err("the path did not write".into());
    }
    same(
        &restored(&state),
        &saved,
        "state: the delta save missed the write",
    )?;

    registry.advance_change_tick();
    write(&mut registry, &e, 2_000_000);
    registry.advance_change_tick();
    registry.restore_state(&state).unwrap();
    same(
        &contents(&registry),
        &saved,
        "state: the restore missed the write",
    )?;

    // Once more from the restored registry: the write, a delta save, a
    // fresh restore.
    write(&mut registry, &e, 3_000_000);
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(
        &restored(&state),
        &saved,
        "state: a save after a restore missed the write",
    )?;
    Ok(())
}

/// The same with a `StateRing`: frames saved before and after the write,
/// the newest restored into a fresh registry, the live one restored to
/// the newest frame after another write, then to the frame before the
/// first write, and then written and saved again.
fn check_ring(write: Write) -> Result<(), String> {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(4);
    registry.save_frame(&mut ring).unwrap();
    let before = contents(&registry);
    registry.advance_change_tick();
    write(&mut registry, &e, 1_000_000);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(
        &restored(ring.newest().unwrap()),
        &saved,
        "ring: the delta frame missed the write",
    )?;
    registry.advance_change_tick();
    write(&mut registry, &e, 2_000_000);
    registry.advance_change_tick();
    registry.restore_frame(&mut ring, 0).unwrap();
    same(
        &contents(&registry),
        &saved,
        "ring: restore_frame(0) missed the write",
    )?;
    registry.restore_frame(&mut ring, 1).unwrap();
    same(
        &contents(&registry),
        &before,
        "ring: restore_frame(1) missed the write",
    )?;
    registry.advance_change_tick();
    write(&mut registry, &e, 3_000_000);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(
        &restored(ring.newest().unwrap()),
        &saved,
        "ring: a frame after a restore missed the write",
    )?;
    Ok(())
}

fn check_all(paths: &[(&str, Write)]) {
    let mut failed = Vec::new();
    for &(name, write) in paths {
        if let Err(e) = check_state(write) {
            failed.push(format!("{name}: {e}"));
        }
        // Under Miri, where a ring's checks take minutes, states only.
        if !cfg!(miri)
            && let Err(e) = check_ring(write)
        {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
#[cfg(not(miri))]
fn write_paths() {
    check_all(PATHS);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global rayon pool trips crossbeam-epoch under Stacked Borrows; run with -Zmiri-tree-borrows"
)]
fn parallel_write_paths() {
    check_all(PAR_PATHS);
}

#[test]
#[cfg(not(miri))]
fn unmarked_write_paths() {
    check_all(UNMARKED_PATHS);
}

#[test]
#[cfg(not(miri))]
fn structural_write_paths() {
    check_all(STRUCTURAL_PATHS);
}
