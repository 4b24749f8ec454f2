//! The default scenario: a horizontal shoot'em up in the spirit of R-Type.
//!
//! Player ships on the left, steered by input events; enemies in waves from
//! the right, flying straight or on sine curves and firing at the nearest
//! ship; missiles both ways; collisions on a uniform grid; damage, score,
//! lives; and removal of what dies or leaves the screen. A ship out of
//! lives stays in the world, inert, with its score. The fourteen
//! systems, in registration order, with what they touch (R read, W write,
//! C commands):
//!
//! | system      | components and resources                                       |
//! |-------------|----------------------------------------------------------------|
//! | steering    | R input events, rules, Player; W Controls, Velocity            |
//! | movement    | R Velocity; W Position (in parallel over entities)             |
//! | sine motion | R SineWave; W Position (in parallel over entities)             |
//! | play area   | R rules, Player; W Position                                    |
//! | weapons     | R rules, Player, Position, Controls; W Weapon; C spawn         |
//! | enemy fire  | R rules, Position, Player, Collider; W EnemyGun; C spawn       |
//! | spawns      | R rules; W spawn queue; C spawn, insert                        |
//! | waves       | R rules, world seed; W spawn queue                             |
//! | collision   | R rules, Position, Collider, Faction, Damage, Missile; W Hits  |
//! | damage      | W Health, Hits, Shield                                         |
//! | score       | R Hits, Bounty, Player; W Score                                |
//! | lives       | R rules, Player; W Health, Shield, Lives; C remove             |
//! | cleanup     | R rules, Health, Position, Player; W doomed list               |
//! | despawn     | W doomed list; C despawn                                       |
//!
//! Every writer of a type is registered before its readers, so the two
//! scheduling policies give the same nine waves: {steering, spawns},
//! {movement, waves}, {sine motion}, {play area}, {weapons, enemy fire,
//! collision}, {damage}, {score, lives}, {cleanup}, {despawn}.

pub(crate) mod collision;
pub(crate) mod combat;
pub(crate) mod flow;
mod motion;
mod queue;
pub(crate) mod steering;

use ecs_engine::Registry;

use collision::Collision;
pub(crate) use combat::MISSILE_RADIUS;
use combat::{EnemyFire, Weapons};
use flow::{Despawn, Spawns, Waves};
pub(crate) use flow::{Doomed, wave_start, waves_planned};
pub(crate) use queue::{PLANNED_BYTES, SpawnQueue};
use steering::Steering;

use super::components::{
    Collider, Controls, Damage, Faction, Health, Hits, Lives, Player, Position, Score, Shield,
    Velocity, Weapon,
};
use super::input::{InputEvent, QUEUE_CAPACITY};
use super::scenario::Shmup;
use ecs_runtime::{EngineBuilder, InputProducer, SystemHandle};

/// The scenario's rules, as a resource every system may read.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub(crate) shmup: Shmup,
    /// Enemies per wave, scale applied.
    pub(crate) per_wave: u32,
}

/// The handles of the systems whose state the harness reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShmupSystems {
    pub(crate) steering: SystemHandle<Steering>,
    pub(crate) weapons: SystemHandle<Weapons>,
    pub(crate) enemy_fire: SystemHandle<EnemyFire>,
    pub(crate) spawns: SystemHandle<Spawns>,
    pub(crate) despawn: SystemHandle<Despawn>,
    pub(crate) waves: SystemHandle<Waves>,
}

/// Spawns the ships, inserts the resources, registers the fourteen
/// systems; returns their handles and the producer of the players' input.
pub(crate) fn build(
    builder: &mut EngineBuilder,
    shmup: &Shmup,
    scale: u32,
) -> (ShmupSystems, InputProducer<InputEvent>) {
    spawn_ships(builder.registry_mut(), shmup);
    builder.insert_resource(Rules {
        shmup: shmup.clone(),
        per_wave: shmup.enemies.per_wave.saturating_mul(scale),
    });
    builder.insert_resource(SpawnQueue::default());
    builder.insert_resource(flow::Doomed::default());
    let queue = builder.bounded_input_producer::<InputEvent>(QUEUE_CAPACITY);

    let steering = builder
        .add_system(Steering::default())
        .named("steering")
        .handle();
    builder.add_system(motion::movement).named("movement");
    builder.add_system(motion::sine_motion).named("sine motion");
    builder.add_system(motion::play_area).named("play area");
    let weapons = builder
        .add_system(Weapons::default())
        .named("weapons")
        .handle();
    let enemy_fire = builder
        .add_system(EnemyFire::default())
        .named("enemy fire")
        .handle();
    let spawns = builder
        .add_system(Spawns::default())
        .named("spawns")
        .handle();
    let waves = builder.add_system(Waves::default()).named("waves").handle();
    builder.add_system(Collision::default()).named("collision");
    builder.add_system(combat::damage).named("damage");
    builder.add_system(combat::score).named("score");
    builder.add_system(combat::lives).named("lives");
    builder.add_system(flow::cleanup).named("cleanup");
    let despawn = builder
        .add_system(Despawn::default())
        .named("despawn")
        .handle();
    let systems = ShmupSystems {
        steering,
        weapons,
        enemy_fire,
        spawns,
        despawn,
        waves,
    };
    (systems, queue)
}

/// The ships, at 1/8 of the width, spread evenly down the screen.
fn spawn_ships(registry: &mut Registry, shmup: &Shmup) {
    let players = shmup.players;
    let arena = shmup.arena;
    for index in 0..players.count {
        let y = arena.height * (f32::from(index) + 1.0) / (f32::from(players.count) + 1.0);
        let ship = registry.spawn((
            Position {
                x: arena.width / 8.0,
                y,
            },
            Velocity::default(),
            Player { index },
            Controls::default(),
            Weapon::default(),
            Faction::Player(index),
            Collider {
                radius: players.radius,
            },
            Health(players.health),
            Damage(players.contact_damage),
            Hits::default(),
            Shield::default(),
            Lives(players.lives),
        ));
        registry
            .insert(ship, Score::default())
            .expect("the ship was just spawned");
    }
}
