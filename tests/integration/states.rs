//! States: `State<S>`, `NextState<S>`, enter and exit systems, `in_state`,
//! transitions at the start of the next tick, identity transitions and
//! `set_if_neq`, the build errors, and the
//! same world on 1, 2 and 8 threads.

use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::BuildError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    Menu,
    Playing,
    Over,
}

#[derive(Debug, Clone, PartialEq)]
enum Weather {
    Sun,
    Rain,
}

/// What ran, in order: `(tick, what)`.
#[derive(Default)]
struct Log(Vec<(u64, String)>);

fn log(tick: Tick, log: &mut ResMut<Log>, what: &str) {
    log.0.push((tick.number, what.to_owned()));
}

struct Enemy(u64);

fn engine(threads: usize) -> Engine {
    engine_with(threads, false, None)
}

/// The test game: `start` asks for `Playing` at tick 2 (with
/// `set_if_neq` when `start_if_neq`), and a `restart` system asks for
/// `Playing` again (an identity transition) at tick `restart_at`.
fn engine_with(threads: usize, start_if_neq: bool, restart_at: Option<u64>) -> Engine {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.insert_resource(Log::default());
    builder.add_state(Mode::Menu);
    builder.add_on_enter(Mode::Menu, |t: Tick, mut l: ResMut<Log>| {
        log(t, &mut l, "enter menu");
    });
    builder.add_on_exit(
        Mode::Menu,
        |t: Tick, mut l: ResMut<Log>, s: Res<State<Mode>>| {
            // Exit systems still see the state being left.
            assert_eq!(**s, Mode::Menu);
            log(t, &mut l, "exit menu");
        },
    );
    builder.add_on_enter(
        Mode::Playing,
        |t: Tick, mut l: ResMut<Log>, mut c: Commands| {
            log(t, &mut l, "enter playing");
            for i in 0..500 {
                c.spawn((Enemy(i),));
            }
        },
    );
    builder.add_on_exit(
        Mode::Playing,
        |t: Tick, mut l: ResMut<Log>, mut c: Commands, q: Query<(Entity, &Enemy)>| {
            log(t, &mut l, "exit playing");
            for (e, _) in q.iter() {
                c.despawn(e);
            }
        },
    );
    builder.add_on_enter(
        Mode::Over,
        |t: Tick, mut l: ResMut<Log>, q: Query<&Enemy>| {
            // The exit's commands were applied before the enter ran.
            assert_eq!(q.iter().count(), 0);
            log(t, &mut l, "enter over");
        },
    );
    builder
        .add_system(move |t: Tick, mut next: ResMut<NextState<Mode>>| {
            if t.number == 2 {
                if start_if_neq {
                    next.set_if_neq(Mode::Playing);
                } else {
                    next.set(Mode::Playing);
                }
            }
        })
        .run_if(in_state(Mode::Menu))
        .named("start");
    if let Some(at) = restart_at {
        builder
            .add_system(move |t: Tick, mut next: ResMut<NextState<Mode>>| {
                if t.number == at {
                    next.set(Mode::Playing);
                }
            })
            .run_if(in_state(Mode::Playing))
            .named("restart");
    }
    // Two parallel writers of different types while playing.
    builder
        .add_system(|mut q: Query<&mut Enemy>| q.par_each(|e| e.0 = e.0 * 3 + 1))
        .run_if(in_state(Mode::Playing))
        .named("grow");
    builder
        .add_system(
            |t: Tick,
             mut l: ResMut<Log>,
             mut next: ResMut<NextState<Mode>>,
             s: Res<State<Mode>>| {
                assert_eq!(**s, Mode::Playing);
                log(t, &mut l, "play");
                if t.number == 5 {
                    next.set(Mode::Over);
                }
            },
        )
        .run_if(in_state(Mode::Playing))
        .named("play");
    builder.build().unwrap()
}

fn expected_log() -> Vec<(u64, String)> {
    [
        (0, "enter menu"),
        (3, "exit menu"),
        (3, "enter playing"),
        (3, "play"),
        (4, "play"),
        (5, "play"),
        (6, "exit playing"),
        (6, "enter over"),
    ]
    .into_iter()
    .map(|(t, s)| (t, s.to_owned()))
    .collect()
}

#[test]
fn transitions_run_at_the_start_of_the_next_tick_in_order() {
    let mut engine = engine(2);
    engine.run(5).unwrap();
    // Enemies spawned on entering Playing at tick 3, grown at ticks 3 and 4.
    let mut values: Vec<u64> = engine
        .registry()
        .view::<&Enemy>()
        .iter()
        .map(|e| e.0)
        .collect();
    values.sort_unstable();
    assert_eq!(values.len(), 500);
    assert_eq!(values[0], 4); // 0 -> 1 -> 4
    assert_eq!(values[499], (499 * 3 + 1) * 3 + 1);
    engine.run(3).unwrap();
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        expected_log()
    );
    assert_eq!(
        engine.registry().resource::<State<Mode>>().unwrap().get(),
        &Mode::Over
    );
    assert!(
        engine
            .registry()
            .resource::<NextState<Mode>>()
            .unwrap()
            .pending()
            .is_none()
    );
    assert!(engine.registry().is_empty());
}

