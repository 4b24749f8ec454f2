//! Divergence diagnosis: where two runs that should be identical first
//! differ, and which systems could have caused it.
//!
//! A [`Digests`] lists what to compare: the live entities (always), then
//! each component type, resource and event channel the caller registers,
//! with a function
//! that feeds a value's fields into a [`Digest`] (a [`Feed`], as the
//! checksum's `Fnv1a` is, so one function per type can serve both; floats
//! by their bit patterns). [`Digests::diverged`] compares two
//! engines that have run the same number of ticks: the first part (in
//! registration order) whose digest differs is the divergence, with the
//! first entity in it (in dense order: the first whose value differs or
//! that only one run has; with equal entries in another order, the first
//! position where the orders part) and the systems that could have
//! changed it in that tick: those that write the type, those that record
//! commands (which may spawn, insert or remove), exclusive systems, and,
//! for a resource, those that read it (a `Mutex` or an atomic inside
//! changes through `Res`), for an event channel, those that send events
//! of its type, each with its wave. Startup systems are not
//! listed, and a component type is only compared if registered (the
//! `Disabled` marker included). [`lockstep`] ticks two engines
//! side by side and stops at the first divergence.
//!
//! A component type's digest walks its pool in dense order (each entry's
//! handle bits, then its value's fed fields), so it also catches two runs
//! whose pools hold the same values in another order: later walks would
//! visit them in another order, a common source of float drift. Values of
//! 32 bits or fewer are packed two to a word, so what tells values apart
//! is the values fed, not their types: a feed whose fields vary with the
//! value feeds first what decides them (an enum's variant, an option's
//! presence, a list's length), never skips an absent field silently.
//!
//! # Examples
//!
//! ```
//! use ecs_runtime::divergence::{Digests, Feed, lockstep};
//! use ecs_runtime::prelude::*;
//!
//! struct Heat(u32);
//!
//! fn warm(mut q: Query<&mut Heat>) {
//!     q.each(|h| h.0 += 1);
//! }
//!
//! let make = |threads| {
//!     let mut builder = Engine::builder();
//!     builder.threads(threads);
//!     builder.add_system(warm);
//!     for i in 0..10 {
//!         builder.registry_mut().spawn((Heat(i),));
//!     }
//!     builder.build().unwrap()
//! };
//! let digests = Digests::new().component::<Heat>(|h, hash| hash.u32(h.0));
//! let (mut one, mut four) = (make(1), make(4));
//! assert!(lockstep(&mut one, &mut four, 50, &digests).unwrap().is_none());
//! assert_eq!(one.ticks(), 50);
//! ```

use std::any::{TypeId, type_name};
use std::collections::{HashMap, HashSet};
use std::fmt;

use ecs_engine::{Access, Component, ComponentKey, Entity, Registry};
use rayon::prelude::*;
use scheduler::{EventKey, Events, SystemAccess, SystemId, short_name};

pub use crate::checksum::Feed;
use crate::{Engine, EngineError};

/// The hash of a divergence digest: 64 bits, one multiply per 64-bit
/// word fed (the rotate-xor-multiply step of rustc's FxHash) in four lanes
/// taken in turn, so consecutive words do not wait for each other; values
/// of 32 bits or fewer (`u8`, `u32`, `i32`, `f32`) are packed two to a
/// word. Several times as fast as the checksum's byte-wise FNV-1a, which
/// a check run on every tick needs. Not a stable format: only two digests
/// made by one build are compared.
///
/// What is hashed is the values fed, not their types (a `u8` and a `u32`
/// of the same value hash alike, where the checksum's bytes differ in
/// length), so a feed must be self-delimiting: one whose fields vary with
/// the value feeds first what decides them (an enum's variant, an
/// option's presence, a list's length), as the harness's do. A feed that
/// skips an absent field instead may digest two different values alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Digest {
    lanes: [u64; 4],
    words: u64,
    /// The words that held one 32-bit value alone.
    lone_halves: u64,
    /// A value of 32 bits fed last, waiting for the next to share its word.
    half: Option<u32>,
}

impl Digest {
    const K: u64 = 0xF135_7AEA_2E62_A9C5;
    /// Marks a word that holds one 32-bit value alone.
    const LONE_HALF: u64 = 1 << 63;

