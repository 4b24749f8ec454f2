//! The test components shared by the modules of this binary: `A`, `B` and
//! `C` (each a `u32`) and the zero-sized `Tag`. A module whose component of
//! one of these names has another shape (`B(u64)`, a unit `C`) declares its
//! own and imports only the others. Every test builds its own `Registry`, so
//! sharing the types between modules shares no state.

/// A component holding a `u32`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct A(pub(crate) u32);
/// A second component holding a `u32`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct B(pub(crate) u32);
/// A third component holding a `u32`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct C(pub(crate) u32);
/// A zero-sized marker component.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Tag;
