//! The dependency DAG and its waves.
//!
//! Edges come from two sources:
//!
//! 1. **Explicit constraints** (`before`/`after`): these are the user's own
//!    word, and the only edges that can form a cycle (a
//!    [`BuildError::Cycle`] listing them; a system that names itself is a
//!    cycle of one edge).
//! 2. **Automatic conflict edges**, for each pair of systems that touch a
//!    type (at least one writing it) and that the explicit constraints,
//!    transitively, leave unordered. The rule is pairwise: pairs are taken
//!    in registration order (`(0, 1), (0, 2), ..., (1, 2), ...`), and a pair
//!    is ordered only where that closes no cycle with the pairs before it:
//!    - [`Policy::RegistrationOrder`] (the default): the earlier-registered
//!      system runs first.
//!    - [`Policy::WriterFirst`]: on each type, the writer runs before the
//!      reader, and two writers run in registration order. Where that
//!      would close a cycle (two systems that each write what the other
//!      reads, or a path already ordering the pair the other way), the
//!      pair falls back to registration order, and the edge says so
//!      ([`Rule::CycleFallback`]).
//!
//!    A pair that the pairs before it already order against registration
//!    order (a path the other way) gets no edge against that path.
//!
//! Invariants of a built [`Dag`]: it is acyclic; every conflicting pair is
//! joined by a path, in the direction the pairwise rule gives it.
//!
//! **Building in near-linear time.** Taken literally, the pairwise rule
//! adds an edge for every conflicting pair (N²/2 of them for N systems that
//! all write one type) and updates a reachability matrix per edge (about
//! N⁴/64 word operations). Instead, each type's accessors are chained as
//! task runtimes chain OpenMP's `depend(in/out)` tasks: in a given order of
//! the systems, each reader follows the last writer, and each writer
//! follows the last writer (or every reader since it). For an event type,
//! where only a writer and a reader conflict, each system follows the
//! previous run of systems of the other kind. Every conflicting pair is
//! then joined by a path of conflicting neighbours, in that order, with
//! O(accesses) edges. The order is found first:
//!
//! - Chained in the order the rule asks for (registration order; writers
//!   first under [`Policy::WriterFirst`] and for event types), the chains
//!   with the explicit edges usually form a DAG. Then no pair is ever
//!   ordered against its rule, so the pairwise rule gives every pair the
//!   rule's direction, as this DAG does: any topological order of it is
//!   the order sought.
//! - Otherwise (constraints against the rule, or under
//!   [`Policy::WriterFirst`] two systems that each write what the other
//!   reads) the pairwise rule itself runs, row by row, with reachability
//!   in bit sets: only edges that add a path are recorded, and only the
//!   rows of systems not yet passed are kept up to date. This fallback is
//!   quadratic in bits (cubic/64 word operations at worst).
//!
//! Then the systems are chained again in that topological order, and each
//! chain edge is kept with the reasons the pairwise rule gives its pair
//! (dropped where the rule adds no edge, or the user ordered the pair). By
//! induction on how far apart a pair is in the order, these edges and the
//! explicit ones have exactly the paths of the literal rule's graph. Two
//! DAGs with the same paths have the same transitive reduction, which each
//! contains (Aho, Garey and Ullman, "The transitive reduction of a
//! directed graph", SIAM J. Comput. 1(2), 1972), so the same longest paths
//! and the same waves. The edges kept are literal edges with their true
//! reasons; [`Dag::drawn_edges`] recovers the others from the paths.
//!
//! Waves come from Kahn's algorithm (A. B. Kahn, "Topological sorting of
//! large networks", CACM 5(11), 1962), taken level by level: wave 0 holds
//! the systems with no predecessor; wave k+1 the systems whose last
//! predecessor is in wave k. Within a wave, systems keep registration order.

use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use ecs_engine::{Access, ComponentKey};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::access::{SubjectKind, short_name};
use crate::{BuildError, CycleEdge, SystemAccess};

/// How conflicting accesses that the explicit constraints leave unordered
/// are ordered. Neither policy can form a cycle. Event types are the
/// exception: under either policy an [`EventWriter`](crate::EventWriter)
/// runs before an [`EventReader`](crate::EventReader) of the same type
/// (falling back to registration order where that would close a cycle), so
/// a reader sees the events of its own tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Every conflict runs in registration order, as in specs, shipyard,
    /// legion and EnTT's organizer: predictable, and never a cycle.
    #[default]
    RegistrationOrder,
    /// Writers run before readers; two writers run in registration order.
    /// Where a writer-first edge would close a cycle (two systems that each
    /// write what the other reads), the pair falls back to registration
    /// order, and the edge's reason says so ([`Rule::CycleFallback`]).
    WriterFirst,
}

