//! The `events` benchmark: 4 writer systems send 10,000 events each per
//! tick, one reader sums them, through `EventWriter`/`EventReader`; beside
//! the same work by hand, each writer pushing into its own `Vec` resource
//! and the reader draining the four. Both run as one tick of a schedule on
//! the same pool (the 4 writers in one wave, the reader after), so the
//! ratio is the cost of the event channel. `EV_THREADS=n` sets the pool's
//! threads (default: one per core).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_runtime::ecs_engine::Registry;
use ecs_runtime::scheduler::{
    EventReader, EventWriter, ResMut, Schedule, StatefulSystem, SystemParam, Tick,
};

/// Events per writer per tick.
const PER_WRITER: u32 = 10_000;
/// Writer systems.
const WRITERS: u32 = 4;

/// The payload: a target and an amount, 8 bytes.
#[derive(Debug, Clone, Copy)]
struct Hit {
    target: u32,
    amount: f32,
}

fn hit(writer: u32, k: u32) -> Hit {
    Hit {
        target: writer * PER_WRITER + k,
        amount: k as f32 * 0.5,
    }
}

/// The reader's total, so nothing is optimized away.
#[derive(Debug, Default)]
struct Total(f64, u64);

struct Writer(u32);

impl StatefulSystem for Writer {
    type Params = EventWriter<'static, Hit>;
    fn run(&mut self, mut hits: EventWriter<'_, Hit>) {
        for k in 0..PER_WRITER {
            hits.send(hit(self.0, k));
        }
    }
}

/// Sums `hits` into `total` (locally, then once into the resource).
fn sum<'a>(hits: impl Iterator<Item = &'a Hit>, total: &mut Total) {
    let (mut amount, mut targets) = (0.0, 0);
    for h in hits {
        amount += f64::from(h.amount);
        targets += u64::from(h.target);
    }
    total.0 += amount;
    total.1 += targets;
}

fn reader(hits: EventReader<Hit>, mut total: ResMut<Total>) {
    for chunk in hits.chunks() {
        sum(chunk.iter(), &mut total);
    }
}

/// As `reader`, through the event-by-event iterator.
fn reader_iter(hits: EventReader<Hit>, mut total: ResMut<Total>) {
    sum(hits.iter(), &mut total);
}

/// The hand-written channel of writer `N`.
#[derive(Debug, Default)]
struct Lane<const N: u32>(Vec<Hit>);

struct VecWriter<const N: u32>;

impl<const N: u32> StatefulSystem for VecWriter<N> {
    type Params = ResMut<'static, Lane<N>>;
    fn run(&mut self, mut lane: <Self::Params as SystemParam>::Item<'_>) {
        for k in 0..PER_WRITER {
            lane.0.push(hit(N, k));
        }
    }
}

type Lanes<'a> = (
    ResMut<'a, Lane<0>>,
    ResMut<'a, Lane<1>>,
    ResMut<'a, Lane<2>>,
    ResMut<'a, Lane<3>>,
);

fn vec_reader(lanes: Lanes<'_>, mut total: ResMut<Total>) {
    let (mut a, mut b, mut c, mut d) = lanes;
    for lane in [&mut a.0, &mut b.0, &mut c.0, &mut d.0] {
        sum(lane.iter(), &mut total);
        lane.clear();
    }
}

fn check(registry: &Registry) {
    black_box(registry.resource::<Total>().map(|t| t.1));
}

fn events(c: &mut Criterion) {
    let mut group = c.benchmark_group("events");
    let threads = std::env::var("EV_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));

    for (name, by_chunks) in [("event_channel", true), ("event_channel_iter", false)] {
        let mut registry = Registry::new();
        registry.insert_resource(Total::default());
        let mut builder = Schedule::builder();
        builder.threads(threads);
        for w in 0..WRITERS {
            builder.add(Writer(w)).named(format!("writer{w}"));
        }
        if by_chunks {
            builder.add(reader);
        } else {
            builder.add(reader_iter);
        }
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(schedule.waves().len(), 2);
        let tick = |number| Tick {
            number,
            ..Tick::default()
        };
        for number in 0..3 {
            schedule.run(&mut registry, tick(number)).unwrap();
        }
        let expected: u64 = (0..u64::from(WRITERS * PER_WRITER)).sum();
        assert_eq!(registry.resource::<Total>().unwrap().1, 3 * expected);
        let mut number = 3;
        group.bench_function(name, |b| {
            b.iter(|| {
                schedule.run(&mut registry, tick(number)).unwrap();
                number += 1;
            })
        });
        check(&registry);
    }

    let mut registry = Registry::new();
    registry.insert_resource(Total::default());
    registry.insert_resource(Lane::<0>::default());
    registry.insert_resource(Lane::<1>::default());
    registry.insert_resource(Lane::<2>::default());
    registry.insert_resource(Lane::<3>::default());
    let mut builder = Schedule::builder();
    builder.threads(threads);
    builder.add(VecWriter::<0>).named("writer0");
    builder.add(VecWriter::<1>).named("writer1");
    builder.add(VecWriter::<2>).named("writer2");
    builder.add(VecWriter::<3>).named("writer3");
    builder.add(vec_reader);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 2);
    group.bench_function("hand_written_vecs", |b| {
        b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap())
    });
    check(&registry);
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = events
}
criterion_main!(benches);
