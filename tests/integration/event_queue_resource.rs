//! An input queue registered as a resource: a producer thread pushes, a
//! system drains it at the start of each tick through ordinary resource
//! access, which the scheduler sees.

use ecs_runtime::ecs_engine::Registry;
use ecs_runtime::event_queue::EventQueue;
use ecs_runtime::scheduler::{Query, Res, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Thrust(i32);

#[derive(Debug, PartialEq)]
struct Ship {
    speed: i32,
}

fn steering(input: Res<EventQueue<Thrust>>, mut ships: Query<&mut Ship>) {
    let total: i32 = input.drain().map(|t| t.0).sum();
    ships.each(|ship| ship.speed += total);
}

fn reader(_input: Res<EventQueue<Thrust>>, _ships: Query<&Ship>) {}

#[test]
fn a_system_drains_an_input_queue_resource_each_tick() {
    let queue = EventQueue::new();
    let mut registry = Registry::new();
    registry.insert_resource(queue.clone());
    let ship = registry.spawn((Ship { speed: 0 },));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(steering);
    builder.add(reader);
    let mut schedule = builder.build(&mut registry).unwrap();
    // The queue is a read of the resource: only `Ship` orders the two.
    assert!(
        schedule
            .explain()
            .to_string()
            .contains("reads resource EventQueue")
    );
    assert_eq!(schedule.waves().len(), 2);

    let producer = std::thread::spawn(move || {
        for i in 1..=100 {
            queue.push(Thrust(i)).unwrap();
        }
        queue
    });
    let queue = producer.join().unwrap();
    schedule.run(&mut registry, Tick::default()).unwrap();
    assert_eq!(registry.get::<Ship>(ship), Some(&Ship { speed: 5050 }));
    assert!(queue.is_empty());

    queue.push(Thrust(-50)).unwrap();
    queue.close();
    schedule
        .run(
            &mut registry,
            Tick {
                number: 1,
                ..Tick::default()
            },
        )
        .unwrap();
    assert_eq!(registry.get::<Ship>(ship), Some(&Ship { speed: 5000 }));
    assert!(
        queue.push(Thrust(1)).is_err(),
        "closed queues refuse events"
    );
}