/// The rule behind a conflict edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// [`Policy::WriterFirst`]: one writes what the other reads, the writer
    /// runs first.
    WriteBeforeRead,
    /// [`Policy::WriterFirst`]: both write, the earlier-registered runs
    /// first.
    WriteWrite,
    /// [`Policy::RegistrationOrder`], or an exclusive system under any
    /// policy: the earlier-registered runs first.
    RegistrationOrder,
    /// [`Policy::WriterFirst`]: the writer-first edge would have closed a
    /// cycle, so the earlier-registered system runs first instead.
    CycleFallback,
}

/// Why an edge of the DAG exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeReason {
    /// Both systems touch a type, at least one writing it.
    Conflict {
        /// The component or resource name (a type name, or the registered
        /// name of a run-time component).
        name: Cow<'static, str>,
        /// Component or resource.
        kind: SubjectKind,
        /// The ordering rule applied.
        rule: Rule,
    },
    /// `before(...)` or `after(...)` on one of the two systems.
    Constraint {
        /// The system that declared it.
        declared_by: String,
        /// `"before"` or `"after"`.
        relation: &'static str,
    },
}

impl EdgeReason {
    /// `true` for a [`Rule::CycleFallback`] conflict.
    pub fn is_fallback(&self) -> bool {
        matches!(
            self,
            EdgeReason::Conflict {
                rule: Rule::CycleFallback,
                ..
            }
        )
    }
}

impl fmt::Display for EdgeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeReason::Conflict { name, kind, rule } => {
                let kind = match kind {
                    SubjectKind::Component => "",
                    SubjectKind::Resource => "resource ",
                    SubjectKind::Event => "event ",
                    SubjectKind::Registry => "exclusive ",
                };
                let rule = match rule {
                    Rule::WriteBeforeRead => "write -> read",
                    Rule::WriteWrite => "write -> write",
                    Rule::RegistrationOrder => "conflict, registration order",
                    Rule::CycleFallback => {
                        "conflict, registration order (writer-first would close a cycle)"
                    }
                };
                write!(f, "{kind}{}: {rule}", short_name(name))
            }
            EdgeReason::Constraint {
                declared_by,
                relation,
            } => write!(f, "`{declared_by}` declared {relation}"),
        }
    }
}

/// What the graph needs of one system.
pub(crate) struct Node<'a> {
    pub(crate) name: &'a str,
    pub(crate) access: &'a SystemAccess,
    pub(crate) before: &'a [String],
    pub(crate) after: &'a [String],
    pub(crate) sets: &'a [String],
}

/// What the graph needs of one system set.
pub(crate) struct SetNode<'a> {
    pub(crate) name: &'a str,
    pub(crate) before: &'a [String],
    pub(crate) after: &'a [String],
}

/// Rows of bits: bit `j` of row `i`.
#[derive(Debug, Clone)]
struct Bits {
    words: usize,
    bits: Vec<u64>,
}

impl Bits {
    fn new(rows: usize, columns: usize) -> Bits {
        let words = columns.div_ceil(64);
        Bits {
            words,
            bits: vec![0; words * rows],
        }
    }

    fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.words..(i + 1) * self.words]
    }
}

fn bit(words: &[u64], j: usize) -> bool {
    words[j / 64] & (1 << (j % 64)) != 0
}

fn set_bit(words: &mut [u64], j: usize) {
    words[j / 64] |= 1 << (j % 64);
}

/// The positions of the set bits of `words`, the first word being word
/// `first` of its row.
fn ones(words: &[u64], first: usize) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(move |(k, &word)| {
        let base = (first + k) * 64;
        let mut rest = word;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let j = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                base + j
            })
        })
    })
}

fn or_into(target: &mut [u64], source: &[u64]) {
    for (t, s) in target.iter_mut().zip(source) {
        *t |= s;
    }
}

/// Reachability over a DAG: bit `j` of the row of `i` set when a path
/// leads from `i` to `j`. Only systems with a successor have a row.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    row_of: Vec<usize>,
    rows: Bits,
}

