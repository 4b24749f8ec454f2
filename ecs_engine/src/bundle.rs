//! Bundles: tuples of components spawned or inserted together, and used as
//! type lists in `has::<(A, B)>()`.

use crate::panic::FirstPanic;
use crate::storage::pools::typed_mut;
use crate::{Component, EcsError, Entity, Registry};

mod sealed {
    pub trait Sealed {}
}

/// A tuple of 0 to 12 components, inserted together by
/// [`Registry::spawn`] and [`Registry::insert_bundle`]; the type alone lists
/// component types for [`Registry::has`] and [`Registry::remove_bundle`].
///
/// Implemented for tuples only (sealed): a single component is `(c,)`.
/// A bundle that names one type twice, e.g. `(A(1), A(2))`, is refused by
/// every spawn and insert ([`EcsError::DuplicateBundleComponent`], or a
/// panic from the infallible [`Registry::spawn`]), as bevy refuses it; as
/// a type list (`has`, `remove_bundle`) it is accepted. So is a bundle
/// holding a type that cannot be a component ([`EcsError::NotAComponent`]):
/// a nested tuple (bundles do not flatten: write `(A, B, C)`, not
/// `((A, B), C)`), an [`Entity`] or a `&'static str`.
///
/// ```
/// use ecs_engine::{EcsError, Registry};
///
/// struct A;
/// struct B;
/// let mut registry = Registry::new();
/// let nested = registry.try_spawn(((A, B), 1_u32)).unwrap_err();
/// assert!(matches!(nested, EcsError::NotAComponent { .. }), "{nested}");
/// assert_eq!(registry.len(), 0);
/// registry.try_spawn((A, B, 1_u32)).unwrap();
/// ```
pub trait Bundle: sealed::Sealed + Send + Sync + 'static {
    /// Number of components in the bundle.
    const LEN: usize;

    #[doc(hidden)]
    fn insert_into(self, registry: &mut Registry, entity: Entity);

    /// `true` when the bundle holds a [`ChildOf`](crate::ChildOf) or
    /// [`Children`](crate::Children) value, which the registry refuses to
    /// insert outside its hierarchy methods.
    #[doc(hidden)]
    fn names_hierarchy() -> bool {
        false
    }

    #[doc(hidden)]
    fn reserve(registry: &mut Registry, additional: usize);

    /// Spawns one entity per bundle left in `bundles`, each pool found
    /// and grown once.
    #[doc(hidden)]
    fn spawn_all<Iter: Iterator<Item = Self>>(
        registry: &mut Registry,
        bundles: &mut Iter,
    ) -> Result<(), EcsError>;

    #[doc(hidden)]
    fn spawn_reserved_batch<Iter: Iterator<Item = Self>>(
        registry: &mut Registry,
        entities: &[Entity],
        bundles: &mut Iter,
    ) -> Result<(), (usize, EcsError)>;

    #[doc(hidden)]
    fn contained_in(registry: &Registry, entity: Entity) -> bool;

    /// `true` when one of the bundle's types has required components.
    #[doc(hidden)]
    fn has_required(registry: &Registry) -> bool;

    /// Inserts the required components of the bundle's types that
    /// `entity` lacks (one check when the registry has none).
    #[doc(hidden)]
    fn fill_required(registry: &mut Registry, entity: Entity);

    #[doc(hidden)]
    fn remove_from(registry: &mut Registry, entity: Entity);

    /// `true` when `ty` is the type of one of the bundle's components
    /// (folded to a few compares per bundle type).
    #[doc(hidden)]
    fn has_type(ty: std::any::TypeId) -> bool;

    /// The name of the first component type the bundle names a second
    /// time, `None` when its types are distinct (compares of constant type
    /// ids, folded per bundle type).
    #[doc(hidden)]
    fn duplicate() -> Option<&'static str>;

    /// The name of the first of the bundle's types that cannot be a
    /// component (a nested tuple, an [`Entity`] or a `&'static str`) and
    /// why, `None` when every type can (folded per bundle type).
    #[doc(hidden)]
    fn not_a_component() -> Option<(&'static str, &'static str)>;
}

