//! Unit tests of `SparseSet`: swap-and-pop removal, stale handles, pages,
//! zero-sized components, the change log and clearing.

use super::*;
use crate::storage::lookup::PAGE_LEN;
use std::num::NonZeroU32;

fn e(index: u32, generation: u32) -> Entity {
    Entity::new(index, NonZeroU32::new(generation).unwrap())
}

#[test]
fn swap_and_pop_keeps_invariants() {
    let mut set = SparseSet::new();
    for i in 0..5 {
        assert_eq!(set.insert(e(i, 1), i * 10), Ok(None));
    }
    assert_eq!(set.remove(e(1, 1)), Some(10));
    assert_eq!(set.entities(), &[e(0, 1), e(4, 1), e(2, 1), e(3, 1)]);
    assert_eq!(set.components(), &[0, 40, 20, 30]);
    assert_eq!(set.get(e(4, 1)), Some(&40));
    assert_eq!(set.remove(e(1, 1)), None);
    assert_eq!(set.insert(e(4, 1), 41), Ok(Some(40)));
    assert_eq!(set.len(), 4);
}

#[test]
fn stale_handle_sees_nothing() {
    let mut set = SparseSet::new();
    set.insert(e(3, 2), "new").unwrap();
    assert!(!set.contains(e(3, 1)));
    assert_eq!(set.get(e(3, 1)), None);
    assert_eq!(set.get_mut(e(3, 1)), None);
    assert_eq!(set.remove(e(3, 1)), None);
    assert_eq!(set.get(e(3, 2)), Some(&"new"));
}

/// Every path compares generations, older and newer handles alike: the
/// holder keeps its value, and the refusal names both handles.
#[test]
fn insert_refuses_another_generation() {
    let mut set = SparseSet::new();
    set.insert(e(3, 2), "holder").unwrap();
    for other in [e(3, 1), e(3, 3)] {
        let refused = set.insert(other, "intruder").unwrap_err();
        assert_eq!(refused.value, "intruder");
        assert_eq!(
            refused.error,
            EcsError::SlotHeld {
                entity: other,
                holder: e(3, 2),
                component: std::any::type_name::<&str>().into(),
            }
        );
        let message = refused.error.to_string();
        assert!(message.contains(&other.to_string()), "{message}");
        assert!(message.contains(&e(3, 2).to_string()), "{message}");
        assert!(!set.contains(other));
        assert_eq!(set.get_mut(other), None);
        assert_eq!(set.remove(other), None);
    }
    assert_eq!(set.entities(), &[e(3, 2)]);
    assert_eq!(set.get(e(3, 2)), Some(&"holder"));
}

#[test]
fn far_index_costs_one_page() {
    // Miri fills the page table slot by slot: a nearer index there.
    let far = if cfg!(miri) { 1_000_000 } else { 10_000_000 };
    let mut set = SparseSet::new();
    set.insert(e(far, 1), 1u8).unwrap();
    let pages = set.sparse.pages.iter().flatten().count();
    assert_eq!(pages, 1);
    // The page table holds one pointer per page up to the index.
    let table = (far as usize / PAGE_LEN + 1) * 8;
    assert!(set.heap_bytes() < table + PAGE_LEN * 4 + 16 * 1024);
    assert!(!set.contains(e(far - 1, 1)));
    assert!(!set.contains(e(u32::MAX - 1, 1)));
}

#[test]
fn zero_sized_components_use_no_component_memory() {
    #[derive(Debug, PartialEq)]
    struct Marker;
    let mut set = SparseSet::new();
    for i in 0..1000 {
        set.insert(e(i, 1), Marker).unwrap();
    }
    let expected = set.sparse.heap_bytes() + set.dense.capacity() * 8;
    assert_eq!(set.heap_bytes(), expected);
    assert_eq!(set.get(e(999, 1)), Some(&Marker));
}

