//! Divergence diagnosis (`ecs_runtime::divergence`): two engines in
//! lockstep stay equal on 1, 2 and 8 threads, and a planted order
//! dependency is reported with its tick, part, entity and system; so is
//! one planted in an event channel; the digest tells its feeds apart.

use std::sync::atomic::{AtomicI64, Ordering};

use ecs_runtime::divergence::{Digest, Digests, Feed, Suspect, lockstep};
use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::{Hook, Trigger};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(i64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(i64);
#[derive(Clone)]
struct Marked;
#[derive(Debug, Default, Clone, PartialEq)]
struct Moved(i64);

fn movement(mut q: Query<(&mut Position, &Velocity)>, mut moved: ResMut<Moved>) {
    q.par_each(|(p, v)| p.0 += v.0);
    moved.0 += 1;
}

/// Spawns a mover every third tick.
fn spawner(mut commands: Commands, tick: Tick) {
    if tick.number.is_multiple_of(3) {
        commands.spawn((Position(0), Velocity(tick.number as i64)));
    }
}

fn digests() -> Digests {
    Digests::new()
        .component::<Position>(|p, h| h.u64(p.0 as u64))
        .component::<Velocity>(|v, h| h.u64(v.0 as u64))
        .resource::<Moved>(|m, h| h.u64(m.0 as u64))
}

fn engine(threads: usize, extra: impl FnOnce(&mut EngineBuilder)) -> (Engine, Entity) {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.add_system(movement);
    builder.add_system(spawner);
    extra(&mut builder);
    let registry = builder.registry_mut();
    registry.insert_resource(Moved::default());
    for i in 0..2_000 {
        registry.spawn((Position(i), Velocity(i % 7 - 3)));
    }
    let marked = registry.spawn((Position(5), Velocity(1), Marked));
    (builder.build().unwrap(), marked)
}

#[test]
fn equal_runs_stay_equal_on_1_2_and_8_threads() {
    let digests = digests();
    for threads in [2, 8] {
        let (mut one, _) = engine(1, |_| {});
        let (mut many, _) = engine(threads, |_| {});
        assert_eq!(lockstep(&mut one, &mut many, 40, &digests).unwrap(), None);
        assert_eq!(many.ticks(), 40);
        assert_eq!(digests.of(one.registry()), digests.of(many.registry()));
        assert_eq!(digests.of(one.registry()).len(), 4);
    }
}

/// Shared by the two engines of one test: the first to run tick 5 draws
/// 0, the second 1, as a system reading a global would.
static DRAWS: AtomicI64 = AtomicI64::new(0);

/// The planted order dependency: at tick 5, the marked entity's velocity
/// comes from a counter outside the world.
fn planted(mut q: Query<&mut Velocity, With<Marked>>, tick: Tick) {
    if tick.number == 5 {
        q.each(|v| v.0 = DRAWS.fetch_add(1, Ordering::Relaxed));
    }
}

#[test]
fn a_planted_order_dependency_is_named_with_its_tick_part_entity_and_system() {
    let (mut a, marked) = engine(1, |b| {
        b.add_system(planted);
    });
    let (mut b, _) = engine(8, |b| {
        b.add_system(planted);
    });
    let divergence = lockstep(&mut a, &mut b, 40, &digests())
        .unwrap()
        .expect("the planted system diverges");
    // Tick 5 wrote the velocity; positions still agree after it.
    assert_eq!(divergence.tick, Some(5));
    assert_eq!(a.ticks(), 6);
    assert_eq!(divergence.part, "component `Velocity`");
    assert_eq!(divergence.entity, Some(marked));
    let wave_of = |name: &str| {
        a.schedule()
            .waves()
            .iter()
            .position(|w| w.iter().any(|(_, n)| n.ends_with(name)))
            .unwrap()
    };
    let names: Vec<(&str, &str)> = divergence
        .suspects
        .iter()
        .map(|s| (s.system.rsplit("::").next().unwrap(), s.why))
        .collect();
    assert_eq!(
        names,
        [("spawner", "records commands"), ("planted", "writes it")]
    );
    assert_eq!(
        divergence.suspects[1],
        Suspect {
            wave: Some(wave_of("planted")),
            system: divergence.suspects[1].system.clone(),
            why: "writes it",
        }
    );
    let text = divergence.to_string();
    assert!(
        text.starts_with("the runs differ after tick 5: component `Velocity`, first at entity "),
        "{text}"
    );
    assert!(text.contains("planted` (wave "), "{text}");
}

#[test]
fn a_resource_and_the_entities_are_compared_too() {
    let digests = digests();
    let (mut a, _) = engine(1, |_| {});
    let (mut b, _) = engine(1, |_| {});
    b.registry_mut().resource_mut::<Moved>().unwrap().0 = 9;
    let divergence = digests.diverged(&a, &b).unwrap();
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (None, "resource `Moved`")
    );
    assert_eq!(divergence.entity, None);
    // Before the first tick no system ran: none is named.
    assert_eq!(divergence.suspects, []);
    a.tick().unwrap();
    b.tick().unwrap();
    let divergence = digests.diverged(&a, &b).unwrap();
    assert_eq!(divergence.tick, Some(0));
    let writers: Vec<&str> = divergence.suspects.iter().map(|s| s.why).collect();
    // `movement` writes it; `spawner`'s commands could insert or remove it.
    assert_eq!(writers, ["writes it", "records commands"]);

    let (mut c, _) = engine(1, |_| {});
    let extra = c.registry_mut().spawn(());
    let (d, _) = engine(1, |_| {});
    let divergence = digests.diverged(&c, &d).unwrap();
    assert_eq!(divergence.part, "the live entities");
    assert_eq!(divergence.entity, Some(extra));
}

