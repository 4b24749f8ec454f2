//! The dependency DAG and its waves.
//!
//! Edges are added in two steps:
//!
//! 1. **Explicit constraints** (`before`/`after`): these are the user's own
//!    word, and the only edges that can form a cycle (a
//!    [`BuildError::Cycle`] listing them).
//! 2. **Automatic conflict edges**, for each pair of systems that touch a
//!    type (at least one writing it) and that the explicit constraints,
//!    transitively, leave unordered. Pairs are taken in registration order
//!    (`(0, 1), (0, 2), ..., (1, 2), ...`), and the reachability of the
//!    graph so far is kept up to date, so an automatic edge is only added
//!    where it closes no cycle:
//!    - [`Policy::RegistrationOrder`] (the default): the earlier-registered
//!      system runs first.
//!    - [`Policy::WriterFirst`]: on each type, the writer runs before the
//!      reader, and two writers run in registration order. Where that
//!      would close a cycle (two systems that each write what the other
//!      reads, or a path already ordering the pair the other way), the
//!      pair falls back to registration order, and the edge says so
//!      ([`Rule::CycleFallback`]).
//!
//!    A pair that the edges added so far already order (a path one way or
//!    the other) gets no edge against that path.
//!
//! Invariants of a built [`Dag`]: it is acyclic; every conflicting pair is
//! joined by a path; `reach` is its transitive closure.
//!
//! Waves come from Kahn's algorithm (A. B. Kahn, "Topological sorting of
//! large networks", CACM 5(11), 1962), taken level by level: wave 0 holds
//! the systems with no predecessor; wave k+1 the systems whose last
//! predecessor is in wave k. Within a wave, systems keep registration order.

use std::borrow::Cow;
use std::fmt;

use ecs_engine::Access;
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

/// Reachability between systems: one bit row per system, bit `j` of row
/// `i` set when a path leads from `i` to `j`.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    fn new(n: usize) -> Reach {
        let words = n.div_ceil(64);
        Reach {
            words,
            bits: vec![0; words * n],
        }
    }

    /// `true` when a path leads from `from` to `to`.
    pub(crate) fn get(&self, from: usize, to: usize) -> bool {
        self.bits[from * self.words + to / 64] & (1 << (to % 64)) != 0
    }

    /// Records an edge `from -> to`: every system that reaches `from` (and
    /// `from` itself) now reaches `to` and all it reaches.
    fn add_edge(&mut self, from: usize, to: usize) {
        let n = self.bits.len().checked_div(self.words).unwrap_or(0);
        let mut row: Vec<u64> = self.bits[to * self.words..(to + 1) * self.words].to_vec();
        row[to / 64] |= 1 << (to % 64);
        for x in 0..n {
            if x == from || self.get(x, from) {
                let target = &mut self.bits[x * self.words..(x + 1) * self.words];
                for (t, r) in target.iter_mut().zip(&row) {
                    *t |= r;
                }
            }
        }
    }
}

