//! The components of the harness's worlds, and how each feeds the world
//! checksum. Positions in pixels (y grows downwards), velocities in pixels
//! per second, durations in seconds.

use ecs_engine::{Entity, Registry};
use ecs_runtime::divergence::Digests;
use serde::{Deserialize, Serialize};

use scheduler::WorldSeed;

use super::checksum::{Canonical, Feed, Fnv1a, component};
use super::input::{Command, InputEvent};
use super::shmup::{Doomed, SpawnQueue};

/// Where an entity is, pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Position {
    /// Horizontal, from the left edge.
    pub x: f32,
    /// Vertical, from the top edge.
    pub y: f32,
}

/// How fast it moves, pixels per second.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Velocity {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// A player's ship; `index` is the player number used by input scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// The player number, from 0.
    pub index: u8,
}

/// What a player's input asks for: a direction and the fire button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Controls {
    /// -1 (left), 0 or 1 (right).
    pub dx: i8,
    /// -1 (up), 0 or 1 (down).
    pub dy: i8,
    /// Fire held.
    pub fire: bool,
}

/// A ship's gun: seconds until it may fire again.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Weapon {
    /// Seconds left; the gun fires at 0 or below.
    pub cooldown: f32,
}

/// An enemy's gun: seconds until its next shot.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct EnemyGun {
    /// Seconds left.
    pub cooldown: f32,
}

/// An enemy; `wave` is the wave it came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enemy {
    /// The wave number, from 0.
    pub wave: u32,
}

/// Vertical sine motion around `base_y`: y = base_y + amplitude ×
/// sin(2π × frequency × (t - t0) + phase), with t0 the spawn tick's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SineWave {
    /// The centre line, pixels.
    pub base_y: f32,
    /// Pixels.
    pub amplitude: f32,
    /// Hertz.
    pub frequency: f32,
    /// Radians.
    pub phase: f32,
    /// The tick the motion started on.
    pub start_tick: u64,
}

/// A missile (player's or enemy's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missile;

/// Which side an entity fights for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Faction {
    /// Player `n`'s ship or missile.
    Player(u8),
    /// An enemy or an enemy missile.
    Enemy,
}

/// A collision circle, pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Collider {
    /// Radius.
    pub radius: f32,
}

/// Hit points; at 0 or below the entity is dead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health(pub i32);

/// Damage dealt to what this entity touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Damage(pub i32);

/// This tick's hits, written by collision and damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Hits {
    /// Damage taken this tick.
    pub damage: i32,
    /// The lowest player number among this tick's hitters, if any.
    pub by: Option<u8>,
    /// The player who destroyed the entity this tick, if one did.
    pub killed_by: Option<u8>,
}

/// Invulnerability left after losing a life, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Shield {
    /// Seconds left.
    pub seconds: f32,
}

/// Ships a player has left, this one included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lives(pub u8);

/// A player's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Score(pub u32);

/// Points for destroying this entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounty(pub u32);

/// A particle of the `particles` scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Particle;

impl Canonical for Position {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.x);
        h.f32(self.y);
    }
}

impl Canonical for Velocity {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.x);
        h.f32(self.y);
    }
}

impl Canonical for Player {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.u8(self.index);
    }
}

impl Canonical for Controls {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.bytes(&[self.dx as u8, self.dy as u8, u8::from(self.fire)]);
    }
}

impl Canonical for Weapon {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.cooldown);
    }
}

impl Canonical for EnemyGun {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.cooldown);
    }
}

impl Canonical for Enemy {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.u32(self.wave);
    }
}

impl Canonical for SineWave {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.base_y);
        h.f32(self.amplitude);
        h.f32(self.frequency);
        h.f32(self.phase);
        h.u64(self.start_tick);
    }
}

impl Canonical for Missile {
    fn hash<H: Feed>(&self, _: &mut H) {}
}

impl Canonical for Faction {
    fn hash<H: Feed>(&self, h: &mut H) {
        match self {
            Faction::Player(n) => h.bytes(&[1, *n]),
            Faction::Enemy => h.u8(2),
        }
    }
}

