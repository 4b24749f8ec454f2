//! The thread-safe input queue: a FIFO that hands values produced on other
//! threads (input devices, the network, a replay reader) to the game loop.
//!
//! Not the event system: events between systems are the scheduler's
//! `Events<T>` channel, sent with an `EventWriter<T>` and read with an
//! `EventReader<T>` (`scheduler/src/events/`); this crate only carries
//! what arrives from outside the loop.
//!
//! A game's world is updated by one loop, but its input does not come from
//! that loop: a keyboard thread, a network thread or a replay reader produce
//! events whenever they like. [`EventQueue`] is the hand-over point. Producers
//! push from any thread; the game loop [drains](EventQueue::drain) everything
//! that arrived once per tick; a dedicated consumer thread can instead sleep
//! until the next event ([`pop_blocking`](EventQueue::pop_blocking)) or batch
//! ([`drain_blocking`](EventQueue::drain_blocking)) without using CPU.
//! No event is lost, duplicated or reordered (per producer), and
//! [closing](EventQueue::close) the queue lets the consumers finish what was
//! queued and then stop. `EventQueue<T>` is `Send + Sync + 'static` for
//! `T: Send + 'static`, so the engine can keep it as a resource.
//!
//! # Not for events between systems, nor for replayable input
//!
//! Which tick drains an event depends on when its producer thread ran, and
//! a queue resource that systems push to and drain is declared as two
//! *reads*, so those systems may share a wave and the order of their
//! pushes depends on thread timing: neither is deterministic. For
//! events between systems use the scheduler's events (`scheduler::Events`,
//! `EventWriter`, `EventReader`); for input that must replay identically use the
//! engine's tick-stamped input (`EngineBuilder::input_producer`), which
//! delivers each value at the tick it names.
//!
//! # Examples
//!
//! ```
//! use std::thread;
//! use event_queue::{Closed, EventQueue};
//!
//! #[derive(Debug, PartialEq)]
//! enum Input {
//!     Key(char),
//!     Quit,
//! }
//!
//! let queue = EventQueue::new();
//! let keyboard = queue.clone();
//! let input_thread = thread::spawn(move || {
//!     keyboard.push(Input::Key('w')).unwrap();
//!     keyboard.push(Input::Quit).unwrap();
//!     keyboard.close();
//! });
//! input_thread.join().unwrap();
//!
//! // One tick of the game loop: take everything that arrived.
//! let tick: Vec<Input> = queue.drain().collect();
//! assert_eq!(tick, [Input::Key('w'), Input::Quit]);
//! assert_eq!(queue.pop_blocking(), Err(Closed(())));
//! ```
#![forbid(unsafe_code)]

mod error;
mod queue;
mod sync;

pub use crate::error::{Closed, PopTimeoutError, TryPushError};
pub use crate::queue::{Drain, EventQueue};
