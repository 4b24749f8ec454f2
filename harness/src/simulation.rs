//! [`Simulation`]: a scenario's world in an [`Engine`], with its input
//! thread, ready to tick.

use ecs_runtime::checksum::world_checksum;
use ecs_runtime::{Engine, SystemHandle};
use scheduler::WorldSeed;

use super::components::{Lives, Player, Score, hash_entity};
use super::input::InputFeed;
use super::movers::{self, Spawner};
use super::particles::{self, Respawn};
use super::report::PlayerStats;
use super::scenario::ScenarioKind;
use super::shmup::{self, ShmupSystems};
use super::snapshot::{self, RunInfo};
use super::{HarnessError, InputSource, RunConfig, limits};

#[derive(Debug)]
enum World {
    Shmup(ShmupSystems),
    Particles(SystemHandle<Respawn>),
    Movers(SystemHandle<Spawner>),
}

/// A scenario's world, built and ready to tick: the engine, the handles of
/// the systems that count spawns and despawns, and the input thread.
///
/// # Examples
///
/// ```
/// use harness::{RunConfig, Scenario, Simulation};
///
/// let mut config = RunConfig::new(Scenario::builtin("shmup").unwrap());
/// config.threads = 2;
/// let mut simulation = Simulation::new(&config).unwrap();
/// for _ in 0..120 {
///     simulation.tick().unwrap();
/// }
/// let alive = simulation.engine().registry().len() as u64;
/// assert_eq!(simulation.spawned() - simulation.despawned(), alive);
/// simulation.finish().unwrap();
/// ```
#[derive(Debug)]
pub struct Simulation {
    engine: Engine,
    world: World,
    feed: Option<InputFeed>,
    initial: u64,
    /// The run's identity, saved in snapshots (its `ticks` is set when
    /// saving).
    run: RunInfo,
    /// Stops a world that outgrows the memory left, at its tick.
    guard: limits::Guard,
}

impl Simulation {
    /// Builds the world of `config.scenario` and starts its input thread.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Option`] for 0 threads or more than
    /// [`MAX_THREADS`](crate::MAX_THREADS), a scale of 0, more entities
    /// than a registry holds, or `--inputs` on a scenario without players;
    /// [`HarnessError::Memory`] when the run would need more memory than
    /// this process may take ([`estimate_memory`](crate::estimate_memory),
    /// [`memory_budget`](crate::memory_budget)); [`HarnessError::ReadFile`]
    /// when the input script or the snapshot cannot be opened or read
    /// (too large, a pipe nobody writes to); [`HarnessError::Snapshot`]
    /// when the snapshot is damaged, of another run, or holds a field the
    /// rules cannot produce; [`HarnessError::Engine`] when the schedule
    /// does not build.
    pub fn new(config: &RunConfig) -> Result<Simulation, HarnessError> {
        if config.threads == 0 {
            return Err(HarnessError::Option(
                "--threads must be at least 1, got 0".into(),
            ));
        }
        if config.scale == 0 {
            return Err(HarnessError::Option(
                "--scale must be at least 1, got 0".into(),
            ));
        }
        let budget = limits::memory_budget();
        limits::check(config, budget)?;
        let saved = match &config.load {
            Some(path) => Some((path, snapshot::read(path, config)?)),
            None => None,
        };
        let rules = config.scenario.rules();
        let run = RunInfo {
            scenario: config.scenario.name.clone(),
            identity: snapshot::identity(&rules, config.seed, config.scale),
            rules,
            seed: config.seed,
            scale: config.scale,
            ticks: 0,
            reserves: Vec::new(),
        };
        let mut builder = Engine::builder();
        // Every draw of a system comes from `Random`, keyed by this seed.
        builder
            .threads(config.threads)
            .step(config.scenario.step())
            .insert_resource(WorldSeed(config.seed));
        let (world, queue) = match config.scenario.kind() {
            ScenarioKind::Shmup(s) => {
                let (systems, queue) = shmup::build(&mut builder, s, config.scale);
                (World::Shmup(systems), Some((queue, s.players.count)))
            }
            ScenarioKind::Particles(p) => {
                no_players(config)?;
                let respawn = particles::build(&mut builder, p, config.seed, config.scale)?;
                (World::Particles(respawn), None)
            }
            ScenarioKind::Movers(m) => {
                no_players(config)?;
                let spawner = movers::build(&mut builder, m, config.scale)?;
                (World::Movers(spawner), None)
            }
        };
        if let (Some(depth), Some(_)) = (config.rollback, &queue) {
            // Ticks run again get the input they got the first time.
            builder.replay_inputs::<crate::InputEvent>(u64::from(depth) + 1);
        }
        let mut initial = builder.registry_mut().len() as u64;
        let mut engine = builder.build()?;
        engine.set_adaptive(config.adaptive);
        engine.set_shuffle(config.shuffle);
        let mut from_tick = 0;
        if let Some((path, bytes)) = saved {
            from_tick = snapshot::load(&mut engine, &bytes, path, &run, config)?;
            initial = engine.registry().len() as u64;
        }
        // Measured with the engine's threads started: their stacks and
        // arenas count against an address-space limit.
        let guard = limits::Guard::new(
            config,
            engine.registry().len() as u64,
            limits::memory_budget(),
        );
        let feed = match queue {
            Some((queue, players)) => Some(InputFeed::start(
                &config.inputs,
                config.seed,
                players,
                queue,
                config.input_pause,
                from_tick,
            )?),
            None => None,
        };
        Ok(Simulation {
            engine,
            world,
            feed,
            initial,
            run,
            guard,
        })
    }

