//! Observers of the command paths beyond one component: bundle inserts
//! (`commands.entity(e).insert((A, B))`), bundle removals, required
//! components of a bundle, the hierarchy (`with_children`, `set_parent`,
//! `remove_parent`, despawns that change a parent's `Children`) and
//! recursive disabling. Each test checks the exact (hook, entity, type)
//! sequence the observers saw, on 1, 2 and 8 threads.

use ecs_engine::{ChildOf, Children, Disabled, Entity, Registry};
use scheduler::{Commands, Hook, Res, ResMut, Schedule, ScheduleBuilder, Tick, Trigger};

struct A(u32);
struct B(u32);
#[derive(Default)]
struct R;
struct Unwatched;

/// What the observers saw, in order: (hook, entity, type name).
#[derive(Default)]
struct Log(Vec<(Hook, Entity, &'static str)>);

/// The entities the drivers work on.
struct Targets(Vec<Entity>);

/// The last segment of `T`'s type name (`A`, `ChildOf`, ...).
fn short<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}

fn record<T: 'static>(trigger: Res<Trigger>, mut log: ResMut<Log>) {
    log.0.push((trigger.hook, trigger.entity, short::<T>()));
}

/// Observes every hook of `T` with [`record`].
fn observe_all<T: Send + Sync + 'static>(schedule: &mut Schedule, registry: &mut Registry) {
    for hook in [Hook::Add, Hook::Insert, Hook::Replace, Hook::Remove] {
        schedule.observe::<T, _>(registry, hook, record::<T>);
    }
}

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

/// A registry with `targets` empty entities and a schedule of the
/// systems `add` registers (drivers that share no conflicting access run
/// in one wave) on `threads`; `observe` registers the observers.
fn world(
    targets: usize,
    threads: usize,
    add: impl FnOnce(&mut ScheduleBuilder),
    observe: impl FnOnce(&mut Schedule, &mut Registry),
) -> (Registry, Schedule) {
    let mut registry = Registry::new();
    let targets = (0..targets).map(|_| registry.spawn_empty()).collect();
    registry.insert_resource(Targets(targets));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    add(&mut builder);
    builder.threads(threads);
    let mut schedule = builder.build(&mut registry).unwrap();
    observe(&mut schedule, &mut registry);
    (registry, schedule)
}

fn take_log(registry: &mut Registry) -> Vec<(Hook, Entity, &'static str)> {
    std::mem::take(&mut registry.resource_mut::<Log>().unwrap().0)
}

fn targets(registry: &Registry) -> Vec<Entity> {
    registry.resource::<Targets>().unwrap().0.clone()
}

use Hook::{Add, Insert, Remove, Replace};

// ---------------------------------------------------------------- bundles

/// Tick 0: a bundle on an empty entity (listed B first), a bundle over
/// an entity that has `A`, a bundle with an unobserved type, a bundle on
/// a dead handle. Tick 1: a bundle removal, one of absent types.
fn bundle_driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    match tick.number {
        0 => {
            commands.entity(t[0]).insert((B(1), A(1)));
            commands.insert(t[1], A(0));
            commands.entity(t[1]).insert((A(2), B(2)));
            commands.entity(t[2]).insert((Unwatched, A(3)));
            commands.despawn(t[3]);
            commands.entity(t[3]).insert((A(4), B(4)));
        }
        1 => {
            commands.entity(t[0]).remove_bundle::<(B, Unwatched, A)>();
            commands.entity(t[2]).remove_bundle::<(B, Unwatched)>();
            commands.entity(t[3]).remove_bundle::<(A, B)>();
        }
        _ => {}
    }
}

/// A second system in the same wave, registered after `bundle_driver`:
/// its buffer is applied after it, whatever thread ran first.
fn bundle_driver_late(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    if tick.number == 0 {
        commands.entity(targets.0[4]).insert((A(5),));
    }
}

