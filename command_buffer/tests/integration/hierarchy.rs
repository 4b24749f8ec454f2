//! Hierarchy commands: several buffers (the systems of one wave) attach,
//! detach and despawn parents and children, applied in every order; the
//! result equals the same calls made directly, and no parent dangles.

use command_buffer::{CommandBuffer, CommandKind, apply_all};
use ecs_engine::{ChildOf, Children, Entity, Registry};
use proptest::prelude::*;

/// Every hierarchy invariant (see `ecs_engine`'s hierarchy module).
fn assert_consistent(registry: &Registry) {
    for (child, of) in registry.view::<(Entity, &ChildOf)>().iter() {
        let parent = of.parent();
        assert!(
            registry.is_alive(parent),
            "{child} has a dead parent {parent}"
        );
        assert_eq!(
            registry
                .children(parent)
                .iter()
                .filter(|&&c| c == child)
                .count(),
            1
        );
    }
    for (parent, children) in registry.view::<(Entity, &Children)>().iter() {
        assert!(!children.is_empty());
        for child in children.iter() {
            assert!(registry.is_alive(child), "{parent} lists dead {child}");
            assert_eq!(registry.parent(child), Some(parent));
        }
    }
}

/// One recorded hierarchy or despawn command.
#[derive(Debug, Clone, Copy)]
enum Cmd {
    Despawn(usize),
    DespawnRecursive(usize),
    SetParent(usize, usize),
    RemoveParent(usize),
    /// The generic `remove::<ChildOf>` / `remove::<Children>`.
    RemoveComponent(usize, bool),
    /// `disable_recursive` (`true`) or `enable_recursive`.
    DisableRecursive(usize, bool),
}

impl Cmd {
    fn record(self, buffer: &mut CommandBuffer, h: &[Entity]) {
        match self {
            Cmd::Despawn(e) => buffer.despawn(h[e]),
            Cmd::DespawnRecursive(e) => buffer.despawn_recursive(h[e]),
            Cmd::SetParent(c, p) => buffer.set_parent(h[c], h[p]),
            Cmd::RemoveParent(c) => buffer.remove_parent(h[c]),
            Cmd::RemoveComponent(e, false) => buffer.remove::<ChildOf>(h[e]),
            Cmd::RemoveComponent(e, true) => buffer.remove::<Children>(h[e]),
            Cmd::DisableRecursive(e, true) => buffer.disable_recursive(h[e]),
            Cmd::DisableRecursive(e, false) => buffer.enable_recursive(h[e]),
        }
    }

    /// The same change made directly; errors (dead targets, cycles) ignored
    /// as the lenient apply skips them.
    fn call(self, registry: &mut Registry, h: &[Entity]) {
        let _ = match self {
            Cmd::Despawn(e) => registry.despawn(h[e]).map(drop),
            Cmd::DespawnRecursive(e) => registry.despawn_recursive(h[e]).map(drop),
            Cmd::SetParent(c, p) => registry.set_parent(h[c], h[p]),
            Cmd::RemoveParent(c) => registry.remove_parent(h[c]).map(drop),
            Cmd::RemoveComponent(e, false) => registry.remove::<ChildOf>(h[e]).map(drop),
            Cmd::RemoveComponent(e, true) => registry.remove::<Children>(h[e]).map(drop),
            Cmd::DisableRecursive(e, true) => registry.disable_recursive(h[e]).map(drop),
            Cmd::DisableRecursive(e, false) => registry.enable_recursive(h[e]).map(drop),
        };
    }
}

/// r -> {a, b}; a -> {a1, a2}; b -> {b1}; a1 -> {a1x}; plus a loose `z`.
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let h: Vec<Entity> = (0..8u32).map(|i| registry.spawn((i,))).collect();
    for (c, p) in [(1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 3)] {
        registry.set_parent(h[c], h[p]).unwrap();
    }
    (registry, h)
}

/// What a test compares: who is alive (and disabled), and each one's
/// parent and children.
type Shape = Vec<(bool, bool, Option<Entity>, Vec<Entity>)>;

fn shape(registry: &Registry, h: &[Entity]) -> Shape {
    h.iter()
        .map(|&e| {
            (
                registry.is_alive(e),
                registry.is_disabled(e),
                registry.parent(e),
                registry.children(e).to_vec(),
            )
        })
        .collect()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            out.push(p);
        }
    }
    out
}