    /// Saves the world after the ticks run so far to `path`: JSON when
    /// its name ends in `.json`, postcard otherwise (see
    /// [`RunConfig::save_at`]). [`RunConfig::load`] resumes it.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Snapshot`] when a value does not encode (JSON has
    /// no NaN); [`HarnessError::WriteFile`] when the file cannot be
    /// written.
    pub fn save(&mut self, path: &std::path::Path) -> Result<(), HarnessError> {
        let info = RunInfo {
            ticks: self.engine.ticks(),
            reserves: snapshot::reserves(&self.engine),
            ..self.run.clone()
        };
        snapshot::save(&mut self.engine, info, path)
    }

    /// Runs one tick.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Input`] as soon as the input thread has stopped on
    /// a bad script line; [`HarnessError::Engine`] when a system fails;
    /// [`HarnessError::OutOfMemory`] when the world grows past the memory
    /// left (see [`estimate_memory`](crate::estimate_memory)), or the
    /// wave director could not get the memory for a wave.
    pub fn tick(&mut self) -> Result<(), HarnessError> {
        let tick = self.engine.ticks();
        self.engine.tick()?;
        if let World::Shmup(s) = &self.world
            && let Some((at, bytes)) = self.engine.state(s.waves).and_then(|w| w.out_of_memory)
        {
            return Err(HarnessError::OutOfMemory {
                tick: at,
                message: format!(
                    "the wave director could not get {} for the next wave; lower --scale or per_wave",
                    limits::human_bytes(bytes as u64)
                ),
            });
        }
        self.guard
            .check(tick, self.engine.registry().len() as u64)?;
        if let Some(feed) = &mut self.feed {
            feed.check()?;
        }
        Ok(())
    }

    /// The engine: registry, schedule, timings.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, for the rollback mode's restores.
    pub(crate) fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Entities spawned since the start (or the load), the initial (or
    /// loaded) ones included.
    pub fn spawned(&self) -> u64 {
        let e = &self.engine;
        self.initial
            + match &self.world {
                World::Shmup(s) => {
                    e.state(s.weapons).map_or(0, |w| w.fired)
                        + e.state(s.enemy_fire).map_or(0, |f| f.fired)
                        + e.state(s.spawns).map_or(0, |s| s.spawned)
                }
                World::Particles(r) => e.state(*r).map_or(0, |r| r.spawned),
                World::Movers(s) => e.state(*s).map_or(0, |s| s.spawned),
            }
    }

    /// Entities despawned since the start.
    pub fn despawned(&self) -> u64 {
        let e = &self.engine;
        match &self.world {
            World::Shmup(s) => e.state(s.despawn).map_or(0, |d| d.despawned),
            World::Particles(r) => e.state(*r).map_or(0, |r| r.despawned),
            World::Movers(s) => e.state(*s).map_or(0, |s| s.despawned),
        }
    }

    /// Input events applied so far (0 without players).
    pub fn inputs_applied(&self) -> u64 {
        match &self.world {
            World::Shmup(s) => self.engine.state(s.steering).map_or(0, |s| s.applied),
            World::Particles(_) | World::Movers(_) => 0,
        }
    }

    /// Input events that arrived after their tick (delivered at the next
    /// tick instead); 0 unless the input protocol is broken.
    pub fn late_inputs(&self) -> u64 {
        self.engine
            .input_stats::<crate::InputEvent>()
            .map_or(0, |stats| stats.late)
    }

    /// Each player's score and lives, by player number.
    pub fn players(&self) -> Vec<PlayerStats> {
        let World::Shmup(_) = self.world else {
            return Vec::new();
        };
        let registry = self.engine.registry();
        let mut players: Vec<PlayerStats> = registry
            .view::<(&Player, &Score, &Lives)>()
            .iter()
            .map(|(p, s, l)| PlayerStats {
                player: p.index,
                score: s.0,
                lives: l.0,
            })
            .collect();
        players.sort_by_key(|p| p.player);
        players
    }

    /// The world checksum: FNV-1a over every live entity's handle and
    /// components, entities in increasing handle order (see the
    /// [harness docs](crate)); for the `movers` world, over
    /// `Position` then `Velocity` only.
    pub fn checksum(&self) -> u64 {
        match self.world {
            World::Movers(_) => world_checksum(self.engine.registry(), movers::hash_entity),
            World::Shmup(_) | World::Particles(_) => {
                world_checksum(self.engine.registry(), hash_entity)
            }
        }
    }

    /// Stops the input thread (closing the engine's inputs) and waits for
    /// it.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Input`] when the script has a bad line, wherever it
    /// is: the thread reads the rest of the file after the run ends.
    pub fn finish(mut self) -> Result<(), HarnessError> {
        self.engine.close_inputs();
        match self.feed.take() {
            Some(feed) => feed.finish().map(drop),
            None => Ok(()),
        }
    }
}

/// Refuses `--inputs` on a scenario without players.
fn no_players(config: &RunConfig) -> Result<(), HarnessError> {
    if config.inputs != InputSource::BuiltIn {
        return Err(HarnessError::Option(format!(
            "scenario `{}` has no players: --inputs does not apply",
            config.scenario.name
        )));
    }
    Ok(())
}
