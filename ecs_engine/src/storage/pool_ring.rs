//! A ring's undos ([`StateRing`](crate::StateRing)): how one save of a
//! registry into the ring's mirror changes each pool's copy
//! ([`Pools::save_frame`]), what it keeps to undo that ([`PoolUndo`]),
//! and the undo ([`Pools::undo_frame`]).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use parking_lot::Mutex;
use rayon::prelude::*;

use super::pool_copy::{Apart, PoolCopy, PoolSync, SavedPool, typed};
use super::pools::{ErasedPool, PoolSlot, Pools, typed_mut};
use crate::storage::sparse_set::{CopySide, DeltaUndo};
use crate::{Component, ComponentInfo, StateError};

/// What a delta save into a ring's mirror did to one copy.
pub(super) enum DeltaSaved {
    /// Nothing differed.
    Unchanged,
    /// What undoes it (a `DeltaUndo<T>`), and its heap bytes.
    Undo(Box<dyn Any + Send + Sync>, usize),
}

pub(super) fn save_delta_typed<T: Component + Clone>(
    mirror: &mut dyn ErasedPool,
    src: &dyn ErasedPool,
    since: u32,
    now: u32,
    moved: bool,
) -> Option<DeltaSaved> {
    let mirror = typed_mut::<T>(mirror);
    let undo = mirror.save_delta(typed::<T>(src), since, now, moved)?;
    Some(if undo.is_empty(mirror.len()) {
        DeltaSaved::Unchanged
    } else {
        let bytes = undo.heap_bytes();
        DeltaSaved::Undo(Box::new(undo), bytes)
    })
}

pub(super) fn undo_delta_typed<T: Component + Clone>(
    mirror: &mut dyn ErasedPool,
    undo: Box<dyn Any + Send + Sync>,
) {
    let undo = *undo
        .downcast::<DeltaUndo<T>>()
        .expect("an undo holds the values of its pool's type");
    typed_mut::<T>(mirror).undo_delta(undo);
}

/// One pool's part of [`Pools::save_frame`]: the pool, its copy
/// functions, its copy in the mirror (`None` when the mirror has none
/// yet) and the spare copies of it.
struct FrameTask<'a> {
    index: usize,
    slot: &'a PoolSlot,
    copy: PoolCopy,
    old: Option<&'a mut SavedPool>,
    spares: &'a mut Vec<SavedPool>,
}

/// What one [`FrameTask`] did.
enum FrameSaved {
    /// A first copy of a pool the mirror did not hold, to append.
    New(SavedPool),
    /// The mirror's copy was brought up to date; this undoes it.
    Undo(PoolUndo),
    /// The mirror's copy was already equal.
    Unchanged,
}

impl FrameTask<'_> {
    /// Brings the mirror's copy of the pool up to date (see
    /// [`Pools::save_frame`]).
    fn run(self, now: u32, since: Option<u32>) -> FrameSaved {
        let FrameTask {
            index,
            slot,
            copy,
            old,
            spares,
        } = self;
        let pool = slot.peek();
        let mut fresh = || match spares.pop() {
            Some(mut spare) if spare.info == slot.info => {
                let synced = spare.synced.get_mut();
                copy.make_equal(
                    &mut *spare.pool,
                    pool,
                    Apart::of(*synced, pool, None),
                    (now, now),
                    CopySide::Into,
                );
                *synced = Some(PoolSync::of(pool));
                spare
            }
            _ => SavedPool {
                info: slot.info.clone(),
                copy,
                pool: (copy.copy)(pool, false),
                synced: Mutex::new(Some(PoolSync::of(pool))),
            },
        };
        let Some(old) = old else {
            return FrameSaved::New(fresh());
        };
        let synced = old.synced.get_mut();
        let apart = Apart::of(*synced, pool, since);
        if old.info == slot.info
            && let (Apart::Delta(since) | Apart::Moved(since), Some(save_delta)) =
                (apart, copy.save_delta)
            && let Some(saved) = save_delta(
                &mut *old.pool,
                pool,
                since,
                now,
                matches!(apart, Apart::Moved(_)),
            )
        {
            let before = synced.replace(PoolSync::of(pool));
            return match saved {
                DeltaSaved::Undo(undo, bytes) => FrameSaved::Undo(PoolUndo::Delta {
                    index,
                    undo,
                    bytes,
                    synced: before,
                }),
                DeltaSaved::Unchanged => FrameSaved::Unchanged,
            };
        }
        let pool = std::mem::replace(old, fresh());
        FrameSaved::Undo(PoolUndo::Whole { index, pool })
    }
}

/// What a ring's save changed in one pool of its mirror, to undo it.
pub(crate) enum PoolUndo {
    /// What a delta overwrote (a `DeltaUndo<T>`), its heap bytes, and
    /// what the copy knew of the registry pool before.
    Delta {
        index: usize,
        undo: Box<dyn Any + Send + Sync>,
        bytes: usize,
        synced: Option<PoolSync>,
    },
    /// The whole copy the save replaced.
    Whole { index: usize, pool: SavedPool },
}

impl PoolUndo {
    /// The whole copy an undo holds, with its pool's index, for reuse
    /// once the undo is dropped.
    fn into_whole(self) -> Option<(usize, SavedPool)> {
        match self {
            PoolUndo::Whole { index, pool } => Some((index, pool)),
            PoolUndo::Delta { .. } => None,
        }
    }

    /// Heap bytes the undo holds.
    fn heap_bytes(&self) -> usize {
        match self {
            PoolUndo::Delta { bytes, .. } => *bytes,
            PoolUndo::Whole { pool, .. } => pool.pool.heap_bytes(),
        }
    }
}

