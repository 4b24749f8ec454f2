//! Scenario files: TOML that describes a world (which kind, how big, its
//! rules), checked field by field when loaded.
//!
//! Three scenarios ship in `scenarios/` and are built into the harness:
//! `shmup` (the default, a horizontal shoot'em up), `particles` (one
//! million particles, for raw throughput) and `movers` (a small world
//! without random draws, rebuilt by the C API's examples to compare
//! checksums). Units: positions in pixels,
//! speeds in pixels per second, durations in seconds, rates in hertz.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use super::HarnessError;

/// The default scenario's TOML, as shipped in `scenarios/shmup.toml`.
pub const SHMUP_TOML: &str = include_str!("../scenarios/shmup.toml");
/// The throughput scenario's TOML, as shipped in `scenarios/particles.toml`.
pub const PARTICLES_TOML: &str = include_str!("../scenarios/particles.toml");
/// The C API's reference scenario, as shipped in `scenarios/movers.toml`.
pub const MOVERS_TOML: &str = include_str!("../scenarios/movers.toml");

/// The range of `tick_rate`, ticks per simulated second.
pub const TICK_RATES: std::ops::RangeInclusive<f64> = 0.001..=1_000_000.0;

/// The largest size of any number in a scenario (a float field's absolute
/// value, a count): beyond it `f32` positions lose all precision and
/// counts exceed any memory.
pub const LARGEST_VALUE: f64 = 1e9;

/// The largest scenario file read, bytes (1 MiB).
pub const LARGEST_SCENARIO_BYTES: u64 = 1 << 20;

/// The names of the built-in scenarios, the default first.
pub const BUILTIN_SCENARIOS: [&str; 3] = ["shmup", "particles", "movers"];

/// A parsed, checked scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name, shown in the report.
    pub name: String,
    /// The seed of every random draw (overridden by `--seed`; the `movers`
    /// world has no random draw and ignores it).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Ticks to run (overridden by `--ticks`).
    #[serde(default = "default_ticks")]
    pub ticks: u64,
    /// Ticks per simulated second: the fixed step is `1 / tick_rate` s.
    #[serde(default = "default_tick_rate")]
    pub tick_rate: f64,
    /// The shoot'em up world, when this is one.
    pub shmup: Option<Shmup>,
    /// The particle world, when this is one.
    pub particles: Option<Particles>,
    /// The movers world, when this is one.
    pub movers: Option<Movers>,
}

fn default_seed() -> u64 {
    1
}

fn default_ticks() -> u64 {
    3600
}

fn default_tick_rate() -> f64 {
    60.0
}

/// `[shmup]`: a horizontal shoot'em up.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shmup {
    /// `[shmup.arena]`: the play area.
    pub arena: Arena,
    /// `[shmup.players]`: the ships steered by input.
    pub players: Players,
    /// `[shmup.enemies]`: the waves.
    pub enemies: Enemies,
}

/// `[shmup.arena]`: the screen, from (0, 0) at the top left.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arena {
    /// Width, pixels.
    pub width: f32,
    /// Height, pixels.
    pub height: f32,
    /// How far past an edge (pixels) an enemy or missile may go before it
    /// is removed.
    pub margin: f32,
}

/// `[shmup.players]`: the player ships.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Players {
    /// Number of ships (players 0 to count - 1), spread over the left of
    /// the screen: x = 1/8 of the width, y = height × (i + 1) / (count + 1).
    pub count: u8,
    /// Ship speed, pixels per second.
    pub speed: f32,
    /// Hit points of a fresh ship.
    pub health: i32,
    /// Ships per player: a ship at 0 health costs a life and comes back
    /// shielded; after the last one the player is out.
    pub lives: u8,
    /// Collision radius, pixels.
    pub radius: f32,
    /// Damage dealt to an enemy on contact.
    pub contact_damage: i32,
    /// Seconds of invulnerability after losing a life.
    pub shield: f32,
    /// Seconds between two missiles while firing.
    pub fire_interval: f32,
    /// Missile speed, pixels per second (to the right).
    pub missile_speed: f32,
    /// Damage of one missile.
    pub missile_damage: i32,
}

