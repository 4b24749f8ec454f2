//! What a loaded snapshot must be, before the engine takes it: the run's
//! identity, one command reserve per buffer, and every field of the world
//! within what the scenario's rules can produce. A damaged file is caught
//! by the snapshot's checksums; these checks catch a file that is sound
//! but does not fit this run (edited and resealed, or written by another
//! build), so that it is refused instead of run to a wrong checksum or a
//! stall.

use std::f32::consts::TAU;

use command_buffer::ReserveState;
use ecs_engine::{Component, Registry};
use ecs_runtime::Engine;

use super::{RunInfo, decode_reserves};
use crate::RunConfig;
use crate::components::{
    Bounty, Collider, Controls, Damage, Enemy, EnemyGun, Faction, Health, Hits, Lives, Missile,
    Particle, Player, Position, Score, Shield, SineWave, Velocity, Weapon,
};
use crate::scenario::ScenarioKind;
use crate::shmup::{MISSILE_RADIUS, Rules, SpawnQueue};

/// The snapshot's rules, seed and scale are this run's: when the identity
/// hash differs, the message names the first field that does.
pub(super) fn identity(found: &RunInfo, wanted: &RunInfo, scenario: &str) -> Result<(), String> {
    if found.identity == wanted.identity
        && super::identity(&found.rules, found.seed, found.scale) == found.identity
    {
        return Ok(());
    }
    let value = |rules: &[(String, String)], field: &str| {
        rules
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, v)| v.clone())
    };
    let world = |rules: &[(String, String)]| {
        rules
            .iter()
            .find(|(f, _)| f != "tick_rate")
            .and_then(|(f, _)| f.split(['.', '[']).next().map(str::to_owned))
    };
    if world(&found.rules) != world(&wanted.rules) {
        return Err(format!(
            "taken from scenario `{}`, a `{}` world, but this run's scenario `{scenario}` is a `{}` world",
            found.scenario,
            world(&found.rules).unwrap_or_default(),
            world(&wanted.rules).unwrap_or_default()
        ));
    }
    let mut fields: Vec<&String> = found
        .rules
        .iter()
        .chain(&wanted.rules)
        .map(|(f, _)| f)
        .collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let (a, b) = (value(&found.rules, field), value(&wanted.rules, field));
        if a != b {
            let shown = |v: Option<String>| v.unwrap_or_else(|| "absent".into());
            return Err(format!(
                "taken with other rules: field `{field}` is {} in the snapshot (of scenario `{}`), \
                 but {} in this run's scenario `{scenario}`",
                shown(a),
                found.scenario,
                shown(b)
            ));
        }
    }
    if found.seed != wanted.seed {
        return Err(format!(
            "taken with seed {}, but this run is with seed {} (--seed)",
            found.seed, wanted.seed
        ));
    }
    if found.scale != wanted.scale {
        return Err(format!(
            "taken with scale {}, but this run is with scale {} (--scale)",
            found.scale, wanted.scale
        ));
    }
    Err(format!(
        "its identity hash {:#018x} does not match its rules, seed and scale ({:#018x})",
        found.identity, wanted.identity
    ))
}

/// The saved reserves, one for each system of the engine that has a
/// command buffer and none other, each handle a reserved slot of the
/// snapshot: so every buffer gets the loaded allocator's handles.
pub(super) fn reserves(
    engine: &Engine,
    scratch: &Registry,
    info: &RunInfo,
) -> Result<Vec<(String, ReserveState)>, String> {
    let mut wanted: Vec<String> = engine
        .schedule()
        .command_reserves()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let mut found: Vec<String> = info.reserves.iter().map(|r| r.system.clone()).collect();
    wanted.sort();
    found.sort();
    if found != wanted {
        return Err(format!(
            "field `reserves` of resource `Run` lists the systems {found:?}, \
             but the systems with commands are {wanted:?}"
        ));
    }
    let slots = scratch.entities().slot_count() as u64;
    for saved in &info.reserves {
        if saved.last_spawns > slots || saved.handles.len() as u64 > slots {
            return Err(format!(
                "reserve of system `{}`: {} handles and {} spawns in its last batch, \
                 but the world has {slots} slots",
                saved.system,
                saved.handles.len(),
                saved.last_spawns
            ));
        }
    }
    decode_reserves(info)
}

/// Checks every value of pool `T` (`name` in the messages).
fn each<T: Component>(
    registry: &Registry,
    name: &str,
    mut ok: impl FnMut(&T) -> Result<(), String>,
) -> Result<(), String> {
    let Some(pool) = registry.pool::<T>() else {
        return Ok(());
    };
    for (item, value) in pool.components().iter().enumerate() {
        ok(value).map_err(|m| format!("component `{name}`, item {item}: {m}"))?;
    }
    Ok(())
}

/// No value of `T` in the world: it does not belong to it.
fn none<T: Component>(registry: &Registry, name: &str, world: &str) -> Result<(), String> {
    match registry.pool::<T>().map_or(0, |p| p.len()) {
        0 => Ok(()),
        n => Err(format!(
            "component `{name}` ({n} values) does not belong to a {world} world"
        )),
    }
}

fn finite(v: f32) -> bool {
    v.is_finite()
}