/// Which of two runs a system is in: lets a test make them differ.
struct Run(u8);

/// In run 1 only, at tick 3: despawns the marked entity.
fn despawn_marked(
    q: Query<Entity, With<Marked>>,
    run: Res<Run>,
    tick: Tick,
    mut commands: Commands,
) {
    if run.0 == 1 && tick.number == 3 {
        q.iter().for_each(|e| commands.despawn(e));
    }
}

/// In run 1 only, at tick 3: takes the marked entity's velocity.
fn strip_marked(q: Query<Entity, With<Marked>>, run: Res<Run>, tick: Tick, mut commands: Commands) {
    if run.0 == 1 && tick.number == 3 {
        q.iter().for_each(|e| {
            commands.remove::<Velocity>(e);
        });
    }
}

fn runs(system: impl Fn(&mut EngineBuilder) + Copy) -> (Engine, Engine, Entity) {
    let (mut a, marked) = engine(1, |b| system(b));
    let (mut b, _) = engine(2, |b| system(b));
    a.registry_mut().insert_resource(Run(1));
    b.registry_mut().insert_resource(Run(2));
    (a, b, marked)
}

#[test]
fn a_despawn_or_a_removal_in_one_run_names_that_entity() {
    let (mut a, mut b, marked) = runs(|b| {
        b.add_system(despawn_marked);
    });
    let divergence = lockstep(&mut a, &mut b, 10, &digests()).unwrap().unwrap();
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(3), "the live entities")
    );
    assert_eq!(divergence.entity, Some(marked));

    let (mut a, mut b, marked) = runs(|b| {
        b.add_system(strip_marked);
    });
    let divergence = lockstep(&mut a, &mut b, 10, &digests()).unwrap().unwrap();
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(3), "component `Velocity`")
    );
    assert_eq!(
        divergence.entity,
        Some(marked),
        "not the entry moved into its slot"
    );
}

/// Shared through `Res`, changed through its `Mutex`.
#[derive(Default)]
struct Shared(std::sync::Mutex<u64>);

fn bump_shared(shared: Res<Shared>, run: Res<Run>, tick: Tick) {
    if run.0 == 1 && tick.number == 2 {
        *shared.0.lock().unwrap() += 1;
    }
}

fn drop_moved(run: Res<Run>, tick: Tick, mut commands: Commands) {
    if run.0 == 1 && tick.number == 4 {
        commands.remove_resource::<Moved>();
    }
}

#[test]
fn a_resource_names_its_readers_and_the_systems_with_commands() {
    let shared = digests().resource::<Shared>(|s, h| h.u64(*s.0.lock().unwrap()));
    let (mut a, mut b, _) = runs(|b| {
        b.add_system(bump_shared);
        b.registry_mut().insert_resource(Shared::default());
    });
    let divergence = lockstep(&mut a, &mut b, 10, &shared).unwrap().unwrap();
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(2), "resource `Shared`")
    );
    let why: Vec<(String, &str)> = divergence
        .suspects
        .iter()
        .map(|s| (s.system.rsplit("::").next().unwrap().to_owned(), s.why))
        .collect();
    assert!(
        why.contains(&("bump_shared".to_owned(), "reads it (interior mutability?)")),
        "{why:?}"
    );

    let (mut a, mut b, _) = runs(|b| {
        b.add_system(drop_moved);
    });
    let divergence = lockstep(&mut a, &mut b, 10, &digests()).unwrap().unwrap();
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(4), "resource `Moved`")
    );
    let why: Vec<&str> = divergence.suspects.iter().map(|s| s.why).collect();
    assert!(why.contains(&"records commands"), "{why:?}");
    assert!(why.contains(&"writes it"), "{why:?}");
}

