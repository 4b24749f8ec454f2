//! [`Access`]: how a component pool or a resource is borrowed, for reading
//! or for writing.

/// How a component pool or a resource is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Shared access: any number of readers at once.
    Read,
    /// Exclusive access: one writer and no reader.
    Write,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "for reading",
            Access::Write => "for writing",
        })
    }
}
