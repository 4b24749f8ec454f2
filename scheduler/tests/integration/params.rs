//! Parameter misuse refused when the schedule is built, not on every tick.

use ecs_engine::Registry;
use scheduler::{BuildError, Commands, Schedule};

#[test]
fn two_commands_parameters_are_a_build_error_naming_the_system() {
    fn double(mut a: Commands, mut b: Commands) {
        a.spawn_empty();
        b.spawn_empty();
    }
    let mut builder = Schedule::builder();
    builder.add(double).named("double_spawner");
    let error = builder.build(&mut Registry::new()).unwrap_err();
    assert_eq!(
        error,
        BuildError::ParamClash {
            system: "double_spawner".into(),
            name: "Commands".into(),
        }
    );
    assert!(error.to_string().contains("`double_spawner`"), "{error}");

    // One `Commands` is fine.
    let mut builder = Schedule::builder();
    builder.add(|mut c: Commands| {
        c.spawn_empty();
    });
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule
        .run(&mut registry, scheduler::Tick::default())
        .unwrap();
    assert_eq!(registry.len(), 1);
}
