//! A tower-defense game: waves of enemies cloned from prototypes walk a
//! serpentine path, towers shoot homing projectiles at them, the gold of
//! the kills buys more towers, and the game moves through its phases
//! (Setup, Spawning and Break for each wave, GameOver). About 48,000
//! entities at the full size. It shows states, observers, one-shot
//! systems, required components, plugins, piping, entity cloning, events,
//! run conditions, typed sets, change detection, the hierarchy, stored
//! command handles, `par_each`, and the real-time loop of
//! `Engine::advance` (fed synthetic frame times, so a run is the same
//! every time).
//!
//! ```sh
//! cargo run --release --example tower_defense -- --threads 2 --ticks 360
//! cargo run --release --example tower_defense -- --check-threads 1,2   # exits 1 if the checksums differ
//! ```

#[allow(
    dead_code,
    reason = "the game module is shared with its test, which uses other parts"
)]
mod game;

mod cli;

use std::process::ExitCode;
use std::time::Instant;

use cli::Args;
use game::{Config, Game};

fn run(args: &Args, threads: u16) -> Result<u64, ecs_runtime::EngineError> {
    let config = Config {
        scale: args.scale,
        threads: usize::from(threads),
        adaptive: !args.no_adaptive,
        seed: args.seed,
    };
    let mut game = Game::new(&config)?;
    let start = Instant::now();
    game.run_to(args.ticks)?;
    let seconds = start.elapsed().as_secs_f64();
    let stats = game.stats();
    let [enemies, towers, turrets, projectiles] = game.census();
    let checksum = game.checksum();
    println!(
        "{threads} thread(s): {} ticks in {} frames, {seconds:.3} s ({:.0} ticks/s)",
        game.ticks(),
        game.frames,
        game.ticks() as f64 / seconds
    );
    println!(
        "  entities alive {} (peak {}): {enemies} enemies, {towers} towers, {turrets} turrets, \
         {projectiles} projectiles",
        game.engine().registry().len(),
        stats.peak_entities
    );
    println!(
        "  enemies spawned {}, killed {}, leaked {}; shots {}, hits {}, fizzled {}",
        stats.spawned, stats.kills, stats.leaked, stats.shots, stats.hits, stats.fizzled
    );
    println!(
        "  towers {} + {} built, gold {}, lives {}; phase {:?}",
        stats.towers_initial,
        stats.towers_built,
        stats.gold,
        stats.lives,
        game.phase()
    );
    let entered: Vec<String> = stats
        .entered
        .iter()
        .map(|(tick, phase)| format!("{phase:?}@{tick}"))
        .collect();
    println!(
        "  phases entered ({}): {}",
        entered.len(),
        entered.join(" ")
    );
    println!("  checksum {checksum:#018x}");
    if args.systems {
        let schedule = game.engine().schedule();
        let mut timings: Vec<_> = schedule.system_timings().collect();
        timings.sort_by_key(|&(_, _, cost)| std::cmp::Reverse(cost));
        println!(
            "  the last tick's systems ({} waves):",
            schedule.waves().len()
        );
        for (_, name, cost) in timings {
            println!("    {:>9.1} us  {name}", cost.as_secs_f64() * 1e6);
        }
    }
    Ok(checksum)
}

fn main() -> ExitCode {
    let args = match Args::parse_from_checked(std::env::args_os()) {
        Ok(args) => args,
        Err(error) => error.exit(),
    };
    let counts = if args.check_threads.is_empty() {
        vec![args.threads]
    } else {
        args.check_threads.clone()
    };
    let mut sums = Vec::new();
    for &threads in &counts {
        match run(&args, threads) {
            Ok(sum) => sums.push(sum),
            Err(error) => {
                eprintln!("tower_defense: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    if sums.windows(2).any(|pair| pair[0] != pair[1]) {
        eprintln!("tower_defense: the checksums differ across thread counts {counts:?}: {sums:x?}");
        return ExitCode::FAILURE;
    }
    if sums.len() > 1 {
        println!("same checksum on {counts:?} threads");
    }
    ExitCode::SUCCESS
}
