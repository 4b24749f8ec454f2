//! The `particles` scenario, for raw throughput: particles under gravity
//! and drag, bounced inside a box, a share of them respawned every tick
//! through commands.
//!
//! | system    | components and resources                              |
//! |-----------|-------------------------------------------------------|
//! | forces    | R rules; W Velocity (in parallel)                     |
//! | respawn   | R rules, world seed, Particle; C despawn, spawn       |
//! | bounce    | R rules; W Position, Velocity (in parallel)           |
//! | movement  | R Velocity; W Position (in parallel)                  |
//!
//! Waves: {forces, respawn}, {bounce}, {movement}. Bounce comes before
//! movement: it is registered first (the default policy), and it writes
//! `Velocity`, which movement reads, so the writer-first policy would
//! order them so too; it puts back in the box what the previous tick's
//! movement took out.

use ecs_engine::{Entity, Registry};
use scheduler::{Commands, Query, Random, RandomStream, Res, StatefulSystem, SystemParam, Tick};

use super::components::{Particle, Position, Velocity};
use super::draw::{self, DrawF32};
use super::scenario::Particles;
use ecs_runtime::{EngineBuilder, SystemHandle};

/// The scenario's rules, as a resource.
#[derive(Debug, Clone)]
pub(crate) struct ParticleRules {
    particles: Particles,
}

/// A particle drawn from `rng`: anywhere in the box, any direction.
fn fresh(rng: &mut RandomStream, p: &Particles) -> (Position, Velocity, Particle) {
    (
        Position {
            x: rng.range(0.0, p.width),
            y: rng.range(0.0, p.height),
        },
        Velocity {
            x: rng.range(-p.max_speed, p.max_speed),
            y: rng.range(-p.max_speed, p.max_speed),
        },
        Particle,
    )
}

/// Gravity and drag over one fixed step (everything that moves in this
/// scenario is a particle). Writes `Velocity`.
fn forces(tick: Tick, rules: Res<ParticleRules>, mut particles: Query<&mut Velocity>) {
    let dt = tick.step as f32;
    let p = rules.particles;
    let keep = (1.0 - p.drag * dt).max(0.0);
    particles.par_each(|v| {
        v.y += p.gravity * dt;
        v.x *= keep;
        v.y *= keep;
    });
}

/// Moves particles by their velocity. Reads `Velocity`; writes `Position`.
fn movement(tick: Tick, mut bodies: Query<(&mut Position, &Velocity)>) {
    let dt = tick.step as f32;
    bodies.par_each(|(p, v)| {
        p.x += v.x * dt;
        p.y += v.y * dt;
    });
}

/// Reflects particles off the walls, keeping `restitution` of the speed.
/// Writes `Position`, `Velocity`.
fn bounce(rules: Res<ParticleRules>, mut bodies: Query<(&mut Position, &mut Velocity)>) {
    let p = rules.particles;
    let e = p.restitution;
    bodies.par_each(|(pos, v)| {
        if pos.x < 0.0 {
            pos.x = -pos.x * e;
            v.x = -v.x * e;
        } else if pos.x > p.width {
            pos.x = p.width - (pos.x - p.width) * e;
            v.x = -v.x * e;
        }
        if pos.y < 0.0 {
            pos.y = -pos.y * e;
            v.y = -v.y * e;
        } else if pos.y > p.height {
            pos.y = p.height - (pos.y - p.height) * e;
            v.y = -v.y * e;
        }
        pos.x = pos.x.clamp(0.0, p.width);
        pos.y = pos.y.clamp(0.0, p.height);
    });
}

/// Replaces each particle, with probability `respawn_share` per tick
/// (one draw keyed by the particle, [`Random::entity_u64`]: a single
/// mix per particle and tick), by a fresh one (drawn from the particle's
/// [`Random`] stream). Reads `Particle` (the draw runs in
/// parallel, the chosen collected in dense order); despawns and spawns
/// through commands, all despawns first, so each kind is applied as one
/// batch.
#[derive(Debug, Default, Clone)]
pub(crate) struct Respawn {
    /// Particles spawned so far by this system.
    pub(crate) spawned: u64,
    /// Particles despawned so far.
    pub(crate) despawned: u64,
}

impl StatefulSystem for Respawn {
    type Params = (
        Res<'static, ParticleRules>,
        Random,
        Commands<'static>,
        Query<'static, (Entity, &'static Particle)>,
    );

    fn run(
        &mut self,
        (rules, random, mut commands, mut particles): <Self::Params as SystemParam>::Item<'_>,
    ) {
        let p = rules.particles;
        let threshold = (f64::from(p.respawn_share) * u64::MAX as f64) as u64;
        // `move`: the draw's inputs are copied into the closure, so the
        // walk keeps them in registers (captured by reference, they are
        // reloaded for every particle, as a push of a chosen one might
        // have changed them: about 1.5 times the cost per particle).
        let chosen = particles.par_filter_map(move |entity, _| {
            (random.entity_u64(entity) < threshold).then_some(entity)
        });
        for &entity in &chosen {
            commands.despawn(entity);
        }
        for &entity in &chosen {
            commands.spawn(fresh(&mut random.entity(entity), &p));
        }
        let chosen = chosen.len() as u64;
        self.spawned += chosen;
        self.despawned += chosen;
    }
}

