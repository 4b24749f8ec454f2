//! Change detection on run-time components: added and changed ticks kept
//! by a blob pool once tracked, raw views filtered on them, write terms
//! that mark, optional terms, the removal log, and states that keep the
//! ticks; a model test against a map of ticks.

use std::alloc::Layout;
use std::collections::HashMap;

use ecs_engine::{
    Access, ChangeTick, ComponentDescriptor, ComponentId, EcsError, Entity, Registry, RemovedCursor,
};
use proptest::prelude::*;

fn registry_with(names: &[&str]) -> (Registry, Vec<ComponentId>) {
    let mut registry = Registry::new();
    let ids = names
        .iter()
        .map(|name| {
            let descriptor = ComponentDescriptor::new(*name, Layout::new::<u32>());
            registry.register_runtime(descriptor).unwrap()
        })
        .collect();
    (registry, ids)
}

fn put(registry: &mut Registry, e: Entity, id: ComponentId, value: u32) {
    // SAFETY: a valid u32, plain bytes.
    unsafe { registry.insert_raw(e, id, (&raw const value).cast()) }.unwrap();
}

/// The entities a read view of `id` visits with `filter` applied.
fn visited(
    registry: &mut Registry,
    id: ComponentId,
    filter: impl FnOnce(&mut ecs_engine::RawView<'_>) -> Result<(), EcsError>,
) -> Vec<Entity> {
    let mut view = registry.raw_view(&[(id, Access::Read)]).unwrap();
    filter(&mut view).unwrap();
    let mut seen = Vec::new();
    view.each(|e, _| seen.push(e));
    seen.sort();
    seen
}

#[test]
fn added_and_changed_filters_see_inserts_writes_and_replacements() {
    let (mut registry, ids) = registry_with(&["hp"]);
    let hp = ids[0];
    registry.track_changes_raw(hp).unwrap();
    assert!(registry.is_tracking_changes_raw(hp));
    let (a, b, c) = (registry.spawn(()), registry.spawn(()), registry.spawn(()));
    put(&mut registry, a, hp, 1);
    put(&mut registry, b, hp, 2);
    let since = registry.change_tick();
    registry.advance_change_tick();
    put(&mut registry, c, hp, 3); // added now
    put(&mut registry, a, hp, 10); // replaced: changed, not added
    // SAFETY: the pointer is to b's u32, written while the registry is borrowed.
    unsafe { *registry.get_raw_mut(b, hp).unwrap().cast::<u32>().as_ptr() = 20 };
    assert_eq!(
        visited(&mut registry, hp, |v| v.added_since(0, since)),
        vec![c]
    );
    assert_eq!(
        visited(&mut registry, hp, |v| v.changed_since(0, since)),
        vec![a, b, c]
    );
    let later = registry.change_tick();
    registry.advance_change_tick();
    assert!(visited(&mut registry, hp, |v| v.changed_since(0, later)).is_empty());
    // A read of b through `get_raw` marks nothing.
    registry.get_raw(b, hp).unwrap();
    assert!(visited(&mut registry, hp, |v| v.changed_since(0, later)).is_empty());
}

#[test]
fn write_terms_mark_what_they_visit_and_read_terms_do_not() {
    let (mut registry, ids) = registry_with(&["pos", "vel", "tag"]);
    let (pos, vel, tag) = (ids[0], ids[1], ids[2]);
    for id in [pos, vel] {
        registry.track_changes_raw(id).unwrap();
    }
    let entities: Vec<Entity> = (0..6).map(|_| registry.spawn(())).collect();
    for (k, &e) in entities.iter().enumerate() {
        put(&mut registry, e, pos, 0);
        put(&mut registry, e, vel, k as u32);
        if k % 2 == 0 {
            put(&mut registry, e, tag, 0);
        }
    }
    let since = registry.change_tick();
    registry.advance_change_tick();
    // Chunks: only the tagged entities (a join with `tag`) are visited and marked.
    let mut view = registry
        .raw_view(&[
            (pos, Access::Write),
            (vel, Access::Read),
            (tag, Access::Read),
        ])
        .unwrap();
    let mut rows = 0;
    view.each_chunk(|chunk| rows += chunk.len());
    drop(view);
    assert_eq!(rows, 3);
    let tagged: Vec<Entity> = entities.iter().copied().step_by(2).collect();
    assert_eq!(
        visited(&mut registry, pos, |v| v.changed_since(0, since)),
        tagged
    );
    assert!(visited(&mut registry, vel, |v| v.changed_since(0, since)).is_empty());
    // Per entity, with a filter: only the entities passing it are marked.
    let since = registry.change_tick();
    registry.advance_change_tick();
    let mut view = registry.raw_view(&[(vel, Access::Write)]).unwrap();
    view.added_since(0, ChangeTick::new(since.get().wrapping_sub(5)))
        .unwrap();
    let mut count = 0;
    view.each(|_, _| count += 1);
    drop(view);
    assert_eq!(count, 6, "every vel was added within the last five ticks");
    assert_eq!(
        visited(&mut registry, vel, |v| v.changed_since(0, since)).len(),
        6
    );
    let mut view = registry.raw_view(&[(pos, Access::Write)]).unwrap();
    view.changed_since(0, since).unwrap();
    assert_eq!(view.count(), 0, "nothing of pos changed since");
}

#[test]
fn optional_terms_give_null_for_an_absent_value_and_mark_present_ones() {
    let (mut registry, ids) = registry_with(&["pos", "shield"]);
    let (pos, shield) = (ids[0], ids[1]);
    registry.track_changes_raw(shield).unwrap();
    let a = registry.spawn(());
    let b = registry.spawn(());
    put(&mut registry, a, pos, 1);
    put(&mut registry, b, pos, 2);
    put(&mut registry, b, shield, 7);
    let since = registry.change_tick();
    registry.advance_change_tick();
    let mut view = registry.raw_view(&[(pos, Access::Read)]).unwrap();
    view.optional(shield, Access::Write).unwrap();
    assert!(matches!(
        view.optional(shield, Access::Read),
        Err(EcsError::DuplicateTerm { .. })
    ));
    assert!(matches!(
        view.optional(pos, Access::Read),
        Err(EcsError::DuplicateTerm { .. })
    ));
    let mut seen = Vec::new();
    view.each(|e, values| {
        assert_eq!(values.len(), 2);
        // SAFETY: each non-null pointer is to a u32; shield is written under its write lock.
        let shield = (!values[1].is_null()).then(|| unsafe {
            *values[1].cast::<u32>() += 1;
            *values[1].cast::<u32>()
        });
        seen.push((e, shield));
    });
    drop(view);
    seen.sort();
    assert_eq!(seen, vec![(a, None), (b, Some(8))]);
    assert_eq!(
        visited(&mut registry, shield, |v| v.changed_since(0, since)),
        vec![b]
    );
}

#[test]
fn an_untracked_component_refuses_change_filters_and_removal_reads() {
    let (mut registry, ids) = registry_with(&["hp"]);
    let hp = ids[0];
    assert!(!registry.is_tracking_changes_raw(hp));
    let mut view = registry.raw_view(&[(hp, Access::Read)]).unwrap();
    let err = view.changed_since(0, ChangeTick::new(0)).unwrap_err();
    assert!(matches!(err, EcsError::Untracked { .. }), "{err}");
    assert!(err.to_string().contains("`hp`"), "{err}");
    drop(view);
    let err = registry
        .removed_raw(hp, &mut RemovedCursor::default(), |_| {})
        .unwrap_err();
    assert!(matches!(err, EcsError::Untracked { .. }));
    struct Typed;
    registry.spawn((Typed,));
    let typed = registry.component_id::<Typed>().unwrap();
    assert!(matches!(
        registry.track_changes_raw(typed),
        Err(EcsError::TypedComponent { .. })
    ));
}

#[test]
fn the_removal_log_lists_removes_and_despawns_in_order() {
    let (mut registry, ids) = registry_with(&["hp"]);
    let hp = ids[0];
    registry.track_changes_raw(hp).unwrap();
    let entities: Vec<Entity> = (0..4).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        put(&mut registry, e, hp, 0);
    }
    let mut cursor = RemovedCursor::default();
    registry.remove_by_id(entities[2], hp).unwrap();
    registry.despawn(entities[0]).unwrap();
    let mut lost = Vec::new();
    let missed = registry
        .removed_raw(hp, &mut cursor, |e| lost.push(e))
        .unwrap();
    assert_eq!((lost, missed), (vec![entities[2], entities[0]], 0));
    let mut again = Vec::new();
    registry
        .removed_raw(hp, &mut cursor, |e| again.push(e))
        .unwrap();
    assert!(again.is_empty());
}

