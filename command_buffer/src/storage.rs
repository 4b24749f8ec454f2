//! Packed command storage: one typed FIFO per command payload type, plus a
//! run-length encoded order list.
//!
//! # Layout
//!
//! Every command is a small value of a concrete type (`Spawn<B>`,
//! `Insert<T>`, `Despawn`, ...; see the `command` module). The commands of
//! one type go, by value, into that type's own `VecDeque`, found by
//! `TypeId` (a one-entry cache for the common case of the same command many
//! times in a row, then a hash map). The order list records, for each run of
//! consecutive commands that went to the same queue, the queue and the run
//! length. So recording costs no heap allocation per command, only the
//! amortized growth of the queues, and a buffer that records the same mix
//! every tick stops allocating after warm-up.
//!
//! # Invariants
//!
//! - Queue `i` holds exactly as many commands as the runs naming `i` add up
//!   to, and `len` is the sum over all runs.
//! - Apply walks the runs in order and pops each queue from the front, so
//!   commands run in recording order, each exactly once; whatever is left
//!   after an error or a panic is dropped by `discard`.
//! - The one exception to recording order: consecutive spawn runs of
//!   different bundle types (a parent's spawn, its child's, the next
//!   parent's, ...), whose handles are all still reserved, are applied
//!   grouped by bundle type, one batch per type. Each spawn still lands on
//!   the handle it was given and no spawn of such a group can be skipped,
//!   so handles, components, counts and reports are as in recording order;
//!   only the order of those entities inside a pool that two of the
//!   bundle types share differs (a view's visiting order), and it depends
//!   only on what was recorded, never on threads.
//! - Queues are never removed, and emptying one keeps its capacity.

use ecs_engine::TypeIdMap;
use std::any::{Any, TypeId};
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;

use ecs_engine::{EcsError, Entity};

use crate::apply::ApplyCtx;
use crate::command::{Command, Despawn};
use crate::{CommandKind, SkippedCommand};

/// The commands of one type, oldest first, behind a type-erased interface.
trait ErasedQueue: Any + Send {
    /// Applies the oldest `len` commands.
    fn apply_run(&mut self, len: u32, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand>;
    /// `true` when the queue holds spawn commands that can be grouped
    /// ([`Command::groups_spawns`]).
    fn is_spawn(&self) -> bool;
    /// [`Command::apply_spawns`] on this queue.
    fn apply_spawns(
        &mut self,
        handles: &[Entity],
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), (usize, EcsError)>;
    /// Drops every command left.
    fn discard(&mut self);
}

struct Queue<C> {
    items: VecDeque<C>,
}

impl<C> Default for Queue<C> {
    fn default() -> Self {
        Queue {
            items: VecDeque::new(),
        }
    }
}

impl<C: Command> ErasedQueue for Queue<C> {
    fn apply_run(&mut self, len: u32, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        C::apply_run(&mut self.items, len as usize, ctx)
    }

    fn is_spawn(&self) -> bool {
        C::groups_spawns()
    }

    fn apply_spawns(
        &mut self,
        handles: &[Entity],
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), (usize, EcsError)> {
        C::apply_spawns(&mut self.items, handles, ctx)
    }

