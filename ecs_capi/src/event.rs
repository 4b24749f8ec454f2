//! Events from C: channels of values of a registered size and alignment,
//! sent by systems (and between ticks by the engine) and read by systems,
//! each reader with its own cursor. A C channel is the scheduler's
//! run-time channel (`scheduler::RawEvents`), so it keeps every rule of
//! Rust's `EventWriter`/`EventReader`: a writer runs before the readers of
//! its channel, two writers may share a wave and their events are merged
//! in the order the systems were added, a reader sees every event once,
//! events are kept for 8 ticks for readers that did not run, and what a
//! reader never saw is counted as missed.

use std::alloc::Layout;
use std::ffi::{c_char, c_void};

use ::ecs_engine::Access;
use scheduler::{RAW_EVENT_MAX_ALIGN, RawEvent, RawEventError, RawEventId, RawEvents};

use crate::boundary::{arg, call, check_struct_size, foreign, string_arg, write_out};
use crate::context::ecs_system_ctx;
use crate::engine::ecs_engine;
use crate::status::{
    ECS_ERR_DUPLICATE_NAME, ECS_ERR_LIMIT, ECS_ERR_UNKNOWN_EVENT, Failure, ecs_status,
};
use crate::tag::{IdKind, MAX_INDEXES, Tag, decode_id, encode_id};

/// An event channel's id: tagged with its engine like an
/// `ecs_component_id` (an id from another engine is refused), and marked
/// as an event channel id: a component or resource id passed as one is
/// refused.
pub type ecs_event_id = u64;

/// The most event channels an engine holds: 65,536.
const MAX_CHANNELS: usize = MAX_INDEXES;

/// An event channel to register.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_event_desc {
    /// `sizeof(ecs_event_desc)`.
    pub struct_size: u32,
    /// Unique among the engine's event channels; UTF-8, NUL-terminated;
    /// copied.
    pub name: *const c_char,
    /// Size of one event in bytes (0 allowed: a signal with no value).
    pub size: usize,
    /// Alignment of an event in bytes: a power of two, at most 16.
    pub align: usize,
    /// `true` declares the events plain data that `ecs_engine_save` and
    /// `ecs_engine_load` copy by their bytes, with the promise of
    /// `ecs_component_desc.savable`: every byte initialised (padding
    /// included) and no pointer or handle whose meaning is lost when the
    /// bytes are loaded elsewhere. `false`: a save is refused while the
    /// channel holds events.
    pub savable: bool,
}

/// What one `ecs_ctx_read_events` call handed out.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ecs_events_read {
    /// Events passed to the callback.
    pub read: u64,
    /// Events this system never saw: dropped by age (kept 8 ticks)
    /// before it ran. Counted at its first read in a run.
    pub missed: u64,
}

/// A channel's counts, from `ecs_event_get_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ecs_event_stats {
    /// Events sent on the channel since it was registered.
    pub sent: u64,
    /// Events the channel holds now (not yet dropped by age or by every
    /// reader having seen them).
    pub retained: u64,
    /// Events dropped by age that a reader never saw (counted when that
    /// reader next runs) or that no system reads (counted when dropped).
    pub missed: u64,
}

/// Called once per event by `ecs_ctx_read_events`, oldest first, with the
/// event's bytes (valid only during the call, aligned as registered; do
/// not write through it) and the caller's `user_data`. No C++ exception
/// may leave it.
pub type ecs_event_fn = Option<unsafe extern "C" fn(event: *const c_void, user_data: *mut c_void)>;

/// The id C sees for channel `id` of the engine tagged `tag`.
fn encode(tag: Tag, id: RawEventId) -> ecs_event_id {
    encode_id(IdKind::Event, tag, id.index())
}

/// The channel of `id`, when its tag is `tag` (whether the engine has it
/// is checked where it is used).
pub(crate) fn decode(tag: Tag, id: ecs_event_id, function: &str) -> Result<RawEventId, Failure> {
    let index = decode_id(IdKind::Event, tag, id).map_err(|note| unknown(id, function, &note))?;
    // Below MAX_INDEXES: the cast cannot truncate.
    Ok(RawEventId::from_u32(index as u32))
}

fn unknown(id: ecs_event_id, function: &str, note: &str) -> Failure {
    Failure::new(
        ECS_ERR_UNKNOWN_EVENT,
        format!("{function}: no event channel with id {id:#x} is registered in this engine{note}"),
    )
}

/// The channel of `id` in `registry`, with its name and layout.
pub(crate) fn known(
    registry: &::ecs_engine::Registry,
    tag: Tag,
    id: ecs_event_id,
    function: &str,
) -> Result<(RawEventId, String, Layout), Failure> {
    let raw = decode(tag, id, function)?;
    let (name, layout) =
        RawEvents::describe(registry, raw).ok_or_else(|| unknown(id, function, ""))?;
    Ok((raw, name.to_owned(), layout))
}

