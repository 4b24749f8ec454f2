//! Deterministic random numbers: [`Random`], a system parameter whose
//! streams are keyed by (world seed, system, tick, entity or stream
//! number), so a parallel walk draws the same numbers for the same entity
//! whatever the thread count or the chunking.
//!
//! The generator is SplitMix64 (Guy L. Steele Jr., Doug Lea and
//! Christine H. Flood, "Fast Splittable Pseudorandom Number Generators",
//! OOPSLA 2014; the constants are those of Sebastiano Vigna's public
//! domain `splitmix64.c`): a 64-bit counter advanced by the golden-ratio
//! gamma, each output the counter passed through a 64-bit finaliser. The
//! same finaliser mixes the parts of a key into a stream's start, so two
//! keys that differ in any part start unrelated streams. Nothing is kept
//! between runs: a stream is a pure function of its key, so there is no
//! state to save beyond the [`WorldSeed`] resource.

use ecs_engine::{Access, Entity};

use crate::{ResourceAccess, SystemAccess, SystemContext, SystemError, SystemParam};

/// The seed every [`Random`] stream derives from: a resource (0 when the
/// registry has none). Saved with the registry's state when its clone is
/// registered (`Engine` registers it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct WorldSeed(pub u64);

/// SplitMix64's increment: 2^64 divided by the golden ratio, odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser (a variant of MurmurHash3's `fmix64`).
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a system name: a key part that does not depend on the
/// registration order.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

/// A system parameter: the random streams of this system in this tick,
/// keyed by ([`WorldSeed`], the system's name, the tick number). Copy it
/// into a parallel walk and take one stream per entity with
/// [`entity`](Self::entity): the numbers an entity gets do not depend on
/// the thread count, the chunking or the order of the walk. Reads the
/// `WorldSeed` resource if there is one (ordered after its writers).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry};
/// use scheduler::{Query, Random, Schedule, Tick, WorldSeed};
///
/// struct Jitter(f64);
///
/// fn jitter(mut q: Query<(Entity, &mut Jitter)>, random: Random) {
///     q.par_each(|(e, j)| j.0 += random.entity(e).next_f64());
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(WorldSeed(42));
/// let e = registry.spawn((Jitter(0.0),));
/// let mut builder = Schedule::builder();
/// builder.add(jitter);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// let drawn = Random::new(42, "jitter", 0).entity(e).next_f64();
/// assert_eq!(registry.get::<Jitter>(e).unwrap().0, drawn);
/// assert!((0.0..1.0).contains(&drawn));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Random {
    key: u64,
}

impl Random {
    /// The streams of system `system` in tick number `tick` under `seed`
    /// (what the parameter holds; for tests and tools).
    pub fn new(seed: u64, system: &str, tick: u64) -> Random {
        let key = mix(mix(mix(seed) ^ name_hash(system)) ^ tick);
        Random { key }
    }

    /// The stream of `entity` (by its handle, generation included).
    pub fn entity(&self, entity: Entity) -> RandomStream {
        self.stream(entity.to_bits())
    }

    /// One 64-bit draw keyed by `entity` (its handle, generation
    /// included): a single SplitMix64 finaliser of the key and the
    /// handle, a third of the cost of the first draw of
    /// [`entity`](Self::entity)'s stream (which starts with two mixes).
    /// For a yes-or-no choice made for each of many entities in a walk;
    /// the entity's stream is another source, for its further draws.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Entity, Registry};
    /// use scheduler::Random;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn(());
    /// let random = Random::new(7, "cull", 3);
    /// // One in ten entities, the same ones on every thread count.
    /// let threshold = u64::MAX / 10;
    /// let culled = random.entity_u64(e) < threshold;
    /// assert_eq!(culled, Random::new(7, "cull", 3).entity_u64(e) < threshold);
    /// assert_ne!(random.entity_u64(e), Random::new(7, "cull", 4).entity_u64(e));
    /// ```
    #[inline]
    pub fn entity_u64(&self, entity: Entity) -> u64 {
        mix(self.key ^ entity.to_bits())
    }

    /// Stream number `n`: for draws tied to something else than an
    /// entity (a chunk index, a spawn number). Streams `n` and
    /// `entity(e)` with `e.to_bits() == n` are the same stream.
    pub fn stream(&self, n: u64) -> RandomStream {
        RandomStream::new(mix(self.key ^ mix(n.wrapping_add(GAMMA))))
    }
}

impl SystemParam for Random {
    type Item<'s> = Random;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<WorldSeed>(Access::Read).optional());
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        let seed = super::absent_as_none(ctx.resource::<WorldSeed>())?.map_or(0, |s| s.0);
        Ok(Random::new(seed, ctx.system_name(), ctx.tick().number))
    }
}

/// One SplitMix64 stream: 64-bit draws, 2^64 of them before it repeats.
///
/// # Examples
///
/// ```
/// use scheduler::RandomStream;
///
/// // The reference output of splitmix64.c seeded with 0.
/// assert_eq!(RandomStream::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RandomStream {
    state: u64,
}

impl RandomStream {
    /// The stream whose counter starts at `state` (splitmix64.c's seed).
    pub fn new(state: u64) -> RandomStream {
        RandomStream { state }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A number in `[0, 1)`, from the top 53 bits of the next draw
    /// (every multiple of 2^-53 equally likely).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A number in `0..n` (the top 64 bits of the draw times `n`: a bias
    /// below `n / 2^64`).
    ///
    /// # Panics
    ///
    /// When `n` is 0.
    #[track_caller]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "RandomStream::below(0): the range is empty");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}
