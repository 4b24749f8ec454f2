//! The clock a system sees: [`Tick`].

/// The clock a system sees: which tick runs, the fixed step, and the wall
/// time since the previous tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tick {
    /// The tick's number: 0 for the first tick, then 1, 2, ...
    pub number: u64,
    /// The fixed simulation step, in seconds (1/60 by default in the
    /// engine). Systems that must be deterministic use this.
    pub step: f64,
    /// Wall-clock seconds since the previous tick started (0 for the first).
    pub delta: f64,
}