/// `[shmup.enemies]`: enemies come in waves from the right edge.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enemies {
    /// Enemies per wave (multiplied by `--scale`).
    pub per_wave: u32,
    /// Seconds before the first wave.
    pub first_wave: f32,
    /// Seconds between the starts of two waves.
    pub wave_interval: f32,
    /// Seconds between two enemies of a wave.
    pub spawn_spacing: f32,
    /// Number of waves (0: no limit).
    #[serde(default)]
    pub max_waves: u32,
    /// Where enemies enter, as fractions of the height: `[top, bottom]`.
    pub spawn_band: [f32; 2],
    /// Slowest horizontal speed, pixels per second (to the left).
    pub speed_min: f32,
    /// Fastest horizontal speed, pixels per second.
    pub speed_max: f32,
    /// Share of enemies (0 to 1) that fly a sine curve instead of a line.
    pub sine_share: f32,
    /// Smallest sine amplitude, pixels.
    pub amplitude_min: f32,
    /// Largest sine amplitude, pixels.
    pub amplitude_max: f32,
    /// Lowest sine frequency, hertz.
    pub frequency_min: f32,
    /// Highest sine frequency, hertz.
    pub frequency_max: f32,
    /// Hit points.
    pub health: i32,
    /// Collision radius, pixels.
    pub radius: f32,
    /// Damage dealt to a ship on contact.
    pub contact_damage: i32,
    /// Points for the player who destroys one.
    pub bounty: u32,
    /// Seconds between two shots of one enemy (0: enemies never fire).
    pub fire_interval: f32,
    /// Enemy missile speed, pixels per second (aimed at the nearest ship).
    pub missile_speed: f32,
    /// Damage of one enemy missile.
    pub missile_damage: i32,
}

/// `[particles]`: particles under gravity and drag in a box.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Particles {
    /// Number of particles (multiplied by `--scale`).
    pub count: u32,
    /// Box width, pixels.
    pub width: f32,
    /// Box height, pixels.
    pub height: f32,
    /// Downward acceleration, pixels per second squared.
    pub gravity: f32,
    /// Drag: the share of its velocity a particle loses per second.
    pub drag: f32,
    /// Share of the speed kept when bouncing off a wall (0 to 1).
    pub restitution: f32,
    /// Largest initial speed, pixels per second.
    pub max_speed: f32,
    /// Share of the particles (0 to 1) despawned and respawned each tick.
    pub respawn_share: f32,
}

/// `[movers]`: entities moving in straight lines, despawned once outside
/// `[min_x, max_x]` and replaced through commands. No random draw (the
/// seed is unused): the C API's examples rebuild the same world and must
/// reach the same checksum. All arithmetic is in `f32`.
///
/// - Setup, entity `i` of `0..count`: Position `(i % 100, i / 100)`,
///   Velocity `(((i % 7) - 3) × speed, ((i % 5) - 2) × speed)`.
/// - `movement` (reads Velocity, writes Position): `p += v × step`.
/// - `spawner` (reads Position, commands), tick `t`: despawns every entity
///   with `x < min_x` or `x > max_x`, in the view's order, then spawns
///   `spawn_per_tick` entities, `k` of `0..spawn_per_tick`: Position
///   `((k % 100) + 0.5, t % 50)`, Velocity `((((t + k) % 7) - 3) × speed,
///   (((3t + k) % 5) - 2) × speed)`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Movers {
    /// Entities at the start (multiplied by `--scale`).
    pub count: u32,
    /// Entities spawned every tick (multiplied by `--scale`).
    pub spawn_per_tick: u32,
    /// Pixels per second per unit of the velocity pattern.
    pub speed: f32,
    /// Entities left of this are despawned, pixels.
    pub min_x: f32,
    /// Entities right of this are despawned, pixels.
    pub max_x: f32,
}

