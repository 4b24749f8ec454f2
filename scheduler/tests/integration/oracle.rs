//! A model-based oracle for the planner: random system lists (reads and
//! writes over three component types and two resources, each system on
//! the entities `With<Tag>`, `Without<Tag>` or all of them, random
//! `before` constraints, two system sets maybe ordered one before the
//! other, either policy) must satisfy, when the constraints are acyclic:
//!
//! - no two conflicting systems share a wave (a `With<Tag>` system and a
//!   `Without<Tag>` one never conflict on a component: their entities are
//!   disjoint);
//! - every explicit constraint holds;
//! - every automatic edge follows the policy, and none joins a pair the
//!   explicit constraints (transitively) already order;
//! - the waves are Kahn levels: each system sits one wave after its
//!   latest predecessor (wave 0 without one), so none could move earlier;
//! - the executor on 1, 2 and 8 threads leaves a world bit-identical to a
//!   plain sequential run of the same order.
//!
//! When the constraints form a cycle, the build fails with a
//! [`BuildError::Cycle`] made of the user's constraints only.

#[path = "oracle/model.rs"]
mod model;

use std::any::{TypeId, type_name};

use ecs_engine::{Access, ComponentAccess, QueryShape, Registry};
use model::{World, apply_model, read_back, registry, run_real};
use proptest::prelude::*;
use scheduler::{
    BuildError, DeclaredSystem, EdgeReason, Policy, Rule, Schedule, SubjectKind, SystemAccess, Tick,
};

/// Component `K`: one `u64` per entity.
#[derive(Debug, Clone, Copy, PartialEq)]
struct C<const K: usize>(u64);
/// Resource `K`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct R<const K: usize>(u64);
/// On the entities with an odd index.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;

const COMPONENTS: usize = 3;
const RESOURCES: usize = 2;
const SUBJECTS: usize = COMPONENTS + RESOURCES;
const ENTITIES: usize = 4;

const NONE: u8 = 0;
const READ: u8 = 1;
const WRITE: u8 = 2;

/// A system's side: every entity, those `With<Tag>`, those `Without<Tag>`.
const ANY: u8 = 0;
const WITH: u8 = 1;
const WITHOUT: u8 = 2;

/// One random system: its access to each subject, and the systems it must
/// run before.
#[derive(Debug, Clone)]
struct Spec {
    access: [u8; SUBJECTS],
    before: Vec<usize>,
    /// Member of set `x0`, of set `x1`.
    sets: [bool; 2],
    /// `ANY`, `WITH` or `WITHOUT`: the entities it reads and writes.
    side: u8,
}

fn spec(n: usize) -> impl Strategy<Value = Spec> {
    let access =
        proptest::array::uniform5(prop_oneof![2 => Just(NONE), 1 => Just(READ), 1 => Just(WRITE)]);
    let before = proptest::collection::vec(0..n, 0..2);
    let sets = proptest::array::uniform2(proptest::bool::weighted(0.3));
    let side = prop_oneof![2 => Just(ANY), 1 => Just(WITH), 1 => Just(WITHOUT)];
    (access, before, sets, side).prop_map(|(access, before, sets, side)| Spec {
        access,
        before,
        sets,
        side,
    })
}

/// A random system list: its systems, the policy, and whether set `x0`
/// runs before set `x1`.
#[derive(Debug, Clone)]
struct Case {
    specs: Vec<Spec>,
    writer_first: bool,
    sets_ordered: bool,
}

