//! Parallel walks with state: `par_fold` (deterministic on any pool),
//! `par_each_init`, and the task count of a parallel walk. Every test
//! starts rayon pools, so none runs under Miri's Stacked Borrows.

use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_engine::{Entity, Registry, Without};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Value(f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Index(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Skip;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// `n` entities whose float values make a sum that depends on the order
/// of additions; every 7th is skipped by the filter, every 11th disabled.
fn world(n: u64) -> Registry {
    let mut registry = Registry::new();
    for i in 0..n {
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        let e = registry.spawn((
            Value(sign / (i as f64 + 1.0) * 1e10_f64.powi((i % 5) as i32)),
            Index(i),
        ));
        if i % 7 == 0 {
            registry.insert(e, Skip).unwrap();
        }
        if i % 11 == 0 {
            registry.disable(e).unwrap();
        }
    }
    registry
}

fn kept(i: u64) -> bool {
    !i.is_multiple_of(7) && !i.is_multiple_of(11)
}

#[test]
#[cfg_attr(
    miri,
    ignore = "starts rayon pools (crossbeam-epoch trips Stacked Borrows)"
)]
fn par_fold_gives_the_same_bits_on_1_2_and_8_threads() {
    for n in [0, 1, 63, 64, 65, 1_000, 20_000] {
        let mut registry = world(n);
        let results: Vec<(u64, u64, u64)> = [1, 2, 8]
            .into_iter()
            .map(|threads| {
                pool(threads).install(|| {
                    registry
                        .view_filtered::<(&Value, &Index), Without<Skip>>()
                        .par_fold(
                            || (0.0_f64, 0_u64, 0_u64),
                            |(sum, count, indices), (v, i)| (sum + v.0, count + 1, indices + i.0),
                            |(s1, c1, i1), (s2, c2, i2)| (s1 + s2, c1 + c2, i1 + i2),
                        )
                })
            })
            .map(|(sum, count, indices)| (sum.to_bits(), count, indices))
            .collect();
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "n = {n}: {results:?}"
        );
        let expected_count = (0..n).filter(|&i| kept(i)).count() as u64;
        let expected_indices: u64 = (0..n).filter(|&i| kept(i)).sum();
        assert_eq!(
            (results[0].1, results[0].2),
            (expected_count, expected_indices),
            "n = {n}"
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "starts rayon pools (crossbeam-epoch trips Stacked Borrows)"
)]
fn par_fold_of_an_empty_view_is_init() {
    let mut registry = Registry::new();
    let got = registry
        .view_mut::<&mut Value>()
        .par_fold(|| 7, |acc, _| acc + 1, |a, b| a + b);
    assert_eq!(got, 7);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "starts rayon pools (crossbeam-epoch trips Stacked Borrows)"
)]
fn par_fold_collects_in_dense_order() {
    let registry = world(5_000);
    let serial: Vec<Entity> = registry
        .view::<(Entity, &Value)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    for threads in [1, 2, 8] {
        let folded = pool(threads).install(|| {
            registry.view::<(Entity, &Value)>().par_fold(
                Vec::new,
                |mut seen, (e, _)| {
                    seen.push(e);
                    seen
                },
                |mut a, b| {
                    a.extend(b);
                    a
                },
            )
        });
        assert_eq!(folded, serial, "{threads} threads");
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "starts rayon pools (crossbeam-epoch trips Stacked Borrows)"
)]
fn par_each_init_makes_one_state_per_task_and_visits_each_entity_once() {
    let mut registry = world(3_000);
    let states = AtomicUsize::new(0);
    pool(4).install(|| {
        registry.view_mut::<&mut Index>().par_each_init(
            || {
                states.fetch_add(1, Ordering::Relaxed);
                0_u64
            },
            |seen, i| {
                *seen += 1;
                i.0 += 1_000_000;
            },
        )
    });
    // 3,000 entities on 4 threads: 8 tasks per thread would be chunks of
    // 94, shorter than the 256 each thread could get: 12 tasks.
    assert_eq!(states.load(Ordering::Relaxed), 12);
    let mut visited = 0;
    registry.view::<&Index>().each(|i| {
        assert!(i.0 >= 1_000_000);
        visited += 1;
    });
    assert_eq!(visited, (0..3_000).filter(|i| i % 11 != 0).count());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "starts rayon pools (crossbeam-epoch trips Stacked Borrows)"
)]
fn a_thousand_entities_on_sixteen_threads_make_sixteen_tasks() {
    let mut registry = Registry::new();
    for i in 0..1_000 {
        registry.spawn((Index(i),));
    }
    let tasks = AtomicUsize::new(0);
    pool(16).install(|| {
        registry
            .view_mut::<&mut Index>()
            .par_each_init(|| tasks.fetch_add(1, Ordering::Relaxed), |_, i| i.0 *= 2)
    });
    assert_eq!(tasks.load(Ordering::Relaxed), 16);
    let sum: u64 = registry.view::<&Index>().iter().map(|i| i.0).sum();
    assert_eq!(sum, 2 * (0..1_000).sum::<u64>());
    // On 2 threads: tasks of 256 (8 per thread would be 63 each, too
    // small to hand over).
    assert_eq!(tasks_on_two_threads(&mut registry), 4);
    // 100,000 entities on 2 threads: 8 tasks per thread, 6,250 each.
    for i in 1_000..100_000 {
        registry.spawn((Index(i),));
    }
    assert_eq!(tasks_on_two_threads(&mut registry), 16);
}

/// The tasks a `par_each_init` over every `Index` makes on 2 threads.
fn tasks_on_two_threads(registry: &mut Registry) -> usize {
    let tasks = AtomicUsize::new(0);
    pool(2).install(|| {
        registry
            .view_mut::<&mut Index>()
            .par_each_init(|| tasks.fetch_add(1, Ordering::Relaxed), |_, _| {})
    });
    tasks.into_inner()
}