mod other {
    /// A type whose short name is `Position` too.
    pub(crate) struct Position(pub(crate) i64);
}

#[test]
fn alike_short_names_are_spelled_out() {
    let digests = digests().component::<other::Position>(|p, h| h.u64(p.0 as u64));
    let (a, _) = engine(1, |_| {});
    let (mut b, marked) = engine(1, |_| {});
    b.registry_mut().insert(marked, other::Position(1)).unwrap();
    let divergence = digests.diverged(&a, &b).unwrap();
    assert_eq!(
        divergence.part,
        format!("component `{}`", std::any::type_name::<other::Position>())
    );
    assert_eq!(divergence.entity, Some(marked));
    b.registry_mut().get_mut::<Position>(marked).unwrap().0 = 99;
    let divergence = digests.diverged(&a, &b).unwrap();
    assert_eq!(
        divergence.part,
        format!("component `{}`", std::any::type_name::<Position>())
    );
}

#[test]
#[should_panic(expected = "different numbers of ticks")]
fn engines_at_different_ticks_are_not_compared() {
    let (mut a, _) = engine(1, |_| {});
    let (b, _) = engine(1, |_| {});
    a.tick().unwrap();
    digests().diverged(&a, &b);
}

/// Writes every velocity on even ticks only (its run condition).
fn even_writer(mut q: Query<&mut Velocity, Without<Marked>>) {
    q.each(|v| v.0 += 0);
}

#[test]
fn a_writer_that_did_not_run_in_that_tick_is_not_named() {
    let with_even_writer = |b: &mut EngineBuilder| {
        b.add_system(planted);
        b.add_system(even_writer)
            .run_if(|tick: Tick| tick.number.is_multiple_of(2));
    };
    let (mut a, _) = engine(1, with_even_writer);
    let (mut b, _) = engine(2, with_even_writer);
    let divergence = lockstep(&mut a, &mut b, 40, &digests())
        .unwrap()
        .expect("the planted system diverges");
    // Tick 5 is odd: `even_writer` was skipped then.
    assert_eq!(divergence.tick, Some(5));
    let names: Vec<&str> = divergence
        .suspects
        .iter()
        .map(|s| s.system.rsplit("::").next().unwrap())
        .collect();
    assert_eq!(names, ["spawner", "planted"]);
    // It is a suspect on a tick it runs: the same engines' velocities,
    // compared after tick 6, name it.
    a.tick().unwrap();
    b.tick().unwrap();
    let velocities = Digests::new().component::<Velocity>(|v, h| h.u64(v.0 as u64));
    let later = velocities.diverged(&a, &b).expect("still diverged");
    assert_eq!(later.tick, Some(6));
    let names: Vec<&str> = later
        .suspects
        .iter()
        .map(|s| s.system.rsplit("::").next().unwrap())
        .collect();
    assert_eq!(names, ["spawner", "planted", "even_writer"], "{later}");
}

/// An event between systems.
struct Ping(i64);

/// What `hear` heard (not compared: the event channel diverges first).
#[derive(Default)]
struct Heard(i64);

/// Sends the tick number, one more in run 1 at tick 4.
fn ping(mut pings: EventWriter<Ping>, run: Res<Run>, tick: Tick) {
    let extra = i64::from(run.0 == 1 && tick.number == 4);
    pings.send(Ping(tick.number as i64 + extra));
}

fn hear(pings: EventReader<Ping>, mut heard: ResMut<Heard>) {
    heard.0 += pings.iter().map(|p| p.0).sum::<i64>();
}