#[test]
fn the_same_world_on_1_2_and_8_threads() {
    let run = |threads: usize| {
        let mut engine = engine(threads);
        engine.run(5).unwrap();
        let mut world: Vec<(u32, u64)> = engine
            .registry()
            .view::<(Entity, &Enemy)>()
            .iter()
            .map(|(e, v)| (e.index(), v.0))
            .collect();
        world.sort_unstable();
        engine.run(3).unwrap();
        (
            world,
            engine.registry().resource::<Log>().unwrap().0.clone(),
        )
    };
    let one = run(1);
    assert_eq!(one.0.len(), 500);
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}

#[test]
fn set_if_neq_of_the_current_state_or_a_reset_changes_nothing() {
    let mut engine = engine(1);
    engine.run(1).unwrap();
    engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap()
        .set_if_neq(Mode::Menu);
    engine.run(1).unwrap();
    let next = engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap();
    next.set(Mode::Over);
    next.reset();
    engine.run(1).unwrap();
    // The last request wins: `set_if_neq` of the current value after a
    // `set` of another is nothing too.
    let next = engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap();
    next.set(Mode::Over);
    next.set_if_neq(Mode::Menu);
    assert_eq!(next.pending(), Some(&Mode::Menu));
    engine.run(1).unwrap();
    // Only the initial enter; the `start` system asks for Playing at tick 2,
    // applied at tick 3, after these four ticks.
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [(0, "enter menu".to_owned())]
    );
    assert_eq!(
        engine.registry().resource::<State<Mode>>().unwrap().get(),
        &Mode::Menu
    );
    assert!(
        engine
            .registry()
            .resource::<NextState<Mode>>()
            .unwrap()
            .pending()
            .is_none()
    );
}

#[test]
fn set_of_the_current_state_exits_then_enters_it_once_each() {
    let mut engine = engine(1);
    engine.run(1).unwrap();
    engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap()
        .set(Mode::Menu);
    engine.run(2).unwrap();
    // Tick 1: the identity transition; tick 2: nothing more.
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [
            (0, "enter menu".to_owned()),
            (1, "exit menu".to_owned()),
            (1, "enter menu".to_owned()),
        ]
    );
    assert_eq!(
        engine.registry().resource::<State<Mode>>().unwrap().get(),
        &Mode::Menu
    );
}

#[test]
fn set_if_neq_keeps_a_pending_set_of_the_same_value() {
    let mut engine = engine(1);
    engine.run(1).unwrap();
    let next = engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap();
    next.set(Mode::Menu);
    next.set_if_neq(Mode::Menu); // does not turn the `set` into a no-op
    engine.run(1).unwrap();
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [
            (0, "enter menu".to_owned()),
            (1, "exit menu".to_owned()),
            (1, "enter menu".to_owned()),
        ]
    );
}

#[test]
fn set_if_neq_of_another_value_is_the_normal_transition_on_1_2_and_8_threads() {
    for threads in [1, 2, 8] {
        let mut engine = engine_with(threads, true, None);
        engine.run(8).unwrap();
        assert_eq!(
            engine.registry().resource::<Log>().unwrap().0,
            expected_log(),
            "{threads} threads"
        );
        assert_eq!(
            engine.registry().resource::<State<Mode>>().unwrap().get(),
            &Mode::Over
        );
        assert!(engine.registry().is_empty());
    }
}

#[test]
fn an_identity_transition_from_a_system_is_the_same_on_1_2_and_8_threads() {
    let run = |threads: usize| {
        // `restart` asks for Playing again at tick 3: at the start of tick
        // 4, exit Playing (despawns the 500) then enter it (spawns 500).
        let mut engine = engine_with(threads, false, Some(3));
        engine.run(5).unwrap();
        let mut world: Vec<(u32, u32, u64)> = engine
            .registry()
            .view::<(Entity, &Enemy)>()
            .iter()
            .map(|(e, v)| (e.index(), e.generation(), v.0))
            .collect();
        world.sort_unstable();
        (
            world,
            engine.registry().resource::<Log>().unwrap().0.clone(),
        )
    };
    let one = run(1);
    let log: Vec<(u64, String)> = [
        (0, "enter menu"),
        (3, "exit menu"),
        (3, "enter playing"),
        (3, "play"),
        (4, "exit playing"),
        (4, "enter playing"),
        (4, "play"),
    ]
    .into_iter()
    .map(|(t, s)| (t, s.to_owned()))
    .collect();
    assert_eq!(one.1, log);
    // The 500 of the restart, grown once (tick 4): 3 * i + 1.
    let mut values: Vec<u64> = one.0.iter().map(|&(_, _, v)| v).collect();
    values.sort_unstable();
    assert_eq!(values, (0..500).map(|i| 3 * i + 1).collect::<Vec<u64>>());
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}

