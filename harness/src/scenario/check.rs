//! Range checks of a parsed scenario: every field, naming its table.

use super::{LARGEST_VALUE, Movers, Particles, Scenario, Shmup, TICK_RATES};

impl Scenario {
    pub(super) fn check(&self) -> Result<(), String> {
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
pub(super) fn shown(value: f64) -> String {
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
    c.at_least_zero(t, "per_wave", e.per_wave);
    c.at_least_zero(t, "max_waves", e.max_waves);
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
    c.at_least_zero(t, "bounty", e.bounty);
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
