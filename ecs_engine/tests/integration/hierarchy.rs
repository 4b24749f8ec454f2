//! The hierarchy: `ChildOf`/`Children` consistency, traversal order, the two
//! despawns, and a model-based property test.

use std::collections::HashMap;

use ecs_engine::{ChildOf, Children, EcsError, Entity, Registry};
use proptest::prelude::*;

/// Checks every hierarchy invariant of the module docs.
fn assert_consistent(registry: &Registry) {
    for (child, of) in registry.view::<(Entity, &ChildOf)>().iter() {
        let parent = of.parent();
        assert!(
            registry.is_alive(parent),
            "{child} has a dead parent {parent}"
        );
        let n = registry
            .children(parent)
            .iter()
            .filter(|&&c| c == child)
            .count();
        assert_eq!(n, 1, "{child} listed {n} times under {parent}");
        // No cycle: the walk up ends within the number of entities.
        let mut up = Some(parent);
        for _ in 0..=registry.len() {
            up = up.and_then(|e| registry.parent(e));
        }
        assert_eq!(up, None, "cycle above {child}");
    }
    for (parent, children) in registry.view::<(Entity, &Children)>().iter() {
        assert!(!children.is_empty(), "{parent} keeps an empty Children");
        for child in children.iter() {
            assert!(registry.is_alive(child), "{parent} lists dead {child}");
            assert_eq!(registry.parent(child), Some(parent));
        }
    }
}

fn spawn_n<const N: usize>(registry: &mut Registry) -> [Entity; N] {
    [(); N].map(|()| registry.spawn(()))
}

#[test]
fn set_parent_appends_in_insertion_order_and_moves() {
    let mut registry = Registry::new();
    let [a, b, x, y, z] = spawn_n(&mut registry);
    registry.set_parent(z, a).unwrap();
    registry.set_parent(x, a).unwrap();
    registry.set_parent(y, a).unwrap();
    assert_eq!(registry.children(a), [z, x, y]);
    // Same parent again: keeps its place.
    registry.set_parent(z, a).unwrap();
    assert_eq!(registry.children(a), [z, x, y]);
    // Moving to another parent takes it out of the old list.
    registry.set_parent(x, b).unwrap();
    assert_eq!(registry.children(a), [z, y]);
    assert_eq!(registry.children(b), [x]);
    assert_eq!(registry.get::<ChildOf>(x).map(ChildOf::parent), Some(b));
    // Detaching the last child removes the list.
    assert_eq!(registry.remove_parent(x), Ok(Some(b)));
    assert_eq!(registry.remove_parent(x), Ok(None));
    assert!(!registry.has::<(Children,)>(b));
    assert_eq!(registry.count::<Children>(), 1);
    assert_consistent(&registry);
}

#[test]
fn set_parent_refuses_cycles_and_dead_entities() {
    let mut registry = Registry::new();
    let [a, b, c, dead] = spawn_n(&mut registry);
    registry.despawn(dead).unwrap();
    registry.set_parent(b, a).unwrap();
    registry.set_parent(c, b).unwrap();
    assert_eq!(
        registry.set_parent(a, c),
        Err(EcsError::HierarchyCycle {
            child: a,
            parent: c
        })
    );
    assert_eq!(
        registry.set_parent(a, a),
        Err(EcsError::HierarchyCycle {
            child: a,
            parent: a
        })
    );
    assert_eq!(
        registry.set_parent(dead, a),
        Err(EcsError::NoSuchEntity { entity: dead })
    );
    assert_eq!(
        registry.set_parent(a, dead),
        Err(EcsError::NoSuchEntity { entity: dead })
    );
    assert_eq!(
        registry.remove_parent(dead),
        Err(EcsError::NoSuchEntity { entity: dead })
    );
    assert_eq!(registry.parent(a), None);
    assert_eq!(registry.children(a), [b]);
    assert!(
        EcsError::HierarchyCycle {
            child: a,
            parent: c
        }
        .to_string()
        .contains("descendants")
    );
    assert_consistent(&registry);
}

