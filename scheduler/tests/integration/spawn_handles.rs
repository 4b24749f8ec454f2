//! Every handle `Commands::spawn` returns is the entity it becomes: however
//! many a system spawns in one tick, wherever the handle is stored, on any
//! thread count; no two buffers ever return the same handle.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use command_buffer::{ReservePolicy, is_placeholder};
use ecs_engine::{Entity, Registry};
use scheduler::{Commands, Query, ResMut, Schedule, StatefulSystem, Tick};

/// A child's parent, stored in a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ChildOf(Entity);
/// Marks a parent; the number is its position in its spawner's batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Parent(u32);
/// Parents stored in a resource.
#[derive(Debug, Default)]
struct Roster(Vec<Entity>);

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 0.0,
    }
}

/// Spawns `pairs` parent/child pairs per run, keeping every parent in its
/// state (a local), in the child (a component) and in the roster (a
/// resource).
struct Families {
    pairs: u32,
    parents: Vec<Entity>,
}

impl StatefulSystem for Families {
    type Params = (Commands<'static>, ResMut<'static, Roster>);
    fn run(&mut self, (mut commands, mut roster): (Commands<'_>, ResMut<'_, Roster>)) {
        for k in 0..self.pairs {
            let parent = commands.spawn((Parent(k),));
            commands.spawn((ChildOf(parent),));
            self.parents.push(parent);
            roster.0.push(parent);
        }
    }
}

#[test]
fn ten_thousand_pairs_in_one_tick_are_all_alive() {
    let pairs = if cfg!(miri) { 200 } else { 10_000 };
    let mut registry = Registry::new();
    registry.insert_resource(Roster::default());
    let mut builder = Schedule::builder();
    let id = builder
        .add(Families {
            pairs,
            parents: Vec::new(),
        })
        .id();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();

    let parents = &schedule.state::<Families>(id).unwrap().parents;
    assert_eq!(parents.len(), pairs as usize);
    assert!(parents.iter().all(|&p| !is_placeholder(p)));
    for (k, &parent) in parents.iter().enumerate() {
        assert_eq!(registry.get::<Parent>(parent), Some(&Parent(k as u32)));
    }
    assert_eq!(registry.resource::<Roster>().unwrap().0, *parents);
    let children: Vec<ChildOf> = registry.view::<&ChildOf>().iter().copied().collect();
    assert_eq!(children.len(), pairs as usize);
    assert!(children.iter().all(|c| registry.is_alive(c.0)));
    assert_eq!(registry.len(), 2 * pairs as usize);
}

