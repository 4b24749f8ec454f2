//! Bundles: tuples of components spawned or inserted together, and used as
//! type lists in `has::<(A, B)>()`.

use crate::{Component, Entity, Registry};

mod sealed {
    pub trait Sealed {}
}

/// A tuple of 0 to 12 components, inserted together by
/// [`Registry::spawn`] and [`Registry::insert_bundle`]; the type alone lists
/// component types for [`Registry::has`] and [`Registry::remove_bundle`].
///
/// Implemented for tuples only (sealed): a single component is `(c,)`.
/// Duplicate types in one bundle are allowed; the last value wins.
pub trait Bundle: sealed::Sealed + Send + Sync + 'static {
    /// Number of components in the bundle.
    const LEN: usize;

    #[doc(hidden)]
    fn insert_into(self, registry: &mut Registry, entity: Entity);

    #[doc(hidden)]
    fn reserve(registry: &mut Registry, additional: usize);

    #[doc(hidden)]
    fn contained_in(registry: &Registry, entity: Entity) -> bool;

    #[doc(hidden)]
    fn remove_from(registry: &mut Registry, entity: Entity);
}

macro_rules! bundle_tuple {
    ($($name:ident),*) => {
        impl<$($name: Component),*> sealed::Sealed for ($($name,)*) {}

        impl<$($name: Component),*> Bundle for ($($name,)*) {
            const LEN: usize = 0 $(+ { let _ = stringify!($name); 1 })*;

            #[allow(non_snake_case, unused_variables)]
            fn insert_into(self, registry: &mut Registry, entity: Entity) {
                let ($($name,)*) = self;
                $( registry.pools.get_or_create::<$name>().insert(entity, $name); )*
            }

            #[allow(unused_variables)]
            fn reserve(registry: &mut Registry, additional: usize) {
                $( registry.pools.get_or_create::<$name>().reserve(additional); )*
            }

            #[allow(unused_variables)]
            fn contained_in(registry: &Registry, entity: Entity) -> bool {
                registry.is_alive(entity)
                    $( && registry.pools.get::<$name>().is_some_and(|p| p.contains(entity)) )*
            }

            #[allow(unused_variables)]
            fn remove_from(registry: &mut Registry, entity: Entity) {
                $( if let Some(pool) = registry.pools.get_mut::<$name>() { pool.remove(entity); } )*
            }
        }
    };
}

bundle_tuple!();
bundle_tuple!(A);
bundle_tuple!(A, B);
bundle_tuple!(A, B, C);
bundle_tuple!(A, B, C, D);
bundle_tuple!(A, B, C, D, E);
bundle_tuple!(A, B, C, D, E, F);
bundle_tuple!(A, B, C, D, E, F, G);
bundle_tuple!(A, B, C, D, E, F, G, H);
bundle_tuple!(A, B, C, D, E, F, G, H, I);
bundle_tuple!(A, B, C, D, E, F, G, H, I, J);
bundle_tuple!(A, B, C, D, E, F, G, H, I, J, K);
bundle_tuple!(A, B, C, D, E, F, G, H, I, J, K, L);
