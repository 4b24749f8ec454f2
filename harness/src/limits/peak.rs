//! How big a world gets over a run, from its rules alone: the estimate of
//! the peak that the memory check compares with the budget, and the upper
//! bound on a snapshot's size that `--load` reads at most.

use crate::RunConfig;
use crate::scenario::{Arena, Enemies, Movers, ScenarioKind};
use crate::shmup::{wave_start, waves_planned};

/// Waves looked at, at most, when counting enemies in a window of ticks
/// (the latest ones: earlier waves only add to a lower bound).
const WAVES_LOOKED_AT: u64 = 100_000;

/// Enemies of wave `k`'s `per_wave` spawned by tick `x` (at least: a
/// spawn `i × spacing` seconds after the start is counted once that time
/// is reached, which its rounded tick never comes after).
fn spawned_of_wave(e: &Enemies, step: f64, per_wave: u64, start: u64, x: u64) -> u64 {
    if x < start {
        return 0;
    }
    if e.spawn_spacing <= 0.0 {
        return per_wave;
    }
    let reached = ((x - start) as f64 * step / f64::from(e.spawn_spacing)).floor();
    per_wave.min(reached.min(u64::MAX as f64) as u64 + 1)
}

/// Ticks an enemy stays at least, if none shoots it down: it enters at
/// `width + radius` and goes once past `-margin`, flying at most
/// `speed_max`; `None` when it never leaves (no speed). 0 when the
/// enemies' radius puts them past the margin at once.
fn enemy_lifetime(e: &Enemies, arena: &Arena, step: f64) -> Option<u64> {
    if e.radius > arena.margin {
        return Some(0);
    }
    if e.speed_max <= 0.0 {
        return None;
    }
    let ticks = f64::from(arena.width + e.radius + arena.margin) / (f64::from(e.speed_max) * step);
    Some(ticks.floor().min(u64::MAX as f64) as u64)
}

/// Enemies alive after tick `t` if none is shot down, counting only the
/// share that cannot leave the screen vertically (sine fliers may).
fn enemies_alive_after(e: &Enemies, arena: &Arena, step: f64, per_wave: u64, t: u64) -> u64 {
    let life = enemy_lifetime(e, arena, step);
    if life == Some(0) || per_wave == 0 {
        return 0;
    }
    // Alive after tick t: spawned in t + 1 - life ..= t.
    let gone_by = life
        .and_then(|l| (t + 1).checked_sub(l))
        .and_then(|x| x.checked_sub(1));
    let waves = u64::from(waves_planned(e, step, t.saturating_sub(1), true));
    let mut alive: u64 = 0;
    for k in waves.saturating_sub(WAVES_LOOKED_AT)..waves {
        let start = wave_start(e, step, k as u32);
        let spawned = spawned_of_wave(e, step, per_wave, start, t);
        let gone = gone_by.map_or(0, |x| spawned_of_wave(e, step, per_wave, start, x));
        alive = alive.saturating_add(spawned - gone.min(spawned));
    }
    let reach = 2.0 * e.amplitude_max;
    let [top, bottom] = e.spawn_band;
    let sine_may_leave = arena.height * top - reach < -arena.margin
        || arena.height * bottom + reach > arena.height + arena.margin;
    if sine_may_leave {
        (alive as f64 * f64::from(1.0 - e.sine_share)) as u64
    } else {
        alive
    }
}

/// Enemies planned and not spawned yet after a run of `ticks` ticks, at
/// least: the director plans a whole wave on the tick before it starts,
/// and its enemies come in `spawn_spacing` apart.
pub(super) fn enemies_planned(e: &Enemies, step: f64, per_wave: u64, ticks: u64) -> u64 {
    let Some(last) = ticks.checked_sub(1) else {
        return 0;
    };
    let waves = u64::from(waves_planned(e, step, last, true));
    let mut planned: u64 = 0;
    for k in waves.saturating_sub(WAVES_LOOKED_AT)..waves {
        let start = wave_start(e, step, k as u32);
        // At most every enemy of a wave, when spawns rounds its ticks.
        let spawned = if last >= start {
            let reached = ((last - start) as f64 * step / f64::from(e.spawn_spacing)).ceil();
            if e.spawn_spacing <= 0.0 {
                per_wave
            } else {
                per_wave.min(reached.min(u64::MAX as f64) as u64 + 1)
            }
        } else {
            0
        };
        planned = planned.saturating_add(per_wave - spawned);
    }
    planned
}

/// The most enemies alive at once by the end of a run of `ticks` ticks, at
/// least, if none is shot down (at the last tick, and when the last
/// planned wave has come in).
pub(super) fn enemies_alive(
    e: &Enemies,
    arena: &Arena,
    step: f64,
    per_wave: u64,
    ticks: u64,
) -> u64 {
    let Some(last) = ticks.checked_sub(1) else {
        return 0;
    };
    let waves = waves_planned(e, step, last.saturating_sub(1), true);
    let mut candidates = vec![last];
    if let Some(k) = waves.checked_sub(1) {
        let span = (per_wave.saturating_sub(1) as f64 * f64::from(e.spawn_spacing) / step).ceil();
        let end = wave_start(e, step, k).saturating_add(span.min(u64::MAX as f64) as u64);
        candidates.push(end.min(last));
    }
    candidates
        .into_iter()
        .map(|t| enemies_alive_after(e, arena, step, per_wave, t))
        .max()
        .unwrap_or(0)
}