#[test]
fn a_spawn_after_a_despawn_only_tick_gets_a_real_handle() {
    // The reserve shrinks after a tick without spawns; the next spawns
    // still get real handles.
    struct Pulse {
        spawned: Vec<Entity>,
    }
    impl StatefulSystem for Pulse {
        type Params = (Commands<'static>, Query<'static, (Entity, &'static Parent)>);
        fn run(&mut self, (mut commands, q): (Commands<'_>, Query<'_, (Entity, &Parent)>)) {
            let existing: Vec<Entity> = q.iter().map(|(e, _)| e).collect();
            if existing.is_empty() {
                for k in 0..500 {
                    self.spawned.push(commands.spawn((Parent(k),)));
                }
            } else {
                existing.into_iter().for_each(|e| commands.despawn(e));
            }
        }
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    let id = builder
        .add(Pulse {
            spawned: Vec::new(),
        })
        .reserve(ReservePolicy::NONE)
        .id();
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..5 {
        schedule.run(&mut registry, tick(number)).unwrap();
        let spawned = &schedule.state::<Pulse>(id).unwrap().spawned;
        if number % 2 == 0 {
            let last = &spawned[spawned.len() - 500..];
            assert!(last.iter().all(|&e| registry.is_alive(e)), "tick {number}");
        } else {
            assert!(registry.is_empty());
        }
    }
    let all = &schedule.state::<Pulse>(id).unwrap().spawned;
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
}

/// Spawns `count` parents per run, each with a child, into its own list.
struct Spawner {
    count: u32,
    handles: Vec<Entity>,
}

impl StatefulSystem for Spawner {
    type Params = Commands<'static>;
    fn run(&mut self, mut commands: Commands<'_>) {
        for k in 0..self.count {
            let parent = commands.spawn((Parent(k),));
            let child = commands.spawn((ChildOf(parent),));
            self.handles.extend([parent, child]);
        }
    }
}

/// Despawns every third parent with its children, so slots are reused.
fn cull(mut commands: Commands<'_>, q: Query<'_, (Entity, &ChildOf)>, tick: Tick) {
    q.iter().for_each(|(child, parent)| {
        if (parent.0.index() as u64 + tick.number).is_multiple_of(3) {
            commands.despawn(parent.0);
            commands.despawn(child);
        }
    });
}

/// Counts per spawner: every one different, some past any default reserve.
const COUNTS: [u32; 8] = [0, 1, 7, 40, 64, 65, 300, 2_000];

/// Runs 8 spawners in one wave for `ticks` ticks on `threads` threads;
/// returns every handle each spawner got, and the world's checksum.
fn run_spawners(threads: usize, ticks: u64) -> (Vec<Vec<Entity>>, u64) {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.threads(threads);
    let ids: Vec<_> = COUNTS
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            builder
                .add(Spawner {
                    count,
                    handles: Vec::new(),
                })
                .named(format!("spawner{i}"))
                .id()
        })
        .collect();
    builder.add(cull).after("spawner7");
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves()[0].len(), 8, "the spawners share one wave");
    for number in 0..ticks {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let handles = ids
        .iter()
        .map(|&id| schedule.state::<Spawner>(id).unwrap().handles.clone())
        .collect();
    (handles, checksum(&registry))
}

/// A hash of every live entity with its components, by increasing index.
fn checksum(registry: &Registry) -> u64 {
    let mut hasher = DefaultHasher::new();
    for entity in registry.entities().iter() {
        entity.hash(&mut hasher);
        registry.get::<Parent>(entity).hash(&mut hasher);
        registry.get::<ChildOf>(entity).hash(&mut hasher);
    }
    registry.entities().slot_count().hash(&mut hasher);
    hasher.finish()
}

#[test]
fn eight_spawners_in_one_wave_get_distinct_live_handles() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.threads(8);
    let ids: Vec<_> = COUNTS
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            builder
                .add(Spawner {
                    count,
                    handles: Vec::new(),
                })
                .named(format!("spawner{i}"))
                .id()
        })
        .collect();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let mut seen = HashSet::new();
    for (&id, &count) in ids.iter().zip(&COUNTS) {
        let handles = &schedule.state::<Spawner>(id).unwrap().handles;
        assert_eq!(handles.len(), 2 * count as usize);
        for pair in handles.chunks(2) {
            assert!(registry.is_alive(pair[0]) && registry.is_alive(pair[1]));
            assert_eq!(registry.get::<ChildOf>(pair[1]), Some(&ChildOf(pair[0])));
        }
        for &handle in handles {
            assert!(seen.insert(handle), "{handle} handed out twice");
        }
    }
    let total: u32 = COUNTS.iter().sum();
    assert_eq!(registry.len(), 2 * total as usize);
}

#[test]
fn ids_and_world_are_the_same_on_1_2_and_8_threads() {
    let ticks = if cfg!(miri) { 2 } else { 6 };
    let (handles, sum) = run_spawners(1, ticks);
    let total: usize = handles.iter().map(Vec::len).sum();
    assert_eq!(
        handles.iter().flatten().collect::<HashSet<_>>().len(),
        total,
        "no handle twice, across ticks too"
    );
    for threads in [2, 8] {
        let (other, other_sum) = run_spawners(threads, ticks);
        assert_eq!(other, handles, "{threads} threads");
        assert_eq!(other_sum, sum, "{threads} threads");
    }
    // And across runs.
    assert_eq!(run_spawners(8, ticks), (handles, sum));
}

/// Spawns one parent per run and stores it in the roster.
fn one_parent(mut commands: Commands<'_>, mut roster: ResMut<'_, Roster>) {
    roster.0.push(commands.spawn((Parent(0),)));
}

#[test]
fn a_built_schedule_reserves_nothing_until_its_systems_spawn() {
    let mut registry = Registry::new();
    registry.insert_resource(Roster::default());
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(one_parent);
    builder.add(cull);
    let mut schedule = builder.build(&mut registry).unwrap();
    // Two systems with commands, no handle reserved: a program's first
    // entity after the build is index 0.
    assert_eq!(registry.entities().reserved(), 0);
    let first = registry.spawn((Parent(9),));
    assert_eq!(first.index(), 0);

    schedule.run(&mut registry, tick(0)).unwrap();
    // The first spawn went past the empty reserve, into the system's lane
    // (the next fresh slot), and is alive.
    let spawned = registry.resource::<Roster>().unwrap().0[0];
    assert_eq!(spawned.index(), 1);
    assert!(registry.is_alive(spawned));
    // Topped up to twice what it spawned; `cull`, which spawned nothing,
    // still holds none.
    assert_eq!(registry.entities().reserved(), 2);
    for t in 1..5 {
        schedule.run(&mut registry, tick(t)).unwrap();
    }
    let roster = &registry.resource::<Roster>().unwrap().0;
    assert!(roster.iter().all(|&e| registry.is_alive(e)));
    assert_eq!(registry.entities().reserved(), 2);
}
