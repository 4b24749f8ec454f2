//! The life cycle of entities: the wave director plans enemies, spawns
//! brings them in, cleanup finds what died or left the screen, despawn
//! removes it.

use std::f32::consts::TAU;

use super::Rules;
use super::queue::{Planned, SpawnQueue};
use crate::checksum::Feed;
use crate::components::{
    Bounty, Collider, Damage, Enemy, EnemyGun, Faction, Health, Hits, Player, Position, SineWave,
    Velocity,
};
use crate::draw::DrawF32;
use crate::scenario::Enemies;
use ecs_engine::Entity;
use scheduler::{Commands, Query, Random, Res, ResMut, StatefulSystem, SystemParam, Tick};

/// Entities to remove at the end of this tick; a resource.
#[derive(Debug, Default, Clone)]
pub(crate) struct Doomed(Vec<Entity>);

impl Doomed {
    /// Feeds the entities listed, in list order, into `h` (empty between
    /// ticks: despawn drains the list).
    pub(crate) fn feed(&self, h: &mut impl Feed) {
        h.u64(self.0.len() as u64);
        for entity in &self.0 {
            h.u64(entity.to_bits());
        }
    }
}

/// Brings in the planned enemies whose tick has come, at the right edge.
/// Reads the rules; writes the spawn queue; spawns through commands.
#[derive(Debug, Default, Clone)]
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
            .planned()
            .first()
            .copied()
            .filter(|p| p.tick <= tick.number)
        {
            queue.pop_front();
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

/// The tick wave `k` starts on: `first_wave + k × wave_interval` seconds,
/// rounded to the nearest tick of `step` seconds (saturating).
pub(crate) fn wave_start(e: &Enemies, step: f64, k: u32) -> u64 {
    let seconds = f64::from(e.first_wave) + f64::from(k) * f64::from(e.wave_interval);
    (seconds / step).round() as u64
}

/// The waves the director has planned once tick `t` has run (it plans
/// each wave on the tick before its start): those starting by tick
/// `t + 1`, at most `max_waves`; before any tick (`ran` false), none.
pub(crate) fn waves_planned(e: &Enemies, step: f64, t: u64, ran: bool) -> u32 {
    if !ran {
        return 0;
    }
    let limit = if e.max_waves == 0 {
        u32::MAX
    } else {
        e.max_waves
    };
    // Starts grow with k: the count is the first k starting later.
    let (mut low, mut high) = (0u32, limit);
    while low < high {
        let mid = low + (high - low) / 2;
        if wave_start(e, step, mid) <= t.saturating_add(1) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// The wave director: wave k starts `first_wave + k × wave_interval`
/// seconds in, its enemies `spawn_spacing` apart, enemy i of it drawn
/// (height, speed, straight or sine) from stream `k << 32 | i` of the
/// [`Random`] of the tick that plans the wave. Plans each wave one tick
/// ahead, so spawns (which runs first) brings enemies in on their exact
/// tick. Reads the rules; writes the spawn queue.
///
/// The queue grows by a wave at a time: when the memory for one is not
/// there, the director plans nothing more and records the tick
/// ([`out_of_memory`](Self::out_of_memory)), which the harness reports as
/// an error instead of aborting.
#[derive(Debug, Default, Clone)]
pub(crate) struct Waves {
    /// The tick on which a wave's memory could not be had, and its bytes.
    pub(crate) out_of_memory: Option<(u64, usize)>,
}

impl StatefulSystem for Waves {
    type Params = (
        Tick,
        Random,
        Res<'static, Rules>,
        ResMut<'static, SpawnQueue>,
    );

    fn run(&mut self, (tick, random, rules, mut queue): <Self::Params as SystemParam>::Item<'_>) {
        let e = rules.shmup.enemies;
        let step = tick.step;
        let ticks = |seconds: f64| (seconds / step).round() as u64;
        while self.out_of_memory.is_none() {
            let k = queue.waves();
            if (e.max_waves != 0 && k >= e.max_waves) || k == u32::MAX {
                return;
            }
            let start = wave_start(&e, step, k);
            if start > tick.number.saturating_add(1) {
                return;
            }
            let height = rules.shmup.arena.height;
            let enemies = (0..rules.per_wave).map(|i| {
                let mut rng = random.stream(u64::from(k) << 32 | u64::from(i));
                let y = height * rng.range(e.spawn_band[0], e.spawn_band[1]);
                let speed = rng.range(e.speed_min, e.speed_max);
                let sine = (rng.unit() < e.sine_share).then(|| {
                    let amplitude = rng.range(e.amplitude_min, e.amplitude_max);
                    let frequency = rng.range(e.frequency_min, e.frequency_max);
                    (amplitude, frequency, rng.range(0.0, TAU))
                });
                let first_shot = rng.range(0.0, e.fire_interval);
                Planned {
                    tick: start.saturating_add(ticks(f64::from(i) * f64::from(e.spawn_spacing))),
                    wave: k,
                    y,
                    speed,
                    sine,
                    first_shot,
                }
            });
            if let Err(bytes) = queue.plan_wave(enemies) {
                self.out_of_memory = Some((tick.number, bytes));
                return;
            }
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
#[derive(Debug, Default, Clone)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunConfig, Scenario, Simulation};

    #[test]
    fn the_director_draws_each_enemy_from_its_stream_of_random() {
        let mut config = RunConfig::new(Scenario::builtin("shmup").unwrap());
        (config.threads, config.seed) = (2, 5);
        let e = config.scenario.shmup.as_ref().unwrap().enemies;
        let height = config.scenario.shmup.as_ref().unwrap().arena.height;
        let step = config.scenario.step();
        let start = wave_start(&e, step, 0);
        let planning = start.saturating_sub(1);
        let mut simulation = Simulation::new(&config).unwrap();
        for _ in 0..=planning {
            simulation.tick().unwrap();
        }
        let queue = simulation
            .engine()
            .registry()
            .resource::<SpawnQueue>()
            .unwrap()
            .clone();
        simulation.finish().unwrap();
        assert_eq!(queue.waves(), 1);
        assert_eq!(queue.planned().len(), e.per_wave as usize);
        // Enemy i of wave 0: stream `0 << 32 | i` of the director's
        // `Random` in the tick that planned the wave.
        let random = Random::new(5, "waves", planning);
        let mut sines = 0;
        for (i, planned) in queue.planned().iter().enumerate() {
            let mut rng = random.stream(i as u64);
            assert_eq!(planned.wave, 0);
            assert_eq!(
                planned.y,
                height * rng.range(e.spawn_band[0], e.spawn_band[1])
            );
            assert_eq!(planned.speed, rng.range(e.speed_min, e.speed_max));
            if rng.unit() < e.sine_share {
                let amplitude = rng.range(e.amplitude_min, e.amplitude_max);
                let frequency = rng.range(e.frequency_min, e.frequency_max);
                let phase = rng.range(0.0, TAU);
                assert_eq!(planned.sine, Some((amplitude, frequency, phase)));
                sines += 1;
            } else {
                assert_eq!(planned.sine, None);
            }
            assert_eq!(planned.first_shot, rng.range(0.0, e.fire_interval));
        }
        // Both kinds drawn (the share is neither 0 nor 1).
        assert!(sines > 0 && sines < e.per_wave, "{sines} of {}", e.per_wave);
    }
}
