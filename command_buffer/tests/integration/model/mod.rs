//! Model-based test: random command sequences recorded into several
//! buffers (with different reserve policies, so real handles and
//! placeholders both occur), applied in order, leniently or strictly,
//! and compared after every apply with the same operations done on a plain
//! model: world contents, liveness of every handle ever handed out, report
//! counts per kind, the strict error, and the number of reserved slots.
//!
//! The sequences include despawn-then-insert, insert-then-despawn, double
//! despawn, spawn-then-despawn in one buffer, commands on stale handles
//! (despawned directly, by another buffer, or from an earlier apply, with
//! their slots reused), clear, drop and release. A run-time component `R`
//! (`insert_raw` / `remove_by_id`) is modelled like the typed ones, and
//! its destructor count checks that every raw value is dropped exactly
//! once: applied, skipped, cleared or left in a dropped buffer.

mod harness;

use command_buffer::ReservePolicy;
use proptest::prelude::*;

use harness::Harness;

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Res(u32);
#[derive(Debug, Default, PartialEq)]
struct Log(Vec<u32>);

const BUFFERS: usize = 3;

fn policy(buffer: usize) -> ReservePolicy {
    match buffer {
        0 => ReservePolicy::default(),
        1 => ReservePolicy {
            min: 1,
            per_spawn: 1,
            max: 2,
        },
        _ => ReservePolicy::NONE,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Spawn {
        buf: usize,
        a: Option<u32>,
        b: Option<u32>,
    },
    Despawn {
        buf: usize,
        target: usize,
    },
    InsertA {
        buf: usize,
        target: usize,
        value: u32,
    },
    InsertB {
        buf: usize,
        target: usize,
        value: u32,
    },
    InsertBundle {
        buf: usize,
        target: usize,
        value: u32,
    },
    RemoveA {
        buf: usize,
        target: usize,
    },
    RemoveB {
        buf: usize,
        target: usize,
    },
    /// `insert_raw` of the run-time component `R`.
    InsertR {
        buf: usize,
        target: usize,
        value: u32,
    },
    /// `remove_by_id` of `R`.
    RemoveR {
        buf: usize,
        target: usize,
    },
    InsertRes {
        buf: usize,
        value: u32,
    },
    RemoveRes {
        buf: usize,
    },
    Custom {
        buf: usize,
        tag: u32,
    },
    Clear {
        buf: usize,
    },
    Replace {
        buf: usize,
    },
    Reserve {
        buf: usize,
        count: usize,
    },
    Release {
        buf: usize,
    },
    DirectSpawn {
        a: u32,
    },
    DirectDespawn {
        target: usize,
    },
    Apply {
        reversed: bool,
        strict: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let buf = 0..BUFFERS;
    let value = 0..100_u32;
    let target = any::<usize>();
    prop_oneof![
        6 => (buf.clone(), proptest::option::of(value.clone()), proptest::option::of(value.clone()))
            .prop_map(|(buf, a, b)| Op::Spawn { buf, a, b }),
        4 => (buf.clone(), target).prop_map(|(buf, target)| Op::Despawn { buf, target }),
        4 => (buf.clone(), target, value.clone())
            .prop_map(|(buf, target, value)| Op::InsertA { buf, target, value }),
        2 => (buf.clone(), target, value.clone())
            .prop_map(|(buf, target, value)| Op::InsertB { buf, target, value }),
        2 => (buf.clone(), target, value.clone())
            .prop_map(|(buf, target, value)| Op::InsertBundle { buf, target, value }),
        3 => (buf.clone(), target).prop_map(|(buf, target)| Op::RemoveA { buf, target }),
        1 => (buf.clone(), target).prop_map(|(buf, target)| Op::RemoveB { buf, target }),
        3 => (buf.clone(), target, value.clone())
            .prop_map(|(buf, target, value)| Op::InsertR { buf, target, value }),
        1 => (buf.clone(), target).prop_map(|(buf, target)| Op::RemoveR { buf, target }),
        1 => (buf.clone(), value.clone()).prop_map(|(buf, value)| Op::InsertRes { buf, value }),
        1 => buf.clone().prop_map(|buf| Op::RemoveRes { buf }),
        1 => (buf.clone(), value.clone()).prop_map(|(buf, tag)| Op::Custom { buf, tag }),
        1 => buf.clone().prop_map(|buf| Op::Clear { buf }),
        1 => buf.clone().prop_map(|buf| Op::Replace { buf }),
        1 => (buf.clone(), 0..6_usize).prop_map(|(buf, count)| Op::Reserve { buf, count }),
        1 => buf.prop_map(|buf| Op::Release { buf }),
        1 => value.prop_map(|a| Op::DirectSpawn { a }),
        2 => target.prop_map(|target| Op::DirectDespawn { target }),
        3 => (any::<bool>(), prop::bool::weighted(0.3))
            .prop_map(|(reversed, strict)| Op::Apply { reversed, strict }),
    ]
}

proptest! {
    // Fewer cases under Miri, which interprets every step.
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn buffers_match_the_model(
        ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 25 } else { 80 })
    ) {
        let mut harness = Harness::new();
        for op in &ops {
            harness.record(op);
            harness.check();
            if matches!(op, Op::Apply { strict: false, .. }) {
                harness.check_reserved_exactly();
            }
        }
        harness.record(&Op::Apply { reversed: false, strict: false });
        harness.check();
        harness.check_reserved_exactly();
        for buffer in &mut harness.buffers {
            buffer.release(&mut harness.registry);
        }
        assert_eq!(harness.registry.entities().reserved(), 0);
        harness.check_all_raw_values_dropped();
    }
}
