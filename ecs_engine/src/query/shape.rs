//! [`QueryShape`]: which components a query's entities must have and
//! which they must lack, the proof that two queries visit disjoint
//! entities.

use std::any::TypeId;

use crate::{ComponentKey, QueryData, QueryFilter};

/// What a view's entities must have and lack: the components of its
/// required terms (`&T`, `&mut T`, [`Ref<T>`](crate::Ref),
/// [`Mut<T>`](crate::Mut), [`Untracked<T>`](crate::Untracked); not
/// `Option<_>` or [`Has<T>`](crate::Has)) and of its [`With`](crate::With),
/// [`Added`](crate::Added) and [`Changed`](crate::Changed) filters are
/// *required*; its [`Without`](crate::Without) filters are *excluded*.
/// Tuples of terms and filters combine their members; an
/// [`Or`](crate::Or) contributes nothing.
///
/// Two shapes are disjoint when one requires a component the other
/// excludes: no entity can match both, so two such views may borrow one
/// pool at once even when one writes it (the registry and the scheduler
/// both use this rule).
///
/// # Examples
///
/// ```
/// use ecs_engine::{QueryShape, With, Without};
///
/// struct Position(f32);
/// struct Enemy;
///
/// let movers = QueryShape::of::<&mut Position, Without<Enemy>>();
/// let enemies = QueryShape::of::<&Position, With<Enemy>>();
/// let everyone = QueryShape::of::<&Position, ()>();
/// let maybe_enemy = QueryShape::of::<Option<&Enemy>, ()>();
/// assert!(movers.is_disjoint(&enemies));
/// assert!(!movers.is_disjoint(&everyone));
/// // `Option<&Enemy>` does not require an `Enemy`.
/// assert!(!movers.is_disjoint(&maybe_enemy));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryShape {
    required: Vec<ComponentKey>,
    excluded: Vec<ComponentKey>,
}

impl QueryShape {
    /// A shape that requires and excludes nothing (disjoint from no
    /// other).
    pub fn new() -> Self {
        Self::default()
    }

    /// The shape of the view `View<Q, F>`.
    pub fn of<Q: QueryData, F: QueryFilter>() -> Self {
        let mut shape = QueryShape::new();
        let mut add = |type_id: TypeId, required: bool| {
            shape.add(ComponentKey::from(type_id), required);
        };
        Q::shape(&mut add);
        F::shape(&mut add);
        shape
    }

    /// The same shape, also requiring component `key` (for an access
    /// declared by hand).
    #[must_use]
    pub fn require(mut self, key: impl Into<ComponentKey>) -> Self {
        self.add(key.into(), true);
        self
    }

    /// The same shape, also excluding component `key`.
    #[must_use]
    pub fn exclude(mut self, key: impl Into<ComponentKey>) -> Self {
        self.add(key.into(), false);
        self
    }

    fn add(&mut self, key: ComponentKey, required: bool) {
        let list = if required {
            &mut self.required
        } else {
            &mut self.excluded
        };
        if !list.contains(&key) {
            list.push(key);
        }
    }

    /// The components every matching entity has.
    pub fn required(&self) -> &[ComponentKey] {
        &self.required
    }

    /// The components no matching entity has.
    pub fn excluded(&self) -> &[ComponentKey] {
        &self.excluded
    }

    /// `true` when no entity can match both shapes: one requires a
    /// component the other excludes.
    pub fn is_disjoint(&self, other: &QueryShape) -> bool {
        self.required.iter().any(|k| other.excluded.contains(k))
            || other.required.iter().any(|k| self.excluded.contains(k))
    }
}
