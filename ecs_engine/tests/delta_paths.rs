//! Delta saves (`change/stamps.rs`): a delta copies only the blocks of
//! dense positions whose summary says they were written since, so every
//! path that writes a tracked component in place must leave that trace.
//! Each path here writes one entity far from position 0 of a type
//! registered with `register_clone_delta`, in a world of several groups
//! of 1,024 positions; then a delta save (into a `RegistryState` or a
//! `StateRing`), a restore into a fresh registry, and a restore of the
//! live registry after another write, each compared value by value with
//! what the live world held.
//!
//! Also sequences of restores and saves (ring restores to older frames,
//! one after another), wrap-around of the change tick, clamps,
//! `import_pool_ticks` and `restore_change_clock`. Under Miri only the
//! parallel walks run (Tree Borrows lane: the stamps several threads
//! store), in a world of three blocks, through states only; the other tests would take minutes
//! there, and their unsafe paths are Miri's in `views.rs`,
//! `change_paths.rs` and `state.rs`.

// Under Miri, only the parallel test and what it uses are compiled in.
#![cfg_attr(miri, allow(dead_code, unused_imports))]

use ecs_engine::{
    ChangeTick, Changed, Entity, Mut, Registry, RegistryState, StateRing, Untracked, With, Without,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct C(u32);

/// Entities with an `A`: three groups of 1,024 and a bit (under Miri,
/// three blocks of 16).
const ENTITIES: usize = if cfg!(miri) { 48 } else { 3_300 };
/// The entity each path writes: in the third group (under Miri, the
/// third block).
const TARGET: usize = ENTITIES * 3 / 4 + 7;
/// A step between other entities written, a sixteenth of the world.
const APART: usize = ENTITIES / 16;

fn types() -> Registry {
    let mut registry = Registry::new();
    registry.register_clone_delta::<A>();
    registry.register_clone::<B>();
    registry.register_clone_delta::<C>();
    registry.track_changes::<A>();
    registry.track_changes::<B>();
    registry.track_changes::<C>();
    registry
}

/// `ENTITIES` entities with an `A`; only the target has a `B`; every
/// third one has a `C` (the target too).
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = types();
    let e: Vec<Entity> = (0..ENTITIES as u32)
        .map(|i| registry.spawn((A(i),)))
        .collect();
    registry.insert(e[TARGET], B(0)).unwrap();
    for (i, &entity) in e.iter().enumerate() {
        if i % 3 == 0 || i == TARGET {
            registry.insert(entity, C(i as u32)).unwrap();
        }
    }
    (registry, e)
}

/// Every `A` and `C`, in dense order, with the live handles.
type Contents = (Vec<Entity>, Vec<(Entity, A)>, Vec<(Entity, C)>);

fn contents(registry: &Registry) -> Contents {
    (
        registry.entities().iter().collect(),
        registry
            .pool::<A>()
            .map(|p| p.iter().map(|(e, a)| (e, *a)).collect())
            .unwrap_or_default(),
        registry
            .pool::<C>()
            .map(|p| p.iter().map(|(e, c)| (e, *c)).collect())
            .unwrap_or_default(),
    )
}

/// The positions where two contents differ, for a readable failure.
fn diff(got: &Contents, want: &Contents) -> String {
    if got.0 != want.0 {
        return format!("live entities differ ({} vs {})", got.0.len(), want.0.len());
    }
    let a: Vec<_> = got
        .1
        .iter()
        .zip(&want.1)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("A at {i}: got {:?} want {:?}", g.1, w.1))
        .take(4)
        .collect();
    let c: Vec<_> = got
        .2
        .iter()
        .zip(&want.2)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("C at {i}: got {:?} want {:?}", g.1, w.1))
        .take(4)
        .collect();
    format!(
        "{a:?} {c:?} (lens A {} {}, C {} {})",
        got.1.len(),
        want.1.len(),
        got.2.len(),
        want.2.len()
    )
}

