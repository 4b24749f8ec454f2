//! The director: the state machine (Setup -> Spawning <-> Break ->
//! GameOver), the map's set-up, and the waves cloned from prototypes.

use ecs_runtime::prelude::*;

use super::components::*;
use super::map::*;
use super::splitmix;

/// Lays out the map on entering `Setup`: the towers (through commands,
/// so the `Hook::Add` observer mounts their turrets) and the disabled
/// enemy prototypes, whose handles are kept in [`Prototypes`].
pub(crate) fn setup_map(
    mut commands: Commands,
    sizes: Res<Sizes>,
    mut slots: ResMut<TowerSlots>,
    mut prototypes: ResMut<Prototypes>,
    mut stats: ResMut<Stats>,
) {
    let all = tower_slots();
    let n = sizes.initial_towers as usize;
    let step = all.len() / (n + sizes.buildable_towers as usize).min(all.len());
    let mut initial = Vec::new();
    let mut later = Vec::new();
    for (i, slot) in all.into_iter().enumerate() {
        if !i.is_multiple_of(step) {
            continue;
        }
        if (i / step).is_multiple_of(2) && initial.len() < n {
            initial.push(slot);
        } else {
            later.push(slot);
        }
    }
    for (i, &slot) in initial.iter().enumerate() {
        commands.spawn((TOWER_KINDS[i % TOWER_KINDS.len()], slot));
    }
    stats.towers_initial = initial.len() as u64;
    slots.free = later;
    slots.next = 0;
    let path = Path::serpentine();
    for (k, kind) in ENEMY_KINDS.iter().enumerate() {
        let prototype = commands.spawn((
            Enemy,
            Kind(k as u8),
            Health(kind.health),
            Speed(kind.speed),
            Bounty(kind.bounty),
            PathPos(0.0),
            Lane(0.0),
            path.at(0.0, 0.0),
        ));
        commands.entity(prototype).disable();
        prototypes.0.push(prototype);
    }
}

/// Starts a wave on entering `Spawning`.
pub(crate) fn start_wave(mut waves: ResMut<Waves>) {
    waves.wave += 1;
    waves.spawned = 0;
}

/// Restarts the phase's tick count, on entering any phase.
pub(crate) fn enter_phase(
    tick: Tick,
    mut waves: ResMut<Waves>,
    state: Res<State<Phase>>,
    mut stats: ResMut<Stats>,
) {
    waves.ticks_in_phase = 0;
    stats.entered.push((tick.number, *state.get()));
}

/// Counts the exits of `Spawning` and `Break`.
pub(crate) fn exit_phase(mut stats: ResMut<Stats>) {
    stats.exits += 1;
}

/// Spawns this tick's share of the wave: clones of the prototypes
/// (`Registry::clone_entity`), enabled, each with its own speed and
/// lane. An exclusive system: it takes the whole registry.
pub(crate) fn spawn_enemies(registry: &mut Registry) {
    let sizes = *registry.resource::<Sizes>().unwrap();
    let waves = *registry.resource::<Waves>().unwrap();
    let prototypes = registry.resource::<Prototypes>().unwrap().0.clone();
    let seed = registry.resource::<WorldSeed>().unwrap().0;
    let per_tick = sizes.wave.div_ceil(SPAWN_TICKS);
    let count = per_tick.min(sizes.wave - waves.spawned);
    for i in 0..count {
        let n = waves.spawned + i;
        let draw = splitmix(seed ^ (u64::from(waves.wave) << 32) ^ u64::from(n));
        // Grunts, runners and tanks, 5:3:2.
        let kind = match draw % 10 {
            0..=4 => 0,
            5..=7 => 1,
            _ => 2,
        };
        let enemy = registry.clone_entity(prototypes[kind]).unwrap();
        registry.enable(enemy).unwrap();
        let jitter = ((draw >> 8) % 1000) as f32 / 1000.0; // 0 to 1
        let speed = ENEMY_KINDS[kind].speed * (0.8 + 0.4 * jitter);
        let lane = (((draw >> 24) % 1000) as f32 / 1000.0 - 0.5) * 24.0;
        registry.insert(enemy, Speed(speed)).unwrap();
        registry.insert(enemy, Lane(lane)).unwrap();
    }
    registry.resource_mut::<Waves>().unwrap().spawned += count;
    registry.resource_mut::<Stats>().unwrap().spawned += u64::from(count);
}

/// The phase clock, the first half of a pipe: counts the phase's ticks
/// and says which phase comes next, if any.
pub(crate) fn phase_clock(
    state: Res<State<Phase>>,
    mut waves: ResMut<Waves>,
    stats: Res<Stats>,
) -> Option<Phase> {
    waves.ticks_in_phase += 1;
    let t = waves.ticks_in_phase;
    match state.get() {
        _ if stats.lives <= 0 => Some(Phase::GameOver),
        Phase::Setup => Some(Phase::Spawning),
        Phase::Spawning if t >= SPAWN_TICKS => Some(Phase::Break),
        Phase::Break if t >= BREAK_TICKS && waves.wave >= MAX_WAVES => Some(Phase::GameOver),
        Phase::Break if t >= BREAK_TICKS => Some(Phase::Spawning),
        _ => None,
    }
}

/// The second half of the pipe: asks for the next phase.
pub(crate) fn request_phase(
    In(next): In<Option<Phase>>,
    state: Res<State<Phase>>,
    mut next_state: ResMut<NextState<Phase>>,
) {
    if let Some(next) = next.filter(|next| next != state.get()) {
        next_state.set(next);
    }
}
