//! What an input channel delivered in its recent ticks, so that ticks run
//! again after [`Engine::restore_state`](crate::Engine::restore_state) get
//! the same input ([`EngineBuilder::replay_inputs`](crate::EngineBuilder::replay_inputs)),
//! or at least a count of what they did not get.

use std::collections::VecDeque;

/// Ticks whose delivery counts a channel without replay keeps, so that a
/// tick run again can say how many values it did not get.
pub(crate) const COUNTED_TICKS: u64 = 1024;

/// One delivered tick: its number, how many values, and copies of them
/// (empty without replay).
struct Delivered<T> {
    tick: u64,
    count: usize,
    values: Vec<T>,
}

/// A channel's delivered ticks, newest last.
pub(crate) struct InputHistory<T> {
    /// Copies values for replay; `None`: counts only.
    copy: Option<fn(&T) -> T>,
    /// Ticks kept behind the newest delivered one.
    window: u64,
    ticks: VecDeque<Delivered<T>>,
    /// The newest tick delivered for the first time.
    through: Option<u64>,
    /// The oldest tick whose delivery is still known (older ones were
    /// dropped from the window).
    known_from: u64,
}

/// What a tick run again got from the history.
pub(crate) enum Rerun<T> {
    /// Not a tick run before: deliver from the producers.
    New,
    /// Run before; copies of the values it got then.
    Values(Vec<T>),
    /// Run before with this many values, which were not kept (no replay).
    Lost(usize),
    /// Run before, longer ago than the history reaches.
    Unknown,
}

impl<T> InputHistory<T> {
    pub(crate) fn new() -> Self {
        InputHistory {
            copy: None,
            window: COUNTED_TICKS,
            ticks: VecDeque::new(),
            through: None,
            known_from: 0,
        }
    }

    /// Keeps copies of the values of the last `window` ticks from now on.
    pub(crate) fn replay(&mut self, window: u64, copy: fn(&T) -> T) {
        self.copy = Some(copy);
        self.window = window;
    }

    /// Whether `tick` was delivered before, and what it got.
    pub(crate) fn rerun(&self, tick: u64) -> Rerun<T> {
        if self.through.is_none_or(|through| tick > through) {
            return Rerun::New;
        }
        if tick < self.known_from {
            return Rerun::Unknown;
        }
        let Ok(at) = self.ticks.binary_search_by_key(&tick, |d| d.tick) else {
            return Rerun::Values(Vec::new());
        };
        let delivered = &self.ticks[at];
        match self.copy {
            Some(copy) if delivered.values.len() == delivered.count => {
                Rerun::Values(delivered.values.iter().map(copy).collect())
            }
            _ => Rerun::Lost(delivered.count),
        }
    }

    /// Records the first delivery of `tick` (`values`, in delivery order).
    pub(crate) fn record<'v>(&mut self, tick: u64, values: impl ExactSizeIterator<Item = &'v T>)
    where
        T: 'v,
    {
        self.through = Some(tick);
        let count = values.len();
        if count > 0 {
            let values = match self.copy {
                Some(copy) => values.map(copy).collect(),
                None => Vec::new(),
            };
            self.ticks.push_back(Delivered {
                tick,
                count,
                values,
            });
        }
        let oldest = tick.saturating_sub(self.window);
        self.known_from = self.known_from.max(oldest);
        while self.ticks.front().is_some_and(|d| d.tick < oldest) {
            self.ticks.pop_front();
        }
    }
}