/// `Err` naming `what` and the first differences when `got` is not
/// `want`.
fn same(got: &Contents, want: &Contents, what: &str) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: {}", diff(got, want)))
    }
}

/// What a fresh registry restored from `state` holds.
fn restored(state: &RegistryState) -> Contents {
    let mut fresh = types();
    fresh.restore_state(state).unwrap();
    contents(&fresh)
}

type Write = fn(&mut Registry, &[Entity], u32);

fn set(a: &mut A, v: u32) {
    a.0 = v;
}

/// Each path, by name: it sets the target's `A` to the value.
const PATHS: &[(&str, Write)] = &[
    ("Registry::get_mut", |r, e, v| {
        set(r.get_mut::<A>(e[TARGET]).unwrap(), v)
    }),
    ("Registry::component_mut", |r, e, v| {
        set(r.component_mut::<A>(e[TARGET]).unwrap(), v)
    }),
    ("Registry::insert, replacing", |r, e, v| {
        r.insert(e[TARGET], A(v)).unwrap();
    }),
    ("Registry::insert_many, replacing", |r, e, v| {
        let (n, res) = r.insert_many(&mut [(e[TARGET], A(v))].into_iter());
        assert_eq!(n, 1);
        res.unwrap();
    }),
    ("Registry::insert_bundle, replacing", |r, e, v| {
        r.insert_bundle(e[TARGET], (A(v), B(v))).unwrap();
    }),
    ("PoolMut::get_mut", |r, e, v| {
        set(r.pool_mut::<A>().get_mut(e[TARGET]).unwrap(), v)
    }),
    ("PoolMut::insert, replacing", |r, e, v| {
        r.pool_mut::<A>().insert(e[TARGET], A(v)).unwrap();
    }),
    ("View<&mut A>::get_mut", |r, e, v| {
        set(r.view_mut::<&mut A>().get_mut(e[TARGET]).unwrap(), v)
    }),
    ("View<&mut A>::get", |r, e, v| {
        set(r.view_mut::<&mut A>().get(e[TARGET]).unwrap(), v)
    }),
    ("View<Mut<A>>::get_mut", |r, e, v| {
        r.view_mut::<Mut<A>>().get_mut(e[TARGET]).unwrap().0 = v;
    }),
    ("View<(Entity, Option<&mut A>)>::get_mut", |r, e, v| {
        let mut view = r.view_mut::<(Entity, Option<&mut A>)>();
        set(view.get_mut(e[TARGET]).unwrap().1.unwrap(), v);
    }),
    ("View<&mut A>::get_many_mut, two far apart", |r, e, v| {
        let mut view = r.view_mut::<&mut A>();
        let [a, _b] = view.get_many_mut([e[TARGET], e[3]]).unwrap();
        a.0 = v;
    }),
    ("View<(&mut A, &mut C)>::get_many_mut", |r, e, v| {
        let mut view = r.view_mut::<(&mut A, &mut C)>();
        let [(a, _c)] = view.get_many_mut([e[TARGET]]).unwrap();
        a.0 = v;
    }),
    ("each over (Entity, &mut A)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &mut A)>().each(|(at, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("iter over (Entity, &mut A)", |r, e, v| {
        let t = e[TARGET];
        for (at, a) in r.view_mut::<(Entity, &mut A)>().iter() {
            if at == t {
                a.0 = v;
            }
        }
    }),
    (
        "iter over (Entity, &mut A), stops after the target",
        |r, e, v| {
            let t = e[TARGET];
            let mut view = r.view_mut::<(Entity, &mut A)>();
            let (_, a) = view.iter().find(|(at, _)| *at == t).unwrap();
            a.0 = v;
        },
    ),
    ("each over (Entity, Mut<A>)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, Mut<A>)>().each(|(at, mut a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("iter over (Entity, Mut<A>)", |r, e, v| {
        let t = e[TARGET];
        for (at, mut a) in r.view_mut::<(Entity, Mut<A>)>().iter() {
            if at == t {
                a.0 = v;
            }
        }
    }),
    ("each_with_entity over Mut<A>", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<Mut<A>>().each_with_entity(|at, mut a| {
            if at == t {
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
    ("each over (&B, Option<&mut A>), driven by B", |r, _, v| {
        r.view_mut::<(&B, Option<&mut A>)>()
            .each(|(_, a)| a.unwrap().0 = v);
    }),
    ("each over (Entity, &C, Option<&mut A>)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &C, Option<&mut A>)>()
            .each(|(at, _, a)| {
                if at == t {
                    a.unwrap().0 = v;
                }
            });
    }),
    (
        "each over (Entity, Option<&mut A>), no driver",
        |r, e, v| {
            let t = e[TARGET];
            r.view_mut::<(Entity, Option<&mut A>)>().each(|(at, a)| {
                if at == t {
                    a.unwrap().0 = v;
                }
            });
        },
    ),
    (
        "each over (Entity, &mut C, &mut A), driven by C",
        |r, e, v| {
            let t = e[TARGET];
            r.view_mut::<(Entity, &mut C, &mut A)>().each(|(at, _, a)| {
                if at == t {
                    a.0 = v;
                }
            });
        },
    ),
    ("each over (Entity, &C, Mut<A>), driven by C", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &C, Mut<A>)>().each(|(at, _, mut a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("view_filtered<&mut A, With<B>>", |r, _, v| {
        r.view_filtered::<&mut A, With<B>>().each(|a| a.0 = v);
    }),
    (
        "view_filtered<(Entity, &mut A), Without<B>> (misses), then With<C>",
        |r, e, v| {
            let t = e[TARGET];
            r.view_filtered::<(Entity, &mut A), Without<B>>()
                .each(|(at, _)| assert_ne!(at, t));
            r.view_filtered::<(Entity, &mut A), With<C>>()
                .each(|(at, a)| {
                    if at == t {
                        a.0 = v;
                    }
                });
        },
    ),
    ("view_mut_since<(Entity, &mut A), Changed<B>>", |r, e, v| {
        let since = r.change_tick();
        r.advance_change_tick();
        r.get_mut::<B>(e[TARGET]).unwrap().0 += 1;
        r.view_mut_since::<(Entity, &mut A), Changed<B>>(since)
            .each(|(_, a)| a.0 = v);
    }),
    (
        "view_mut_since<&mut A, Changed<A>> (opaque claim)",
        |r, e, v| {
            let since = r.change_tick();
            r.advance_change_tick();
            r.get_mut::<A>(e[TARGET]).unwrap();
            r.view_mut_since::<&mut A, Changed<A>>(since)
                .each(|a| a.0 = v);
        },
    ),
    ("Registry::retain", |r, e, v| {
        let t = e[TARGET];
        r.retain::<(Entity, &mut A)>(|(at, a)| {
            if at == t {
                a.0 = v;
            }
            true
        });
    }),
    ("Registry::visit with Mut<A>", |r, e, v| {
        let t = e[TARGET];
        r.visit::<(Entity, Mut<A>)>(|_, (at, mut a), _| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("RegistryCell view, get_mut", |r, e, v| {
        let cell = r.cell();
        let mut view = cell.view::<&mut A>().unwrap();
        view.get_mut(e[TARGET]).unwrap().0 = v;
    }),
    ("RegistryCell view, Mut<A> get_mut", |r, e, v| {
        let cell = r.cell();
        let mut view = cell.view::<Mut<A>>().unwrap();
        view.get_mut(e[TARGET]).unwrap().0 = v;
    }),
    ("RegistryCell view, iter", |r, e, v| {
        let t = e[TARGET];
        let cell = r.cell();
        let mut view = cell.view::<(Entity, &mut A)>().unwrap();
        for (at, a) in view.iter() {
            if at == t {
                a.0 = v;
            }
        }
    }),
    ("RegistryCell two disjoint filtered views", |r, e, v| {
        let t = e[TARGET];
        let cell = r.cell();
        let mut with = cell.view_filtered::<(Entity, &mut A), With<B>>().unwrap();
        let mut without = cell
            .view_filtered::<(Entity, &mut A), Without<B>>()
            .unwrap();
        without.each(|(at, _)| assert_ne!(at, t));
        with.each(|(_, a)| a.0 = v);
    }),
    (
        "a disabled neighbour, each over (Entity, &mut A)",
        |r, e, v| {
            r.disable(e[TARGET - 1]).unwrap();
            r.disable(e[TARGET + 1]).unwrap();
            let t = e[TARGET];
            r.view_mut::<(Entity, &mut A)>().each(|(at, a)| {
                if at == t {
                    a.0 = v;
                }
            });
            r.enable(e[TARGET - 1]).unwrap();
            r.enable(e[TARGET + 1]).unwrap();
        },
    ),
];

/// Parallel walks (on the global rayon pool).
const PAR_PATHS: &[(&str, Write)] = &[
    ("par_each over (Entity, &mut A)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &mut A)>().par_each(|(at, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("par_each over (Entity, Mut<A>)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, Mut<A>)>().par_each(|(at, mut a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("par_each_init over (Entity, &mut A)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &mut A)>().par_each_init(
            || 0_u32,
            |n, (at, a)| {
                *n += 1;
                if at == t {
                    a.0 = v;
                }
            },
        );
    }),
    ("par_fold over (Entity, &mut A)", |r, e, v| {
        let t = e[TARGET];
        let n = r.view_mut::<(Entity, &mut A)>().par_fold(
            || 0_usize,
            |n, (at, a)| {
                if at == t {
                    a.0 = v;
                }
                n + 1
            },
            |x, y| x + y,
        );
        assert_eq!(n, ENTITIES);
    }),
    ("par_filter_map over (Entity, Mut<A>)", |r, e, v| {
        let t = e[TARGET];
        let found = r
            .view_mut::<(Entity, Mut<A>)>()
            .par_filter_map(|at, (_, mut a)| {
                (at == t).then(|| {
                    a.0 = v;
                    at
                })
            });
        assert_eq!(found, vec![t]);
    }),
    ("par_each over (&C, &mut A), driven by C", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, &C, &mut A)>().par_each(|(at, _, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    (
        "par_each over (Entity, Option<&mut A>), no driver",
        |r, e, v| {
            let t = e[TARGET];
            r.view_mut::<(Entity, Option<&mut A>)>()
                .par_each(|(at, a)| {
                    if at == t {
                        a.unwrap().0 = v;
                    }
                });
        },
    ),
    ("Untracked<A>, par_each (unmarked)", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, Untracked<A>)>().par_each(|(at, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
];

/// Paths that write without a mark: they must count an unmarked write
/// (so the next save copies every value).
const UNMARKED_PATHS: &[(&str, Write)] = &[
    ("Untracked<A>, each", |r, e, v| {
        let t = e[TARGET];
        r.view_mut::<(Entity, Untracked<A>)>().each(|(at, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("Untracked<A>, get_mut", |r, e, v| {
        r.view_mut::<Untracked<A>>().get_mut(e[TARGET]).unwrap().0 = v;
    }),
    ("Registry::get_mut_untracked", |r, e, v| {
        r.get_mut_untracked::<A>(e[TARGET]).unwrap().0 = v;
    }),
    ("ComponentMut::bypass_change_detection", |r, e, v| {
        r.view_mut::<Mut<A>>()
            .get_mut(e[TARGET])
            .unwrap()
            .bypass_change_detection()
            .0 = v;
    }),
    (
        "ComponentMut::bypass_change_detection in each",
        |r, e, v| {
            let t = e[TARGET];
            r.view_mut::<(Entity, Mut<A>)>().each(|(at, mut a)| {
                if at == t {
                    a.bypass_change_detection().0 = v;
                }
            });
        },
    ),
    ("RegistryCell Untracked view", |r, e, v| {
        let cell = r.cell();
        let mut view = cell.view::<Untracked<A>>().unwrap();
        view.get_mut(e[TARGET]).unwrap().0 = v;
    }),
];

/// Writes that change structure too (or around them).
const STRUCTURAL_PATHS: &[(&str, Write)] = &[
    ("spawn past a group boundary, then get_mut", |r, e, v| {
        for i in 0..ENTITIES as u32 / 4 {
            r.spawn((A(100_000 + i),));
        }
        r.get_mut::<A>(e[TARGET]).unwrap().0 = v;
    }),
    (
        "despawn a low entity (moves the last), then get_mut",
        |r, e, v| {
            if r.is_alive(e[5]) {
                r.despawn(e[5]).unwrap();
            } else {
                r.despawn(e[6]).unwrap();
            }
            r.get_mut::<A>(e[TARGET]).unwrap().0 = v;
        },
    ),
    ("sort_pools, then each", |r, e, v| {
        r.remove::<A>(e[10]).unwrap();
        r.insert(e[10], A(10)).unwrap();
        r.sort_pools();
        let t = e[TARGET];
        r.view_mut::<(Entity, &mut A)>().each(|(at, a)| {
            if at == t {
                a.0 = v;
            }
        });
    }),
    ("clone_entity of the target, then get_mut", |r, e, v| {
        r.clone_entity(e[TARGET]).unwrap();
        r.get_mut::<A>(e[TARGET]).unwrap().0 = v;
    }),
];

/// Saves whole, writes the target through `write`, saves again (a delta)
/// and checks a fresh restore holds the write; then writes again and
/// restores the live registry, and checks the write is undone.
fn check_state(write: Write) -> Result<(), String> {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    write(&mut registry, &e, 1_000_000);
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    if registry.get::<A>(e[TARGET]) != Some(&A(1_000_000)) {
        return Err("the path did not write".into());
    }
    same(
        &restored(&state),
        &saved,
        "state: the delta save missed the write",
    )?;

    registry.advance_change_tick();
    write(&mut registry, &e, 2_000_000);
    registry.advance_change_tick();
    registry.restore_state(&state).unwrap();
    same(
        &contents(&registry),
        &saved,
        "state: the restore missed the write",
    )?;

    // Once more from the restored registry: the write, a delta save, a
    // fresh restore.
    write(&mut registry, &e, 3_000_000);
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(
        &restored(&state),
        &saved,
        "state: a save after a restore missed the write",
    )?;
    Ok(())
}

/// The same with a `StateRing`: frames saved before and after the write,
/// the newest restored into a fresh registry, the live one restored to
/// the newest frame after another write, then to the frame before the
/// first write, and then written and saved again.
fn check_ring(write: Write) -> Result<(), String> {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(4);
    registry.save_frame(&mut ring).unwrap();
    let before = contents(&registry);
    registry.advance_change_tick();
    write(&mut registry, &e, 1_000_000);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(
        &restored(ring.newest().unwrap()),
        &saved,
        "ring: the delta frame missed the write",
    )?;
    registry.advance_change_tick();
    write(&mut registry, &e, 2_000_000);
    registry.advance_change_tick();
    registry.restore_frame(&mut ring, 0).unwrap();
    same(
        &contents(&registry),
        &saved,
        "ring: restore_frame(0) missed the write",
    )?;
    registry.restore_frame(&mut ring, 1).unwrap();
    same(
        &contents(&registry),
        &before,
        "ring: restore_frame(1) missed the write",
    )?;
    registry.advance_change_tick();
    write(&mut registry, &e, 3_000_000);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(
        &restored(ring.newest().unwrap()),
        &saved,
        "ring: a frame after a restore missed the write",
    )?;
    Ok(())
}

fn check_all(paths: &[(&str, Write)]) {
    let mut failed = Vec::new();
    for &(name, write) in paths {
        if let Err(e) = check_state(write) {
            failed.push(format!("{name}: {e}"));
        }
        // Under Miri, where a ring's checks take minutes, states only.
        if !cfg!(miri)
            && let Err(e) = check_ring(write)
        {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
#[cfg(not(miri))]
fn write_paths() {
    check_all(PATHS);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global rayon pool trips crossbeam-epoch under Stacked Borrows; run with -Zmiri-tree-borrows"
)]
fn parallel_write_paths() {
    check_all(PAR_PATHS);
}

#[test]
#[cfg(not(miri))]
fn unmarked_write_paths() {
    check_all(UNMARKED_PATHS);
}

#[test]
#[cfg(not(miri))]
fn structural_write_paths() {
    check_all(STRUCTURAL_PATHS);
}

/// Every path, with the change tick near the wrap (the save before the
/// write at `u32::MAX - 1`, the write past 0).
#[test]
#[cfg(not(miri))]
fn write_paths_across_the_wrap() {
    let mut failed = Vec::new();
    for &(name, write) in PATHS.iter().chain(PAR_PATHS).chain(UNMARKED_PATHS) {
        for mode in 0..2 {
            let (mut registry, e) = world();
            registry.set_change_tick_for_tests(ChangeTick::new(u32::MAX - 2));
            registry.advance_change_tick();
            let mut state = RegistryState::default();
            let mut ring = StateRing::new(3);
            if mode == 0 {
                registry.save_state_into(&mut state).unwrap();
            } else {
                registry.save_frame(&mut ring).unwrap();
            }
            registry.advance_change_tick(); // u32::MAX
            registry.advance_change_tick(); // 0
            write(&mut registry, &e, 1_000_000);
            registry.advance_change_tick();
            let saved = contents(&registry);
            let mut fresh = types();
            if mode == 0 {
                registry.save_state_into(&mut state).unwrap();
                fresh.restore_state(&state).unwrap();
            } else {
                registry.save_frame(&mut ring).unwrap();
                fresh.restore_state(ring.newest().unwrap()).unwrap();
            }
            let got = contents(&fresh);
            if got != saved {
                failed.push(format!("{name} (mode {mode}): {}", diff(&got, &saved)));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A jump of the clock that clamps the old ticks between the saves.
#[test]
#[cfg(not(miri))]
fn a_clamp_between_saves() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    let mut ring = StateRing::new(3);
    registry.save_frame(&mut ring).unwrap();
    // Many advances, one at a time, would take too long: advance past a
    // check interval the way the clock does it, by a jump.
    let now = registry.change_tick().get();
    registry.set_change_tick_for_tests(ChangeTick::new(now.wrapping_add(10)));
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 77;
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    registry.save_frame(&mut ring).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "state").unwrap();
    same(&restored(ring.newest().unwrap()), &saved, "ring").unwrap();
}

/// `export_pool_ticks`, `restore_change_clock` and `import_pool_ticks`
/// between saves (what a load does), then a write and a delta save.
#[test]
#[cfg(not(miri))]
fn import_pool_ticks_between_saves() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 5;
    let ticks = registry.export_pool_ticks::<A>().unwrap();
    let clock = registry.export_change_clock();
    registry.restore_change_clock(clock);
    registry.import_pool_ticks::<A>(ticks).unwrap();
    registry.get_mut::<A>(e[TARGET + APART]).unwrap().0 = 6;
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "a fresh restore").unwrap();
}

/// The clock put back a few ticks (`restore_change_clock`, without an
/// import), a write, then a delta save.
#[test]
#[cfg(not(miri))]
fn restore_change_clock_back_then_a_write() {
    let (mut registry, e) = world();
    for _ in 0..5 {
        registry.advance_change_tick();
    }
    let early = registry.export_change_clock();
    for _ in 0..5 {
        registry.advance_change_tick();
    }
    let mut state = RegistryState::default();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 9;
    registry.restore_change_clock(early);
    registry.get_mut::<A>(e[TARGET + 2 * APART]).unwrap().0 = 10;
    for _ in 0..7 {
        registry.advance_change_tick();
    }
    registry.save_state_into(&mut state).unwrap();
    let saved = contents(&registry);
    same(&restored(&state), &saved, "a fresh restore").unwrap();
}

/// A ring of frames with a write per frame, far apart; then two restores
/// to older frames one after the other (a scrub bar stepping back), with
/// no advance of the clock in between.
#[test]
#[cfg(not(miri))]
fn ring_restores_one_frame_back_twice() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(8);
    let mut frames = vec![];
    registry.save_frame(&mut ring).unwrap();
    frames.push(contents(&registry));
    for round in 0..3_u32 {
        registry.advance_change_tick();
        // The target every round, and one more entity per round.
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry
            .get_mut::<A>(e[APART + 5 * APART * round as usize])
            .unwrap()
            .0 = 20 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.advance_change_tick();
    let mut failed = vec![];
    for step in 0..3 {
        registry.restore_frame(&mut ring, 1).unwrap();
        frames.pop();
        let want = frames.last().unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("step {step}: {}", diff(&got, want)));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// As above, but with a write to another entity (far from the others)
/// between the two restores: the pool counts as written again.
#[test]
#[cfg(not(miri))]
fn ring_restores_one_frame_back_twice_with_a_write_between() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut ring = StateRing::new(8);
    let mut frames = vec![];
    registry.save_frame(&mut ring).unwrap();
    frames.push(contents(&registry));
    for round in 0..3_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.advance_change_tick();
    let mut failed = vec![];
    for step in 0..3 {
        registry.restore_frame(&mut ring, 1).unwrap();
        frames.pop();
        let want = frames.last().unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("step {step}: {}", diff(&got, want)));
        }
        // A write elsewhere, undone by the next restore.
        registry.get_mut::<A>(e[3]).unwrap().0 = 999;
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Two restores back, then the game runs again (advance, write, save)
/// a frame at a time, restoring one back after each save: the rollback
/// loop of a networked game.
#[test]
#[cfg(not(miri))]
fn rollback_loop_with_resimulation() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(6);
    let mut frames: Vec<Contents> = vec![];
    let step = |registry: &mut Registry, round: u32| {
        registry.advance_change_tick();
        let k = (round as usize * 977) % ENTITIES;
        registry.get_mut::<A>(e[k]).unwrap().0 = 50_000 + round;
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 60_000 + round;
    };
    let mut failed = vec![];
    for round in 0..40_u32 {
        step(&mut registry, round);
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
        if frames.len() > 6 {
            frames.remove(0);
        }
        if round % 5 == 4 && frames.len() > 2 {
            let back = 1 + (round as usize / 5) % 2;
            registry.restore_frame(&mut ring, back).unwrap();
            frames.truncate(frames.len() - back);
            let got = contents(&registry);
            if &got != frames.last().unwrap() {
                failed.push(format!(
                    "round {round} back {back}: {}",
                    diff(&got, frames.last().unwrap())
                ));
            }
            // Re-simulated with other writes.
            step(&mut registry, round + 1_000);
            registry.save_frame(&mut ring).unwrap();
            frames.push(contents(&registry));
            let mut fresh = types();
            fresh.restore_state(ring.newest().unwrap()).unwrap();
            let got = contents(&fresh);
            if &got != frames.last().unwrap() {
                failed.push(format!(
                    "round {round} resaved: {}",
                    diff(&got, frames.last().unwrap())
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A registry restored whole from a state becomes the live one: its
/// stamps came from the state. Written, saved (delta into the same
/// state), and restored into another fresh registry.
#[test]
#[cfg(not(miri))]
fn a_fresh_registry_restored_from_a_ring_then_written() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(4);
    registry.advance_change_tick();
    registry.save_frame(&mut ring).unwrap();
    for round in 0..3_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.get_mut::<A>(e[TARGET + 3]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
    }
    // Two frames back on the live registry: the mirror is the frame
    // before the second write.
    registry.restore_frame(&mut ring, 2).unwrap();
    let mut fresh = types();
    fresh.restore_state(ring.newest().unwrap()).unwrap();
    assert!(
        contents(&fresh) == contents(&registry),
        "{}",
        diff(&contents(&fresh), &contents(&registry))
    );
    // The fresh one goes on from there, and restores one back.
    fresh.get_mut::<A>(e[TARGET + 3]).unwrap().0 = 4_444;
    fresh.save_frame(&mut ring).unwrap();
    let saved = contents(&fresh);
    fresh.get_mut::<A>(e[TARGET]).unwrap().0 = 5_555;
    fresh.restore_frame(&mut ring, 0).unwrap();
    let got = contents(&fresh);
    assert!(got == saved, "{}", diff(&got, &saved));
    fresh.restore_frame(&mut ring, 1).unwrap();
    let mut other = types();
    other.restore_state(ring.newest().unwrap()).unwrap();
    assert!(
        contents(&fresh) == contents(&other),
        "{}",
        diff(&contents(&fresh), &contents(&other))
    );
}

/// Two states saved at different ticks and restored alternately into the
/// live registry, with a write before each.
#[test]
#[cfg(not(miri))]
fn two_states_alternately() {
    let (mut registry, e) = world();
    registry.advance_change_tick();
    let mut s1 = registry.save_state().unwrap();
    let c1 = contents(&registry);
    registry.advance_change_tick();
    registry.get_mut::<A>(e[TARGET]).unwrap().0 = 1;
    registry.advance_change_tick();
    let mut s2 = registry.save_state().unwrap();
    let c2 = contents(&registry);
    let mut failed = vec![];
    for round in 0..6_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET + 1]).unwrap().0 = 100 + round;
        let (state, want) = if round % 2 == 0 {
            (&s1, &c1)
        } else {
            (&s2, &c2)
        };
        registry.restore_state(state).unwrap();
        let got = contents(&registry);
        if &got != want {
            failed.push(format!("round {round}: {}", diff(&got, want)));
        }
    }
    // And the states again saved from the registry after restores.
    registry.get_mut::<A>(e[TARGET + 2]).unwrap().0 = 7;
    registry.save_state_into(&mut s1).unwrap();
    registry.save_state_into(&mut s2).unwrap();
    let saved = contents(&registry);
    for s in [&s1, &s2] {
        let mut fresh = types();
        fresh.restore_state(s).unwrap();
        if contents(&fresh) != saved {
            failed.push(format!("resave: {}", diff(&contents(&fresh), &saved)));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A registry that never heard of the types takes its pools from a ring
/// stepped back a frame (its mirror undone, so carrying the newest
/// frame's marks), then steps the ring back once more: it must get that
/// frame; then it writes one entity and saves a frame, which must hold
/// the write.
#[test]
#[cfg(not(miri))]
fn a_registry_without_the_types_restored_from_a_stepped_back_ring() {
    let (mut registry, e) = world();
    let mut ring = StateRing::new(5);
    let mut frames = Vec::new();
    registry.advance_change_tick();
    for round in 0..4_u32 {
        registry.advance_change_tick();
        registry.get_mut::<A>(e[TARGET]).unwrap().0 = 10 + round;
        registry.save_frame(&mut ring).unwrap();
        frames.push(contents(&registry));
    }
    registry.restore_frame(&mut ring, 2).unwrap();
    let mut bare = Registry::new();
    bare.restore_state(ring.newest().unwrap()).unwrap();
    same(&contents(&bare), &frames[1], "the bare restore").unwrap();
    bare.restore_frame(&mut ring, 1).unwrap();
    same(&contents(&bare), &frames[0], "one frame further back").unwrap();
    bare.get_mut::<A>(e[TARGET + APART]).unwrap().0 = 4_444;
    bare.save_frame(&mut ring).unwrap();
    same(
        &restored(ring.newest().unwrap()),
        &contents(&bare),
        "its frame",
    )
    .unwrap();
}
