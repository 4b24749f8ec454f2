//! Snapshots of an [`ecs_engine::Registry`]: save the world to bytes and
//! load it back, in a readable format (JSON) or a compact one (postcard),
//! both through serde.
//!
//! A snapshot holds what the types registered with [`Snapshots`] hold
//! (an opt-in per component type and per resource type, each under a
//! stable name) and the entity allocator's exact state, so handles,
//! generations and the free queue come back exactly: the next spawn after
//! a load gets the handle it would have got without the round trip.
//! Component pools come back in their dense order, so views visit entities
//! in the same order as before the save; a deterministic simulation
//! resumed from a snapshot goes on exactly as the uninterrupted one.
//!
//! Components registered at run time by name and layout (as the C API
//! does) are saved by their bytes once declared savable and registered
//! here by name ([`Snapshots::register_runtime`]).
//!
//! A load decodes and checks everything first and changes the registry
//! only at the end: any error (an unknown name or key, truncated or
//! corrupt input, another format version, inconsistent entities) leaves
//! it untouched, and names what and where ([`SnapshotError`]).
//!
//! Every entry and the entities carry a CRC-32 checksum, and a postcard
//! file ends with one over all its bytes: a damaged file (a flipped bit, a
//! cut) or a hand-edited one is refused before any value is decoded,
//! naming the entry (and, in postcard, its bytes). In JSON the checksums
//! cover the values, not their spacing or key order ([`json_checksum`]).
//!
//! The registry crate itself has no serde dependency: it exports and
//! imports the allocator's state as plain vectors
//! ([`ecs_engine::AllocatorState`]); this crate mirrors it in serde types.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::Registry;
//! use ecs_snapshot::{Format, Snapshots};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
//! struct Position { x: f32, y: f32 }
//!
//! let mut snapshots = Snapshots::new();
//! snapshots.register::<Position>("Position")?.register_disabled()?;
//!
//! let mut registry = Registry::new();
//! let ship = registry.spawn((Position { x: 1.0, y: 2.0 },));
//! registry.disable(ship)?;
//!
//! let text = snapshots.save(&registry, Format::Json)?;
//! assert!(std::str::from_utf8(&text)?.contains("\"Position\""));
//! let mut loaded = Registry::new();
//! snapshots.load(&mut loaded, &text, Format::Json)?;
//! assert_eq!(loaded.get::<Position>(ship), Some(&Position { x: 1.0, y: 2.0 }));
//! assert!(loaded.is_disabled(ship));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod document;
mod engine;
mod error;
mod integrity;
mod snapshots;

pub use document::FORMAT_VERSION;
pub use error::{EntryKind, SnapshotError};
pub use integrity::json_checksum;
pub use snapshots::{Format, Snapshots};
