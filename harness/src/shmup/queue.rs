//! The spawn queue: the enemies the wave director has planned and spawns
//! has yet to bring in.

use std::collections::VecDeque;
use std::f32::consts::TAU;

use serde::{Deserialize, Serialize};

use super::Rules;
use super::flow::waves_planned;
use crate::checksum::Feed;

/// One enemy the director has planned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Planned {
    pub(super) tick: u64,
    pub(super) wave: u32,
    pub(super) y: f32,
    pub(super) speed: f32,
    /// Amplitude (px), frequency (Hz) and phase (rad) of a sine flier.
    pub(super) sine: Option<(f32, f32, f32)>,
    /// Seconds before its first shot.
    pub(super) first_shot: f32,
}

/// Bytes of one enemy planned in the spawn queue.
pub(crate) const PLANNED_BYTES: usize = std::mem::size_of::<Planned>();

/// Enemies planned by the director, in tick order, and the number of
/// waves planned so far; a resource (kept here rather than in the
/// director's own state so that a snapshot holds it).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpawnQueue {
    pub(super) planned: VecDeque<Planned>,
    pub(super) waves: u32,
}

impl SpawnQueue {
    /// The waves planned so far.
    pub(crate) fn waves(&self) -> u32 {
        self.waves
    }

    /// Feeds the waves planned, then each planned enemy in queue order
    /// (every field, floats by their bit patterns), into `h`: what
    /// divergence diagnosis compares.
    pub(crate) fn feed(&self, h: &mut impl Feed) {
        h.u32(self.waves);
        h.u64(self.planned.len() as u64);
        for p in &self.planned {
            h.u64(p.tick);
            h.u32(p.wave);
            h.f32(p.y);
            h.f32(p.speed);
            match p.sine {
                Some((amplitude, frequency, phase)) => {
                    h.u8(1);
                    h.f32(amplitude);
                    h.f32(frequency);
                    h.f32(phase);
                }
                None => h.u8(0),
            }
            h.f32(p.first_shot);
        }
    }

    /// Checks a loaded queue against the rules, after `ticks` ticks run:
    /// the waves planned are the director's, and every planned enemy is
    /// still to come, of a planned wave, in tick order, with values the
    /// rules can draw.
    pub(crate) fn check(&self, rules: &Rules, step: f64, ticks: u64) -> Result<(), String> {
        let e = &rules.shmup.enemies;
        let waves = waves_planned(e, step, ticks.saturating_sub(1), ticks > 0);
        if self.waves != waves {
            return Err(format!(
                "waves planned: {}, but the director plans {waves} by tick {ticks}",
                self.waves
            ));
        }
        let most = u64::from(rules.per_wave) * u64::from(self.waves);
        if self.planned.len() as u64 > most {
            return Err(format!(
                "{} enemies planned, more than {most} ({} waves of {})",
                self.planned.len(),
                self.waves,
                rules.per_wave
            ));
        }
        let height = rules.shmup.arena.height;
        let within = |v: f32, low: f32, high: f32| {
            // The draws are `low + unit × (high - low)`: a float's width
            // of slack.
            let slack = 1e-5 * (low.abs() + high.abs() + 1.0);
            v.is_finite() && v >= low - slack && v <= high + slack
        };
        let mut previous = 0;
        for (item, p) in self.planned.iter().enumerate() {
            let bad = |what: &str| Err(format!("planned enemy {item}: {what}"));
            if p.tick < ticks || p.tick < previous {
                return bad(&format!(
                    "tick {} is past or out of order (the snapshot is at tick {ticks})",
                    p.tick
                ));
            }
            previous = p.tick;
            if p.wave >= self.waves {
                return bad(&format!("wave {} is not planned yet", p.wave));
            }
            let [top, bottom] = e.spawn_band;
            if !within(p.y, height * top, height * bottom)
                || !within(p.speed, e.speed_min, e.speed_max)
                || !within(p.first_shot, 0.0, e.fire_interval)
            {
                return bad("its height, speed or first shot is outside the rules");
            }
            if let Some((amplitude, frequency, phase)) = p.sine
                && (!within(amplitude, e.amplitude_min, e.amplitude_max)
                    || !within(frequency, e.frequency_min, e.frequency_max)
                    || !within(phase, 0.0, TAU))
            {
                return bad("its sine curve is outside the rules");
            }
        }
        Ok(())
    }
}
