//! `Snapshots::save_engine` / `load_engine`: a small game (movement in
//! parallel, spawns and despawns through commands, events sent in one
//! tick and read in the next, change detection, a `Local`, a run
//! condition with a `Local`, a stateful system) saved to a file mid-run
//! and loaded into a fresh engine gives the uninterrupted run's world,
//! entity handles and counters, on 1 and 8 threads, in both formats; a
//! state that cannot be saved is refused by system name; a failed load
//! leaves the engine as it was.

use ecs_runtime::checksum::world_checksum;
use ecs_runtime::command_buffer::CommandKind;
use ecs_runtime::prelude::*;
use ecs_snapshot::{EntryKind, Format, SnapshotError, Snapshots};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Pos(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Vel(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Hp(i32);
/// The tick an entity was spawned in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Born(u64);

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Hit {
    target: Entity,
    damage: i32,
}

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) as a resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Stats {
    changed_hp: u64,
    added_pos: u64,
    removed_hp: u64,
    hits_read: u64,
    runs: u64,
    pulses: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Census {
    samples: Vec<usize>,
}

impl StatefulSystem for Census {
    type Params = Query<'static, &'static Pos>;
    fn run(&mut self, q: Query<'_, &Pos>) {
        self.samples.push(q.count());
    }
}

fn movement(mut q: Query<(&mut Pos, &Vel)>) {
    q.par_each(|(p, v)| {
        p.0 += v.0;
        p.1 += v.1;
    });
}

fn spawner(mut commands: Commands, mut rng: ResMut<Rng>, tick: Tick, all: Query<Entity>) {
    for _ in 0..3 {
        let (x, y) = (rng.unit() * 4.0, rng.unit() * 4.0);
        let e = commands.spawn((Pos(x, y), Vel(rng.unit(), rng.unit() - 0.5)));
        assert!(!all.contains(e), "a spawned handle names a live entity");
        commands.insert(e, Hp(3));
        commands.insert(e, Born(tick.number));
    }
}

fn shooter(q: Query<(Entity, &Pos)>, mut hits: EventWriter<Hit>) {
    for (e, p) in q.iter() {
        if p.0 > 5.0 {
            hits.send(Hit {
                target: e,
                damage: 1,
            });
        }
    }
}

fn wounds(hits: EventReader<Hit>, mut q: Query<&mut Hp>, mut stats: ResMut<Stats>) {
    for hit in hits.iter() {
        stats.hits_read += 1;
        if let Ok(hp) = q.get(hit.target) {
            hp.0 -= hit.damage;
        }
    }
}

fn reaper(q: Query<(Entity, &Hp)>, mut commands: Commands) {
    for (e, hp) in q.iter() {
        if hp.0 <= 0 {
            commands.despawn(e);
        }
    }
}

fn watcher(
    changed: Query<Entity, Changed<Hp>>,
    added: Query<Entity, Added<Pos>>,
    removed: RemovedComponents<Hp>,
    mut stats: ResMut<Stats>,
    mut runs: Local<u64>,
) {
    *runs += 1;
    stats.changed_hp += changed.count() as u64;
    stats.added_pos += added.count() as u64;
    stats.removed_hp += removed.len() as u64;
    stats.runs = *runs;
}

fn pulse(mut stats: ResMut<Stats>, tick: Tick) {
    stats.pulses += tick.number;
}

/// `true` every third time it is asked, counting in its `Local`.
fn every_third(mut asked: Local<u64>, hp: Query<&Hp, Changed<Hp>>) -> bool {
    *asked += 1;
    asked.is_multiple_of(3) && hp.count() > 0
}

fn game(threads: usize) -> (Engine, SystemHandle<Census>) {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.insert_resource(Rng(7));
    builder.insert_resource(Stats::default());
    builder.add_system(movement);
    builder.add_system(spawner);
    builder.add_system(shooter);
    builder.add_system(wounds);
    builder.add_system(reaper);
    builder.add_system(watcher);
    let census = builder.add_system(Census::default()).handle();
    builder.add_system(pulse).run_if(every_third);
    (builder.build().unwrap(), census)
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Pos>("Pos")
        .and_then(|s| s.register::<Vel>("Vel"))
        .and_then(|s| s.register::<Hp>("Hp"))
        .and_then(|s| s.register::<Born>("Born"))
        .and_then(|s| s.register_resource::<Rng>("Rng"))
        .and_then(|s| s.register_resource::<Stats>("Stats"))
        .and_then(|s| s.register_events::<Hit>("Hit"))
        .and_then(|s| s.register_state::<u64>("u64"))
        .and_then(|s| s.register_state::<Census>("Census"))
        .unwrap();
    s
}

type Observed = (u64, Vec<Entity>, Stats, Census, u64);

fn observe(engine: &Engine, census: SystemHandle<Census>) -> Observed {
    let registry = engine.registry();
    let checksum = world_checksum(registry, |r, e, h| {
        h.optional(r.get::<Pos>(e), |h, p| {
            h.u64(p.0.to_bits());
            h.u64(p.1.to_bits());
        });
        h.optional(r.get::<Hp>(e), |h, hp| h.i32(hp.0));
        h.optional(r.get::<Born>(e), |h, b| h.u64(b.0));
    });
    let mut handles: Vec<Entity> = registry.entities().iter().collect();
    handles.sort();
    (
        checksum,
        handles,
        registry.resource::<Stats>().unwrap().clone(),
        engine.state(census).unwrap().clone(),
        engine.ticks(),
    )
}

const TICKS: u64 = 24;
const SAVE_AT: u64 = 9;

/// The run to `TICKS`, with an event sent from outside after `SAVE_AT`
/// ticks (so one is in flight at the save).
fn uninterrupted(threads: usize) -> Observed {
    let (mut engine, census) = game(threads);
    engine.run(SAVE_AT).unwrap();
    send_outside(&mut engine);
    engine.run(TICKS - SAVE_AT).unwrap();
    observe(&engine, census)
}

fn send_outside(engine: &mut Engine) {
    let target = engine
        .registry()
        .view::<(Entity, &Hp)>()
        .iter()
        .next()
        .unwrap()
        .0;
    engine.send_event(Hit { target, damage: 2 });
}

#[test]
fn a_file_loaded_into_a_fresh_engine_gives_the_uninterrupted_run() {
    let reference = uninterrupted(1);
    let stats = &reference.2;
    assert!(
        stats.changed_hp > 0
            && stats.added_pos > 0
            && stats.removed_hp > 0
            && stats.hits_read > 0
            && stats.pulses > 2,
        "{stats:?}"
    );
    let snapshots = snapshots();
    for threads in [1, 8] {
        assert_eq!(uninterrupted(threads), reference, "{threads} threads");
        for format in [Format::Json, Format::Postcard] {
            let (mut engine, _) = game(threads);
            engine.run(SAVE_AT).unwrap();
            send_outside(&mut engine);
            let bytes = snapshots.save_engine(&engine, format).unwrap();
            drop(engine);
            let (mut fresh, census) = game(threads);
            snapshots.load_engine(&mut fresh, &bytes, format).unwrap();
            assert_eq!(fresh.ticks(), SAVE_AT);
            for _ in SAVE_AT..TICKS {
                fresh.tick().unwrap();
                let report = fresh.command_report();
                assert_eq!(report.skipped(CommandKind::Spawn), 0, "{report:?}");
                assert_eq!(report.skipped(CommandKind::Insert), 0, "{report:?}");
            }
            assert_eq!(
                observe(&fresh, census),
                reference,
                "{threads} threads, {format:?}"
            );
        }
    }
}

#[test]
fn a_load_into_the_running_engine_rewinds_it() {
    let snapshots = snapshots();
    let (mut engine, census) = game(2);
    engine.run(SAVE_AT).unwrap();
    send_outside(&mut engine);
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    engine.run(7).unwrap();
    snapshots
        .load_engine(&mut engine, &bytes, Format::Postcard)
        .unwrap();
    engine.run(TICKS - SAVE_AT).unwrap();
    assert_eq!(observe(&engine, census), uninterrupted(2));
}

#[test]
fn a_load_makes_no_spurious_added_or_changed() {
    let snapshots = snapshots();
    let (mut engine, _) = game(2);
    engine.run(SAVE_AT).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Json).unwrap();
    engine.run(1).unwrap();
    let after_one = engine.registry().resource::<Stats>().unwrap().clone();
    let (mut fresh, _) = game(2);
    snapshots
        .load_engine(&mut fresh, &bytes, Format::Json)
        .unwrap();
    fresh.run(1).unwrap();
    assert_eq!(fresh.registry().resource::<Stats>().unwrap(), &after_one);
}

#[test]
fn an_unsaved_state_is_refused_by_system_name() {
    let mut builder = Engine::builder();
    builder.add_system(|mut n: Local<Vec<u8>>| n.push(1));
    builder.add_system(Census::default());
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    let mut snapshots = Snapshots::new();
    let error = snapshots.save_engine(&engine, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnsavedState { state, .. } if state.contains("Vec<u8>")),
        "{error}"
    );
    assert!(error.to_string().contains("register_state"), "{error}");
    snapshots.register_state::<Vec<u8>>("bytes").unwrap();
    // The stateful system's own value is next.
    let error = snapshots.save_engine(&engine, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnsavedState { system, .. } if system.contains("Census")),
        "{error}"
    );
    snapshots.register_state::<Census>("Census").unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    // A loader without the type refuses, naming it.
    let mut other = Snapshots::new();
    other.register_state::<Census>("Census").unwrap();
    let error = other
        .load_engine(&mut engine, &bytes, Format::Postcard)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnknownName { kind: EntryKind::State, name, .. } if name.contains("bytes")),
        "{error}"
    );
}

#[test]
fn a_failed_load_leaves_the_engine_as_it_was() {
    let snapshots = snapshots();
    let (mut engine, census) = game(2);
    engine.run(SAVE_AT).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    engine.run(3).unwrap();
    let before = observe(&engine, census);

    // A damaged file.
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x10;
    assert!(
        snapshots
            .load_engine(&mut engine, &damaged, Format::Postcard)
            .is_err()
    );
    // An engine with other systems.
    let mut builder = Engine::builder();
    builder.add_system(movement);
    let mut other = builder.build().unwrap();
    let error = snapshots
        .load_engine(&mut other, &bytes, Format::Postcard)
        .unwrap_err();
    assert!(matches!(error, SnapshotError::Systems { .. }), "{error}");
    assert_eq!(other.registry().entities().len(), 0);
    // A registry snapshot is not an engine's.
    let registry_only = snapshots.save(engine.registry(), Format::Json).unwrap();
    let error = snapshots
        .load_engine(&mut engine, &registry_only, Format::Json)
        .unwrap_err();
    assert!(matches!(error, SnapshotError::NotAnEngine), "{error}");

    assert_eq!(observe(&engine, census), before);
    engine.run(1).unwrap();
}