#[test]
fn parents_children_and_both_despawned_by_several_buffers_in_every_order() {
    // Indices: r=0 a=1 b=2 a1=3 a2=4 b1=5 a1x=6 z=7.
    let systems: [&[Cmd]; 4] = [
        &[Cmd::Despawn(1)],
        &[Cmd::Despawn(3), Cmd::DespawnRecursive(2)],
        &[Cmd::DespawnRecursive(1), Cmd::SetParent(4, 5)],
        &[
            Cmd::RemoveParent(6),
            Cmd::Despawn(0),
            Cmd::SetParent(5, 6),
            Cmd::SetParent(7, 4),
        ],
    ];
    let orders = permutations(systems.len());
    assert_eq!(orders.len(), 24);
    // Under Miri, which interprets the unsafe apply paths the same way in
    // every order, every fifth order (five, with different outcomes).
    let step = if cfg!(miri) { 5 } else { 1 };
    let mut distinct = std::collections::BTreeSet::new();
    for order in orders.into_iter().step_by(step) {
        let (mut registry, h) = world();
        let (mut direct, _) = world();
        let mut buffers: Vec<CommandBuffer> = order
            .iter()
            .map(|&s| {
                let mut buffer = CommandBuffer::new();
                for cmd in systems[s] {
                    cmd.record(&mut buffer, &h);
                    cmd.call(&mut direct, &h);
                }
                buffer
            })
            .collect();
        let report = apply_all(&mut registry, &mut buffers);
        assert_consistent(&registry);
        assert_eq!(shape(&registry, &h), shape(&direct, &h), "order {order:?}");
        let total = systems.iter().map(|s| s.len()).sum::<usize>();
        assert_eq!(
            report.applied(CommandKind::Despawn)
                + report.skipped(CommandKind::Despawn)
                + report.applied(CommandKind::Insert)
                + report.skipped(CommandKind::Insert)
                + report.applied(CommandKind::Remove)
                + report.noops(CommandKind::Remove)
                + report.skipped(CommandKind::Remove),
            total
        );
        distinct.insert(format!("{:?}", shape(&registry, &h)));
    }
    // The orders really differ in outcome: the test covers more than one case.
    assert!(distinct.len() > 1);
}

#[test]
fn set_parent_resolves_placeholders_and_reports_skips() {
    let mut registry = Registry::new();
    let ship = registry.spawn(());
    let gone = registry.spawn(());
    registry.despawn(gone).unwrap();
    let mut commands = CommandBuffer::new();
    let turret = commands.spawn(());
    let gun = commands.spawn(());
    commands.set_parent(turret, ship);
    commands.set_parent(gun, turret);
    commands.set_parent(gun, gone); // skipped: dead parent
    commands.set_parent(ship, gun); // skipped: a cycle
    commands.remove_parent(ship); // a no-op: a root
    let report = commands.apply(&mut registry);
    let turret = report.resolve(0, turret).unwrap_or(turret);
    let gun = report.resolve(0, gun).unwrap_or(gun);
    assert_eq!(registry.children(ship), [turret]);
    assert_eq!(registry.children(turret), [gun]);
    assert_eq!(report.applied(CommandKind::Insert), 2);
    assert_eq!(report.skipped(CommandKind::Insert), 2);
    assert_eq!(report.noops(CommandKind::Remove), 1);
    assert_consistent(&registry);
}

#[test]
fn a_subtree_is_disabled_and_enabled_by_one_command_each() {
    // r -> {a, b}; a -> {a1, a2}; b -> {b1}; a1 -> {a1x}; plus a loose `z`.
    let (mut registry, h) = world();
    registry.disable(h[3]).unwrap(); // a1: already disabled
    let mut commands = CommandBuffer::new();
    commands.entity(h[1]).disable_recursive(); // a, a1, a2, a1x
    commands.disable_recursive(h[1]); // nothing left to change: a no-op
    let report = commands.apply(&mut registry);
    let disabled: Vec<bool> = h.iter().map(|&e| registry.is_disabled(e)).collect();
    assert_eq!(
        disabled,
        [false, true, false, true, true, false, true, false]
    );
    assert_eq!(report.applied(CommandKind::Insert), 1);
    assert_eq!(report.noops(CommandKind::Insert), 1);
    assert_eq!(registry.view::<&u32>().count(), 4);

    let gone = registry.spawn(());
    registry.despawn(gone).unwrap();
    commands.entity(h[0]).enable_recursive();
    commands.enable_recursive(gone); // skipped: not alive
    let report = commands.apply(&mut registry);
    assert_eq!(registry.disabled_len(), 0);
    assert_eq!(report.applied(CommandKind::Remove), 1);
    assert_eq!(report.skipped(CommandKind::Remove), 1);
    assert_eq!(registry.view::<&u32>().count(), 8);
}

