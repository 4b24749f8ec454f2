//! Disjoint borrows: two borrows of one component type, at least one
//! writing, do not conflict when their queries' shapes are disjoint (one
//! requires a component the other excludes, [`QueryShape::is_disjoint`]):
//! no entity is reached by both. The registry lets such views share the
//! pool (its claims, the same rule), so the scheduler accepts them in one
//! system and runs such systems in one wave.
//!
//! A borrow without a shape (declared by hand, or a change-tracking term
//! or filter: `Ref`, `Mut`, `Added`, `Changed`, `RemovedComponents`,
//! which read or write tick arrays as a whole) is disjoint from nothing.

use std::borrow::Cow;
use std::sync::Arc;

use ecs_engine::{Access, ComponentAccess, ComponentKey, QueryShape};

use super::SystemAccess;

/// One borrow of a component type by one parameter.
#[derive(Debug, Clone)]
pub(super) struct Borrow {
    key: ComponentKey,
    name: Cow<'static, str>,
    access: Access,
    shape: Option<Arc<QueryShape>>,
}

impl Borrow {
    /// A borrow proven disjoint from nothing.
    pub(super) fn opaque(c: &ComponentAccess) -> Borrow {
        Borrow {
            key: c.key,
            name: c.name.clone(),
            access: c.access,
            shape: None,
        }
    }

    /// `true` when the two borrow the same type, one writes, and their
    /// shapes do not prove them disjoint.
    fn conflicts(&self, other: &Borrow) -> bool {
        let disjoint = match (&self.shape, &other.shape) {
            (Some(a), Some(b)) => a.is_disjoint(b),
            _ => false,
        };
        self.key == other.key
            && (self.access == Access::Write || other.access == Access::Write)
            && !disjoint
    }
}

impl SystemAccess {
    /// Adds the component accesses of one query, whose views are shaped
    /// `shape` ([`QueryShape::of`]): a borrow that another parameter's
    /// borrow of the same type conflicts with (one writes, and the shapes
    /// are not disjoint) is a clash, which
    /// [`ScheduleBuilder::build`](crate::ScheduleBuilder::build) reports.
    /// Change-tracking accesses (`track` set) keep no shape.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Access, ComponentAccess, QueryShape, With, Without};
    /// use scheduler::SystemAccess;
    ///
    /// struct Position(f32);
    /// struct Enemy;
    ///
    /// let mut access = SystemAccess::new();
    /// access.add_query(
    ///     &[ComponentAccess::of::<Position>(Access::Write), ComponentAccess::of::<Enemy>(Access::Read)],
    ///     QueryShape::of::<&mut Position, Without<Enemy>>(),
    /// );
    /// access.add_query(
    ///     &[ComponentAccess::of::<Position>(Access::Read), ComponentAccess::of::<Enemy>(Access::Read)],
    ///     QueryShape::of::<&Position, With<Enemy>>(),
    /// );
    /// assert!(access.clashes().is_empty());
    /// // Without the filters, the same two borrows clash.
    /// access.add_component_borrow(ComponentAccess::of::<Position>(Access::Read));
    /// assert_eq!(access.clashes().len(), 1);
    /// ```
    pub fn add_query(&mut self, components: &[ComponentAccess], shape: QueryShape) {
        let shape = Arc::new(shape);
        for c in components {
            let shaped = c.track.is_none().then(|| Arc::clone(&shape));
            self.add_shaped_borrow(c.clone(), shaped);
        }
    }

    /// Adds one borrow, recording a clash with a conflicting earlier one.
    pub(super) fn add_shaped_borrow(
        &mut self,
        new: ComponentAccess,
        shape: Option<Arc<QueryShape>>,
    ) {
        let borrow = Borrow {
            key: new.key,
            name: new.name.clone(),
            access: new.access,
            shape,
        };
        if self.borrows.iter().any(|b| b.conflicts(&borrow)) {
            self.clashes.push(new.name.clone());
        }
        self.borrows.push(borrow);
        self.merge_component(new);
    }

    /// Adds the members of a [`ParamSet`](crate::ParamSet): borrowed one
    /// at a time, they are checked against the parameters declared before
    /// the set, not against each other (each member's own clashes are
    /// kept).
    pub(crate) fn add_param_set(&mut self, members: &[SystemAccess]) {
        for member in members {
            self.clashes.extend(member.clashes.iter().cloned());
            for b in &member.borrows {
                if self.borrows.iter().any(|mine| mine.conflicts(b)) {
                    self.clashes.push(b.name.clone());
                }
            }
            for r in &member.resources {
                let old = self.resources.iter().find(|o| o.type_id == r.type_id);
                if old.is_some_and(|old| old.access.max(r.access) == Access::Write) {
                    self.clashes.push(Cow::Borrowed(r.name));
                }
            }
        }
        for member in members {
            self.merge(member);
        }
    }

    /// For component `key`: whether every borrow of it has a shape, and
    /// whether one of those shapes excludes a component (what a disjoint
    /// pair needs on one side).
    pub(crate) fn shaped_on(&self, key: ComponentKey) -> (bool, bool) {
        let mut borrows = self.borrows.iter().filter(|b| b.key == key).peekable();
        let any = borrows.peek().is_some();
        let (mut shaped, mut excludes) = (any, false);
        for b in borrows {
            match &b.shape {
                Some(shape) => excludes |= !shape.excluded().is_empty(),
                None => shaped = false,
            }
        }
        (shaped, excludes)
    }

    /// `true` when every borrow of component `key` by `self` and by
    /// `other` pair up without conflict (both read, or disjoint shapes),
    /// and both borrow it.
    pub(crate) fn disjoint_on(&self, other: &SystemAccess, key: ComponentKey) -> bool {
        let mine = || self.borrows.iter().filter(move |b| b.key == key);
        let theirs = || other.borrows.iter().filter(move |b| b.key == key);
        mine().next().is_some()
            && theirs().next().is_some()
            && mine().all(|a| theirs().all(|b| !a.conflicts(b)))
    }
}