#[test]
fn traversal_orders_and_root() {
    let mut registry = Registry::new();
    let [r, a, b, a1, a2, b1, a1x, other] = spawn_n(&mut registry);
    for (child, parent) in [(a, r), (b, r), (a1, a), (a2, a), (b1, b), (a1x, a1)] {
        registry.set_parent(child, parent).unwrap();
    }
    let dfs: Vec<Entity> = registry.depth_first(r).collect();
    assert_eq!(dfs, [r, a, a1, a1x, a2, b, b1]);
    let bfs: Vec<Entity> = registry.breadth_first(r).collect();
    assert_eq!(bfs, [r, a, b, a1, a2, b1, a1x]);
    assert_eq!(
        registry.depth_first(a).collect::<Vec<_>>(),
        [a, a1, a1x, a2]
    );
    assert_eq!(registry.breadth_first(other).collect::<Vec<_>>(), [other]);
    for e in [r, a, b, a1, a2, b1, a1x] {
        assert_eq!(registry.root(e), Some(r));
    }
    assert_eq!(registry.root(other), Some(other));
    registry.despawn(other).unwrap();
    assert_eq!(registry.root(other), None);
    assert_eq!(registry.depth_first(other).count(), 0);
    assert_eq!(registry.breadth_first(other).count(), 0);
}

#[test]
fn despawn_detaches_children_and_leaves_the_parent_list() {
    let mut registry = Registry::new();
    let [g, p, c1, c2, s] = spawn_n(&mut registry);
    registry.set_parent(p, g).unwrap();
    registry.set_parent(s, g).unwrap();
    registry.set_parent(c1, p).unwrap();
    registry.set_parent(c2, p).unwrap();
    registry.despawn(p).unwrap();
    assert_eq!(registry.children(g), [s]);
    assert_eq!(registry.parent(c1), None);
    assert_eq!(registry.parent(c2), None);
    assert!(registry.is_alive(c1) && registry.is_alive(c2));
    assert!(!registry.has::<(ChildOf,)>(c1));
    assert_consistent(&registry);
}

#[test]
fn despawn_recursive_takes_the_subtree_only() {
    let mut registry = Registry::new();
    let [g, p, c1, c2, c2x, s] = spawn_n(&mut registry);
    for (child, parent) in [(p, g), (s, g), (c1, p), (c2, p), (c2x, c2)] {
        registry.set_parent(child, parent).unwrap();
    }
    assert_eq!(registry.despawn_recursive(p), Ok(4));
    for e in [p, c1, c2, c2x] {
        assert!(!registry.is_alive(e));
    }
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.children(g), [s]);
    assert_eq!(registry.count::<ChildOf>(), 1);
    assert_eq!(
        registry.despawn_recursive(p),
        Err(EcsError::NoSuchEntity { entity: p })
    );
    assert_consistent(&registry);
    // A root alone.
    assert_eq!(registry.despawn_recursive(g), Ok(2));
    assert!(registry.is_empty());
    assert_eq!(registry.count::<Children>(), 0);
}

#[test]
fn a_reused_slot_is_not_in_any_list() {
    let mut registry = Registry::new();
    let [p, c] = spawn_n(&mut registry);
    registry.set_parent(c, p).unwrap();
    registry.despawn(c).unwrap();
    let reused = registry.spawn(());
    assert_eq!(registry.children(p), [] as [Entity; 0]);
    assert_eq!(registry.parent(reused), None);
    assert_eq!(registry.parent(c), None);
    assert_consistent(&registry);
}

#[test]
fn hierarchy_components_drop_with_clear() {
    let mut registry = Registry::new();
    let [p, c] = spawn_n(&mut registry);
    registry.set_parent(c, p).unwrap();
    registry.clear();
    assert_eq!(registry.count::<ChildOf>(), 0);
    assert_eq!(registry.count::<Children>(), 0);
}

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    SetParent(usize, usize),
    RemoveParent(usize),
    Despawn(usize),
    DespawnRecursive(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Spawn),
        5 => (0..24usize, 0..24usize).prop_map(|(a, b)| Op::SetParent(a, b)),
        1 => (0..24usize).prop_map(Op::RemoveParent),
        1 => (0..24usize).prop_map(Op::Despawn),
        1 => (0..24usize).prop_map(Op::DespawnRecursive),
    ]
}

