//! Tick-stamped input from other threads; see [`InputProducer`].

use std::fmt;

use ecs_engine::Registry;
use event_queue::EventQueue;
use scheduler::Events;

use super::replay::{InputHistory, Rerun};

/// What travels from producers to the engine.
enum Message<T> {
    /// A value for tick `tick` (`None`: as soon as possible).
    Value {
        producer: u32,
        tick: Option<u64>,
        value: T,
    },
    /// Producer `producer` sent every value of ticks up to `tick`.
    Through { producer: u32, tick: u64 },
    /// Producer `producer` is done.
    Closed { producer: u32 },
}

/// Why an input value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The value names a tick the producer already declared complete.
    #[error(
        "input for tick {tick} is too late: this producer declared every tick up to {through} sent"
    )]
    Late {
        /// The tick the value named.
        tick: u64,
        /// The producer's watermark.
        through: u64,
    },
    /// The engine is gone (dropped) or the producer was closed.
    #[error("the engine no longer takes input (dropped, or this producer was closed)")]
    Closed,
}

/// A producer of tick-stamped input of type `T`, for another thread.
/// Dropping it closes it: the engine stops waiting for it. While it is
/// open, a tick waits for its watermark: a producer kept alive that never
/// sends nor calls [`through`](Self::through) stops the engine's ticks
/// (close it, or [`Engine::close_inputs`](crate::Engine::close_inputs)).
///
/// Tick-stamped input from other threads, delivered to systems as events.
///
/// A producer thread holds an [`InputProducer<T>`] (made by
/// [`EngineBuilder::input_producer`](crate::EngineBuilder::input_producer)):
/// each value it sends names the tick it applies at. Before tick `t` runs,
/// the engine waits (sleeping, no CPU) until every producer of `T` has
/// declared that it sent everything up to tick `t` (a
/// [`through`](InputProducer::through) watermark, a value for a later tick,
/// or closing), then sends the values due at `t` on the [`Events<T>`]
/// channel, in (tick, producer, sequence) order: producers numbered in
/// creation order, each one's values in the order it sent them. Systems
/// read them with [`EventReader<T>`](scheduler::EventReader). So the world
/// never depends on when the producer threads ran: this is the
/// deterministic way to take input.
///
/// An [`InputSender<T>`] (made by
/// [`EngineBuilder::input_sender`](crate::EngineBuilder::input_sender))
/// is the other kind: its values apply "as soon as possible", stamped by
/// the engine on arrival with the tick about to run, and the engine never
/// waits for it. That is **not deterministic** (which tick a value lands in
/// depends on thread timing); use it for live input whose exact tick does
/// not need to replay.
///
/// A shared [`EventQueue`] that systems push to and drain is not
/// deterministic either (the pushes of one wave interleave by timing, and
/// the schedule sees two readers); for messages between systems use
/// events ([`EventWriter`](scheduler::EventWriter),
/// [`EventReader`](scheduler::EventReader)).
///
/// # Examples
///
/// ```
/// use ecs_runtime::prelude::*;
///
/// #[derive(Default)]
/// struct Keys(Vec<(u64, char)>);
///
/// fn read_keys(tick: Tick, keys: EventReader<char>, mut log: ResMut<Keys>) {
///     log.0.extend(keys.iter().map(|&k| (tick.number, k)));
/// }
///
/// let mut builder = Engine::builder();
/// let mut keyboard = builder.input_producer::<char>();
/// builder.insert_resource(Keys::default());
/// builder.add_system(read_keys);
/// let mut engine = builder.build().unwrap();
/// let thread = std::thread::spawn(move || {
///     keyboard.send_at(0, 'a').unwrap();
///     keyboard.send_at(2, 'b').unwrap();
///     keyboard.send_at(2, 'c').unwrap();
///     // Dropped: closed, so the engine stops waiting for it.
/// });
/// engine.run(4).unwrap();
/// thread.join().unwrap();
/// let keys = &engine.registry().resource::<Keys>().unwrap().0;
/// assert_eq!(keys, &[(0, 'a'), (2, 'b'), (2, 'c')]);
/// ```
pub struct InputProducer<T: Send> {
    queue: EventQueue<Message<T>>,
    id: u32,
    /// Every tick up to this one is declared sent.
    through: Option<u64>,
    closed: bool,
}

