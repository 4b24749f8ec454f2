//! `ScheduleBuilder::add_chain`: systems in the order given, each in a
//! later wave, whatever their access.

use crate::common;

use common::wave_names;
use ecs_engine::Registry;
use scheduler::{Query, ResMut, Schedule, Tick};

#[derive(Debug, Default)]
struct Log(Vec<&'static str>);
struct Value(i64);

fn double(mut q: Query<&mut Value>) {
    q.each(|v| v.0 *= 2);
}
fn add_one(mut q: Query<&mut Value>) {
    q.each(|v| v.0 += 1);
}
fn note(mut log: ResMut<Log>) {
    log.0.push("note");
}

#[test]
fn a_chain_links_each_system_to_the_one_before_and_explain_says_so() {
    let mut registry = Registry::new();
    registry.insert_resource(Log::default());
    let e = registry.spawn((Value(3),));
    let mut builder = Schedule::builder();
    // `note` touches nothing of the chain's systems: only its own
    // constraint orders it.
    builder.add(note).after("add_one");
    builder.add_chain((add_one, double));
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        wave_names(&schedule),
        [vec!["add_one"], vec!["note", "double"]]
    );
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(registry.get::<Value>(e).unwrap().0, 8);
    let text = schedule.explain().to_string();
    assert!(
        text.contains("after add_one (wave 0): `double` declared after"),
        "{text}"
    );
}

#[test]
fn a_chain_of_independent_systems_takes_one_wave_each_in_its_order() {
    struct A(u32);
    struct B(u32);
    struct C(u32);
    let mut registry = Registry::new();
    registry.insert_resource(A(0));
    registry.insert_resource(B(0));
    registry.insert_resource(C(0));
    let mut builder = Schedule::builder();
    builder.add_chain((
        |mut c: ResMut<C>| c.0 += 1,
        |mut b: ResMut<B>| b.0 += 1,
        |mut a: ResMut<A>| a.0 += 1,
    ));
    let schedule = builder.build(&mut registry).unwrap();
    let ids: Vec<Vec<usize>> = schedule
        .waves()
        .iter()
        .map(|w| w.iter().map(|(id, _)| id.index()).collect())
        .collect();
    // Without the chain the three would share one wave.
    assert_eq!(ids, [vec![0], vec![1], vec![2]]);
}
