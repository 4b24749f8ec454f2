//! Game loops a newcomer writes in the first hour: pairs that each read
//! what the other writes, a reader ordered before its writer, and a
//! system registered after another running after it. Each builds under
//! the default policy and runs in the order described; the writer-first
//! policy builds them too, and says where it fell back.

use crate::common;

use ecs_engine::Registry;
use scheduler::{BuildError, Policy, Query, Res, ResMut, Schedule, Tick};

use common::wave_names;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Steer(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shots(i32);

/// A one-cell "grid": the sum of velocities, rebuilt every tick.
#[derive(Debug, Default)]
struct Grid(f32);

fn steer(mut q: Query<(&Velocity, &mut Steer)>) {
    q.each(|(v, s)| s.0 = -v.0 / 2.0);
}

fn integrate(mut q: Query<(&Steer, &mut Velocity)>) {
    q.each(|(s, v)| v.0 += s.0);
}

#[test]
fn steer_and_integrate_run_in_registration_order() {
    for policy in [Policy::RegistrationOrder, Policy::WriterFirst] {
        let mut registry = Registry::new();
        let ship = registry.spawn((Velocity(8.0), Steer(0.0)));
        let mut builder = Schedule::builder();
        builder.policy(policy).threads(2);
        builder.add(steer);
        builder.add(integrate);
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(
            wave_names(&schedule),
            vec![vec!["steer".to_owned()], vec!["integrate".to_owned()]]
        );
        schedule.run(&mut registry, Tick::default()).unwrap();
        // steer saw 8 (-> -4), then integrate applied it: 4.
        assert_eq!(registry.get::<Velocity>(ship), Some(&Velocity(4.0)));
        schedule.run(&mut registry, Tick::default()).unwrap();
        assert_eq!(registry.get::<Velocity>(ship), Some(&Velocity(2.0)));
        let text = schedule.explain().to_string();
        if policy == Policy::WriterFirst {
            assert!(
                text.contains("after steer (wave 0): Velocity: conflict, ordered by the pair's other conflict; Steer: write -> read"),
                "{text}"
            );
        } else {
            assert!(
                text.contains("after steer (wave 0): Velocity: conflict, registration order; Steer: conflict, registration order"),
                "{text}"
            );
        }
    }
}

fn build_grid(mut grid: ResMut<Grid>, q: Query<&Velocity>) {
    grid.0 = q.iter().map(|v| v.0).sum();
}

fn hunt(grid: Res<Grid>, mut q: Query<&mut Velocity>) {
    let crowd = grid.0;
    q.each(|v| v.0 -= crowd / 10.0);
}

#[test]
fn build_grid_and_hunt_through_a_resource() {
    for policy in [Policy::RegistrationOrder, Policy::WriterFirst] {
        let mut registry = Registry::new();
        registry.insert_resource(Grid::default());
        let a = registry.spawn((Velocity(10.0),));
        let b = registry.spawn((Velocity(20.0),));
        let mut builder = Schedule::builder();
        builder.policy(policy).threads(2);
        builder.add(build_grid);
        builder.add(hunt);
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(
            wave_names(&schedule),
            vec![vec!["build_grid".to_owned()], vec!["hunt".to_owned()]]
        );
        schedule.run(&mut registry, Tick::default()).unwrap();
        assert_eq!(registry.resource::<Grid>().unwrap().0, 30.0);
        assert_eq!(registry.get::<Velocity>(a), Some(&Velocity(7.0)));
        assert_eq!(registry.get::<Velocity>(b), Some(&Velocity(17.0)));
    }
}

fn writer(mut q: Query<&mut Health>) {
    q.each(|h| h.0 -= 1);
}

fn reader(mut shots: ResMut<Grid>, q: Query<&Health>) {
    shots.0 = q.iter().map(|h| h.0 as f32).sum();
}

#[test]
fn a_reader_ordered_before_its_writer_builds() {
    for policy in [Policy::RegistrationOrder, Policy::WriterFirst] {
        let mut registry = Registry::new();
        registry.insert_resource(Grid::default());
        registry.spawn((Health(5),));
        let mut builder = Schedule::builder();
        builder.policy(policy).threads(2);
        builder.add(writer);
        builder.add(reader).before("writer");
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(
            wave_names(&schedule),
            vec![vec!["reader".to_owned()], vec!["writer".to_owned()]]
        );
        schedule.run(&mut registry, Tick::default()).unwrap();
        // The reader saw the health before the writer's hit.
        assert_eq!(registry.resource::<Grid>().unwrap().0, 5.0);
    }
}

fn shooter(mut q: Query<(&Health, &mut Shots)>) {
    q.each(|(h, s)| {
        if h.0 > 0 {
            s.0 += 1;
        }
    });
}

fn damage(mut q: Query<&mut Health>) {
    q.each(|h| h.0 -= 1);
}

#[test]
fn damage_registered_after_shooter_runs_after_it() {
    let mut registry = Registry::new();
    let ship = registry.spawn((Health(1), Shots(0)));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(shooter);
    builder.add(damage);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        wave_names(&schedule),
        vec![vec!["shooter".to_owned()], vec!["damage".to_owned()]]
    );
    schedule.run(&mut registry, Tick::default()).unwrap();
    // The shooter fired with its last health point, then took the damage.
    assert_eq!(registry.get::<Shots>(ship), Some(&Shots(1)));
    assert_eq!(registry.get::<Health>(ship), Some(&Health(0)));

    // Writer-first (asked for) puts the writer first, as documented.
    let mut registry = Registry::new();
    let ship = registry.spawn((Health(1), Shots(0)));
    let mut builder = Schedule::builder();
    builder.policy(Policy::WriterFirst).threads(2);
    builder.add(shooter);
    builder.add(damage);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        wave_names(&schedule),
        vec![vec!["damage".to_owned()], vec!["shooter".to_owned()]]
    );
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(registry.get::<Shots>(ship), Some(&Shots(0)));
}