/// `ECS_ERR_INVALID_ARGUMENT` unless `size` is the channel's event size
/// and the value pointer is non-null (when `size` is not 0).
fn check_value(
    name: &str,
    layout: Layout,
    value: *const c_void,
    size: usize,
    function: &str,
) -> Result<(), Failure> {
    if size != layout.size() {
        return Err(Failure::invalid(
            function,
            format!(
                "event channel `{name}` holds events of {} bytes, but `size` is {size}",
                layout.size()
            ),
        ));
    }
    if size > 0 && value.is_null() {
        return Err(Failure::null(function, "value"));
    }
    Ok(())
}

/// The `size` bytes at `value` (none when `size` is 0).
///
/// # Safety
///
/// `value` is valid for `size` reads when `size` is not 0.
unsafe fn bytes<'a>(value: *const c_void, size: usize) -> &'a [u8] {
    if size == 0 {
        return &[];
    }
    // SAFETY: the caller's promise.
    unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) }
}

/// Registers an event channel and writes its id to `*out`. Allowed before
/// the build and between ticks; systems can declare only channels
/// registered before they are added. A channel no system reads still
/// keeps its events 8 ticks, then counts them as missed.
///
/// Threading: an engine call like any other (one thread at a time; not
/// from a system: `ECS_ERR_WRONG_STATE`).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, out);
/// `ECS_ERR_INVALID_ARGUMENT` (struct_size, an empty or non-UTF-8 name,
/// an alignment that is not a power of two or above 16, a size too large
/// for the alignment); `ECS_ERR_DUPLICATE_NAME` when a channel has the
/// name; `ECS_ERR_LIMIT` when the engine holds 65,536 channels;
/// `ECS_ERR_WRONG_STATE` while the engine is busy. Nothing is registered
/// on failure.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `desc` is NULL or valid; `out` NULL
/// or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_event_register(
    engine: *mut ecs_engine,
    desc: *const ecs_event_desc,
    out: *mut ecs_event_id,
) -> ecs_status {
    const F: &str = "ecs_event_register";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        // SAFETY: NULL or valid, by the caller's promise.
        let desc = unsafe { arg(desc, F, "desc") }?;
        check_struct_size(
            desc.struct_size,
            size_of::<ecs_event_desc>(),
            F,
            "ecs_event_desc",
        )?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        // SAFETY: NULL or NUL-terminated, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        if !desc.align.is_power_of_two() || desc.align > RAW_EVENT_MAX_ALIGN {
            return Err(Failure::invalid(
                F,
                format!(
                    "event channel `{name}`: `align` is {}; give a power of two up to \
                     {RAW_EVENT_MAX_ALIGN}",
                    desc.align
                ),
            ));
        }
        let layout = Layout::from_size_align(desc.size, desc.align).map_err(|_| {
            Failure::invalid(
                F,
                format!(
                    "event channel `{name}`: `size` {} is too large for alignment {}",
                    desc.size, desc.align
                ),
            )
        })?;
        let tag = engine.tag;
        let registry = engine.registry_mut();
        if RawEvents::count(registry) >= MAX_CHANNELS {
            return Err(Failure::new(
                ECS_ERR_LIMIT,
                format!("{F}: an engine holds at most {MAX_CHANNELS} event channels"),
            ));
        }
        let savable = desc.savable;
        let id = RawEvents::register(registry, &name, layout).map_err(|error| match error {
            RawEventError::DuplicateName(_) => {
                Failure::new(ECS_ERR_DUPLICATE_NAME, format!("{F}: {error}"))
            }
            other => Failure::invalid(F, other.to_string()),
        })?;
        engine.savable_events.push(savable);
        // SAFETY: `out` is non-null, valid for writes by the caller's promise.
        unsafe { write_out(out, encode(tag, id), F, "out") }
    })
}

/// Writes the id of the event channel named `name` to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, name, out); `ECS_ERR_INVALID_ARGUMENT`
/// for a non-UTF-8 name; `ECS_ERR_UNKNOWN_EVENT` when no channel has the
/// name; `ECS_ERR_WRONG_STATE` while the engine is busy.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `name` NULL or NUL-terminated; `out`
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_event_lookup(
    engine: *const ecs_engine,
    name: *const c_char,
    out: *mut ecs_event_id,
) -> ecs_status {
    const F: &str = "ecs_event_lookup";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.lock(F)?;
        // SAFETY: NULL or NUL-terminated, by the caller's promise.
        let name = unsafe { string_arg(name, F, "name") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let id = RawEvents::lookup(engine.registry(), &name).ok_or_else(|| {
            Failure::new(
                ECS_ERR_UNKNOWN_EVENT,
                format!("{F}: no event channel is named `{name}`"),
            )
        })?;
        // SAFETY: `out` is non-null, valid for writes by the caller's promise.
        unsafe { write_out(out, encode(engine.tag, id), F, "out") }
    })
}