/// Spawns the particles, inserts the rules, registers the four systems.
pub(crate) fn build(
    builder: &mut EngineBuilder,
    particles: &Particles,
    seed: u64,
    scale: u32,
) -> Result<SystemHandle<Respawn>, super::HarnessError> {
    let count = u64::from(particles.count) * u64::from(scale);
    if count > u64::from(u32::MAX - 1) {
        return Err(super::HarnessError::Option(format!(
            "{count} particles is more than a registry holds; lower --scale"
        )));
    }
    spawn_particles(builder.registry_mut(), particles, seed, count);
    builder.insert_resource(ParticleRules {
        particles: *particles,
    });
    builder.add_system(forces).named("forces");
    let respawn = builder
        .add_system(Respawn::default())
        .named("respawn")
        .handle();
    builder.add_system(bounce).named("bounce");
    builder.add_system(movement).named("movement");
    Ok(respawn)
}

/// The first `count` particles, before the first tick: particle `i` is
/// drawn from stream `i` of [`draw::SETUP`]'s draws (world set-up is no
/// system, so it takes its [`Random`] directly).
fn spawn_particles(registry: &mut Registry, particles: &Particles, seed: u64, count: u64) {
    let random = Random::new(seed, draw::SETUP, 0);
    registry.spawn_batch((0..count).map(|i| fresh(&mut random.stream(i), particles)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunConfig, Scenario, Simulation};

    /// A particle's bits, to sort and compare.
    fn bits(p: &Position, v: &Velocity) -> [u32; 4] {
        [p.x, p.y, v.x, v.y].map(f32::to_bits)
    }

    #[test]
    fn the_first_particles_and_the_respawns_are_drawn_from_random() {
        let mut config = RunConfig::new(Scenario::builtin("particles").unwrap());
        let p = config.scenario.particles.as_mut().unwrap();
        p.count = 2_000;
        p.respawn_share = 0.05;
        let p = *p;
        (config.threads, config.seed) = (2, 9);
        let mut simulation = Simulation::new(&config).unwrap();

        // Particle i (index i): stream i of the set-up draws.
        let registry = simulation.engine().registry();
        let mut first: Vec<Entity> = registry.entities().iter().collect();
        first.sort_unstable_by_key(|e| e.index());
        assert_eq!(first.len(), 2_000);
        for (i, &e) in first.iter().enumerate() {
            let (position, velocity, _) =
                fresh(&mut Random::new(9, draw::SETUP, 0).stream(i as u64), &p);
            assert_eq!(registry.get::<Position>(e), Some(&position));
            assert_eq!(registry.get::<Velocity>(e), Some(&velocity));
        }

        // Tick 0: a particle goes when its draw of `respawn`'s `Random`
        // (`entity_u64`) is below the share; its stream's draws place
        // its replacement, spawned at the end of wave 0 (after forces),
        // then moved by movement (bounce leaves it: it is in the box).
        simulation.tick().unwrap();
        let threshold = (f64::from(p.respawn_share) * u64::MAX as f64) as u64;
        let random = Random::new(9, "respawn", 0);
        let chosen: Vec<Entity> = first
            .iter()
            .copied()
            .filter(|&e| random.entity_u64(e) < threshold)
            .collect();
        // About 5% of 2,000.
        assert!((50..150).contains(&chosen.len()), "{}", chosen.len());
        assert_eq!(simulation.despawned(), chosen.len() as u64);
        let registry = simulation.engine().registry();
        for &e in &first {
            assert_eq!(registry.is_alive(e), !chosen.contains(&e), "{e}");
        }
        let dt = config.scenario.step() as f32;
        let mut drawn: Vec<[u32; 4]> = chosen
            .iter()
            .map(|&e| {
                let (mut position, velocity, _) = fresh(&mut random.entity(e), &p);
                position.x += velocity.x * dt;
                position.y += velocity.y * dt;
                bits(&position, &velocity)
            })
            .collect();
        let mut spawned: Vec<[u32; 4]> = registry
            .entities()
            .iter()
            .filter(|e| !first.contains(e))
            .map(|e| {
                let position = registry.get::<Position>(e).unwrap();
                bits(position, registry.get::<Velocity>(e).unwrap())
            })
            .collect();
        drawn.sort_unstable();
        spawned.sort_unstable();
        assert_eq!(spawned, drawn);
        simulation.finish().unwrap();
    }
}
