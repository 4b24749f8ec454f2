//! The harness's random draws: every one comes from the runtime's
//! [`Random`](scheduler::Random), keyed by (the [`WorldSeed`](scheduler::WorldSeed), a name,
//! the tick, an entity or a stream number), so a draw does not depend on
//! the thread count, the chunking or which thread ran first.
//!
//! Inside a system, the `Random` parameter: its name is the system's,
//! its seed the `WorldSeed` resource (the scenario seed, inserted when the
//! engine is built). Outside the systems, the same generator serves too,
//! as a stream is a pure function of its key and [`Random::new`](scheduler::Random::new) takes
//! the key's parts directly: the built-in input script, generated on the
//! input thread ([`INPUT`]), and the `particles` scenario's world set-up
//! before the first tick ([`SETUP`]). No system of the harness has
//! those names, so their streams are no system's.
//!
//! This module adds the `f32` draws the scenarios make ([`DrawF32`]).

use scheduler::RandomStream;

/// The name of the built-in input script's draws (keyed by tick, and
/// player as the stream number).
pub(crate) const INPUT: &str = "harness: input script";

/// The name of the draws that place the first particles (tick 0, the
/// particle's number as the stream number).
pub(crate) const SETUP: &str = "harness: particle set-up";

/// `f32` draws from a [`RandomStream`].
pub(crate) trait DrawF32 {
    /// A uniform value in `[0, 1)`, with 24 random bits (an `f32`'s
    /// precision: every value is exact, and 1 is never reached, as it
    /// could be by rounding a 53-bit `f64` draw).
    fn unit(&mut self) -> f32;

    /// A uniform value in `[low, high)` (`low` when they are equal).
    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
}

impl DrawF32 for RandomStream {
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scheduler::Random;

    #[test]
    fn unit_takes_the_top_24_bits_of_the_draw() {
        let mut a = RandomStream::new(7);
        let mut b = a.clone();
        for _ in 0..1000 {
            let bits = b.next_u64() >> 40;
            let u = a.unit();
            assert_eq!(u, bits as f32 / 16_777_216.0);
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn range_stays_in_range_and_streams_depend_on_their_key() {
        let mut s = Random::new(1, INPUT, 3).stream(0);
        for _ in 0..1000 {
            let r = s.range(-3.0, 5.0);
            assert!((-3.0..5.0).contains(&r), "{r}");
        }
        assert_eq!(s.clone().range(2.0, 2.0), 2.0);
        let first = |seed, name, tick, n| Random::new(seed, name, tick).stream(n).next_u64();
        assert_eq!(first(1, INPUT, 3, 0), first(1, INPUT, 3, 0));
        assert_ne!(first(1, INPUT, 3, 0), first(2, INPUT, 3, 0));
        assert_ne!(first(1, INPUT, 3, 0), first(1, SETUP, 3, 0));
        assert_ne!(first(1, INPUT, 3, 0), first(1, INPUT, 4, 0));
        assert_ne!(first(1, INPUT, 3, 0), first(1, INPUT, 3, 1));
    }
}
