//! Hierarchy commands from many systems of one wave, run on one thread and
//! on many: every flush leaves no dangling parent, and the worlds (children
//! order included) are identical.

use ecs_runtime::prelude::*;

/// A tree: `branches` subtrees of `depth` levels, `fan` children each.
fn forest(registry: &mut Registry, branches: usize, fan: usize, depth: usize) -> Vec<Entity> {
    let mut all = Vec::new();
    for b in 0..branches {
        let root = registry.spawn((b as u64,));
        all.push(root);
        let mut level = vec![root];
        for _ in 0..depth {
            let mut next = Vec::new();
            for &parent in &level {
                for _ in 0..fan {
                    let child = registry.spawn((all.len() as u64,));
                    registry.set_parent(child, parent).unwrap();
                    all.push(child);
                    next.push(child);
                }
            }
            level = next;
        }
    }
    all
}

fn assert_consistent(registry: &Registry) {
    for (child, of) in registry
        .view::<(Entity, &ecs_runtime::ecs_engine::ChildOf)>()
        .iter()
    {
        assert!(registry.is_alive(of.parent()), "{child} has a dead parent");
        assert!(registry.children(of.parent()).contains(&child));
    }
    for (parent, children) in registry
        .view::<(Entity, &ecs_runtime::ecs_engine::Children)>()
        .iter()
    {
        for child in children.iter() {
            assert_eq!(registry.parent(child), Some(parent));
        }
    }
}

/// Runs `ticks` ticks of `systems` systems that each despawn, despawn
/// recursively, re-parent and spawn children, on `threads` threads; returns
/// every entity's (handle, parent, children) at the end.
fn run(threads: usize, systems: usize, ticks: u64) -> Vec<(Entity, Option<Entity>, Vec<Entity>)> {
    let mut registry = Registry::new();
    let all = forest(&mut registry, 8, 3, 3);
    let mut builder = Schedule::builder();
    builder.threads(threads);
    for s in 0..systems {
        let all = all.clone();
        builder
            .add(move |tick: Tick, mut commands: Commands| {
                let n = all.len();
                let k = (tick.number as usize * 31 + s * 17) % n;
                match (s + tick.number as usize) % 4 {
                    0 => commands.despawn(all[k]),
                    1 => commands.despawn_recursive(all[k]),
                    2 => commands.set_parent(all[k], all[(k * 7 + s) % n]),
                    _ => {
                        let child = commands.spawn((k as u64,));
                        commands.set_parent(child, all[k]);
                        commands.remove_parent(all[(k + 5) % n]);
                    }
                }
            })
            .named(format!("system {s}"));
    }
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1, "all systems in one wave");
    for number in 0..ticks {
        schedule
            .run(
                &mut registry,
                Tick {
                    number,
                    step: 1.0,
                    delta: 0.0,
                },
            )
            .unwrap();
        assert_consistent(&registry);
    }
    let mut out: Vec<_> = registry
        .view::<(Entity, &u64)>()
        .iter()
        .map(|(e, _)| (e, registry.parent(e), registry.children(e).to_vec()))
        .collect();
    out.sort();
    out
}

#[test]
fn hierarchy_commands_of_one_wave_agree_on_any_thread_count() {
    let many = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .max(4);
    let systems = 2 * many;
    let one = run(1, systems, 40);
    assert!(one.iter().any(|(_, _, children)| children.len() > 1));
    assert_eq!(run(many, systems, 40), one);
}