#[test]
fn a_planted_divergence_in_an_event_channel_is_named_with_its_senders() {
    let digests = digests().events::<Ping>(|p, h| h.u64(p.0 as u64));
    let with_pings = |b: &mut EngineBuilder| {
        b.add_system(ping);
        b.add_system(hear);
        b.registry_mut().insert_resource(Heard::default());
    };
    // Equal runs (both run 2) stay equal, on 1 and 8 threads.
    let (mut a, _) = engine(1, with_pings);
    let (mut b, _) = engine(8, with_pings);
    a.registry_mut().insert_resource(Run(2));
    b.registry_mut().insert_resource(Run(2));
    assert_eq!(lockstep(&mut a, &mut b, 10, &digests).unwrap(), None);
    assert_eq!(digests.of(a.registry()).len(), 5);

    let (mut a, mut b, _) = runs(with_pings);
    let divergence = lockstep(&mut a, &mut b, 10, &digests)
        .unwrap()
        .expect("run 1 sends another value at tick 4");
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(4), "events `Ping`")
    );
    assert_eq!(divergence.entity, None);
    let mut why: Vec<(&str, &str)> = divergence
        .suspects
        .iter()
        .map(|s| (s.system.rsplit("::").next().unwrap(), s.why))
        .collect();
    why.sort_unstable();
    // Not `hear` (it only reads them) nor `movement`.
    assert_eq!(why, [("ping", "sends it"), ("spawner", "records commands")]);
    let text = divergence.to_string();
    assert!(
        text.starts_with("the runs differ after tick 4: events `Ping`; could have changed it: "),
        "{text}"
    );
    // `hear` read tick 4's event in that tick (a writer runs before the
    // readers of its type): its sums differ too, but are not compared.
    assert_eq!(
        a.registry().resource::<Heard>().unwrap().0,
        b.registry().resource::<Heard>().unwrap().0 + 1
    );
}

#[test]
fn an_event_channel_compares_its_count_and_its_events_in_order() {
    let digests = Digests::new().events::<Ping>(|p, h| h.u64(p.0 as u64));
    let (a, _) = engine(1, |_| {});
    let (mut b, _) = engine(1, |_| {});
    // No channel in either: equal.
    assert_eq!(digests.diverged(&a, &b), None);
    // A channel in one only: absent and present differ.
    Events::<Ping>::channel(b.registry_mut());
    assert_eq!(digests.diverged(&a, &b).unwrap().part, "events `Ping`");
    // The same events in another order differ.
    let (mut a, _) = engine(1, |_| {});
    let (mut b, _) = engine(1, |_| {});
    for (run, order) in [(&mut a, [1, 2]), (&mut b, [2, 1])] {
        for p in order {
            Events::send_to(run.registry_mut(), Ping(p));
        }
    }
    assert_eq!(digests.diverged(&a, &b).unwrap().part, "events `Ping`");
    // As do equal events with another count sent over the channel's life
    // (one sent and dropped by age in `b`).
    let (mut a, _) = engine(1, |_| {});
    let (mut b, _) = engine(1, |_| {});
    Events::send_to(b.registry_mut(), Ping(0));
    b.run(Events::<Ping>::DEFAULT_RETENTION + 1).unwrap();
    a.run(Events::<Ping>::DEFAULT_RETENTION + 1).unwrap();
    let channel = b.registry().resource::<Events<Ping>>().unwrap();
    assert_eq!((channel.len(), channel.sent()), (0, 1));
    Events::<Ping>::channel(a.registry_mut());
    assert_eq!(digests.diverged(&a, &b).unwrap().part, "events `Ping`");
}

/// Whether `flagged` runs: its run condition reads it.
#[derive(Clone)]
struct Flag(bool);

fn flagged(mut q: Query<&mut Velocity, Without<Marked>>) {
    q.each(|v| v.0 += 0);
}

#[test]
fn a_run_of_the_timeline_left_behind_by_a_restore_is_not_named() {
    let build = |threads| {
        engine(threads, |b| {
            b.add_system(planted);
            b.add_system(flagged).run_if(|flag: Res<Flag>| flag.0);
            b.registry_mut().insert_resource(Flag(true));
        })
    };
    let (mut a, _) = build(1);
    a.register_clone::<Position>()
        .register_clone::<Velocity>()
        .register_clone::<Marked>()
        .register_resource_clone::<Moved>()
        .register_resource_clone::<Flag>();
    a.run(4).unwrap();
    let state = a.save_state().unwrap();
    // Ticks 4 and 5 run `flagged`; then back to tick 4, where it no
    // longer runs.
    a.run(2).unwrap();
    a.restore_state(&state).unwrap();
    a.registry_mut().resource_mut::<Flag>().unwrap().0 = false;
    let (mut b, _) = build(2);
    b.run(4).unwrap();
    b.registry_mut().resource_mut::<Flag>().unwrap().0 = false;
    let divergence = lockstep(&mut a, &mut b, 10, &digests())
        .unwrap()
        .expect("the planted system diverges");
    assert_eq!(divergence.tick, Some(5));
    assert!(
        divergence
            .suspects
            .iter()
            .all(|s| !s.system.ends_with("flagged")),
        "{divergence}"
    );
}

