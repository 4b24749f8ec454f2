//! Helpers shared by the scheduler's test files.

use scheduler::Schedule;

/// The names of each wave's systems, in registration order.
pub(crate) fn wave_names(schedule: &Schedule) -> Vec<Vec<String>> {
    schedule
        .waves()
        .into_iter()
        .map(|w| w.into_iter().map(|(_, n)| n.to_owned()).collect())
        .collect()
}
