//! A ring's edge cases, found by a helper trying to break it: a `Clone`
//! that panics during a save, one ring saved by registries with more and
//! fewer pools, and a restore refused for its types.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use ecs_engine::{Registry, StateError, StateRing};

/// Makes [`Fragile`]'s clone panic.
static PANIC_ON_CLONE: AtomicBool = AtomicBool::new(false);

#[derive(Debug, PartialEq)]
struct Fragile(u32);

impl Clone for Fragile {
    fn clone(&self) -> Self {
        assert!(!PANIC_ON_CLONE.load(Ordering::Relaxed), "Fragile::clone");
        Fragile(self.0)
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Pos(u32);

#[derive(Clone, Debug, PartialEq)]
struct Other(u32);

#[test]
fn a_save_whose_clone_panics_leaves_the_newest_frame_whole() {
    for delta in [true, false] {
        let mut registry = Registry::new();
        if delta {
            registry.register_clone_delta::<Pos>();
            registry.register_clone_delta::<Fragile>();
            registry.track_changes::<Pos>();
            registry.track_changes::<Fragile>();
        } else {
            registry.register_clone::<Pos>();
            registry.register_clone::<Fragile>();
        }
        let e = registry.spawn((Pos(0), Fragile(0)));
        let mut ring = StateRing::new(8);
        registry.save_frame(&mut ring).unwrap();
        registry.advance_change_tick();
        registry.get_mut::<Pos>(e).unwrap().0 = 1;
        registry.get_mut::<Fragile>(e).unwrap().0 = 1;
        PANIC_ON_CLONE.store(true, Ordering::Relaxed);
        let saved = catch_unwind(AssertUnwindSafe(|| registry.save_frame(&mut ring)));
        PANIC_ON_CLONE.store(false, Ordering::Relaxed);
        assert!(saved.is_err(), "the clone panics");
        assert_eq!(ring.len(), 1);
        // The ring goes on: another save, then back to the first frame.
        registry.save_frame(&mut ring).unwrap();
        registry.restore_frame(&mut ring, 1).unwrap();
        assert_eq!(registry.get::<Pos>(e), Some(&Pos(0)), "delta: {delta}");
        assert_eq!(
            registry.get::<Fragile>(e),
            Some(&Fragile(0)),
            "delta: {delta}"
        );
    }
}

#[test]
fn a_frame_holds_only_the_pools_of_the_registry_that_saved_it() {
    let mut big = Registry::new();
    big.register_clone::<Pos>();
    big.register_clone::<Other>();
    let b = big.spawn((Pos(1), Other(1)));
    let mut small = Registry::new();
    small.register_clone::<Pos>();
    let s = small.spawn((Pos(2),));
    let mut ring = StateRing::new(4);
    big.save_frame(&mut ring).unwrap();
    small.save_frame(&mut ring).unwrap();
    small.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(small.get::<Pos>(s), Some(&Pos(2)));
    assert_eq!(small.get::<Other>(s), None);
    // The older frame still holds both of `big`'s pools.
    small.save_frame(&mut ring).unwrap();
    let mut fresh = Registry::new();
    fresh.restore_frame(&mut ring, 2).unwrap();
    assert_eq!(fresh.get::<Other>(b), Some(&Other(1)));
}

#[test]
fn a_restore_checks_the_types_of_the_frame_it_restores() {
    let mut one = Registry::new();
    one.register_clone::<Pos>();
    one.register_clone::<Other>();
    let mut two = Registry::new();
    two.register_clone::<Other>();
    two.register_clone::<Pos>();
    let e = one.spawn((Pos(1), Other(1)));
    two.spawn((Pos(2), Other(2)));
    let mut ring = StateRing::new(4);
    one.save_frame(&mut ring).unwrap();
    two.save_frame(&mut ring).unwrap();
    let refused = two.restore_frame(&mut ring, 1).unwrap_err();
    assert!(matches!(
        refused,
        StateError::OtherTypes { position: 0, .. }
    ));
    assert_eq!(ring.len(), 2, "a refused restore changes nothing");
    one.restore_frame(&mut ring, 1).unwrap();
    assert_eq!(one.get::<Pos>(e), Some(&Pos(1)));
    assert_eq!(ring.len(), 1);
}