/// What a scenario simulates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScenarioKind<'a> {
    /// A shoot'em up.
    Shmup(&'a Shmup),
    /// Particles in a box.
    Particles(&'a Particles),
    /// Straight movers, the C API's reference world.
    Movers(&'a Movers),
}

impl Scenario {
    /// The built-in scenario named `name` (see [`BUILTIN_SCENARIOS`]).
    ///
    /// # Errors
    ///
    /// [`HarnessError::UnknownScenario`] for any other name.
    ///
    /// # Examples
    ///
    /// ```
    /// use harness::Scenario;
    ///
    /// let shmup = Scenario::builtin("shmup").unwrap();
    /// assert_eq!(shmup.name, "shmup");
    /// assert!(Scenario::builtin("tetris").is_err());
    /// ```
    pub fn builtin(name: &str) -> Result<Scenario, HarnessError> {
        let text = match name {
            "shmup" => SHMUP_TOML,
            "particles" => PARTICLES_TOML,
            "movers" => MOVERS_TOML,
            _ => {
                return Err(HarnessError::UnknownScenario {
                    name: name.to_owned(),
                });
            }
        };
        Scenario::parse(text, &format!("built-in scenario `{name}`"))
    }

    /// Reads the scenario file at `path`.
    ///
    /// # Errors
    ///
    /// [`HarnessError::ReadFile`] when the file cannot be read, is not
    /// UTF-8 or is larger than [`LARGEST_SCENARIO_BYTES`];
    /// [`HarnessError::Scenario`] as [`parse`](Self::parse).
    pub fn load(path: &Path) -> Result<Scenario, HarnessError> {
        let error = |source: std::io::Error| HarnessError::ReadFile {
            what: "scenario",
            path: path.to_owned(),
            source: source.into(),
        };
        // Read at most one byte past the limit, so that an endless file
        // (`/dev/zero`) is refused instead of filling memory.
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| {
                file.take(LARGEST_SCENARIO_BYTES + 1)
                    .read_to_end(&mut bytes)
            })
            .map_err(error)?;
        if bytes.len() as u64 > LARGEST_SCENARIO_BYTES {
            return Err(error(std::io::Error::other(format!(
                "a scenario file is at most {LARGEST_SCENARIO_BYTES} bytes"
            ))));
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        Scenario::parse(&text, &path.display().to_string())
    }

    /// A built-in name (see [`BUILTIN_SCENARIOS`]) as that built-in
    /// scenario, even when a file or folder of that name exists (write
    /// `./shmup` for the file; [`shadowed_by`](Self::shadowed_by) says
    /// when this happens); any other value as a file path.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load); [`HarnessError::UnknownScenario`] when
    /// `value` looks like a name (no `/`, no `.`) but is neither a file nor
    /// a built-in scenario.
    pub fn resolve(value: &str) -> Result<Scenario, HarnessError> {
        if BUILTIN_SCENARIOS.contains(&value) {
            return Scenario::builtin(value);
        }
        let path = Path::new(value);
        let looks_like_a_name = !value.contains(['/', '\\', '.']);
        if !path.exists() && looks_like_a_name {
            return Scenario::builtin(value);
        }
        Scenario::load(path)
    }

    /// The local path that [`resolve`](Self::resolve) passes over for the
    /// built-in scenario of the same name, if any: `Some("./shmup")` when
    /// `value` is `shmup` and a file or folder `shmup` exists here.
    pub fn shadowed_by(value: &str) -> Option<String> {
        (BUILTIN_SCENARIOS.contains(&value) && Path::new(value).exists())
            .then(|| format!("./{value}"))
    }

    /// Parses and checks scenario TOML; `origin` names it in errors.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Scenario`] naming the origin and, for malformed
    /// TOML, a missing or unknown field or a value of the wrong type, the
    /// line, the column and the field; for a value out of range, the table
    /// and the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use harness::Scenario;
    ///
    /// let error = Scenario::parse("name = \"x\"\nseed = \"one\"\n", "inline").unwrap_err();
    /// let message = error.to_string();
    /// assert!(message.contains("line 2"), "{message}");
    /// assert!(message.contains("seed") || message.contains("integer"), "{message}");
    /// ```
    pub fn parse(text: &str, origin: &str) -> Result<Scenario, HarnessError> {
        // A byte-order mark (some editors write one) is not part of the TOML.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let scenario: Scenario = toml::from_str(text).map_err(|e| HarnessError::Scenario {
            origin: origin.to_owned(),
            message: describe_toml_error(text, &e),
        })?;
        scenario.check().map_err(|message| HarnessError::Scenario {
            origin: origin.to_owned(),
            message,
        })?;
        Ok(scenario)
    }

    /// Which world the scenario describes.
    ///
    /// # Panics
    ///
    /// Never for a scenario made by [`parse`](Self::parse), which checks
    /// that exactly one of `[shmup]`, `[particles]` and `[movers]` is
    /// present.
    #[track_caller]
    pub fn kind(&self) -> ScenarioKind<'_> {
        match (&self.shmup, &self.particles, &self.movers) {
            (Some(shmup), None, None) => ScenarioKind::Shmup(shmup),
            (None, Some(particles), None) => ScenarioKind::Particles(particles),
            (None, None, Some(movers)) => ScenarioKind::Movers(movers),
            _ => panic!("a checked scenario has exactly one of [shmup], [particles] and [movers]"),
        }
    }

    /// The fixed step, seconds.
    pub fn step(&self) -> f64 {
        1.0 / self.tick_rate
    }

    fn check(&self) -> Result<(), String> {
        let mut c = Checker::default();
        if !TICK_RATES.contains(&self.tick_rate) {
            c.fail(format!(
                "field `tick_rate` must be between {} and {} ticks per second, got {}",
                TICK_RATES.start(),
                TICK_RATES.end(),
                shown(self.tick_rate)
            ));
        }
        match (&self.shmup, &self.particles, &self.movers) {
            (Some(s), None, None) => check_shmup(&mut c, s, self.tick_rate),
            (None, Some(p), None) => check_particles(&mut c, p),
            (None, None, Some(m)) => check_movers(&mut c, m),
            _ => c.fail(
                "a scenario has exactly one of the tables [shmup], [particles] and [movers]".into(),
            ),
        }
        c.result()
    }
}