/// `n` systems (1 to 9), a policy and set order. The system constraints
/// mostly follow a random order of the systems (so most lists build, with
/// constraints against registration order); one list in ten keeps every
/// constraint drawn, cycles included. The set order can close cycles too.
fn case() -> impl Strategy<Value = Case> {
    (1usize..10).prop_flat_map(|n| {
        (
            proptest::collection::vec(spec(n), n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            proptest::bool::weighted(0.1),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(mut specs, rank, wild, writer_first, sets_ordered)| {
                for (i, s) in specs.iter_mut().enumerate() {
                    s.before.retain(|&j| j != i && (wild || rank[i] < rank[j]));
                    s.before.sort_unstable();
                    s.before.dedup();
                }
                Case {
                    specs,
                    writer_first,
                    sets_ordered,
                }
            })
    })
}

/// `true` when no entity is on both sides.
fn disjoint_sides(a: &Spec, b: &Spec) -> bool {
    matches!((a.side, b.side), (WITH, WITHOUT) | (WITHOUT, WITH))
}

/// `true` when `a` and `b` conflict on subject `s`.
fn conflicts_on(a: &Spec, b: &Spec, s: usize) -> bool {
    let touch = a.access[s] != NONE && b.access[s] != NONE;
    let write = a.access[s] == WRITE || b.access[s] == WRITE;
    touch && write && !(s < COMPONENTS && disjoint_sides(a, b))
}

fn conflicts(a: &Spec, b: &Spec) -> bool {
    (0..SUBJECTS).any(|s| conflicts_on(a, b, s))
}

fn declared(spec: &Spec) -> SystemAccess {
    let mut access = SystemAccess::new();
    macro_rules! declare {
        ($s:expr, $t:ty, $read:ident, $write:ident) => {
            match spec.access[$s] {
                READ => access = access.$read::<$t>(),
                WRITE => access = access.$write::<$t>(),
                _ => {}
            }
        };
    }
    declare!(3, R<0>, read_resource, write_resource);
    declare!(4, R<1>, read_resource, write_resource);
    // Components: declared by hand for every entity, as one query per
    // component with its side's shape otherwise.
    let of = |k: usize, access: Access| match k {
        0 => ComponentAccess::of::<C<0>>(access),
        1 => ComponentAccess::of::<C<1>>(access),
        _ => ComponentAccess::of::<C<2>>(access),
    };
    for k in 0..COMPONENTS {
        let wanted = match spec.access[k] {
            READ => Access::Read,
            WRITE => Access::Write,
            _ => continue,
        };
        let shape = match spec.side {
            WITH => QueryShape::new().require(TypeId::of::<Tag>()),
            WITHOUT => QueryShape::new().exclude(TypeId::of::<Tag>()),
            _ => {
                access.add_component(of(k, wanted));
                continue;
            }
        };
        access.add_query(
            &[of(k, wanted), ComponentAccess::of::<Tag>(Access::Read)],
            shape,
        );
    }
    access
}

fn build(case: &Case, threads: usize, registry: &mut Registry) -> Result<Schedule, BuildError> {
    let specs = &case.specs;
    let mut builder = Schedule::builder();
    builder.policy(policy(case.writer_first)).threads(threads);
    if case.sets_ordered {
        builder.set("x0").before("x1");
        // Declared, so an empty x1 is a set, not a typo.
        builder.set("x1");
    }
    for (i, spec) in specs.iter().enumerate() {
        let owned = spec.clone();
        let mut config = builder.add(DeclaredSystem::new(
            format!("s{i}"),
            declared(spec),
            move |ctx| run_real(i, &owned, ctx),
        ));
        for &j in &spec.before {
            config.before(format!("s{j}"));
        }
        for (k, &member) in spec.sets.iter().enumerate() {
            if member {
                config.in_set(format!("x{k}"));
            }
        }
    }
    builder.build(registry)
}

/// Every explicit `(before, after, declared_by)` pair: the systems' own
/// constraints, and each member of `x0` before each other member of `x1`
/// when the sets are ordered.
fn constraints(case: &Case) -> Vec<(usize, usize, String)> {
    let mut pairs = Vec::new();
    for (i, spec) in case.specs.iter().enumerate() {
        for &j in &spec.before {
            pairs.push((i, j, format!("s{i}")));
        }
    }
    if case.sets_ordered {
        for (a, first) in case.specs.iter().enumerate() {
            for (b, second) in case.specs.iter().enumerate() {
                if a != b && first.sets[0] && second.sets[1] {
                    pairs.push((a, b, "set x0".to_owned()));
                }
            }
        }
    }
    pairs
}

/// Transitive closure of the explicit constraints.
fn explicit_reach(case: &Case) -> Vec<Vec<bool>> {
    let n = case.specs.len();
    let mut reach = vec![vec![false; n]; n];
    for (i, j, _) in constraints(case) {
        reach[i][j] = true;
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if reach[i][k] && reach[k][j] {
                    reach[i][j] = true;
                }
            }
        }
    }
    reach
}

