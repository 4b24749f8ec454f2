//! The event queue for C: a thread-safe FIFO of fixed-size byte events.

use std::ffi::c_void;
use std::time::Duration;

use event_queue::{EventQueue, PopTimeoutError, TryPushError};

use crate::boundary::{arg, call, call_value, check_struct_size, write_out};
use crate::status::{
    ECS_ERR_LIMIT, ECS_ERR_QUEUE_CLOSED, ECS_ERR_QUEUE_EMPTY, ECS_ERR_QUEUE_FULL, ECS_ERR_TIMEOUT,
    Failure, ecs_status,
};

/// A handle to a queue of fixed-size events, for any thread. Several
/// handles (from `ecs_queue_clone`) share one queue; each is destroyed
/// once. Opaque to C.
#[derive(Debug)]
pub struct ecs_queue {
    queue: EventQueue<Box<[u8]>>,
    event_size: usize,
}

/// A queue to create.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_queue_desc {
    /// `sizeof(ecs_queue_desc)`.
    pub struct_size: u32,
    /// Bytes per event, at least 1.
    pub event_size: usize,
    /// Most events held at once; 0 for no limit.
    pub capacity: usize,
}

const QUEUE_DESC_V1: usize = std::mem::size_of::<ecs_queue_desc>();

impl ecs_queue {
    /// A copy of the event at `event`.
    ///
    /// # Safety
    ///
    /// `event` is valid for reads of `event_size` bytes.
    unsafe fn copy_in(&self, event: *const c_void, function: &str) -> Result<Box<[u8]>, Failure> {
        if event.is_null() {
            return Err(Failure::null(function, "event"));
        }
        // The room first: a size the allocator cannot give is refused
        // before anything is read from `event`.
        let mut copy = Vec::new();
        copy.try_reserve_exact(self.event_size).map_err(|_| {
            Failure::new(
                ECS_ERR_LIMIT,
                format!(
                    "{function}: the allocator refused {} bytes for a copy of the event",
                    self.event_size
                ),
            )
        })?;
        // SAFETY: the caller's promise: `event` is valid for reads of
        // `event_size` bytes.
        copy.extend_from_slice(unsafe {
            std::slice::from_raw_parts(event.cast::<u8>(), self.event_size)
        });
        Ok(copy.into_boxed_slice())
    }

    /// Copies `event` to `out`.
    ///
    /// # Safety
    ///
    /// `out` is valid for writes of `event_size` bytes.
    unsafe fn copy_out(&self, event: &[u8], out: *mut c_void) {
        // SAFETY: the caller's promise; `event` has `event_size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(event.as_ptr(), out.cast::<u8>(), event.len()) };
    }

    fn closed(function: &str) -> Failure {
        Failure::new(
            ECS_ERR_QUEUE_CLOSED,
            format!("{function}: the queue is closed"),
        )
    }
}

/// Creates a queue and writes its first handle to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_INVALID_ARGUMENT` for a small
/// `struct_size`, or an `event_size` of 0 or above `PTRDIFF_MAX`.
///
/// # Safety
///
/// Pointers are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_create(
    desc: *const ecs_queue_desc,
    out: *mut *mut ecs_queue,
) -> ecs_status {
    const F: &str = "ecs_queue_create";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let desc = unsafe { arg(desc, F, "desc") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        check_struct_size(desc.struct_size, QUEUE_DESC_V1, F, "ecs_queue_desc")?;
        if desc.event_size == 0 {
            return Err(Failure::invalid(
                F,
                "`event_size` is 0; events need at least 1 byte",
            ));
        }
        if desc.event_size > isize::MAX.unsigned_abs() {
            return Err(Failure::invalid(
                F,
                format!(
                    "`event_size` is {}, above PTRDIFF_MAX (the most one allocation holds)",
                    desc.event_size
                ),
            ));
        }
        let queue = match desc.capacity {
            0 => EventQueue::new(),
            capacity => EventQueue::bounded(capacity),
        };
        let handle = Box::new(ecs_queue {
            queue,
            event_size: desc.event_size,
        });
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, Box::into_raw(handle), F, "out") }
    })
}

/// Writes another handle to the same queue to `*out` (for another thread).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// `queue` is NULL or a live handle; `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_clone(
    queue: *const ecs_queue,
    out: *mut *mut ecs_queue,
) -> ecs_status {
    const F: &str = "ecs_queue_clone";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let handle = Box::new(ecs_queue {
            queue: queue.queue.clone(),
            event_size: queue.event_size,
        });
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, Box::into_raw(handle), F, "out") }
    })
}

/// Destroys one handle; the queue and its events go with the last one.
/// Does not close the queue. NULL is a no-op.
///
/// # Safety
///
/// `queue` is NULL or a live handle, used by no other thread; invalid
/// afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_destroy(queue: *mut ecs_queue) {
    call_value("ecs_queue_destroy", (), || {
        if !queue.is_null() {
            // SAFETY: made by `Box::into_raw` here and not freed yet.
            drop(unsafe { Box::from_raw(queue) });
        }
    });
}