/// A number as a range error shows it: plainly in the usual range,
/// `1e-300` style when tiny or huge.
fn shown(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e9).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{}", value as f32)
    }
}

/// Collects the first range error, naming the table and the field.
#[derive(Default)]
struct Checker {
    error: Option<String>,
}

impl Checker {
    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    fn field(table: &str, field: &str) -> String {
        if table.is_empty() {
            format!("field `{field}`")
        } else {
            format!("field `{field}` of [{table}]")
        }
    }

    /// `value` finite and within [`LARGEST_VALUE`] of 0; `false` (and the
    /// error recorded) otherwise, NaN included. The checks below compare
    /// only values that passed it, so a NaN never slips through a
    /// comparison that it fails.
    fn sized(&mut self, table: &str, field: &str, value: f64) -> bool {
        let ok = value.is_finite() && value.abs() <= LARGEST_VALUE;
        if !ok {
            self.fail(format!(
                "{} must be a finite number between -{LARGEST_VALUE:e} and {LARGEST_VALUE:e}, got {}",
                Checker::field(table, field),
                shown(value)
            ));
        }
        ok
    }

    fn positive(&mut self, table: &str, field: &str, value: impl Into<f64>) {
        let value = value.into();
        if self.sized(table, field, value) && value <= 0.0 {
            self.fail(format!(
                "{} must be above 0, got {}",
                Checker::field(table, field),
                shown(value)
            ));
        }
    }