fn subject_of(name: &str, kind: SubjectKind) -> usize {
    let names = match kind {
        SubjectKind::Component => [
            type_name::<C<0>>(),
            type_name::<C<1>>(),
            type_name::<C<2>>(),
        ]
        .to_vec(),
        SubjectKind::Resource => [type_name::<R<0>>(), type_name::<R<1>>()].to_vec(),
        SubjectKind::Registry => panic!("no exclusive system in these lists"),
        SubjectKind::Event => panic!("no events in these lists"),
    };
    let k = names
        .iter()
        .position(|n| *n == name)
        .unwrap_or_else(|| panic!("unknown subject {name}"));
    match kind {
        SubjectKind::Resource => COMPONENTS + k,
        _ => k,
    }
}

fn index(name: &str) -> usize {
    name[1..].parse().expect("systems are named s<i>")
}

fn check_plan(case: &Case) -> Result<(), TestCaseError> {
    let (specs, policy) = (&case.specs, policy(case.writer_first));
    let n = specs.len();
    let pairs = constraints(case);
    let explicit = explicit_reach(case);
    let cyclic = (0..n).any(|i| explicit[i][i]);
    let built = build(case, 1, &mut registry());
    if cyclic {
        let Err(BuildError::Cycle { cycle }) = built else {
            return Err(TestCaseError::fail(format!(
                "expected a cycle, got {built:?}"
            )));
        };
        prop_assert!(!cycle.is_empty());
        for (k, edge) in cycle.iter().enumerate() {
            prop_assert_eq!(&edge.to, &cycle[(k + 1) % cycle.len()].from);
            let (from, to) = (index(&edge.from), index(&edge.to));
            for reason in &edge.reasons {
                let declared_before = pairs.iter().any(|(a, b, by)| {
                    (*a, *b) == (from, to) && *reason == format!("`{by}` declared before")
                });
                prop_assert!(declared_before, "{reason} is not a user constraint");
            }
        }
        return Ok(());
    }
    let schedule = built.map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let mut wave = vec![usize::MAX; n];
    for (k, systems) in schedule.waves().iter().enumerate() {
        for &(id, _) in systems {
            wave[id.index()] = k;
        }
    }
    prop_assert!(wave.iter().all(|&w| w != usize::MAX));
    // Conflicting systems never share a wave.
    for i in 0..n {
        for j in i + 1..n {
            if conflicts(&specs[i], &specs[j]) {
                prop_assert_ne!(wave[i], wave[j], "s{} and s{} conflict", i, j);
            }
        }
    }
    // Every explicit constraint holds.
    for (i, j, by) in &pairs {
        prop_assert!(wave[*i] < wave[*j], "s{} before s{} ({})", i, j, by);
    }
    // Every edge runs forward and follows the policy; waves are Kahn levels.
    let mut level = vec![0; n];
    let edges: Vec<_> = schedule.edges().collect();
    for &(from, to, reasons) in &edges {
        let (from, to) = (from.index(), to.index());
        prop_assert!(wave[from] < wave[to]);
        level[to] = level[to].max(wave[from] + 1);
        for reason in reasons {
            match reason {
                EdgeReason::Constraint {
                    declared_by,
                    relation,
                } => {
                    prop_assert_eq!(*relation, "before");
                    prop_assert!(
                        pairs
                            .iter()
                            .any(|(a, b, by)| (*a, *b) == (from, to) && by == declared_by)
                    );
                }
                EdgeReason::Conflict { name, kind, rule } => {
                    prop_assert!(
                        !explicit[from][to] && !explicit[to][from],
                        "automatic edge s{} -> s{} on a pair the user ordered",
                        from,
                        to
                    );
                    let s = subject_of(name, *kind);
                    let (a, b) = (specs[from].access[s], specs[to].access[s]);
                    prop_assert!(
                        conflicts_on(&specs[from], &specs[to], s),
                        "edge s{} -> s{} on {} without a conflict",
                        from,
                        to,
                        name
                    );
                    match (policy, rule) {
                        (Policy::RegistrationOrder, Rule::RegistrationOrder) => {
                            prop_assert!(from < to)
                        }
                        (Policy::WriterFirst, Rule::WriteBeforeRead) => {
                            prop_assert!(a == WRITE && b == READ)
                        }
                        (Policy::WriterFirst, Rule::WriteWrite) => {
                            prop_assert!(a == WRITE && b == WRITE && from < to)
                        }
                        (Policy::WriterFirst, Rule::CycleFallback | Rule::Overruled) => {
                            prop_assert!(from < to)
                        }
                        (policy, rule) => {
                            return Err(TestCaseError::fail(format!("{rule:?} under {policy:?}")));
                        }
                    }
                }
            }
        }
    }
    prop_assert_eq!(level, wave, "waves are not Kahn levels");
    Ok(())
}