    #[inline]
    fn mix(h: u64, w: u64) -> u64 {
        (h.rotate_left(26) ^ w).wrapping_mul(Self::K)
    }

    /// Mixes `w` into the lane four words back and moves it to the end:
    /// the lanes turn by value, so a walk keeps them in registers (an
    /// index by word count made the compiler keep them in memory, each
    /// word waiting for the store of the one four before it).
    #[inline]
    fn word(&mut self, w: u64) {
        let [a, b, c, d] = self.lanes;
        self.lanes = [b, c, d, Self::mix(a, w)];
        self.words += 1;
    }

    /// Feeds a 32-bit value: the low half of a word, or the high half of
    /// the word the value before it waits in.
    #[inline]
    fn half(&mut self, v: u32) {
        match self.half.take() {
            Some(low) => self.word(u64::from(low) | u64::from(v) << 32),
            None => self.half = Some(v),
        }
    }

    /// Feeds the 32-bit value still waiting for a partner, alone. The
    /// mark alone could equal a pair whose second value is `1 << 31`
    /// (`-0.0`, `i32::MIN`): the count of lone words, hashed at the end,
    /// tells them apart.
    #[inline]
    fn flush(&mut self) {
        if let Some(low) = self.half.take() {
            self.word(u64::from(low) | Self::LONE_HALF);
            self.lone_halves += 1;
        }
    }

    /// The hash of everything fed so far.
    #[inline]
    pub fn finish(&self) -> u64 {
        let mut all = *self;
        all.flush();
        let seed = Self::mix(all.words, all.lone_halves);
        all.lanes.iter().fold(seed, |h, &lane| Self::mix(h, lane))
    }
}

impl Feed for Digest {
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        if bytes.len() < 4 {
            // A few bytes (a tag and a small value, as an option's): a
            // 32-bit value of their own, the length in the top byte.
            let mut v = (bytes.len() as u32) << 24;
            for (i, &b) in bytes.iter().enumerate() {
                v |= u32::from(b) << (8 * i);
            }
            self.half(v);
            return;
        }
        self.flush();
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.word(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length tells `[0]` from `[0, 0]`.
            self.word(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn u8(&mut self, v: u8) {
        self.half(u32::from(v));
    }

    #[inline]
    fn u32(&mut self, v: u32) {
        self.half(v);
    }

    #[inline]
    fn u64(&mut self, v: u64) {
        self.flush();
        self.word(v);
    }
}

/// One part of a world compared by [`Digests`].
struct Part {
    /// What it is, for messages: "component `Position`" (the full type
    /// path when two parts' short names are alike, [`Digests::push`]).
    what: String,
    /// The same with the full type path.
    full: String,
    /// Which systems could change it.
    key: PartKey,
    /// The part's digest in a registry.
    digest: Box<dyn Fn(&Registry) -> u64 + Send + Sync>,
    /// The first entity whose data differs between two registries (or the
    /// first position where one has an entity the other lacks); `None`
    /// for a resource.
    first_entity: Box<FirstEntity>,
}

/// Finds the first entity whose data differs between two registries.
type FirstEntity = dyn Fn(&Registry, &Registry) -> Option<Entity> + Send + Sync;

#[derive(Clone, Copy)]
enum PartKey {
    Entities,
    Component(ComponentKey),
    Resource(TypeId),
    /// The event type (not its channel's).
    Events(TypeId),
}

/// What two runs compare, tick by tick: the live entities, then the
/// registered component types, resources and event channels, in
/// registration order (see
/// the [module docs](self)).
pub struct Digests {
    parts: Vec<Part>,
}

impl fmt::Debug for Digests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = self.parts.iter().map(|p| p.what.as_str()).collect();
        f.debug_struct("Digests").field("parts", &parts).finish()
    }
}

impl Default for Digests {
    fn default() -> Self {
        Self::new()
    }
}

impl Digests {
    /// Compares the live entities (their handles, in the allocator's
    /// order) and nothing else yet.
    pub fn new() -> Self {
        let entities = Part {
            what: "the live entities".to_owned(),
            full: "the live entities".to_owned(),
            key: PartKey::Entities,
            digest: Box::new(|registry| {
                let mut h = Digest::default();
                for entity in registry.entities().iter() {
                    h.u64(entity.to_bits());
                }
                h.finish()
            }),
            first_entity: Box::new(|a, b| {
                let entries =
                    |r: &Registry| r.entities().iter().map(|e| (e, 0)).collect::<Vec<_>>();
                first_difference(&entries(a), &entries(b))
            }),
        };
        Digests {
            parts: vec![entities],
        }
    }

