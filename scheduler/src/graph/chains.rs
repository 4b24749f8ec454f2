//! Per-subject chains: the edges that join every conflicting pair of one
//! component, resource or event type by a path of neighbours, and the
//! pairwise rule's reasons for a pair.

use std::any::TypeId;
use std::collections::HashMap;

use ecs_engine::{Access, ComponentKey};

use super::reason::{EdgeReason, Node, Policy, Rule};
use crate::SystemAccess;
use crate::access::{EventKey, SubjectKind};

/// What two systems can conflict on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Component(ComponentKey),
    Resource(TypeId),
    Event(EventKey),
    Registry,
}

/// Every type some system touches, with its accessors.
pub(super) struct Subjects {
    /// Per subject, in order of first use: its kind, and its accessors in
    /// registration order with their access.
    pub(super) list: Vec<(SubjectKind, Vec<(usize, Access)>)>,
    /// Per system: `(subject, access)`.
    pub(super) of_system: Vec<Vec<(usize, Access)>>,
    /// Per subject: the pairs `(i, j)`, `i < j`, of its accessors that
    /// would conflict on it but whose queries are disjoint
    /// (`access/disjoint.rs`); empty for most.
    pub(super) disjoint: Vec<Vec<(usize, usize)>>,
}

impl Subjects {
    pub(super) fn new(nodes: &[Node<'_>]) -> Subjects {
        let mut index: HashMap<Key, usize> = HashMap::new();
        let mut subjects = Subjects {
            list: Vec::new(),
            of_system: vec![Vec::new(); nodes.len()],
            disjoint: Vec::new(),
        };
        let mut keys = Vec::new();
        let mut registry_subject = None;
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
                .map(|e| (Key::Event(e.key), SubjectKind::Event, e.access));
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
                let add = || {
                    subjects.list.push((kind, Vec::new()));
                    keys.push(key);
                    subjects.list.len() - 1
                };
                // The registry, a key with no payload, is kept out of the
                // map: hashing it compares the bytes a payload would have
                // (uninitialised), which valgrind reports in the C API's
                // runs.
                let s = match key {
                    Key::Registry => *registry_subject.get_or_insert_with(add),
                    _ => *index.entry(key).or_insert_with(add),
                };
                subjects.list[s].1.push((i, access));
                subjects.of_system[i].push((s, access));
            }
        }
        subjects.disjoint = keys
            .iter()
            .zip(&subjects.list)
            .map(|(key, (_, accessors))| match key {
                Key::Component(key) => disjoint_pairs(nodes, *key, accessors),
                _ => Vec::new(),
            })
            .collect();
        subjects
    }
}

/// The pairs of `accessors` of component `key` that one writes and whose
/// borrows are disjoint. Only accessors whose every borrow of `key` has a
/// shape, one of them excluding something, are compared, so lists without
/// filters cost one pass.
fn disjoint_pairs(
    nodes: &[Node<'_>],
    key: ComponentKey,
    accessors: &[(usize, Access)],
) -> Vec<(usize, usize)> {
    let candidates: Vec<(usize, Access, bool)> = accessors
        .iter()
        .filter_map(|&(i, access)| {
            let (shaped, excludes) = nodes[i].access.shaped_on(key);
            shaped.then_some((i, access, excludes))
        })
        .collect();
    if !candidates.iter().any(|&(_, _, excludes)| excludes) {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for (x, &(i, a, ex_i)) in candidates.iter().enumerate() {
        for &(j, b, ex_j) in &candidates[x + 1..] {
            if (ex_i || ex_j)
                && (a == Access::Write || b == Access::Write)
                && nodes[i].access.disjoint_on(nodes[j].access, key)
            {
                pairs.push((i.min(j), i.max(j)));
            }
        }
    }
    pairs
}

/// [`chain`] for a subject some of whose pairs are disjoint: since a path
/// through a disjoint pair would order nothing, every conflicting pair is
/// joined directly, in the order of `accessors` (quadratic in the
/// subject's accessors, which only filtered lists pay).
pub(super) fn chain_subject(
    kind: SubjectKind,
    accessors: Vec<(usize, Access)>,
    disjoint: &[(usize, usize)],
    emit: &mut impl FnMut(usize, usize),
) {
    if disjoint.is_empty() {
        chain(kind, accessors, emit);
        return;
    }
    for (x, &(k, b)) in accessors.iter().enumerate() {
        for &(p, a) in &accessors[..x] {
            let conflict = a == Access::Write || b == Access::Write;
            if conflict && !disjoint.contains(&(p.min(k), p.max(k))) {
                emit(p, k);
            }
        }
    }
}

/// Edges `emit(from, to)` between conflicting accessors of one subject,
/// taken in the order of `accessors`, such that a path of them joins every
/// conflicting pair in that order: a reader follows the last writer, a
/// writer follows the readers since the last writer (or, with none, the
/// last writer). For an event type, where only a writer and a reader
/// conflict, each accessor follows the last run of the other kind.
pub(super) fn chain(
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
pub(super) fn rule(policy: Policy, kind: SubjectKind, a: Access, b: Access) -> (Rule, bool) {
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
/// are [`Rule::Overruled`]; where every rule runs backward but a path runs
/// the pair forward, every rule falls back ([`Rule::CycleFallback`]).
pub(super) fn pair_reasons(
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
                // Run forward against this rule: another rule of the pair
                // ran it forward (and decides), else a path did.
                let rule = match (forward && !runs_forward, rules_forward) {
                    (true, true) => Rule::Overruled,
                    (true, false) => Rule::CycleFallback,
                    (false, _) => rule,
                };
                EdgeReason::Conflict { name, kind, rule }
            })
            .collect(),
    )
}
