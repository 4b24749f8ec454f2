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

mod bits;
mod chains;
mod pairwise;
mod reason;

use std::borrow::Cow;
use std::collections::HashMap;

use ecs_engine::Access;
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::access::SubjectKind;
use crate::{BuildError, CycleEdge, SystemAccess};
use bits::{Reach, levels, successor_lists};
use chains::{Subjects, chain_subject, pair_reasons};
use pairwise::pairwise_order;
pub use reason::{EdgeReason, Policy, Rule};
pub(crate) use reason::{Node, SetNode};

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
        let mut constrain = |declarer: &str,
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
                            system: declarer.to_owned(),
                            kind: if from_set { "set" } else { "system" },
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
                        declared_by: if from_set {
                            format!("set {declarer}")
                        } else {
                            declarer.to_owned()
                        },
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
            for (relation, targets) in [("before", set.before), ("after", set.after)] {
                for target in targets {
                    constrain(set.name, list, true, relation, target)?;
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
        for ((kind, accessors), disjoint) in subjects.list.iter().zip(&subjects.disjoint) {
            let writers_first = *kind == SubjectKind::Event
                || (policy == Policy::WriterFirst
                    && matches!(kind, SubjectKind::Component | SubjectKind::Resource));
            let mut accessors = accessors.clone();
            if writers_first {
                // Stable: each kind keeps registration order.
                accessors.sort_by_key(|&(_, access)| access != Access::Write);
            }
            chain_subject(*kind, accessors, disjoint, &mut |from, to| {
                edges.push((from, to));
            });
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
        for ((kind, accessors), disjoint) in subjects.list.iter().zip(&subjects.disjoint) {
            let mut accessors = accessors.clone();
            accessors.sort_by_key(|&(i, _)| position[i]);
            chain_subject(*kind, accessors, disjoint, &mut |from, to| {
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