    /// Also compares component type `T`: each pool entry's handle and what
    /// `feed` feeds for its value (every field, floats by
    /// [`Feed::f32`]).
    #[must_use]
    pub fn component<T: Component>(
        mut self,
        feed: impl Fn(&T, &mut Digest) + Send + Sync + Clone + 'static,
    ) -> Self {
        let entry = feed.clone();
        self.push(Part {
            what: format!("component `{}`", short_name(type_name::<T>())),
            full: format!("component `{}`", type_name::<T>()),
            key: PartKey::Component(ComponentKey::Type(TypeId::of::<T>())),
            digest: Box::new(move |registry| {
                let mut h = Digest::default();
                if let Some(pool) = registry.pool::<T>() {
                    // Each entry's handle starts a word of its own, so
                    // entries stay apart in the packed stream.
                    for (entity, value) in pool.entities().iter().zip(pool.components()) {
                        h.u64(entity.to_bits());
                        feed(value, &mut h);
                    }
                }
                h.finish()
            }),
            first_entity: Box::new(move |a, b| {
                let entries = |r: &Registry| {
                    r.pool::<T>()
                        .into_iter()
                        .flat_map(|p| p.iter())
                        .map(|(e, v)| {
                            let mut h = Digest::default();
                            entry(v, &mut h);
                            (e, h.finish())
                        })
                        .collect::<Vec<_>>()
                };
                first_difference(&entries(a), &entries(b))
            }),
        });
        self
    }