impl<T: Send> fmt::Debug for InputProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputProducer")
            .field("producer", &self.id)
            .field("through", &self.through)
            .field("closed", &self.closed)
            .finish()
    }
}

impl<T: Send> InputProducer<T> {
    /// The producer's number: its rank among the producers of `T`, in
    /// creation order (the second key of the delivery order).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The last tick declared complete, if any.
    pub fn through_tick(&self) -> Option<u64> {
        self.through
    }

    fn push(&mut self, message: Message<T>) -> Result<(), InputError> {
        if self.closed {
            return Err(InputError::Closed);
        }
        self.queue.push(message).map_err(|_| {
            self.closed = true;
            InputError::Closed
        })
    }

    /// Sends `value` for tick `tick`. Ticks must not go back: sending for
    /// tick `tick` also declares every earlier tick complete (the engine
    /// may run them). Waits while a bounded channel is full.
    ///
    /// # Errors
    ///
    /// [`InputError::Late`] when `tick` was already declared complete (the
    /// value is dropped, the engine is told nothing);
    /// [`InputError::Closed`] when the engine is gone.
    pub fn send_at(&mut self, tick: u64, value: T) -> Result<(), InputError> {
        if let Some(through) = self.through
            && tick <= through
        {
            return Err(InputError::Late { tick, through });
        }
        if tick > 0 {
            self.through(tick - 1)?;
        }
        let producer = self.id;
        self.push(Message::Value {
            producer,
            tick: Some(tick),
            value,
        })
    }

    /// Declares every value of ticks up to `tick` sent: the engine may run
    /// them. A tick at or below the current watermark changes nothing.
    ///
    /// # Errors
    ///
    /// [`InputError::Closed`] when the engine is gone.
    pub fn through(&mut self, tick: u64) -> Result<(), InputError> {
        if self.through.is_some_and(|through| tick <= through) {
            return Ok(());
        }
        self.through = Some(tick);
        let producer = self.id;
        self.push(Message::Through { producer, tick })
    }

    /// Closes the producer: the engine stops waiting for it. Dropping it
    /// does the same.
    pub fn close(&mut self) {
        if !self.closed {
            let producer = self.id;
            let _ = self.queue.push(Message::Closed { producer });
            self.closed = true;
        }
    }

    /// `false` once closed, or once the engine is gone.
    pub fn is_open(&self) -> bool {
        !self.closed && !self.queue.is_closed()
    }
}

impl<T: Send> Drop for InputProducer<T> {
    fn drop(&mut self) {
        self.close();
    }
}

/// A sender of "as soon as possible" input of type `T`: each value is
/// stamped by the engine, on arrival, with the tick about to run. Not
/// deterministic; see [`InputProducer`].
pub struct InputSender<T: Send> {
    queue: EventQueue<Message<T>>,
    id: u32,
}

impl<T: Send> fmt::Debug for InputSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputSender")
            .field("producer", &self.id)
            .finish()
    }
}

impl<T: Send> InputSender<T> {
    /// Sends `value` for the next tick the engine runs.
    ///
    /// # Errors
    ///
    /// [`InputError::Closed`] when the engine is gone.
    pub fn send(&self, value: T) -> Result<(), InputError> {
        self.queue
            .push(Message::Value {
                producer: self.id,
                tick: None,
                value,
            })
            .map_err(|_| InputError::Closed)
    }
}

