//! Code the root integration tests share.

pub(crate) mod game;
