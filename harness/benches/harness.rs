//! `harness_tick`: one tick of the harness's scenarios, on 1 and 2 threads.
//! Throughput is one element per tick, so criterion prints ticks per
//! second; the parallel speedup is the 1-thread time over the 2-thread
//! time of the same scenario.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness::{RunConfig, Scenario, Simulation};

/// Thread counts compared.
const THREADS: [usize; 2] = [1, 2];
/// Ticks run before measuring the shoot'em up: five seconds of game time,
/// so two waves have started entering (about 550 enemies on screen).
const SHMUP_WARM_UP: u64 = 300;
/// Ticks run before measuring the digests: half the default run.
const DIGEST_WARM_UP: u64 = 1_800;
/// Ticks run before measuring the particles (their count never changes).
const PARTICLES_WARM_UP: u64 = 3;
/// Ticks run before measuring the movers (their spawner fills the world).
const MOVERS_WARM_UP: u64 = 50;

/// A built and warmed-up simulation.
fn warm(scenario: &str, scale: u32, threads: usize, warm_up: u64) -> Simulation {
    let mut config = RunConfig::new(Scenario::builtin(scenario).expect("a built-in scenario"));
    config.scale = scale;
    config.threads = threads;
    let mut simulation = Simulation::new(&config).expect("the scenario builds");
    for _ in 0..warm_up {
        simulation.tick().expect("a tick runs");
    }
    simulation
}

fn harness_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("harness_tick");
    group.throughput(Throughput::Elements(1));
    let cases = [
        ("shmup", "shmup", 1, SHMUP_WARM_UP),
        ("movers_x10", "movers", 10, MOVERS_WARM_UP),
        ("particles_1m", "particles", 1, PARTICLES_WARM_UP),
    ];
    for (label, scenario, scale, warm_up) in cases {
        if scenario == "particles" {
            group.sample_size(20);
            group.measurement_time(Duration::from_secs(8));
        }
        for threads in THREADS {
            let mut simulation = warm(scenario, scale, threads, warm_up);
            group.bench_function(format!("{label}/threads_{threads}"), |b| {
                b.iter(|| simulation.tick().expect("a tick runs"));
            });
            simulation.finish().expect("the input thread stops cleanly");
        }
    }
    group.finish();
}

/// What a check mode adds to each tick: the divergence digests of the
/// default shoot'em up's world (`harness::digests`: every component type,
/// the resources, the input channel), beside that world's tick on the
/// default thread count, halfway through the default run (about 4,000
/// entities then). The cost to track is the ratio digest / tick.
fn digest_per_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("digest_per_tick");
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let digests = harness::digests();
    let mut simulation = warm("shmup", 1, threads, DIGEST_WARM_UP);
    group.bench_function("shmup/tick", |b| {
        b.iter(|| simulation.tick().expect("a tick runs"));
    });
    group.bench_function("shmup/digests", |b| {
        b.iter(|| digests.of(simulation.engine().registry()));
    });
    simulation.finish().expect("the input thread stops cleanly");
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = harness_tick, digest_per_tick
}
criterion_main!(benches);