/// Counts of one input type, over the engine's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Values delivered as events.
    pub delivered: u64,
    /// Values that arrived for a tick that had already run (possible only
    /// from a producer used against its protocol); delivered at the next
    /// tick instead, never dropped.
    pub late: u64,
    /// The most values the engine held after a delivery, waiting for a
    /// later tick, over its life. Delivery takes from each producer's
    /// queue up to its first message about a later tick, so a producer
    /// running ahead is held back by its (bounded) queue instead of piling
    /// values up in the engine: at most one value per tick-stamped
    /// producer, however far ahead it runs.
    pub max_pending: u64,
    /// Values delivered again to ticks run again after
    /// [`Engine::restore_state`](crate::Engine::restore_state), from the
    /// copies kept by
    /// [`EngineBuilder::replay_inputs`](crate::EngineBuilder::replay_inputs).
    pub replayed: u64,
    /// Values that ticks run again did not get again: delivered the first
    /// time, but not kept (no [`replay_inputs`](crate::EngineBuilder::replay_inputs)
    /// for this type, or the tick was outside its window).
    pub not_replayed: u64,
    /// Ticks run again that lie before the channel's record (more than
    /// the replay window, or 1,024 ticks without replay, behind the newest
    /// tick delivered): what they got the first time is not known, and
    /// they get nothing.
    pub unknown_reruns: u64,
}

/// What a producer is to the engine.
#[derive(Debug, Clone, Copy, Default)]
struct ProducerState {
    /// The engine waits for its watermark.
    stamped: bool,
    through: Option<u64>,
    closed: bool,
    /// Values received from it so far.
    sequence: u64,
}

/// A value waiting for its tick: `(tick, producer, sequence)` and the value.
type Pending<T> = ((u64, u32, u64), T);

/// The engine side of one input type.
///
/// Each producer and sender has its own queue (`queues[id]`), so the engine
/// can wait for one producer's watermark without taking the messages of
/// another that runs ahead: delivery takes from each queue at most one
/// message about a later tick, and the rest stays in that producer's
/// queue, holding it back when the queue is bounded.
pub(crate) struct InputChannel<T> {
    queues: Vec<EventQueue<Message<T>>>,
    producers: Vec<ProducerState>,
    pending: Vec<Pending<T>>,
    stats: InputStats,
    history: InputHistory<T>,
}

impl<T: Send + Sync + 'static> InputChannel<T> {
    pub(crate) fn new() -> Self {
        InputChannel {
            queues: Vec::new(),
            producers: Vec::new(),
            pending: Vec::new(),
            stats: InputStats::default(),
            history: InputHistory::new(),
        }
    }

    /// Keeps copies of the values delivered in the last `window` ticks,
    /// for ticks run again after a restore.
    pub(crate) fn replay(&mut self, window: u64)
    where
        T: Clone,
    {
        self.history.replay(window, T::clone);
    }

    /// A new producer whose queue holds at most `capacity` messages
    /// (`None`: unbounded).
    ///
    /// # Panics
    ///
    /// When `capacity` is `Some(0)`.
    #[track_caller]
    pub(crate) fn producer(&mut self, capacity: Option<usize>) -> InputProducer<T> {
        let id = self.add(true, capacity);
        InputProducer {
            queue: self.queues[id as usize].clone(),
            id,
            through: None,
            closed: false,
        }
    }

    pub(crate) fn sender(&mut self) -> InputSender<T> {
        let id = self.add(false, None);
        InputSender {
            queue: self.queues[id as usize].clone(),
            id,
        }
    }

    #[track_caller]
    fn add(&mut self, stamped: bool, capacity: Option<usize>) -> u32 {
        self.queues
            .push(capacity.map_or_else(EventQueue::new, EventQueue::bounded));
        self.producers.push(ProducerState {
            stamped,
            ..ProducerState::default()
        });
        u32::try_from(self.producers.len() - 1).expect("fewer than 2^32 producers")
    }

    fn receive(&mut self, message: Message<T>, tick: u64) {
        match message {
            Message::Value {
                producer,
                tick: at,
                value,
            } => {
                let state = &mut self.producers[producer as usize];
                let sequence = state.sequence;
                state.sequence += 1;
                let at = match at {
                    Some(at) if at < tick => {
                        self.stats.late += 1;
                        tick
                    }
                    Some(at) => at,
                    None => tick,
                };
                self.pending.push(((at, producer, sequence), value));
            }
            Message::Through { producer, tick } => {
                let state = &mut self.producers[producer as usize];
                state.through = Some(state.through.map_or(tick, |t| t.max(tick)));
            }
            Message::Closed { producer } => self.producers[producer as usize].closed = true,
        }
    }

    /// `true` while producer `producer` may still send values for `tick`.
    fn waiting_for(&self, producer: usize, tick: u64) -> bool {
        let p = &self.producers[producer];
        p.stamped && !p.closed && p.through.is_none_or(|t| t < tick)
    }

    /// Takes producer `producer`'s messages: waiting (sleeping) while it
    /// may still send values for `tick`, then what it has queued, up to
    /// and including its first message about a later tick (the rest stays
    /// in its queue).
    fn take_from(&mut self, producer: usize, tick: u64) {
        loop {
            let message = if self.waiting_for(producer, tick) {
                match self.queues[producer].pop_blocking() {
                    Ok(message) => message,
                    Err(_) => {
                        // Closed by the engine with nothing left.
                        self.producers[producer].closed = true;
                        break;
                    }
                }
            } else {
                match self.queues[producer].try_pop() {
                    Some(message) => message,
                    None => break,
                }
            };
            let ahead = match message {
                Message::Value { tick: Some(at), .. } => at > tick,
                Message::Through { tick: through, .. } => through > tick,
                _ => false,
            };
            self.receive(message, tick);
            if ahead {
                // Its values for `tick` came before this (one queue per
                // producer, in order): nothing more to wait for.
                break;
            }
        }
    }
}

