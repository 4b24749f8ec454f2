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
/// on the caller's thread (issue 24). So while the costs send ticks to the
/// pool, a few of them are run on each side in turn now and then ([`Busy`]:
/// paired probes, each pool tick beside a caller's-thread tick of about
/// the same world), and a pool slower than the caller's thread sends the
/// ticks back to the caller's thread for a while.
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
        if self.inline {
            // Nothing to compare: a probe under way is dropped.
            self.busy.probe = None;
            self.busy.probing = false;
            return true;
        }
        self.busy.next_inline()
    }

    /// Records a tick's wall time (from its start to its commands
    /// applied), run on the caller's thread (`inline`) or on the pool.
    pub(crate) fn record(&mut self, inline: bool, wall: Duration) {
        self.busy.record(inline, wall);
    }
}

/// Pairs of ticks in a probe: each pair one tick on the caller's thread and
/// one on the pool, back to back (the first pair caller first, the next
/// pool first, and so on, so that a world that grows from tick to tick
/// favours neither side).
const PROBE_PAIRS: u8 = 4;
/// Pairs of a probe whose pool tick must be slow for the pool to be left
/// (and the pool's ticks must be slow in all, by the same measure): one
/// tick stretched by a spawn wave or a preemption decides nothing. Half
/// the pairs, not most: on a busy machine the caller's ticks are
/// preempted too, and a probe whose pool ticks took 4 to 6 times as long
/// in all often had only two slow pairs.
const SLOW_PAIRS: u8 = 2;
/// A pool tick is slow when it takes longer than its pair's tick on the
/// caller's thread by a quarter and this much.
const SLOW_SLACK: Duration = Duration::from_micros(20);
/// Pool ticks before the first probe: the first ones wake the pool's
/// threads, which a probe should not count.
const FIRST_PROBE: u32 = 8;
/// Pool ticks between two probes while the pool keeps up.
const PROBE_EVERY: u32 = 512;
/// The first stay on the caller's thread after a probe found the pool
/// slow, in ticks; it doubles each time the pool is still slow when probed
/// again, up to [`MAX_BUSY_HOLD`].
const FIRST_BUSY_HOLD: u32 = 16;
/// The longest stay.
const MAX_BUSY_HOLD: u32 = 1024;

/// A probe under way: which tick of it comes next, the first tick of the
/// current pair, and how many pairs found the pool slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Probe {
    step: u8,
    first: Duration,
    slow: u8,
    /// The walls so far on the pool and on the caller's thread.
    pool_sum: Duration,
    caller_sum: Duration,
}

impl Probe {
    /// Whether tick `step` of a probe runs on the caller's thread.
    fn inline_at(step: u8) -> bool {
        let pair = step / 2;
        let first_of_pair = step.is_multiple_of(2);
        first_of_pair == pair.is_multiple_of(2)
    }
}

/// The measured side of [`TickPlacement`]: paired probes of the pool
/// against the caller's thread, and the stay on the caller's thread after
/// a probe found the pool slow.
///
/// Comparing the pool's recent ticks with the caller's thread's recent
/// ticks misjudges a world whose cost changes from tick to tick: in the
/// default shoot'em up each wave of 3,000 enemies makes ticks several
/// times as costly, so a pool tick after a wave's spawn looked slow beside
/// the caller's thread's ticks before it, and a 2-thread run spent most of
/// its ticks on the caller's thread (1.0x of one thread instead of 1.1x).
/// A probe compares ticks next to each other instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Busy {
    probe: Option<Probe>,
    /// Whether the tick being run is a probe's.
    probing: bool,
    /// Pool ticks until the next probe.
    until_probe: u32,
    /// Recent pool ticks' wall (an average that moves a quarter of the way
    /// to each), and the caller's thread's at the last probe that found
    /// the pool fast enough: a pool average slower than that (the machine
    /// got busy, or the world grew) starts a probe at once.
    pool_wall: Option<Duration>,
    caller_wall: Option<Duration>,
    /// Ticks left on the caller's thread whatever the costs say.
    hold: u32,
    next_hold: u32,
}

impl Default for Busy {
    fn default() -> Self {
        Busy {
            probe: None,
            probing: false,
            until_probe: FIRST_PROBE,
            pool_wall: None,
            caller_wall: None,
            hold: 0,
            next_hold: FIRST_BUSY_HOLD,
        }
    }
}

