//! The spawn queue: the enemies the wave director has planned and spawns
//! has yet to bring in.

use std::collections::TryReserveError;
use std::f32::consts::TAU;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Rules;
use super::flow::waves_planned;
use crate::checksum::Feed;
use ecs_runtime::divergence::Digest;

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

/// Bytes of one enemy planned in the spawn queue: its plan and the
/// digest of the queue from it on.
pub(crate) const PLANNED_BYTES: usize = std::mem::size_of::<Planned>() + 8;

/// Enemies planned by the director, in tick order, and the number of
/// waves planned so far; a resource (kept here rather than in the
/// director's own state so that a snapshot holds it).
///
/// Cheap to clone and to digest, as a rollback save and a per-tick
/// divergence check need: the plan is shared between clones and never
/// changed once made (spawns moves a cursor along it; the director makes
/// a new plan when it plans a wave), and it holds the digest of every
/// suffix, made once with the plan. Saved in snapshot files as the list
/// of the enemies still to come (`planned`) and `waves`.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(try_from = "SavedQueue", into = "SavedQueue")]
pub(crate) struct SpawnQueue {
    plan: Arc<Plan>,
    /// Enemies of the plan already spawned.
    spawned: usize,
    waves: u32,
}

/// A plan: enemies in tick order, and `suffix_digests[i]` the digest of
/// `enemies[i..]` (one more entry than enemies: the empty suffix's).
#[derive(Debug)]
struct Plan {
    enemies: Vec<Planned>,
    suffix_digests: Vec<u64>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            enemies: Vec::new(),
            suffix_digests: vec![0],
        }
    }
}

impl Plan {
    /// The plan of `enemies` (in tick order), its suffixes digested; an
    /// error when the memory of the digests cannot be had.
    fn new(enemies: Vec<Planned>) -> Result<Self, TryReserveError> {
        let mut suffix_digests = Vec::new();
        suffix_digests.try_reserve_exact(enemies.len() + 1)?;
        suffix_digests.resize(enemies.len() + 1, 0);
        for (i, p) in enemies.iter().enumerate().rev() {
            let mut h = Digest::default();
            h.u64(suffix_digests[i + 1]);
            p.feed(&mut h);
            suffix_digests[i] = h.finish();
        }
        Ok(Plan {
            enemies,
            suffix_digests,
        })
    }
}

/// How a [`SpawnQueue`] is written in snapshot files.
#[derive(Serialize, Deserialize)]
struct SavedQueue {
    planned: Vec<Planned>,
    waves: u32,
}

impl TryFrom<SavedQueue> for SpawnQueue {
    type Error = TryReserveError;

    fn try_from(saved: SavedQueue) -> Result<Self, Self::Error> {
        Ok(SpawnQueue {
            plan: Arc::new(Plan::new(saved.planned)?),
            spawned: 0,
            waves: saved.waves,
        })
    }
}

impl From<SpawnQueue> for SavedQueue {
    fn from(queue: SpawnQueue) -> Self {
        SavedQueue {
            planned: queue.planned().to_vec(),
            waves: queue.waves,
        }
    }
}

/// Equal when the same waves are planned and the same enemies are still
/// to come (however many of the plan were spawned).
impl PartialEq for SpawnQueue {
    fn eq(&self, other: &Self) -> bool {
        self.waves == other.waves && self.planned() == other.planned()
    }
}

impl Planned {
    /// Feeds every field (floats by their bit patterns) into `h`.
    fn feed(&self, h: &mut impl Feed) {
        h.u64(self.tick);
        h.u32(self.wave);
        h.f32(self.y);
        h.f32(self.speed);
        match self.sine {
            Some((amplitude, frequency, phase)) => {
                h.u8(1);
                h.f32(amplitude);
                h.f32(frequency);
                h.f32(phase);
            }
            None => h.u8(0),
        }
        h.f32(self.first_shot);
    }
}

impl SpawnQueue {
    /// The waves planned so far.
    pub(crate) fn waves(&self) -> u32 {
        self.waves
    }

    /// The enemies still to come, in tick order.
    pub(crate) fn planned(&self) -> &[Planned] {
        &self.plan.enemies[self.spawned..]
    }

    /// Takes the next enemy off the queue (spawns brought it in).
    ///
    /// # Panics
    ///
    /// When no enemy is still to come.
    pub(super) fn pop_front(&mut self) {
        assert!(!self.planned().is_empty(), "no planned enemy to take");
        self.spawned += 1;
    }

