//! A delta save (`save_state_into` into a state already synced with the
//! registry) copies only the blocks of components whose summary says
//! they were written since. Every path that writes a tracked component
//! in place must leave that trace: here each one writes one entity far
//! from the others, and both a delta save and a restore of the live
//! registry (which reads the live pool's traces) must carry the write.

use ecs_engine::{Entity, Mut, Registry, RegistryState};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);

/// Entities with an `A`: four blocks of 16 dense positions.
const ENTITIES: usize = 64;
/// The entity each path writes: in the third block.
const TARGET: usize = 40;

fn types() -> Registry {
    let mut registry = Registry::new();
    registry.register_clone_delta::<A>();
    registry.register_clone::<B>();
    registry.track_changes::<A>();
    registry
}

/// `ENTITIES` entities with an `A`; only the target has a `B` (so a
/// view of `(&B, &mut A)` is driven by `B` and looks `A` up).
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = types();
    let e: Vec<Entity> = (0..ENTITIES as u32)
        .map(|i| registry.spawn((A(i),)))
        .collect();
    registry.insert(e[TARGET], B(0)).unwrap();
    (registry, e)
}

/// Every `A`, in dense order.
fn values(registry: &Registry) -> Vec<(Entity, A)> {
    registry
        .pool::<A>()
        .unwrap()
        .iter()
        .map(|(e, a)| (e, *a))
        .collect()
}

type Write = fn(&mut Registry, Entity, u32);

/// Each path, by name: it sets the entity's `A` to the value.
const PATHS: &[(&str, Write)] = &[
    ("Registry::get_mut", |r, e, v| {
        r.get_mut::<A>(e).unwrap().0 = v
    }),
    ("Registry::insert, replacing", |r, e, v| {
        r.insert(e, A(v)).unwrap();
    }),
    ("PoolMut::get_mut", |r, e, v| {
        r.pool_mut::<A>().get_mut(e).unwrap().0 = v;
    }),
    ("View<&mut A>::get_mut", |r, e, v| {
        r.view_mut::<&mut A>().get_mut(e).unwrap().0 = v;
    }),
    ("View<Mut<A>>::get_mut", |r, e, v| {
        r.view_mut::<Mut<A>>().get_mut(e).unwrap().0 = v;
    }),
    ("View<&mut A>::get_many_mut", |r, e, v| {
        let mut view = r.view_mut::<&mut A>();
        let [a] = view.get_many_mut([e]).unwrap();
        a.0 = v;
    }),
    ("each over (Entity, &mut A)", |r, e, v| {
        r.view_mut::<(Entity, &mut A)>().each(|(at, a)| {
            if at == e {
                a.0 = v;
            }
        });
    }),
    ("each over (Entity, Mut<A>), one deref", |r, e, v| {
        r.view_mut::<(Entity, Mut<A>)>().each(|(at, mut a)| {
            if at == e {
                a.0 = v;
            }
        });
    }),
    ("each over (&B, &mut A), driven by B", |r, _, v| {
        r.view_mut::<(&B, &mut A)>().each(|(_, a)| a.0 = v);
    }),
    ("each over (&B, Mut<A>), driven by B", |r, _, v| {
        r.view_mut::<(&B, Mut<A>)>().each(|(_, mut a)| a.0 = v);
    }),
    ("Registry::retain", |r, e, v| {
        r.retain::<(Entity, &mut A)>(|(at, a)| {
            if at == e {
                a.0 = v;
            }
            true
        });
    }),
    ("RegistryCell view, get_mut", |r, e, v| {
        let cell = r.cell();
        let mut view = cell.view::<&mut A>().unwrap();
        view.get_mut(e).unwrap().0 = v;
    }),
    ("RegistryCell view, each", |r, e, v| {
        let cell = r.cell();
        let mut view = cell.view::<(Entity, &mut A)>().unwrap();
        view.each(|(at, a)| {
            if at == e {
                a.0 = v;
            }
        });
    }),
];

/// Saves the world whole, writes the target through `write`, saves again
/// (a delta) and checks the state holds the write; then writes again and
/// restores, and checks the second write is undone. `Err` says which
/// step lost the write.
fn check_path(write: Write) -> Result<(), &'static str> {
    let (mut registry, e) = world();
    // No save may take the spawns for writes after it.
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    write(&mut registry, e[TARGET], 1_000);
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = values(&registry);
    assert_eq!(saved[TARGET], (e[TARGET], A(1_000)), "the path wrote");
    let mut fresh = types();
    fresh.restore_state(&state).unwrap();
    if values(&fresh) != saved {
        return Err("the delta save missed the write");
    }

    registry.advance_change_tick();
    write(&mut registry, e[TARGET], 2_000);
    registry.advance_change_tick();
    registry.restore_state(&state).unwrap();
    if values(&registry) != saved {
        return Err("the restore missed the write");
    }
    Ok(())
}

/// Checks every path of `paths`, naming those that failed.
fn check_paths(paths: &[(&str, Write)]) {
    let failed: Vec<String> = paths
        .iter()
        .filter_map(|&(name, write)| check_path(write).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn every_write_path_is_saved_and_restored_by_a_delta() {
    check_paths(PATHS);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global rayon pool trips crossbeam-epoch under Stacked Borrows; run with -Zmiri-tree-borrows"
)]
fn parallel_walks_are_saved_and_restored_by_a_delta() {
    check_paths(&[
        ("par_each over (Entity, &mut A)", |r, e, v| {
            r.view_mut::<(Entity, &mut A)>().par_each(|(at, a)| {
                if at == e {
                    a.0 = v;
                }
            });
        }),
        ("par_each over (Entity, Mut<A>)", |r, e, v| {
            r.view_mut::<(Entity, Mut<A>)>().par_each(|(at, mut a)| {
                if at == e {
                    a.0 = v;
                }
            });
        }),
    ]);
}