/// Movers alive after `ticks` ticks of `spawn_per_tick` spawns, at
/// least (the first ones not counted). A mover spawned at tick `t` with
/// number `k` starts at `x = k % 100 + 0.5` with horizontal speed
/// `((t + k) % 7 - 3) × speed`, and is despawned once outside `[min_x,
/// max_x]`: it stays `L` ticks, the ticks its speed takes to cross the
/// distance to the edge it flies to (for ever without speed, none when it
/// starts outside). Over 700 consecutive `k` each pair `(k % 100,
/// (t + k) % 7)` comes once, so each tick's spawns hold
/// `spawn_per_tick / 700` of every pair, and the spawns of all ticks
/// alive at the end add up to `Σ min(L, ticks)` over the pairs.
pub(super) fn movers_alive(m: &Movers, spawn_per_tick: u64, step: f64, ticks: u64) -> u64 {
    let blocks = spawn_per_tick / 700;
    if blocks == 0 {
        return 0;
    }
    let mut ticks_alive: u64 = 0;
    for j in 0..100u32 {
        let x = j as f32 + 0.5;
        if !(m.min_x..=m.max_x).contains(&x) {
            continue;
        }
        for r in 0..7i32 {
            let speed = f64::from(r - 3) * f64::from(m.speed);
            let stays = if speed == 0.0 {
                ticks
            } else {
                let distance = if speed < 0.0 {
                    f64::from(x - m.min_x)
                } else {
                    f64::from(m.max_x - x)
                };
                let l = (distance / (speed.abs() * step)).floor();
                (l.min(u64::MAX as f64) as u64).min(ticks)
            };
            ticks_alive = ticks_alive.saturating_add(stays);
        }
    }
    blocks.saturating_mul(ticks_alive)
}

/// JSON bytes a snapshot spends per entity, at most: every component type
/// of the harness, pretty-printed, with its slot numbers (a saved
/// shoot'em up takes about a fifth of it).
const SNAPSHOT_BYTES_PER_ENTITY: u128 = 2048;
/// Per slot of the allocator: its generation, and its place in a list.
const SNAPSHOT_BYTES_PER_SLOT: u128 = 48;
/// Per enemy planned in the spawn queue.
const SNAPSHOT_BYTES_PER_PLAN: u128 = 512;
/// The rest: the rules, the reserves, the document's frame.
const SNAPSHOT_BYTES_FIXED: u128 = 1 << 20;

/// The largest snapshot a run of `config` can write, bytes: an upper
/// bound from every entity its rules can spawn by tick `config.ticks`
/// (the last tick a snapshot for it may be taken at), in JSON, the larger
/// format. `--load` reads no more.
pub(crate) fn largest_snapshot_bytes(config: &RunConfig) -> u64 {
    let scale = u128::from(config.scale);
    let t = u128::from(config.ticks);
    let step = config.scenario.step();
    let (entities, slots, planned) = match config.scenario.kind() {
        ScenarioKind::Shmup(s) => {
            let e = &s.enemies;
            let per_wave = u128::from(e.per_wave) * scale;
            let waves = u128::from(waves_planned(e, step, config.ticks, true));
            let enemies = per_wave.saturating_mul(waves);
            let players = u128::from(s.players.count);
            // A gun fires at most once a tick.
            let shots = |interval: f32| {
                if interval > 0.0 {
                    let by_time = (t as f64 * step / f64::from(interval)).ceil() as u128 + 1;
                    by_time.min(t + 1)
                } else {
                    0
                }
            };
            let missiles = (players * shots(s.players.fire_interval))
                .saturating_add(enemies.saturating_mul(shots(e.fire_interval)));
            let all = (players + enemies).saturating_add(missiles);
            (all, all, enemies)
        }
        ScenarioKind::Particles(p) => {
            let count = u128::from(p.count) * scale;
            let respawned = (count as f64 * f64::from(p.respawn_share)).ceil() as u128;
            (count, count.saturating_add(respawned.saturating_mul(t)), 0)
        }
        ScenarioKind::Movers(m) => {
            let all =
                (u128::from(m.count) + u128::from(m.spawn_per_tick) * t).saturating_mul(scale);
            (all, all, 0)
        }
    };
    let bytes = entities
        .saturating_mul(SNAPSHOT_BYTES_PER_ENTITY)
        .saturating_add(slots.saturating_mul(SNAPSHOT_BYTES_PER_SLOT))
        .saturating_add(planned.saturating_mul(SNAPSHOT_BYTES_PER_PLAN))
        .saturating_add(SNAPSHOT_BYTES_FIXED);
    u64::try_from(bytes).unwrap_or(u64::MAX)
}