fn bundle_log(threads: usize) -> (Vec<(Hook, Entity, &'static str)>, Vec<Entity>) {
    let (mut registry, mut schedule) = world(
        5,
        threads,
        |builder| {
            builder.add(bundle_driver);
            builder.add(bundle_driver_late);
        },
        |schedule, registry| {
            observe_all::<A>(schedule, registry);
            observe_all::<B>(schedule, registry);
        },
    );
    schedule.run(&mut registry, tick(0)).unwrap();
    let t = targets(&registry);
    assert_eq!(registry.get::<A>(t[1]).map(|a| a.0), Some(2));
    assert_eq!(registry.get::<B>(t[0]).map(|b| b.0), Some(1));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert!(!registry.has::<(A,)>(t[0]) && !registry.has::<(B,)>(t[0]));
    (take_log(&mut registry), t)
}

#[test]
fn a_bundle_insert_fires_add_replace_and_insert_for_each_observed_component() {
    for threads in [1, 2, 8] {
        let (log, t) = bundle_log(threads);
        let expected = [
            // (B, A) on an empty entity: Add for each, then Insert for
            // each, types in first-observed order (A, then B).
            (Add, t[0], "A"),
            (Add, t[0], "B"),
            (Insert, t[0], "A"),
            (Insert, t[0], "B"),
            // The single insert of A.
            (Add, t[1], "A"),
            (Insert, t[1], "A"),
            // (A, B) over an A: Add B, Replace A, Insert A, Insert B.
            (Add, t[1], "B"),
            (Replace, t[1], "A"),
            (Insert, t[1], "A"),
            (Insert, t[1], "B"),
            // (Unwatched, A): only A's hooks.
            (Add, t[2], "A"),
            (Insert, t[2], "A"),
            // t[3] was despawned first: its bundle fires nothing.
            // The later system's buffer.
            (Add, t[4], "A"),
            (Insert, t[4], "A"),
            // Tick 1: removal of (B, Unwatched, A) from an entity with A
            // and B: Remove for each, first-observed order.
            (Remove, t[0], "A"),
            (Remove, t[0], "B"),
            // t[2] lacks B and Unwatched is not observed: nothing; t[3]
            // is dead: nothing.
        ];
        assert_eq!(log, expected, "{threads} threads");
    }
}

/// Inserts the same values as one-component bundles and as `insert`
/// commands, on an empty entity and over a value.
fn single_driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    let bundles = tick.number == 0;
    for round in 0..2 {
        for &e in t {
            if bundles {
                commands.entity(e).insert((A(round),));
            } else {
                commands.insert(e, A(round));
            }
        }
    }
}

#[test]
fn a_one_component_bundle_fires_exactly_what_insert_fires() {
    for threads in [1, 2] {
        let (mut logs, mut t) = (Vec::new(), Vec::new());
        for number in [0, 1] {
            let (mut registry, mut schedule) = world(
                2,
                threads,
                |b| {
                    b.add(single_driver);
                },
                |s, r| {
                    // R is observed first: its hooks precede A's.
                    observe_all::<R>(s, r);
                    observe_all::<A>(s, r);
                },
            );
            registry.register_required::<A, R>().unwrap();
            schedule.run(&mut registry, tick(number)).unwrap();
            logs.push(take_log(&mut registry));
            t = targets(&registry);
        }
        assert_eq!(logs[0], logs[1], "{threads} threads");
        let expected: Vec<_> = t
            .iter()
            .flat_map(|&e| {
                [
                    (Add, e, "R"),
                    (Add, e, "A"),
                    (Insert, e, "R"),
                    (Insert, e, "A"),
                ]
            })
            .chain(
                t.iter()
                    .flat_map(|&e| [(Replace, e, "A"), (Insert, e, "A")]),
            )
            .collect();
        assert_eq!(logs[0], expected, "{threads} threads");
    }
}

/// Tick 0: (A, B) on an empty entity; tick 1: the same over the values,
/// after the required `R` was removed from it.
fn required_driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let e = targets.0[0];
    match tick.number {
        0 => {
            commands.entity(e).insert((A(1), B(1)));
        }
        _ => {
            commands.remove::<R>(e);
            commands.entity(e).insert((B(2), A(2)));
        }
    }
}

#[test]
fn a_bundle_insert_fires_add_and_insert_for_the_components_it_requires() {
    for threads in [1, 2] {
        let (mut registry, mut schedule) = world(
            1,
            threads,
            |b| {
                b.add(required_driver);
            },
            |s, r| {
                observe_all::<B>(s, r);
                observe_all::<R>(s, r);
                observe_all::<A>(s, r);
            },
        );
        registry.register_required::<A, R>().unwrap();
        schedule.run(&mut registry, tick(0)).unwrap();
        schedule.run(&mut registry, tick(1)).unwrap();
        let e = targets(&registry)[0];
        assert!(registry.has::<(A, B, R)>(e));
        let expected = [
            // First-observed order: B, R, A.
            (Add, e, "B"),
            (Add, e, "R"),
            (Add, e, "A"),
            (Insert, e, "B"),
            (Insert, e, "R"),
            (Insert, e, "A"),
            // Tick 1: R removed, then the bundle over B and A adds R back.
            (Remove, e, "R"),
            (Add, e, "R"),
            (Replace, e, "B"),
            (Replace, e, "A"),
            (Insert, e, "B"),
            (Insert, e, "A"),
            (Insert, e, "R"),
        ];
        assert_eq!(take_log(&mut registry), expected, "{threads} threads");
    }
}

