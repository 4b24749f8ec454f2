//! Model-based test: random operation sequences on a `Registry`, checked
//! after every step against a plain `HashMap` model (inserts and removals
//! both through the registry and through the typed pool handle).

use std::collections::{BTreeMap, HashMap};

use ecs_engine::{Component, EcsError, Entity, Registry};
use proptest::prelude::*;

use crate::components::{A, B, C};

/// Zero-sized.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Z;

/// Which component an operation is about.
#[derive(Debug, Clone, Copy)]
enum Kind {
    A,
    B,
    C,
    Z,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct ModelEntity {
    a: Option<u32>,
    b: Option<u32>,
    c: Option<u32>,
    z: bool,
}

impl ModelEntity {
    /// The value of one kind, `Some(0)` standing for Z's presence.
    fn value(&self, kind: Kind) -> Option<u32> {
        match kind {
            Kind::A => self.a,
            Kind::B => self.b,
            Kind::C => self.c,
            Kind::Z => self.z.then_some(0),
        }
    }

    fn set(&mut self, kind: Kind, value: Option<u32>) -> Option<u32> {
        let old = self.value(kind);
        match kind {
            Kind::A => self.a = value,
            Kind::B => self.b = value,
            Kind::C => self.c = value,
            Kind::Z => self.z = value.is_some(),
        }
        old
    }
}

/// Which way an insert or a removal goes: the registry's own methods, or
/// the typed pool handle (`Registry::pool_mut`), which must answer alike.
#[derive(Debug, Clone, Copy)]
enum Via {
    Registry,
    Pool,
}

#[derive(Debug, Clone)]
enum Op {
    Spawn(ModelEntity),
    Despawn(usize),
    Insert(usize, Kind, u32, Via),
    TryInsert(usize, Kind, u32),
    Remove(usize, Kind, Via),
    Get(usize, Kind),
    MutateViaView(u32),
    RetainOddA,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::A), Just(Kind::B), Just(Kind::C), Just(Kind::Z)]
}

fn via() -> impl Strategy<Value = Via> {
    prop_oneof![Just(Via::Registry), Just(Via::Pool)]
}

fn model_entity() -> impl Strategy<Value = ModelEntity> {
    (
        proptest::option::of(0u32..100),
        proptest::option::of(0u32..100),
        proptest::option::of(0u32..100),
        any::<bool>(),
    )
        .prop_map(|(a, b, c, z)| ModelEntity { a, b, c, z })
}

fn op() -> impl Strategy<Value = Op> {
    // Handles are picked by position in the list of every handle ever
    // spawned, so dead and reused-slot handles are picked too.
    let handle = 0usize..64;
    prop_oneof![
        4 => model_entity().prop_map(Op::Spawn),
        2 => handle.clone().prop_map(Op::Despawn),
        3 => (handle.clone(), kind(), 0u32..100, via())
            .prop_map(|(h, k, v, via)| Op::Insert(h, k, v, via)),
        1 => (handle.clone(), kind(), 0u32..100).prop_map(|(h, k, v)| Op::TryInsert(h, k, v)),
        2 => (handle.clone(), kind(), via()).prop_map(|(h, k, via)| Op::Remove(h, k, via)),
        1 => (handle, kind()).prop_map(|(h, k)| Op::Get(h, k)),
        1 => (1u32..5).prop_map(Op::MutateViaView),
        1 => Just(Op::RetainOddA),
    ]
}

fn get(registry: &Registry, e: Entity, kind: Kind) -> Option<u32> {
    match kind {
        Kind::A => registry.get::<A>(e).map(|x| x.0),
        Kind::B => registry.get::<B>(e).map(|x| x.0),
        Kind::C => registry.get::<C>(e).map(|x| x.0),
        Kind::Z => registry.get::<Z>(e).map(|_| 0),
    }
}

fn insert(
    registry: &mut Registry,
    e: Entity,
    kind: Kind,
    v: u32,
    via: Via,
) -> Result<Option<u32>, EcsError> {
    fn one<T: Component>(
        registry: &mut Registry,
        e: Entity,
        value: T,
        via: Via,
    ) -> Result<Option<T>, EcsError> {
        match via {
            Via::Registry => registry.insert(e, value),
            Via::Pool => registry.pool_mut::<T>().insert(e, value),
        }
    }
    Ok(match kind {
        Kind::A => one(registry, e, A(v), via)?.map(|x| x.0),
        Kind::B => one(registry, e, B(v), via)?.map(|x| x.0),
        Kind::C => one(registry, e, C(v), via)?.map(|x| x.0),
        Kind::Z => one(registry, e, Z, via)?.map(|_| 0),
    })
}

fn try_insert(registry: &mut Registry, e: Entity, kind: Kind, v: u32) -> Result<(), EcsError> {
    match kind {
        Kind::A => registry.try_insert(e, A(v)).map(drop).map_err(|r| r.error),
        Kind::B => registry.try_insert(e, B(v)).map(drop).map_err(|r| r.error),
        Kind::C => registry.try_insert(e, C(v)).map(drop).map_err(|r| r.error),
        Kind::Z => registry.try_insert(e, Z).map(drop).map_err(|r| r.error),
    }
}

fn remove(registry: &mut Registry, e: Entity, kind: Kind, via: Via) -> Result<u32, EcsError> {
    fn one<T: Component>(registry: &mut Registry, e: Entity, via: Via) -> Result<T, EcsError> {
        match via {
            Via::Registry => registry.remove::<T>(e),
            Via::Pool => registry.pool_mut::<T>().remove(e),
        }
    }
    match kind {
        Kind::A => one::<A>(registry, e, via).map(|x| x.0),
        Kind::B => one::<B>(registry, e, via).map(|x| x.0),
        Kind::C => one::<C>(registry, e, via).map(|x| x.0),
        Kind::Z => one::<Z>(registry, e, via).map(|_| 0),
    }
}