fn check_executor(case: &Case) -> Result<(), TestCaseError> {
    let specs = &case.specs;
    if explicit_reach(case)
        .iter()
        .enumerate()
        .any(|(i, row)| row[i])
    {
        return Ok(());
    }
    let mut expected = None;
    let mut plan = None;
    for threads in [1, 2, 8] {
        let mut registry = registry();
        let mut schedule =
            build(case, threads, &mut registry).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let waves: Vec<Vec<usize>> = schedule
            .waves()
            .iter()
            .map(|w| w.iter().map(|(id, _)| id.index()).collect())
            .collect();
        for number in 0..3 {
            schedule
                .run(
                    &mut registry,
                    Tick {
                        number,
                        ..Tick::default()
                    },
                )
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let world = read_back(&registry);
        let model = expected.get_or_insert_with(|| {
            let mut model = World::new();
            for _ in 0..3 {
                for &i in waves.iter().flatten() {
                    apply_model(i, &specs[i], &mut model);
                }
            }
            model
        });
        prop_assert_eq!(&*plan.get_or_insert_with(|| waves.clone()), &waves);
        prop_assert_eq!(&world, &*model, "{} threads", threads);
    }
    Ok(())
}

fn policy(writer_first: bool) -> Policy {
    if writer_first {
        Policy::WriterFirst
    } else {
        Policy::RegistrationOrder
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn planner_satisfies_the_oracle(case in case()) {
        check_plan(&case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn executor_matches_a_sequential_run_on_1_2_and_8_threads(case in case()) {
        check_executor(&case)?;
    }
}

#[test]
fn the_sequential_model_depends_on_order() {
    // A sanity check of the oracle itself: two conflicting systems give a
    // different world in the other order, so a wrong plan would show.
    let specs = [
        Spec {
            access: [WRITE, READ, NONE, NONE, NONE],
            before: vec![],
            sets: [false; 2],
            side: ANY,
        },
        Spec {
            access: [READ, WRITE, NONE, NONE, NONE],
            before: vec![],
            sets: [false; 2],
            side: ANY,
        },
    ];
    let (mut a, mut b) = (World::new(), World::new());
    apply_model(0, &specs[0], &mut a);
    apply_model(1, &specs[1], &mut a);
    apply_model(1, &specs[1], &mut b);
    apply_model(0, &specs[0], &mut b);
    assert_ne!(a, b);
}