    fn at_least_zero(&mut self, table: &str, field: &str, value: impl Into<f64>) {
        let value = value.into();
        if self.sized(table, field, value) && value < 0.0 {
            self.fail(format!(
                "{} must be 0 or more, got {}",
                Checker::field(table, field),
                shown(value)
            ));
        }
    }

    fn finite(&mut self, table: &str, field: &str, value: f32) {
        self.sized(table, field, value.into());
    }

    fn share(&mut self, table: &str, field: &str, value: f32) {
        if !(0.0..=1.0).contains(&value) {
            self.fail(format!(
                "{} must be between 0 and 1, got {value}",
                Checker::field(table, field)
            ));
        }
    }

    /// Both bounds finite and in size, then `low <= high`.
    fn ordered(&mut self, table: &str, low: (&str, f32), high: (&str, f32)) {
        let sized =
            self.sized(table, low.0, low.1.into()) & self.sized(table, high.0, high.1.into());
        if sized && low.1 > high.1 {
            self.fail(format!(
                "{} ({}) must not exceed `{}` ({})",
                Checker::field(table, low.0),
                low.1,
                high.0,
                high.1
            ));
        }
    }

    fn result(self) -> Result<(), String> {
        self.error.map_or(Ok(()), Err)
    }
}

fn check_shmup(c: &mut Checker, s: &Shmup, tick_rate: f64) {
    let t = "shmup.arena";
    c.positive(t, "width", s.arena.width);
    c.positive(t, "height", s.arena.height);
    c.at_least_zero(t, "margin", s.arena.margin);
    let t = "shmup.players";
    let p = &s.players;
    c.positive(t, "count", p.count);
    c.at_least_zero(t, "speed", p.speed);
    c.positive(t, "health", p.health);
    c.positive(t, "lives", p.lives);
    c.positive(t, "radius", p.radius);
    c.at_least_zero(t, "contact_damage", p.contact_damage);
    c.at_least_zero(t, "shield", p.shield);
    c.positive(t, "fire_interval", p.fire_interval);
    c.at_least_zero(t, "missile_speed", p.missile_speed);
    c.at_least_zero(t, "missile_damage", p.missile_damage);
    let t = "shmup.enemies";
    let e = &s.enemies;
    c.at_least_zero(t, "first_wave", e.first_wave);
    c.positive(t, "wave_interval", e.wave_interval);
    // Waves closer than a tick would all start on one tick: the director
    // would plan waves without end within that tick.
    let ticks_apart = f64::from(e.wave_interval) * tick_rate;
    if ticks_apart.is_finite() && ticks_apart > 0.0 && ticks_apart < 1.0 {
        c.fail(format!(
            "field `wave_interval` of [{t}] ({} s) must be at least one tick (1/tick_rate = {} s), \
             or every wave starts on the same tick",
            e.wave_interval,
            shown(1.0 / tick_rate)
        ));
    }
    c.at_least_zero(t, "spawn_spacing", e.spawn_spacing);
    c.share(t, "spawn_band", e.spawn_band[0]);
    c.share(t, "spawn_band", e.spawn_band[1]);
    c.ordered(
        t,
        ("spawn_band", e.spawn_band[0]),
        ("spawn_band", e.spawn_band[1]),
    );
    c.at_least_zero(t, "speed_min", e.speed_min);
    c.ordered(t, ("speed_min", e.speed_min), ("speed_max", e.speed_max));
    c.share(t, "sine_share", e.sine_share);
    c.at_least_zero(t, "amplitude_min", e.amplitude_min);
    c.ordered(
        t,
        ("amplitude_min", e.amplitude_min),
        ("amplitude_max", e.amplitude_max),
    );
    c.at_least_zero(t, "frequency_min", e.frequency_min);
    c.ordered(
        t,
        ("frequency_min", e.frequency_min),
        ("frequency_max", e.frequency_max),
    );
    c.positive(t, "health", e.health);
    c.positive(t, "radius", e.radius);
    c.at_least_zero(t, "contact_damage", e.contact_damage);
    c.at_least_zero(t, "fire_interval", e.fire_interval);
    c.at_least_zero(t, "missile_speed", e.missile_speed);
    c.at_least_zero(t, "missile_damage", e.missile_damage);
}

