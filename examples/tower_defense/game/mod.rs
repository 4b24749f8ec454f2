//! A tower-defense game on the engine, as a list of plugins: enemies
//! cloned from prototypes walk a serpentine path in waves, towers shoot
//! homing projectiles at them, the gold of the kills buys more towers.
//! Shared by the example (`examples/tower_defense/main.rs`) and its test
//! (`tests/integration/tower_defense.rs`).

mod combat;
mod components;
mod map;
mod waves;

use std::time::Duration;

use ecs_runtime::checksum::world_checksum;
use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::Hook;
use ecs_runtime::{Plugin, scheduler::every_n_ticks};

use components::*;
pub(crate) use components::{Phase, Stats};
pub(crate) use map::Sizes;
use map::*;

/// How a game is set up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Config {
    /// Multiplies every count (1.0: the full game, about 48,000 entities
    /// at its peak).
    pub(crate) scale: f64,
    /// Threads of the engine's pool.
    pub(crate) threads: usize,
    /// `false` hands every tick to the pool, however cheap
    /// (`Engine::set_adaptive`).
    pub(crate) adaptive: bool,
    /// The seed of every random draw.
    pub(crate) seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            scale: 1.0,
            threads: 1,
            adaptive: true,
            seed: 2026,
        }
    }
}

/// SplitMix64's mixing function: a well-spread 64-bit hash of `x`.
pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The map, the state machine, the sets' order, the components' rules
/// (required components, clones) and the resources.
struct MapPlugin {
    sizes: Sizes,
    seed: u64,
}

fn playing(state: Res<State<Phase>>) -> bool {
    matches!(state.get(), Phase::Spawning | Phase::Break)
}

impl Plugin for MapPlugin {
    fn build(&self, builder: &mut EngineBuilder) {
        let registry = builder.registry_mut();
        registry.register_required::<Tower, Cooldown>().unwrap();
        registry.register_required::<Tower, Aim>().unwrap();
        registry.register_required::<Tower, LastShot>().unwrap();
        registry.register_required::<Projectile, Flight>().unwrap();
        registry
            .register_required_with::<Projectile, Ttl>(|| Ttl(PROJECTILE_TTL))
            .unwrap();
        // What the prototypes have: their clones copy each (`Disabled`
        // copies without registration).
        registry.register_clone::<Enemy>();
        registry.register_clone::<Kind>();
        registry.register_clone::<Health>();
        registry.register_clone::<Speed>();
        registry.register_clone::<Bounty>();
        registry.register_clone::<PathPos>();
        registry.register_clone::<Lane>();
        registry.register_clone::<Position>();
        builder
            .insert_resource(self.sizes)
            .insert_resource(WorldSeed(self.seed))
            .insert_resource(Path::serpentine())
            .insert_resource(Grid::default())
            .insert_resource(TowerSlots::default())
            .insert_resource(Prototypes::default())
            .insert_resource(Waves::default())
            .insert_resource(Stats {
                lives: self.sizes.lives,
                ..Stats::default()
            });
        builder.add_state(Phase::Setup);
        builder.add_on_enter(Phase::Setup, waves::setup_map);
        builder.set(GameSet::Director).before(GameSet::Enemies);
        builder
            .set(GameSet::Enemies)
            .before(GameSet::Towers)
            .run_if(playing);
        builder
            .set(GameSet::Towers)
            .before(GameSet::Combat)
            .run_if(playing);
        builder
            .set(GameSet::Combat)
            .before(GameSet::Economy)
            .run_if(playing);
        builder.set(GameSet::Economy).run_if(playing);
    }
}