#[test]
fn bundle_commands_apply_the_same_in_an_unobserved_world() {
    let add = |builder: &mut ScheduleBuilder| {
        builder.add(bundle_driver);
        builder.add(bundle_driver_late);
    };
    let (mut registry, mut schedule) = world(5, 2, add, |_, _| {});
    schedule.run(&mut registry, tick(0)).unwrap();
    let t = targets(&registry);
    assert_eq!(registry.get::<A>(t[1]).map(|a| a.0), Some(2));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert!(!registry.has::<(A,)>(t[0]) && registry.has::<(A,)>(t[2]));
    assert!(registry.has::<(B,)>(t[1]) && !registry.has::<(B,)>(t[0]));
    assert!(take_log(&mut registry).is_empty());
}

// -------------------------------------------------------------- hierarchy

/// Tick 0: `t[0]` gets `A` and two children through `with_children`.
/// Tick 1: the second child moves to `t[1]`; the first is despawned (its
/// parent loses its last child). Tick 2: `t[1]` is despawned alone (its
/// child is detached). Tick 3: the child is attached and detached twice
/// (`remove::<ChildOf>`, then `remove_parent`). Tick 4: it is attached
/// again, and its parent despawned with its subtree.
fn tree_driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    match tick.number {
        0 => {
            commands
                .entity(t[0])
                .insert((A(0),))
                .with_children(|children| {
                    children.spawn((A(1),));
                    children.spawn((B(2),));
                });
        }
        1 => {
            let [first, second] = [t[2], t[3]];
            commands.set_parent(second, t[1]);
            commands.despawn(first);
        }
        2 => commands.despawn(t[1]),
        3 => {
            let child = t[3];
            commands.set_parent(child, t[0]);
            commands.remove::<ChildOf>(child);
            commands.entity(child).set_parent(t[0]).remove_parent();
        }
        4 => {
            commands.set_parent(t[3], t[0]);
            commands.entity(t[0]).despawn_recursive();
        }
        _ => {}
    }
}