/// Pushes in a row share one log entry; removing the last component
/// logs no position (none is left to re-check), only a revision.
#[test]
fn change_log_entries() {
    let mut set = SparseSet::new();
    for i in 0..4 {
        set.insert(e(i, 1), i).unwrap();
    }
    // The logged ranges since a revision, as (start, end) pairs.
    let ranges = |set: &SparseSet<u32>, since| -> Vec<_> {
        let changes = set.runs.changes_since(since).unwrap();
        changes.map(|r| (r.start, r.end)).collect()
    };
    assert_eq!(ranges(&set, 0), [(0, 4)]);
    assert_eq!(ranges(&set, 2), [(2, 4)]);
    set.remove(e(3, 1)).unwrap();
    assert_eq!(set.runs.revision, 5);
    assert_eq!(ranges(&set, 4), []);
    assert_eq!(ranges(&set, 3), [(3, 4)]);
    set.remove(e(0, 1)).unwrap();
    assert_eq!(set.entities(), &[e(2, 1), e(1, 1)]);
    assert_eq!(ranges(&set, 5), [(0, 1)]);
    assert_eq!(ranges(&set, 0), [(0, 4), (0, 1)]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// The change log never misses a write: after any mix of pushes
    /// (one by one or batched), replacements, swap-removals (of the
    /// last component too) and clears, every position below the length
    /// that holds another entity than at an earlier revision is among
    /// the positions logged since that revision, as long as the log
    /// reaches back that far (views skip the re-check of all others).
    /// Checked after every step against the oldest revisions the log
    /// still answers for and the latest ones, and at the end against
    /// every revision.
    #[test]
    fn change_log_covers_every_moved_position(
        ops in proptest::collection::vec((0u8..=255, 0u32..24), 1..if cfg!(miri) { 60 } else { 2000 })
    ) {
        // Clears are rare (one op in 6144), so that the log grows past
        // its limit and forgets its oldest entries.
        let mut set = SparseSet::new();
        let mut seen = vec![(0, Vec::new())];
        for (op, n) in ops {
            match (op, n) {
                (0..=79, _) => drop(set.insert(e(n, 1), n)),
                (80..=159, _) => drop(set.remove(e(n, 1))),
                (160..=219, _) => {
                    if let Some(&last) = set.entities().last() {
                        set.remove(last);
                    }
                }
                (255, 0) => set.clear(),
                _ => {
                    let start = set.len();
                    for index in n..n + 3 {
                        set.push_new(e(index, 1), index);
                    }
                    set.pushed_since(start);
                }
            }
            seen.push((set.runs.revision, set.dense.clone()));
            let oldest = seen.partition_point(|&(r, _)| r < set.runs.log_from);
            let checked = seen[oldest..].iter().take(4).chain(seen.iter().rev().take(4));
            for (since, then) in checked {
                proptest::prop_assert_eq!(unlogged(&set, *since, then), None);
            }
        }
        let mut reached = 0;
        for (since, then) in &seen {
            if set.runs.changes_since(*since).is_some() {
                reached += 1;
                proptest::prop_assert_eq!(unlogged(&set, *since, then), None);
            }
        }
        proptest::prop_assert!(reached > 0);
    }
}

/// A position below the length that holds another entity than `then`
/// (the dense array at revision `since`) and is not logged since then;
/// `None` when the log no longer reaches back to `since`.
fn unlogged(set: &SparseSet<u32>, since: u64, then: &[Entity]) -> Option<usize> {
    let now = set.entities();
    let mut logged = vec![false; now.len()];
    for range in set.runs.changes_since(since)? {
        for p in range.filter(|&p| p < now.len()) {
            logged[p] = true;
        }
    }
    (0..now.len()).find(|&p| !logged[p] && then.get(p) != Some(&now[p]))
}

#[test]
fn clear_empties_sparse_slots() {
    let mut set = SparseSet::new();
    set.insert(e(1, 1), 1).unwrap();
    set.insert(e(2, 1), 2).unwrap();
    set.clear();
    assert!(set.is_empty());
    assert!(!set.contains(e(1, 1)));
    set.insert(e(2, 1), 3).unwrap();
    assert_eq!(set.entities(), &[e(2, 1)]);
}

/// A restore from a saved copy (which keeps no sparse index) into a set
/// holding other entities maps exactly the copy's entities, dense on a
/// page or a few spread over many pages; a copy made to become a pool is
/// indexed.
#[test]
fn restore_maps_exactly_the_source_entities() {
    let spread = |n: u32, step: u32, offset: u32| -> Vec<Entity> {
        (0..n).map(|i| e(offset + i * step, 1)).collect()
    };
    let pages = PAGE_LEN as u32;
    let cases = [
        // Few entities over several pages.
        (spread(3, pages + 1, 5), spread(4, pages - 3, 2)),
        // Dense on one page.
        (spread(pages / 2, 1, 0), spread(pages / 2, 1, pages / 4)),
        // From dense to sparse and back.
        (spread(pages / 2, 1, 0), spread(2, 3 * pages, 1)),
        (spread(2, 3 * pages, 1), spread(pages / 2, 1, 0)),
        // Mostly in place: two swapped, one index reused by a newer
        // generation at the same position, one more at the end.
        (
            spread(8, 1, 0),
            [0, 1, 5, 3, 4, 2, 6]
                .map(|i| e(i, 1))
                .into_iter()
                .chain([e(7, 2), e(pages + 9, 1)])
                .collect(),
        ),
    ];
    for (own, src) in cases {
        let mut set: SparseSet<u32> = SparseSet::new();
        for (k, &entity) in own.iter().enumerate() {
            set.insert(entity, k as u32).unwrap();
        }
        let mut source: SparseSet<u32> = SparseSet::new();
        for (k, &entity) in src.iter().enumerate() {
            source.insert(entity, 1000 + k as u32).unwrap();
        }
        set.restore_from(&source.copy_state(false), 0, false, CopySide::From);
        assert_eq!(set.entities(), source.entities());
        for (k, &entity) in src.iter().enumerate() {
            assert_eq!(set.get(entity), Some(&(1000 + k as u32)));
        }
        for &entity in own.iter().filter(|o| !src.contains(o)) {
            assert_eq!(set.get(entity), None, "{entity:?} left mapped");
        }
        // Every index the two sets touched looks up as in the source, in
        // the restored set and in an indexed copy of a saved copy.
        let saved = source.copy_state(false);
        assert_eq!(
            saved.sparse.get(src[0].index()),
            None,
            "a saved copy has no index"
        );
        let adopted = saved.copy_state(true);
        let last = own.iter().chain(&src).map(|e| e.index()).max().unwrap();
        for index in 0..=last + 1 {
            let expected = source.sparse.get(index);
            assert_eq!(set.sparse.get(index), expected, "slot {index}");
            assert_eq!(
                adopted.sparse.get(index),
                expected,
                "slot {index}, indexed copy"
            );
        }
    }
}
