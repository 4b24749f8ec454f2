//! Building schedules: large ones, and the planner against the pairwise
//! rule taken literally.
//!
//! The builder chains each type's accessors instead of joining every
//! conflicting pair (see the `graph` module). A reference here applies the
//! documented pairwise rule literally, one pair at a time, on random system
//! lists (components, resources, event types, exclusive systems, `before`
//! constraints with and against registration order, either policy): the
//! schedule's waves must be the reference's waves, its DOT export must
//! draw exactly the reference's edges with their reasons, the reduced DOT
//! export exactly the reference's transitive reduction, and every edge the
//! DAG keeps must be a reference edge with the same reasons.
//!
//! Also: a self-constraint is a cycle of one edge, and 10,000 systems that
//! all write one type build into 10,000 waves in registration order.

use std::any::type_name;
use std::collections::HashSet;

use ecs_engine::Registry;
use proptest::prelude::*;
use scheduler::{
    BuildError, CycleEdge, DeclaredSystem, EdgeReason, Policy, Rule, Schedule, SubjectKind,
    SystemAccess, SystemContext, SystemError,
};

/// Component `K`.
struct C<const K: usize>;
/// Resource `K`.
struct R<const K: usize>;
/// Event type `K`.
struct E<const K: usize>;

const NONE: u8 = 0;
const READ: u8 = 1;
const WRITE: u8 = 2;

/// Subjects of a random system: three components, one resource, two event
/// types, in this order (the order conflicts are reported in).
const COMPONENTS: usize = 3;
const RESOURCES: usize = 1;
const EVENTS: usize = 2;
const SUBJECTS: usize = COMPONENTS + RESOURCES + EVENTS;

#[derive(Debug, Clone)]
struct Spec {
    access: [u8; SUBJECTS],
    exclusive: bool,
    before: Vec<usize>,
}

#[derive(Debug, Clone)]
struct Case {
    specs: Vec<Spec>,
    writer_first: bool,
}

fn spec(n: usize) -> impl Strategy<Value = Spec> {
    let access =
        proptest::array::uniform6(prop_oneof![3 => Just(NONE), 2 => Just(READ), 1 => Just(WRITE)]);
    (
        access,
        proptest::bool::weighted(0.05),
        proptest::collection::vec(0..n, 0..2),
    )
        .prop_map(|(access, exclusive, before)| Spec {
            access,
            exclusive,
            before,
        })
}