/// Sends one event (`size` bytes at `value`, copied) on channel `id` from
/// outside a tick: appended at once, so the readers of the next tick see
/// it, after the events sent before it.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, value when size > 0);
/// `ECS_ERR_UNKNOWN_EVENT` for an id not of this engine;
/// `ECS_ERR_INVALID_ARGUMENT` for a `size` that is not the channel's;
/// `ECS_ERR_WRONG_STATE` while the engine is busy (from a system: use
/// `ecs_ctx_send_event`).
///
/// # Safety
///
/// `engine` is NULL or a live engine; `value` NULL or valid for `size`
/// reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_event_send(
    engine: *mut ecs_engine,
    id: ecs_event_id,
    value: *const c_void,
    size: usize,
) -> ecs_status {
    const F: &str = "ecs_event_send";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        let tag = engine.tag;
        let (raw, name, layout) = known(engine.registry(), tag, id, F)?;
        check_value(&name, layout, value, size, F)?;
        // SAFETY: checked non-null when size > 0; valid for `size` reads
        // by the caller's promise.
        let bytes = unsafe { bytes(value, size) };
        RawEvents::send(engine.registry_mut(), raw, bytes)
            .map_err(|e| Failure::invalid(F, e.to_string()))
    })
}

/// Writes channel `id`'s counts to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, out); `ECS_ERR_UNKNOWN_EVENT` for an id
/// not of this engine; `ECS_ERR_WRONG_STATE` while the engine is busy.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_event_get_stats(
    engine: *const ecs_engine,
    id: ecs_event_id,
    out: *mut ecs_event_stats,
) -> ecs_status {
    const F: &str = "ecs_event_get_stats";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.lock(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let (raw, _, _) = known(engine.registry(), engine.tag, id, F)?;
        let events = RawEvents::events(engine.registry(), raw).ok_or_else(|| unknown(id, F, ""))?;
        let stats = ecs_event_stats {
            sent: events.sent(),
            retained: events.len() as u64,
            missed: events.missed(),
        };
        // SAFETY: `out` is non-null, valid for writes by the caller's promise.
        unsafe { write_out(out, stats, F, "out") }
    })
}

/// Sends one event (`size` bytes at `value`, copied) on channel `id` from
/// a running system that declared it in `ecs_system_desc.event_writes`.
/// Readers see it when the system's wave ends (events of the systems of
/// one wave in the order the systems were added, each system's in the
/// order sent). On the system's thread only; not from a run condition or
/// from inside `ecs_ctx_read_events`' callback.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, value when size > 0);
/// `ECS_ERR_UNKNOWN_EVENT` for an id not of this engine;
/// `ECS_ERR_UNDECLARED` when the system did not declare sending on `id`;
/// `ECS_ERR_INVALID_ARGUMENT` for a `size` that is not the channel's;
/// `ECS_ERR_WRONG_STATE` from a run condition or a read's callback.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running system; `value`
/// NULL or valid for `size` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_send_event(
    ctx: *mut ecs_system_ctx,
    id: ecs_event_id,
    value: *const c_void,
    size: usize,
) -> ecs_status {
    const F: &str = "ecs_ctx_send_event";
    call(F, || {
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { crate::context::ctx_arg(ctx, F) }?;
        let raw = decode(ctx.tag(), id, F)?;
        ctx.check_events_allowed(F)?;
        // SAFETY: `value` is valid for `size` reads by the caller's promise
        // (checked against the channel, and for NULL, before it is read).
        unsafe { ctx.send_event(raw, id, value, size, F) }
    })
}

