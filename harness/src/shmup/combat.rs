//! Weapons, enemy fire, damage, score and lives.

use ecs_engine::Entity;
use scheduler::{Commands, Query, Res, StatefulSystem, SystemParam, Tick};

use super::Rules;
use crate::components::{
    Collider, Controls, Damage, EnemyGun, Faction, Health, Hits, Lives, Missile, Player, Position,
    Score, Shield, Velocity, Weapon,
};

/// Collision radius of every missile, pixels.
pub(crate) const MISSILE_RADIUS: f32 = 3.0;

/// The components of a missile.
type MissileBundle = (
    Position,
    Velocity,
    Missile,
    Faction,
    Collider,
    Health,
    Damage,
    Hits,
);

fn missile(position: Position, velocity: Velocity, faction: Faction, damage: i32) -> MissileBundle {
    (
        position,
        velocity,
        Missile,
        faction,
        Collider {
            radius: MISSILE_RADIUS,
        },
        Health(1),
        Damage(damage),
        Hits::default(),
    )
}

/// A gun whose cooldown is within half a step of 0 fires this tick: the
/// shot lands on the tick nearest to the exact time, and a cooldown that is
/// a whole number of steps does not drift by float rounding.
fn ready(cooldown: f32, dt: f32) -> bool {
    cooldown <= 0.5 * dt
}

/// The players' guns: a ship holding fire shoots a missile to the right
/// every `fire_interval`. Reads `Player`, `Position`, `Controls`; writes
/// `Weapon`; spawns through commands.
#[derive(Debug, Default, Clone)]
pub(crate) struct Weapons {
    /// Missiles fired so far.
    pub(crate) fired: u64,
}

impl StatefulSystem for Weapons {
    type Params = (
        Tick,
        Res<'static, Rules>,
        Commands<'static>,
        Query<
            'static,
            (
                &'static Player,
                &'static Position,
                &'static Controls,
                &'static mut Weapon,
            ),
        >,
    );

    fn run(
        &mut self,
        (tick, rules, mut commands, mut ships): <Self::Params as SystemParam>::Item<'_>,
    ) {
        let dt = tick.step as f32;
        let players = rules.shmup.players;
        ships.each(|(player, p, controls, weapon)| {
            if controls.fire && ready(weapon.cooldown, dt) {
                weapon.cooldown += players.fire_interval;
                let at = Position {
                    x: p.x + players.radius + MISSILE_RADIUS,
                    y: p.y,
                };
                let velocity = Velocity {
                    x: players.missile_speed,
                    y: 0.0,
                };
                let faction = Faction::Player(player.index);
                commands.spawn(missile(at, velocity, faction, players.missile_damage));
                self.fired += 1;
            }
            weapon.cooldown = (weapon.cooldown - dt).max(0.0);
        });
    }
}

/// Enemy guns: an enemy on screen fires at the nearest ship every
/// `fire_interval`. Reads `Position`, `Player`, `Collider`; writes
/// `EnemyGun`; spawns through commands.
#[derive(Debug, Default)]
pub(crate) struct EnemyFire {
    /// Missiles fired so far.
    pub(crate) fired: u64,
    ships: Vec<(f32, f32, u8)>,
}

/// A copy for in-memory states: the counter; the ships buffer is
/// rebuilt by every run, so the copy starts it empty.
impl Clone for EnemyFire {
    fn clone(&self) -> Self {
        EnemyFire {
            fired: self.fired,
            ships: Vec::new(),
        }
    }
}