    fn discard(&mut self) {
        self.items.clear();
    }
}

/// Consecutive commands that went to the same queue.
#[derive(Debug, Clone, Copy)]
struct Run {
    queue: u32,
    len: u32,
}

/// The run queue number of the despawn queue, which has its own field.
const DESPAWNS: u32 = u32::MAX;

/// The most bundle types one group of interleaved spawn runs applies
/// together (see [`Queues::apply_spawn_group`]); a longer mix is split
/// into groups.
const GROUP_TYPES: usize = 8;

/// Every queue of a buffer and the order of its commands.
pub(crate) struct Queues {
    /// Despawns, the one non-generic command, skip the type lookup.
    despawns: Queue<Despawn>,
    queues: Vec<Box<dyn ErasedQueue>>,
    lookup: TypeIdMap<u32>,
    /// The queue of the last push, checked before the map.
    last: u32,
    /// The queue of the last push of another type than `last`, checked
    /// next: two command types recorded in turn (a parent's spawn and its
    /// child's) skip the map.
    previous: u32,
    order: Vec<Run>,
    len: usize,
    /// The handles of one bundle type's spawns in a group (see
    /// [`apply_spawn_group`](Self::apply_spawn_group)); kept for its
    /// capacity.
    group_handles: Vec<Entity>,
}

impl std::fmt::Debug for Queues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queues")
            .field("queues", &self.queues.len())
            .field("runs", &self.order.len())
            .field("len", &self.len)
            .finish()
    }
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            despawns: Queue::default(),
            queues: Vec::new(),
            lookup: TypeIdMap::default(),
            last: 0,
            previous: 0,
            order: Vec::new(),
            len: 0,
            group_handles: Vec::new(),
        }
    }

    /// Number of commands recorded.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `command` to its type's queue and to the order. Inlined into
    /// the recording method, so a loop of pushes keeps `self` in registers;
    /// the common case of a run (the same command type as the last push)
    /// costs one type check.
    #[inline(always)]
    pub(crate) fn push<C: Command>(&mut self, command: C) {
        if let Some(queue) = self.queues.get_mut(self.last as usize).and_then(|queue| {
            let any: &mut dyn Any = queue.as_mut();
            any.downcast_mut::<Queue<C>>()
        }) {
            queue.items.push_back(command);
        } else if let Some(queue) = self
            .queues
            .get_mut(self.previous as usize)
            .and_then(|queue| {
                let any: &mut dyn Any = queue.as_mut();
                any.downcast_mut::<Queue<C>>()
            })
        {
            queue.items.push_back(command);
            std::mem::swap(&mut self.last, &mut self.previous);
        } else {
            self.push_new_type(command);
        }
        self.extend_order(self.last);
    }

    /// Pushes `command` when the last push was of another type: looks its
    /// queue up (creating it on first use) and makes it the last one.
    #[cold]
    #[inline(never)]
    fn push_new_type<C: Command>(&mut self, command: C) {
        let key = TypeId::of::<C>();
        let queue = match self.lookup.get(&key) {
            Some(&queue) => queue,
            None => {
                let queue = u32::try_from(self.queues.len())
                    .ok()
                    .filter(|&queue| queue != DESPAWNS)
                    .expect("fewer than 2^32 - 1 command types");
                self.queues.push(Box::new(Queue::<C>::default()));
                self.lookup.insert(key, queue);
                queue
            }
        };
        if queue != self.last {
            self.previous = self.last;
            self.last = queue;
        }
        let any: &mut dyn Any = self.queues[queue as usize].as_mut();
        any.downcast_mut::<Queue<C>>()
            .expect("a queue's type matches its key")
            .items
            .push_back(command);
    }

    /// Appends a despawn, without the type lookup.
    #[inline(always)]
    pub(crate) fn push_despawn(&mut self, command: Despawn) {
        self.despawns.items.push_back(command);
        self.extend_order(DESPAWNS);
    }

    #[inline(always)]
    fn extend_order(&mut self, queue: u32) {
        match self.order.last_mut() {
            Some(run) if run.queue == queue && run.len < u32::MAX => run.len += 1,
            _ => self.order.push(Run { queue, len: 1 }),
        }
        self.len += 1;
    }

    /// Applies every command in recording order; stops at the first error
    /// (strict mode), leaving the rest for [`discard`](Self::discard).
    pub(crate) fn apply(&mut self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
        let mut at = 0;
        while at < self.order.len() {
            let run = self.order[at];
            if run.queue == DESPAWNS {
                self.despawns.apply_run(run.len, ctx)?;
                at += 1;
                continue;
            }
            if self.queues[run.queue as usize].is_spawn() {
                let end = self.spawn_group_end(at);
                if end - at > 1 && self.apply_spawn_group(at, end, ctx) {
                    at = end;
                    continue;
                }
            }
            self.queues[run.queue as usize].apply_run(run.len, ctx)?;
            at += 1;
        }
        Ok(())
    }

    /// The end of the group of spawn runs that starts at run `start` (a
    /// spawn run): the runs after it while they are spawn runs, of at most
    /// [`GROUP_TYPES`] bundle types.
    fn spawn_group_end(&self, start: usize) -> usize {
        let mut types = [DESPAWNS; GROUP_TYPES];
        let mut distinct = 0;
        let mut end = start;
        for run in &self.order[start..] {
            if run.queue == DESPAWNS || !self.queues[run.queue as usize].is_spawn() {
                break;
            }
            if !types[..distinct].contains(&run.queue) {
                if distinct == GROUP_TYPES {
                    break;
                }
                types[distinct] = run.queue;
                distinct += 1;
            }
            end += 1;
        }
        end
    }

    /// Applies the spawn runs `start..end` grouped by bundle type: each
    /// type's spawns as one batch, in the order the types first appear.
    /// Returns `false`, having applied nothing, unless every one of these
    /// spawns has a handle that is still reserved (no placeholder, nothing
    /// cancelled): then no spawn of the group can be skipped, and each
    /// spawn puts its bundle on its own reserved entity, so the grouping
    /// changes no handle, no component, no count and no report; it only
    /// changes the order of the group's entities inside a pool that two of
    /// its bundle types share (the one a view visits them in), an order
    /// that depends only on what was recorded, never on threads.
    /// An observed world never groups (its spawns fire hooks in order).
    fn apply_spawn_group(&mut self, start: usize, end: usize, ctx: &mut ApplyCtx<'_>) -> bool {
        if ctx.observing {
            return false;
        }
        let runs = &self.order[start..end];
        let total: usize = runs.iter().map(|run| run.len as usize).sum();
        let reserved = ctx.next_reserved_spawns(total);
        let allocator = ctx.registry.entities();
        if reserved.len() < total || !reserved.iter().all(|&e| allocator.is_reserved(e)) {
            return false;
        }
        for (i, first) in runs.iter().enumerate() {
            // Each type once, at its first run.
            if runs[..i].iter().any(|run| run.queue == first.queue) {
                continue;
            }
            self.group_handles.clear();
            let mut offset = 0;
            for run in runs {
                let len = run.len as usize;
                if run.queue == first.queue {
                    self.group_handles
                        .extend_from_slice(&reserved[offset..offset + len]);
                }
                offset += len;
            }
            let queue = &mut self.queues[first.queue as usize];
            if let Err((k, reason)) = queue.apply_spawns(&self.group_handles, ctx) {
                // Checked above: every handle is reserved and activated
                // once, so a refusal is a broken invariant.
                unreachable!(
                    "spawn of {:?} refused inside a checked group: {reason}",
                    self.group_handles[k]
                );
            }
        }
        ctx.applied_run(CommandKind::Spawn, total);
        true
    }

    /// Drops every command not yet applied; keeps every capacity.
    ///
    /// # Panics
    ///
    /// When a command's payload panics in `Drop`: every queue is emptied
    /// first (each payload dropped once, nothing left for a later apply),
    /// then the first panic resumes.
    pub(crate) fn discard(&mut self) {
        if self.len == 0 {
            return;
        }
        self.order.clear();
        self.len = 0;
        // A despawn holds only a handle: its drop cannot panic.
        self.despawns.discard();
        let mut first = None;
        for queue in &mut self.queues {
            let caught = std::panic::catch_unwind(AssertUnwindSafe(|| queue.discard()));
            if let (Err(payload), None) = (caught, &first) {
                first = Some(payload);
            }
        }
        if let Some(payload) = first {
            std::panic::resume_unwind(payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Marker;

    impl Command for Marker {
        fn apply(self, _ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
            Ok(())
        }
    }

    struct Other;

    impl Command for Other {
        fn apply(self, _ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand> {
            Ok(())
        }
    }

    #[test]
    fn runs_are_run_length_encoded() {
        let mut queues = Queues::new();
        for _ in 0..3 {
            queues.push(Marker);
        }
        queues.push(Other);
        queues.push(Marker);
        let runs: Vec<(u32, u32)> = queues.order.iter().map(|r| (r.queue, r.len)).collect();
        assert_eq!(runs, [(0, 3), (1, 1), (0, 1)]);
        assert_eq!((queues.len(), queues.queues.len()), (5, 2));
        queues.discard();
        assert_eq!((queues.len(), queues.order.len()), (0, 0));
    }
}
