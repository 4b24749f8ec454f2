//! The dependency DAG and its waves.
//!
//! Edges come from the conflict rules on each component type or resource
//! two systems share (at least one writing): *write -> read*, the writer
//! runs first; *write -> write*, the earlier-registered system runs first;
//! *read -> read* adds nothing. Under [`Policy::RegistrationOrder`] every
//! conflict runs in registration order instead. Explicit `before`/`after`
//! constraints add edges too. Every edge keeps its reasons.
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

/// How conflicting accesses are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Writers run before readers; two writers run in registration order.
    /// Can form a cycle (a build error) when two systems each write what
    /// the other reads.
    #[default]
    WriterFirst,
    /// Every conflict runs in registration order: never a cycle from
    /// conflicts (explicit constraints can still form one).
    RegistrationOrder,
}

/// The rule behind a conflict edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// One writes what the other reads: the writer runs first.
    WriteBeforeRead,
    /// Both write: the earlier-registered runs first.
    WriteWrite,
    /// [`Policy::RegistrationOrder`]: the earlier-registered runs first.
    RegistrationOrder,
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

impl fmt::Display for EdgeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeReason::Conflict { name, kind, rule } => {
                let kind = match kind {
                    SubjectKind::Component => "",
                    SubjectKind::Resource => "resource ",
                    SubjectKind::Event => "event ",
                };
                let rule = match rule {
                    Rule::WriteBeforeRead => "write -> read",
                    Rule::WriteWrite => "write -> write",
                    Rule::RegistrationOrder => "conflict, registration order",
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
}

/// The DAG over systems (node weight: registration index) and its waves.
#[derive(Debug, Clone)]
pub(crate) struct Dag {
    pub(crate) graph: DiGraph<usize, Vec<EdgeReason>>,
    pub(crate) waves: Vec<Vec<usize>>,
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
    pub(crate) fn build(nodes: &[Node<'_>], policy: Policy) -> Result<Dag, BuildError> {
        let mut graph = DiGraph::with_capacity(nodes.len(), nodes.len());
        for i in 0..nodes.len() {
            graph.add_node(i);
        }
        for (i, earlier) in nodes.iter().enumerate() {
            for (j, later) in nodes.iter().enumerate().skip(i + 1) {
                for (name, kind, a, b) in earlier.access.conflicts(later.access) {
                    let (from, to, rule) = match (policy, a, b) {
                        (Policy::RegistrationOrder, _, _) => (i, j, Rule::RegistrationOrder),
                        (_, Access::Write, Access::Write) => (i, j, Rule::WriteWrite),
                        (_, Access::Write, _) => (i, j, Rule::WriteBeforeRead),
                        (_, _, _) => (j, i, Rule::WriteBeforeRead),
                    };
                    add_reason(
                        &mut graph,
                        from,
                        to,
                        EdgeReason::Conflict { name, kind, rule },
                    );
                }
            }
        }
        let find = |system: &str, relation: &'static str, target: &str| {
            nodes
                .iter()
                .position(|n| n.name == target)
                .ok_or_else(|| BuildError::UnknownSystem {
                    system: system.to_owned(),
                    relation,
                    target: target.to_owned(),
                })
        };
        for (i, node) in nodes.iter().enumerate() {
            for (relation, targets) in [("before", node.before), ("after", node.after)] {
                for target in targets {
                    let j = find(node.name, relation, target)?;
                    let (from, to) = if relation == "before" { (i, j) } else { (j, i) };
                    let reason = EdgeReason::Constraint {
                        declared_by: node.name.to_owned(),
                        relation,
                    };
                    add_reason(&mut graph, from, to, reason);
                }
            }
        }
        let waves = kahn_waves(&graph).map_err(|remaining| BuildError::Cycle {
            cycle: find_cycle(&graph, &remaining, nodes),
        })?;
        Ok(Dag { graph, waves })
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
