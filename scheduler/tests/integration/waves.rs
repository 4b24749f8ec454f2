//! The planner: conflict rules pair by pair, explicit constraints, build
//! errors, and the waves of a realistic system list checked against waves
//! worked out by hand.

use crate::common;

use ecs_engine::Registry;
use scheduler::{
    BuildError, DeclaredSystem, EdgeReason, Policy, Rule, Schedule, ScheduleBuilder, SubjectKind,
    SystemAccess,
};

use common::wave_names;

macro_rules! types {
    ($($t:ident),*) => { $(#[derive(Debug)] struct $t;)* };
}
types!(
    A, B, Player, Enemy, Position, Velocity, Sine, Collider, Health, Damage, Weapon, EnemyGun,
    Lifetime, Input, Spawner, Waves, Contacts, Score, Lives
);

/// A system that does nothing, with the given access.
fn noop(
    name: &'static str,
    access: SystemAccess,
) -> DeclaredSystem<
    impl FnMut(&scheduler::SystemContext<'_>) -> Result<(), scheduler::SystemError> + Send + 'static,
> {
    DeclaredSystem::new(name, access, |_| Ok(()))
}

fn build(
    systems: Vec<(&'static str, SystemAccess)>,
    policy: Policy,
) -> Result<Schedule, BuildError> {
    let mut builder = ScheduleBuilder::default();
    builder.policy(policy).threads(1);
    for (name, access) in systems {
        builder.add(noop(name, access));
    }
    builder.build(&mut Registry::new())
}

fn waves(systems: Vec<(&'static str, SystemAccess)>) -> Vec<Vec<String>> {
    wave_names(&build(systems, Policy::WriterFirst).unwrap())
}

fn w(names: &[&[&str]]) -> Vec<Vec<String>> {
    names
        .iter()
        .map(|w| w.iter().map(|n| n.to_string()).collect())
        .collect()
}

#[test]
fn writer_then_reader() {
    let got = waves(vec![
        ("w", SystemAccess::new().write::<A>()),
        ("r", SystemAccess::new().read::<A>()),
    ]);
    assert_eq!(got, w(&[&["w"], &["r"]]));
}

#[test]
fn reader_registered_before_writer_still_runs_after_it() {
    let got = waves(vec![
        ("r", SystemAccess::new().read::<A>()),
        ("w", SystemAccess::new().write::<A>()),
    ]);
    assert_eq!(got, w(&[&["w"], &["r"]]));
}

#[test]
fn two_writers_run_in_registration_order() {
    let got = waves(vec![
        ("w2", SystemAccess::new().write::<A>()),
        ("w1", SystemAccess::new().write::<A>()),
    ]);
    assert_eq!(got, w(&[&["w2"], &["w1"]]));
}

#[test]
fn readers_share_a_wave() {
    let got = waves(vec![
        ("r1", SystemAccess::new().read::<A>()),
        ("r2", SystemAccess::new().read::<A>()),
    ]);
    assert_eq!(got, w(&[&["r1", "r2"]]));
}

#[test]
fn resources_follow_the_same_rules() {
    let got = waves(vec![
        ("r", SystemAccess::new().read_resource::<Score>()),
        ("w", SystemAccess::new().write_resource::<Score>()),
        ("other", SystemAccess::new().write::<Score>()),
    ]);
    // The component `Score` and the resource `Score` are different subjects.
    assert_eq!(got, w(&[&["w", "other"], &["r"]]));
}

#[test]
fn edges_record_their_reasons() {
    let schedule = build(
        vec![
            ("r", SystemAccess::new().read::<A>()),
            ("w", SystemAccess::new().write::<A>().write_resource::<B>()),
        ],
        Policy::WriterFirst,
    )
    .unwrap();
    let text = schedule.explain().to_string();
    assert!(text.contains("wave 0: w"), "{text}");
    assert!(
        text.contains("after w (wave 0): A: write -> read"),
        "{text}"
    );
    let dot = schedule.to_dot();
    assert!(
        dot.contains("\"w\" -> \"r\" [label=\"A: write -> read\"]"),
        "{dot}"
    );
    assert!(dot.contains("label=\"wave 1\""), "{dot}");
    let _ = EdgeReason::Conflict {
        name: "A".into(),
        kind: SubjectKind::Component,
        rule: Rule::WriteBeforeRead,
    };
}

#[test]
fn explicit_constraints_add_edges() {
    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.add(noop("a", SystemAccess::new()));
    builder.add(noop("b", SystemAccess::new())).before("a");
    builder.add(noop("c", SystemAccess::new())).after("a");
    let schedule = builder.build(&mut Registry::new()).unwrap();
    assert_eq!(wave_names(&schedule), w(&[&["b"], &["a"], &["c"]]));
    let text = schedule.explain().to_string();
    assert!(
        text.contains("after b (wave 0): `b` declared before"),
        "{text}"
    );
    assert!(
        text.contains("after a (wave 1): `c` declared after"),
        "{text}"
    );
}

#[test]
fn mutual_read_write_falls_back_to_registration_order_and_says_so() {
    let systems = vec![
        ("x", SystemAccess::new().write::<A>().read::<B>()),
        ("y", SystemAccess::new().write::<B>().read::<A>()),
    ];
    let schedule = build(systems.clone(), Policy::WriterFirst).unwrap();
    assert_eq!(wave_names(&schedule), w(&[&["x"], &["y"]]));
    let edges: Vec<(usize, usize, Vec<String>)> = schedule
        .edges()
        .map(|(from, to, reasons)| {
            let reasons = reasons.iter().map(ToString::to_string).collect();
            (from.index(), to.index(), reasons)
        })
        .collect();
    assert_eq!(
        edges,
        vec![(
            0,
            1,
            vec![
                "A: write -> read".to_string(),
                "B: conflict, ordered by the pair's other conflict".to_string()
            ]
        )]
    );
    let text = schedule.explain().to_string();
    assert!(
        text.contains(
            "after x (wave 0): A: write -> read; B: conflict, ordered by the pair's other conflict"
        ),
        "{text}"
    );
    let dot = schedule.to_dot();
    assert!(
        dot.contains(
            "\"x\" -> \"y\" [label=\"A: write -> read\\nB: conflict, ordered by the pair's other conflict\"];"
        ),
        "{dot}"
    );
    // The default policy: registration order, one plain edge.
    let schedule = build(systems, Policy::RegistrationOrder).unwrap();
    assert_eq!(wave_names(&schedule), w(&[&["x"], &["y"]]));
    assert!(!schedule.to_dot().contains("dashed"));
}

#[test]
fn writer_first_cycle_through_three_systems_is_broken() {
    // x -> y on A, y -> z on B, z -> x on C: writer-first all round.
    let systems = vec![
        ("x", SystemAccess::new().write::<A>().read::<Collider>()),
        ("y", SystemAccess::new().write::<B>().read::<A>()),
        ("z", SystemAccess::new().write::<Collider>().read::<B>()),
    ];
    let schedule = build(systems, Policy::WriterFirst).unwrap();
    // (x, y): x first on A. (x, z): z writes what x reads, z first. (y, z):
    // y first on B, but z -> x -> y already: ordered, no edge.
    assert_eq!(wave_names(&schedule), w(&[&["z"], &["x"], &["y"]]));
}

#[test]
fn reader_before_writer_is_the_users_word() {
    for policy in [Policy::WriterFirst, Policy::RegistrationOrder] {
        let mut builder = Schedule::builder();
        builder.policy(policy).threads(1);
        builder.add(noop("writer", SystemAccess::new().write::<A>()));
        builder
            .add(noop("reader", SystemAccess::new().read::<A>()))
            .before("writer");
        let schedule = builder.build(&mut Registry::new()).unwrap();
        assert_eq!(wave_names(&schedule), w(&[&["reader"], &["writer"]]));
        // Only the user's edge: no automatic edge for a pair they ordered.
        let reasons: Vec<String> = schedule
            .edges()
            .flat_map(|(_, _, r)| r.iter().map(ToString::to_string))
            .collect();
        assert_eq!(reasons, vec!["`reader` declared before".to_string()]);
    }
}

#[test]
fn constraints_transitively_ordering_a_pair_suppress_its_conflict_edge() {
    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.add(noop("w", SystemAccess::new().write::<A>()));
    builder.add(noop("mid", SystemAccess::new()));
    builder
        .add(noop("r", SystemAccess::new().read::<A>()))
        .before("mid");
    builder.add(noop("tail", SystemAccess::new())).after("w");
    let mut builder2 = builder;
    builder2
        .add(noop("hub", SystemAccess::new()))
        .after("mid")
        .before("w");
    let schedule = builder2.build(&mut Registry::new()).unwrap();
    // r -> mid -> hub -> w -> tail: the (w, r) conflict is already ordered.
    assert_eq!(
        wave_names(&schedule),
        w(&[&["r"], &["mid"], &["hub"], &["w"], &["tail"]])
    );
    assert!(schedule.edges().all(|(_, _, reasons)| {
        reasons
            .iter()
            .all(|r| matches!(r, EdgeReason::Constraint { .. }))
    }));
}

#[test]
fn constraint_cycle_is_reported_with_how_to_break_it() {
    let mut builder = Schedule::builder();
    builder
        .add(noop("a", SystemAccess::new().write::<A>()))
        .before("b");
    builder.add(noop("c", SystemAccess::new().read::<A>()));
    builder
        .add(noop("b", SystemAccess::new().read::<A>()))
        .before("a");
    let error = builder.build(&mut Registry::new()).unwrap_err();
    let BuildError::Cycle { cycle } = &error else {
        panic!("expected a cycle, got {error:?}")
    };
    let mut edges: Vec<(String, String, Vec<String>)> = cycle
        .iter()
        .map(|e| (e.from.clone(), e.to.clone(), e.reasons.clone()))
        .collect();
    edges.sort();
    assert_eq!(
        edges,
        vec![
            (
                "a".into(),
                "b".into(),
                vec!["`a` declared before".to_string()]
            ),
            (
                "b".into(),
                "a".into(),
                vec!["`b` declared before".to_string()]
            ),
        ]
    );
    let message = error.to_string();
    assert!(
        message.starts_with("the `before`/`after` constraints form a cycle: "),
        "{message}"
    );
    assert!(
        message.contains("`a` before `b` (`a` declared before)"),
        "{message}"
    );
    assert!(
        message.ends_with("remove or reverse one of these constraints to break it"),
        "{message}"
    );
}

#[test]
fn dot_labels_break_lines_and_the_reduced_view_drops_implied_edges() {
    let schedule = build(
        vec![
            ("a", SystemAccess::new().write::<A>().write::<B>()),
            ("b", SystemAccess::new().write::<A>()),
            ("c", SystemAccess::new().write::<A>()),
        ],
        Policy::WriterFirst,
    )
    .unwrap();
    let dot = schedule.to_dot();
    // One backslash: DOT's line break, not a literal `\n`.
    assert!(
        dot.contains("\"a\" -> \"b\" [label=\"A: write -> write\"];"),
        "{dot}"
    );
    assert!(
        dot.contains("\"a\" -> \"c\" [label=\"A: write -> write\"];"),
        "{dot}"
    );
    assert!(!dot.contains("\\\\n"), "{dot}");
    let reduced = schedule.to_dot_reduced();
    assert!(!reduced.contains("\"a\" -> \"c\""), "{reduced}");
    assert!(reduced.contains("\"a\" -> \"b\""), "{reduced}");
    assert!(reduced.contains("\"b\" -> \"c\""), "{reduced}");

    let two = build(
        vec![
            ("a", SystemAccess::new().write::<A>().write::<B>()),
            ("b", SystemAccess::new().read::<A>().read::<B>()),
        ],
        Policy::WriterFirst,
    )
    .unwrap();
    assert!(
        two.to_dot()
            .contains("[label=\"A: write -> read\\nB: write -> read\"];"),
        "{}",
        two.to_dot()
    );
}

#[test]
fn thread_counts_outside_the_bounds_are_refused_before_any_thread_starts() {
    let mut builder = Schedule::builder();
    builder.threads(0);
    assert_eq!(
        builder.build(&mut Registry::new()).unwrap_err(),
        BuildError::ZeroThreads
    );
    let mut builder = Schedule::builder();
    builder.threads(100_000);
    let error = builder.build(&mut Registry::new()).unwrap_err();
    assert_eq!(
        error,
        BuildError::TooManyThreads {
            threads: 100_000,
            max: scheduler::MAX_THREADS
        }
    );
    assert!(error.to_string().contains("at most 1024"), "{error}");
}

#[test]
fn duplicate_name_and_unknown_constraint() {
    let error = build(
        vec![("a", SystemAccess::new()), ("a", SystemAccess::new())],
        Policy::WriterFirst,
    )
    .unwrap_err();
    assert_eq!(error, BuildError::DuplicateName { name: "a".into() });

    let mut builder = Schedule::builder();
    builder.add(noop("a", SystemAccess::new())).after("ghost");
    let error = builder.build(&mut Registry::new()).unwrap_err();
    assert_eq!(
        error,
        BuildError::UnknownSystem {
            system: "a".into(),
            kind: "system",
            relation: "after",
            target: "ghost".into()
        }
    );
    assert!(
        error
            .to_string()
            .contains("no system or set is named `ghost`")
    );
}

#[test]
fn shoot_em_up_waves_match_the_hand_worked_plan() {
    let systems = vec![
        (
            "steering",
            SystemAccess::new()
                .read::<Player>()
                .read_resource::<Input>()
                .write::<Velocity>(),
        ),
        (
            "movement",
            SystemAccess::new().read::<Velocity>().write::<Position>(),
        ),
        (
            "sine_motion",
            SystemAccess::new().read::<Sine>().write::<Position>(),
        ),
        (
            "play_area",
            SystemAccess::new().read::<Player>().write::<Position>(),
        ),
        (
            "weapons",
            SystemAccess::new()
                .read::<Player>()
                .read::<Position>()
                .read_resource::<Input>()
                .write::<Weapon>()
                .with_commands(),
        ),
        (
            "enemy_fire",
            SystemAccess::new()
                .read::<Enemy>()
                .read::<Position>()
                .write::<EnemyGun>()
                .with_commands(),
        ),
        (
            "spawns",
            SystemAccess::new()
                .write_resource::<Spawner>()
                .with_commands(),
        ),
        (
            "waves",
            SystemAccess::new()
                .write_resource::<Waves>()
                .write_resource::<Spawner>(),
        ),
        (
            "collision",
            SystemAccess::new()
                .read::<Position>()
                .read::<Collider>()
                .write_resource::<Contacts>(),
        ),
        (
            "damage",
            SystemAccess::new()
                .read_resource::<Contacts>()
                .read::<Damage>()
                .write::<Health>(),
        ),
        (
            "score",
            SystemAccess::new()
                .read::<Health>()
                .read::<Enemy>()
                .write_resource::<Score>(),
        ),
        (
            "lives",
            SystemAccess::new()
                .read::<Health>()
                .read::<Player>()
                .write_resource::<Lives>(),
        ),
        (
            "cleanup",
            SystemAccess::new()
                .read::<Position>()
                .read::<Health>()
                .with_commands(),
        ),
        (
            "despawn",
            SystemAccess::new().write::<Lifetime>().with_commands(),
        ),
    ];
    // Worked out by hand from the rules:
    // steering -> movement (Velocity); movement -> sine_motion -> play_area
    // (Position written three times, registration order); every reader of
    // Position after play_area; spawns -> waves (Spawner); collision ->
    // damage (Contacts); damage -> score, lives, cleanup (Health).
    let expected = w(&[
        &["steering", "spawns", "despawn"],
        &["movement", "waves"],
        &["sine_motion"],
        &["play_area"],
        &["weapons", "enemy_fire", "collision"],
        &["damage"],
        &["score", "lives", "cleanup"],
    ]);
    assert_eq!(waves(systems), expected);
}

#[test]
fn parameters_borrowing_a_type_twice_with_a_write_are_a_build_error() {
    use scheduler::{Query, Res, ResMut};
    fn twice(_q: Query<(&mut A, &A)>) {}
    fn split(_a: Query<&mut A>, _b: Query<&A>) {}
    fn resources(_r: Res<Score>, _w: ResMut<Score>) {}
    fn readers(_a: Query<&A>, _b: Query<(&A, &B)>) {}
    for (system, build) in [
        ("twice", {
            let mut b = Schedule::builder();
            b.add(twice);
            b
        }),
        ("split", {
            let mut b = Schedule::builder();
            b.add(split);
            b
        }),
        ("resources", {
            let mut b = Schedule::builder();
            b.add(resources);
            b
        }),
    ] {
        let error = build.build(&mut Registry::new()).unwrap_err();
        assert!(
            matches!(&error, BuildError::ParamClash { system: s, .. } if s == system),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("twice, at least once for writing"),
            "{error}"
        );
    }
    let mut fine = Schedule::builder();
    fine.add(readers);
    assert!(fine.build(&mut Registry::new()).is_ok());
}