impl Reach {
    /// The transitive closure of `successors`, given a topological `order`
    /// of its `n` nodes.
    fn new(n: usize, order: &[usize], successors: &[Vec<usize>]) -> Reach {
        let mut row_of = vec![usize::MAX; n];
        let mut rows = 0;
        for (u, successors) in successors.iter().enumerate() {
            if !successors.is_empty() {
                row_of[u] = rows;
                rows += 1;
            }
        }
        let mut reach = Reach {
            row_of,
            rows: Bits::new(rows, n),
        };
        let mut row = vec![0; reach.rows.words];
        for &u in order.iter().rev() {
            if successors[u].is_empty() {
                continue;
            }
            row.fill(0);
            for &v in &successors[u] {
                set_bit(&mut row, v);
                if let Some(below) = reach.row(v) {
                    or_into(&mut row, below);
                }
            }
            let r = reach.row_of[u];
            reach.rows.row_mut(r).copy_from_slice(&row);
        }
        reach
    }

    fn row(&self, i: usize) -> Option<&[u64]> {
        let r = self.row_of[i];
        (r != usize::MAX).then(|| self.rows.row(r))
    }

    /// `true` when a path leads from `from` to `to`.
    pub(crate) fn get(&self, from: usize, to: usize) -> bool {
        self.row(from).is_some_and(|row| bit(row, to))
    }

    /// `true` when a path joins `a` and `b`, either way.
    fn ordered(&self, a: usize, b: usize) -> bool {
        self.get(a, b) || self.get(b, a)
    }
}

/// Kahn's algorithm, level by level, over `n` nodes whose successors
/// `successors(u, out)` pushes (a node once per edge). `Err` holds the
/// nodes left on or behind a cycle.
fn levels(
    n: usize,
    mut successors: impl FnMut(usize, &mut Vec<usize>),
) -> Result<Vec<Vec<usize>>, Vec<usize>> {
    let mut out = Vec::new();
    let mut in_degree = vec![0usize; n];
    for u in 0..n {
        out.clear();
        successors(u, &mut out);
        for &v in &out {
            in_degree[v] += 1;
        }
    }
    let mut wave: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
    let mut waves = Vec::new();
    let mut placed = 0;
    while !wave.is_empty() {
        placed += wave.len();
        let mut next = Vec::new();
        for &u in &wave {
            out.clear();
            successors(u, &mut out);
            for &v in &out {
                in_degree[v] -= 1;
                if in_degree[v] == 0 {
                    next.push(v);
                }
            }
        }
        next.sort_unstable();
        waves.push(std::mem::replace(&mut wave, next));
    }
    if placed == n {
        Ok(waves)
    } else {
        Err((0..n).filter(|&i| in_degree[i] > 0).collect())
    }
}

/// Successor lists of `edges` over `n` nodes.
fn successor_lists(n: usize, edges: impl IntoIterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); n];
    for (from, to) in edges {
        successors[from].push(to);
    }
    successors
}

/// What two systems can conflict on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Component(ComponentKey),
    Resource(TypeId),
    Event(TypeId),
    Registry,
}

/// Every type some system touches, with its accessors.
struct Subjects {
    /// Per subject, in order of first use: its kind, and its accessors in
    /// registration order with their access.
    list: Vec<(SubjectKind, Vec<(usize, Access)>)>,
    /// Per system: `(subject, access)`.
    of_system: Vec<Vec<(usize, Access)>>,
}