/// Read from outside the world by the planted observer below.
static OBSERVED: AtomicI64 = AtomicI64::new(0);

/// Marks an entity at tick 3 (through commands, which fires the hook).
fn mark_at_three(q: Query<Entity, With<Position>>, tick: Tick, mut commands: Commands) {
    if tick.number == 3
        && let Some(e) = q.iter().next()
    {
        commands.insert(e, Marked);
    }
}

/// The planted observer: the marked entity's velocity from a counter
/// outside the world.
fn flaky_observer(trigger: Res<Trigger>, mut commands: Commands) {
    let v = OBSERVED.fetch_add(1, Ordering::Relaxed);
    commands.insert(trigger.entity, Velocity(v));
}

#[test]
fn an_observer_that_ran_in_that_tick_is_named_between_waves() {
    let with_observer = |b: &mut EngineBuilder| {
        b.add_system(mark_at_three);
        b.observe::<Marked, _>(Hook::Add, flaky_observer);
    };
    let (mut a, _) = engine(1, with_observer);
    let (mut b, _) = engine(2, with_observer);
    let divergence = lockstep(&mut a, &mut b, 10, &digests())
        .unwrap()
        .expect("the planted observer diverges");
    assert_eq!(divergence.tick, Some(3));
    assert_eq!(divergence.part, "component `Velocity`");
    let observer = divergence
        .suspects
        .iter()
        .find(|s| s.system.ends_with("flaky_observer"))
        .unwrap_or_else(|| panic!("{divergence}"));
    assert_eq!((observer.wave, observer.why), (None, "records commands"));
    assert!(
        divergence
            .to_string()
            .contains("flaky_observer` (between waves, records commands)"),
        "{divergence}"
    );
}

/// The digest of what `feed` feeds.
fn digest_of(feed: impl FnOnce(&mut Digest)) -> u64 {
    let mut h = Digest::default();
    feed(&mut h);
    h.finish()
}

#[test]
fn a_digest_tells_apart_order_length_and_a_lone_half_word() {
    // Values of 32 bits share words, in order.
    let pair = digest_of(|h| {
        h.u32(1);
        h.u32(2);
    });
    assert_ne!(
        pair,
        digest_of(|h| {
            h.u32(2);
            h.u32(1);
        })
    );
    // A value left without a partner still counts, zero included.
    let lone = digest_of(|h| h.u32(5));
    assert_ne!(lone, digest_of(|_| {}));
    assert_ne!(
        lone,
        digest_of(|h| {
            h.u32(5);
            h.u32(0);
        })
    );
    assert_ne!(digest_of(|h| h.u8(0)), digest_of(|_| {}));
    // A lone value's mark is not a partner of `1 << 31` (`-0.0`).
    assert_ne!(
        digest_of(|h| h.f32(1.5)),
        digest_of(|h| {
            h.f32(1.5);
            h.f32(-0.0);
        })
    );
    // A 64-bit value after a lone half does not take its place.
    assert_ne!(
        digest_of(|h| {
            h.u32(7);
            h.u64(9);
        }),
        digest_of(|h| {
            h.u64(9);
            h.u32(7);
        })
    );
    // Short and long byte strings carry their length.
    assert_ne!(
        digest_of(|h| h.bytes(&[0])),
        digest_of(|h| h.bytes(&[0, 0]))
    );
    assert_ne!(
        digest_of(|h| h.bytes(&[1; 9])),
        digest_of(|h| h.bytes(&[1; 10]))
    );
    // Floats by their bit patterns.
    assert_ne!(digest_of(|h| h.f32(0.0)), digest_of(|h| h.f32(-0.0)));
    // The same feeds give the same digest.
    assert_eq!(
        pair,
        digest_of(|h| {
            h.u32(1);
            h.u32(2);
        })
    );
}

#[derive(Clone, Copy)]
struct Maybe(Option<f32>);

#[test]
fn a_pools_entries_stay_apart_in_its_digest() {
    // A feed that skips an absent value (not self-delimiting): the
    // handles between the entries still tell `[Some, None]` from
    // `[None, Some]`.
    let digests = Digests::new().component::<Maybe>(|m, h| {
        if let Some(x) = m.0 {
            h.f32(x);
        }
    });
    let world = |values: [Option<f32>; 2]| {
        let mut registry = Registry::new();
        for v in values {
            registry.spawn((Maybe(v),));
        }
        digests.of(&registry)
    };
    assert_ne!(world([Some(1.0), None]), world([None, Some(1.0)]));
    assert_eq!(world([Some(1.0), None]), world([Some(1.0), None]));
}