    /// Plans one more wave: `enemies` join those still to come, in tick
    /// order (a stable sort: of two enemies due on one tick, the earlier
    /// planned comes first). Fails, changing nothing, when the memory of
    /// the new plan cannot be had, with its bytes.
    pub(super) fn plan_wave(
        &mut self,
        enemies: impl ExactSizeIterator<Item = Planned>,
    ) -> Result<(), usize> {
        let count = self.planned().len() + enemies.len();
        let mut next = Vec::new();
        let plan = next
            .try_reserve_exact(count)
            .and_then(|()| {
                next.extend_from_slice(self.planned());
                next.extend(enemies);
                next.sort_by_key(|p| p.tick);
                Plan::new(next)
            })
            .map_err(|_| count * PLANNED_BYTES)?;
        self.plan = Arc::new(plan);
        self.spawned = 0;
        self.waves += 1;
        Ok(())
    }

    /// Feeds the waves planned, the number of enemies still to come and
    /// the digest of their plans (every field, floats by their bit
    /// patterns, in queue order) into `h`: what divergence diagnosis
    /// compares.
    pub(crate) fn feed(&self, h: &mut impl Feed) {
        h.u32(self.waves);
        h.u64(self.planned().len() as u64);
        h.u64(self.plan.suffix_digests[self.spawned]);
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
        if self.planned().len() as u64 > most {
            return Err(format!(
                "{} enemies planned, more than {most} ({} waves of {})",
                self.planned().len(),
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
        for (item, p) in self.planned().iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn enemy(tick: u64, wave: u32, y: f32) -> Planned {
        Planned {
            tick,
            wave,
            y,
            speed: 100.0,
            sine: (wave % 2 == 1).then_some((10.0, 0.5, 1.0)),
            first_shot: 0.25,
        }
    }

    fn digest(queue: &SpawnQueue) -> u64 {
        let mut h = Digest::default();
        queue.feed(&mut h);
        h.finish()
    }

    /// A queue of two overlapping waves with two enemies spawned.
    fn two_waves() -> SpawnQueue {
        let mut queue = SpawnQueue::default();
        queue
            .plan_wave([0, 10, 20].map(|t| enemy(t, 0, t as f32)).into_iter())
            .unwrap();
        queue.pop_front();
        queue
            .plan_wave([5, 10, 15].map(|t| enemy(t, 1, -(t as f32))).into_iter())
            .unwrap();
        queue.pop_front();
        queue
    }

    #[test]
    fn a_new_wave_joins_in_tick_order_and_spawns_walk_the_plan() {
        let queue = two_waves();
        let due: Vec<(u64, u32)> = queue.planned().iter().map(|p| (p.tick, p.wave)).collect();
        // Of the two enemies due on tick 10, wave 0's was planned first.
        assert_eq!(due, [(10, 0), (10, 1), (15, 1), (20, 0)]);
        assert_eq!(queue.waves(), 2);
    }

    #[test]
    fn clones_share_the_plan_and_a_spawn_in_one_leaves_the_other() {
        let mut queue = two_waves();
        let saved = queue.clone();
        assert!(Arc::ptr_eq(&queue.plan, &saved.plan));
        queue.pop_front();
        assert_eq!(queue.planned().len(), 3);
        assert_eq!(saved.planned().len(), 4);
        assert_ne!(queue, saved);
        assert_ne!(digest(&queue), digest(&saved));
    }

    #[test]
    fn the_digest_depends_on_what_is_to_come_not_on_how_it_was_planned() {
        let queue = two_waves();
        // The same enemies to come, in one plan with nothing spawned (as
        // a snapshot file loads them).
        let saved = SavedQueue::from(queue.clone());
        let loaded = SpawnQueue::try_from(saved).unwrap();
        assert_eq!(loaded.spawned, 0);
        assert_eq!(loaded, queue);
        assert_eq!(digest(&loaded), digest(&queue));
        // One field of one enemy to come differs: so do the digests.
        let mut planned = queue.planned().to_vec();
        planned[2].first_shot = 0.5;
        let other = SpawnQueue::try_from(SavedQueue { planned, waves: 2 }).unwrap();
        assert_ne!(digest(&other), digest(&queue));
        // The waves planned count too.
        let fewer = SpawnQueue {
            waves: 1,
            ..queue.clone()
        };
        assert_ne!(digest(&fewer), digest(&queue));
    }

    #[test]
    #[should_panic(expected = "no planned enemy to take")]
    fn taking_from_an_empty_queue_panics() {
        SpawnQueue::default().pop_front();
    }
}