#[test]
fn a_state_keeps_the_ticks_and_the_log() {
    let (mut registry, ids) = registry_with(&["hp"]);
    let hp = ids[0];
    registry.track_changes_raw(hp).unwrap();
    let (a, b) = (registry.spawn(()), registry.spawn(()));
    put(&mut registry, a, hp, 1);
    let since = registry.change_tick();
    registry.advance_change_tick();
    put(&mut registry, b, hp, 2);
    let state = registry.save_state().unwrap();
    registry.advance_change_tick();
    put(&mut registry, a, hp, 3);
    registry.remove_by_id(b, hp).unwrap();
    registry.restore_state(&state).unwrap();
    assert_eq!(
        visited(&mut registry, hp, |v| v.added_since(0, since)),
        vec![b]
    );
    assert_eq!(
        visited(&mut registry, hp, |v| v.changed_since(0, since)),
        vec![b]
    );
    // The clock still advances the restored pool: a new write is newer.
    let now = registry.change_tick();
    registry.advance_change_tick();
    put(&mut registry, a, hp, 4);
    assert_eq!(
        visited(&mut registry, hp, |v| v.changed_since(0, now)),
        vec![a]
    );
}

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    Insert(usize),
    Remove(usize),
    Despawn(usize),
    WriteAll,
    GetMut(usize),
    Advance,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Spawn),
        4 => (0..8usize).prop_map(Op::Insert),
        2 => (0..8usize).prop_map(Op::Remove),
        1 => (0..8usize).prop_map(Op::Despawn),
        1 => Just(Op::WriteAll),
        2 => (0..8usize).prop_map(Op::GetMut),
        3 => Just(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 64 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every `since` the run passed through sees exactly the entities the
    /// model says were added or changed after it, and the removal log
    /// lists exactly the model's removals.
    #[test]
    fn filters_and_the_log_match_a_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 30 } else { 60 })) {
        let (mut registry, ids) = registry_with(&["hp"]);
        let hp = ids[0];
        registry.track_changes_raw(hp).unwrap();
        let mut alive: Vec<Entity> = Vec::new();
        // entity -> (added, changed), as raw ticks.
        let mut model: HashMap<Entity, (u32, u32)> = HashMap::new();
        let mut removed: Vec<Entity> = Vec::new();
        let mut sinces = vec![registry.change_tick()];
        let pick = |alive: &[Entity], k: usize| (!alive.is_empty()).then(|| alive[k % alive.len()]);
        for op in ops {
            let now = registry.change_tick().get();
            match op {
                Op::Spawn => alive.push(registry.spawn(())),
                Op::Insert(k) => if let Some(e) = pick(&alive, k) {
                    put(&mut registry, e, hp, k as u32);
                    let entry = model.entry(e).or_insert((now, now));
                    entry.1 = now;
                },
                Op::Remove(k) => if let Some(e) = pick(&alive, k) {
                    let had = registry.remove_by_id(e, hp).unwrap();
                    prop_assert_eq!(had, model.remove(&e).is_some());
                    if had {
                        removed.push(e);
                    }
                },
                Op::Despawn(k) => if let Some(e) = pick(&alive, k) {
                    registry.despawn(e).unwrap();
                    alive.retain(|&x| x != e);
                    if model.remove(&e).is_some() {
                        removed.push(e);
                    }
                },
                Op::WriteAll => {
                    registry.raw_view(&[(hp, Access::Write)]).unwrap().each(|_, _| {});
                    for ticks in model.values_mut() {
                        ticks.1 = now;
                    }
                },
                Op::GetMut(k) => if let Some(e) = pick(&alive, k) {
                    let got = registry.get_raw_mut(e, hp).is_ok();
                    prop_assert_eq!(got, model.contains_key(&e));
                    if let Some(ticks) = model.get_mut(&e) {
                        ticks.1 = now;
                    }
                },
                Op::Advance => {
                    sinces.push(registry.change_tick());
                    registry.advance_change_tick();
                },
            }
        }
        let now = registry.change_tick().get();
        for since in sinces {
            let s = since.get();
            let newer = |t: u32| now.wrapping_sub(t) < now.wrapping_sub(s);
            let mut want_added: Vec<Entity> =
                model.iter().filter(|(_, t)| newer(t.0)).map(|(&e, _)| e).collect();
            let mut want_changed: Vec<Entity> =
                model.iter().filter(|(_, t)| newer(t.1)).map(|(&e, _)| e).collect();
            want_added.sort();
            want_changed.sort();
            prop_assert_eq!(visited(&mut registry, hp, |v| v.added_since(0, since)), want_added);
            prop_assert_eq!(visited(&mut registry, hp, |v| v.changed_since(0, since)), want_changed);
        }
        let mut log = Vec::new();
        registry.removed_raw(hp, &mut RemovedCursor::default(), |e| log.push(e)).unwrap();
        prop_assert_eq!(log, removed);
    }
}
