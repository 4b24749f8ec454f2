//! Enemies walking, towers shooting, projectiles flying, and the gold.

use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::Trigger;

use super::components::*;
use super::map::*;

/// Walks every enemy along the path, in parallel.
pub(crate) fn walk(
    tick: Tick,
    path: Res<Path>,
    mut enemies: Query<(&mut PathPos, &mut Position, &Speed, &Lane), With<Enemy>>,
) {
    let dt = tick.step as f32;
    let path = &*path;
    enemies.par_each(|(along, position, speed, lane)| {
        along.0 += speed.0 * dt;
        *position = path.at(along.0, lane.0);
    });
}

/// Counts the enemies new since this system last ran (`Added<Enemy>`).
pub(crate) fn count_new(new: Query<Entity, Added<Enemy>>, mut stats: ResMut<Stats>) {
    stats.seen_added += new.iter().count() as u64;
}

/// Despawns the enemies that reached the exit; each costs a life.
pub(crate) fn leak(
    path: Res<Path>,
    enemies: Query<(Entity, &PathPos), With<Enemy>>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    let end = path.length();
    for (enemy, along) in enemies.iter() {
        if along.0 >= end {
            commands.despawn(enemy);
            stats.leaked += 1;
            stats.lives = (stats.lives - 1).max(0);
        }
    }
}

/// Buckets the enemies into the grid.
pub(crate) fn bucket(enemies: Query<(Entity, &Position), With<Enemy>>, mut grid: ResMut<Grid>) {
    grid.cells.iter_mut().for_each(Vec::clear);
    for (enemy, &position) in enemies.iter() {
        let (cx, cy) = grid.cell_of(position);
        let columns = grid.columns;
        grid.cells[cy * columns + cx].push((enemy, position));
    }
}

/// Cools the towers down and picks a target for each one that is ready:
/// a random enemy in range, from a random cell near it; in parallel.
pub(crate) fn aim(
    grid: Res<Grid>,
    random: Random,
    mut towers: Query<(Entity, &Tower, &Position, &mut Cooldown, &mut Aim)>,
) {
    let grid = &*grid;
    towers.par_each(|(tower_entity, tower, at, cooldown, aim)| {
        aim.0 = None;
        if cooldown.0 > 0 {
            cooldown.0 -= 1;
            return;
        }
        let mut draw = random.entity(tower_entity);
        let reach = (tower.range / CELL).ceil() as isize;
        let (cx, cy) = grid.cell_of(*at);
        let side = 2 * reach + 1;
        // Look at the cells in a random order (a random start, then in
        // turn), the first enemy in range wins.
        let start = (draw.next_u64() % (side * side) as u64) as isize;
        for k in 0..side * side {
            let cell = (start + k) % (side * side);
            let (x, y) = (
                cx as isize + cell % side - reach,
                cy as isize + cell / side - reach,
            );
            if x < 0 || y < 0 || x >= grid.columns as isize || y >= grid.rows as isize {
                continue;
            }
            let bucket = &grid.cells[y as usize * grid.columns + x as usize];
            if bucket.is_empty() {
                continue;
            }
            let (enemy, p) = bucket[(draw.next_u64() % bucket.len() as u64) as usize];
            if (p.x - at.x).hypot(p.y - at.y) <= tower.range {
                aim.0 = Some(enemy);
                return;
            }
        }
    });
}

/// Fires the towers that aimed: a projectile each, spawned through
/// commands, whose handle the tower keeps in [`LastShot`].
pub(crate) fn fire(
    mut towers: Query<(&Tower, &Position, &Aim, &mut Cooldown, &mut LastShot)>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    for (tower, &at, aim, cooldown, last) in towers.iter_mut() {
        let Some(target) = aim.0 else { continue };
        let shot = Projectile {
            target,
            damage: tower.damage,
            speed: 1800.0,
        };
        last.0 = Some(commands.spawn((shot, at)));
        cooldown.0 = tower.reload;
        stats.shots += 1;
    }
}

/// Turns each turret (a child of its tower) towards the tower's last
/// projectile.
pub(crate) fn turn_turrets(
    mut turrets: Query<(&ChildOf, &mut Facing), With<Turret>>,
    towers: Query<(&Position, &LastShot), With<Tower>>,
    projectiles: Query<&Position, With<Projectile>>,
) {
    for (parent, facing) in turrets.iter_mut() {
        let Ok((at, last)) = towers.get(parent.parent()) else {
            continue;
        };
        if let Some(Ok(p)) = last.0.map(|shot| projectiles.get(shot)) {
            facing.0 = (p.y - at.y).atan2(p.x - at.x);
        }
    }
}