/// `v` between `low` and `high`, within a float's width.
fn between(v: f32, low: f32, high: f32) -> bool {
    let slack = 1e-5 * (low.abs() + high.abs() + 1.0);
    v.is_finite() && v >= low - slack && v <= high + slack
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

/// Every component and resource of the scratch world against the rules.
pub(super) fn world(
    engine: &Engine,
    scratch: &Registry,
    info: &RunInfo,
    config: &RunConfig,
) -> Result<(), String> {
    let finite_pair = |x: f32, y: f32| {
        check(finite(x) && finite(y), || {
            format!("({x}, {y}) is not finite")
        })
    };
    each::<Position>(scratch, "Position", |p| finite_pair(p.x, p.y))?;
    each::<Velocity>(scratch, "Velocity", |v| finite_pair(v.x, v.y))?;
    match config.scenario.kind() {
        ScenarioKind::Shmup(_) => {
            let rules = engine
                .registry()
                .resource::<Rules>()
                .ok_or("the engine has no shoot'em up rules")?;
            let queue = scratch
                .resource::<SpawnQueue>()
                .ok_or("no `SpawnQueue` resource in a shoot'em up snapshot")?;
            queue
                .check(rules, config.scenario.step(), info.ticks)
                .map_err(|m| format!("resource `SpawnQueue`: {m}"))?;
            none::<Particle>(scratch, "Particle", "shoot'em up")?;
            shmup_components(scratch, rules, queue.waves(), info.ticks)
        }
        ScenarioKind::Particles(p) => {
            for (name, n) in [
                ("Player", scratch.pool::<Player>().map_or(0, |p| p.len())),
                ("Enemy", scratch.pool::<Enemy>().map_or(0, |p| p.len())),
                ("Missile", scratch.pool::<Missile>().map_or(0, |p| p.len())),
            ] {
                check(n == 0, || {
                    format!("component `{name}` ({n} values) does not belong to a particle world")
                })?;
            }
            let count = u64::from(p.count) * u64::from(config.scale);
            let alive = scratch.len() as u64;
            check(alive == count, || {
                format!("{alive} entities, but the particle world keeps {count}")
            })
        }
        ScenarioKind::Movers(_) => {
            none::<Player>(scratch, "Player", "movers")?;
            none::<Enemy>(scratch, "Enemy", "movers")?;
            none::<Particle>(scratch, "Particle", "movers")
        }
    }
}

fn shmup_components(r: &Registry, rules: &Rules, waves: u32, ticks: u64) -> Result<(), String> {
    let (arena, p, e) = (rules.shmup.arena, rules.shmup.players, rules.shmup.enemies);
    // Between ticks, cleanup has removed what left the arena's margin.
    let reach = arena.margin + e.radius.max(p.radius);
    each::<Position>(r, "Position", |q| {
        check(
            between(q.x, -reach, arena.width + reach) && between(q.y, -reach, arena.height + reach),
            || format!("({}, {}) is outside the arena and its margin", q.x, q.y),
        )
    })?;
    let player = |n: u8| n < p.count;
    each::<Player>(r, "Player", |q| {
        check(player(q.index), || format!("no player {}", q.index))
    })?;
    each::<Faction>(r, "Faction", |f| match *f {
        Faction::Player(n) => check(player(n), || format!("no player {n}")),
        Faction::Enemy => Ok(()),
    })?;
    each::<Hits>(r, "Hits", |h| {
        let by = |n: Option<u8>| n.is_none_or(player);
        check(by(h.by) && by(h.killed_by), || {
            format!("{h:?} names no player")
        })
    })?;
    each::<Lives>(r, "Lives", |l| {
        check(l.0 <= p.lives, || {
            format!("{} lives, more than {}", l.0, p.lives)
        })
    })?;
    each::<Controls>(r, "Controls", |c| {
        let unit = |d: i8| (-1..=1).contains(&d);
        check(unit(c.dx) && unit(c.dy), || {
            format!("direction ({}, {})", c.dx, c.dy)
        })
    })?;
    let most = p.health.max(e.health).max(1);
    each::<Health>(r, "Health", |h| {
        check(h.0 <= most, || {
            format!("{} hit points, more than {most}", h.0)
        })
    })?;
    let damages = [
        p.contact_damage,
        p.missile_damage,
        e.contact_damage,
        e.missile_damage,
    ];
    each::<Damage>(r, "Damage", |d| {
        check(damages.contains(&d.0), || {
            format!("damage {} is none of the rules'", d.0)
        })
    })?;
    let radii = [p.radius, e.radius, MISSILE_RADIUS];
    each::<Collider>(r, "Collider", |c| {
        check(radii.contains(&c.radius), || {
            format!("radius {} is none of the rules'", c.radius)
        })
    })?;
    each::<Bounty>(r, "Bounty", |b| {
        check(b.0 == e.bounty, || {
            format!("bounty {}, but the rules give {}", b.0, e.bounty)
        })
    })?;
    each::<Enemy>(r, "Enemy", |q| {
        check(q.wave < waves, || {
            format!("wave {} is not planned yet", q.wave)
        })
    })?;
    each::<Shield>(r, "Shield", |s| {
        check(between(s.seconds, 0.0, p.shield), || {
            format!("{} s of shield", s.seconds)
        })
    })?;
    each::<Weapon>(r, "Weapon", |w| {
        check(between(w.cooldown, 0.0, p.fire_interval), || {
            format!("cooldown {} s", w.cooldown)
        })
    })?;
    each::<EnemyGun>(r, "EnemyGun", |g| {
        // It runs down a step a tick below 0 when the interval is
        // shorter than a step: finite, and never above the interval.
        check(
            finite(g.cooldown) && g.cooldown <= e.fire_interval + 1e-3,
            || format!("cooldown {} s", g.cooldown),
        )
    })?;
    each::<SineWave>(r, "SineWave", |s| {
        check(
            finite(s.base_y)
                && between(s.amplitude, e.amplitude_min, e.amplitude_max)
                && between(s.frequency, e.frequency_min, e.frequency_max)
                && between(s.phase, 0.0, TAU)
                && s.start_tick < ticks,
            || format!("{s:?} is outside the rules"),
        )
    })?;
    each::<Score>(r, "Score", |_| Ok(()))
}