macro_rules! bundle_tuple {
    ($($name:ident $pool:ident),*) => {
        impl<$($name: Component),*> sealed::Sealed for ($($name,)*) {}

        impl<$($name: Component),*> Bundle for ($($name,)*) {
            const LEN: usize = 0 $(+ { let _ = stringify!($name); 1 })*;

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "fields named after their types; the empty tuple binds nothing and mutates nothing")]
            fn insert_into(self, registry: &mut Registry, entity: Entity) {
                let ($($name,)*) = self;
                // Every value goes in before any replaced one is dropped, so
                // a panicking `Drop` cannot stop the bundle half-inserted.
                $( let $name = registry.pools.get_or_create::<$name>().insert_live(entity, $name); )*
                let mut panic = FirstPanic::default();
                $( if let Some(old) = $name { panic.run(move || drop(old)); } )*
                panic.resume();
            }

            fn names_hierarchy() -> bool {
                false $(|| crate::hierarchy::is_hierarchy::<$name>())*
            }

            #[allow(unused_variables, reason = "the empty tuple has no type to compare")]
            #[inline]
            fn has_type(ty: std::any::TypeId) -> bool {
                false $(|| std::any::TypeId::of::<$name>() == ty)*
            }

            #[inline]
            fn duplicate() -> Option<&'static str> {
                let types: &[(std::any::TypeId, &'static str)] =
                    &[$((std::any::TypeId::of::<$name>(), std::any::type_name::<$name>())),*];
                for (i, &(ty, name)) in types.iter().enumerate() {
                    if types[..i].iter().any(|&(seen, _)| seen == ty) {
                        return Some(name);
                    }
                }
                None
            }

            #[inline]
            fn not_a_component() -> Option<(&'static str, &'static str)> {
                $(
                    if let Some(reason) = crate::component::not_a_component::<$name>() {
                        return Some((std::any::type_name::<$name>(), reason));
                    }
                )*
                None
            }

            #[allow(unused_variables, reason = "the empty tuple has no type to look up")]
            fn has_required(registry: &Registry) -> bool {
                false $(|| registry.required.has(std::any::TypeId::of::<$name>()))*
            }

            #[allow(unused_variables, reason = "the empty tuple has no type to look up")]
            #[inline]
            fn fill_required(registry: &mut Registry, entity: Entity) {
                if !registry.required.is_empty() {
                    crate::required::fill_types(registry, entity, &[$(std::any::TypeId::of::<$name>()),*]);
                }
            }

            #[allow(unused_variables, reason = "the empty tuple uses none of its arguments")]
            fn reserve(registry: &mut Registry, additional: usize) {
                $( registry.pools.get_or_create::<$name>().reserve(additional); )*
            }

            #[allow(non_snake_case, unused_variables, reason = "fields named after their types; the empty tuple binds nothing")]
            fn spawn_all<Iter: Iterator<Item = Self>>(
                registry: &mut Registry,
                bundles: &mut Iter,
            ) -> Result<(), EcsError> {
                if let Some(error) = crate::hierarchy::refuse_bundle::<Self>() {
                    return Err(error);
                }
                let ids = [$(registry.pools.register::<$name>()),*];
                let Registry { allocator, pools, .. } = registry;
                // Distinct types: a bundle naming one twice was refused
                // above.
                let [$($pool),*] = pools
                    .disjoint_mut(ids)
                    .expect("a bundle's types are distinct (refuse_bundle)");
                let additional = bundles.size_hint().0;
                $( let $pool = typed_mut::<$name>($pool); $pool.reserve(additional); )*
                // Freed slots first (as `allocate` hands them out), one by
                // one; then fresh slots as one range; then, if the limits
                // cut that range, the rest one by one (which meets the
                // limit's error).
                let mut result = Ok(());
                for phase in 0..2 {
                    let starts = [$($pool.len(),)* 0usize];
                    let take = if phase == 0 { allocator.free_len() } else { usize::MAX };
                    for bundle in bundles.by_ref().take(take) {
                        let entity = match allocator.allocate() {
                            Ok(entity) => entity,
                            Err(error) => {
                                result = Err(error);
                                break;
                            }
                        };
                        let ($($name,)*) = bundle;
                        $( $pool.push_new(entity, $name); )*
                    }
                    let starts = &mut starts.into_iter();
                    $( $pool.pushed_since(starts.next().unwrap_or(0)); )*
                    if result.is_err() || phase == 1 {
                        break;
                    }
                    let Some((first, room)) = allocator.fresh_run() else {
                        continue;
                    };
                    // No freed slot waits: the batch takes fresh slots in
                    // index order, so each value is written once, to its
                    // column, and the handles, sparse slots and alive bits
                    // are written afterwards, range by range. The guard
                    // does that even if the bundles' iterator panics.
                    struct Fresh<'a, $($name: Component),*> {
                        allocator: &'a mut crate::EntityAllocator,
                        pools: ($(&'a mut crate::SparseSet<$name>,)*),
                        first: u32,
                        count: u32,
                    }
                    impl<$($name: Component),*> Drop for Fresh<'_, $($name),*> {
                        fn drop(&mut self) {
                            self.allocator.allocate_fresh(self.first, self.count);
                            let ($($pool,)*) = &mut self.pools;
                            $( $pool.adopt_fresh(self.first, self.count); )*
                        }
                    }
                    let mut fresh = Fresh {
                        allocator: &mut *allocator,
                        pools: ($(&mut *$pool,)*),
                        first,
                        count: 0,
                    };
                    for bundle in bundles.by_ref().take(room) {
                        let ($($name,)*) = bundle;
                        let ($($pool,)*) = &mut fresh.pools;
                        $( $pool.push_pending($name); )*
                        fresh.count += 1;
                    }
                    let count = fresh.count as usize;
                    drop(fresh);
                    if count < room {
                        break;
                    }
                }
                result
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "fields named after their types; the empty tuple binds nothing")]
            fn spawn_reserved_batch<Iter: Iterator<Item = Self>>(
                registry: &mut Registry,
                entities: &[Entity],
                bundles: &mut Iter,
            ) -> Result<(), (usize, EcsError)> {
                if let Some(error) = crate::hierarchy::refuse_bundle::<Self>() {
                    // The first spawn is refused: its bundle dropped, its
                    // handle given back.
                    let _ = bundles.next();
                    if let Some(&entity) = entities.first() {
                        let _ = registry.allocator.cancel(entity);
                    }
                    return Err((0, error));
                }
                let ids = [$(registry.pools.register::<$name>()),*];
                let Registry { allocator, pools, .. } = registry;
                // Distinct types: a bundle naming one twice was refused
                // above.
                let [$($pool),*] = pools
                    .disjoint_mut(ids)
                    .expect("a bundle's types are distinct (refuse_bundle)");
                // Each pool is found once per batch and grown once.
                $( let $pool = typed_mut::<$name>($pool); $pool.reserve(entities.len()); )*
                for (k, &entity) in entities.iter().enumerate() {
                    let Some(bundle) = bundles.next() else { break };
                    if let Err(error) = allocator.activate(entity) {
                        return Err((k, error));
                    }
                    let ($($name,)*) = bundle;
                    $( drop($pool.insert_live(entity, $name)); )*
                }
                Ok(())
            }

            #[allow(unused_variables, reason = "the empty tuple uses none of its arguments")]
            fn contained_in(registry: &Registry, entity: Entity) -> bool {
                registry.is_alive(entity)
                    $( && registry.pools.get::<$name>().is_some_and(|p| p.contains(entity)) )*
            }

            #[allow(unused_variables, unused_mut, reason = "the empty tuple uses none of its arguments")]
            fn remove_from(registry: &mut Registry, entity: Entity) {
                // Each removed value is dropped after it left its pool; a
                // panicking `Drop` does not stop the other removals.
                let mut panic = FirstPanic::default();
                $(
                    if let Some(old) = crate::hierarchy::remove_component::<$name>(registry, entity) {
                        panic.run(move || drop(old));
                    }
                )*
                panic.resume();
            }
        }
    };
}