/// Appends a copy of `event` (`event_size` bytes). Blocks while a bounded
/// queue is full.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_QUEUE_CLOSED` (the event is not kept);
/// `ECS_ERR_LIMIT` when the allocator cannot give the room for a copy
/// (nothing is read from `event` then).
///
/// # Safety
///
/// `queue` is NULL or a live handle; `event` is NULL or valid for reads of
/// `event_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_push(
    queue: *const ecs_queue,
    event: *const c_void,
) -> ecs_status {
    const F: &str = "ecs_queue_push";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        // SAFETY: `event` is NULL or valid for `event_size` reads, by the caller's promise.
        let event = unsafe { queue.copy_in(event, F) }?;
        queue.queue.push(event).map_err(|_| ecs_queue::closed(F))
    })
}

/// Appends a copy of `event` without blocking.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_QUEUE_FULL` when a bounded queue is
/// full; `ECS_ERR_QUEUE_CLOSED`; `ECS_ERR_LIMIT` as for `ecs_queue_push`.
///
/// # Safety
///
/// As `ecs_queue_push`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_try_push(
    queue: *const ecs_queue,
    event: *const c_void,
) -> ecs_status {
    const F: &str = "ecs_queue_try_push";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        // SAFETY: `event` is NULL or valid for `event_size` reads, by the caller's promise.
        let event = unsafe { queue.copy_in(event, F) }?;
        queue.queue.try_push(event).map_err(|error| match error {
            TryPushError::Full(_) => Failure::new(
                ECS_ERR_QUEUE_FULL,
                format!("{F}: the queue is full ({} events)", queue.queue.len()),
            ),
            TryPushError::Closed(_) => ecs_queue::closed(F),
            TryPushError::Busy(_) => Failure::new(
                ECS_ERR_QUEUE_FULL,
                format!("{F}: the queue is busy (its lock is held by another thread); try again"),
            ),
            // A refusal a later event queue adds: the event is not kept.
            other => Failure::new(ECS_ERR_QUEUE_CLOSED, format!("{F}: {other}")),
        })
    })
}

/// Takes the oldest event into `out` (`event_size` bytes) without blocking.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_QUEUE_EMPTY`; `ECS_ERR_QUEUE_CLOSED`
/// when the queue is closed and drained.
///
/// # Safety
///
/// `queue` is NULL or a live handle; `out` is NULL or valid for writes of
/// `event_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_try_pop(
    queue: *const ecs_queue,
    out: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_queue_try_pop";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        match queue.queue.try_pop() {
            Some(event) => {
                // SAFETY: `out` is non-null and valid for `event_size` writes, by the caller's promise.
                unsafe { queue.copy_out(&event, out) };
                Ok(())
            }
            None if queue.queue.is_closed() && queue.queue.is_empty() => Err(ecs_queue::closed(F)),
            None => Err(Failure::new(
                ECS_ERR_QUEUE_EMPTY,
                format!("{F}: the queue is empty"),
            )),
        }
    })
}

/// Takes the oldest event into `out`, waiting up to `timeout_ms`
/// milliseconds for one (asleep, using no CPU).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_TIMEOUT`; `ECS_ERR_QUEUE_CLOSED` when
/// the queue is closed and drained.
///
/// # Safety
///
/// As `ecs_queue_try_pop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_pop_timeout(
    queue: *const ecs_queue,
    out: *mut c_void,
    timeout_ms: u64,
) -> ecs_status {
    const F: &str = "ecs_queue_pop_timeout";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        match queue.queue.pop_timeout(Duration::from_millis(timeout_ms)) {
            Ok(event) => {
                // SAFETY: `out` is non-null and valid for `event_size` writes, by the caller's promise.
                unsafe { queue.copy_out(&event, out) };
                Ok(())
            }
            Err(PopTimeoutError::Timeout(_)) => Err(Failure::new(
                ECS_ERR_TIMEOUT,
                format!("{F}: no event within {timeout_ms} ms"),
            )),
            Err(PopTimeoutError::Closed) => Err(ecs_queue::closed(F)),
            // A failure a later event queue adds: no event to give.
            Err(other) => Err(Failure::new(ECS_ERR_QUEUE_CLOSED, format!("{F}: {other}"))),
        }
    })
}

/// Closes the queue: pushes fail from now on, pops drain what is left,
/// then fail; blocked callers wake up.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// `queue` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_close(queue: *const ecs_queue) -> ecs_status {
    const F: &str = "ecs_queue_close";
    call(F, || {
        // SAFETY: the caller's promise on `queue`.
        let queue = unsafe { arg(queue, F, "queue") }?;
        queue.queue.close();
        Ok(())
    })
}

/// Writes the number of queued events to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// Pointers are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_queue_len(queue: *const ecs_queue, out: *mut usize) -> ecs_status {
    const F: &str = "ecs_queue_len";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let queue = unsafe { arg(queue, F, "queue") }?;
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, queue.queue.len(), F, "out") }
    })
}