impl Subjects {
    fn new(nodes: &[Node<'_>]) -> Subjects {
        let mut index: HashMap<Key, usize> = HashMap::new();
        let mut subjects = Subjects {
            list: Vec::new(),
            of_system: vec![Vec::new(); nodes.len()],
        };
        let any_exclusive = nodes.iter().any(|n| n.access.is_exclusive());
        for (i, node) in nodes.iter().enumerate() {
            let access = node.access;
            let components = access
                .components()
                .iter()
                .map(|c| (Key::Component(c.key), SubjectKind::Component, c.access));
            let resources = access
                .resources()
                .iter()
                .map(|r| (Key::Resource(r.type_id), SubjectKind::Resource, r.access));
            let events = access
                .events()
                .iter()
                .map(|e| (Key::Event(e.type_id), SubjectKind::Event, e.access));
            // Every system takes the registry when one does: an exclusive
            // system writes it, the others read it.
            let registry = any_exclusive.then(|| {
                let access = if access.is_exclusive() {
                    Access::Write
                } else {
                    Access::Read
                };
                (Key::Registry, SubjectKind::Registry, access)
            });
            for (key, kind, access) in components.chain(resources).chain(events).chain(registry) {
                let s = *index.entry(key).or_insert_with(|| {
                    subjects.list.push((kind, Vec::new()));
                    subjects.list.len() - 1
                });
                subjects.list[s].1.push((i, access));
                subjects.of_system[i].push((s, access));
            }
        }
        subjects
    }
}

/// Edges `emit(from, to)` between conflicting accessors of one subject,
/// taken in the order of `accessors`, such that a path of them joins every
/// conflicting pair in that order: a reader follows the last writer, a
/// writer follows the readers since the last writer (or, with none, the
/// last writer). For an event type, where only a writer and a reader
/// conflict, each accessor follows the last run of the other kind.
fn chain(
    kind: SubjectKind,
    accessors: impl IntoIterator<Item = (usize, Access)>,
    emit: &mut impl FnMut(usize, usize),
) {
    if kind == SubjectKind::Event {
        let (mut previous, mut run, mut run_access) = (Vec::new(), Vec::new(), None);
        for (k, access) in accessors {
            if run_access != Some(access) {
                previous = std::mem::take(&mut run);
                run_access = Some(access);
            }
            for &p in &previous {
                emit(p, k);
            }
            run.push(k);
        }
        return;
    }
    let (mut writer, mut readers) = (None, Vec::new());
    for (k, access) in accessors {
        if access == Access::Read {
            if let Some(w) = writer {
                emit(w, k);
            }
            readers.push(k);
        } else {
            if readers.is_empty()
                && let Some(w) = writer
            {
                emit(w, k);
            }
            for r in readers.drain(..) {
                emit(r, k);
            }
            writer = Some(k);
        }
    }
}

/// The rule for one conflict between `earlier` and `later` (registration
/// order) with accesses `a` and `b`: the rule, and whether it runs the
/// earlier system first.
fn rule(policy: Policy, kind: SubjectKind, a: Access, b: Access) -> (Rule, bool) {
    match (policy, a, b) {
        // Events go from writers to readers under every policy (cycle-free:
        // the fallback applies).
        (_, Access::Write, _) if kind == SubjectKind::Event => (Rule::WriteBeforeRead, true),
        _ if kind == SubjectKind::Event => (Rule::WriteBeforeRead, false),
        (Policy::RegistrationOrder, _, _) => (Rule::RegistrationOrder, true),
        _ if kind == SubjectKind::Registry => (Rule::RegistrationOrder, true),
        (_, Access::Write, Access::Write) => (Rule::WriteWrite, true),
        (_, Access::Write, _) => (Rule::WriteBeforeRead, true),
        (_, _, _) => (Rule::WriteBeforeRead, false),
    }
}

/// The edge the pairwise rule gives two systems (registration order)
/// that conflict and that the DAG runs `forward` (the earlier first) or
/// not: its reasons, or `None` when they do not conflict or the rule adds
/// no edge (it would run them forward, but a path runs them backward).
///
/// Where the rules disagree the pair runs forward and the backward rules
/// fall back; where every rule runs backward but a path runs the pair
/// forward, every rule falls back.
fn pair_reasons(
    earlier: &SystemAccess,
    later: &SystemAccess,
    policy: Policy,
    forward: bool,
) -> Option<Vec<EdgeReason>> {
    let mut rules: Vec<_> = earlier
        .conflicts(later)
        .map(|(name, kind, a, b)| (name, kind, rule(policy, kind, a, b)))
        .collect();
    if rules.is_empty() {
        return None;
    }
    let rules_forward = rules.iter().any(|(_, _, (_, runs_forward))| *runs_forward);
    if rules_forward && !forward {
        return None;
    }
    Some(
        rules
            .drain(..)
            .map(|(name, kind, (rule, runs_forward))| {
                let rule = if forward && !runs_forward {
                    Rule::CycleFallback
                } else {
                    rule
                };
                EdgeReason::Conflict { name, kind, rule }
            })
            .collect(),
    )
}

/// The DAG over systems (node weight: registration index) and its waves.
#[derive(Debug, Clone)]
pub(crate) struct Dag {
    pub(crate) graph: DiGraph<usize, Vec<EdgeReason>>,
    pub(crate) waves: Vec<Vec<usize>>,
    policy: Policy,
}

fn add_reason(
    graph: &mut DiGraph<usize, Vec<EdgeReason>>,
    from: usize,
    to: usize,
    reason: EdgeReason,
) {
    let (a, b) = (NodeIndex::new(from), NodeIndex::new(to));
    match graph.find_edge(a, b) {
        Some(edge) => graph[edge].push(reason),
        None => {
            graph.add_edge(a, b, vec![reason]);
        }
    }
}

impl Dag {
    pub(crate) fn build(
        nodes: &[Node<'_>],
        sets: &[SetNode<'_>],
        policy: Policy,
    ) -> Result<Dag, BuildError> {
        let n = nodes.len();
        let mut graph = DiGraph::with_capacity(n, n);
        for i in 0..n {
            graph.add_node(i);
        }
        // 1. The user's constraints. A target is a system name, else a set
        // name (every member). A system that names itself closes a cycle of
        // one edge; a set's constraints concern its other members.
        let by_name: HashMap<&str, usize> =
            nodes.iter().enumerate().map(|(i, n)| (n.name, i)).collect();
        let mut members: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, node) in nodes.iter().enumerate() {
            for set in node.sets {
                let list = members.entry(set.as_str()).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        let no_members = Vec::new();
        let mut constrain = |declared_by: &str,
                             sources: &[usize],
                             from_set: bool,
                             relation: &'static str,
                             target: &str|
         -> Result<(), BuildError> {
            let (targets, by_system) = match by_name.get(target) {
                Some(i) => (std::slice::from_ref(i), !from_set),
                None => match members.get(target) {
                    Some(list) => (list.as_slice(), false),
                    None if sets.iter().any(|s| s.name == target) => (no_members.as_slice(), false),
                    None => {
                        return Err(BuildError::UnknownSystem {
                            system: declared_by.to_owned(),
                            relation,
                            target: target.to_owned(),
                        });
                    }
                },
            };
            for &j in targets {
                for &i in sources {
                    if i == j && !by_system {
                        continue;
                    }
                    let (from, to) = if relation == "before" { (i, j) } else { (j, i) };
                    let reason = EdgeReason::Constraint {
                        declared_by: declared_by.to_owned(),
                        relation,
                    };
                    add_reason(&mut graph, from, to, reason);
                }
            }
            Ok(())
        };
        for (i, node) in nodes.iter().enumerate() {
            for (relation, targets) in [("before", node.before), ("after", node.after)] {
                for target in targets {
                    constrain(node.name, &[i], false, relation, target)?;
                }
            }
        }
        for set in sets {
            let list = members.get(set.name).unwrap_or(&no_members);
            let declared_by = format!("set {}", set.name);
            for (relation, targets) in [("before", set.before), ("after", set.after)] {
                for target in targets {
                    constrain(&declared_by, list, true, relation, target)?;
                }
            }
        }
        let explicit_order: Vec<usize> = kahn_waves(&graph)
            .map_err(|remaining| BuildError::Cycle {
                cycle: find_cycle(&graph, &remaining, nodes),
            })?
            .concat();
        let explicit_edges: Vec<(usize, usize)> = graph
            .edge_references()
            .map(|e| (e.source().index(), e.target().index()))
            .collect();
        let explicit = Reach::new(
            n,
            &explicit_order,
            &successor_lists(n, explicit_edges.iter().copied()),
        );
        // 2. An order of the systems that the pairwise rule's DAG follows.
        let subjects = Subjects::new(nodes);
        let mut edges = explicit_edges.clone();
        for (kind, accessors) in &subjects.list {
            let writers_first = *kind == SubjectKind::Event
                || (policy == Policy::WriterFirst
                    && matches!(kind, SubjectKind::Component | SubjectKind::Resource));
            let mut accessors = accessors.clone();
            if writers_first {
                // Stable: each kind keeps registration order.
                accessors.sort_by_key(|&(_, access)| access != Access::Write);
            }
            chain(*kind, accessors, &mut |from, to| edges.push((from, to)));
        }
        let successors = successor_lists(n, edges);
        let order = match levels(n, |u, out| out.extend_from_slice(&successors[u])) {
            Ok(waves) => waves.concat(),
            Err(_) => pairwise_order(
                n,
                &subjects,
                &explicit,
                &explicit_order,
                &explicit_edges,
                policy,
            ),
        };
        // 3. The chains in that order, each edge with the pairwise rule's
        // reasons.
        let mut position = vec![0; n];
        for (p, &i) in order.iter().enumerate() {
            position[i] = p;
        }
        let mut pairs = Vec::new();
        for (kind, accessors) in &subjects.list {
            let mut accessors = accessors.clone();
            accessors.sort_by_key(|&(i, _)| position[i]);
            chain(*kind, accessors, &mut |from, to| {
                if !explicit.ordered(from, to) {
                    pairs.push((from, to));
                }
            });
        }
        pairs.sort_unstable_by_key(|&(from, to)| (from.min(to), from.max(to)));
        pairs.dedup();
        for (from, to) in pairs {
            let (earlier, later) = (from.min(to), from.max(to));
            if let Some(reasons) = pair_reasons(
                nodes[earlier].access,
                nodes[later].access,
                policy,
                from < to,
            ) {
                graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), reasons);
            }
        }
        let waves = kahn_waves(&graph).map_err(|remaining| BuildError::Cycle {
            cycle: find_cycle(&graph, &remaining, nodes),
        })?;
        Ok(Dag {
            graph,
            waves,
            policy,
        })
    }
}

/// The pairwise rule run literally, for when chaining in the rule's order
/// closes a cycle: for each system `i` in registration order, its
/// conflicting pairs `(i, j)`, `j > i`, in order of `j`. Returns a
/// topological order of the resulting DAG.
///
/// Reachability is kept in bit rows (`desc`, `anc`), exact for the systems
/// after `i` only: a system's row is read only while its pairs are still to
/// come. Within row `i`, every new edge touches `i`, so only `i`'s own
/// ancestors (`a`) and descendants (`d`) change; after the row, every
/// later ancestor of `i` reaches every later descendant. An edge is
/// recorded (`out`) only where it adds a path.
fn pairwise_order(
    n: usize,
    subjects: &Subjects,
    down: &Reach,
    explicit_order: &[usize],
    explicit_edges: &[(usize, usize)],
    policy: Policy,
) -> Vec<usize> {
    let mut desc = Bits::new(n, n);
    let mut anc = Bits::new(n, n);
    let words = desc.words;
    let reversed: Vec<usize> = explicit_order.iter().rev().copied().collect();
    let up = Reach::new(
        n,
        &reversed,
        &successor_lists(n, explicit_edges.iter().map(|&(from, to)| (to, from))),
    );
    let mut desc_any = vec![false; n];
    let mut anc_any = vec![false; n];
    for x in 0..n {
        if let Some(row) = down.row(x) {
            desc.row_mut(x).copy_from_slice(row);
            desc_any[x] = true;
        }
        if let Some(row) = up.row(x) {
            anc.row_mut(x).copy_from_slice(row);
            anc_any[x] = true;
        }
    }
    let mut writers = Bits::new(subjects.list.len(), n);
    let mut readers = Bits::new(subjects.list.len(), n);
    for (s, (_, accessors)) in subjects.list.iter().enumerate() {
        for &(i, access) in accessors {
            let row = if access == Access::Write {
                writers.row_mut(s)
            } else {
                readers.row_mut(s)
            };
            set_bit(row, i);
        }
    }
    let mut out = Bits::new(n, n);
    let (mut candidates, mut forward) = (vec![0u64; words], vec![0u64; words]);
    let (mut a, mut d) = (vec![0u64; words], vec![0u64; words]);
    let (mut a_old, mut d_old) = (vec![0u64; words], vec![0u64; words]);
    let (mut a_new, mut d_new) = (vec![0u64; words], vec![0u64; words]);
    for i in 0..n {
        // Only bits after `i` are read: from word `lo`, the first masked.
        let lo = (i + 1) / 64;
        if lo == words {
            break;
        }
        let first_mask = !0u64 << ((i + 1) % 64);
        candidates[lo..].fill(0);
        forward[lo..].fill(0);
        for &(s, access) in &subjects.of_system[i] {
            let kind = subjects.list[s].0;
            // Which accessors conflict with `i`, and whether the rule runs
            // `i` (the earlier) first.
            let (with_writers, with_readers, runs_forward) = match (kind, access) {
                (SubjectKind::Event, Access::Write) => (false, true, true),
                (SubjectKind::Event, Access::Read) => (true, false, false),
                (_, Access::Write) => (true, true, true),
                (SubjectKind::Registry, Access::Read) => (true, false, true),
                (_, Access::Read) => (true, false, policy == Policy::RegistrationOrder),
            };
            let (w, r) = (writers.row(s), readers.row(s));
            for k in lo..words {
                let v = if with_writers { w[k] } else { 0 } | if with_readers { r[k] } else { 0 };
                candidates[k] |= v;
                if runs_forward {
                    forward[k] |= v;
                }
            }
        }
        candidates[lo] &= first_mask;
        a[lo..].copy_from_slice(&anc.row(i)[lo..]);
        d[lo..].copy_from_slice(&desc.row(i)[lo..]);
        for j in ones(&candidates[lo..], lo) {
            // Ordered already (the user's constraints included): the rule
            // adds no edge, or one that adds no path.
            if bit(&a, j) || bit(&d, j) {
                continue;
            }
            if bit(&forward, j) {
                set_bit(out.row_mut(i), j);
                set_bit(&mut d, j);
                if desc_any[j] {
                    or_into(&mut d[lo..], &desc.row(j)[lo..]);
                }
            } else {
                set_bit(out.row_mut(j), i);
                set_bit(&mut a, j);
                if anc_any[j] {
                    or_into(&mut a[lo..], &anc.row(j)[lo..]);
                }
            }
        }
        a[lo] &= first_mask;
        d[lo] &= first_mask;
        // Every later ancestor of `i` now reaches every later descendant.
        // Ancestors from before the row already reach the descendants from
        // before it (and the other way round): only the new ones spread.
        for k in lo..words {
            let (a0, d0) = (anc.row(i)[k], desc.row(i)[k]);
            let mask = if k == lo { first_mask } else { !0 };
            a_old[k] = a0 & mask;
            d_old[k] = d0 & mask;
            a_new[k] = a[k] & !a0;
            d_new[k] = d[k] & !d0;
        }
        spread(&mut desc, &mut desc_any, &a_old[lo..], &d_new[lo..], lo);
        spread(&mut desc, &mut desc_any, &a_new[lo..], &d[lo..], lo);
        spread(&mut anc, &mut anc_any, &d_old[lo..], &a_new[lo..], lo);
        spread(&mut anc, &mut anc_any, &d_new[lo..], &a[lo..], lo);
    }
    let explicit = successor_lists(n, explicit_edges.iter().copied());
    levels(n, |u, successors| {
        successors.extend(ones(out.row(u), 0));
        successors.extend_from_slice(&explicit[u]);
    })
    .expect("the pairwise rule closes no cycle")
    .concat()
}

/// ORs `bits` (words from word `first` of a row) into the row of every
/// node in `targets` (the same words), marking those rows non-empty.
fn spread(rows: &mut Bits, any: &mut [bool], targets: &[u64], bits: &[u64], first: usize) {
    let words: Vec<(usize, u64)> = (first..)
        .zip(bits)
        .filter(|&(_, &v)| v != 0)
        .map(|(k, &v)| (k, v))
        .collect();
    if words.is_empty() {
        return;
    }
    for x in ones(targets, first) {
        let row = rows.row_mut(x);
        for &(k, v) in &words {
            row[k] |= v;
        }
        any[x] = true;
    }
}

/// Kahn's algorithm over `graph`. `Err` holds the nodes left on or behind
/// a cycle.
fn kahn_waves(graph: &DiGraph<usize, Vec<EdgeReason>>) -> Result<Vec<Vec<usize>>, Vec<usize>> {
    levels(graph.node_count(), |u, successors| {
        successors.extend(
            graph
                .neighbors_directed(NodeIndex::new(u), Direction::Outgoing)
                .map(|n| n.index()),
        );
    })
}

/// One cycle among the nodes Kahn's algorithm could not place: each such
/// node has a predecessor among them, so walking predecessors must repeat.
fn find_cycle(
    graph: &DiGraph<usize, Vec<EdgeReason>>,
    remaining: &[usize],
    nodes: &[Node<'_>],
) -> Vec<CycleEdge> {
    let mut path = vec![remaining[0]];
    let start = loop {
        let current = NodeIndex::new(*path.last().expect("path starts non-empty"));
        let predecessor = graph
            .neighbors_directed(current, Direction::Incoming)
            .map(|n| n.index())
            .filter(|i| remaining.contains(i))
            .min()
            .expect("every unplaced node has an unplaced predecessor");
        if let Some(position) = path.iter().position(|&p| p == predecessor) {
            break position;
        }
        path.push(predecessor);
    };
    // `path[start..]` walks backwards along edges; reverse it to run forwards.
    let mut cycle: Vec<usize> = path[start..].to_vec();
    cycle.reverse();
    (0..cycle.len())
        .map(|k| {
            let (from, to) = (cycle[k], cycle[(k + 1) % cycle.len()]);
            let edge = graph
                .find_edge(NodeIndex::new(from), NodeIndex::new(to))
                .expect("consecutive cycle nodes are joined");
            CycleEdge {
                from: nodes[from].name.to_owned(),
                to: nodes[to].name.to_owned(),
                reasons: graph[edge].iter().map(ToString::to_string).collect(),
            }
        })
        .collect()
}

/// An edge as drawn: `(from, to, reasons)`.
pub(crate) type DrawnEdge<'s> = (usize, usize, Cow<'s, [EdgeReason]>);

impl Dag {
    /// The incoming edges of system `i`: `(predecessor, reasons)`.
    pub(crate) fn predecessors(&self, i: usize) -> impl Iterator<Item = (usize, &[EdgeReason])> {
        self.graph
            .edges_directed(NodeIndex::new(i), Direction::Incoming)
            .map(|e| (e.source().index(), e.weight().as_slice()))
    }

