//! The planner: conflict rules pair by pair, explicit constraints, build
//! errors, and the waves of a realistic system list checked against waves
//! worked out by hand.

use ecs_engine::Registry;
use scheduler::{
    BuildError, DeclaredSystem, EdgeReason, Policy, Rule, Schedule, ScheduleBuilder, SubjectKind,
    SystemAccess,
};

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

fn wave_names(schedule: &Schedule) -> Vec<Vec<String>> {
    schedule
        .waves()
        .into_iter()
        .map(|w| w.into_iter().map(|(_, n)| n.to_owned()).collect())
        .collect()
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
fn mutual_read_write_is_a_cycle_naming_systems_and_types() {
    let systems = vec![
        ("x", SystemAccess::new().write::<A>().read::<B>()),
        ("y", SystemAccess::new().write::<B>().read::<A>()),
    ];
    let error = build(systems.clone(), Policy::WriterFirst).unwrap_err();
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
            ("x".into(), "y".into(), vec!["A: write -> read".to_string()]),
            ("y".into(), "x".into(), vec!["B: write -> read".to_string()]),
        ]
    );
    let message = error.to_string();
    assert!(
        message.contains("`x` before `y` (A: write -> read)"),
        "{message}"
    );
    // The registration-order policy never forms a cycle from conflicts.
    let schedule = build(systems, Policy::RegistrationOrder).unwrap();
    assert_eq!(wave_names(&schedule), w(&[&["x"], &["y"]]));
}

#[test]
fn constraint_cycle_is_reported() {
    let mut builder = Schedule::builder();
    builder.add(noop("a", SystemAccess::new().write::<A>()));
    builder
        .add(noop("b", SystemAccess::new().read::<A>()))
        .before("a");
    let error = builder.build(&mut Registry::new()).unwrap_err();
    assert!(
        matches!(&error, BuildError::Cycle { cycle } if cycle.len() == 2),
        "{error:?}"
    );
    assert!(error.to_string().contains("`b` declared before"), "{error}");
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
            relation: "after",
            target: "ghost".into()
        }
    );
    assert!(error.to_string().contains("no system is named `ghost`"));
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
    fn filtered(_q: Query<&mut A, ecs_engine::Without<A>>) {}
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
        ("filtered", {
            let mut b = Schedule::builder();
            b.add(filtered);
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
