//! A scenario with a known outcome (`scenarios/collision.toml`): one enemy
//! flies into one ship that does not move, or into its missiles.

use std::path::Path;

use harness::{Enemy, InputSource, Missile, PlayerStats, RunConfig, Scenario, Simulation};

fn simulation(script: &str) -> Simulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/collision.toml");
    let mut config = RunConfig::new(Scenario::load(&path).unwrap());
    config.threads = 2;
    config.inputs = InputSource::Text(script.into());
    Simulation::new(&config).unwrap()
}

fn run_to(simulation: &mut Simulation, ticks: u64) {
    while simulation.engine().ticks() < ticks {
        simulation.tick().unwrap();
    }
}

fn enemies(simulation: &Simulation) -> usize {
    simulation.engine().registry().view::<&Enemy>().count()
}

fn player(simulation: &Simulation) -> PlayerStats {
    simulation.players()[0]
}

#[test]
fn an_enemy_rams_a_still_ship() {
    let mut sim = simulation("");
    run_to(&mut sim, 30);
    assert_eq!(enemies(&sim), 0, "the wave starts at tick 30");
    run_to(&mut sim, 31);
    assert_eq!(enemies(&sim), 1);
    // Contact at tick 115: nothing has happened after tick 114.
    run_to(&mut sim, 115);
    assert_eq!(
        player(&sim),
        PlayerStats {
            player: 0,
            score: 0,
            lives: 3
        }
    );
    assert_eq!(enemies(&sim), 1);
    run_to(&mut sim, 116);
    assert_eq!(
        player(&sim),
        PlayerStats {
            player: 0,
            score: 250,
            lives: 2
        }
    );
    assert_eq!(enemies(&sim), 0);
    run_to(&mut sim, 150);
    assert_eq!(
        player(&sim),
        PlayerStats {
            player: 0,
            score: 250,
            lives: 2
        }
    );
    assert_eq!((sim.spawned(), sim.despawned()), (2, 1));
    assert_eq!(sim.engine().registry().len(), 1);
    sim.finish().unwrap();
}

#[test]
fn the_ships_missiles_destroy_the_enemy_first() {
    let mut sim = simulation("0 0 fire on\n");
    run_to(&mut sim, 150);
    assert_eq!(
        player(&sim),
        PlayerStats {
            player: 0,
            score: 250,
            lives: 3
        }
    );
    assert_eq!(enemies(&sim), 0);
    assert_eq!(sim.inputs_applied(), 1);
    // One missile every 30 ticks from tick 0: ticks 0, 30, ..., 120. Two hit
    // the enemy (2 hit points) and are gone with it.
    let missiles = sim.engine().registry().view::<&Missile>().count() as u64;
    assert_eq!(sim.spawned(), 1 + 1 + 5);
    assert_eq!(sim.spawned() - sim.despawned(), 1 + missiles);
    sim.finish().unwrap();
}

#[test]
fn a_ship_out_of_lives_stays_with_its_score() {
    // Three enemies in three waves, one second apart; the ship has 3 lives
    // of 1 hit point and a 1 s shield, so the third ram takes its last life.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/collision.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("wave_interval = 100.0", "wave_interval = 1.5")
        .replace("max_waves = 1", "max_waves = 3");
    let mut config = RunConfig::new(Scenario::parse(&text, "three rams").unwrap());
    config.threads = 2;
    config.inputs = InputSource::Text(String::new());
    let mut sim = Simulation::new(&config).unwrap();
    run_to(&mut sim, 400);
    assert_eq!(
        player(&sim),
        PlayerStats {
            player: 0,
            score: 750,
            lives: 0
        }
    );
    assert_eq!(enemies(&sim), 0);
    assert_eq!(sim.engine().registry().len(), 1, "the ship stays");
    sim.finish().unwrap();
}