impl Canonical for Collider {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.radius);
    }
}

impl Canonical for Health {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.i32(self.0);
    }
}

impl Canonical for Damage {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.i32(self.0);
    }
}

#[inline]
fn option_u8(h: &mut impl Feed, value: Option<u8>) {
    match value {
        Some(n) => h.bytes(&[1, n]),
        None => h.u8(0),
    }
}

impl Canonical for Hits {
    #[inline]
    fn hash<H: Feed>(&self, h: &mut H) {
        h.i32(self.damage);
        option_u8(h, self.by);
        option_u8(h, self.killed_by);
    }
}

impl Canonical for Shield {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.f32(self.seconds);
    }
}

impl Canonical for Lives {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.u8(self.0);
    }
}

impl Canonical for Score {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.u32(self.0);
    }
}

impl Canonical for Bounty {
    fn hash<H: Feed>(&self, h: &mut H) {
        h.u32(self.0);
    }
}

impl Canonical for Particle {
    fn hash<H: Feed>(&self, _: &mut H) {}
}

/// Something done once per component type of the harness
/// ([`each_type`]).
trait TypeVisitor {
    fn visit<T: Canonical>(&mut self);
}

/// Visits every component type of the harness, in the checksum's fixed
/// order.
fn each_type(v: &mut impl TypeVisitor) {
    v.visit::<Position>();
    v.visit::<Velocity>();
    v.visit::<Player>();
    v.visit::<Controls>();
    v.visit::<Weapon>();
    v.visit::<EnemyGun>();
    v.visit::<Enemy>();
    v.visit::<SineWave>();
    v.visit::<Missile>();
    v.visit::<Faction>();
    v.visit::<Collider>();
    v.visit::<Health>();
    v.visit::<Damage>();
    v.visit::<Hits>();
    v.visit::<Shield>();
    v.visit::<Lives>();
    v.visit::<Score>();
    v.visit::<Bounty>();
    v.visit::<Particle>();
}

/// Feeds every component type of the harness, in a fixed order, into `h`.
pub(crate) fn hash_entity(registry: &Registry, entity: Entity, h: &mut Fnv1a) {
    struct Feed<'a>(&'a Registry, Entity, &'a mut Fnv1a);
    impl TypeVisitor for Feed<'_> {
        fn visit<T: Canonical>(&mut self) {
            component::<T>(self.0, self.1, self.2);
        }
    }
    each_type(&mut Feed(registry, entity, h));
}

/// What divergence diagnosis compares: the live entities, then every
/// component type of the harness in the checksum's order, each pool in
/// its dense order, then what the scenarios keep outside components and
/// systems change or draw from: the shoot'em up's spawn queue and doomed
/// list, the players' input events (the channel the engine's input fills
/// and steering reads), and the world seed. The rules, which no system
/// writes, are left out. A resource or channel a scenario lacks digests
/// as absent in both runs.
pub fn digests() -> Digests {
    struct Add(Option<Digests>);
    impl TypeVisitor for Add {
        fn visit<T: Canonical>(&mut self) {
            let digests = self.0.take().expect("set between visits");
            self.0 = Some(digests.component::<T>(|value: &T, h| value.hash(h)));
        }
    }
    let mut add = Add(Some(Digests::new()));
    each_type(&mut add);
    add.0
        .expect("set between visits")
        .resource::<SpawnQueue>(SpawnQueue::feed)
        .resource::<Doomed>(Doomed::feed)
        .events::<InputEvent>(|event, h| {
            h.u64(event.tick);
            h.u8(event.player);
            h.u64(event.sequence);
            match event.command {
                Command::Move { dx, dy } => h.bytes(&[0, dx as u8, dy as u8]),
                Command::Fire(on) => h.bytes(&[1, u8::from(on)]),
            }
        })
        .resource::<WorldSeed>(|seed, h| h.u64(seed.0))
}
