//! Unit tests of `EntityAllocator`: reuse order, generation limits, live
//! limits, reserved handles, lanes and the handles' bit layout.

use super::*;

#[test]
fn fifo_reuse_bumps_generation() {
    let mut alloc = EntityAllocator::new();
    let e: Vec<Entity> = (0..4).map(|_| alloc.allocate().unwrap()).collect();
    alloc.free(e[2]).unwrap();
    alloc.free(e[0]).unwrap();
    alloc.free(e[3]).unwrap();
    let reused: Vec<(u32, u32)> = (0..4)
        .map(|_| alloc.allocate().unwrap())
        .map(|e| (e.index(), e.generation()))
        .collect();
    assert_eq!(reused, vec![(2, 2), (0, 2), (3, 2), (4, 1)]);
    assert!(!alloc.is_alive(e[0]));
    assert!(alloc.is_alive(e[1]));
    assert_eq!(alloc.len(), 5);
}

#[test]
fn iter_yields_the_live_handles_by_index_across_words() {
    let mut alloc = EntityAllocator::new();
    let all: Vec<Entity> = (0..200).map(|_| alloc.allocate().unwrap()).collect();
    // Free slots at and around the 64-slot word boundaries, a whole word
    // (128..192) and the last slot.
    let freed: Vec<u32> = [0, 62, 63, 64, 65, 127, 199]
        .into_iter()
        .chain(128..192)
        .collect();
    for &i in &freed {
        alloc.free(all[i as usize]).unwrap();
    }
    // A reserved slot (taken from the free list) is not live either.
    let reserved = alloc.reserve().unwrap();
    assert!(freed.contains(&reserved.index()));
    let expected: Vec<Entity> = all
        .iter()
        .copied()
        .filter(|e| !freed.contains(&e.index()))
        .collect();
    assert_eq!(alloc.iter().collect::<Vec<_>>(), expected);
    assert_eq!(alloc.iter().count(), alloc.len());
    // A reused slot yields its new generation.
    let again = alloc.allocate().unwrap();
    assert_eq!(again.generation(), 2);
    let live: Vec<Entity> = alloc.iter().collect();
    assert!(live.contains(&again));
    assert!(!live.contains(&all[again.index() as usize]));
    assert!(EntityAllocator::new().iter().next().is_none());
}

#[test]
fn slot_is_retired_at_generation_limit() {
    let mut alloc = EntityAllocator::new().with_max_generation(NonZeroU32::new(3).unwrap());
    let mut e = alloc.allocate().unwrap();
    for generation in 1..3 {
        assert_eq!((e.index(), e.generation()), (0, generation));
        alloc.free(e).unwrap();
        e = alloc.allocate().unwrap();
    }
    assert_eq!((e.index(), e.generation()), (0, 3));
    alloc.free(e).unwrap();
    assert_eq!(alloc.retired(), 1);
    let next = alloc.allocate().unwrap();
    assert_eq!((next.index(), next.generation()), (1, 1));
    assert!(!alloc.is_alive(e));
}

#[test]
fn default_limit_retires_instead_of_wrapping() {
    let mut alloc = EntityAllocator::new();
    let e = alloc.allocate().unwrap();
    alloc.generations[0] = NonZeroU32::MAX;
    let last = Entity::new(0, NonZeroU32::MAX);
    assert!(alloc.is_alive(last));
    assert!(!alloc.is_alive(e));
    alloc.free(last).unwrap();
    assert_eq!(alloc.retired(), 1);
    assert_eq!(alloc.allocate().unwrap().index(), 1);
}

#[test]
fn live_limit_is_an_error() {
    let mut alloc = EntityAllocator::new().with_max_live(2);
    let a = alloc.allocate().unwrap();
    alloc.allocate().unwrap();
    assert_eq!(
        alloc.allocate(),
        Err(EcsError::TooManyEntities { limit: 2 })
    );
    alloc.free(a).unwrap();
    assert!(alloc.allocate().is_ok());
}

#[test]
fn unknown_and_null_handles_are_not_alive() {
    let mut alloc = EntityAllocator::new();
    assert!(!alloc.is_alive(Entity::NULL));
    let far = Entity::new(10_000_000, NonZeroU32::MIN);
    assert!(!alloc.is_alive(far));
    assert_eq!(alloc.free(far), Err(EcsError::NoSuchEntity { entity: far }));
    let e = alloc.allocate().unwrap();
    alloc.free(e).unwrap();
    assert_eq!(alloc.free(e), Err(EcsError::NoSuchEntity { entity: e }));
}

