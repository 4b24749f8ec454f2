//! What the DAG is made of: the ordering [`Policy`], the [`Rule`] behind a
//! conflict edge, an edge's [`EdgeReason`], and the [`Node`] (and
//! [`SetNode`]) the builder reads of each system.

use std::borrow::Cow;
use std::fmt;

use crate::SystemAccess;
use crate::access::{SubjectKind, short_name};

/// How conflicting accesses that the explicit constraints leave unordered
/// are ordered. Neither policy can form a cycle. Event types are the
/// exception: under either policy an [`EventWriter`](crate::EventWriter)
/// runs before an [`EventReader`](crate::EventReader) of the same type, so
/// a reader sees the events of its own tick, unless the pair is ordered
/// the other way by something else: a constraint, or a conflict on
/// another type whose rule runs the reader first ([`Rule::Overruled`];
/// under registration order, a reader registered before the writer). Then
/// the reader reads those events on its next run, a tick later.
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
    /// The pair also conflicts on another type of this same edge, whose
    /// rule runs it the other way, and that rule decides (the earlier
    /// registered first). For an event type: the reader runs before the
    /// writer and reads these events on its next run, a tick later.
    Overruled,
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
                    Rule::Overruled if kind.is_empty() || kind == "resource " => {
                        "conflict, ordered by the pair's other conflict"
                    }
                    Rule::Overruled => {
                        "reader first, ordered by the pair's other conflict (it reads them a tick later)"
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
