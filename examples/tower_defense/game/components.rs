//! The game's components, resources and events.

use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::OneShotId;

/// Where an entity is, in pixels (y grows downwards).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Position {
    pub(crate) x: f32,
    pub(crate) y: f32,
}

/// Marks an enemy (a walker on the path).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Enemy;

/// Which of [`ENEMY_KINDS`](super::map::ENEMY_KINDS) an enemy is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Kind(pub(crate) u8);

/// Hit points left; an enemy at 0 or below is reaped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Health(pub(crate) i32);

/// Walking speed, pixels per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Speed(pub(crate) f32);

/// Gold paid for the kill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bounty(pub(crate) u32);

/// Distance walked along the path, pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PathPos(pub(crate) f32);

/// Sideways offset from the path's centre line, pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Lane(pub(crate) f32);

/// A tower: what it shoots with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tower {
    /// Pixels.
    pub(crate) range: f32,
    /// Hit points per projectile.
    pub(crate) damage: i32,
    /// Ticks between shots.
    pub(crate) reload: u32,
}

/// Ticks until the tower may fire again (required by [`Tower`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cooldown(pub(crate) u32);

/// The enemy the tower will shoot this tick (required by [`Tower`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Aim(pub(crate) Option<Entity>);

/// The last projectile the tower fired: the handle `commands.spawn`
/// returned (required by [`Tower`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LastShot(pub(crate) Option<Entity>);

/// Marks a tower's turret, a child entity of the tower.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turret;

/// Where a turret points, radians.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Facing(pub(crate) f32);

/// A projectile homing on `target`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Projectile {
    pub(crate) target: Entity,
    pub(crate) damage: i32,
    /// Pixels per second.
    pub(crate) speed: f32,
}

/// A projectile's flight (required by [`Projectile`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Flight {
    #[default]
    Flying,
    /// Reached its target this tick.
    Hit,
    /// Lost its target, or ran out of time.
    Fizzled,
}

/// Ticks a projectile may still fly (required by [`Projectile`], with
/// [`PROJECTILE_TTL`](super::map::PROJECTILE_TTL)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ttl(pub(crate) u32);

/// The game's phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The map is laid out (one tick).
    Setup,
    /// A wave walks in.
    Spawning,
    /// The wave is out; the towers fight on.
    Break,
    /// Every wave came, or the lives ran out.
    GameOver,
}

/// The system sets, in this order each tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GameSet {
    /// Waves and the phase clock.
    Director,
    /// Enemies walk, leak, and are bucketed into the grid.
    Enemies,
    /// Towers aim and fire; turrets turn.
    Towers,
    /// Projectiles fly and hit; the dead are reaped.
    Combat,
    /// Gold is counted and spent.
    Economy,
}
impl SystemSet for GameSet {}

/// An enemy was hit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
    pub(crate) target: Entity,
    pub(crate) damage: i32,
}

/// An enemy was killed, paying `bounty`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EnemyDown {
    pub(crate) bounty: u32,
}

/// The wave being played.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Waves {
    /// 1 for the first wave; 0 before it.
    pub(crate) wave: u32,
    /// Ticks since the phase was entered.
    pub(crate) ticks_in_phase: u32,
    /// Enemies of this wave spawned so far.
    pub(crate) spawned: u32,
}

/// The disabled enemies every spawn is cloned from, one per kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prototypes(pub(crate) Vec<Entity>);

/// The one-shot systems that systems ask for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneShots {
    pub(crate) build_tower: OneShotId,
}

/// The game's counters: what the summary prints and the tests check.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Stats {
    pub(crate) spawned: u64,
    /// Enemies seen by an `Added<Enemy>` query.
    pub(crate) seen_added: u64,
    pub(crate) kills: u64,
    pub(crate) leaked: u64,
    pub(crate) shots: u64,
    pub(crate) hits: u64,
    pub(crate) fizzled: u64,
    pub(crate) gold: u64,
    /// Lives left, never below 0.
    pub(crate) lives: i64,
    pub(crate) towers_initial: u64,
    /// Runs of the `build_tower` one-shot system.
    pub(crate) towers_built: u64,
    /// Runs of the observer of `Hook::Add` on `Tower`.
    pub(crate) observed_towers: u64,
    /// Runs of the observer of `Hook::Remove` on `Enemy`.
    pub(crate) observed_enemy_removals: u64,
    /// Every phase entered, with the tick it was entered on.
    pub(crate) entered: Vec<(u64, Phase)>,
    /// Exits of `Spawning` and `Break` (`add_on_exit`).
    pub(crate) exits: u64,
    /// The most entities alive at the end of a tick.
    pub(crate) peak_entities: usize,
}
