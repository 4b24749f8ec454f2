//! Where a schedule with a pool runs a tick and a wave: from each
//! system's expected cost (its recent runs), a tick too cheap to pay for
//! the pool runs on the caller's thread, and a wave too cheap to pay for
//! parallel tasks runs its systems in turn (see `Schedule::run`).

use std::time::Duration;

/// A tick of a schedule with a pool runs on the caller's thread, with no
/// hand-off to the pool, while its systems' expected costs (each one's
/// recent runs, see [`expected_cost`]) add up to less than this...
pub(crate) const INLINE_TICK_BELOW: Duration = Duration::from_micros(40);
/// ...and goes back to the pool once they add up to more than this (the
/// gap keeps a tick near the line from switching every tick). Where the
/// line lies was measured with the harness on 2 cores: a 1,000-entity
/// `movers` tick (16 µs) ran 0.85x on 2 threads against 1, a 10,000-entity
/// one (55 µs) 1.03x, the default `shmup` tick (250 µs) 1.44x (issue 24).
pub(crate) const PARALLEL_TICK_ABOVE: Duration = Duration::from_micros(80);
/// A wave of several systems runs them as tasks on the pool only when that
/// could save at least this much: the sum of their expected costs less the
/// largest (what the others add to the longest one when run in turn).
/// Below it, handing tasks to other threads and moving their data between
/// cores costs about as much as it saves.
pub(crate) const PARALLEL_WAVE_GAIN: Duration = Duration::from_micros(10);

/// A system's expected cost after a run that took `run`, `previous` being
/// the estimate before it: a shorter run (or the first) is taken at once, a
/// longer one moves the estimate an eighth of the way, so that one run
/// stretched by the operating system (a preemption on a busy machine) does
/// not send the next ticks to the pool, while a system whose work grows
/// reaches its new cost within a few ticks.
pub(crate) fn expected_cost(previous: Duration, run: Duration) -> Duration {
    if previous.is_zero() || run <= previous {
        run
    } else {
        previous + (run - previous) / 8
    }
}

/// Whether running a wave's systems as separate tasks could pay, from
/// their expected costs (see [`PARALLEL_WAVE_GAIN`]).
pub(crate) fn parallel_pays(costs: impl Iterator<Item = Duration>) -> bool {
    let (total, largest) = costs.fold((Duration::ZERO, Duration::ZERO), |(sum, max), cost| {
        (sum + cost, max.max(cost))
    });
    total - largest >= PARALLEL_WAVE_GAIN
}

/// Ticks a schedule stays on the pool after an inline tick turned out to
/// cost more than [`PARALLEL_TICK_ABOVE`], at first; the hold doubles each
/// time it happens again, up to [`MAX_HOLD`].
const FIRST_HOLD: u32 = 8;
/// The longest hold.
const MAX_HOLD: u32 = 1024;

/// Where a schedule with a pool runs its ticks: on the caller's thread
/// while its systems' expected costs add up to less than
/// [`INLINE_TICK_BELOW`] (staying there up to [`PARALLEL_TICK_ABOVE`]),
/// else on the pool. A tick whose systems cost more when run on the
/// caller's thread than on the pool (a system calling `rayon::join` or a
/// parallel iterator of its own, which from outside any pool hands each
/// call to rayon's global pool and waits for it) would otherwise swing
/// between the two every other tick: leaving the caller's thread holds the
/// tick on the pool for a while, twice as long each time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TickPlacement {
    inline: bool,
    /// Ticks left on the pool before the caller's thread may be tried.
    hold: u32,
    /// The next hold.
    next_hold: u32,
}

impl Default for TickPlacement {
    /// The first tick, with nothing measured, runs on the caller's thread.
    fn default() -> Self {
        TickPlacement {
            inline: true,
            hold: 0,
            next_hold: FIRST_HOLD,
        }
    }
}

impl TickPlacement {
    /// Whether the next tick runs on the caller's thread, from every
    /// system's expected cost.
    pub(crate) fn next(&mut self, costs: impl Iterator<Item = Duration>) -> bool {
        let expected: Duration = costs.sum();
        if self.inline {
            if expected > PARALLEL_TICK_ABOVE {
                self.inline = false;
                self.hold = self.next_hold;
                self.next_hold = (self.next_hold * 2).min(MAX_HOLD);
            }
        } else if self.hold > 0 {
            self.hold -= 1;
        } else if expected < INLINE_TICK_BELOW {
            self.inline = true;
        }
        self.inline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(micros: &[u64]) -> impl Iterator<Item = Duration> + '_ {
        micros.iter().map(|&m| Duration::from_micros(m))
    }

    #[test]
    fn a_cost_falls_at_once_and_rises_by_an_eighth() {
        let us = Duration::from_micros;
        assert_eq!(expected_cost(Duration::ZERO, us(500)), us(500));
        assert_eq!(expected_cost(us(20), us(5)), us(5));
        // A 4 ms preemption once: 520 µs, then back down with the next run.
        assert_eq!(expected_cost(us(20), us(4_020)), us(520));
        assert_eq!(expected_cost(us(520), us(21)), us(21));
        // A steady rise is followed.
        let mut cost = us(20);
        for _ in 0..30 {
            cost = expected_cost(cost, us(200));
        }
        assert!(cost > us(195) && cost <= us(200), "{cost:?}");
    }

    #[test]
    fn a_wave_goes_parallel_when_the_others_add_ten_microseconds_to_the_longest() {
        assert!(!parallel_pays(us(&[])));
        assert!(!parallel_pays(us(&[500])));
        assert!(!parallel_pays(us(&[3, 4, 2])));
        assert!(!parallel_pays(us(&[500, 9])));
        assert!(parallel_pays(us(&[500, 10])));
        assert!(parallel_pays(us(&[4, 4, 4, 4])));
    }

    #[test]
    fn a_tick_leaves_its_thread_above_80_microseconds_and_comes_back_below_40() {
        let mut placement = TickPlacement::default();
        // Inline: stays up to 80 µs in all.
        assert!(placement.next(us(&[])));
        assert!(placement.next(us(&[50, 30])));
        assert!(!placement.next(us(&[50, 31])));
        // On the pool: held there for 8 ticks, then back below 40 µs only.
        for _ in 0..8 {
            assert!(!placement.next(us(&[1])));
        }
        assert!(!placement.next(us(&[30, 10])));
        assert!(!placement.next(us(&[60])));
        assert!(placement.next(us(&[30, 9])));
    }

    #[test]
    fn a_tick_that_swings_is_held_on_the_pool_twice_as_long_each_time() {
        let mut placement = TickPlacement::default();
        let mut inline_ticks = Vec::new();
        // Cheap on the pool (20 µs), costly on the caller's thread (5 ms).
        for tick in 0..200 {
            let cost = if placement.inline { 5_000 } else { 20 };
            if placement.next(us(&[cost])) {
                inline_ticks.push(tick);
            }
        }
        // Each try on the caller's thread is one tick, followed by the tick
        // that leaves it and a hold of 8, then 16, 32, 64 ticks.
        assert_eq!(inline_ticks, [9, 27, 61, 127]);
    }
}
