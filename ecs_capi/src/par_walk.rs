//! Parallel chunk walks from C: `ecs_view_par_each_chunk`, the chunks of
//! a running system's view cut into pieces and run on the engine's worker
//! threads.

use std::ffi::c_void;

use crate::boundary::{call, foreign};
use crate::component::ecs_component_id;
use crate::context::ecs_system_ctx;
use crate::engine::ecs_entity;
use crate::status::{Failure, ecs_status};
use crate::view::{ecs_chunk_fn, ecs_view_chunk, open_view};

/// Rows in one piece of `ecs_view_par_each_chunk`: a chunk longer than
/// this is cut into pieces of this many rows, so that a pass over one long
/// chunk (the usual case: pools filled together) still spreads over the
/// threads. 4,096 rows of two 8-byte components is 64 KiB, a piece that
/// pays for its hand-off many times over and fits a core's L2.
pub const ECS_PAR_CHUNK_ROWS: usize = 4096;

/// As `ecs_view_each_chunk`, but the chunks (cut into pieces of at most
/// `ECS_PAR_CHUNK_ROWS` rows; short chunks that follow each other are
/// grouped into tasks of about that many rows) are handed to the engine's
/// worker threads, several at once, in no fixed order; the call returns
/// when every piece is done. `each` must be safe to call from several
/// threads at once with `user_data`: each call may write only its own
/// piece's rows of the components the system declared written, and
/// anything else it writes (a sum, a count) needs its own synchronisation
/// (an atomic or a lock; the pieces carry no index). Inside `each`, use
/// neither the system's `ctx` nor its command buffer: they belong to the
/// thread running the system (`ECS_ERR_WRONG_STATE` from other threads).
/// The rows each call gets, and so the results of such a walk, are the
/// same on any thread count. The pieces run one after the other on the
/// calling thread when the engine has one thread, when the tick runs on
/// the thread that called `ecs_engine_tick` (the engine does so for cheap
/// ticks), or when the view makes a single task. The walk first lists its
/// pieces (about 40 bytes each): over a view whose pools hold their
/// entities in different orders (thousands of one-row chunks) that list
/// costs more than it saves, and `ecs_view_each_chunk` is faster (200,000
/// one-row chunks: about 9 ms serial against 24 to 39 ms here, on 1 to 4
/// threads of a 2-core machine). A worker waiting for the
/// last pieces may meanwhile run another system's body on its thread:
/// state kept in C thread-locals across the call is not safe.
///
/// # Errors
///
/// As `ecs_view_each`.
///
/// # Safety
///
/// As `ecs_view_each`, and `each` is sound to call concurrently from any
/// thread with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_view_par_each_chunk(
    ctx: *mut ecs_system_ctx,
    ids: *const ecs_component_id,
    ids_len: usize,
    each: ecs_chunk_fn,
    user_data: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_view_par_each_chunk";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx` and `ids`.
        let mut view = unsafe { open_view(ctx, ids, ids_len, F) }?;
        let walk = Walk::of(&mut view);
        let user_data = crate::SendPtr(user_data);
        let run = |range: std::ops::Range<usize>| {
            for piece in walk.pieces(range) {
                let c = ecs_view_chunk {
                    len: piece.len,
                    entities: piece.entities,
                    columns: walk.columns(piece),
                };
                // SAFETY: the C caller's promise on `each` (callable from
                // any thread at once); the piece's rows lie in the view's
                // columns, locked while `view` lives (until this function
                // returns), and no two pieces share a row.
                foreign(|| unsafe { each(&c, user_data.get()) });
            }
        };
        if walk.tasks.len() <= 1 {
            run(0..walk.pieces.len());
        } else {
            ::ecs_engine::par_for_each(walk.tasks.iter(), |task| run(task.clone()));
        }
        drop(view);
        Ok(())
    })
}

/// One piece of a parallel chunk walk: `len` rows from `entities`, and
/// from the column pointers at `column` in [`Walk::columns`].
struct Piece {
    len: usize,
    entities: *const ecs_entity,
    column: usize,
}

/// A view's pieces, their column pointers (one run of the view's terms
/// per piece), and the tasks: runs of consecutive pieces of about
/// `ECS_PAR_CHUNK_ROWS` rows together.
struct Walk {
    pieces: Vec<Piece>,
    columns: Vec<*mut c_void>,
    tasks: Vec<std::ops::Range<usize>>,
}

// SAFETY: a walk points into the entity array and columns of a raw view
// that stays alive and locked until every piece is done
// (`ecs_view_par_each_chunk` drops it after the pieces ran); the pieces'
// rows are disjoint, and what a callback does with them is the C
// caller's promise (only its own rows, from any thread).
unsafe impl Sync for Walk {}

impl Walk {
    /// The pieces in `range`.
    fn pieces(&self, range: std::ops::Range<usize>) -> &[Piece] {
        &self.pieces[range]
    }

    /// `piece`'s column pointers.
    fn columns(&self, piece: &Piece) -> *const *mut c_void {
        self.columns[piece.column..].as_ptr()
    }

    /// The pieces of `view`'s chunks, and their tasks. Where the cuts fall
    /// depends on the view alone, never on the threads.
    fn of(view: &mut ::ecs_engine::RawView<'_>) -> Walk {
        let strides = view.strides().to_vec();
        let mut walk = Walk {
            pieces: Vec::new(),
            columns: Vec::new(),
            tasks: Vec::new(),
        };
        view.each_chunk(|chunk| {
            let entities = ::ecs_engine::Entity::slice_as_bits(chunk.entities());
            for first in (0..chunk.len()).step_by(ECS_PAR_CHUNK_ROWS) {
                let column = walk.columns.len();
                walk.columns.extend(
                    chunk
                        .columns()
                        .iter()
                        .zip(&strides)
                        .map(|(&base, &stride)| base.wrapping_add(first * stride).cast::<c_void>()),
                );
                walk.pieces.push(Piece {
                    len: ECS_PAR_CHUNK_ROWS.min(chunk.len() - first),
                    entities: entities[first..].as_ptr(),
                    column,
                });
            }
        });
        let mut start = 0;
        let mut rows = 0;
        for (k, piece) in walk.pieces.iter().enumerate() {
            rows += piece.len;
            if rows >= ECS_PAR_CHUNK_ROWS {
                walk.tasks.push(start..k + 1);
                (start, rows) = (k + 1, 0);
            }
        }
        if start < walk.pieces.len() {
            walk.tasks.push(start..walk.pieces.len());
        }
        walk
    }
}