/// What one ring save did to the mirror's pool copies, to undo it: the
/// steps in pool order, how many copies the mirror held after dropping
/// those of pools the saving registry lacks (a ring shared by registries
/// with more and fewer pools), and those dropped copies.
pub(crate) struct FramePools {
    steps: Vec<PoolUndo>,
    before: usize,
    cut: Vec<SavedPool>,
}

impl FramePools {
    /// The whole copies the undo holds, with their pools' indices, for
    /// reuse once the undo is dropped.
    pub(crate) fn into_wholes(self) -> impl Iterator<Item = (usize, SavedPool)> {
        self.steps.into_iter().filter_map(PoolUndo::into_whole)
    }

    /// Heap bytes the undo holds (the copies it dropped not counted).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.steps.iter().map(PoolUndo::heap_bytes).sum()
    }

    /// Turns `infos`, the component of each copy in the mirror after this
    /// save, into those of the mirror before it (what
    /// [`Pools::undo_frame`] would leave), changing nothing else.
    pub(crate) fn infos_before<'a>(&'a self, infos: &mut Vec<&'a ComponentInfo>) {
        for step in self.steps.iter().rev() {
            if let PoolUndo::Whole { index, pool } = step {
                infos[*index] = &pool.info;
            }
        }
        infos.truncate(self.before);
        infos.extend(self.cut.iter().map(|copy| &copy.info));
    }
}

impl Pools {
    /// Makes `mirror` (a copy of every pool, as [`save_into`](Self::save_into)
    /// makes) equal to the pools again, and returns what undoes that: what
    /// it replaces, the entries of the dense positions that differ (written
    /// after `since`, or holding another entity) where the ticks tell, the
    /// whole copy of a pool otherwise (made in
    /// the memory of a copy of that pool in `spares[index]`, from an undo
    /// the ring dropped, when there is one; `spares` grows to one list
    /// per pool). Copies of pools registered since are appended; copies
    /// of pools the registry lacks are dropped (kept by the undo).
    ///
    /// Called on a rayon pool's thread (outside [`crate::run_serial`]), it
    /// copies the pools in parallel on that pool; elsewhere one after
    /// another. The outcome is the same: undo steps are kept in pool
    /// order. A `Clone` that panics leaves `mirror` as it was (the copies
    /// already brought up to date are undone), and the panic resumes.
    ///
    /// # Errors
    ///
    /// [`StateError::NotClonable`] when a pool has no copy function;
    /// `mirror` is unchanged then.
    pub(crate) fn save_frame(
        &self,
        mirror: &mut Vec<SavedPool>,
        (now, since): (u32, Option<u32>),
        spares: &mut Vec<Vec<SavedPool>>,
    ) -> Result<FramePools, StateError> {
        let copies = self.copies()?;
        let cut: Vec<SavedPool> = mirror.drain(self.slots.len().min(mirror.len())..).collect();
        let before = mirror.len();
        spares.resize_with(self.slots.len(), Vec::new);
        let mut olds = mirror.iter_mut();
        let tasks: Vec<FrameTask<'_>> = self
            .slots
            .iter()
            .zip(copies)
            .zip(spares.iter_mut())
            .enumerate()
            .map(|(index, ((slot, copy), spares))| FrameTask {
                index,
                slot,
                copy,
                old: olds.next(),
                spares,
            })
            .collect();
        // A task whose clone panics leaves its own copy as it was.
        let run = |task: FrameTask<'_>| catch_unwind(AssertUnwindSafe(|| task.run(now, since)));
        let saved: Vec<std::thread::Result<FrameSaved>> =
            if rayon::current_thread_index().is_some() && crate::walk_threads() > 1 {
                tasks.into_par_iter().map(run).collect()
            } else {
                tasks.into_iter().map(run).collect()
            };
        let mut frame = FramePools {
            steps: Vec::new(),
            before,
            cut,
        };
        let mut fresh = Vec::new();
        let mut panicked = None;
        for outcome in saved {
            match outcome {
                Ok(FrameSaved::New(pool)) => fresh.push(pool),
                Ok(FrameSaved::Undo(step)) => frame.steps.push(step),
                Ok(FrameSaved::Unchanged) => {}
                Err(payload) => {
                    panicked.get_or_insert(payload);
                }
            }
        }
        if let Some(payload) = panicked {
            Self::undo_frame(mirror, frame, spares);
            resume_unwind(payload);
        }
        mirror.extend(fresh);
        Ok(frame)
    }

    /// Undoes what [`save_frame`](Self::save_frame) did to `mirror`, last
    /// first: drops the copies it appended and puts back those it
    /// dropped.
    /// A copy put back whole keeps what it knows of the registry pool at
    /// its own save, and an undone delta puts back what the copy knew
    /// before it (so a restore from it copies only what changed since,
    /// where the pool allows); a copy replaced whole becomes a spare of
    /// its index.
    pub(crate) fn undo_frame(
        mirror: &mut Vec<SavedPool>,
        undo: FramePools,
        spares: &mut [Vec<SavedPool>],
    ) {
        for step in undo.steps.into_iter().rev() {
            match step {
                PoolUndo::Delta {
                    index,
                    undo,
                    synced,
                    ..
                } => {
                    let copy = &mut mirror[index];
                    let undo_delta = copy.copy.undo_delta.expect("a delta has an undo");
                    undo_delta(&mut *copy.pool, undo);
                    *copy.synced.get_mut() = synced;
                }
                PoolUndo::Whole { index, pool } => {
                    let newer = std::mem::replace(&mut mirror[index], pool);
                    if let Some(spare) = spares.get_mut(index) {
                        spare.push(newer);
                    }
                }
            }
        }
        mirror.truncate(undo.before);
        mirror.extend(undo.cut);
    }
}