/// Everything observable, compared with the model.
fn check(registry: &Registry, model: &HashMap<Entity, ModelEntity>, handles: &[Entity]) {
    assert_eq!(registry.len(), model.len());
    for &e in handles {
        let expected = model.get(&e);
        assert_eq!(registry.is_alive(e), expected.is_some(), "{e}");
        for kind in [Kind::A, Kind::B, Kind::C, Kind::Z] {
            assert_eq!(
                get(registry, e, kind),
                expected.and_then(|m| m.value(kind)),
                "{e} {kind:?}"
            );
        }
    }
    let count = |kind: Kind| model.values().filter(|m| m.value(kind).is_some()).count();
    assert_eq!(registry.count::<A>(), count(Kind::A));
    assert_eq!(registry.count::<B>(), count(Kind::B));
    assert_eq!(registry.count::<C>(), count(Kind::C));
    assert_eq!(registry.count::<Z>(), count(Kind::Z));

    // A four-type view with an optional term and a zero-sized filter.
    let mut seen = BTreeMap::new();
    registry
        .view::<(Entity, &A, &B, Option<&C>)>()
        .each(|(e, a, b, c)| {
            let previous = seen.insert(e, (a.0, b.0, c.map(|c| c.0)));
            assert!(previous.is_none(), "{e} visited twice");
        });
    let expected: BTreeMap<Entity, (u32, u32, Option<u32>)> = model
        .iter()
        .filter_map(|(&e, m)| Some((e, (m.a?, m.b?, m.c))))
        .collect();
    assert_eq!(seen, expected);

    let mut with_z: Vec<Entity> = registry
        .view::<(Entity, &Z, &C)>()
        .iter()
        .map(|(e, _, _)| e)
        .collect();
    with_z.sort();
    let mut expected_z: Vec<Entity> = model
        .iter()
        .filter(|(_, m)| m.z && m.c.is_some())
        .map(|(&e, _)| e)
        .collect();
    expected_z.sort();
    assert_eq!(with_z, expected_z);
}

fn run(ops: Vec<Op>) {
    let mut registry = Registry::new();
    let mut model: HashMap<Entity, ModelEntity> = HashMap::new();
    let mut handles: Vec<Entity> = Vec::new();
    let pick = |handles: &[Entity], i: usize| handles.get(i).copied().unwrap_or(Entity::NULL);

    for op in ops {
        match op {
            Op::Spawn(m) => {
                let e = registry.spawn_empty();
                for kind in [Kind::A, Kind::B, Kind::C, Kind::Z] {
                    if let Some(v) = m.value(kind) {
                        insert(&mut registry, e, kind, v, Via::Registry).unwrap();
                    }
                }
                assert!(!handles.contains(&e), "handle {e} handed out twice");
                handles.push(e);
                model.insert(e, m);
            }
            Op::Despawn(i) => {
                let e = pick(&handles, i);
                let expected = match model.remove(&e) {
                    Some(_) => Ok(()),
                    None => Err(EcsError::NoSuchEntity { entity: e }),
                };
                assert_eq!(registry.despawn(e), expected);
            }
            Op::Insert(i, kind, v, via) => {
                let e = pick(&handles, i);
                let result = insert(&mut registry, e, kind, v, via);
                match model.get_mut(&e) {
                    Some(m) => assert_eq!(result, Ok(m.set(kind, Some(v)))),
                    None => assert_eq!(result, Err(EcsError::NoSuchEntity { entity: e })),
                }
            }
            Op::TryInsert(i, kind, v) => {
                let e = pick(&handles, i);
                let result = try_insert(&mut registry, e, kind, v);
                match model.get_mut(&e) {
                    Some(m) if m.value(kind).is_some() => {
                        assert!(matches!(result, Err(EcsError::ComponentExists { .. })))
                    }
                    Some(m) => {
                        assert_eq!(result, Ok(()));
                        m.set(kind, Some(v));
                    }
                    None => assert_eq!(result, Err(EcsError::NoSuchEntity { entity: e })),
                }
            }
            Op::Remove(i, kind, via) => {
                let e = pick(&handles, i);
                let result = remove(&mut registry, e, kind, via);
                match model.get_mut(&e) {
                    Some(m) => match m.set(kind, None) {
                        Some(old) => assert_eq!(result, Ok(old)),
                        None => assert!(matches!(result, Err(EcsError::MissingComponent { .. }))),
                    },
                    None => assert_eq!(result, Err(EcsError::NoSuchEntity { entity: e })),
                }
            }
            Op::Get(i, kind) => {
                let e = pick(&handles, i);
                let expected = model.get(&e).and_then(|m| m.value(kind));
                assert_eq!(get(&registry, e, kind), expected);
            }
            Op::MutateViaView(add) => {
                registry
                    .view_mut::<(&mut A, &B)>()
                    .without::<Z>()
                    .each(|(a, b)| a.0 += b.0 + add);
                for m in model.values_mut() {
                    if let (Some(a), Some(b), false) = (m.a, m.b, m.z) {
                        m.a = Some(a + b + add);
                    }
                }
            }
            Op::RetainOddA => {
                let despawned = registry.retain::<&A>(|a| a.0 % 2 == 1);
                let before = model.len();
                model.retain(|_, m| m.a.is_none_or(|a| a % 2 == 1));
                assert_eq!(despawned, before - model.len());
            }
        }
        check(&registry, &model, &handles);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn registry_matches_hashmap_model(ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 200 })) {
        run(ops);
    }
}
