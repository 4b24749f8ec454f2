//! The tower-defense example (`examples/tower_defense/`) at a twentieth
//! of its size: the same world on 1, 2 and 8 threads, and the game's own
//! invariants (waves spawned and fought, the phases in order, observer
//! and one-shot runs matching the counters), and its command line.

#[allow(
    dead_code,
    reason = "the game module is shared with the example, which uses other parts"
)]
#[path = "../../examples/tower_defense/game/mod.rs"]
mod game;

#[allow(
    dead_code,
    reason = "the command line module is shared with the example, which uses other parts"
)]
#[path = "../../examples/tower_defense/cli.rs"]
mod cli;

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

fn parse(args: &[&str]) -> Result<cli::Args, clap::Error> {
    cli::Args::parse_from_checked(std::iter::once("tower_defense").chain(args.iter().copied()))
}

#[test]
fn the_command_line_defaults_and_a_full_line() {
    let args = parse(&[]).unwrap();
    assert_eq!(
        (args.threads, args.ticks, args.scale, args.seed),
        (1, 360, 1.0, 2026)
    );
    assert!(args.check_threads.is_empty());
    let args = parse(&[
        "--ticks",
        "10000000",
        "--scale",
        "0.5",
        "--check-threads",
        "1,2,8",
    ])
    .unwrap();
    assert_eq!(args.ticks, cli::MAX_TICKS);
    assert_eq!(args.scale, 0.5);
    assert_eq!(args.check_threads, [1, 2, 8]);
}

#[test]
fn threads_conflicts_with_check_threads() {
    let error = parse(&["--threads", "2", "--check-threads", "1,2"]).unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    let text = error.to_string();
    assert!(
        text.contains("'--threads <THREADS>' cannot be used with '--check-threads"),
        "{text}"
    );
    // Each alone is fine.
    assert_eq!(parse(&["--threads", "2"]).unwrap().threads, 2);
}

#[test]
fn a_thread_count_listed_twice_is_refused() {
    let error = parse(&["--check-threads", "1,1"]).unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation);
    assert!(
        error
            .to_string()
            .contains("--check-threads lists 1 twice (1,1); give each thread count once"),
        "{error}"
    );
    let error = parse(&["--check-threads", "2,8,2"]).unwrap_err();
    assert!(
        error.to_string().contains("lists 2 twice (2,8,2)"),
        "{error}"
    );
}

#[test]
fn ticks_and_scale_are_bounded() {
    for ticks in ["0", "10000001"] {
        let error = parse(&["--ticks", ticks]).unwrap_err();
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::ValueValidation,
            "{ticks}"
        );
        assert!(error.to_string().contains("1..=10000000"), "{error}");
    }
    for scale in ["0", "-1", "100.5", "NaN", "inf"] {
        let option = format!("--scale={scale}");
        let error = parse(&[&option]).unwrap_err();
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::ValueValidation,
            "{scale}"
        );
        assert!(
            error.to_string().contains("above 0 and at most 100"),
            "{error}"
        );
    }
    assert!(
        parse(&["--scale", "x"])
            .unwrap_err()
            .to_string()
            .contains("`x` is not a number")
    );
    assert_eq!(parse(&["--scale", "100"]).unwrap().scale, 100.0);
}

#[test]
fn the_scale_help_says_what_it_multiplies_and_the_towers_stop_at_600() {
    use clap::CommandFactory;
    let mut command = cli::Args::command();
    let help = command.render_long_help().to_string();
    for part in [
        "10,000",
        "lives (2,000)",
        "(600)",
        "1,200 tower slots",
        "stays at 600",
    ] {
        assert!(help.contains(part), "{part}: {help}");
    }
    // What the help says, the game does: twice the enemies and lives at
    // scale 2, but still 600 towers placed at set-up.
    let sizes = Sizes::at(2.0);
    assert_eq!((sizes.wave, sizes.lives), (20_000, 4_000));
    assert_eq!(
        (sizes.initial_towers, sizes.buildable_towers),
        (1_200, 1_200)
    );
    let config = Config {
        scale: 2.0,
        threads: 1,
        ..Config::default()
    };
    let mut game = Game::new(&config).unwrap();
    game.run_to(1).unwrap();
    assert_eq!(game.stats().towers_initial, 600);
    assert_eq!(game.census()[1], 600);
}