    /// Also compares resource `R` (absent and present differ), through
    /// what `feed` feeds for it.
    #[must_use]
    pub fn resource<R: Send + Sync + 'static>(
        mut self,
        feed: impl Fn(&R, &mut Digest) + Send + Sync + 'static,
    ) -> Self {
        self.push(Part {
            what: format!("resource `{}`", short_name(type_name::<R>())),
            full: format!("resource `{}`", type_name::<R>()),
            key: PartKey::Resource(TypeId::of::<R>()),
            digest: Box::new(move |registry| {
                let mut h = Digest::default();
                match registry.resource::<R>() {
                    Some(r) => {
                        h.u8(1);
                        feed(r, &mut h);
                    }
                    None => h.u8(0),
                }
                h.finish()
            }),
            first_entity: Box::new(|_, _| None),
        });
        self
    }

    /// Also compares the channel of events of type `T` (the
    /// [`Events<T>`] resource; absent and present differ): the number of
    /// events sent over its life, then each event it retains, oldest
    /// first, through what `feed` feeds for it. The systems named when it
    /// diverges are those that send `T` events ("sends it"), those that
    /// record commands (which may send them too) and exclusive ones; the
    /// engine's tick-stamped input, which sends between ticks, is none of
    /// them. The cost is one walk of the retained events: about one or two
    /// ticks' worth in a channel whose readers keep up.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_runtime::divergence::{Digests, Feed};
    /// use ecs_runtime::prelude::*;
    ///
    /// struct Hit(u32);
    ///
    /// fn shoot(mut hits: EventWriter<Hit>, tick: Tick) {
    ///     hits.send(Hit(tick.number as u32));
    /// }
    ///
    /// let make = || {
    ///     let mut builder = Engine::builder();
    ///     builder.add_system(shoot).named("shoot");
    ///     builder.build().unwrap()
    /// };
    /// let digests = Digests::new().events::<Hit>(|hit, h| h.u32(hit.0));
    /// let (mut a, mut b) = (make(), make());
    /// a.tick().unwrap();
    /// b.tick().unwrap();
    /// assert_eq!(digests.diverged(&a, &b), None);
    /// // An event one run has and the other has not:
    /// Events::send_to(b.registry_mut(), Hit(7));
    /// let divergence = digests.diverged(&a, &b).unwrap();
    /// assert_eq!(divergence.part, "events `Hit`");
    /// assert_eq!(divergence.suspects[0].system, "shoot");
    /// assert_eq!(divergence.suspects[0].why, "sends it");
    /// ```
    #[must_use]
    pub fn events<T: Send + Sync + 'static>(
        mut self,
        feed: impl Fn(&T, &mut Digest) + Send + Sync + 'static,
    ) -> Self {
        self.push(Part {
            what: format!("events `{}`", short_name(type_name::<T>())),
            full: format!("events `{}`", type_name::<T>()),
            key: PartKey::Events(TypeId::of::<T>()),
            digest: Box::new(move |registry| {
                let mut h = Digest::default();
                match registry.resource::<Events<T>>() {
                    Some(events) => {
                        h.u8(1);
                        h.u64(events.sent());
                        h.u64(events.len() as u64);
                        for event in events.iter() {
                            feed(event, &mut h);
                        }
                    }
                    None => h.u8(0),
                }
                h.finish()
            }),
            first_entity: Box::new(|_, _| None),
        });
        self
    }

    /// Adds `part`; when its short name reads like an earlier part's
    /// (`V` and `other::V`), both are named by their full type paths.
    fn push(&mut self, mut part: Part) {
        for earlier in &mut self.parts {
            if earlier.what == part.what {
                earlier.what.clone_from(&earlier.full);
                part.what.clone_from(&part.full);
            }
        }
        self.parts.push(part);
    }

    /// Each part's digest in `registry`, in order (the live entities
    /// first), the parts digested in parallel on rayon's global pool.
    pub fn of(&self, registry: &Registry) -> Vec<u64> {
        self.parts
            .par_iter()
            .map(|p| (p.digest)(registry))
            .collect()
    }

    /// Where `a` and `b`, two engines that have run the same ticks, first
    /// differ; `None` when every part is equal. The systems named are
    /// `a`'s (both engines are meant to run one schedule).
    ///
    /// # Panics
    ///
    /// When the two engines have run different numbers of ticks
    /// ([`Engine::ticks`]): their worlds are not comparable.
    #[track_caller]
    pub fn diverged(&self, a: &Engine, b: &Engine) -> Option<Divergence> {
        assert_eq!(
            a.ticks(),
            b.ticks(),
            "Digests::diverged: the engines have run different numbers of ticks"
        );
        let (ra, rb) = (a.registry(), b.registry());
        let differ: Vec<bool> = self
            .parts
            .par_iter()
            .map(|p| (p.digest)(ra) != (p.digest)(rb))
            .collect();
        let first = differ.iter().position(|&d| d)?;
        let part = &self.parts[first];
        let tick = a.ticks().checked_sub(1);
        Some(Divergence {
            tick,
            part: part.what.clone(),
            entity: (part.first_entity)(ra, rb),
            suspects: suspects(a, part.key, tick),
        })
    }
}

/// The first entity whose entry differs between two runs' lists of
/// (handle, value digest), in the first list's order: one whose value
/// differs or that only the first run has; else the first that only the
/// second run has; else (the same entries in another order) the first
/// position where the orders part.
fn first_difference(a: &[(Entity, u64)], b: &[(Entity, u64)]) -> Option<Entity> {
    let in_a: HashMap<Entity, u64> = a.iter().copied().collect();
    let in_b: HashMap<Entity, u64> = b.iter().copied().collect();
    a.iter()
        .find(|(e, v)| in_b.get(e) != Some(v))
        .or_else(|| b.iter().find(|(e, _)| !in_a.contains_key(e)))
        .or_else(|| a.iter().zip(b).find(|(x, y)| x != y).map(|(x, _)| x))
        .map(|&(e, _)| e)
}

/// The systems of `engine`'s schedule that ran in frame tick `tick` and
/// could change `key` there: wave by wave, then the systems that ran
/// between waves (state enter and exit systems, one-shot systems,
/// observers; none before the first tick).
fn suspects(engine: &Engine, key: PartKey, tick: Option<u64>) -> Vec<Suspect> {
    let schedule = engine.schedule();
    let ran: HashSet<SystemId> = schedule
        .system_runs()
        .filter(|run| Some(run.tick) == tick)
        .map(|run| run.system)
        .collect();
    let mut out = Vec::new();
    let mut push = |wave, name: &str, access: &SystemAccess| {
        if let Some(why) = why_suspect(access, key) {
            out.push(Suspect {
                wave,
                system: name.to_owned(),
                why,
            });
        }
    };
    for (wave, systems) in schedule.waves().into_iter().enumerate() {
        for (id, name) in systems.into_iter().filter(|(id, _)| ran.contains(id)) {
            push(Some(wave), name, schedule.access(id));
        }
    }
    for (name, access, run) in schedule.runs_between_waves() {
        if run.is_some_and(|run| Some(run.tick) == tick) {
            push(None, name, access);
        }
    }
    out
}