#[test]
fn the_last_value_set_wins_and_two_state_types_are_independent() {
    let mut builder = Engine::builder();
    builder.threads(1);
    builder.insert_resource(Log::default());
    builder.add_state(Mode::Menu).add_state(Weather::Sun);
    builder.add_on_enter(Weather::Rain, |t: Tick, mut l: ResMut<Log>| {
        log(t, &mut l, "rain")
    });
    builder.add_on_enter(Mode::Over, |t: Tick, mut l: ResMut<Log>| {
        log(t, &mut l, "over")
    });
    builder.add_system(
        |t: Tick, mut m: ResMut<NextState<Mode>>, mut w: ResMut<NextState<Weather>>| {
            if t.number == 0 {
                m.set(Mode::Playing);
                m.set(Mode::Over);
                w.set(Weather::Rain);
            }
        },
    );
    let mut engine = builder.build().unwrap();
    engine.run(2).unwrap();
    // Types in the order added: Mode's transition first.
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [(1, "over".to_owned()), (1, "rain".to_owned())]
    );
    assert_eq!(
        engine
            .registry()
            .resource::<State<Weather>>()
            .unwrap()
            .get(),
        &Weather::Rain
    );
}

#[test]
fn a_state_set_from_outside_a_tick_applies_at_the_next_tick() {
    let mut builder = Engine::builder();
    builder.add_state(Mode::Menu);
    builder.insert_resource(0_u32);
    builder
        .add_system(|mut n: ResMut<u32>| *n += 1)
        .run_if(in_state(Mode::Playing));
    let mut engine = builder.build().unwrap();
    engine.run(2).unwrap();
    assert_eq!(engine.registry().resource::<u32>(), Some(&0));
    engine
        .registry_mut()
        .resource_mut::<NextState<Mode>>()
        .unwrap()
        .set(Mode::Playing);
    engine.run(2).unwrap();
    assert_eq!(engine.registry().resource::<u32>(), Some(&2));
}

#[test]
fn in_state_of_a_type_never_added_is_a_build_error_naming_it() {
    let mut builder = Engine::builder();
    builder
        .add_system(|| {})
        .named("menu_ui")
        .run_if(in_state(Mode::Menu));
    let error = builder.build().unwrap_err();
    assert_eq!(
        error,
        EngineError::Build(BuildError::UnknownState {
            system: "menu_ui".to_owned(),
            state: "Mode".to_owned(),
        })
    );
    assert!(error.to_string().contains("`Mode`"), "{error}");
}

#[test]
fn in_state_through_a_set_is_checked_too() {
    let mut builder = Engine::builder();
    builder.set("ui").run_if(in_state(Weather::Sun));
    builder.add_system(|| {}).named("draw").in_set("ui");
    let error = builder.build().unwrap_err();
    assert!(matches!(
        error,
        EngineError::Build(BuildError::UnknownState { ref system, ref state })
            if system == "draw" && state == "Weather"
    ));
}

#[test]
fn an_enter_system_of_a_type_never_added_is_a_build_error() {
    let mut builder = Engine::builder();
    builder.add_on_enter(Weather::Rain, || {});
    let error = builder.build().unwrap_err();
    assert!(matches!(
        error,
        EngineError::Build(BuildError::UnknownState { ref state, .. }) if state == "Weather"
    ));
}

#[test]
fn a_state_type_added_twice_is_a_build_error() {
    let mut builder = Engine::builder();
    builder.add_state(Mode::Menu).add_state(Mode::Over);
    assert_eq!(
        builder.build().unwrap_err(),
        EngineError::Build(BuildError::DuplicateState {
            state: "Mode".to_owned()
        })
    );
}

#[test]
fn a_failing_enter_system_stops_the_tick_naming_it() {
    let mut builder = Engine::builder();
    builder.add_state(Mode::Menu);
    builder.add_on_enter(Mode::Menu, || -> Result<(), String> {
        Err("no level file".into())
    });
    let mut engine = builder.build().unwrap();
    let error = engine.tick().unwrap_err();
    assert!(error.to_string().contains("no level file"), "{error}");
    // The state is as it was, and the next tick runs.
    assert_eq!(
        engine.registry().resource::<State<Mode>>().unwrap().get(),
        &Mode::Menu
    );
    engine.tick().unwrap();
}

#[test]
fn a_state_already_in_the_registry_is_kept() {
    let mut builder = Engine::builder();
    builder.insert_resource(Log::default());
    builder
        .registry_mut()
        .insert_resource(State::new(Mode::Playing));
    builder.add_state(Mode::Menu);
    builder.add_on_enter(Mode::Playing, |t: Tick, mut l: ResMut<Log>| {
        log(t, &mut l, "resumed")
    });
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [(0, "resumed".to_owned())]
    );
}
