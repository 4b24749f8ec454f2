//! Scenario files: TOML that describes a world (which kind, how big, its
//! rules), checked field by field when loaded.
//!
//! Three scenarios ship in `scenarios/` and are built into the harness:
//! `shmup` (the default, a horizontal shoot'em up), `particles` (one
//! million particles, for raw throughput) and `movers` (a small world
//! without random draws, rebuilt by the C API's examples to compare
//! checksums). Units: positions in pixels,
//! speeds in pixels per second, durations in seconds, rates in hertz.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::HarnessError;

mod check;

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
        // An endless file (`/dev/zero`) is refused one byte past the
        // limit instead of filling memory; a pipe nobody writes to, after
        // a bounded wait.
        let too_large = |_| format!("a scenario file is at most {LARGEST_SCENARIO_BYTES} bytes");
        let bytes = crate::files::read_input(
            path,
            "scenario",
            crate::PIPE_WAIT,
            LARGEST_SCENARIO_BYTES,
            &too_large,
            None,
        )?;
        let text = String::from_utf8(bytes).map_err(|e| HarnessError::ReadFile {
            what: "scenario",
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e).into(),
        })?;
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

    /// The file [`resolve`](Self::resolve) reads for `value`, or `None`
    /// for a built-in scenario (to compare it with the outputs).
    pub fn file_of(value: &str) -> Option<PathBuf> {
        let path = Path::new(value);
        let looks_like_a_name = !value.contains(['/', '\\', '.']);
        let builtin = BUILTIN_SCENARIOS.contains(&value) || (!path.exists() && looks_like_a_name);
        (!builtin).then(|| path.to_owned())
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
        if let Some(line) = lone_carriage_return(text) {
            return Err(HarnessError::Scenario {
                origin: origin.to_owned(),
                message: format!(
                    "line {line}: a carriage return (CR) without a line feed ends the line; \
                     TOML lines end in LF or CR LF: save the file with Unix or Windows line ends"
                ),
            });
        }
        let scenario: Scenario = toml::from_str(text).map_err(|e| HarnessError::Scenario {
            origin: origin.to_owned(),
            message: crate::printable(&describe_toml_error(text, &e)),
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

    /// The rules a snapshot's world depends on, as `(field, value)` pairs
    /// sorted by field: `tick_rate` and every field of the world's table
    /// (`shmup.enemies.bounty`, `shmup.enemies.spawn_band[1]`), values
    /// written exactly (a float as the `f64` of its bits). Not the name,
    /// the seed or the ticks.
    pub fn rules(&self) -> Vec<(String, String)> {
        let table = match self.kind() {
            ScenarioKind::Shmup(s) => ("shmup", serde_json::to_value(s)),
            ScenarioKind::Particles(p) => ("particles", serde_json::to_value(p)),
            ScenarioKind::Movers(m) => ("movers", serde_json::to_value(m)),
        };
        let mut out = vec![("tick_rate".to_owned(), self.tick_rate.to_string())];
        // The rule types hold numbers and arrays of numbers only: they
        // always convert.
        if let (name, Ok(value)) = table {
            flatten(name, &value, &mut out);
        }
        out.sort();
        out
    }
}

/// `value`'s leaves under `path`, into `out`.
fn flatten(path: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                flatten(&format!("{path}.{key}"), item, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{path}[{i}]"), item, out);
            }
        }
        leaf => out.push((path.to_owned(), leaf.to_string())),
    }
}

/// The line (from 1) of the first carriage return not followed by a line
/// feed, counting such returns as line ends, if any.
fn lone_carriage_return(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let at = (0..bytes.len()).find(|&i| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n'))?;
    let before = &bytes[..at];
    let lines = before.iter().filter(|&&b| b == b'\n').count()
        + before
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\r' && before.get(i + 1) != Some(&b'\n'))
            .count();
    Some(lines + 1)
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
mod tests;
