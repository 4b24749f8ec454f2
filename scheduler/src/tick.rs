//! The clock a system sees: [`Tick`], the frame tick.

/// The frame tick: the clock a system sees, one per
/// [`Schedule::run`](crate::Schedule::run) (one per frame of the engine):
/// which frame runs, the fixed step, and the wall time since the previous
/// frame.
///
/// Not the change tick: change detection (`Added`, `Changed`, `Ref`,
/// [`LastRun`](crate::LastRun)) compares
/// [`ChangeTick`](ecs_engine::ChangeTick)s, a wrapping `u32` clock of the
/// registry that a schedule advances several times per frame (before
/// every wave and every apply). bevy's `Tick` is that change tick; here
/// `Tick` is the frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tick {
    /// The frame tick's number: 0 for the first tick, then 1, 2, ...
    pub number: u64,
    /// The fixed simulation step, in seconds (1/60 by default in the
    /// engine). Systems that must be deterministic use this.
    pub step: f64,
    /// Wall-clock seconds since the previous tick started (0 for the first).
    pub delta: f64,
}
