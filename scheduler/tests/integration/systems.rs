//! The systems users expect: run conditions, exclusive systems, system
//! sets, systems returning `Result`, and resources checked before the
//! first system runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ecs_engine::{Entity, Registry};
use scheduler::{
    BuildError, Commands, DeclaredSystem, Local, Query, Res, ResMut, RunError, Schedule,
    SystemAccess, SystemError, SystemSet, Tick,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(i64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(i64);

#[derive(Debug, Default)]
struct Paused(bool);
#[derive(Debug, Default)]
struct Frame(u64);

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

fn order(schedule: &Schedule) -> Vec<Vec<String>> {
    schedule
        .waves()
        .into_iter()
        .map(|w| w.into_iter().map(|(_, n)| n.to_owned()).collect())
        .collect()
}

fn running(paused: Res<Paused>) -> bool {
    !paused.0
}

fn even_frame(frame: Res<Frame>) -> bool {
    frame.0.is_multiple_of(2)
}

fn movement(mut q: Query<(&mut Position, &Velocity)>) {
    q.each(|(p, v)| p.0 += v.0);
}

fn spawner(mut commands: Commands) {
    commands.spawn((Position(0), Velocity(0)));
}

fn count_frame(mut frame: ResMut<Frame>) {
    frame.0 += 1;
}

#[test]
fn run_conditions_skip_systems_and_their_commands() {
    for threads in [1, 2, 8] {
        let mut registry = Registry::new();
        registry.insert_resource(Paused(false));
        registry.insert_resource(Frame(0));
        let ship = registry.spawn((Position(0), Velocity(1)));
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.add(movement).run_if(running);
        builder.add(spawner).run_if(running).run_if(even_frame);
        builder.add(count_frame);
        let mut schedule = builder.build(&mut registry).unwrap();
        let text = schedule.explain().to_string();
        assert!(
            text.contains("spawner: reads resource Paused, Frame; records commands; runs if its 2 conditions hold"),
            "{text}"
        );
        // The conditions read Frame: spawner is ordered before count_frame.
        assert_eq!(
            order(&schedule),
            [vec!["movement", "spawner"], vec!["count_frame"]]
        );
        for number in 0..4 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        // Frames 0 and 2 spawned; movement ran 4 times.
        assert_eq!(registry.get::<Position>(ship), Some(&Position(4)));
        assert_eq!(registry.len(), 3);
        registry.resource_mut::<Paused>().unwrap().0 = true;
        for number in 4..8 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        assert_eq!(registry.get::<Position>(ship), Some(&Position(4)));
        assert_eq!(registry.len(), 3);
        let timings: Vec<_> = schedule.system_timings().map(|(_, _, t)| t).collect();
        assert!(timings[0].is_zero() && timings[1].is_zero());
        assert_eq!(registry.resource::<Frame>().unwrap().0, 8);
    }
}

fn hurt(mut q: Query<&mut Position>) {
    q.each(|p| p.0 -= 1);
}

fn bury(registry: &mut Registry) {
    let dead: Vec<Entity> = registry
        .view::<(Entity, &Position)>()
        .iter()
        .filter(|(_, p)| p.0 <= 0)
        .map(|(e, _)| e)
        .collect();
    for entity in dead {
        registry.despawn(entity).unwrap();
    }
}

fn bury_checked(registry: &mut Registry) -> Result<(), String> {
    if registry.len() > 100 {
        return Err(format!("{} entities", registry.len()));
    }
    bury(registry);
    Ok(())
}

#[test]
fn an_exclusive_system_runs_alone_in_its_place() {
    let seen = Arc::new(AtomicUsize::new(0));
    let record = Arc::clone(&seen);
    let mut registry = Registry::new();
    registry.insert_resource(Paused(false));
    let doomed = registry.spawn((Position(1), Velocity(0)));
    let kept = registry.spawn((Position(5), Velocity(0)));
    let mut builder = Schedule::builder();
    builder.threads(4);
    builder.add(hurt);
    builder
        .add(|_: Query<&Velocity>| {})
        .named("reads_velocity");
    builder.add(bury).run_if(running);
    builder
        .add(move |q: Query<&Position>| record.store(q.iter().count(), Ordering::SeqCst))
        .named("count");
    let mut schedule = builder.build(&mut registry).unwrap();
    // bury conflicts with everything: a wave of its own, in its place.
    assert_eq!(
        order(&schedule),
        [vec!["hurt", "reads_velocity"], vec!["bury"], vec!["count"]]
    );
    assert!(
        schedule
            .explain()
            .to_string()
            .contains("exclusive (the whole registry)")
    );
    schedule.run(&mut registry, tick(0)).unwrap();
    assert!(!registry.is_alive(doomed));
    assert!(registry.is_alive(kept));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    // A run condition skips it too.
    registry.resource_mut::<Paused>().unwrap().0 = true;
    for number in 1..5 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    // hurt went on (5 -> 0) but bury did not run: kept is still there.
    assert!(registry.is_alive(kept));
    assert_eq!(registry.get::<Position>(kept), Some(&Position(0)));
}

#[test]
fn an_exclusive_systems_error_and_panic_name_it() {
    let mut registry = Registry::new();
    for _ in 0..101 {
        registry.spawn((Position(0),));
    }
    let mut builder = Schedule::builder();
    builder.add(bury_checked);
    builder
        .add(|_: &mut Registry| panic!("level file missing"))
        .named("load");
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        schedule.run(&mut registry, tick(0)).unwrap_err(),
        RunError::System {
            tick: 0,
            source: SystemError::Failed {
                system: "bury_checked".into(),
                message: "101 entities".into()
            }
        }
    );
    let first = registry
        .view::<(Entity, &Position)>()
        .iter()
        .next()
        .unwrap()
        .0;
    registry.despawn(first).unwrap();
    let error = schedule.run(&mut registry, tick(1)).unwrap_err();
    assert!(
        matches!(&error, RunError::Panic { system, message, .. } if system == "load" && message == "level file missing"),
        "{error:?}"
    );
    assert_eq!(registry.len(), 0, "bury ran before the panic");
}

#[derive(Debug, PartialEq)]
struct OutOfAmmo(u32);

impl std::fmt::Display for OutOfAmmo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "out of ammo after {} shots", self.0)
    }
}