/// Whether `pool`, the wall of `ticks` ticks on the pool, is slower than
/// `caller`, that of as many on the caller's thread: longer by a quarter
/// and [`SLOW_SLACK`] per tick.
fn slower(pool: Duration, caller: Duration, ticks: u32) -> bool {
    pool > caller + caller / 4 + SLOW_SLACK * ticks
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
    /// Where a tick the costs send to the pool runs: on the caller's
    /// thread during a stay there and on a probe's caller-side ticks.
    fn next_inline(&mut self) -> bool {
        self.probing = false;
        if self.hold > 0 {
            self.hold -= 1;
            if self.hold == 0 {
                // The stay is over: is the pool still slow?
                self.until_probe = 0;
            }
            return true;
        }
        let slow = match (self.pool_wall, self.caller_wall) {
            (Some(pool), Some(caller)) => slower(pool, caller, 1),
            _ => false,
        };
        if self.probe.is_none() && (self.until_probe == 0 || slow) {
            self.probe = Some(Probe::default());
        }
        match self.probe {
            Some(probe) => {
                self.probing = true;
                Probe::inline_at(probe.step)
            }
            None => {
                self.until_probe -= 1;
                false
            }
        }
    }

    fn record(&mut self, inline: bool, wall: Duration) {
        if !inline {
            self.pool_wall = Some(moved(self.pool_wall, wall));
        }
        if !std::mem::take(&mut self.probing) {
            return;
        }
        let Some(mut probe) = self.probe else {
            return;
        };
        if inline {
            probe.caller_sum += wall;
        } else {
            probe.pool_sum += wall;
        }
        if probe.step.is_multiple_of(2) {
            probe.first = wall;
        } else {
            let (caller, pool) = if inline {
                (wall, probe.first)
            } else {
                (probe.first, wall)
            };
            if slower(pool, caller, 1) {
                probe.slow += 1;
            }
        }
        probe.step += 1;
        if probe.step < 2 * PROBE_PAIRS {
            self.probe = Some(probe);
            return;
        }
        self.probe = None;
        self.until_probe = PROBE_EVERY;
        self.pool_wall = None;
        let pairs = u32::from(PROBE_PAIRS);
        if probe.slow >= SLOW_PAIRS && slower(probe.pool_sum, probe.caller_sum, pairs) {
            self.caller_wall = None;
            self.hold = self.next_hold;
            self.next_hold = (self.next_hold * 2).min(MAX_BUSY_HOLD);
        } else {
            self.caller_wall = Some(probe.caller_sum / pairs);
            self.next_hold = FIRST_BUSY_HOLD;
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

    /// A placement that never probes: for the tests of the costs alone.
    fn costs_only() -> TickPlacement {
        let mut placement = TickPlacement::default();
        placement.busy.until_probe = u32::MAX;
        placement
    }

    #[test]
    fn a_tick_leaves_its_thread_above_80_microseconds_and_comes_back_below_40() {
        let mut placement = costs_only();
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
        let mut placement = costs_only();
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

    /// Runs `ticks` ticks whose systems are expected to cost 500 µs and
    /// whose wall time is `wall(tick, inline)`; returns where each ran.
    fn places(ticks: u64, wall: impl Fn(u64, bool) -> u64) -> (TickPlacement, Vec<bool>) {
        let mut placement = TickPlacement::default();
        let places = (0..ticks)
            .map(|tick| {
                // The first tick has no measured cost yet.
                let inline = placement.next(us(if tick == 0 { &[] } else { &[500] }));
                placement.record(inline, Duration::from_micros(wall(tick, inline)));
                inline
            })
            .collect();
        (placement, places)
    }

    fn pool_ticks(places: &[bool]) -> Vec<usize> {
        (0..places.len()).filter(|&t| !places[t]).collect()
    }

    #[test]
    fn a_slow_pool_sends_the_ticks_to_the_caller_for_a_while_twice_as_long_each_time() {
        // A busy machine: 600 µs on the caller's thread, 3 ms on the pool.
        let (_, places) = places(80, |_, inline| if inline { 600 } else { 3_000 });
        // The first tick inline, 8 on the pool; a probe of 8 ticks (pairs
        // caller-pool, pool-caller, ...) finds the pool slow: 16 ticks on
        // the caller's thread; probed again, then 32.
        let mut expected: Vec<usize> = (1..=8).collect();
        expected.extend([10, 11, 14, 15, 34, 35, 38, 39, 74, 75, 78, 79]);
        assert_eq!(pool_ticks(&places), expected);
    }

    #[test]
    fn a_pool_as_fast_as_the_caller_keeps_the_ticks() {
        // 600 µs on the caller's thread, 350 on the pool (two cores).
        let (placement, places) = places(600, |_, inline| if inline { 600 } else { 350 });
        // The first tick, and a probe's four after 8 on the pool; the
        // next probe comes after 512 pool ticks.
        let inline: Vec<usize> = (0..places.len()).filter(|&t| places[t]).collect();
        assert_eq!(inline, [0, 9, 12, 13, 16, 529, 532, 533, 536]);
        assert_eq!(placement.busy.hold, 0);
    }

    #[test]
    fn a_growing_world_does_not_make_a_fast_pool_look_slow() {
        // Each tick costs more than the one before, and a spawn wave every
        // 100 ticks triples it; the pool takes 0.8 of the caller's time.
        let caller = |tick: u64| (100 + tick) * if tick % 100 >= 50 { 3 } else { 1 };
        let (placement, places) = places(1_000, |tick, inline| {
            if inline {
                caller(tick)
            } else {
                caller(tick) * 4 / 5
            }
        });
        let on_pool = pool_ticks(&places).len();
        assert!(on_pool >= 950, "{on_pool} of 1,000 ticks on the pool");
        assert_eq!(placement.busy.hold, 0);
    }

    #[test]
    fn a_machine_that_gets_busy_is_noticed_within_a_probe() {
        // 350 µs on the pool until tick 200, then 3 ms (other programs
        // took the cores); the caller's thread takes 600 µs throughout.
        let (_, places) = places(260, |tick, inline| match (inline, tick < 200) {
            (true, _) => 600,
            (false, true) => 350,
            (false, false) => 3_000,
        });
        let late_pool: Vec<usize> = pool_ticks(&places)
            .into_iter()
            .filter(|&t| t >= 200)
            .collect();
        // One slow pool tick lifts the pool's average past the caller's
        // thread's at the last probe: a probe (ticks 201 to 208) finds the pool slow, 16 ticks
        // on the caller's thread, and the next probe finds it slow again.
        assert_eq!(late_pool, [200, 202, 203, 206, 207, 226, 227, 230, 231]);
    }
}