/// The waves: phases entered and left, enemies spawned, the phase clock.
fn wave_plugin(builder: &mut EngineBuilder) {
    for phase in [Phase::Setup, Phase::Spawning, Phase::Break, Phase::GameOver] {
        builder.add_on_enter(phase, waves::enter_phase);
    }
    builder.add_on_enter(Phase::Spawning, waves::start_wave);
    builder.add_on_exit(Phase::Spawning, waves::exit_phase);
    builder.add_on_exit(Phase::Break, waves::exit_phase);
    builder
        .add_system(waves::spawn_enemies)
        .in_set(GameSet::Director)
        .run_if(in_state(Phase::Spawning));
    builder
        .add_system(waves::phase_clock.pipe(waves::request_phase))
        .in_set(GameSet::Director)
        .named("phase_clock");
}

/// Enemies: walking, leaking, the grid, and the observer that counts
/// the enemies gone.
fn enemy_plugin(builder: &mut EngineBuilder) {
    builder.add_system(combat::walk).in_set(GameSet::Enemies);
    builder
        .add_system(combat::count_new)
        .in_set(GameSet::Enemies);
    builder.add_system(combat::leak).in_set(GameSet::Enemies);
    builder.add_system(combat::bucket).in_set(GameSet::Enemies);
    builder.observe::<Enemy, _>(Hook::Remove, combat::enemy_removed);
}

/// Towers: aiming, firing, turrets, the one-shot that builds a tower and
/// the observer that mounts its turret.
fn tower_plugin(builder: &mut EngineBuilder) {
    let build_tower = builder.register_system(combat::build_tower);
    builder.insert_resource(OneShots { build_tower });
    builder.observe::<Tower, _>(Hook::Add, combat::mount_turret);
    builder.add_system(combat::aim).in_set(GameSet::Towers);
    builder.add_system(combat::fire).in_set(GameSet::Towers);
    builder
        .add_system(combat::turn_turrets)
        .in_set(GameSet::Towers)
        .run_if(every_n_ticks(2));
}

/// Projectiles and damage.
fn combat_plugin(builder: &mut EngineBuilder) {
    builder.add_system(combat::fly).in_set(GameSet::Combat);
    builder.add_system(combat::land).in_set(GameSet::Combat);
    builder.add_system(combat::damage).in_set(GameSet::Combat);
    builder.add_system(combat::reap).in_set(GameSet::Combat);
}

/// Gold.
fn economy_plugin(builder: &mut EngineBuilder) {
    builder.add_system(combat::economy).in_set(GameSet::Economy);
}

/// The synthetic frame times of the real-time loop, in microseconds: an
/// uneven cycle, as a real frame clock gives, so that some frames run no
/// tick and some several.
const FRAMES_US: [u64; 6] = [16_667, 9_000, 33_000, 4_000, 21_000, 16_000];

/// A game: its engine, built from the plugins.
pub(crate) struct Game {
    engine: Engine,
    /// Frames the real-time loop ran.
    pub(crate) frames: u64,
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Game")
            .field("ticks", &self.engine.ticks())
            .finish()
    }
}

impl Game {
    /// Builds the game's engine.
    pub(crate) fn new(config: &Config) -> Result<Game, EngineError> {
        let mut builder = Engine::builder();
        builder.threads(config.threads);
        builder
            .add_plugin(MapPlugin {
                sizes: Sizes::at(config.scale),
                seed: config.seed,
            })
            .add_plugin(wave_plugin)
            .add_plugin(enemy_plugin)
            .add_plugin(tower_plugin)
            .add_plugin(combat_plugin)
            .add_plugin(economy_plugin);
        let mut engine = builder.build()?;
        engine.set_adaptive(config.adaptive);
        Ok(Game { engine, frames: 0 })
    }