bundle_tuple!();
bundle_tuple!(A a);
bundle_tuple!(A a, B b);
bundle_tuple!(A a, B b, C c);
bundle_tuple!(A a, B b, C c, D d);
bundle_tuple!(A a, B b, C c, D d, E e);
bundle_tuple!(A a, B b, C c, D d, E e, F f);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g, H h);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g, H h, I i);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k);
bundle_tuple!(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l);

/// The handles of a [`Registry::spawn_batch`], spawned as the iterator is
/// advanced (the first step grows each pool once, from the bundles'
/// lower size hint); whatever is left is spawned when it drops, with each
/// pool found and grown once. Dropping it at once (`registry.spawn_batch(..);`)
/// spawns the whole batch on that fast path and allocates no list of
/// handles; `.collect::<Vec<_>>()` gives the handles, in order.
///
/// # Panics
///
/// Advancing it, or dropping it, panics when the live-entity limit is
/// reached (the entities spawned before stay alive; the rest of the batch
/// is dropped), or when the bundles hold a [`ChildOf`](crate::ChildOf) or
/// [`Children`](crate::Children) value (nothing is spawned).
pub struct SpawnBatch<'r, B: Bundle, I: Iterator<Item = B>> {
    pub(crate) registry: &'r mut Registry,
    pub(crate) bundles: I,
    /// `false` until the first handle is taken; that call grows each pool
    /// once for the iterator's lower size hint, so a collected batch does
    /// not grow its pools by doubling.
    pub(crate) grown: bool,
}

impl<B: Bundle, I: Iterator<Item = B>> std::fmt::Debug for SpawnBatch<'_, B, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnBatch")
            .field("bundle", &std::any::type_name::<B>())
            .field("left", &self.bundles.size_hint())
            .finish()
    }
}

impl<B: Bundle, I: Iterator<Item = B>> Iterator for SpawnBatch<'_, B, I> {
    type Item = Entity;

    #[track_caller]
    fn next(&mut self) -> Option<Entity> {
        let bundle = self.bundles.next()?;
        if !self.grown {
            self.grown = true;
            // A refused bundle (one naming the hierarchy) creates no pool.
            if !B::names_hierarchy() {
                let additional = self.bundles.size_hint().0.saturating_add(1);
                B::reserve(self.registry, additional);
                self.registry.allocator.reserve_slots(additional);
            }
        }
        Some(self.registry.spawn(bundle))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.bundles.size_hint()
    }
}

impl<B: Bundle, I: ExactSizeIterator<Item = B>> ExactSizeIterator for SpawnBatch<'_, B, I> {}

impl<B: Bundle, I: Iterator<Item = B>> Drop for SpawnBatch<'_, B, I> {
    fn drop(&mut self) {
        let result = if B::has_required(self.registry) {
            // Required components: one entity at a time.
            let registry = &mut *self.registry;
            self.bundles
                .by_ref()
                .try_for_each(|bundle| registry.try_spawn(bundle).map(drop))
        } else {
            B::spawn_all(self.registry, &mut self.bundles)
        };
        if let Err(error) = result
            && !std::thread::panicking()
        {
            panic!("Registry::spawn_batch: {error}");
        }
    }
}