/// The model: every entity ever spawned (by spawn order), which are alive,
/// each one's parent, and each one's children in order.
#[derive(Default)]
struct Model {
    handles: Vec<Entity>,
    alive: Vec<bool>,
    parent: HashMap<usize, usize>,
    children: HashMap<usize, Vec<usize>>,
}

impl Model {
    fn detach(&mut self, child: usize) -> Option<usize> {
        let parent = self.parent.remove(&child)?;
        let list = self.children.get_mut(&parent).unwrap();
        list.retain(|&c| c != child);
        if list.is_empty() {
            self.children.remove(&parent);
        }
        Some(parent)
    }

    fn despawn(&mut self, e: usize) {
        self.detach(e);
        for c in self.children.remove(&e).unwrap_or_default() {
            self.parent.remove(&c);
        }
        self.alive[e] = false;
    }

    fn subtree(&self, e: usize, out: &mut Vec<usize>) {
        out.push(e);
        for &c in self.children.get(&e).map_or(&[][..], Vec::as_slice) {
            self.subtree(c, out);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hierarchy_matches_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 20 } else { 120 })) {
        let mut registry = Registry::new();
        let mut model = Model::default();
        for _ in 0..6 {
            model.handles.push(registry.spawn(()));
            model.alive.push(true);
        }
        for op in ops {
            let n = model.handles.len();
            match op {
                Op::Spawn => {
                    model.handles.push(registry.spawn(()));
                    model.alive.push(true);
                }
                Op::SetParent(c, p) => {
                    let (c, p) = (c % n, p % n);
                    let result = registry.set_parent(model.handles[c], model.handles[p]);
                    if !model.alive[c] || !model.alive[p] {
                        prop_assert!(matches!(result, Err(EcsError::NoSuchEntity { .. })), "{:?}", result);
                        continue;
                    }
                    let mut up = Some(p);
                    let mut cycle = false;
                    while let Some(at) = up {
                        cycle |= at == c;
                        up = model.parent.get(&at).copied();
                    }
                    if cycle {
                        prop_assert!(matches!(result, Err(EcsError::HierarchyCycle { .. })), "{:?}", result);
                    } else {
                        prop_assert!(result.is_ok());
                        if model.parent.get(&c) != Some(&p) {
                            model.detach(c);
                            model.parent.insert(c, p);
                            model.children.entry(p).or_default().push(c);
                        }
                    }
                }
                Op::RemoveParent(c) => {
                    let c = c % n;
                    let result = registry.remove_parent(model.handles[c]);
                    if model.alive[c] {
                        let expected = model.detach(c).map(|p| model.handles[p]);
                        prop_assert_eq!(result, Ok(expected));
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                Op::Despawn(e) => {
                    let e = e % n;
                    prop_assert_eq!(registry.despawn(model.handles[e]).is_ok(), model.alive[e]);
                    if model.alive[e] {
                        model.despawn(e);
                    }
                }
                Op::DespawnRecursive(e) => {
                    let e = e % n;
                    let result = registry.despawn_recursive(model.handles[e]);
                    if model.alive[e] {
                        let mut doomed = Vec::new();
                        model.subtree(e, &mut doomed);
                        prop_assert_eq!(result, Ok(doomed.len()));
                        for d in doomed.into_iter().rev() {
                            model.despawn(d);
                        }
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
            }
            for (i, &h) in model.handles.iter().enumerate() {
                prop_assert_eq!(registry.is_alive(h), model.alive[i]);
                prop_assert_eq!(registry.parent(h), model.parent.get(&i).map(|&p| model.handles[p]));
                let expected: Vec<Entity> = model
                    .children
                    .get(&i)
                    .map_or(Vec::new(), |l| l.iter().map(|&c| model.handles[c]).collect());
                prop_assert_eq!(registry.children(h), expected.as_slice());
                if model.alive[i] {
                    let mut sub = Vec::new();
                    model.subtree(i, &mut sub);
                    let sub: Vec<Entity> = sub.into_iter().map(|s| model.handles[s]).collect();
                    prop_assert_eq!(registry.depth_first(h).collect::<Vec<_>>(), sub);
                }
            }
        }
        assert_consistent(&registry);
    }
}

#[test]
fn typed_remove_of_hierarchy_components_detaches() {
    let mut registry = Registry::new();
    let [p, c1, c2, q] = spawn_n(&mut registry);
    registry.set_parent(c1, p).unwrap();
    registry.set_parent(c2, p).unwrap();
    registry.set_parent(p, q).unwrap();
    let of = registry.remove::<ChildOf>(c1).unwrap();
    assert_eq!(of.parent(), p);
    assert_eq!(registry.children(p), [c2]);
    assert_consistent(&registry);
    let children = registry.remove::<Children>(p).unwrap();
    assert_eq!(children.as_slice(), [c2]);
    assert_eq!(registry.parent(c2), None);
    assert!(matches!(
        registry.remove::<Children>(p),
        Err(EcsError::MissingComponent { .. })
    ));
    assert_eq!(
        registry.remove_many::<ChildOf>(&mut [p].into_iter()),
        (1, Ok(()))
    );
    assert_eq!(registry.children(q), [] as [Entity; 0]);
    assert_consistent(&registry);
}

#[test]
fn views_refuse_mut_hierarchy_components() {
    let mut registry = Registry::new();
    let [p, c] = spawn_n(&mut registry);
    registry.set_parent(c, p).unwrap();
    let cell = registry.cell();
    let refused = |name: &str| EcsError::ReadOnlyComponent {
        component: name.to_owned().into(),
    };
    assert_eq!(
        cell.view::<&mut ChildOf>().err(),
        Some(refused(std::any::type_name::<ChildOf>()))
    );
    assert_eq!(
        cell.view::<(Entity, &mut Children)>().err(),
        Some(refused(std::any::type_name::<Children>()))
    );
    assert_eq!(cell.view::<&ChildOf>().map(|v| v.count()), Ok(1));
}

#[test]
fn disable_and_enable_a_subtree() {
    let mut registry = Registry::new();
    let [r, a, b, a1] = [(); 4].map(|()| registry.spawn((1_u8,)));
    registry.set_parent(a, r).unwrap();
    registry.set_parent(b, r).unwrap();
    registry.set_parent(a1, a).unwrap();
    registry.disable(b).unwrap();
    assert_eq!(registry.disable_recursive(a), Ok(2));
    assert_eq!(registry.view::<&u8>().count(), 1);
    assert_eq!(registry.disable_recursive(r), Ok(1));
    assert_eq!(registry.disabled_len(), 4);
    // The hierarchy itself is still walked: traversal ignores `Disabled`.
    assert_eq!(registry.depth_first(r).count(), 4);
    assert_eq!(registry.enable_recursive(a), Ok(2));
    assert!(registry.is_disabled(r) && registry.is_disabled(b));
    assert_eq!(registry.enable_recursive(r), Ok(2));
    assert_eq!(registry.disabled_len(), 0);
    registry.despawn(a1).unwrap();
    assert_eq!(
        registry.disable_recursive(a1),
        Err(EcsError::NoSuchEntity { entity: a1 })
    );
}

#[test]
fn remove_bundle_and_remove_by_id_of_hierarchy_components_detach() {
    let mut registry = Registry::new();
    let [p, c1, c2, c3, q] = spawn_n(&mut registry);
    registry.insert(c1, 7_u32).unwrap();
    for c in [c1, c2, c3] {
        registry.set_parent(c, p).unwrap();
    }
    registry.set_parent(p, q).unwrap();
    // A bundle naming ChildOf beside a plain component.
    registry.remove_bundle::<(u32, ChildOf)>(c1).unwrap();
    assert_eq!((registry.parent(c1), registry.get::<u32>(c1)), (None, None));
    assert_eq!(registry.children(p), [c2, c3]);
    assert_consistent(&registry);
    // By id: ChildOf detaches one child, Children every child.
    let child_of = registry.component_id::<ChildOf>().unwrap();
    let children = registry.component_id::<Children>().unwrap();
    assert_eq!(registry.remove_by_id(c2, child_of), Ok(true));
    assert_eq!(registry.remove_by_id(c2, child_of), Ok(false));
    assert_eq!(registry.children(p), [c3]);
    assert_consistent(&registry);
    assert_eq!(registry.remove_by_id(p, children), Ok(true));
    assert_eq!(registry.parent(c3), None);
    assert_eq!(registry.parent(p), Some(q));
    assert_consistent(&registry);
    registry.remove_bundle::<(Children,)>(q).unwrap();
    assert_eq!(registry.parent(p), None);
    assert_eq!(
        registry.count::<ChildOf>() + registry.count::<Children>(),
        0
    );
    assert_consistent(&registry);
}

#[test]
fn pool_mut_insert_and_get_mut_refuse_hierarchy_components() {
    let mut registry = Registry::new();
    let [p, c, d] = spawn_n(&mut registry);
    registry.set_parent(c, p).unwrap();
    registry.set_parent(d, p).unwrap();
    let read_only = |name: &str| EcsError::ReadOnlyComponent {
        component: name.to_owned().into(),
    };
    let child_of = std::any::type_name::<ChildOf>();
    let children = std::any::type_name::<Children>();
    {
        let mut pool = registry.pool_mut::<ChildOf>();
        assert_eq!(pool.remove(c), Err(read_only(child_of)));
        assert!(pool.get_mut(c).is_none());
        assert_eq!(pool.get(c).map(ChildOf::parent), Some(p));
    }
    assert_eq!(
        registry.pool_mut::<Children>().remove(p),
        Err(read_only(children))
    );
    assert!(registry.pool_mut::<Children>().get_mut(p).is_none());
    // An owned value taken out by `remove` cannot be put back elsewhere.
    let taken = registry.remove::<ChildOf>(c).unwrap();
    assert_eq!(taken.parent(), p);
    let error = registry.try_insert(d, taken).err().unwrap();
    assert_eq!(error.error, read_only(child_of));
    let taken = error.value;
    assert_eq!(
        registry.pool_mut::<ChildOf>().insert(c, taken),
        Err(read_only(child_of))
    );
    let taken = registry.remove::<Children>(p).unwrap();
    assert_eq!(registry.insert(c, taken), Err(read_only(children)));
    assert!(registry.get_mut::<ChildOf>(d).is_none());
    assert_eq!(
        registry.component_mut::<Children>(p).err(),
        Some(read_only(children))
    );
    assert_consistent(&registry);
}

#[test]
fn bundles_holding_hierarchy_values_are_refused_everywhere() {
    let mut registry = Registry::new();
    let [p, c, d] = spawn_n(&mut registry);
    registry.set_parent(c, p).unwrap();
    registry.set_parent(d, p).unwrap();
    let taken = registry.remove::<ChildOf>(c).unwrap();
    let refused = |error: &EcsError| matches!(error, EcsError::ReadOnlyComponent { .. });
    let (len, slots) = (registry.len(), registry.entities().slot_count());
    let taken = {
        // try_spawn refuses before allocating anything.
        let error = registry.try_spawn((1_u32, taken)).unwrap_err();
        assert!(refused(&error), "{error}");
        registry.remove::<ChildOf>(d).unwrap()
    };
    assert_eq!(
        (registry.len(), registry.entities().slot_count()),
        (len, slots)
    );
    let error = registry.insert_bundle(c, (2_u32, taken)).unwrap_err();
    assert!(refused(&error));
    assert_eq!(registry.get::<u32>(c), None);
    // Reserved handles are given back, not left reserved forever.
    registry.set_parent(c, p).unwrap();
    let children = registry.remove::<Children>(p).unwrap();
    let mut reserved = Vec::new();
    registry.reserve_entities(3, &mut reserved).unwrap();
    let error = registry
        .spawn_reserved(reserved[0], (children,))
        .unwrap_err();
    assert!(refused(&error));
    assert!(!registry.entities().is_reserved(reserved[0]));
    registry.set_parent(c, p).unwrap();
    let owned = registry.remove::<ChildOf>(c).unwrap();
    let mut bundles = [(owned,)].into_iter();
    let (at, error) = registry
        .spawn_reserved_batch(&reserved[1..], &mut bundles)
        .unwrap_err();
    assert!(at == 0 && refused(&error));
    assert!(bundles.next().is_none(), "the refused bundle was taken");
    assert!(!registry.entities().is_reserved(reserved[1]));
    assert!(registry.entities().is_reserved(reserved[2]));
    assert_eq!(
        registry.count::<ChildOf>() + registry.count::<Children>(),
        0
    );
    assert_consistent(&registry);
}
