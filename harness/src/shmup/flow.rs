//! The life cycle of entities: the wave director plans enemies, spawns
//! brings them in, cleanup finds what died or left the screen, despawn
//! removes it.

use std::collections::VecDeque;
use std::f32::consts::TAU;

use ecs_engine::Entity;
use scheduler::{Commands, Query, Res, ResMut, StatefulSystem, SystemParam, Tick};
use serde::{Deserialize, Serialize};

use super::Rules;
use crate::components::{
    Bounty, Collider, Damage, Enemy, EnemyGun, Faction, Health, Hits, Player, Position, SineWave,
    Velocity,
};
use crate::rng::Rng;

/// One enemy the director has planned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Planned {
    tick: u64,
    wave: u32,
    y: f32,
    speed: f32,
    /// Amplitude (px), frequency (Hz) and phase (rad) of a sine flier.
    sine: Option<(f32, f32, f32)>,
    /// Seconds before its first shot.
    first_shot: f32,
}

/// Enemies planned by the director, in tick order, and the number of
/// waves planned so far; a resource (kept here rather than in the
/// director's own state so that a snapshot holds it).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpawnQueue {
    planned: VecDeque<Planned>,
    waves: u32,
}

/// Entities to remove at the end of this tick; a resource.
#[derive(Debug, Default)]
pub(crate) struct Doomed(Vec<Entity>);

/// Brings in the planned enemies whose tick has come, at the right edge.
/// Reads the rules; writes the spawn queue; spawns through commands.
#[derive(Debug, Default)]
pub(crate) struct Spawns {
    /// Enemies spawned so far.
    pub(crate) spawned: u64,
}

impl StatefulSystem for Spawns {
    type Params = (
        Tick,
        Res<'static, Rules>,
        ResMut<'static, SpawnQueue>,
        Commands<'static>,
    );

    fn run(
        &mut self,
        (tick, rules, mut queue, mut commands): <Self::Params as SystemParam>::Item<'_>,
    ) {
        let enemies = rules.shmup.enemies;
        let x = rules.shmup.arena.width + enemies.radius;
        while let Some(plan) = queue
            .planned
            .front()
            .copied()
            .filter(|p| p.tick <= tick.number)
        {
            queue.planned.pop_front();
            let enemy = commands.spawn((
                Position { x, y: plan.y },
                Velocity {
                    x: -plan.speed,
                    y: 0.0,
                },
                Enemy { wave: plan.wave },
                Faction::Enemy,
                Collider {
                    radius: enemies.radius,
                },
                Health(enemies.health),
                Damage(enemies.contact_damage),
                Hits::default(),
                Bounty(enemies.bounty),
            ));
            if let Some((amplitude, frequency, phase)) = plan.sine {
                commands.insert(
                    enemy,
                    SineWave {
                        base_y: plan.y - amplitude * phase.sin(),
                        amplitude,
                        frequency,
                        phase,
                        start_tick: tick.number,
                    },
                );
            }
            if enemies.fire_interval > 0.0 {
                commands.insert(
                    enemy,
                    EnemyGun {
                        cooldown: plan.first_shot,
                    },
                );
            }
            self.spawned += 1;
        }
    }
}

/// The wave director: wave k starts `first_wave + k × wave_interval`
/// seconds in, its enemies `spawn_spacing` apart, each drawn from the seed
/// (height, speed, straight or sine). Plans each wave one tick ahead, so
/// spawns (which runs first) brings enemies in on their exact tick. Reads
/// the rules; writes the spawn queue.
#[derive(Debug, Default)]
pub(crate) struct Waves;

impl StatefulSystem for Waves {
    type Params = (Tick, Res<'static, Rules>, ResMut<'static, SpawnQueue>);

    fn run(&mut self, (tick, rules, mut queue): <Self::Params as SystemParam>::Item<'_>) {
        let e = rules.shmup.enemies;
        let step = tick.step;
        let ticks = |seconds: f64| (seconds / step).round() as u64;
        loop {
            let k = queue.waves;
            if e.max_waves != 0 && k >= e.max_waves {
                return;
            }
            let start = ticks(f64::from(e.first_wave) + f64::from(k) * f64::from(e.wave_interval));
            if start > tick.number + 1 {
                return;
            }
            let height = rules.shmup.arena.height;
            for i in 0..rules.per_wave {
                let mut rng = Rng::from_values(&[rules.seed, 0x3A7E, u64::from(k), u64::from(i)]);
                let y = height * rng.range(e.spawn_band[0], e.spawn_band[1]);
                let speed = rng.range(e.speed_min, e.speed_max);
                let sine = (rng.unit() < e.sine_share).then(|| {
                    let amplitude = rng.range(e.amplitude_min, e.amplitude_max);
                    let frequency = rng.range(e.frequency_min, e.frequency_max);
                    (amplitude, frequency, rng.range(0.0, TAU))
                });
                let first_shot = rng.range(0.0, e.fire_interval);
                queue.planned.push_back(Planned {
                    tick: start.saturating_add(ticks(f64::from(i) * f64::from(e.spawn_spacing))),
                    wave: k,
                    y,
                    speed,
                    sine,
                    first_shot,
                });
            }
            queue.planned.make_contiguous().sort_by_key(|p| p.tick);
            queue.waves += 1;
        }
    }
}

/// Lists what must go: enemies and missiles at 0 health or past the
/// screen's margin (ships stay, even out of lives, to keep their score).
/// Both walks run in parallel and list in dense order (despawn sorts the
/// list anyway). Reads `Health`, `Position`, `Player`; writes the doomed
/// list.
pub(crate) fn cleanup(
    rules: Res<Rules>,
    mut doomed: ResMut<Doomed>,
    mut dead: Query<&Health, ecs_engine::Without<Player>>,
    mut away: Query<&Position, ecs_engine::Without<Player>>,
) {
    let arena = rules.shmup.arena;
    let (x0, y0) = (-arena.margin, -arena.margin);
    let (x1, y1) = (arena.width + arena.margin, arena.height + arena.margin);
    dead.par_filter_map_into(&mut doomed.0, |entity, health| {
        (health.0 <= 0).then_some(entity)
    });
    away.par_filter_map_into(&mut doomed.0, |entity, p| {
        (!(x0..=x1).contains(&p.x) || !(y0..=y1).contains(&p.y)).then_some(entity)
    });
}

/// Despawns the doomed entities through commands, in handle order, once
/// each. Writes the doomed list.
#[derive(Debug, Default)]
pub(crate) struct Despawn {
    /// Entities despawned so far.
    pub(crate) despawned: u64,
}

impl StatefulSystem for Despawn {
    type Params = (ResMut<'static, Doomed>, Commands<'static>);

    fn run(&mut self, (mut doomed, mut commands): <Self::Params as SystemParam>::Item<'_>) {
        doomed.0.sort_unstable();
        doomed.0.dedup();
        for entity in doomed.0.drain(..) {
            commands.despawn(entity);
            self.despawned += 1;
        }
    }
}