/// Why a system of `access` could change part `key`; `None` when it
/// could not.
fn why_suspect(access: &SystemAccess, key: PartKey) -> Option<&'static str> {
    if access.is_exclusive() {
        return Some("is exclusive");
    }
    match key {
        PartKey::Component(key) if access.component_access(key) == Some(Access::Write) => {
            Some("writes it")
        }
        PartKey::Resource(type_id) if access.allows_resource(type_id, Access::Write) => {
            Some("writes it")
        }
        PartKey::Events(type_id) if access.allows_event(EventKey::Type(type_id), Access::Write) => {
            Some("sends it")
        }
        _ if access.commands() => Some("records commands"),
        // A resource read through `Res` can still change through interior
        // mutability (a `Mutex`, an atomic).
        PartKey::Resource(type_id) if access.allows_resource(type_id, Access::Read) => {
            Some("reads it (interior mutability?)")
        }
        _ => None,
    }
}

/// Where two runs first differ ([`Digests::diverged`], [`lockstep`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The number of the tick after which the runs differ (the
    /// [`Tick::number`](scheduler::Tick) its systems saw); `None` when
    /// they differ before any tick ran.
    pub tick: Option<u64>,
    /// The first part that differs, in [`Digests`] order: "the live
    /// entities", "component `Position`", "resource `Score`", "events
    /// `Hit`".
    pub part: String,
    /// The first entity that differs in it (its handle in the first run),
    /// in the pool's dense order; `None` for a resource.
    pub entity: Option<Entity>,
    /// The systems that ran in that tick and could have changed that
    /// part there (a system skipped by its run condition, or disabled,
    /// is not listed).
    pub suspects: Vec<Suspect>,
}

/// A system that could have changed a part that diverged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    /// Its wave (0 first); `None` for a system that ran between waves
    /// (a state's enter or exit system, a one-shot system, an
    /// observer).
    pub wave: Option<usize>,
    /// Its name.
    pub system: String,
    /// Why: "writes it", "records commands" (which may insert, remove,
    /// spawn or send events), "is exclusive", for a resource "reads it
    /// (interior mutability?)", for an event channel "sends it".
    pub why: &'static str,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tick {
            Some(tick) => write!(f, "the runs differ after tick {tick}: {}", self.part)?,
            None => write!(f, "the runs differ before the first tick: {}", self.part)?,
        }
        if let Some(entity) = self.entity {
            write!(f, ", first at entity {entity}")?;
        }
        if self.suspects.is_empty() {
            return match self.tick {
                Some(_) => write!(f, "; no system that ran then declares a write to it"),
                None => write!(f, "; no system had run yet (set up differently?)"),
            };
        }
        let suspects: Vec<String> = self
            .suspects
            .iter()
            .map(|s| match s.wave {
                Some(wave) => format!("`{}` (wave {wave}, {})", s.system, s.why),
                None => format!("`{}` (between waves, {})", s.system, s.why),
            })
            .collect();
        write!(f, "; could have changed it: {}", suspects.join(", "))
    }
}

/// Ticks `a` and `b` side by side, up to `ticks` times, comparing them
/// with `digests` before the first tick and after each; returns the first
/// [`Divergence`], or `None` when they stayed equal.
///
/// # Errors
///
/// The first [`EngineError`] of either engine's tick (the other engine
/// has then run that tick, or not, as the order `a` then `b` says).
pub fn lockstep(
    a: &mut Engine,
    b: &mut Engine,
    ticks: u64,
    digests: &Digests,
) -> Result<Option<Divergence>, EngineError> {
    if let Some(divergence) = digests.diverged(a, b) {
        return Ok(Some(divergence));
    }
    for _ in 0..ticks {
        a.tick()?;
        b.tick()?;
        if let Some(divergence) = digests.diverged(a, b) {
            return Ok(Some(divergence));
        }
    }
    Ok(None)
}
