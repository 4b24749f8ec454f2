//! Every path that writes the target entity's `A`, by kind: the marked
//! writes, the parallel walks, the unmarked writes and the structural
//! changes.

use super::*;

pub(crate) type Write = fn(&mut Registry, &[Entity], u32);

pub(crate) fn set(a: &mut A, v: u32) {
    a.0 = v;
}

/// Each path, by name: it sets the target's `A` to the value.
pub(crate) const PATHS: &[(&str, Write)] = &[
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
pub(crate) const PAR_PATHS: &[(&str, Write)] = &[
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
pub(crate) const UNMARKED_PATHS: &[(&str, Write)] = &[
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
pub(crate) const STRUCTURAL_PATHS: &[(&str, Write)] = &[
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
