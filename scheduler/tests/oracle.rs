//! A model-based oracle for the planner: random system lists (reads and
//! writes over three component types and two resources, random
//! `before` constraints, two system sets maybe ordered one before the
//! other, either policy) must satisfy, when the constraints are acyclic:
//!
//! - no two conflicting systems share a wave;
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

use std::any::type_name;

use ecs_engine::Registry;
use proptest::prelude::*;
use scheduler::{
    BuildError, DeclaredSystem, EdgeReason, Policy, Rule, Schedule, SubjectKind, SystemAccess,
    SystemContext, SystemError, Tick,
};

/// Component `K`: one `u64` per entity.
#[derive(Debug, Clone, Copy, PartialEq)]
struct C<const K: usize>(u64);
/// Resource `K`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct R<const K: usize>(u64);

const COMPONENTS: usize = 3;
const RESOURCES: usize = 2;
const SUBJECTS: usize = COMPONENTS + RESOURCES;
const ENTITIES: usize = 4;

const NONE: u8 = 0;
const READ: u8 = 1;
const WRITE: u8 = 2;

/// One random system: its access to each subject, and the systems it must
/// run before.
#[derive(Debug, Clone)]
struct Spec {
    access: [u8; SUBJECTS],
    before: Vec<usize>,
    /// Member of set `x0`, of set `x1`.
    sets: [bool; 2],
}