fn shoot(mut frame: ResMut<Frame>) -> Result<(), OutOfAmmo> {
    frame.0 += 1;
    if frame.0 > 2 {
        return Err(OutOfAmmo(2));
    }
    Ok(())
}

#[test]
fn a_system_returning_an_error_stops_the_tick_naming_it() {
    let mut registry = Registry::new();
    registry.insert_resource(Frame(0));
    let mut builder = Schedule::builder();
    builder.add(shoot);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    let error = schedule.run(&mut registry, tick(2)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tick 2: system `shoot` failed: out of ammo after 2 shots"
    );
}

#[test]
fn system_sets_order_and_condition_their_members() {
    let mut registry = Registry::new();
    registry.insert_resource(Paused(false));
    let ship = registry.spawn((Position(0), Velocity(2)));
    let mut builder = Schedule::builder();
    builder.threads(2);
    // The render plugin, added first, knows nothing of physics systems.
    builder.set("render").after("physics");
    builder
        .add(|_: Query<&Position>| {})
        .named("draw")
        .in_set("render");
    builder.set("physics").run_if(running);
    builder.add(movement).in_set("physics");
    builder
        .add(|mut q: Query<&mut Velocity>| q.each(|v| v.0 *= 2))
        .named("accelerate")
        .in_set("physics")
        .before("movement");
    builder
        .add(|_: Query<&Velocity>| {})
        .named("hud")
        .after("physics");
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        order(&schedule),
        [vec!["accelerate"], vec!["movement"], vec!["draw", "hud"]]
    );
    let text = schedule.explain().to_string();
    assert!(text.contains("`set render` declared after"), "{text}");
    schedule.run(&mut registry, tick(0)).unwrap();
    assert_eq!(registry.get::<Position>(ship), Some(&Position(4)));
    registry.resource_mut::<Paused>().unwrap().0 = true;
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(registry.get::<Position>(ship), Some(&Position(4)));

    // A set cycle is a user constraint cycle, and an unknown set an error.
    let mut builder = Schedule::builder();
    builder.set("a").before("b");
    builder.set("b").before("a");
    builder.add(movement).in_set("a");
    builder.add(hurt).in_set("b");
    assert!(matches!(
        builder.build(&mut Registry::new()),
        Err(BuildError::Cycle { .. })
    ));
    let mut builder = Schedule::builder();
    builder.add(movement).after("ghosts");
    assert!(matches!(
        builder.build(&mut Registry::new()),
        Err(BuildError::UnknownSystem { .. })
    ));
    // A declared set may be empty (a plugin that is not there): no error.
    let mut builder = Schedule::builder();
    builder.set("audio");
    builder.add(movement).after("audio");
    assert!(builder.build(&mut Registry::new()).is_ok());
}

