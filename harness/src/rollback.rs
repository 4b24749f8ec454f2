//! `--rollback N`: the replay mode of rollback networking. Every tick the
//! whole engine is saved in memory, into a ring of the last `N + 1`
//! frames ([`Engine::save_frame`], which copies what changed since the
//! previous save); every `N` ticks the state of `N` ticks ago is restored
//! ([`Engine::restore_frame`]) and those ticks run
//! again with the same input (replayed by the engine,
//! [`EngineBuilder::replay_inputs`](ecs_runtime::EngineBuilder::replay_inputs)),
//! so the run must end with the plain run's checksum.

use std::time::{Duration, Instant};

use ecs_runtime::scheduler::Events;
use ecs_runtime::{Engine, EngineRing};
use serde::Serialize;

use super::components::{
    Bounty, Collider, Controls, Damage, Enemy, EnemyGun, Faction, Health, Hits, Lives, Missile,
    Particle, Player, Position, Score, Shield, SineWave, Velocity, Weapon,
};
use super::movers::{MoverRules, Spawner};
use super::particles::{ParticleRules, Respawn};
use super::shmup::Rules;
use super::shmup::SpawnQueue;
use super::shmup::collision::Collision;
use super::shmup::combat::{EnemyFire, Weapons};
use super::shmup::flow::{Despawn, Doomed, Spawns, Waves};
use super::shmup::steering::Steering;
use super::{HarnessError, InputEvent};

/// What the rollback mode did and what its saves and restores cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RollbackStats {
    /// Ticks rolled back at each restore (`--rollback N`).
    pub depth: u32,
    /// States saved (one before every tick run, rerun ticks included).
    pub saves: u64,
    /// Restores.
    pub restores: u64,
    /// Ticks run again after the restores.
    pub rerun_ticks: u64,
    /// Mean seconds per save.
    pub save_seconds: f64,
    /// Mean seconds per restore.
    pub restore_seconds: f64,
}

/// The rollback loop's state: the ring of saved frames.
pub(crate) struct Rollback {
    depth: u32,
    ring: EngineRing,
    saving: Duration,
    restoring: Duration,
    stats: RollbackStats,
}

impl Rollback {
    /// Lets `engine`'s states copy every type the scenarios use, and
    /// starts with no state saved.
    pub(crate) fn new(engine: &mut Engine, depth: u32) -> Rollback {
        engine
            .register_clone::<Position>()
            .register_clone::<Velocity>()
            .register_clone::<Player>()
            .register_clone::<Controls>()
            .register_clone::<Weapon>()
            .register_clone::<EnemyGun>()
            .register_clone::<Enemy>()
            .register_clone::<SineWave>()
            .register_clone::<Missile>()
            .register_clone::<Faction>()
            .register_clone::<Collider>()
            .register_clone::<Health>()
            .register_clone::<Damage>()
            .register_clone::<Hits>()
            .register_clone::<Shield>()
            .register_clone::<Lives>()
            .register_clone::<Score>()
            .register_clone::<Bounty>()
            .register_clone::<Particle>()
            // Plain data written through `&mut` only, most of them in
            // few ticks (the spawn plan at each wave): shared between
            // frames while unwritten.
            .register_resource_clone_delta::<Rules>()
            .register_resource_clone_delta::<SpawnQueue>()
            .register_resource_clone::<Doomed>()
            .register_resource_clone_delta::<MoverRules>()
            .register_resource_clone_delta::<ParticleRules>()
            .register_resource_clone::<Events<InputEvent>>()
            .register_state_clone::<Steering>()
            .register_state_clone::<Weapons>()
            .register_state_clone::<EnemyFire>()
            .register_state_clone::<Spawns>()
            .register_state_clone::<Waves>()
            .register_state_clone::<Collision>()
            .register_state_clone::<Despawn>()
            .register_state_clone::<Spawner>()
            .register_state_clone::<Respawn>();
        Rollback {
            depth,
            ring: EngineRing::new(depth as usize + 1),
            saving: Duration::ZERO,
            restoring: Duration::ZERO,
            stats: RollbackStats {
                depth,
                ..RollbackStats::default()
            },
        }
    }

    /// Saves the engine before its next tick, as the ring's newest frame.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Option`] naming a type the states cannot copy.
    pub(crate) fn save(&mut self, engine: &Engine) -> Result<(), HarnessError> {
        let started = Instant::now();
        engine
            .save_frame(&mut self.ring)
            .map_err(|e| HarnessError::Option(format!("--rollback cannot save the world: {e}")))?;
        self.saving += started.elapsed();
        self.stats.saves += 1;
        Ok(())
    }

    /// After a new tick (not a rerun): every `depth` ticks, restores the
    /// state of `depth` ticks ago and returns `true`; the caller then runs
    /// those ticks again, each after a [`save`](Self::save), counting them
    /// with [`rerun`](Self::rerun).
    ///
    /// # Errors
    ///
    /// [`HarnessError::Option`] if the restore is refused (not expected:
    /// the frames come from this engine).
    pub(crate) fn after_tick(&mut self, engine: &mut Engine) -> Result<bool, HarnessError> {
        let ticks = engine.ticks();
        let depth = self.depth as usize;
        if !ticks.is_multiple_of(u64::from(self.depth)) || self.ring.len() < depth {
            return Ok(false);
        }
        let started = Instant::now();
        // The newest frame was saved before the tick just run: the state
        // of `depth` ticks ago is `depth - 1` frames back. It is saved
        // again before its tick runs again (an identical frame).
        engine
            .restore_frame(&mut self.ring, depth - 1)
            .map_err(|e| {
                HarnessError::Option(format!("--rollback could not restore tick {ticks}: {e}"))
            })?;
        self.restoring += started.elapsed();
        self.stats.restores += 1;
        Ok(true)
    }

    /// Counts a tick run again.
    pub(crate) fn rerun(&mut self) {
        self.stats.rerun_ticks += 1;
    }

    /// The counts and the mean costs.
    pub(crate) fn stats(&self) -> RollbackStats {
        let mean = |total: Duration, n: u64| total.as_secs_f64() / n.max(1) as f64;
        RollbackStats {
            save_seconds: mean(self.saving, self.stats.saves),
            restore_seconds: mean(self.restoring, self.stats.restores),
            ..self.stats.clone()
        }
    }
}
