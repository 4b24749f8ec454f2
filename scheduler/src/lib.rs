//! Systems, access declarations, the dependency DAG, Kahn waves and the
//! parallel wave executor.
//!
//! Filled in by its own issue; see `../shared/DESIGN.md`.
#![forbid(unsafe_code)]
