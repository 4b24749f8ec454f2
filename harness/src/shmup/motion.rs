//! Movement, sine motion and the play area.

use std::f32::consts::TAU;

use scheduler::{Query, Res, Tick};

use super::Rules;
use crate::components::{Player, Position, SineWave, Velocity};

/// Moves everything by its velocity over one fixed step, in parallel.
/// Reads `Velocity`, writes `Position`.
pub(crate) fn movement(tick: Tick, mut bodies: Query<(&mut Position, &Velocity)>) {
    let dt = tick.step as f32;
    bodies.par_each(|(p, v)| {
        p.x += v.x * dt;
        p.y += v.y * dt;
    });
}

/// Puts sine fliers on their curve. Reads `SineWave`, writes `Position`.
pub(crate) fn sine_motion(tick: Tick, mut fliers: Query<(&mut Position, &SineWave)>) {
    let (now, dt) = (tick.number, tick.step);
    fliers.par_each(|(p, s)| {
        let t = (now.saturating_sub(s.start_tick) as f64 * dt) as f32;
        p.y = s.base_y + s.amplitude * (TAU * s.frequency * t + s.phase).sin();
    });
}

/// Keeps the ships inside the screen. Reads `Player`, writes `Position`.
pub(crate) fn play_area(rules: Res<Rules>, mut ships: Query<(&mut Position, &Player)>) {
    let arena = rules.shmup.arena;
    let r = rules.shmup.players.radius;
    ships.each(|(p, _)| {
        p.x = p.x.clamp(r, (arena.width - r).max(r));
        p.y = p.y.clamp(r, (arena.height - r).max(r));
    });
}