    /// Reachability over the DAG's edges, for [`implied`](Self::implied)
    /// and [`drawn_edges`](Self::drawn_edges). Quadratic in bits.
    pub(crate) fn reach(&self) -> Reach {
        self.reach_over(|_| true)
    }

    /// Reachability over the edges whose reasons pass `keep`.
    fn reach_over(&self, keep: impl Fn(&[EdgeReason]) -> bool) -> Reach {
        let n = self.graph.node_count();
        let successors = successor_lists(
            n,
            self.edges()
                .filter(|(_, _, reasons)| keep(reasons))
                .map(|(from, to, _)| (from, to)),
        );
        Reach::new(n, &self.waves.concat(), &successors)
    }

    /// `true` when edge `from -> to` is implied by a longer path: another
    /// successor of `from` reaches `to` (`reach` from [`reach`](Self::reach)).
    pub(crate) fn implied(&self, reach: &Reach, from: usize, to: usize) -> bool {
        self.graph
            .neighbors_directed(NodeIndex::new(from), Direction::Outgoing)
            .map(|n| n.index())
            .any(|s| s != to && reach.get(s, to))
    }

    /// Every edge the DAG keeps: `(from, to, reasons)`.
    pub(crate) fn edges(&self) -> impl Iterator<Item = (usize, usize, &[EdgeReason])> {
        self.graph.edge_references().map(|e| {
            (
                e.source().index(),
                e.target().index(),
                e.weight().as_slice(),
            )
        })
    }