/// Typed set labels (bevy's `#[derive(SystemSet)]`).
#[derive(Debug, Clone, Copy)]
enum GameSet {
    Physics,
    Render,
}
impl SystemSet for GameSet {}

#[derive(Debug)]
struct Audio;
impl SystemSet for Audio {}

#[test]
fn typed_sets_order_like_string_sets_and_are_named_by_type_and_value() {
    let mut registry = Registry::new();
    registry.spawn((Position(0), Velocity(1)));
    let mut builder = Schedule::builder();
    builder.set(GameSet::Physics).before(GameSet::Render);
    builder
        .add(|_: Query<&Position>| {})
        .named("draw")
        .in_set(GameSet::Render);
    builder.add(movement).in_set(GameSet::Physics);
    // The string with a typed label's name is the same set.
    builder
        .add(|mut q: Query<&mut Velocity>| q.each(|v| v.0 *= 2))
        .named("accelerate")
        .in_set(format!("{}::Physics", std::any::type_name::<GameSet>()))
        .before("movement");
    builder
        .add(|_: Query<&Velocity>| {})
        .named("hud")
        .after(GameSet::Physics);
    let schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        order(&schedule),
        [vec!["accelerate"], vec!["movement"], vec!["draw", "hud"]]
    );
    let text = schedule.explain().to_string();
    assert!(
        text.contains("`set integration::systems::GameSet::Physics` declared before"),
        "{text}"
    );

    // A typed set nobody declared or joined is unknown, named in the error.
    let mut builder = Schedule::builder();
    builder.add(movement).after(Audio);
    match builder.build(&mut Registry::new()) {
        Err(BuildError::UnknownSystem { target, .. }) => {
            assert_eq!(target, "integration::systems::Audio")
        }
        other => panic!("expected UnknownSystem, got {other:?}"),
    }

    // A set's constraint on an unknown name is the set's, named as one.
    let mut builder = Schedule::builder();
    builder.add(movement).in_set(GameSet::Physics);
    builder.set(GameSet::Physics).before(Audio);
    let error = builder.build(&mut Registry::new()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "set `integration::systems::GameSet::Physics` must run before `integration::systems::Audio`, \
         but no system or set is named `integration::systems::Audio`"
    );
}

#[test]
fn a_missing_resource_is_reported_before_any_system_runs() {
    let mut registry = Registry::new();
    let ship = registry.spawn((Position(0), Velocity(1)));
    let mut builder = Schedule::builder();
    builder.add(movement);
    builder.add(hurt).run_if(running);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        schedule.run(&mut registry, tick(0)).unwrap_err(),
        RunError::MissingResource {
            tick: 0,
            system: "hurt".into(),
            resource: "Paused".into()
        }
    );
    // Nothing ran: movement comes first but the check precedes it.
    assert_eq!(registry.get::<Position>(ship), Some(&Position(0)));
    registry.insert_resource(Paused(false));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(registry.get::<Position>(ship), Some(&Position(0)));
}