/// Records the children `tree_driver` spawned in tick 0 as `t[2]`, `t[3]`.
fn tree_log(threads: usize) -> (Vec<(Hook, Entity, &'static str)>, Vec<Entity>) {
    let (mut registry, mut schedule) = world(
        2,
        threads,
        |b| {
            b.add(tree_driver);
        },
        |s, r| {
            observe_all::<A>(s, r);
            observe_all::<ChildOf>(s, r);
            observe_all::<Children>(s, r);
        },
    );
    schedule.run(&mut registry, tick(0)).unwrap();
    let mut t = targets(&registry);
    t.extend_from_slice(registry.children(t[0]));
    assert_eq!(t.len(), 4);
    registry.resource_mut::<Targets>().unwrap().0 = t.clone();
    for number in 1..5 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    assert!(t.iter().all(|&e| !registry.is_alive(e)));
    (take_log(&mut registry), t)
}

#[test]
fn hierarchy_commands_fire_child_of_and_children_hooks() {
    for threads in [1, 2, 8] {
        let (log, t) = tree_log(threads);
        let (parent, other, first, second) = (t[0], t[1], t[2], t[3]);
        let expected = [
            // Tick 0: the parent's bundle, then each child's spawn and
            // link; the first link creates the parent's `Children`, the
            // second appends to it in place (nothing).
            (Add, parent, "A"),
            (Insert, parent, "A"),
            (Add, first, "A"),
            (Insert, first, "A"),
            (Add, first, "ChildOf"),
            (Insert, first, "ChildOf"),
            (Add, parent, "Children"),
            (Insert, parent, "Children"),
            (Add, second, "ChildOf"),
            (Insert, second, "ChildOf"),
            // Tick 1: the move replaces the child's link and creates
            // `other`'s list; the first child's despawn removes its
            // components, then its parent's emptied list.
            (Replace, second, "ChildOf"),
            (Insert, second, "ChildOf"),
            (Add, other, "Children"),
            (Insert, other, "Children"),
            (Remove, first, "A"),
            (Remove, first, "ChildOf"),
            (Remove, parent, "Children"),
            // Tick 2: `other` goes with its list; its child is detached.
            (Remove, other, "Children"),
            (Remove, second, "ChildOf"),
            // Tick 3: attached and detached twice.
            (Add, second, "ChildOf"),
            (Insert, second, "ChildOf"),
            (Add, parent, "Children"),
            (Insert, parent, "Children"),
            (Remove, second, "ChildOf"),
            (Remove, parent, "Children"),
            (Add, second, "ChildOf"),
            (Insert, second, "ChildOf"),
            (Add, parent, "Children"),
            (Insert, parent, "Children"),
            (Remove, second, "ChildOf"),
            (Remove, parent, "Children"),
            // Tick 4: attached, then the subtree despawned, root first.
            (Add, second, "ChildOf"),
            (Insert, second, "ChildOf"),
            (Add, parent, "Children"),
            (Insert, parent, "Children"),
            (Remove, parent, "A"),
            (Remove, parent, "Children"),
            (Remove, second, "ChildOf"),
        ];
        assert_eq!(log, expected, "{threads} threads");
    }
}

/// Tick 0: a root with a child and a grandchild, the child disabled
/// alone first; tick 1: the whole tree disabled (the child already was);
/// tick 2: enabled again.
fn disable_driver(targets: Res<Targets>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    match tick.number {
        0 => {
            commands.set_parent(t[1], t[0]);
            commands.set_parent(t[2], t[1]);
            commands.disable(t[1]);
        }
        1 => commands.disable_recursive(t[0]),
        _ => commands.enable_recursive(t[0]),
    }
}

#[test]
fn recursive_disabling_fires_the_hooks_of_each_changed_marker() {
    for threads in [1, 2] {
        let (mut registry, mut schedule) = world(
            3,
            threads,
            |b| {
                b.add(disable_driver);
            },
            |s, r| {
                observe_all::<Disabled>(s, r);
            },
        );
        for number in 0..3 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        let t = targets(&registry);
        assert_eq!(registry.disabled_len(), 0);
        let expected = [
            (Add, t[1], "Disabled"),
            (Insert, t[1], "Disabled"),
            // Depth first, skipping the child that was disabled already.
            (Add, t[0], "Disabled"),
            (Insert, t[0], "Disabled"),
            (Add, t[2], "Disabled"),
            (Insert, t[2], "Disabled"),
            (Remove, t[0], "Disabled"),
            (Remove, t[1], "Disabled"),
            (Remove, t[2], "Disabled"),
        ];
        assert_eq!(take_log(&mut registry), expected, "{threads} threads");
    }
}

/// `A`'s component id, for `remove_by_id`.
struct IdOfA(ecs_engine::ComponentId);

/// Tick 0: `t[0]` gets A and B, `t[1]` and `t[2]` become children of
/// `t[0]`. Tick 1: A removed by id (twice), then `t[0]`'s `Children`
/// removed (its children detached). Tick 2: relinked, then `(Children,
/// B)` removed as a bundle.
fn by_id_driver(targets: Res<Targets>, id: Res<IdOfA>, tick: Tick, mut commands: Commands) {
    let t = &targets.0;
    match tick.number {
        0 => {
            commands.entity(t[0]).insert((A(0), B(0)));
            commands.entity(t[0]).add_child(t[1]).add_child(t[2]);
        }
        1 => {
            commands.remove_by_id(t[0], id.0);
            commands.remove_by_id(t[0], id.0);
            commands.remove::<Children>(t[0]);
        }
        _ => {
            commands.entity(t[0]).add_child(t[2]);
            commands.entity(t[0]).remove_bundle::<(Children, B)>();
        }
    }
}

#[test]
fn removals_by_id_and_of_children_fire_remove_on_each_entity_they_change() {
    for threads in [1, 2] {
        let (mut registry, mut schedule) = world(
            3,
            threads,
            |b| {
                b.add(by_id_driver);
            },
            |s, r| {
                for hook in [Hook::Add, Hook::Remove] {
                    s.observe::<A, _>(r, hook, record::<A>);
                    s.observe::<ChildOf, _>(r, hook, record::<ChildOf>);
                    s.observe::<Children, _>(r, hook, record::<Children>);
                }
            },
        );
        let id = registry.component_id::<A>().unwrap();
        registry.insert_resource(IdOfA(id));
        for number in 0..3 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        let t = targets(&registry);
        assert!(registry.children(t[0]).is_empty() && registry.parent(t[2]).is_none());
        let expected = [
            (Add, t[0], "A"),
            (Add, t[1], "ChildOf"),
            (Add, t[0], "Children"),
            (Add, t[2], "ChildOf"),
            // Tick 1: the second removal by id finds no A: nothing.
            (Remove, t[0], "A"),
            (Remove, t[0], "Children"),
            (Remove, t[1], "ChildOf"),
            (Remove, t[2], "ChildOf"),
            // Tick 2: B is not observed.
            (Add, t[2], "ChildOf"),
            (Add, t[0], "Children"),
            (Remove, t[0], "Children"),
            (Remove, t[2], "ChildOf"),
        ];
        assert_eq!(take_log(&mut registry), expected, "{threads} threads");
    }
}