#[test]
fn reserved_handles_are_not_alive_until_activated() {
    let mut alloc = EntityAllocator::new().with_max_live(2);
    let r = alloc.reserve().unwrap();
    assert!(alloc.is_reserved(r) && !alloc.is_alive(r));
    let a = alloc.allocate().unwrap();
    assert_ne!(a.index(), r.index());
    assert!(
        alloc.allocate().is_err(),
        "the reservation counts toward the limit"
    );
    alloc.activate(r).unwrap();
    assert!(alloc.is_alive(r) && !alloc.is_reserved(r));
    assert_eq!(alloc.activate(r), Err(EcsError::NoSuchEntity { entity: r }));
    alloc.free(r).unwrap();
    let r2 = alloc.reserve().unwrap();
    assert_eq!((r2.index(), r2.generation()), (r.index(), 2));
    alloc.cancel(r2).unwrap();
    assert_eq!(alloc.cancel(r2), Err(EcsError::NoSuchEntity { entity: r2 }));
    // A forged handle to a free slot is not reserved.
    let forged = Entity::new(r.index(), NonZeroU32::new(3).unwrap());
    assert_eq!(
        alloc.activate(forged),
        Err(EcsError::NoSuchEntity { entity: forged })
    );
    assert_eq!((alloc.len(), alloc.reserved()), (1, 0));
}

#[test]
fn lanes_reserve_claims_free_gaps_and_refuse_past_the_limit() {
    use crate::IndexLane;
    let mut alloc = EntityAllocator::new().with_max_live(4);
    let first = alloc.allocate().unwrap();
    let base = alloc.slot_count();
    let lanes: Vec<IndexLane> = (0..3).map(|p| IndexLane::new(base, 3, p)).collect();
    // Lane 0 hands out 1 handle, lane 1 none, lane 2 three.
    let handed: Vec<Entity> = [(0, 0), (2, 0), (2, 1), (2, 2)]
        .iter()
        .map(|&(p, j)| lanes[p].handle(j).unwrap())
        .collect();
    assert_eq!(
        handed.iter().map(|e| e.index()).collect::<Vec<_>>(),
        [1, 3, 6, 9]
    );
    // Room for 3 more: indices 1, 3 and 6 are reserved, 9 is refused.
    assert_eq!(alloc.reserve_lanes(base, &[1, 0, 3]), 1);
    assert_eq!(alloc.slot_count(), 10);
    assert!(handed[..3].iter().all(|&e| alloc.is_reserved(e)));
    assert!(!alloc.is_reserved(handed[3]) && !alloc.is_alive(handed[3]));
    // Gaps and the refused slot are free, in index order; the refused
    // handle never comes back alive.
    alloc.free(first).unwrap();
    let reused: Vec<(u32, u32)> = std::iter::from_fn(|| {
        let e = alloc.allocate().ok()?;
        alloc.free(e).unwrap();
        Some((e.index(), e.generation()))
    })
    .take(8)
    .collect();
    assert_eq!(
        reused,
        [
            (2, 1),
            (4, 1),
            (5, 1),
            (7, 1),
            (8, 1),
            (9, 2),
            (0, 2),
            (2, 2)
        ]
    );
}

#[test]
fn layout_is_fixed() {
    assert_eq!(std::mem::size_of::<Entity>(), 8);
    assert_eq!(std::mem::align_of::<Entity>(), 8);
    assert_eq!(std::mem::size_of::<Option<Entity>>(), 8);
}

#[cfg(target_endian = "little")]
#[test]
fn slice_as_bits_matches_to_bits() {
    let entities: Vec<Entity> = (0..5)
        .map(|i| Entity::new(i * 7 + 1, NonZeroU32::new(i + 3).unwrap()))
        .chain([Entity::NULL])
        .collect();
    let bits = Entity::slice_as_bits(&entities);
    let expected: Vec<u64> = entities.iter().map(|e| e.to_bits()).collect();
    assert_eq!(bits, &expected[..]);
    assert!(Entity::slice_as_bits(&[]).is_empty());
}

#[test]
fn bits_round_trip() {
    let e = Entity::new(7, NonZeroU32::new(9).unwrap());
    assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    assert_eq!(Entity::from_bits(7), None);
    assert_eq!(format!("{e:?}"), "7:9");
}