impl StatefulSystem for EnemyFire {
    type Params = (
        Tick,
        Res<'static, Rules>,
        Commands<'static>,
        Query<'static, (Entity, &'static Position, &'static mut EnemyGun)>,
        Query<'static, (&'static Position, &'static Player, &'static Collider)>,
    );

    fn run(
        &mut self,
        (tick, rules, mut commands, mut guns, ships): <Self::Params as SystemParam>::Item<'_>,
    ) {
        let dt = tick.step as f32;
        let enemies = rules.shmup.enemies;
        let arena = rules.shmup.arena;
        self.ships.clear();
        // Ships still in the game (a ship out of lives has no collider).
        ships.each(|(p, player, _)| self.ships.push((p.x, p.y, player.index)));
        let targets = &self.ships;
        let mut fired = 0;
        guns.each(|(_, p, gun)| {
            let fire = ready(gun.cooldown, dt);
            gun.cooldown -= dt;
            if !fire {
                return;
            }
            gun.cooldown += enemies.fire_interval;
            let on_screen =
                (0.0..=arena.width).contains(&p.x) && (0.0..=arena.height).contains(&p.y);
            // The nearest ship; ties go to the lower player number.
            let nearest = targets
                .iter()
                .map(|&(x, y, n)| ((x - p.x).powi(2) + (y - p.y).powi(2), n, x, y))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let (Some((distance2, _, x, y)), true) = (nearest, on_screen) else {
                return;
            };
            let distance = distance2.sqrt().max(1.0);
            let velocity = Velocity {
                x: (x - p.x) / distance * enemies.missile_speed,
                y: (y - p.y) / distance * enemies.missile_speed,
            };
            commands.spawn(missile(
                *p,
                velocity,
                Faction::Enemy,
                enemies.missile_damage,
            ));
            fired += 1;
        });
        self.fired += fired;
    }
}

/// Applies this tick's hits to health; a shielded ship takes none while
/// its shield runs down. Records who destroyed what in `Hits::killed_by`.
/// Writes `Health`, `Hits`, `Shield` (in parallel over entities).
pub(crate) fn damage(
    tick: Tick,
    mut targets: Query<(&mut Health, &mut Hits, Option<&mut Shield>)>,
) {
    let dt = tick.step as f32;
    targets.par_each(|(health, hits, shield)| {
        hits.killed_by = None;
        if let Some(shield) = shield
            && shield.seconds > 0.0
        {
            shield.seconds = (shield.seconds - dt).max(0.0);
            return;
        }
        let before = health.0;
        // Saturating: damage sums near the limits of i32 stay there.
        health.0 = health.0.saturating_sub(hits.damage);
        if before > 0 && health.0 <= 0 {
            hits.killed_by = hits.by;
        }
    });
}

/// Adds the bounty of every enemy destroyed this tick to the score of the
/// player who destroyed it, saturating at `u32::MAX` (4,294,967,295).
/// Reads `Hits`, `Bounty`, `Player`; writes `Score`.
pub(crate) fn score(
    kills: Query<(&Hits, &crate::components::Bounty)>,
    mut players: Query<(&Player, &mut Score)>,
) {
    let mut points = [0u32; 256];
    kills.each(|(hits, bounty)| {
        if let Some(player) = hits.killed_by {
            let p = &mut points[usize::from(player)];
            *p = p.saturating_add(bounty.0);
        }
    });
    players.each(|(player, score)| {
        score.0 = score.0.saturating_add(points[usize::from(player.index)]);
    });
}

/// A ship at 0 health costs a life and comes back at full health behind a
/// shield. After the last life the ship is out: it keeps its score and
/// position but loses its collider, controls, weapon and velocity, so
/// nothing touches, steers or moves it any more. Reads `Player`; writes
/// `Health`, `Shield`, `Lives`; removes through commands.
pub(crate) fn lives(
    rules: Res<Rules>,
    mut commands: Commands,
    mut ships: Query<(Entity, &Player, &mut Health, &mut Shield, &mut Lives)>,
) {
    let players = rules.shmup.players;
    ships.each(|(ship, _, health, shield, lives)| {
        if health.0 <= 0 && lives.0 > 0 {
            lives.0 -= 1;
            if lives.0 > 0 {
                health.0 = players.health;
                shield.seconds = players.shield;
            } else {
                commands.remove::<Collider>(ship);
                commands.remove::<Controls>(ship);
                commands.remove::<Weapon>(ship);
                commands.remove::<Velocity>(ship);
            }
        }
    });
}