/// One input type, seen by the engine without its type.
pub(crate) trait InputPump: Send {
    /// Waits for every producer to be through `tick`, then sends the
    /// values due at `tick` on the event channel, in order.
    fn deliver(&mut self, registry: &mut Registry, tick: u64);
    /// Closes the channel: producers' sends fail from now on.
    fn close(&self);
    /// The counts.
    fn stats(&self) -> InputStats;
    /// The channel, to find it by its type.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// The input type.
    fn input_type(&self) -> std::any::TypeId;
}

impl<T: Send + Sync + 'static> InputPump for InputChannel<T> {
    fn deliver(&mut self, registry: &mut Registry, tick: u64) {
        // A tick run again (after a restore) gets what it got the first
        // time, from the history; the producers' queues wait for the
        // ticks after the newest delivered one.
        match self.history.rerun(tick) {
            Rerun::New => {}
            Rerun::Values(values) => {
                self.stats.replayed += values.len() as u64;
                if !values.is_empty() {
                    let events = Events::<T>::channel(registry);
                    for value in values {
                        events.send(value);
                    }
                }
                return;
            }
            Rerun::Lost(count) => {
                self.stats.not_replayed += count as u64;
                return;
            }
            Rerun::Unknown => {
                self.stats.unknown_reruns += 1;
                return;
            }
        }
        // Take each producer's messages until it is through `tick`
        // (waiting for it), then what it has already queued, but stop at
        // its first message about a later tick: the rest stays in its
        // queue, so a producer that runs ahead is held back by its bounded
        // queue instead of piling values up here (at most one value per
        // producer is held between ticks, and this tick sorts only a few),
        // even while the engine waits for a slower one. An "as soon as
        // possible" sender's queue is taken as it is at this moment.
        for producer in 0..self.producers.len() {
            if self.producers[producer].stamped {
                self.take_from(producer, tick);
            } else {
                let queue = self.queues[producer].clone();
                for message in queue.drain() {
                    self.receive(message, tick);
                }
            }
        }
        self.pending.sort_unstable_by_key(|&(key, _)| key);
        let due = self.pending.partition_point(|&((at, _, _), _)| at <= tick);
        let held = (self.pending.len() - due) as u64;
        self.stats.max_pending = self.stats.max_pending.max(held);
        self.history
            .record(tick, self.pending[..due].iter().map(|(_, value)| value));
        if due == 0 {
            return;
        }
        self.stats.delivered += due as u64;
        let events = Events::<T>::channel(registry);
        for (_, value) in self.pending.drain(..due) {
            events.send(value);
        }
    }

    fn close(&self) {
        for queue in &self.queues {
            queue.close();
        }
    }

    fn stats(&self) -> InputStats {
        self.stats
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn input_type(&self) -> std::any::TypeId {
        std::any::TypeId::of::<T>()
    }
}
