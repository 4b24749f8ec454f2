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
///
/// The costs say what the pool could save, not what it costs on this
/// machine now: on a machine whose cores are busy with other programs,
/// each hand-off to a pool thread waits for the operating system to run
/// it, and a tick on the pool took 4 to 6 times as long as the same tick
/// on the caller's thread (issue 24). So the tick's own wall time is
/// measured where it ran ([`record`](Self::record)), and three pool ticks
/// in a row slower than the caller's thread's send the ticks back to the
/// caller's thread for a while ([`Busy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TickPlacement {
    inline: bool,
    /// Ticks left on the pool before the caller's thread may be tried.
    hold: u32,
    /// The next hold.
    next_hold: u32,
    busy: Busy,
}

impl Default for TickPlacement {
    /// The first tick, with nothing measured, runs on the caller's thread.
    fn default() -> Self {
        TickPlacement {
            inline: true,
            hold: 0,
            next_hold: FIRST_HOLD,
            busy: Busy::default(),
        }
    }
}

impl TickPlacement {
    /// Whether the next tick runs on the caller's thread, from every
    /// system's expected cost and the measured ticks.
    pub(crate) fn next(&mut self, costs: impl Iterator<Item = Duration>) -> bool {
        if self.busy.hold > 0 {
            self.busy.hold -= 1;
            return true;
        }
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

    /// Records a tick's wall time (from its start to its commands
    /// applied), run on the caller's thread (`inline`) or on the pool.
    pub(crate) fn record(&mut self, inline: bool, wall: Duration) {
        self.busy.record(inline, wall);
    }
}

/// Pool ticks slower than the caller's thread's in a row that send the
/// ticks back to the caller's thread.
const SLOW_STRIKES: u32 = 3;
/// A pool tick is slow when it takes longer than the caller's thread's
/// (its recent average) by a quarter and this much.
const SLOW_SLACK: Duration = Duration::from_micros(20);
/// The first stay on the caller's thread after slow pool ticks, in ticks;
/// it doubles each time the pool is still slow when tried again, up to
/// [`MAX_BUSY_HOLD`].
const FIRST_BUSY_HOLD: u32 = 16;
/// The longest stay.
const MAX_BUSY_HOLD: u32 = 1024;
/// Pool ticks in a row at least as fast as the caller's thread after
/// which the stay starts from [`FIRST_BUSY_HOLD`] again.
const GOOD_RESET: u32 = 64;
/// An average of ticks on the caller's thread older than this many ticks
/// is measured again (one tick there) before it may count against the
/// pool: the world may have grown since.
const STALE_INLINE: u32 = 256;

/// The measured side of [`TickPlacement`]: recent wall times per tick on
/// the caller's thread and on the pool (averages that move a quarter of
/// the way to each new tick), and how the pool has compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Busy {
    inline_wall: Option<Duration>,
    /// Ticks since the last on the caller's thread.
    inline_age: u32,
    pool_wall: Option<Duration>,
    strikes: u32,
    good: u32,
    /// Ticks left on the caller's thread whatever the costs say.
    hold: u32,
    next_hold: u32,
}

impl Default for Busy {
    fn default() -> Self {
        Busy {
            inline_wall: None,
            inline_age: 0,
            pool_wall: None,
            strikes: 0,
            good: 0,
            hold: 0,
            next_hold: FIRST_BUSY_HOLD,
        }
    }
}

/// `average` moved a quarter of the way to `sample` (the sample itself
/// when there is no average yet).
fn moved(average: Option<Duration>, sample: Duration) -> Duration {
    match average {
        None => sample,
        Some(a) if sample >= a => a + (sample - a) / 4,
        Some(a) => a - (a - sample) / 4,
    }
}

impl Busy {
    fn record(&mut self, inline: bool, wall: Duration) {
        if inline {
            // An old average says nothing of today's world: replaced.
            let recent = self.inline_wall.filter(|_| self.inline_age <= STALE_INLINE);
            self.inline_wall = Some(moved(recent, wall));
            self.inline_age = 0;
            return;
        }
        self.inline_age = self.inline_age.saturating_add(1);
        let pool = moved(self.pool_wall, wall);
        self.pool_wall = Some(pool);
        let Some(inline_wall) = self.inline_wall else {
            return;
        };
        if pool <= inline_wall + inline_wall / 4 + SLOW_SLACK {
            self.strikes = 0;
            self.good += 1;
            if self.good >= GOOD_RESET {
                self.next_hold = FIRST_BUSY_HOLD;
            }
            return;
        }
        self.good = 0;
        self.strikes += 1;
        if self.strikes < SLOW_STRIKES {
            return;
        }
        self.strikes = 0;
        // The pool is measured afresh when it is tried again.
        self.pool_wall = None;
        if self.inline_age > STALE_INLINE {
            // Too old to judge by: one tick on the caller's thread first.
            self.hold = 1;
        } else {
            self.hold = self.next_hold;
            self.next_hold = (self.next_hold * 2).min(MAX_BUSY_HOLD);
        }
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

    #[test]
    fn slow_pool_ticks_send_the_ticks_to_the_caller_for_a_while_twice_as_long_each_time() {
        let mut placement = TickPlacement::default();
        let mut places = Vec::new();
        // A busy machine: 600 µs on the caller's thread, 3 ms on the pool.
        for tick in 0..80 {
            // The first tick has no measured cost yet.
            let inline = placement.next(us(if tick == 0 { &[] } else { &[500] }));
            places.push(inline);
            placement.record(
                inline,
                Duration::from_micros(if inline { 600 } else { 3_000 }),
            );
        }
        let runs: Vec<(bool, usize)> = places
            .chunk_by(|a, b| a == b)
            .map(|r| (r[0], r.len()))
            .collect();
        // The first tick inline; three slow pool ticks, then 16 inline;
        // three more, then 32 inline.
        assert_eq!(
            runs[..5],
            [(true, 1), (false, 3), (true, 16), (false, 3), (true, 32)]
        );
    }

    #[test]
    fn a_pool_as_fast_as_the_caller_keeps_the_ticks() {
        let mut placement = TickPlacement::default();
        let mut inline_ticks = 0;
        for tick in 0..200 {
            let inline = placement.next(us(if tick == 0 { &[] } else { &[500] }));
            inline_ticks += usize::from(inline);
            // 600 µs on the caller's thread, 350 on the pool (two cores).
            placement.record(
                inline,
                Duration::from_micros(if inline { 600 } else { 350 }),
            );
        }
        assert_eq!(inline_ticks, 1);
    }

    #[test]
    fn an_old_measure_of_the_caller_is_taken_again_before_it_counts() {
        let mut busy = Busy::default();
        busy.record(true, Duration::from_micros(100));
        // 300 pool ticks faster than the caller's thread; then the world
        // grows, and the pool's ticks take 400 µs.
        for _ in 0..300 {
            busy.record(false, Duration::from_micros(90));
        }
        for _ in 0..3 {
            busy.record(false, Duration::from_micros(400));
        }
        // One tick on the caller's thread, not a stay of 16.
        assert_eq!((busy.hold, busy.next_hold), (1, FIRST_BUSY_HOLD));
        busy.hold = 0;
        // Measured again: 900 µs on the caller's thread; the pool wins.
        busy.record(true, Duration::from_micros(900));
        for _ in 0..10 {
            busy.record(false, Duration::from_micros(400));
        }
        assert_eq!((busy.hold, busy.strikes), (0, 0));
    }
}
