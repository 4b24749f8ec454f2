//! `Registry::clone_entities_into`: copies of entities in another
//! registry, their handles and hierarchy following an `EntityMap`.

use std::alloc::Layout;

use ecs_engine::{
    CloneEntityError, ComponentDescriptor, EcsError, Entity, EntityMap, MapEntities, Registry,
};

#[derive(Clone, Debug, PartialEq)]
struct Hp(u32);

#[derive(Clone, Debug, PartialEq)]
struct Targets(Vec<Entity>);

impl MapEntities for Targets {
    fn map_entities(&mut self, map: &mut EntityMap) {
        for target in &mut self.0 {
            *target = map.map(*target);
        }
    }
}

#[derive(Debug)]
struct Secret;

fn level() -> Registry {
    let mut level = Registry::new();
    level.register_clone::<Hp>();
    level.register_clone_mapped::<Targets>();
    level
}

#[test]
fn handles_follow_the_map_and_the_rest_become_null() {
    let mut src = level();
    let a = src.spawn((Hp(1),));
    let b = src.spawn((Hp(2), Targets(vec![a])));
    let outside = src.spawn((Hp(3),));
    let c = src.spawn((Targets(vec![b, outside, Entity::NULL, a]),));

    let mut dst = Registry::new();
    let resident = dst.spawn((Hp(99),));
    let mut map = EntityMap::new();
    src.clone_entities_into(&[c, a, b], &mut dst, &mut map)
        .unwrap();

    assert_eq!(map.len(), 3);
    let (a2, b2, c2) = (
        map.get(a).unwrap(),
        map.get(b).unwrap(),
        map.get(c).unwrap(),
    );
    assert!(
        [a2, b2, c2]
            .iter()
            .all(|&e| e != resident && dst.is_alive(e))
    );
    assert_eq!(dst.len(), 4);
    assert_eq!(dst.get::<Hp>(a2), Some(&Hp(1)));
    assert_eq!(dst.get::<Hp>(b2), Some(&Hp(2)));
    assert_eq!(dst.get::<Hp>(c2), None);
    assert_eq!(dst.get::<Targets>(b2), Some(&Targets(vec![a2])));
    assert_eq!(
        dst.get::<Targets>(c2),
        Some(&Targets(vec![b2, Entity::NULL, Entity::NULL, a2]))
    );
    assert_eq!(
        map.unmapped(),
        1,
        "only `outside` was left behind; NULL stays NULL uncounted"
    );
    // The source is untouched.
    assert_eq!(src.len(), 4);
    assert_eq!(src.get::<Targets>(b), Some(&Targets(vec![a])));
    assert_eq!(dst.get::<Hp>(resident), Some(&Hp(99)));
}

#[test]
fn a_seeded_or_earlier_mapping_is_reused_not_copied_again() {
    let mut src = level();
    let player = src.spawn((Hp(10),));
    let minion = src.spawn((Targets(vec![player]),));

    let mut dst = level();
    let their_player = dst.spawn((Hp(50),));
    let mut map = EntityMap::new();
    map.insert(player, their_player);
    src.clone_entities_into(&[player, minion, minion], &mut dst, &mut map)
        .unwrap();
    let minion2 = map.get(minion).unwrap();
    assert_eq!(dst.len(), 2, "the seeded player and one minion copy");
    assert_eq!(dst.get::<Hp>(their_player), Some(&Hp(50)));
    assert_eq!(
        dst.get::<Targets>(minion2),
        Some(&Targets(vec![their_player]))
    );
    assert_eq!(
        src.clone_entity_into(minion, &mut dst, &mut map),
        Ok(minion2)
    );
    assert_eq!(dst.len(), 2);
}

