//! The aliasing of disjoint access, small enough for Miri (`cargo +nightly
//! miri test -p scheduler --test integration -- disjoint_miri::`, also
//! under Tree Borrows):
//! a writer and a reader of one pool in one system, their items held
//! across each other's fetches; two writers of one pool in one wave on two
//! threads; a `ParamSet` of two overlapping queries; a change filter on a
//! written type, items held across the filter's reads.

use ecs_engine::{Changed, Registry, With, Without};
use scheduler::{ParamSet, Query, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(u64);
#[derive(Debug)]
struct Enemy;

fn world() -> Registry {
    let mut registry = Registry::new();
    // Interleaved, so a block of the movers' run spans enemies too.
    for i in 0..6 {
        let e = registry.spawn((Position(i),));
        if !i.is_multiple_of(2) {
            registry.insert(e, Enemy).unwrap();
        }
    }
    registry.track_changes::<Position>();
    registry
}

fn positions(registry: &Registry) -> Vec<u64> {
    registry.view::<&Position>().iter().map(|p| p.0).collect()
}

/// Every mover holds its `&mut` while the enemies are read, then writes.
fn interleave(
    mut movers: Query<&mut Position, Without<Enemy>>,
    enemies: Query<&Position, With<Enemy>>,
) {
    let held: Vec<&mut Position> = movers.iter_mut().collect();
    let sum: u64 = enemies.iter().map(|p| p.0).sum();
    for position in held {
        position.0 += sum;
    }
}

fn movers(mut q: Query<&mut Position, Without<Enemy>>) {
    q.each(|p| p.0 += 100);
}

fn enemies(mut q: Query<&mut Position, With<Enemy>>) {
    q.each(|p| p.0 += 1000);
}

/// Every position, and the enemies' for writing.
type Overlapping<'s, 'q> = ParamSet<
    's,
    (
        Query<'q, &'q Position>,
        Query<'q, &'q mut Position, With<Enemy>>,
    ),
>;

fn set(mut set: Overlapping<'_, '_>) {
    let max = set.p0().iter().map(|p| p.0).max().unwrap();
    set.p1().each(|p| p.0 = max);
}

#[test]
fn disjoint_borrows_alias_nothing() {
    let mut registry = world();
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(interleave);
    builder.add(movers);
    builder.add(enemies);
    builder.add(set);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    // interleave: movers + (1 + 3 + 5); movers +100, enemies +1000 (one
    // wave); set: enemies = the largest position, 1005.
    assert_eq!(positions(&registry), [109, 1005, 111, 1005, 113, 1005]);
}

/// The movers that changed, their items held while the filter reads the
/// next ticks; then each doubled.
fn double_changed_movers(mut q: Query<&mut Position, (Changed<Position>, Without<Enemy>)>) {
    let held: Vec<&mut Position> = q.iter_mut().collect();
    for position in held {
        position.0 *= 2;
    }
}

/// Logs the sum of the enemy positions that changed since the last run.
fn count_changed_enemies(
    q: Query<&Position, (Changed<Position>, With<Enemy>)>,
    mut seen: scheduler::ResMut<Seen>,
) {
    seen.0.push(q.iter().map(|p| p.0).sum());
}

#[derive(Default)]
struct Seen(Vec<u64>);

#[test]
fn a_change_filter_on_a_written_type_aliases_nothing() {
    let mut registry = world();
    registry.insert_resource(Seen::default());
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(double_changed_movers);
    builder.add(count_changed_enemies);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    // First run: every position is new; second: nothing changed but the
    // movers' own writes, which they do not see again.
    assert_eq!(positions(&registry), [0, 1, 4, 3, 8, 5]);
    assert_eq!(registry.resource::<Seen>().unwrap().0, [9, 0]);
}
