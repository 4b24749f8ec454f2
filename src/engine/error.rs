//! The one error type of the [`Engine`](crate::Engine): every failure of
//! the parts it drives, as a value.

use scheduler::{BuildError, RunError};

/// Why building an engine or running a tick failed.
///
/// The scheduler's errors are carried unchanged, so a caller can match on
/// the exact variant (`EngineError::Build(BuildError::Cycle { .. })`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// [`EngineBuilder::threads`](crate::EngineBuilder::threads) was given 0.
    #[error("the engine needs at least one thread, got 0")]
    ZeroThreads,
    /// [`EngineBuilder::step`](crate::EngineBuilder::step) was given a step
    /// that is not a finite number of seconds above zero.
    #[error("the fixed step must be a finite number of seconds above 0, got {step}")]
    InvalidStep {
        /// The refused step, in seconds.
        step: f64,
    },
    /// A unique [`Plugin`](crate::Plugin) was added twice (its systems
    /// would run twice); the second was not built.
    #[error("the plugin `{name}` was added twice")]
    DuplicatePlugin {
        /// The plugin's [`name`](crate::Plugin::name).
        name: String,
    },
    /// The schedule could not be built (duplicate names, an unknown
    /// `before`/`after` target, a cycle).
    #[error("cannot build the schedule: {0}")]
    Build(#[from] BuildError),
    /// A tick stopped: a system returned an error or panicked.
    #[error(transparent)]
    Run(#[from] RunError),
}
