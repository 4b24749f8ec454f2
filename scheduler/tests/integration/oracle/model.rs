//! The oracle's world: its plain model, and the same steps as real
//! systems through the context. Entities with an odd index carry the
//! `Tag`; a system on side `WITH` (`With<Tag>`) or `WITHOUT`
//! (`Without<Tag>`) reads and writes its side's entities only.

use ecs_engine::{Entity, Registry, With, Without};
use scheduler::{SystemContext, SystemError};

use super::{ANY, C, COMPONENTS, ENTITIES, R, READ, RESOURCES, Spec, Tag, WITH, WRITE};

/// `true` when entity `e` is on `side`.
pub(crate) fn in_side(side: u8, e: usize) -> bool {
    match side {
        ANY => true,
        WITH => !e.is_multiple_of(2),
        _ => e.is_multiple_of(2),
    }
}

/// The plain model of the world: component values by entity, resources.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct World {
    components: [[u64; ENTITIES]; COMPONENTS],
    resources: [u64; RESOURCES],
}

impl World {
    pub(crate) fn new() -> World {
        let mut components = [[0; ENTITIES]; COMPONENTS];
        for (c, column) in components.iter_mut().enumerate() {
            for (e, value) in column.iter_mut().enumerate() {
                *value = (c * 100 + e) as u64;
            }
        }
        World {
            components,
            resources: [7, 11],
        }
    }
}

/// What system `i` does, on plain values: every entity's `s` mixes the
/// system's number with what it reads; each written component of its
/// side's entities becomes `v * 31 + s`, each written resource
/// `r * 31 + sum of s` over its side.
fn step(
    i: usize,
    spec: &Spec,
    reads: &[Option<Vec<u64>>; COMPONENTS],
    resources: &[u64; RESOURCES],
) -> Vec<u64> {
    let base = (0..RESOURCES)
        .filter(|&r| spec.access[COMPONENTS + r] == READ)
        .fold(i as u64 + 1, |acc, r| {
            acc.wrapping_mul(17).wrapping_add(resources[r])
        });
    (0..ENTITIES)
        .map(|e| {
            reads.iter().flatten().fold(base, |acc, column| {
                acc.wrapping_mul(13).wrapping_add(column[e])
            })
        })
        .collect()
}

/// The sum of `s` over the side's entities.
fn total(side: u8, s: &[u64]) -> u64 {
    (0..ENTITIES)
        .filter(|&e| in_side(side, e))
        .fold(0u64, |a, e| a.wrapping_add(s[e]))
}

pub(crate) fn apply_model(i: usize, spec: &Spec, world: &mut World) {
    let reads: [Option<Vec<u64>>; COMPONENTS] =
        std::array::from_fn(|c| (spec.access[c] == READ).then(|| world.components[c].to_vec()));
    let s = step(i, spec, &reads, &world.resources);
    for (column, access) in world.components.iter_mut().zip(spec.access) {
        if access == WRITE {
            for (e, value) in column.iter_mut().enumerate() {
                if in_side(spec.side, e) {
                    *value = value.wrapping_mul(31).wrapping_add(s[e]);
                }
            }
        }
    }
    let total = total(spec.side, &s);
    for (value, &access) in world.resources.iter_mut().zip(&spec.access[COMPONENTS..]) {
        if access == WRITE {
            *value = value.wrapping_mul(31).wrapping_add(total);
        }
    }
}

/// The same step as a real system, through the context: its side's
/// entities through `With<Tag>` or `Without<Tag>` views.
pub(crate) fn run_real(i: usize, spec: &Spec, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
    macro_rules! read_c {
        ($k:literal) => {{
            let mut column = vec![0u64; ENTITIES];
            let mut put = |(e, c): (Entity, &C<$k>)| column[e.index() as usize] = c.0;
            match spec.side {
                ANY => ctx.query::<(Entity, &C<$k>)>()?.iter().for_each(&mut put),
                WITH => ctx
                    .query_filtered::<(Entity, &C<$k>), With<Tag>>()?
                    .iter()
                    .for_each(&mut put),
                _ => ctx
                    .query_filtered::<(Entity, &C<$k>), Without<Tag>>()?
                    .iter()
                    .for_each(&mut put),
            }
            column
        }};
    }
    macro_rules! write_c {
        ($k:literal, $s:expr) => {{
            let mut put = |(e, c): (Entity, &mut C<$k>)| {
                c.0 = c.0.wrapping_mul(31).wrapping_add($s[e.index() as usize])
            };
            match spec.side {
                ANY => ctx.query::<(Entity, &mut C<$k>)>()?.each(&mut put),
                WITH => ctx
                    .query_filtered::<(Entity, &mut C<$k>), With<Tag>>()?
                    .each(&mut put),
                _ => ctx
                    .query_filtered::<(Entity, &mut C<$k>), Without<Tag>>()?
                    .each(&mut put),
            }
        }};
    }
    let mut reads: [Option<Vec<u64>>; COMPONENTS] = [None, None, None];
    if spec.access[0] == READ {
        reads[0] = Some(read_c!(0));
    }
    if spec.access[1] == READ {
        reads[1] = Some(read_c!(1));
    }
    if spec.access[2] == READ {
        reads[2] = Some(read_c!(2));
    }
    let resources = [
        if spec.access[3] == READ {
            ctx.resource::<R<0>>()?.0
        } else {
            0
        },
        if spec.access[4] == READ {
            ctx.resource::<R<1>>()?.0
        } else {
            0
        },
    ];
    let s = step(i, spec, &reads, &resources);
    if spec.access[0] == WRITE {
        write_c!(0, s);
    }
    if spec.access[1] == WRITE {
        write_c!(1, s);
    }
    if spec.access[2] == WRITE {
        write_c!(2, s);
    }
    let total = total(spec.side, &s);
    if spec.access[3] == WRITE {
        let mut r = ctx.resource_mut::<R<0>>()?;
        r.0 = r.0.wrapping_mul(31).wrapping_add(total);
    }
    if spec.access[4] == WRITE {
        let mut r = ctx.resource_mut::<R<1>>()?;
        r.0 = r.0.wrapping_mul(31).wrapping_add(total);
    }
    Ok(())
}

pub(crate) fn registry() -> Registry {
    let world = World::new();
    let mut registry = Registry::new();
    for e in 0..ENTITIES {
        let entity = registry.spawn((
            C::<0>(world.components[0][e]),
            C::<1>(world.components[1][e]),
            C::<2>(world.components[2][e]),
        ));
        if in_side(WITH, e) {
            registry.insert(entity, Tag).unwrap();
        }
    }
    registry.insert_resource(R::<0>(world.resources[0]));
    registry.insert_resource(R::<1>(world.resources[1]));
    registry
}

pub(crate) fn read_back(registry: &Registry) -> World {
    let column =
        |values: Vec<u64>| -> [u64; ENTITIES] { values.try_into().expect("one per entity") };
    World {
        components: [
            column(registry.view::<&C<0>>().iter().map(|c| c.0).collect()),
            column(registry.view::<&C<1>>().iter().map(|c| c.0).collect()),
            column(registry.view::<&C<2>>().iter().map(|c| c.0).collect()),
        ],
        resources: [
            registry.resource::<R<0>>().unwrap().0,
            registry.resource::<R<1>>().unwrap().0,
        ],
    }
}