#[test]
fn strict_apply_names_the_refused_hierarchy_command() {
    let mut registry = Registry::new();
    let a = registry.spawn(());
    let mut commands = CommandBuffer::new();
    commands.set_parent(a, a);
    let error = commands.apply_strict(&mut registry).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("ChildOf"), "{text}");
    assert!(text.contains("descendants"), "{text}");
    assert_eq!(registry.parent(a), None);
}

fn cmd(n: usize) -> impl Strategy<Value = Cmd> {
    prop_oneof![
        (0..n).prop_map(Cmd::Despawn),
        (0..n).prop_map(Cmd::DespawnRecursive),
        (0..n, 0..n).prop_map(|(c, p)| Cmd::SetParent(c, p)),
        (0..n, 0..n).prop_map(|(c, p)| Cmd::SetParent(c, p)),
        (0..n).prop_map(Cmd::RemoveParent),
        (0..n, any::<bool>()).prop_map(|(e, all)| Cmd::RemoveComponent(e, all)),
        (0..n, any::<bool>()).prop_map(|(e, disable)| Cmd::DisableRecursive(e, disable)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random hierarchy commands in up to 5 buffers give the same world as
    /// the same calls made directly in buffer order, and stay consistent.
    #[test]
    fn buffers_match_direct_calls(
        systems in prop::collection::vec(prop::collection::vec(cmd(8), 0..8), 1..5),
    ) {
        let (mut registry, h) = world();
        let (mut direct, _) = world();
        let mut buffers: Vec<CommandBuffer> = systems
            .iter()
            .map(|cmds| {
                let mut buffer = CommandBuffer::new();
                for &c in cmds {
                    c.record(&mut buffer, &h);
                    c.call(&mut direct, &h);
                }
                buffer
            })
            .collect();
        apply_all(&mut registry, &mut buffers);
        assert_consistent(&registry);
        prop_assert_eq!(shape(&registry, &h), shape(&direct, &h));
        prop_assert_eq!(registry.len(), direct.len());
    }
}

#[test]
fn generic_commands_on_hierarchy_components_keep_the_lists_consistent() {
    let mut registry = Registry::new();
    let [p, c1, c2, c3] = [(); 4].map(|()| registry.spawn(()));
    for c in [c1, c2, c3] {
        registry.set_parent(c, p).unwrap();
    }
    let child_of = registry.component_id::<ChildOf>().unwrap();
    let children = registry.component_id::<Children>().unwrap();
    let taken = registry.remove::<ChildOf>(c3).unwrap();
    let mut commands = CommandBuffer::new();
    commands.remove_by_id(c1, child_of);
    // An owned ChildOf, taken out by `remove`, cannot be inserted.
    commands.insert(c3, taken);
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::RemoveById), 1);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    assert_eq!(
        report.first_skip().map(|s| s.reason.clone()),
        Some(ecs_engine::EcsError::ReadOnlyComponent {
            component: std::any::type_name::<ChildOf>().into()
        })
    );
    assert_eq!(registry.children(p), [c2]);
    assert_eq!(registry.parent(c3), None);
    assert_consistent(&registry);
    commands.remove_by_id(p, children);
    commands.apply(&mut registry);
    assert_eq!(registry.parent(c2), None);
    assert_eq!(
        registry.count::<ChildOf>() + registry.count::<Children>(),
        0
    );
    assert_consistent(&registry);
}

#[test]
fn a_spawned_bundle_holding_a_hierarchy_value_is_skipped_and_its_handle_given_back() {
    let mut registry = Registry::new();
    let [p, c] = [(); 2].map(|()| registry.spawn(()));
    registry.set_parent(c, p).unwrap();
    let taken = registry.remove::<ChildOf>(c).unwrap();
    let mut commands = CommandBuffer::new();
    commands.reserve_entities(&mut registry, 8).unwrap();
    let a = commands.spawn((1_u32,));
    let refused = commands.spawn((2_u32, taken));
    let b = commands.spawn((3_u32,));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 2);
    assert_eq!(report.skipped(CommandKind::Spawn), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!((skip.index, skip.entity), (1, refused));
    assert!(registry.is_alive(a) && registry.is_alive(b) && !registry.is_alive(refused));
    assert!(!registry.entities().is_reserved(refused));
    assert_eq!(registry.get::<u32>(b), Some(&3));
    assert_eq!(registry.count::<ChildOf>(), 0);
    assert_consistent(&registry);
}