fn spec(n: usize) -> impl Strategy<Value = Spec> {
    let access =
        proptest::array::uniform5(prop_oneof![2 => Just(NONE), 1 => Just(READ), 1 => Just(WRITE)]);
    let before = proptest::collection::vec(0..n, 0..2);
    let sets = proptest::array::uniform2(proptest::bool::weighted(0.3));
    (access, before, sets).prop_map(|(access, before, sets)| Spec {
        access,
        before,
        sets,
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

fn conflicts(a: &Spec, b: &Spec) -> bool {
    (0..SUBJECTS).any(|s| {
        a.access[s] != NONE && b.access[s] != NONE && (a.access[s] == WRITE || b.access[s] == WRITE)
    })
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
    declare!(0, C<0>, read, write);
    declare!(1, C<1>, read, write);
    declare!(2, C<2>, read, write);
    declare!(3, R<0>, read_resource, write_resource);
    declare!(4, R<1>, read_resource, write_resource);
    access
}

/// The plain model of the world: component values by entity, resources.
#[derive(Debug, Clone, PartialEq)]
struct World {
    components: [[u64; ENTITIES]; COMPONENTS],
    resources: [u64; RESOURCES],
}

impl World {
    fn new() -> World {
        let mut components = [[0; ENTITIES]; COMPONENTS];
        for (c, column) in components.iter_mut().enumerate() {
            for (e, value) in column.iter_mut().enumerate() {
                *value = (c * 100 + e) as u64;
            }
        }
        World {
            components,
            resources: [7, 11],
        }
    }
}

/// What system `i` does, on plain values: every entity's `s` mixes the
/// system's number with what it reads; each written component becomes
/// `v * 31 + s`, each written resource `r * 31 + sum of s`.
fn step(
    i: usize,
    spec: &Spec,
    reads: &[Option<Vec<u64>>; COMPONENTS],
    resources: &[u64; RESOURCES],
) -> Vec<u64> {
    let base = (0..RESOURCES)
        .filter(|&r| spec.access[COMPONENTS + r] == READ)
        .fold(i as u64 + 1, |acc, r| {
            acc.wrapping_mul(17).wrapping_add(resources[r])
        });
    (0..ENTITIES)
        .map(|e| {
            reads.iter().flatten().fold(base, |acc, column| {
                acc.wrapping_mul(13).wrapping_add(column[e])
            })
        })
        .collect()
}

fn apply_model(i: usize, spec: &Spec, world: &mut World) {
    let reads: [Option<Vec<u64>>; COMPONENTS] =
        std::array::from_fn(|c| (spec.access[c] == READ).then(|| world.components[c].to_vec()));
    let s = step(i, spec, &reads, &world.resources);
    for (column, access) in world.components.iter_mut().zip(spec.access) {
        if access == WRITE {
            for (value, s) in column.iter_mut().zip(&s) {
                *value = value.wrapping_mul(31).wrapping_add(*s);
            }
        }
    }
    let total = s.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    for (value, &access) in world.resources.iter_mut().zip(&spec.access[COMPONENTS..]) {
        if access == WRITE {
            *value = value.wrapping_mul(31).wrapping_add(total);
        }
    }
}

/// The same step as a real system, through the context.
fn run_real(i: usize, spec: &Spec, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
    macro_rules! read_c {
        ($k:literal) => {
            ctx.query::<&C<$k>>()?
                .iter()
                .map(|c| c.0)
                .collect::<Vec<u64>>()
        };
    }
    macro_rules! write_c {
        ($k:literal, $s:expr) => {{
            let mut e = 0;
            ctx.query::<&mut C<$k>>()?.each(|c| {
                c.0 = c.0.wrapping_mul(31).wrapping_add($s[e]);
                e += 1;
            });
        }};
    }
    let mut reads: [Option<Vec<u64>>; COMPONENTS] = [None, None, None];
    if spec.access[0] == READ {
        reads[0] = Some(read_c!(0));
    }
    if spec.access[1] == READ {
        reads[1] = Some(read_c!(1));
    }
    if spec.access[2] == READ {
        reads[2] = Some(read_c!(2));
    }
    let resources = [
        if spec.access[3] == READ {
            ctx.resource::<R<0>>()?.0
        } else {
            0
        },
        if spec.access[4] == READ {
            ctx.resource::<R<1>>()?.0
        } else {
            0
        },
    ];
    let s = step(i, spec, &reads, &resources);
    if spec.access[0] == WRITE {
        write_c!(0, s);
    }
    if spec.access[1] == WRITE {
        write_c!(1, s);
    }
    if spec.access[2] == WRITE {
        write_c!(2, s);
    }
    let total = s.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    if spec.access[3] == WRITE {
        let mut r = ctx.resource_mut::<R<0>>()?;
        r.0 = r.0.wrapping_mul(31).wrapping_add(total);
    }
    if spec.access[4] == WRITE {
        let mut r = ctx.resource_mut::<R<1>>()?;
        r.0 = r.0.wrapping_mul(31).wrapping_add(total);
    }
    Ok(())
}

fn registry() -> Registry {
    let world = World::new();
    let mut registry = Registry::new();
    for e in 0..ENTITIES {
        registry.spawn((
            C::<0>(world.components[0][e]),
            C::<1>(world.components[1][e]),
            C::<2>(world.components[2][e]),
        ));
    }
    registry.insert_resource(R::<0>(world.resources[0]));
    registry.insert_resource(R::<1>(world.resources[1]));
    registry
}

fn read_back(registry: &Registry) -> World {
    let column =
        |values: Vec<u64>| -> [u64; ENTITIES] { values.try_into().expect("one per entity") };
    World {
        components: [
            column(registry.view::<&C<0>>().iter().map(|c| c.0).collect()),
            column(registry.view::<&C<1>>().iter().map(|c| c.0).collect()),
            column(registry.view::<&C<2>>().iter().map(|c| c.0).collect()),
        ],
        resources: [
            registry.resource::<R<0>>().unwrap().0,
            registry.resource::<R<1>>().unwrap().0,
        ],
    }
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
                    prop_assert!(a != NONE && b != NONE && (a == WRITE || b == WRITE));
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
                        (Policy::WriterFirst, Rule::CycleFallback) => prop_assert!(from < to),
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
        },
        Spec {
            access: [READ, WRITE, NONE, NONE, NONE],
            before: vec![],
            sets: [false; 2],
        },
    ];
    let (mut a, mut b) = (World::new(), World::new());
    apply_model(0, &specs[0], &mut a);
    apply_model(1, &specs[1], &mut a);
    apply_model(1, &specs[1], &mut b);
    apply_model(0, &specs[0], &mut b);
    assert_ne!(a, b);
}
