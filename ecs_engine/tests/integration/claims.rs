//! Views that share a pool: a writer beside a reader (or another writer)
//! whose filters make their entities disjoint, on one registry cell, the
//! way parallel systems use it; and the borrows that stay refused.

use ecs_engine::{Changed, EcsError, Entity, Mut, Ref, Registry, With, Without};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(i64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(i64);
struct Enemy;

/// Three movers and two enemies, each with a position.
fn world() -> (Registry, Vec<Entity>, Vec<Entity>) {
    let mut registry = Registry::new();
    let movers = (0..3)
        .map(|i| registry.spawn((Position(i), Velocity(10))))
        .collect();
    let enemies = (0..2)
        .map(|i| registry.spawn((Position(100 + i), Enemy)))
        .collect();
    (registry, movers, enemies)
}

#[test]
fn a_writer_and_a_reader_with_disjoint_filters_share_a_pool_on_two_threads() {
    let (mut registry, movers, enemies) = world();
    let cell = registry.cell();
    let mut writer = cell
        .view_filtered::<(&mut Position, &Velocity), Without<Enemy>>()
        .unwrap();
    let reader = cell.view_filtered::<&Position, With<Enemy>>().unwrap();
    let sum = std::thread::scope(|s| {
        let reading = s.spawn(|| reader.iter().map(|p| p.0).sum::<i64>());
        writer.each(|(p, v)| p.0 += v.0);
        reading.join().unwrap()
    });
    assert_eq!(sum, 201);
    drop((writer, reader));
    let read = cell.view::<&Position>().unwrap();
    let moved: Vec<i64> = movers.iter().map(|&e| read.get(e).unwrap().0).collect();
    assert_eq!(moved, [10, 11, 12]);
    assert_eq!(read.get(enemies[1]), Ok(&Position(101)));
}

#[test]
fn two_writers_with_disjoint_filters_share_a_pool() {
    let (mut registry, movers, enemies) = world();
    let cell = registry.cell();
    let mut movers_view = cell
        .view_filtered::<&mut Position, Without<Enemy>>()
        .unwrap();
    let mut enemies_view = cell.view_filtered::<&mut Position, With<Enemy>>().unwrap();
    for (mover, enemy) in movers_view.iter().zip(enemies_view.iter()) {
        std::mem::swap(&mut mover.0, &mut enemy.0);
    }
    drop((movers_view, enemies_view));
    let read = cell.view::<&Position>().unwrap();
    assert_eq!(read.get(movers[0]), Ok(&Position(100)));
    assert_eq!(read.get(movers[2]), Ok(&Position(2)));
    assert_eq!(read.get(enemies[1]), Ok(&Position(1)));
}

#[test]
fn a_change_filter_on_a_written_type_takes_the_pool_whole() {
    let (mut registry, movers, enemies) = world();
    registry.track_changes::<Position>();
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<Position>(movers[1]).unwrap().0 = 50;
    let cell = registry.cell();
    let mut changed = cell
        .view_since::<(Entity, &mut Position), (Changed<Position>, Without<Enemy>)>(since)
        .unwrap();
    // The filter reads ticks of entities the view then rejects, so its
    // query's write claim is disjoint from nothing, filters or not.
    assert!(matches!(
        cell.view_filtered::<&Position, With<Enemy>>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    let seen: Vec<Entity> = changed
        .iter()
        .map(|(entity, position)| {
            position.0 += 1;
            entity
        })
        .collect();
    assert_eq!(seen, [movers[1]]);
    drop(changed);
    let read = cell.view::<&Position>().unwrap();
    assert_eq!(read.get(movers[1]), Ok(&Position(51)));
    assert_eq!(read.get(enemies[0]), Ok(&Position(100)));
}

#[test]
fn borrows_that_filters_do_not_separate_stay_refused() {
    let (mut registry, ..) = world();
    let cell = registry.cell();
    let writer = cell
        .view_filtered::<&mut Position, Without<Enemy>>()
        .unwrap();
    // No filter, an `Option`, a second `Without`: not proven disjoint.
    assert!(matches!(
        cell.view::<&Position>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    assert!(matches!(
        cell.view::<(&Position, Option<&Enemy>)>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    assert!(matches!(
        cell.view_filtered::<&Position, Without<Enemy>>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    // Change-tracking terms and filters read ticks of entities their view
    // may reject: disjoint from nothing, even with the filter.
    assert!(matches!(
        cell.view_filtered::<Ref<Position>, With<Enemy>>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    assert!(matches!(
        cell.view_filtered::<&Position, (Changed<Position>, With<Enemy>)>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    drop(writer);
    let reader = cell.view_filtered::<&Position, With<Enemy>>().unwrap();
    assert!(matches!(
        cell.view_filtered::<Mut<Position>, Without<Enemy>>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    drop(reader);
    // Once every view is gone, anything may borrow again.
    assert_eq!(cell.view::<Mut<Position>>().unwrap().count(), 5);
}