#[test]
fn entity_commands_chain_in_call_order_and_build_trees() {
    #[derive(Debug, PartialEq)]
    struct Name(&'static str);
    let mut registry = Registry::new();
    let old = registry.spawn((Name("old"),));
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);

    let root = commands.spawn((Name("root"),));
    let mut grandchild = Entity::NULL;
    commands
        .entity(root)
        .insert((1_u32,))
        .insert((2_u32,)) // call order: the second insert wins
        .with_children(|children| {
            children.spawn((Name("a"),));
            children.spawn((Name("b"),)).with_children(|deeper| {
                grandchild = deeper.spawn((Name("b1"),)).id();
            });
        })
        .add_child(old);
    commands.apply(&mut registry);
    assert_consistent(&registry);

    assert_eq!(registry.get::<u32>(root), Some(&2));
    let names = |registry: &Registry, parent| -> Vec<&'static str> {
        registry
            .children(parent)
            .iter()
            .map(|&c| registry.get::<Name>(c).unwrap().0)
            .collect()
    };
    assert_eq!(names(&registry, root), ["a", "b", "old"]);
    assert_eq!(
        registry.get::<ChildOf>(grandchild).map(ChildOf::parent),
        Some(registry.children(root)[1])
    );

    // Despawning the tree leaves only what was not in it; a chained
    // command on a dead entity is skipped and reported.
    let mut commands = CommandBuffer::new();
    commands.entity(old).remove_parent().remove::<Name>();
    commands.entity(root).despawn_recursive();
    commands.entity(grandchild).insert((3_u32,));
    let report = commands.apply(&mut registry);
    assert_consistent(&registry);
    assert_eq!(registry.len(), 1);
    assert!(registry.is_alive(old) && registry.get::<Name>(old).is_none());
    assert_eq!(report.skipped(CommandKind::InsertBundle), 1);
}

/// `with_children` on a parent that is dead when the buffer is applied
/// spawns nothing (as bevy): the child spawns are skipped and reported,
/// their handles given back, their links skipped, no hook fires; an
/// alive parent in the same buffer still gets its children.
#[test]
fn with_children_of_a_dead_parent_spawns_nothing() {
    use command_buffer::{FiredHooks, ObservedTypes};
    use ecs_engine::EcsError;
    #[derive(Debug, PartialEq)]
    struct Turret(u8);
    for placeholders in [false, true] {
        let mut registry = Registry::new();
        ObservedTypes::observe::<Turret>(&mut registry);
        let dead = registry.spawn(());
        let alive = registry.spawn(());
        let mut commands = CommandBuffer::new();
        if !placeholders {
            commands.prepare(&mut registry);
        }
        commands.despawn(dead);
        let mut orphan = Entity::NULL;
        commands.entity(dead).with_children(|c| {
            orphan = c.spawn((Turret(0),)).insert((7_u32,)).id();
            c.spawn((Turret(1),));
        });
        commands.entity(alive).with_children(|c| {
            c.spawn((Turret(2),));
        });
        let report = commands.apply(&mut registry);
        assert_consistent(&registry);
        // Only the alive parent's child exists, with its hooks alone.
        assert_eq!(registry.len(), 2);
        assert_eq!(report.applied(CommandKind::Spawn), 1);
        assert_eq!(report.skipped(CommandKind::Spawn), 2);
        // The two links and the insert on the child that never was.
        assert_eq!(report.skipped(CommandKind::Insert), 2);
        assert_eq!(report.skipped(CommandKind::InsertBundle), 1);
        let first = report.first_skip().unwrap();
        assert_eq!((first.index, first.kind), (1, CommandKind::Spawn));
        assert_eq!(first.reason, EcsError::NoSuchEntity { entity: dead });
        assert!(!registry.is_alive(orphan));
        let child = registry.children(alive)[0];
        assert_eq!(registry.get::<Turret>(child), Some(&Turret(2)));
        let fired = registry.resource::<FiredHooks>().unwrap();
        assert!(fired.0.iter().all(|&(_, _, e)| e == child), "{:?}", fired.0);
        assert_eq!(fired.0.len(), 2);
        if placeholders {
            assert_eq!(report.resolve(0, orphan), None);
        }
    }
}