/// Mounts a turret on each new tower: the observer of `Hook::Add` on
/// [`Tower`].
pub(crate) fn mount_turret(
    trigger: Res<Trigger>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    commands.entity(trigger.entity).with_children(|children| {
        children.spawn((Turret, Facing(0.0)));
    });
    stats.observed_towers += 1;
}

/// Counts the enemies despawned: the observer of `Hook::Remove` on
/// [`Enemy`].
pub(crate) fn enemy_removed(_trigger: Res<Trigger>, mut stats: ResMut<Stats>) {
    stats.observed_enemy_removals += 1;
}

/// Flies the projectiles towards their targets, in parallel; marks those
/// that hit or lost their target ([`Flight`], written only then).
pub(crate) fn fly(
    tick: Tick,
    mut projectiles: Query<(&Projectile, &mut Position, Mut<Flight>, &mut Ttl), Without<Enemy>>,
    enemies: Query<&Position, With<Enemy>>,
) {
    let dt = tick.step as f32;
    let enemies = &enemies;
    projectiles.par_each(|(shot, at, mut flight, ttl)| {
        if *flight != Flight::Flying {
            return;
        }
        let Ok(target) = enemies.get(shot.target) else {
            *flight = Flight::Fizzled;
            return;
        };
        let (dx, dy) = (target.x - at.x, target.y - at.y);
        let distance = dx.hypot(dy);
        let reach = shot.speed * dt;
        if distance <= reach {
            *at = *target;
            *flight = Flight::Hit;
        } else if ttl.0 == 0 {
            *flight = Flight::Fizzled;
        } else {
            ttl.0 -= 1;
            at.x += dx / distance * reach;
            at.y += dy / distance * reach;
        }
    });
}

/// Lands the projectiles whose flight changed (`Changed<Flight>`): a hit
/// becomes a [`Hit`] event; both kinds are despawned.
pub(crate) fn land(
    landed: Query<(Entity, &Projectile, &Flight), Changed<Flight>>,
    mut hits: EventWriter<Hit>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    for (entity, shot, flight) in landed.iter() {
        match flight {
            Flight::Flying => continue,
            Flight::Hit => {
                hits.send(Hit {
                    target: shot.target,
                    damage: shot.damage,
                });
                stats.hits += 1;
            }
            Flight::Fizzled => stats.fizzled += 1,
        }
        commands.despawn(entity);
    }
}

/// Applies the hits to the enemies' health.
pub(crate) fn damage(hits: EventReader<Hit>, mut enemies: Query<&mut Health, With<Enemy>>) {
    for hit in hits.iter() {
        if let Ok(health) = enemies.get(hit.target) {
            health.0 -= hit.damage;
        }
    }
}

/// The enemies whose health changed since the system last ran.
type Wounded<'a> =
    Query<'a, (Entity, &'static Health, &'static Bounty), (With<Enemy>, Changed<Health>)>;

/// Despawns the enemies whose health changed to 0 or below
/// (`Changed<Health>`), with an [`EnemyDown`] event for the bounty.
pub(crate) fn reap(wounded: Wounded<'_>, mut down: EventWriter<EnemyDown>, mut commands: Commands) {
    for (enemy, health, bounty) in wounded.iter() {
        if health.0 <= 0 {
            commands.despawn(enemy);
            down.send(EnemyDown { bounty: bounty.0 });
        }
    }
}

/// Counts the kills and their gold; buys a tower (the `build_tower`
/// one-shot system) whenever the gold allows, at most one a tick.
pub(crate) fn economy(
    down: EventReader<EnemyDown>,
    shots: Res<OneShots>,
    sizes: Res<Sizes>,
    slots: Res<TowerSlots>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    for kill in down.iter() {
        stats.kills += 1;
        stats.gold += u64::from(kill.bounty);
    }
    // `build_tower` runs after this wave: the next tick sees its tower.
    let room = slots.next < slots.free.len();
    let asked = room && stats.towers_built < u64::from(sizes.buildable_towers);
    if asked && stats.gold >= TOWER_COST {
        stats.gold -= TOWER_COST;
        commands.run_system(shots.build_tower);
    }
}

/// Builds a tower on the next free slot: a one-shot system.
pub(crate) fn build_tower(
    mut slots: ResMut<TowerSlots>,
    mut stats: ResMut<Stats>,
    mut commands: Commands,
) {
    let Some(&slot) = slots.free.get(slots.next) else {
        return;
    };
    let kind = TOWER_KINDS[slots.next % TOWER_KINDS.len()];
    slots.next += 1;
    commands.spawn((kind, slot));
    stats.towers_built += 1;
}
