//! The map: the path the enemies walk, the grid that towers look up
//! enemies in, the tower slots, and the game's numbers.

use ecs_runtime::prelude::*;

use super::components::Position;

/// Rows of the serpentine path.
pub(crate) const PATH_ROWS: usize = 4;
/// Width of a row, pixels.
pub(crate) const ROW_WIDTH: f32 = 1200.0;
/// Distance between two rows, pixels.
pub(crate) const ROW_GAP: f32 = 150.0;
/// Left edge and top row of the path, pixels.
pub(crate) const ORIGIN: (f32, f32) = (40.0, 75.0);
/// Side of a grid cell, pixels.
pub(crate) const CELL: f32 = 32.0;
/// Map size, pixels.
pub(crate) const MAP: (f32, f32) = (1280.0, 640.0);
/// Ticks a projectile may fly.
pub(crate) const PROJECTILE_TTL: u32 = 45;
/// Waves in a game.
pub(crate) const MAX_WAVES: u32 = 5;
/// Ticks a wave takes to spawn.
pub(crate) const SPAWN_TICKS: u32 = 40;
/// Ticks of break after a wave has spawned.
pub(crate) const BREAK_TICKS: u32 = 20;
/// Gold a new tower costs.
pub(crate) const TOWER_COST: u64 = 60;

/// An enemy kind: hit points, pixels per second, bounty.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EnemyKind {
    pub(crate) health: i32,
    pub(crate) speed: f32,
    pub(crate) bounty: u32,
}

/// Grunts, runners, tanks.
pub(crate) const ENEMY_KINDS: [EnemyKind; 3] = [
    EnemyKind {
        health: 40,
        speed: 240.0,
        bounty: 2,
    },
    EnemyKind {
        health: 20,
        speed: 1200.0,
        bounty: 3,
    },
    EnemyKind {
        health: 160,
        speed: 120.0,
        bounty: 8,
    },
];

/// The two tower kinds: guns and cannons.
pub(crate) const TOWER_KINDS: [super::components::Tower; 2] = [
    super::components::Tower {
        range: 70.0,
        damage: 12,
        reload: 6,
    },
    super::components::Tower {
        range: 110.0,
        damage: 40,
        reload: 20,
    },
];

/// The counts of one game, from its scale (1.0: the full game, about
/// 48,000 entities at its peak).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sizes {
    /// Enemies per wave.
    pub(crate) wave: u32,
    /// Towers placed at set-up.
    pub(crate) initial_towers: u32,
    /// Towers the gold may buy.
    pub(crate) buildable_towers: u32,
    /// Lives at the start.
    pub(crate) lives: i64,
}

impl Sizes {
    /// The counts at `scale` (at least one of each).
    pub(crate) fn at(scale: f64) -> Sizes {
        let count = |full: f64| ((full * scale).round() as u32).max(1);
        Sizes {
            wave: count(10_000.0),
            initial_towers: count(600.0),
            buildable_towers: count(600.0),
            lives: i64::from(count(2_000.0)),
        }
    }
}

/// The path: a polyline from the entrance to the exit.
#[derive(Debug, Clone)]
pub(crate) struct Path {
    points: Vec<(f32, f32)>,
    /// Distance from the entrance to each point.
    along: Vec<f32>,
}

impl Path {
    /// The serpentine of [`PATH_ROWS`] rows.
    pub(crate) fn serpentine() -> Path {
        let mut points = Vec::new();
        for row in 0..PATH_ROWS {
            let y = ORIGIN.1 + row as f32 * ROW_GAP;
            let (left, right) = (ORIGIN.0, ORIGIN.0 + ROW_WIDTH);
            if row % 2 == 0 {
                points.extend([(left, y), (right, y)]);
            } else {
                points.extend([(right, y), (left, y)]);
            }
        }
        let mut along = vec![0.0];
        for pair in points.windows(2) {
            let d = (pair[1].0 - pair[0].0).hypot(pair[1].1 - pair[0].1);
            along.push(along.last().unwrap() + d);
        }
        Path { points, along }
    }

    /// Total length, pixels.
    pub(crate) fn length(&self) -> f32 {
        *self.along.last().unwrap()
    }

    /// The point `distance` along the path, `lane` pixels to its left.
    pub(crate) fn at(&self, distance: f32, lane: f32) -> Position {
        let distance = distance.clamp(0.0, self.length());
        let segment = match self.along.iter().position(|&a| a > distance) {
            Some(i) => i - 1,
            None => self.points.len() - 2,
        };
        let (a, b) = (self.points[segment], self.points[segment + 1]);
        let len = self.along[segment + 1] - self.along[segment];
        let t = (distance - self.along[segment]) / len;
        let (dx, dy) = ((b.0 - a.0) / len, (b.1 - a.1) / len);
        Position {
            x: a.0 + (b.0 - a.0) * t - dy * lane,
            y: a.1 + (b.1 - a.1) * t + dx * lane,
        }
    }
}

/// The tower slots: lines 30 and 60 pixels above and below each row, a
/// slot every 16 pixels.
pub(crate) fn tower_slots() -> Vec<Position> {
    let mut slots = Vec::new();
    for row in 0..PATH_ROWS {
        let y = ORIGIN.1 + row as f32 * ROW_GAP;
        for offset in [-60.0, -30.0, 30.0, 60.0] {
            let mut x = ORIGIN.0 + 8.0;
            while x < ORIGIN.0 + ROW_WIDTH {
                slots.push(Position { x, y: y + offset });
                x += 16.0;
            }
        }
    }
    slots
}

/// The enemies bucketed by cell, rebuilt each tick: towers look up
/// their targets in the cells within range.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) cells: Vec<Vec<(Entity, Position)>>,
}

impl Default for Grid {
    fn default() -> Self {
        let columns = (MAP.0 / CELL).ceil() as usize;
        let rows = (MAP.1 / CELL).ceil() as usize;
        Grid {
            columns,
            rows,
            cells: vec![Vec::new(); columns * rows],
        }
    }
}

impl Grid {
    /// The cell of `p`, clamped to the map.
    pub(crate) fn cell_of(&self, p: Position) -> (usize, usize) {
        let cx = ((p.x / CELL).max(0.0) as usize).min(self.columns - 1);
        let cy = ((p.y / CELL).max(0.0) as usize).min(self.rows - 1);
        (cx, cy)
    }
}

/// Where the tower slots are: a resource of the slots not yet built on,
/// in build order.
#[derive(Debug, Clone, Default)]
pub(crate) struct TowerSlots {
    pub(crate) free: Vec<Position>,
    pub(crate) next: usize,
}