#[test]
fn optional_resources_may_be_absent_and_are_still_ordered() {
    #[derive(Debug, PartialEq)]
    struct Gravity(i64);
    fn fall(gravity: Option<Res<Gravity>>, mut ships: Query<&mut Position>) {
        let g = gravity.map_or(0, |g| g.0);
        ships.each(|p| p.0 -= g);
    }
    fn tune(gravity: Option<ResMut<Gravity>>) {
        if let Some(mut gravity) = gravity {
            gravity.0 += 1;
        }
    }
    let mut registry = Registry::new();
    let ship = registry.spawn((Position(100), Velocity(0)));
    let mut builder = Schedule::builder();
    builder.add(tune);
    builder.add(fall);
    let mut schedule = builder.build(&mut registry).unwrap();
    // The writer and the reader of `Gravity` are ordered, registration
    // order first, as for `ResMut` and `Res`.
    let waves: Vec<Vec<&str>> = schedule
        .waves()
        .into_iter()
        .map(|w| w.into_iter().map(|(_, n)| n).collect())
        .collect();
    assert_eq!(waves.len(), 2, "{waves:?}");
    assert!(waves[0][0].ends_with("tune"), "{waves:?}");
    schedule.run(&mut registry, tick(0)).unwrap();
    assert_eq!(registry.get::<Position>(ship), Some(&Position(100)));
    registry.insert_resource(Gravity(1));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(registry.resource::<Gravity>(), Some(&Gravity(2)));
    assert_eq!(registry.get::<Position>(ship), Some(&Position(98)));
}

#[test]
fn closures_that_only_panic_are_still_systems() {
    let mut builder = Schedule::builder();
    builder.add(|| panic!("zero")).named("zero");
    builder.add(|_: Tick| panic!("one")).named("one");
    builder
        .add(|_: Tick, _: Query<&Position>| panic!("two"))
        .named("two");
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert!(matches!(error, RunError::Panic { system, .. } if system == "zero"));
}

#[derive(Default)]
struct Log(Vec<(u32, u64)>);

fn numbered(mut calls: Local<u32>, mut total: Local<u64>, frame: Res<Frame>, mut log: ResMut<Log>) {
    *calls += 1;
    *total += frame.0;
    log.0.push((*calls, *total));
}

#[test]
fn locals_belong_to_their_system_and_parameter() {
    let mut registry = Registry::new();
    registry.insert_resource(Frame(10));
    registry.insert_resource(Log::default());
    let mut builder = Schedule::builder();
    builder.add(numbered).named("a");
    builder.add(numbered).named("b");
    // Locals inside a nested tuple keep their own values too.
    builder
        .add(|(mut n, _): (Local<u8>, Tick), mut frame: ResMut<Frame>| {
            *n += 1;
            frame.0 += u64::from(*n);
        })
        .named("nested");
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    // a and b each count their own calls; frame grows 1, 2, 3 after them.
    assert_eq!(
        registry.resource::<Log>().unwrap().0,
        [(1, 10), (1, 10), (2, 21), (2, 21), (3, 34), (3, 34)]
    );
    assert_eq!(registry.resource::<Frame>().unwrap().0, 16);
}

#[test]
fn more_than_eight_parameters_through_nested_tuples() {
    #[allow(clippy::type_complexity, reason = "the point of the test")]
    fn wide(
        (a, b, c, d): (Tick, Tick, Tick, Tick),
        (e, f, g, h): (Tick, Tick, Tick, Tick),
        (mut frame, _pos): (ResMut<Frame>, Query<&Position>),
    ) {
        frame.0 = [a, b, c, d, e, f, g, h].iter().map(|t| t.number).sum();
    }
    let mut registry = Registry::new();
    registry.insert_resource(Frame(0));
    let mut builder = Schedule::builder();
    builder.add(wide);
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(2)).unwrap();
    assert_eq!(registry.resource::<Frame>().unwrap().0, 16);
}

#[derive(Debug, PartialEq)]
struct Level(u32);

fn load_level(mut commands: Commands) {
    commands.insert_resource(Level(1));
    commands.spawn((Position(10), Velocity(1)));
}

fn place_player(registry: &mut Registry) {
    // Sees what load_level spawned: its commands were applied first.
    let count = registry.view::<&Position>().iter().count() as i64;
    registry.spawn((Position(100 * count), Velocity(0)));
}

fn uses_level(level: Res<Level>, mut q: Query<(&mut Position, &Velocity)>) {
    let speed = i64::from(level.0);
    q.each(|(p, v)| p.0 += v.0 * speed);
}

#[test]
fn startup_systems_run_once_before_the_first_tick() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add(uses_level);
    builder.add_startup(load_level);
    builder.add_startup(place_player);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(registry.len(), 0);
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let mut positions: Vec<i64> = registry.view::<&Position>().iter().map(|p| p.0).collect();
    positions.sort_unstable();
    assert_eq!(positions, [13, 100]);
    assert_eq!(registry.resource::<Level>(), Some(&Level(1)));
}