fn check_particles(c: &mut Checker, p: &Particles) {
    let t = "particles";
    c.positive(t, "count", p.count);
    c.positive(t, "width", p.width);
    c.positive(t, "height", p.height);
    c.at_least_zero(t, "gravity", p.gravity);
    c.at_least_zero(t, "drag", p.drag);
    c.share(t, "restitution", p.restitution);
    c.at_least_zero(t, "max_speed", p.max_speed);
    c.share(t, "respawn_share", p.respawn_share);
}

fn check_movers(c: &mut Checker, m: &Movers) {
    let t = "movers";
    c.positive(t, "count", m.count);
    c.at_least_zero(t, "spawn_per_tick", m.spawn_per_tick);
    c.at_least_zero(t, "speed", m.speed);
    c.finite(t, "min_x", m.min_x);
    c.finite(t, "max_x", m.max_x);
    c.ordered(t, ("min_x", m.min_x), ("max_x", m.max_x));
}

/// The TOML error on one line: where (line, column) and what, naming the
/// field and its table when the crate's message does not (a value of the
/// wrong type), without the source excerpt the crate draws.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim_end();
    let Some(span) = error.span() else {
        return message.to_owned();
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.len() - line_start + 1;
    let mut out = format!("line {line}, column {column}: {message}");
    let line_text = text[line_start..].lines().next().unwrap_or("");
    if let Some((key, _)) = line_text.split_once('=')
        && !message.contains("field `")
    {
        let table = before
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('['))
            .map(|l| format!(" of {}", l.split('#').next().unwrap_or(l).trim()))
            .unwrap_or_default();
        out.push_str(&format!(" (field `{}`{table})", key.trim()));
    } else if line_text.trim_start().starts_with('[') {
        let header = line_text.split('#').next().unwrap_or("").trim();
        out.push_str(&format!(" (in {header})"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_scenarios_parse() {
        for name in BUILTIN_SCENARIOS {
            let scenario = Scenario::builtin(name).unwrap();
            assert_eq!(scenario.name, name);
        }
        assert!(matches!(
            Scenario::builtin("shmup").unwrap().kind(),
            ScenarioKind::Shmup(_)
        ));
        let particles = Scenario::builtin("particles").unwrap();
        let ScenarioKind::Particles(p) = particles.kind() else {
            panic!("particles is a particle scenario")
        };
        assert_eq!(p.count, 1_000_000);
        let movers = Scenario::builtin("movers").unwrap();
        assert_eq!((movers.ticks, movers.tick_rate), (100, 60.0));
        let ScenarioKind::Movers(m) = movers.kind() else {
            panic!("movers is a movers scenario")
        };
        assert_eq!(
            *m,
            Movers {
                count: 1000,
                spawn_per_tick: 10,
                speed: 20.0,
                min_x: 0.0,
                max_x: 100.0
            }
        );
    }

    #[test]
    fn the_movers_band_must_be_ordered() {
        let text = MOVERS_TOML.replace("min_x = 0.0", "min_x = 150.0");
        let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
        assert_eq!(
            error,
            "scenario m.toml: field `min_x` of [movers] (150) must not exceed `max_x` (100)"
        );
        let text = MOVERS_TOML.replace("count = 1000", "count = 0");
        let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
        assert!(
            error.ends_with("field `count` of [movers] must be above 0, got 0"),
            "{error}"
        );
    }

    #[test]
    fn every_float_is_checked_finite_and_in_size_nan_included() {
        for (from, to, field) in [
            ("speed_max = 200.0", "speed_max = nan", "speed_max"),
            (
                "amplitude_max = 90.0",
                "amplitude_max = inf",
                "amplitude_max",
            ),
            (
                "frequency_max = 1.0",
                "frequency_max = nan",
                "frequency_max",
            ),
            ("width = 640.0", "width = 1e10", "width"),
        ] {
            assert!(SHMUP_TOML.contains(from), "{from}");
            let text = SHMUP_TOML.replacen(from, to, 1);
            let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
            assert!(
                error.contains(&format!("field `{field}` of [shmup.")),
                "{error}"
            );
            assert!(
                error.contains("must be a finite number between -1e9 and 1e9"),
                "{error}"
            );
        }
        let text = MOVERS_TOML.replace("max_x = 100.0", "max_x = nan");
        let error = Scenario::parse(&text, "m.toml").unwrap_err().to_string();
        assert!(
            error.ends_with(
                "field `max_x` of [movers] must be a finite number between -1e9 and 1e9, got NaN"
            ),
            "{error}"
        );
    }

    #[test]
    fn waves_must_be_a_tick_apart_and_the_tick_rate_in_range() {
        let text = SHMUP_TOML.replace("wave_interval = 2.5", "wave_interval = 0.01");
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(
            error.ends_with("field `wave_interval` of [shmup.enemies] (0.01 s) must be at least one tick (1/tick_rate = 0.016666668 s), or every wave starts on the same tick"),
            "{error}"
        );
        let text = SHMUP_TOML.replace("wave_interval = 2.5", "wave_interval = 0.0167");
        assert!(Scenario::parse(&text, "t.toml").is_ok());
        for rate in ["0.0", "nan", "1e-300", "2e6"] {
            let text = SHMUP_TOML.replace("tick_rate = 60.0", &format!("tick_rate = {rate}"));
            let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
            assert!(
                error.contains("field `tick_rate` must be between 0.001 and 1000000"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let scenario = Scenario::parse(&format!("\u{feff}{MOVERS_TOML}"), "b.toml").unwrap();
        assert_eq!(scenario.name, "movers");
        let error = Scenario::parse("\u{feff}name = 1\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("scenario b.toml: line 1, column 8: "),
            "{error}"
        );
        assert!(!error.contains('\u{feff}'), "{error}");
    }

    #[test]
    fn a_name_resolves_to_a_builtin_and_a_path_to_a_file() {
        assert_eq!(Scenario::resolve("particles").unwrap().name, "particles");
        assert!(matches!(
            Scenario::resolve("tetris"),
            Err(HarnessError::UnknownScenario { name }) if name == "tetris"
        ));
        assert!(matches!(
            Scenario::resolve("missing/tetris.toml"),
            Err(HarnessError::ReadFile {
                what: "scenario",
                ..
            })
        ));
    }

    #[test]
    fn a_missing_field_names_the_line_and_the_field() {
        let text = SHMUP_TOML.replace("height = 360.0\n", "");
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(error.starts_with("scenario t.toml: line "), "{error}");
        assert!(
            error.ends_with(": missing field `height` (in [shmup.arena])"),
            "{error}"
        );
    }

    #[test]
    fn a_wrong_type_names_the_line() {
        let text = SHMUP_TOML.replace("count = 2", "count = \"two\"");
        let line = text.lines().position(|l| l.contains("\"two\"")).unwrap() + 1;
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(
            error.contains(&format!("line {line}, column 9: ")),
            "{error}"
        );
        assert!(
            error.ends_with("(field `count` of [shmup.players])"),
            "{error}"
        );
    }

    #[test]
    fn a_misspelt_field_is_refused() {
        let text = SHMUP_TOML.replace("bounty =", "bounti =");
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(error.contains("unknown field `bounti`"), "{error}");
    }

    #[test]
    fn out_of_range_values_name_the_table_and_field() {
        let text = SHMUP_TOML.replace("sine_share = 0.5", "sine_share = 1.5");
        let error = Scenario::parse(&text, "t.toml").unwrap_err().to_string();
        assert_eq!(
            error,
            "scenario t.toml: field `sine_share` of [shmup.enemies] must be between 0 and 1, got 1.5"
        );
        let error = Scenario::parse("name = \"empty\"\n", "e.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("exactly one of the tables"), "{error}");
    }
}