/// `sizes` systems; constraints mostly follow a random order of the
/// systems (so they go with and against registration order and rarely
/// form a cycle); one list in ten keeps every constraint drawn.
fn case(sizes: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    sizes.prop_flat_map(|n| {
        (
            proptest::collection::vec(spec(n), n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            proptest::bool::weighted(0.1),
            any::<bool>(),
        )
            .prop_map(|(mut specs, rank, wild, writer_first)| {
                for (i, s) in specs.iter_mut().enumerate() {
                    s.before.retain(|&j| j != i && (wild || rank[i] < rank[j]));
                    s.before.sort_unstable();
                    s.before.dedup();
                }
                Case {
                    specs,
                    writer_first,
                }
            })
    })
}

fn policy(case: &Case) -> Policy {
    if case.writer_first {
        Policy::WriterFirst
    } else {
        Policy::RegistrationOrder
    }
}

fn declared(spec: &Spec) -> SystemAccess {
    let mut access = SystemAccess::new();
    macro_rules! declare {
        ($s:expr, $read:ident::<$r:ty>, $write:ident::<$w:ty>) => {
            match spec.access[$s] {
                READ => access = access.$read::<$r>(),
                WRITE => access = access.$write::<$w>(),
                _ => {}
            }
        };
    }
    declare!(0, read::<C<0>>, write::<C<0>>);
    declare!(1, read::<C<1>>, write::<C<1>>);
    declare!(2, read::<C<2>>, write::<C<2>>);
    declare!(3, read_resource::<R<0>>, write_resource::<R<0>>);
    declare!(4, read_events::<E<0>>, write_events::<E<0>>);
    declare!(5, read_events::<E<1>>, write_events::<E<1>>);
    if spec.exclusive {
        access = access.exclusive();
    }
    access
}

type Run = fn(&SystemContext<'_>) -> Result<(), SystemError>;

fn nothing(_: &SystemContext<'_>) -> Result<(), SystemError> {
    Ok(())
}

fn build(case: &Case) -> Result<Schedule, BuildError> {
    let mut builder = Schedule::builder();
    builder.policy(policy(case)).threads(1);
    for (i, spec) in case.specs.iter().enumerate() {
        let mut config = builder.add(DeclaredSystem::new(
            format!("s{i}"),
            declared(spec),
            nothing as Run,
        ));
        for &j in &spec.before {
            config.before(format!("s{j}"));
        }
    }
    builder.build(&mut Registry::new())
}

/// The name and kind of subject `s`, as a conflict reports it.
fn subject(s: usize) -> (&'static str, SubjectKind) {
    let names = [
        type_name::<C<0>>(),
        type_name::<C<1>>(),
        type_name::<C<2>>(),
        type_name::<R<0>>(),
        type_name::<E<0>>(),
        type_name::<E<1>>(),
    ];
    let kind = match s {
        0..COMPONENTS => SubjectKind::Component,
        COMPONENTS..4 => SubjectKind::Resource,
        _ => SubjectKind::Event,
    };
    (names[s], kind)
}

/// Every conflict of the pair `(earlier, later)`: `(name, kind, earlier's
/// access, later's)`, components first, then the resource, the registry
/// and the event types.
fn conflicts(earlier: &Spec, later: &Spec) -> Vec<(&'static str, SubjectKind, u8, u8)> {
    let mut list = Vec::new();
    for s in 0..COMPONENTS + RESOURCES {
        let (a, b) = (earlier.access[s], later.access[s]);
        if a != NONE && b != NONE && (a == WRITE || b == WRITE) {
            let (name, kind) = subject(s);
            list.push((name, kind, a, b));
        }
    }
    if earlier.exclusive || later.exclusive {
        let access = |exclusive| if exclusive { WRITE } else { READ };
        list.push((
            "Registry",
            SubjectKind::Registry,
            access(earlier.exclusive),
            access(later.exclusive),
        ));
    }
    for s in COMPONENTS + RESOURCES..SUBJECTS {
        let (a, b) = (earlier.access[s], later.access[s]);
        if a != NONE && b != NONE && a != b {
            let (name, kind) = subject(s);
            list.push((name, kind, a, b));
        }
    }
    list
}

/// Reachability over at most 128 systems.
#[derive(Clone)]
struct Closure(Vec<u128>);

impl Closure {
    fn new(n: usize) -> Closure {
        Closure(vec![0; n])
    }

    fn get(&self, from: usize, to: usize) -> bool {
        self.0[from] >> to & 1 == 1
    }

    fn add(&mut self, from: usize, to: usize) {
        let below = self.0[to] | 1 << to;
        for x in 0..self.0.len() {
            if x == from || self.get(x, from) {
                self.0[x] |= below;
            }
        }
    }
}

/// An edge as text: `(from, to, reasons)`.
type Edge = (usize, usize, Vec<String>);

/// The pairwise rule taken literally: the explicit edges, then for each
/// pair in registration order (unless the constraints order it) the edge
/// its rules give, where it closes no cycle. `None` for a constraint
/// cycle.
fn reference(case: &Case) -> Option<Vec<Edge>> {
    let (specs, policy) = (&case.specs, policy(case));
    let n = specs.len();
    let mut edges: Vec<Edge> = Vec::new();
    let mut explicit = Closure::new(n);
    for (i, spec) in specs.iter().enumerate() {
        for &j in &spec.before {
            edges.push((i, j, vec![format!("`s{i}` declared before")]));
            explicit.add(i, j);
        }
    }
    if (0..n).any(|i| explicit.get(i, i)) {
        return None;
    }
    let mut reach = explicit.clone();
    for i in 0..n {
        for j in i + 1..n {
            if explicit.get(i, j) || explicit.get(j, i) {
                continue;
            }
            let rules: Vec<(&str, SubjectKind, Rule, bool)> = conflicts(&specs[i], &specs[j])
                .into_iter()
                .map(|(name, kind, a, b)| {
                    let (rule, forward) = match kind {
                        SubjectKind::Event => (Rule::WriteBeforeRead, a == WRITE),
                        _ if policy == Policy::RegistrationOrder => (Rule::RegistrationOrder, true),
                        SubjectKind::Registry => (Rule::RegistrationOrder, true),
                        _ if a == WRITE && b == WRITE => (Rule::WriteWrite, true),
                        _ => (Rule::WriteBeforeRead, a == WRITE),
                    };
                    (name, kind, rule, forward)
                })
                .collect();
            if rules.is_empty() {
                continue;
            }
            let any_forward = rules.iter().any(|r| r.3);
            let (from, to, fallback_all) = if any_forward {
                if reach.get(j, i) {
                    // Already ordered the other way: no edge.
                    continue;
                }
                (i, j, false)
            } else if reach.get(i, j) {
                // Writer-first against a path: registration order.
                (i, j, true)
            } else {
                (j, i, false)
            };
            let reasons = rules
                .into_iter()
                .map(|(name, kind, rule, forward)| {
                    let rule = if any_forward && !forward {
                        Rule::Overruled
                    } else if fallback_all {
                        Rule::CycleFallback
                    } else {
                        rule
                    };
                    EdgeReason::Conflict {
                        name: name.into(),
                        kind,
                        rule,
                    }
                    .to_string()
                })
                .collect();
            edges.push((from, to, reasons));
            reach.add(from, to);
        }
    }
    Some(edges)
}

/// Kahn levels of `edges`, each level in registration order.
fn levels(n: usize, edges: &[Edge]) -> Vec<Vec<usize>> {
    let mut level = vec![0; n];
    // Edges joined in any order: relax until stable (n rounds at most).
    for _ in 0..n {
        for &(from, to, _) in edges {
            level[to] = level[to].max(level[from] + 1);
        }
    }
    let depth = level.iter().max().map_or(0, |&d| d + 1);
    (0..depth)
        .map(|k| (0..n).filter(|&i| level[i] == k).collect())
        .collect()
}

/// The edge lines of a DOT export.
fn dot_edges(dot: &str) -> Vec<String> {
    dot.lines()
        .filter(|line| line.contains(" -> "))
        .map(str::to_owned)
        .collect()
}

/// `edges` as the DOT export draws them.
fn as_dot(edges: &[&Edge]) -> Vec<String> {
    edges
        .iter()
        .map(|(from, to, reasons)| {
            let style = if reasons.iter().any(|r| r.contains("would close a cycle")) {
                ", style=dashed"
            } else {
                ""
            };
            format!(
                "  \"s{from}\" -> \"s{to}\" [label=\"{}\"{style}];",
                reasons.join("\\n")
            )
        })
        .collect()
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let n = case.specs.len();
    let built = build(case);
    let Some(expected) = reference(case) else {
        prop_assert!(
            matches!(built, Err(BuildError::Cycle { .. })),
            "expected a cycle, got {built:?}"
        );
        return Ok(());
    };
    let schedule = built.map_err(|e| TestCaseError::fail(e.to_string()))?;
    let waves: Vec<Vec<usize>> = schedule
        .waves()
        .iter()
        .map(|w| w.iter().map(|(id, _)| id.index()).collect())
        .collect();
    prop_assert_eq!(&waves, &levels(n, &expected), "waves");
    let all: Vec<&Edge> = expected.iter().collect();
    prop_assert_eq!(dot_edges(&schedule.to_dot()), as_dot(&all), "to_dot");
    // The transitive reduction: the edges no longer path implies.
    let mut closure = Closure::new(n);
    for wave in waves.iter().rev() {
        for &i in wave {
            for &(from, to, _) in &expected {
                if from == i {
                    closure.0[i] |= closure.0[to] | 1 << to;
                }
            }
        }
    }
    let reduced: Vec<&Edge> = expected
        .iter()
        .filter(|&&(from, to, _)| {
            !expected
                .iter()
                .any(|&(f, s, _)| f == from && s != to && closure.get(s, to))
        })
        .collect();
    prop_assert_eq!(
        dot_edges(&schedule.to_dot_reduced()),
        as_dot(&reduced),
        "to_dot_reduced"
    );
    let kept: HashSet<&Edge> = expected.iter().collect();
    for (from, to, reasons) in schedule.edges() {
        let edge = (
            from.index(),
            to.index(),
            reasons.iter().map(ToString::to_string).collect(),
        );
        prop_assert!(kept.contains(&edge), "{edge:?} is not a reference edge");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn small_plans_match_the_literal_pairwise_rule(case in case(1..12)) {
        check(&case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]

    /// Past one 64-bit word of systems.
    #[test]
    fn plans_over_two_words_match_the_literal_pairwise_rule(case in case(60..129)) {
        check(&case)?;
    }
}

/// Systems in the tests below.
const MANY: usize = if cfg!(miri) { 40 } else { 10_000 };

fn writers(n: usize) -> scheduler::ScheduleBuilder {
    let mut builder = Schedule::builder();
    builder.threads(1);
    for i in 0..n {
        builder.add(DeclaredSystem::new(
            format!("s{i}"),
            SystemAccess::new().write::<C<0>>(),
            nothing as Run,
        ));
    }
    builder
}

fn wave_indices(schedule: &Schedule) -> Vec<Vec<usize>> {
    schedule
        .waves()
        .iter()
        .map(|w| w.iter().map(|(id, _)| id.index()).collect())
        .collect()
}

#[test]
fn ten_thousand_conflicting_systems_run_one_per_wave_in_registration_order() {
    let schedule = writers(MANY).build(&mut Registry::new()).unwrap();
    let sequential: Vec<Vec<usize>> = (0..MANY).map(|i| vec![i]).collect();
    assert_eq!(wave_indices(&schedule), sequential);
    // Each system keeps the one edge that orders it: from the one before.
    let edges: Vec<(usize, usize)> = schedule
        .edges()
        .map(|(from, to, _)| (from.index(), to.index()))
        .collect();
    let chain: Vec<(usize, usize)> = (1..MANY).map(|i| (i - 1, i)).collect();
    assert_eq!(edges, chain);
    let text = schedule.explain().to_string();
    let last = format!(
        "  s{}: writes C<0>\n    after s{} (wave {}): C<0>: conflict, registration order\n",
        MANY - 1,
        MANY - 2,
        MANY - 2
    );
    assert!(text.ends_with(&last), "{}", &text[text.len() - 300..]);
}

#[test]
fn a_constraint_against_registration_order_over_many_conflicting_systems() {
    // The last runs before the first: the pairwise rule then orders every
    // other pair in registration order, and the last before all of them.
    let n = if cfg!(miri) { 40 } else { 2_000 };
    let mut builder = writers(n);
    builder
        .add(DeclaredSystem::new(
            "last",
            SystemAccess::new().write::<C<0>>(),
            nothing as Run,
        ))
        .before("s0");
    let schedule = builder.build(&mut Registry::new()).unwrap();
    let mut expected = vec![vec![n]];
    expected.extend((0..n).map(|i| vec![i]));
    assert_eq!(wave_indices(&schedule), expected);
    // No automatic edge between the pair the user ordered.
    assert!(schedule.edges().all(|(from, to, reasons)| {
        (from.index(), to.index()) != (n, 0)
            || reasons
                == [EdgeReason::Constraint {
                    declared_by: "last".into(),
                    relation: "before",
                }]
    }));
}

fn one_edge_cycle(name: &str, relation: &'static str) -> BuildError {
    BuildError::Cycle {
        cycle: vec![CycleEdge {
            from: name.into(),
            to: name.into(),
            reasons: vec![
                EdgeReason::Constraint {
                    declared_by: name.into(),
                    relation,
                }
                .to_string(),
            ],
        }],
    }
}

#[test]
fn a_system_ordered_against_itself_is_a_cycle_of_one_edge() {
    for relation in ["before", "after"] {
        let mut builder = Schedule::builder();
        builder.threads(1);
        builder.add(DeclaredSystem::new(
            "a",
            SystemAccess::new(),
            nothing as Run,
        ));
        let mut config = builder.add(DeclaredSystem::new(
            "x",
            SystemAccess::new(),
            nothing as Run,
        ));
        if relation == "before" {
            config.before("x");
        } else {
            config.after("x");
        }
        let error = builder.build(&mut Registry::new()).unwrap_err();
        assert_eq!(error, one_edge_cycle("x", relation));
        assert_eq!(
            error.to_string(),
            format!(
                "the `before`/`after` constraints form a cycle: `x` before `x` (`x` declared \
                 {relation}); remove or reverse one of these constraints to break it"
            )
        );
    }
    // A set's constraints concern its other members: a set before one of
    // its members puts the others before it.
    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.set("group").before("x");
    builder
        .add(DeclaredSystem::new(
            "x",
            SystemAccess::new(),
            nothing as Run,
        ))
        .in_set("group");
    builder
        .add(DeclaredSystem::new(
            "y",
            SystemAccess::new(),
            nothing as Run,
        ))
        .in_set("group");
    let schedule = builder.build(&mut Registry::new()).unwrap();
    assert_eq!(wave_indices(&schedule), vec![vec![1], vec![0]]);
}
