//! The tower-defense example (`examples/tower_defense/`) at a twentieth
//! of its size: the same world on 1, 2 and 8 threads, and the game's own
//! invariants (waves spawned and fought, the phases in order, observer
//! and one-shot runs matching the counters).

#[allow(
    dead_code,
    reason = "the game module is shared with the example, which uses other parts"
)]
#[path = "../examples/tower_defense/game/mod.rs"]
mod game;

use game::{Config, Game, Phase, Sizes, Stats};

const SCALE: f64 = 0.05;
const TICKS: u64 = 320;

fn play(threads: usize) -> Game {
    let config = Config {
        scale: SCALE,
        threads,
        // Every tick on the pool, every wave of several systems as
        // parallel tasks: the small world would run on one thread.
        adaptive: false,
        ..Config::default()
    };
    let mut game = Game::new(&config).unwrap();
    game.run_to(TICKS).unwrap();
    game
}

#[test]
fn the_same_world_on_1_2_and_8_threads() {
    let games: Vec<Game> = [1, 2, 8].into_iter().map(play).collect();
    let sums: Vec<u64> = games.iter().map(Game::checksum).collect();
    assert_eq!(sums[0], sums[1], "1 and 2 threads");
    assert_eq!(sums[0], sums[2], "1 and 8 threads");
    for game in &games[1..] {
        assert_eq!(game.stats(), games[0].stats());
        assert_eq!(game.census(), games[0].census());
    }
}

#[test]
fn the_game_plays_through_its_phases() {
    let game = play(2);
    let sizes = Sizes::at(SCALE);
    let stats: &Stats = game.stats();
    assert_eq!(game.ticks(), TICKS);
    assert!(game.frames > 0);

    // Five waves, every enemy cloned from a prototype and seen as added.
    assert_eq!(stats.spawned, 5 * u64::from(sizes.wave));
    assert_eq!(stats.seen_added, stats.spawned);
    assert!(stats.kills > 0, "{stats:?}");

    // The phases: Setup, then Spawning and Break for each wave, GameOver
    // after the last break (the lives lasted), each at its tick.
    let mut expected = vec![(0, Phase::Setup)];
    for wave in 0..5 {
        let start = 1 + wave * 60;
        expected.push((start, Phase::Spawning));
        expected.push((start + 40, Phase::Break));
    }
    expected.push((301, Phase::GameOver));
    assert_eq!(stats.entered, expected);
    assert_eq!(stats.exits, 10, "each Spawning and each Break left once");
    assert_eq!(game.phase(), Phase::GameOver);
    assert!(stats.lives > 0);
    assert_eq!(stats.lives, sizes.lives - stats.leaked as i64);

    // Observers: one turret per tower (initial and built), one removal
    // per enemy killed or leaked.
    assert!(stats.towers_built > 0, "the build_tower one-shot ran");
    assert_eq!(stats.towers_initial, u64::from(sizes.initial_towers));
    assert_eq!(
        stats.observed_towers,
        stats.towers_initial + stats.towers_built
    );
    assert_eq!(stats.observed_enemy_removals, stats.kills + stats.leaked);

    // The world agrees with the counters.
    let [enemies, towers, turrets, projectiles] = game.census();
    assert_eq!(enemies as u64, stats.spawned - stats.kills - stats.leaked);
    assert_eq!(towers as u64, stats.observed_towers);
    assert_eq!(turrets, towers);
    assert_eq!(
        stats.hits + stats.fizzled + projectiles as u64,
        stats.shots,
        "every projectile hit, fizzled, or still flies"
    );
    assert!(stats.hits > stats.kills);
    // Enemies, towers, turrets, projectiles, and the three prototypes.
    let registry = game.engine().registry();
    assert_eq!(registry.len(), enemies + towers + turrets + projectiles + 3);
    assert_eq!(registry.disabled_len(), 3);
    assert!(stats.peak_entities >= registry.len());
}

#[test]
fn frames_do_not_change_the_world() {
    let config = Config {
        scale: SCALE,
        threads: 2,
        ..Config::default()
    };
    let mut plain = Game::new(&config).unwrap();
    plain.run_ticks(TICKS).unwrap();
    assert_eq!(plain.checksum(), play(1).checksum());
}