/// `SystemContext::system_index` is the system's own index, for a tick
/// system and for a startup system alike (it once returned the startup
/// system's events key: the number of tick systems plus its index).
#[test]
fn a_system_sees_its_own_index_at_startup_and_at_tick() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = |name: &'static str| {
        let seen = Arc::clone(&seen);
        DeclaredSystem::new(name, SystemAccess::new(), move |ctx| {
            seen.lock().unwrap().push((name, ctx.system_index()));
            Ok(())
        })
    };
    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.add(recorder("tick_0"));
    builder.add(recorder("tick_1")).after("tick_0");
    builder.add(recorder("tick_2")).after("tick_1");
    builder.add_startup(recorder("startup_0"));
    builder.add_startup(recorder("startup_1"));
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("startup_0", 0),
            ("startup_1", 1),
            ("tick_0", 0),
            ("tick_1", 1),
            ("tick_2", 2),
            ("tick_0", 0),
            ("tick_1", 1),
            ("tick_2", 2),
        ]
    );
}

#[test]
fn a_failing_startup_system_names_itself_and_runs_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add_startup(move |_: Tick| -> Result<(), String> {
        counter.fetch_add(1, Ordering::SeqCst);
        Err("no level file".into())
    });
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    assert!(
        error.to_string().contains("a_failing_startup_system_names_itself_and_runs_once::{{closure}}` failed: no level file"),
        "{error}"
    );
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn the_scheduler_records_each_runs_worker_start_and_duration() {
    let mut registry = Registry::new();
    registry.insert_resource(Paused(false));
    registry.spawn((Position(0), Velocity(1)));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(movement);
    builder.add(hurt).run_if(running).after("movement");
    let mut schedule = builder.build(&mut registry).unwrap();
    // On the pool however cheap (these ticks would run on the caller's
    // thread, where `worker` is `None`).
    schedule.set_adaptive(false);
    schedule.run(&mut registry, tick(0)).unwrap();
    registry.resource_mut::<Paused>().unwrap().0 = true;
    schedule.run(&mut registry, tick(1)).unwrap();
    let runs: Vec<_> = schedule.system_runs().collect();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].system.index(), runs[0].tick), (0, 1));
    // hurt was skipped at tick 1: its record is tick 0's.
    assert_eq!((runs[1].system.index(), runs[1].tick), (1, 0));
    for run in &runs {
        assert!(run.worker.is_some_and(|w| w < 2), "{run:?}");
    }
    assert!(runs[1].start < runs[0].start);
}

#[derive(Debug, Default)]
struct TurnLog(Vec<&'static str>);
#[derive(Debug, Default)]
struct Spectators(u32);

#[test]
fn a_set_condition_is_decided_once_per_tick_before_its_first_member() {
    for threads in [1, 2] {
        let mut registry = Registry::new();
        registry.insert_resource(Paused(false));
        registry.insert_resource(TurnLog::default());
        registry.insert_resource(Spectators::default());
        let mut builder = Schedule::builder();
        builder.threads(threads);
        builder.set("turn").run_if(running);
        // The first member pauses the game: the set's later members still
        // run this tick (the verdict was taken before the set began).
        builder
            .add(|mut paused: ResMut<Paused>, mut log: ResMut<TurnLog>| {
                paused.0 = true;
                log.0.push("pause");
            })
            .named("pause")
            .in_set("turn");
        builder
            .add(|mut log: ResMut<TurnLog>| log.0.push("after"))
            .named("after")
            .in_set("turn")
            .after("pause");
        builder
            .add(|mut s: ResMut<Spectators>| s.0 += 1)
            .named("watch")
            .in_set("turn")
            .after("pause");
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(order(&schedule), [vec!["pause"], vec!["after", "watch"]]);
        for number in 0..2 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        registry.resource_mut::<Paused>().unwrap().0 = false;
        schedule.run(&mut registry, tick(2)).unwrap();
        let log = &registry.resource::<TurnLog>().unwrap().0;
        assert_eq!(
            log,
            &["pause", "after", "pause", "after"],
            "{threads} threads"
        );
        assert_eq!(registry.resource::<Spectators>().unwrap().0, 2);
    }
}