    /// Runs the real-time loop until `ticks` ticks have run in all:
    /// `Engine::advance` with synthetic frame times ([`FRAMES_US`]), the
    /// catch-up capped so that the last frame stops at `ticks`.
    pub(crate) fn run_to(&mut self, ticks: u64) -> Result<(), EngineError> {
        while self.engine.ticks() < ticks {
            let left = ticks - self.engine.ticks();
            let cap = u32::try_from(left).unwrap_or(u32::MAX);
            self.engine
                .set_max_catch_up(cap.min(ecs_runtime::DEFAULT_MAX_CATCH_UP));
            let frame = FRAMES_US[(self.frames % FRAMES_US.len() as u64) as usize];
            self.engine.advance(Duration::from_micros(frame))?;
            self.frames += 1;
            let alive = self.engine.registry().len();
            let stats = self.engine.registry_mut().resource_mut::<Stats>().unwrap();
            stats.peak_entities = stats.peak_entities.max(alive);
        }
        Ok(())
    }

    /// Runs `ticks` more ticks with `Engine::run`, no frames: the world
    /// is the one `run_to` gives for as many ticks.
    pub(crate) fn run_ticks(&mut self, ticks: u64) -> Result<(), EngineError> {
        self.engine.run(ticks)
    }

    /// Ticks run.
    pub(crate) fn ticks(&self) -> u64 {
        self.engine.ticks()
    }

    /// The game's counters.
    pub(crate) fn stats(&self) -> &Stats {
        self.engine.registry().resource::<Stats>().unwrap()
    }

    /// The phase now.
    pub(crate) fn phase(&self) -> Phase {
        *self
            .engine
            .registry()
            .resource::<State<Phase>>()
            .unwrap()
            .get()
    }

    /// The engine, to look at the world.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Entities alive by role: enemies (not prototypes), towers, turrets,
    /// projectiles.
    pub(crate) fn census(&self) -> [usize; 4] {
        let registry = self.engine.registry();
        [
            registry.view::<&Enemy>().count(),
            registry.view::<&Tower>().count(),
            registry.view::<&Turret>().count(),
            registry.view::<&Projectile>().count(),
        ]
    }

    /// The world checksum: every live entity in handle order with each of
    /// its components (`ecs_runtime::checksum`), then the counters.
    pub(crate) fn checksum(&self) -> u64 {
        let registry = self.engine.registry();
        let world = world_checksum(registry, |r, e, h| {
            h.optional(r.get::<Position>(e), |h, p| {
                h.f32(p.x);
                h.f32(p.y);
            });
            h.optional(r.get::<Health>(e), |h, v| h.i32(v.0));
            h.optional(r.get::<PathPos>(e), |h, v| h.f32(v.0));
            h.optional(r.get::<Speed>(e), |h, v| h.f32(v.0));
            h.optional(r.get::<Lane>(e), |h, v| h.f32(v.0));
            h.optional(r.get::<Kind>(e), |h, v| h.u8(v.0));
            h.optional(r.get::<Cooldown>(e), |h, v| h.u32(v.0));
            h.optional(r.get::<Aim>(e).and_then(|a| a.0), |h, v| h.u64(v.to_bits()));
            h.optional(r.get::<LastShot>(e).and_then(|a| a.0), |h, v| {
                h.u64(v.to_bits())
            });
            h.optional(r.get::<Projectile>(e), |h, v| {
                h.u64(v.target.to_bits());
                h.i32(v.damage);
            });
            h.optional(r.get::<Flight>(e), |h, v| h.u8(*v as u8));
            h.optional(r.get::<Ttl>(e), |h, v| h.u32(v.0));
            h.optional(r.get::<Facing>(e), |h, v| h.f32(v.0));
            h.optional(r.parent(e), |h, v| h.u64(v.to_bits()));
            h.u8(u8::from(r.get::<Disabled>(e).is_some()));
        });
        let stats = self.stats();
        let mut h = ecs_runtime::checksum::Fnv1a::default();
        h.u64(world);
        for v in [
            stats.spawned,
            stats.kills,
            stats.leaked,
            stats.shots,
            stats.hits,
            stats.fizzled,
            stats.gold,
            stats.towers_built,
        ] {
            h.u64(v);
        }
        h.u64(stats.lives as u64);
        for &(tick, phase) in &stats.entered {
            h.u64(tick);
            h.u8(phase as u8);
        }
        h.finish()
    }
}
