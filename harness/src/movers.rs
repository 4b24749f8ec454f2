//! The `movers` scenario, the C API's reference world: entities moving in
//! straight lines, despawned once they leave a band and replaced through
//! commands. Nothing is random (the seed is unused): every value comes
//! from an entity's index or the tick number, so `examples/c/movers.c`
//! and `movers.cpp` rebuild the same world through the C API and must
//! reach the same checksum, bit for bit. All arithmetic is in `f32`,
//! integers converted with `as f32`, never a fused multiply-add.
//!
//! | system    | components and resources                              |
//! |-----------|-------------------------------------------------------|
//! | movement  | R Velocity; W Position (in parallel)                  |
//! | spawner   | R rules, Position; C despawn, spawn                   |
//!
//! Waves: {movement}, {spawner}: movement writes `Position`, which the
//! spawner reads, so the writer runs first.
//!
//! The checksum covers `Position` then `Velocity` only (the C API's
//! `ecs_world_checksum` with those two ids gives the same value).

use ecs_engine::{Entity, Registry};
use scheduler::{Commands, Query, Res, StatefulSystem, SystemParam, Tick};

use super::checksum::{Fnv1a, component};
use super::components::{Position, Velocity};
use super::scenario::Movers;
use ecs_runtime::{EngineBuilder, SystemHandle};

/// The scenario's rules, as a resource, with `--scale` applied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MoverRules {
    spawn_per_tick: u32,
    speed: f32,
    min_x: f32,
    max_x: f32,
}

/// The initial entity number `i`.
fn initial(i: u32, speed: f32) -> (Position, Velocity) {
    (
        Position {
            x: (i % 100) as f32,
            y: (i / 100) as f32,
        },
        Velocity {
            x: ((i % 7) as f32 - 3.0) * speed,
            y: ((i % 5) as f32 - 2.0) * speed,
        },
    )
}

/// The entity number `k` spawned at tick `t`.
fn spawned(t: u64, k: u32, speed: f32) -> (Position, Velocity) {
    let k64 = u64::from(k);
    (
        Position {
            x: (k % 100) as f32 + 0.5,
            y: (t % 50) as f32,
        },
        Velocity {
            x: (((t + k64) % 7) as f32 - 3.0) * speed,
            y: (((3 * t + k64) % 5) as f32 - 2.0) * speed,
        },
    )
}

/// Moves every entity by its velocity over the fixed step. Reads
/// `Velocity`; writes `Position`.
fn movement(tick: Tick, mut bodies: Query<(&mut Position, &Velocity)>) {
    let dt = tick.step as f32;
    bodies.par_each(|(p, v)| {
        p.x += v.x * dt;
        p.y += v.y * dt;
    });
}

/// Despawns the entities outside `[min_x, max_x]`, in the view's order,
/// then spawns `spawn_per_tick` new ones. Reads `Position`; despawns and
/// spawns through commands.
#[derive(Debug, Default, Clone)]
pub(crate) struct Spawner {
    /// Entities spawned so far by this system.
    pub(crate) spawned: u64,
    /// Entities despawned so far.
    pub(crate) despawned: u64,
}

impl StatefulSystem for Spawner {
    type Params = (
        Tick,
        Res<'static, MoverRules>,
        Commands<'static>,
        Query<'static, (Entity, &'static Position)>,
    );

    fn run(
        &mut self,
        (tick, rules, mut commands, positions): <Self::Params as SystemParam>::Item<'_>,
    ) {
        let rules = *rules;
        let mut gone = 0;
        positions.each(|(entity, p)| {
            if p.x < rules.min_x || p.x > rules.max_x {
                commands.despawn(entity);
                gone += 1;
            }
        });
        for k in 0..rules.spawn_per_tick {
            commands.spawn(spawned(tick.number, k, rules.speed));
        }
        self.despawned += gone;
        self.spawned += u64::from(rules.spawn_per_tick);
    }
}

/// Spawns the initial entities, inserts the rules, registers the two
/// systems.
pub(crate) fn build(
    builder: &mut EngineBuilder,
    movers: &Movers,
    scale: u32,
) -> Result<SystemHandle<Spawner>, super::HarnessError> {
    let too_many = |what: &str, n: u64| {
        super::HarnessError::Option(format!(
            "{n} {what} is more than a registry holds; lower --scale"
        ))
    };
    let count = u64::from(movers.count) * u64::from(scale);
    let count = u32::try_from(count)
        .ok()
        .filter(|&n| n < u32::MAX)
        .ok_or_else(|| too_many("movers", count))?;
    let per_tick = u64::from(movers.spawn_per_tick) * u64::from(scale);
    let spawn_per_tick = u32::try_from(per_tick)
        .ok()
        .filter(|&n| n < u32::MAX)
        .ok_or_else(|| too_many("spawns per tick", per_tick))?;
    spawn_movers(builder.registry_mut(), count, movers.speed);
    builder.insert_resource(MoverRules {
        spawn_per_tick,
        speed: movers.speed,
        min_x: movers.min_x,
        max_x: movers.max_x,
    });
    builder.add_system(movement).named("movement");
    let spawner = builder
        .add_system(Spawner::default())
        .named("spawner")
        .handle();
    Ok(spawner)
}

/// Entity `i` of `0..count`, spawned in order (the C examples spawn them
/// one by one in the same order, so the handles match).
fn spawn_movers(registry: &mut Registry, count: u32, speed: f32) {
    for i in 0..count {
        registry.spawn(initial(i, speed));
    }
}

/// Feeds an entity's `Position` then `Velocity` into `h`: the checksum of
/// this world, the same as the C API's `ecs_world_checksum` over those two
/// ids.
pub(crate) fn hash_entity(registry: &Registry, entity: Entity, h: &mut Fnv1a) {
    component::<Position>(registry, entity, h);
    component::<Velocity>(registry, entity, h);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_follow_the_scenario_file() {
        let (p, v) = initial(1234, 20.0);
        assert_eq!((p.x, p.y), (34.0, 12.0));
        // 1234 % 7 = 2, 1234 % 5 = 4.
        assert_eq!((v.x, v.y), (-20.0, 40.0));
        let (p, v) = spawned(53, 102, 20.0);
        assert_eq!((p.x, p.y), (2.5, 3.0));
        // (53 + 102) % 7 = 1, (159 + 102) % 5 = 1.
        assert_eq!((v.x, v.y), (-40.0, -20.0));
    }
}