/// Calls `each` with every event of channel `id` the running system has
/// not seen yet, oldest first, and writes the counts to `*out` (NULL: not
/// wanted). The system must have declared `id` in
/// `ecs_system_desc.event_reads`. A reader sees the events sent before
/// its wave, this tick's writers' included (a writer of a channel runs
/// before its readers), and each event once: a second call in the same
/// run hands out nothing new, and the cursor moves past every event handed
/// out. A system that both reads and sends on a channel counts as a
/// sender: it may share a wave with the other senders, and then sees
/// their events of that wave on its next run. On the system's thread
/// only; not from a run condition (a skipped system keeps its events) or
/// from inside `each` (`ECS_ERR_WRONG_STATE`).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, each); `ECS_ERR_UNKNOWN_EVENT` for an id
/// not of this engine; `ECS_ERR_UNDECLARED` when the system did not
/// declare reading `id` (sending is not enough); `ECS_ERR_WRONG_STATE` from
/// a run condition or from inside `each`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running system; `each` is
/// sound to call with `user_data`; `out` NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_read_events(
    ctx: *mut ecs_system_ctx,
    id: ecs_event_id,
    each: ecs_event_fn,
    user_data: *mut c_void,
    out: *mut ecs_events_read,
) -> ecs_status {
    const F: &str = "ecs_ctx_read_events";
    call(F, || {
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { crate::context::ctx_arg(ctx, F) }?;
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        let raw = decode(ctx.tag(), id, F)?;
        ctx.check_events_allowed(F)?;
        let (read, missed) = ctx.read_events(raw, id, F, |event| {
            // SAFETY: `each` is sound with `user_data` by the caller's
            // promise; the event's bytes stay valid during the call.
            foreign(|| unsafe { each(event.as_ptr().cast(), user_data) });
        })?;
        if out.is_null() {
            return Ok(());
        }
        // SAFETY: `out` is non-null, valid for writes by the caller's promise.
        unsafe { write_out(out, ecs_events_read { read, missed }, F, "out") }
    })
}

/// The events a running system has sent on one channel so far.
#[derive(Debug)]
pub(crate) struct Sending {
    id: RawEventId,
    name: String,
    layout: Layout,
    batch: Vec<RawEvent>,
}

impl ecs_system_ctx {
    /// `ECS_ERR_WRONG_STATE` in a run condition (it neither sends nor
    /// reads: a skipped system must not lose its events) and inside
    /// `ecs_ctx_read_events`'s callback.
    fn check_events_allowed(&self, function: &str) -> Result<(), Failure> {
        let why = if self.condition {
            "a run condition neither sends nor reads events"
        } else if self.reading.get() {
            "not from inside ecs_ctx_read_events' callback"
        } else {
            return Ok(());
        };
        Err(Failure::new(
            crate::status::ECS_ERR_WRONG_STATE,
            format!("{function}: {why}"),
        ))
    }

    /// Keeps one event (`size` bytes at `value`) for channel `raw` (C id
    /// `id`), handed to the channel when the system returns
    /// ([`finish_events`](Self::finish_events)).
    ///
    /// # Safety
    ///
    /// `value` is valid for `size` reads (or NULL, refused here when
    /// `size` is not 0).
    unsafe fn send_event(
        &self,
        raw: RawEventId,
        id: ecs_event_id,
        value: *const c_void,
        size: usize,
        function: &str,
    ) -> Result<(), Failure> {
        let mut sent = self.sent.borrow_mut();
        let at = match sent.iter().position(|s| s.id == raw) {
            Some(at) => at,
            None => {
                let (name, layout, batch) = RawEvents::start_sending(self.context(), raw)
                    .map_err(|e| event_failure(e, id, Access::Write, function))?;
                sent.push(Sending {
                    id: raw,
                    name,
                    layout,
                    batch,
                });
                sent.len() - 1
            }
        };
        let sending = &mut sent[at];
        check_value(&sending.name, sending.layout, value, size, function)?;
        // SAFETY: checked non-null when size > 0; valid for `size` reads by
        // the caller's promise.
        sending
            .batch
            .push(RawEvent::new(unsafe { bytes(value, size) }));
        Ok(())
    }

    /// Reads channel `raw` (C id `id`) for the running system: `(read,
    /// missed)`.
    fn read_events(
        &self,
        raw: RawEventId,
        id: ecs_event_id,
        function: &str,
        each: impl FnMut(&RawEvent),
    ) -> Result<(u64, u64), Failure> {
        self.reading.set(true);
        let read = RawEvents::read(self.context(), raw, each);
        self.reading.set(false);
        read.map_err(|e| event_failure(e, id, Access::Read, function))
    }

    /// Hands the events the system sent to their channels, in the order
    /// of the channels' first sends (each channel's in the order sent).
    pub(crate) fn finish_events(&self) -> Result<(), scheduler::SystemError> {
        for sending in self.sent.take() {
            RawEvents::send_batch(self.context(), sending.id, sending.batch)?;
        }
        Ok(())
    }
}

/// A refused event access as a C status: undeclared, or a channel the
/// engine does not have.
fn event_failure(
    error: scheduler::SystemError,
    id: ecs_event_id,
    access: Access,
    function: &str,
) -> Failure {
    match error {
        scheduler::SystemError::Undeclared { .. } => {
            let field = match access {
                Access::Read => "event_reads",
                Access::Write => "event_writes",
            };
            Failure::new(
                crate::status::ECS_ERR_UNDECLARED,
                format!("{function}: {error} (add it to `ecs_system_desc.{field}`)"),
            )
        }
        _ => unknown(id, function, ""),
    }
}
