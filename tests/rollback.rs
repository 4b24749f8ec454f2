//! `Engine::save_state` / `restore_state`: a small game (movement in
//! parallel, spawns and despawns through commands, events read a tick
//! later, change detection, a `Local`, a stateful system, a seeded random
//! resource) restored mid-run gives the uninterrupted run's world, entity
//! handles and counters, on 1 and 8 threads, in the same engine and in a
//! fresh one; a spawn after a restore never names an existing entity; a
//! system whose state cannot be saved is refused by name.

use ecs_runtime::checksum::world_checksum;
use ecs_runtime::command_buffer::CommandKind;
use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::SystemStateError;
use ecs_runtime::{EngineState, EngineStateError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(i32);
/// The tick an entity was spawned in.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Born(u64);

#[derive(Debug, Clone, Copy)]
struct Hit {
    target: Entity,
    damage: i32,
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): a seeded stream as a resource.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What the watcher saw: changes, additions, hits, its own run count.
#[derive(Debug, Clone, Default, PartialEq)]
struct Stats {
    changed_hp: u64,
    added_pos: u64,
    runs: u64,
    /// The tick numbers `pulse` ran in, summed: a run condition with a
    /// `Local` lets it through every third tick.
    pulses: u64,
}

/// A stateful system whose state is saved (its type registered).
#[derive(Debug, Clone, Default, PartialEq)]
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

fn wounds(hits: EventReader<Hit>, mut q: Query<&mut Hp>) {
    for hit in hits.iter() {
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
    mut stats: ResMut<Stats>,
    mut runs: Local<u64>,
) {
    *runs += 1;
    stats.changed_hp += changed.count() as u64;
    stats.added_pos += added.count() as u64;
    stats.runs = *runs;
}

/// The game on `threads` threads, with the census's handle.
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
    let mut engine = builder.build().unwrap();
    engine
        .register_clone::<Pos>()
        .register_clone::<Vel>()
        .register_clone::<Hp>()
        .register_clone::<Born>()
        .register_resource_clone::<Rng>()
        .register_resource_clone::<Stats>()
        .register_resource_clone::<Events<Hit>>()
        .register_state_clone::<u64>()
        .register_state_clone::<Census>();
    (engine, census)
}

/// The world's checksum, its sorted handles, the watcher's stats and the
/// census.
fn observe(engine: &Engine, census: SystemHandle<Census>) -> (u64, Vec<Entity>, Stats, Census) {
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
    let stats = registry.resource::<Stats>().unwrap().clone();
    (
        checksum,
        handles,
        stats,
        engine.state(census).unwrap().clone(),
    )
}

const TICKS: u64 = 24;
const SAVE_AT: u64 = 9;

fn uninterrupted(threads: usize) -> (u64, Vec<Entity>, Stats, Census) {
    let (mut engine, census) = game(threads);
    engine.run(TICKS).unwrap();
    observe(&engine, census)
}

#[test]
fn restore_mid_run_gives_the_uninterrupted_run_on_1_and_8_threads() {
    let reference = uninterrupted(1);
    let stats = &reference.2;
    assert!(
        stats.changed_hp > 0 && stats.added_pos > 0 && stats.pulses > 2,
        "{stats:?}"
    );
    assert!(reference.1.len() > 20);
    for threads in [1, 8] {
        assert_eq!(
            uninterrupted(threads),
            reference,
            "{threads} threads, no restore"
        );

        // Save, run on, restore into the same engine, run to the end.
        let (mut engine, census) = game(threads);
        engine.run(SAVE_AT).unwrap();
        let state: EngineState = engine.save_state().unwrap();
        assert_eq!(state.ticks(), SAVE_AT);
        engine.run(7).unwrap();
        engine.restore_state(&state).unwrap();
        assert_eq!(engine.ticks(), SAVE_AT);
        engine.run(TICKS - SAVE_AT).unwrap();
        assert_eq!(
            observe(&engine, census),
            reference,
            "{threads} threads, same engine"
        );

        // Restore into a fresh engine built the same way.
        let (mut fresh, census) = game(threads);
        fresh.restore_state(&state).unwrap();
        fresh.run(TICKS - SAVE_AT).unwrap();
        assert_eq!(
            observe(&fresh, census),
            reference,
            "{threads} threads, fresh engine"
        );
    }
}

#[test]
fn a_restore_makes_no_spurious_added_or_changed() {
    let (mut engine, _) = game(2);
    engine.run(SAVE_AT).unwrap();
    let state = engine.save_state().unwrap();
    engine.run(1).unwrap();
    let after_one = engine.registry().resource::<Stats>().unwrap().clone();
    engine.run(5).unwrap();
    engine.restore_state(&state).unwrap();
    engine.run(1).unwrap();
    // One tick after the restore sees what one tick after the save saw:
    // not the whole restored population as added or changed.
    assert_eq!(engine.registry().resource::<Stats>().unwrap(), &after_one);
}

#[test]
fn spawns_after_a_restore_name_new_entities_only() {
    // `spawner` asserts each handle it gets is not a live entity; here the
    // entities it spawned carry their birth tick, so a misapplied insert
    // (onto an entity of the restored world) would show as a wrong tick.
    let (mut engine, _) = game(2);
    engine.run(4).unwrap();
    let state = engine.save_state().unwrap();
    engine.run(6).unwrap();
    for _ in 0..3 {
        engine.restore_state(&state).unwrap();
        for _ in 0..3 {
            engine.tick().unwrap();
            let report = engine.command_report();
            assert_eq!(report.skipped(CommandKind::Spawn), 0, "{report:?}");
            assert_eq!(report.skipped(CommandKind::Insert), 0, "{report:?}");
        }
        let registry = engine.registry();
        let born: Vec<u64> = registry.view::<&Born>().iter().map(|b| b.0).collect();
        assert!(born.iter().all(|&t| t < 7), "{born:?}");
        for t in 4..7 {
            let spawned = born.iter().filter(|&&b| b == t).count();
            assert!(spawned <= 3, "tick {t}: {spawned} entities born");
        }
    }
}

#[test]
fn unsaved_state_is_refused_by_system_name() {
    let mut builder = Engine::builder();
    builder.add_system(|mut n: Local<Vec<u8>>| n.push(1));
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    let error = engine.save_state().unwrap_err();
    assert!(
        matches!(&error, EngineStateError::Systems(SystemStateError::NotClonable { state, .. })
            if state.contains("Vec<u8>")),
        "{error}"
    );
    engine.register_state_clone::<Vec<u8>>();
    let state = engine.save_state().unwrap();
    assert!(
        state
            .unsaved_resources()
            .iter()
            .all(|name| !name.contains("Tick"))
    );

    let counter = 5u32;
    let mut builder = Engine::builder();
    builder.add_system(move |_: Query<&Pos>| {
        std::hint::black_box(counter);
    });
    let mut engine = builder.build().unwrap();
    engine.register_clone::<Pos>();
    let error = engine.save_state().unwrap_err();
    assert!(
        matches!(
            error,
            EngineStateError::Systems(SystemStateError::NotClonable { .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("closure"), "{error}");
}

#[test]
fn a_restore_into_a_fresh_engine_does_not_rerun_its_startup_systems() {
    let build = || {
        let mut builder = Engine::builder();
        builder.add_startup_system(|mut commands: Commands| {
            commands.spawn((Born(0),));
        });
        builder.add_system(|q: Query<&Born>| assert!(q.count() <= 1));
        let mut engine = builder.build().unwrap();
        engine.register_clone::<Born>();
        engine
    };
    let mut engine = build();
    engine.run(2).unwrap();
    let state = engine.save_state().unwrap();
    let mut fresh = build();
    fresh.restore_state(&state).unwrap();
    fresh.run(2).unwrap();
    assert_eq!(fresh.registry().view::<&Born>().count(), 1);
}