#[test]
fn the_hierarchy_follows_in_the_source_child_order() {
    let mut src = level();
    let root = src.spawn((Hp(0),));
    let kids: Vec<Entity> = (1..=4).map(|i| src.spawn((Hp(i),))).collect();
    for &kid in &kids {
        src.set_parent(kid, root).unwrap();
    }
    let grandchild = src.spawn((Hp(9),));
    src.set_parent(grandchild, kids[3]).unwrap();

    let mut dst = Registry::new();
    let mut map = EntityMap::new();
    // Out of order, and kids[1] left behind.
    src.clone_entities_into(
        &[kids[3], grandchild, kids[2], root, kids[0]],
        &mut dst,
        &mut map,
    )
    .unwrap();
    let copy = |e: Entity| map.get(e).unwrap();
    assert_eq!(
        dst.children(copy(root)),
        [copy(kids[0]), copy(kids[2]), copy(kids[3])]
    );
    assert_eq!(dst.children(copy(kids[3])), [copy(grandchild)]);
    assert_eq!(dst.parent(copy(root)), None);
    assert_eq!(map.unmapped(), 0);

    // A child whose parent is not copied is a root of the copy, counted.
    let mut alone = EntityMap::new();
    src.clone_entities_into(&[kids[1]], &mut dst, &mut alone)
        .unwrap();
    assert_eq!(dst.parent(alone.get(kids[1]).unwrap()), None);
    assert_eq!(alone.unmapped(), 1);
    // A parent mapped to an entity dead in `dst`: a root too, counted.
    let mut stale = EntityMap::new();
    let gone = dst.spawn(());
    dst.despawn(gone).unwrap();
    stale.insert(root, gone);
    src.clone_entities_into(&[kids[0]], &mut dst, &mut stale)
        .unwrap();
    assert_eq!(dst.parent(stale.get(kids[0]).unwrap()), None);
    assert_eq!(stale.unmapped(), 1);
}

#[test]
fn disabled_marks_are_copied() {
    let mut src = level();
    let e = src.spawn((Hp(1),));
    src.disable(e).unwrap();
    let mut dst = Registry::new();
    let copy = src
        .clone_entity_into(e, &mut dst, &mut EntityMap::new())
        .unwrap();
    assert!(dst.is_disabled(copy));
    assert_eq!(dst.get::<Hp>(copy), Some(&Hp(1)));
}

#[test]
fn copies_can_be_saved_and_copied_on_with_their_mapping() {
    let mut src = level();
    let a = src.spawn((Hp(1),));
    let b = src.spawn((Targets(vec![a]),));
    let mut mid = Registry::new();
    let mut map = EntityMap::new();
    src.clone_entities_into(&[a, b], &mut mid, &mut map)
        .unwrap();
    assert!(
        mid.save_state().is_ok(),
        "the copied types are clonable in `mid`"
    );

    let mut last = Registry::new();
    last.spawn(());
    let mut map2 = EntityMap::new();
    let (a2, b2) = (map.get(a).unwrap(), map.get(b).unwrap());
    mid.clone_entities_into(&[a2, b2], &mut last, &mut map2)
        .unwrap();
    let (a3, b3) = (map2.get(a2).unwrap(), map2.get(b2).unwrap());
    assert_eq!(last.get::<Targets>(b3), Some(&Targets(vec![a3])));
}

#[test]
fn a_refused_copy_changes_nothing() {
    let mut src = level();
    let ok = src.spawn((Hp(1),));
    let secret = src.spawn((Hp(2), Secret));
    let dead = src.spawn(());
    src.despawn(dead).unwrap();
    let id = src
        .register_runtime(ComponentDescriptor::new("Bytes", Layout::new::<u32>()))
        .unwrap();
    let raw = src.spawn(());
    let value = 7u32;
    // SAFETY: `value` is a valid, initialised u32, the layout registered.
    unsafe { src.insert_raw(raw, id, (&raw const value).cast()) }.unwrap();

    let mut dst = Registry::new();
    let mut map = EntityMap::new();
    let cases = [(dead, "not alive"), (secret, "Secret"), (raw, "Bytes")];
    for (entity, named) in cases {
        let error = src
            .clone_entities_into(&[ok, entity], &mut dst, &mut map)
            .unwrap_err();
        assert!(error.to_string().contains(named), "{error}");
        match (entity, &error) {
            (e, CloneEntityError::Registry(EcsError::NoSuchEntity { .. })) if e == dead => {}
            (e, CloneEntityError::NotClonable { entity, .. }) if e == secret => {
                assert_eq!(*entity, secret)
            }
            (e, CloneEntityError::RunTimeComponent { entity, .. }) if e == raw => {
                assert_eq!(*entity, raw)
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(dst.len(), 0);
        assert!(map.is_empty());
    }
}