/// The DAG over systems (node weight: registration index), its waves and
/// its reachability.
#[derive(Debug, Clone)]
pub(crate) struct Dag {
    pub(crate) graph: DiGraph<usize, Vec<EdgeReason>>,
    pub(crate) waves: Vec<Vec<usize>>,
    pub(crate) reach: Reach,
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
        // name (every member).
        let resolve = |system: &str, relation: &'static str, target: &str| {
            if let Some(i) = nodes.iter().position(|n| n.name == target) {
                return Ok(vec![i]);
            }
            let members: Vec<usize> = (0..n)
                .filter(|&i| nodes[i].sets.iter().any(|s| s == target))
                .collect();
            if members.is_empty() && !sets.iter().any(|s| s.name == target) {
                return Err(BuildError::UnknownSystem {
                    system: system.to_owned(),
                    relation,
                    target: target.to_owned(),
                });
            }
            Ok(members)
        };
        let mut reach = Reach::new(n);
        let mut constrain = |declared_by: &str,
                             sources: &[usize],
                             relation: &'static str,
                             target: &str|
         -> Result<(), BuildError> {
            for j in resolve(declared_by, relation, target)? {
                for &i in sources {
                    if i == j {
                        continue;
                    }
                    let (from, to) = if relation == "before" { (i, j) } else { (j, i) };
                    let reason = EdgeReason::Constraint {
                        declared_by: declared_by.to_owned(),
                        relation,
                    };
                    add_reason(&mut graph, from, to, reason);
                    reach.add_edge(from, to);
                }
            }
            Ok(())
        };
        for (i, node) in nodes.iter().enumerate() {
            for (relation, targets) in [("before", node.before), ("after", node.after)] {
                for target in targets {
                    constrain(node.name, &[i], relation, target)?;
                }
            }
        }
        for set in sets {
            let members: Vec<usize> = (0..n)
                .filter(|&i| nodes[i].sets.iter().any(|s| s == set.name))
                .collect();
            let declared_by = format!("set {}", set.name);
            for (relation, targets) in [("before", set.before), ("after", set.after)] {
                for target in targets {
                    constrain(&declared_by, &members, relation, target)?;
                }
            }
        }
        if let Err(remaining) = kahn_waves(&graph) {
            return Err(BuildError::Cycle {
                cycle: find_cycle(&graph, &remaining, nodes),
            });
        }
        let explicit = reach.clone();
        // 2. Automatic edges for the conflicts the user left unordered.
        let mut reasons = Vec::new();
        for (i, earlier) in nodes.iter().enumerate() {
            for (j, later) in nodes.iter().enumerate().skip(i + 1) {
                if explicit.get(i, j) || explicit.get(j, i) {
                    continue;
                }
                reasons.clear();
                let mut forward = 0;
                for (name, kind, a, b) in earlier.access.conflicts(later.access) {
                    let (rule, runs_forward) = match (policy, a, b) {
                        // Events go from writers to readers under every
                        // policy (cycle-free: the fallback below applies).
                        (_, Access::Write, _) if kind == SubjectKind::Event => {
                            (Rule::WriteBeforeRead, true)
                        }
                        _ if kind == SubjectKind::Event => (Rule::WriteBeforeRead, false),
                        (Policy::RegistrationOrder, _, _) => (Rule::RegistrationOrder, true),
                        _ if kind == SubjectKind::Registry => (Rule::RegistrationOrder, true),
                        (_, Access::Write, Access::Write) => (Rule::WriteWrite, true),
                        (_, Access::Write, _) => (Rule::WriteBeforeRead, true),
                        (_, _, _) => (Rule::WriteBeforeRead, false),
                    };
                    forward += usize::from(runs_forward);
                    reasons.push((name, kind, rule, runs_forward));
                }
                if reasons.is_empty() {
                    continue;
                }
                // Every rule points the same way: that way, unless a path
                // already runs the other way. Otherwise registration order.
                let backward = forward == 0;
                let (from, to) = if backward { (j, i) } else { (i, j) };
                let closes_cycle = reach.get(to, from);
                if closes_cycle && !backward {
                    // Already ordered against registration order by the
                    // edges so far (the user's constraints with earlier
                    // automatic edges): nothing to add.
                    continue;
                }
                let fallback = forward != reasons.len() && !backward || closes_cycle;
                let (from, to) = if closes_cycle { (i, j) } else { (from, to) };
                for (name, kind, rule, runs_forward) in reasons.drain(..) {
                    let rule = if fallback && (closes_cycle || !runs_forward) {
                        Rule::CycleFallback
                    } else {
                        rule
                    };
                    add_reason(
                        &mut graph,
                        from,
                        to,
                        EdgeReason::Conflict { name, kind, rule },
                    );
                }
                reach.add_edge(from, to);
            }
        }
        let waves = kahn_waves(&graph).map_err(|remaining| BuildError::Cycle {
            cycle: find_cycle(&graph, &remaining, nodes),
        })?;
        Ok(Dag {
            graph,
            waves,
            reach,
        })
    }
}

/// Kahn's algorithm, level by level. `Err` holds the nodes left on or
/// behind a cycle.
fn kahn_waves(graph: &DiGraph<usize, Vec<EdgeReason>>) -> Result<Vec<Vec<usize>>, Vec<usize>> {
    let mut in_degree: Vec<usize> = graph
        .node_indices()
        .map(|n| graph.neighbors_directed(n, Direction::Incoming).count())
        .collect();
    let mut wave: Vec<usize> = (0..in_degree.len())
        .filter(|&i| in_degree[i] == 0)
        .collect();
    let mut waves = Vec::new();
    let mut placed = 0;
    while !wave.is_empty() {
        placed += wave.len();
        let mut next = Vec::new();
        for &i in &wave {
            for successor in graph.neighbors_directed(NodeIndex::new(i), Direction::Outgoing) {
                let j = successor.index();
                in_degree[j] -= 1;
                if in_degree[j] == 0 {
                    next.push(j);
                }
            }
        }
        next.sort_unstable();
        waves.push(std::mem::replace(&mut wave, next));
    }
    if placed == in_degree.len() {
        Ok(waves)
    } else {
        Err((0..in_degree.len()).filter(|&i| in_degree[i] > 0).collect())
    }
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

impl Dag {
    /// The incoming edges of system `i`: `(predecessor, reasons)`.
    pub(crate) fn predecessors(&self, i: usize) -> impl Iterator<Item = (usize, &[EdgeReason])> {
        self.graph
            .edges_directed(NodeIndex::new(i), Direction::Incoming)
            .map(|e| (e.source().index(), e.weight().as_slice()))
    }

    /// `true` when edge `from -> to` is implied by a longer path: another
    /// successor of `from` reaches `to`.
    pub(crate) fn implied(&self, from: usize, to: usize) -> bool {
        self.graph
            .neighbors_directed(NodeIndex::new(from), Direction::Outgoing)
            .map(|n| n.index())
            .any(|s| s != to && self.reach.get(s, to))
    }

    /// Every edge: `(from, to, reasons)`.
    pub(crate) fn edges(&self) -> impl Iterator<Item = (usize, usize, &[EdgeReason])> {
        self.graph.edge_references().map(|e| {
            (
                e.source().index(),
                e.target().index(),
                e.weight().as_slice(),
            )
        })
    }
}
