//! The small game the save/restore tests run (`tests/integration/rollback.rs`, and
//! `snapshot/tests/integration/engine.rs` through `#[path]`): movement in parallel,
//! spawns and despawns through commands, events read a tick later,
//! change and removal detection, a `Local`, a run condition with a
//! `Local`, a stateful system, a seeded random resource. Its types
//! implement serde's traits for the file snapshots.

use ecs_runtime::checksum::world_checksum;
use ecs_runtime::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pos(pub(crate) f64, pub(crate) f64);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Vel(pub(crate) f64, pub(crate) f64);
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Hp(pub(crate) i32);
/// The tick an entity was spawned in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Born(pub(crate) u64);

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Hit {
    pub(crate) target: Entity,
    pub(crate) damage: i32,
}

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) as a resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Stats {
    pub(crate) changed_hp: u64,
    pub(crate) added_pos: u64,
    pub(crate) removed_hp: u64,
    pub(crate) hits_read: u64,
    pub(crate) runs: u64,
    pub(crate) pulses: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Census {
    pub(crate) samples: Vec<usize>,
}

impl StatefulSystem for Census {
    type Params = Query<'static, &'static Pos>;
    fn run(&mut self, q: Query<'_, &Pos>) {
        self.samples.push(q.count());
    }
}

pub(crate) fn movement(mut q: Query<(&mut Pos, &Vel)>) {
    q.par_each(|(p, v)| {
        p.0 += v.0;
        p.1 += v.1;
    });
}

pub(crate) fn spawner(
    mut commands: Commands,
    mut rng: ResMut<Rng>,
    tick: Tick,
    all: Query<Entity>,
) {
    for _ in 0..3 {
        let (x, y) = (rng.unit() * 4.0, rng.unit() * 4.0);
        let e = commands.spawn((Pos(x, y), Vel(rng.unit(), rng.unit() - 0.5)));
        assert!(!all.contains(e), "a spawned handle names a live entity");
        commands.insert(e, Hp(3));
        commands.insert(e, Born(tick.number));
    }
}

pub(crate) fn shooter(q: Query<(Entity, &Pos)>, mut hits: EventWriter<Hit>) {
    for (e, p) in q.iter() {
        if p.0 > 5.0 {
            hits.send(Hit {
                target: e,
                damage: 1,
            });
        }
    }
}

pub(crate) fn wounds(hits: EventReader<Hit>, mut q: Query<&mut Hp>, mut stats: ResMut<Stats>) {
    for hit in hits.iter() {
        stats.hits_read += 1;
        if let Ok(hp) = q.get(hit.target) {
            hp.0 -= hit.damage;
        }
    }
}

pub(crate) fn reaper(q: Query<(Entity, &Hp)>, mut commands: Commands) {
    for (e, hp) in q.iter() {
        if hp.0 <= 0 {
            commands.despawn(e);
        }
    }
}

pub(crate) fn watcher(
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

pub(crate) fn pulse(mut stats: ResMut<Stats>, tick: Tick) {
    stats.pulses += tick.number;
}

/// `true` every third time it is asked, counting in its `Local`.
pub(crate) fn every_third(mut asked: Local<u64>, hp: Query<&Hp, Changed<Hp>>) -> bool {
    *asked += 1;
    asked.is_multiple_of(3) && hp.count() > 0
}

pub(crate) fn game(threads: usize) -> (Engine, SystemHandle<Census>) {
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

pub(crate) type Observed = (u64, Vec<Entity>, Stats, Census, u64);

pub(crate) fn observe(engine: &Engine, census: SystemHandle<Census>) -> Observed {
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