    /// Every edge of the pairwise rule taken literally: the explicit
    /// constraints, then one edge per conflicting pair (in registration
    /// order of pairs) that the user left unordered, with the reasons the
    /// rule gives it, also where the DAG orders the pair by a longer path
    /// instead. `access(i)` is the access of system `i`. Quadratic in
    /// systems.
    pub(crate) fn drawn_edges<'s>(
        &'s self,
        access: impl Fn(usize) -> &'s SystemAccess,
    ) -> Vec<DrawnEdge<'s>> {
        let constraint = |reasons: &[EdgeReason]| {
            reasons
                .iter()
                .all(|r| matches!(r, EdgeReason::Constraint { .. }))
        };
        let (reach, explicit) = (self.reach(), self.reach_over(constraint));
        let mut drawn: Vec<DrawnEdge<'s>> = self
            .edges()
            .filter(|(_, _, reasons)| constraint(reasons))
            .map(|(from, to, reasons)| (from, to, Cow::Borrowed(reasons)))
            .collect();
        let n = self.graph.node_count();
        for i in 0..n {
            for j in i + 1..n {
                // Conflicting pairs are ordered one way or the other.
                let forward = reach.get(i, j);
                if !(forward || reach.get(j, i)) || explicit.ordered(i, j) {
                    continue;
                }
                if let Some(reasons) = pair_reasons(access(i), access(j), self.policy, forward) {
                    let (from, to) = if forward { (i, j) } else { (j, i) };
                    drawn.push((from, to, Cow::Owned(reasons)));
                }
            }
        }
        drawn
    }
}