mod physics {
    use super::Velocity;
    use scheduler::Query;

    pub(super) fn update(mut q: Query<&mut Velocity>) {
        q.each(|v| v.0 *= 0.5);
    }
}

mod render {
    use super::Health;
    use scheduler::Query;

    pub(super) fn update(_q: Query<&Health>) {}
}

#[test]
fn default_names_are_unique_and_readable() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.add(physics::update);
    builder.add(render::update);
    builder.add(|mut q: Query<&mut Shots>| q.each(|s| s.0 += 1));
    builder.add(|mut q: Query<&mut Shots>| q.each(|s| s.0 += 10));
    builder.add(steer);
    builder.add(steer).after("physics::update");
    let schedule = builder.build(&mut registry).unwrap();
    let mut names: Vec<String> = (0..schedule.len())
        .map(|i| {
            let id = schedule.waves().concat()[0].0;
            let _ = id;
            schedule
                .system_timings()
                .nth(i)
                .map(|(_, n, _)| n.to_owned())
                .unwrap()
        })
        .collect();
    assert_eq!(names[0], "physics::update");
    assert_eq!(names[1], "render::update");
    assert_eq!(
        names[2],
        "default_names_are_unique_and_readable::{{closure}}"
    );
    assert_eq!(
        names[3],
        "default_names_are_unique_and_readable::{{closure}}#2"
    );
    assert_eq!(names[4], "steer");
    assert_eq!(names[5], "steer#2");
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 6);

    // Two equal names chosen by the user stay an error.
    let mut builder = Schedule::builder();
    builder.add(physics::update).named("tick");
    builder.add(render::update).named("tick");
    assert_eq!(
        builder.build(&mut registry).unwrap_err(),
        BuildError::DuplicateName {
            name: "tick".into()
        }
    );
}
