//! The `movers` scenario, the C API's reference world: its numbers, worked
//! out by hand (and by an independent f32 model), and the same world on 1
//! and 4 threads. `examples/c/movers.c` and `movers.cpp` must print the
//! same checksum (`.ci/capi` compares them).

use harness::{Report, RunConfig, Scenario, check_determinism, run};

fn config(threads: usize) -> RunConfig {
    let mut config = RunConfig::new(Scenario::builtin("movers").unwrap());
    config.threads = threads;
    config
}

fn wave_names(report: &Report) -> Vec<Vec<&str>> {
    report
        .waves
        .iter()
        .map(|w| w.systems.iter().map(String::as_str).collect())
        .collect()
}

/// The world after the scenario's 100 ticks. A deliberate change to the
/// scenario, the checksum or how handles are handed out changes it: then
/// update it here, in the README's C API section and check the C examples.
const CHECKSUM_100_TICKS: u64 = 0x8f59_aafb_d21f_eeb1;

#[test]
fn the_movers_world_is_not_trivial_and_the_same_on_1_and_4_threads() {
    let config = config(4);
    assert_eq!(config.ticks, 100);
    let check = check_determinism(&config, |_| {}).unwrap();
    assert!(check.passed());
    for report in [&check.single.report, &check.multi.report] {
        let e = report.entities;
        // 1,000 at the start plus 10 per tick; 967 left the band [0, 100].
        assert_eq!(e.spawned, 2000, "{e:?}");
        assert_eq!(e.despawned, 967, "{e:?}");
        assert_eq!(e.last, 1033, "{e:?}");
        assert_eq!((e.min, e.max), (1005, 1047), "{e:?}");
        assert_eq!(wave_names(report), vec![vec!["movement"], vec!["spawner"]]);
        assert!(report.players.is_empty());
        assert_eq!(report.inputs_applied, 0);
    }
    assert_eq!(
        (check.single.report.threads, check.multi.report.threads),
        (1, 4)
    );
    assert_eq!(
        check.multi.report.checksum, CHECKSUM_100_TICKS,
        "{:#018x}",
        check.multi.report.checksum
    );
}

#[test]
fn scale_multiplies_the_movers_and_their_spawns() {
    let mut config = config(2);
    config.scale = 3;
    config.ticks = 1;
    let report = run(&config, |_| {}).unwrap().report;
    assert_eq!(report.entities.spawned, 3000 + 30);
    // Tick 0: entity i has x = i % 100 and vx = ((i % 7) - 3) × 20; the
    // ones at x = 0 moving left (i % 7 < 3, i % 100 = 0) leave the band.
    let left = (0..3000).filter(|i| i % 100 == 0 && i % 7 < 3).count();
    assert_eq!(report.entities.despawned, left as u64);
    assert_eq!(report.entities.last as u64, 3030 - left as u64);
}

#[test]
fn the_seed_does_not_matter() {
    let a = config(2);
    let mut b = a.clone();
    b.seed = 99;
    assert_eq!(
        run(&a, |_| {}).unwrap().report.checksum,
        run(&b, |_| {}).unwrap().report.checksum
    );
}
