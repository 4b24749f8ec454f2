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
//! - Queues are never removed, and emptying one keeps its capacity.

use ecs_engine::TypeIdMap;
use std::any::{Any, TypeId};
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;

use crate::SkippedCommand;
use crate::apply::ApplyCtx;
use crate::command::Despawn;

/// One recorded command, applied by value.
pub(crate) trait Command: Send + 'static {
    /// Runs the command against `ctx`'s registry and counts its outcome.
    ///
    /// # Errors
    ///
    /// In strict mode, when the command was skipped.
    fn apply(self, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand>;

    /// Applies the oldest `len` commands of `queue`, a run of consecutive
    /// commands of this type, in order. The default applies them one by
    /// one; the hot commands override it with a loop that hoists what the
    /// run's commands share. Stops at the first error (strict mode); the
    /// rest of the run is then dropped.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    #[inline]
    fn apply_run(
        queue: &mut VecDeque<Self>,
        len: usize,
        ctx: &mut ApplyCtx<'_>,
    ) -> Result<(), SkippedCommand>
    where
        Self: Sized,
    {
        for command in queue.drain(..len) {
            command.apply(ctx)?;
        }
        Ok(())
    }
}

/// The commands of one type, oldest first, behind a type-erased interface.
trait ErasedQueue: Any + Send {
    /// Applies the oldest `len` commands.
    fn apply_run(&mut self, len: u32, ctx: &mut ApplyCtx<'_>) -> Result<(), SkippedCommand>;
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

/// Every queue of a buffer and the order of its commands.
pub(crate) struct Queues {
    /// Despawns, the one non-generic command, skip the type lookup.
    despawns: Queue<Despawn>,
    queues: Vec<Box<dyn ErasedQueue>>,
    lookup: TypeIdMap<u32>,
    /// The queue of the last push, checked before the map.
    last: u32,
    order: Vec<Run>,
    len: usize,
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
            order: Vec::new(),
            len: 0,
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
        self.last = queue;
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
        for run in &self.order {
            if run.queue == DESPAWNS {
                self.despawns.apply_run(run.len, ctx)?;
            } else {
                self.queues[run.queue as usize].apply_run(run.len, ctx)?;
            }
        }
        Ok(())
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
