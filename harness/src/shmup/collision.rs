//! Collision: a uniform grid over the play area (cells as wide as the
//! largest collider) holding the players' side (ships and their missiles,
//! the few), built each tick by counting sort; each body of the enemies'
//! side (the many) is tested against the players' bodies in its 3 × 3
//! neighbouring cells.
//!
//! In parallel on the engine's pool: the bodies are gathered (in dense
//! order); the players' side is sorted into the grid on one thread; the
//! enemies' side is tested in chunks of consecutive bodies
//! ([`ecs_engine::par_map`]), each chunk writing its own bodies' damage
//! and listing what it did to the players' side; the lists are then
//! added up on one thread. Adding up and taking the lowest hitter
//! do not depend on order, so the result is the same on any thread count.
//!
//! Hostile: a player's ship or missile against an enemy or an enemy
//! missile; two missiles never collide. Each body of a touching pair takes
//! the other's `Damage`. The results do not depend on the order bodies are
//! visited: damage adds up, and the hitter recorded is the lowest player
//! number.

use ecs_engine::Entity;
use scheduler::{Query, Res, StatefulSystem, SystemParam};

use super::Rules;
use crate::components::{Collider, Damage, Faction, Hits, Missile, Position};

#[derive(Debug, Clone, Copy)]
struct Body {
    entity: Entity,
    x: f32,
    y: f32,
    radius: f32,
    faction: Faction,
    missile: bool,
    damage: i32,
}

fn hostile(a: &Body, b: &Body) -> bool {
    let sides_differ = matches!(
        (a.faction, b.faction),
        (Faction::Player(_), Faction::Enemy) | (Faction::Enemy, Faction::Player(_))
    );
    sides_differ && !(a.missile && b.missile)
}

/// Finds touching hostile pairs and writes each body's `Hits`. Reads
/// `Position`, `Collider`, `Faction`, `Damage`, `Missile`; writes `Hits`.
#[derive(Debug, Default)]
pub(crate) struct Collision {
    /// Pairs of bodies tested so far (an enemy-side and a player-side body
    /// in neighbouring cells).
    pub(crate) pairs_tested: u64,
    /// Touching hostile pairs found so far.
    pub(crate) contacts: u64,
    bodies: Vec<Body>,
    /// The players' side: each body's index and cell.
    players: Vec<(u32, u32)>,
    /// Start of each cell's run in `order` (cells + 1 entries).
    starts: Vec<u32>,
    /// Body indices sorted by cell.
    order: Vec<u32>,
    /// Next free slot of each cell while sorting.
    next: Vec<u32>,
    /// Damage taken and lowest hitter, by body.
    taken: Vec<(i32, Option<u8>)>,
}

/// A copy for in-memory states: the counters; the scratch buffers are
/// rebuilt by every run, so the copy starts them empty.
impl Clone for Collision {
    fn clone(&self) -> Self {
        Collision {
            pairs_tested: self.pairs_tested,
            contacts: self.contacts,
            ..Collision::default()
        }
    }
}

impl StatefulSystem for Collision {
    type Params = (
        Res<'static, Rules>,
        Query<
            'static,
            (
                Entity,
                &'static Position,
                &'static Collider,
                &'static Faction,
                &'static Damage,
                Option<&'static Missile>,
            ),
        >,
        Query<'static, &'static mut Hits>,
    );

    fn run(&mut self, (rules, mut bodies, mut hits): <Self::Params as SystemParam>::Item<'_>) {
        self.bodies.clear();
        bodies.par_filter_map_into(
            &mut self.bodies,
            |entity, (_, p, c, faction, damage, missile)| {
                Some(Body {
                    entity,
                    x: p.x,
                    y: p.y,
                    radius: c.radius,
                    faction: *faction,
                    missile: missile.is_some(),
                    damage: damage.0,
                })
            },
        );
        let arena = rules.shmup.arena;
        let grid = Grid::new(&self.bodies, arena.width, arena.height, arena.margin);
        self.sort_into_cells(&grid);
        self.taken.clear();
        self.taken.resize(self.bodies.len(), (0, None));
        self.test_enemies(&grid);
        hits.par_each(|h| *h = Hits::default());
        for (body, &(damage, by)) in self.bodies.iter().zip(&self.taken) {
            if damage != 0
                && let Ok(h) = hits.get(body.entity)
            {
                h.damage = damage;
                h.by = by;
            }
        }
    }
}

/// Fewest bodies per parallel task.
const CHUNK: usize = 256;

/// Bodies per parallel task over `len` bodies: a few tasks per thread
/// (one, walked on this thread, on a one-thread schedule, which runs
/// outside any pool), none shorter than [`CHUNK`].
fn chunk_len(len: usize) -> usize {
    let threads = ecs_engine::walk_threads();
    if threads == 1 {
        len.max(1)
    } else {
        (len / (threads * 4)).max(CHUNK)
    }
}

/// What one chunk of the enemies' side did: hits dealt to the players'
/// side (body, damage, hitter) and its pair counts.
#[derive(Debug, Default)]
struct ChunkHits {
    dealt: Vec<(u32, i32, Faction)>,
    pairs_tested: u64,
    contacts: u64,
}

impl Collision {
    /// Sorts the players' side (the few) by cell, on this thread: the
    /// enemies' side is left out of `order` and finds its cells as it is
    /// tested.
    fn sort_into_cells(&mut self, grid: &Grid) {
        self.players.clear();
        for (i, b) in self.bodies.iter().enumerate() {
            if b.faction != Faction::Enemy {
                self.players.push((i as u32, grid.cell(b.x, b.y)));
            }
        }
        self.starts.clear();
        self.starts.resize(grid.cells() + 1, 0);
        for &(_, c) in &self.players {
            self.starts[c as usize + 1] += 1;
        }
        for c in 0..grid.cells() {
            self.starts[c + 1] += self.starts[c];
        }
        self.order.clear();
        self.order.resize(self.players.len(), 0);
        self.next.clear();
        self.next.extend_from_slice(&self.starts);
        for &(i, c) in &self.players {
            let slot = &mut self.next[c as usize];
            self.order[*slot as usize] = i;
            *slot += 1;
        }
    }

    /// Tests every enemy-side body against the players' side, in parallel
    /// chunks, and adds the players' side's damage up afterwards.
    fn test_enemies(&mut self, grid: &Grid) {
        let cells = Cells {
            grid,
            bodies: &self.bodies,
            starts: &self.starts,
            order: &self.order,
        };
        let chunk = chunk_len(self.taken.len());
        let test_chunk = |(n, taken): (usize, &mut [(i32, Option<u8>)])| {
            let mut out = ChunkHits::default();
            for (k, own) in taken.iter_mut().enumerate() {
                let i = n * chunk + k;
                if cells.bodies[i].faction == Faction::Enemy {
                    cells.test_neighbours(i, own, &mut out);
                }
            }
            out
        };
        let chunks = ecs_engine::par_map(self.taken.chunks_mut(chunk).enumerate(), test_chunk);
        for chunk in chunks {
            self.pairs_tested += chunk.pairs_tested;
            self.contacts += chunk.contacts;
            for (j, damage, by) in chunk.dealt {
                hit(&mut self.taken[j as usize], damage, by);
            }
        }
    }
}

/// The grid with the players' side sorted into it, shared by the tasks.
struct Cells<'a> {
    grid: &'a Grid,
    bodies: &'a [Body],
    starts: &'a [u32],
    order: &'a [u32],
}

impl Cells<'_> {
    /// Tests enemy-side body `i` against the players' side in its 3 × 3
    /// cells: its own damage goes to `own`, what it deals to `out`.
    fn test_neighbours(&self, i: usize, own: &mut (i32, Option<u8>), out: &mut ChunkHits) {
        let grid = self.grid;
        let a = self.bodies[i];
        let (col, row) = grid.coords(a.x, a.y);
        let (first, last) = (col.saturating_sub(1), (col + 1).min(grid.cols - 1));
        for r in row.saturating_sub(1)..=(row + 1).min(grid.rows - 1) {
            // The row's three cells are next to each other in `order`.
            let (from, to) = (
                (r * grid.cols + first) as usize,
                (r * grid.cols + last) as usize,
            );
            let run = self.starts[from] as usize..self.starts[to + 1] as usize;
            for &j in &self.order[run] {
                let b = self.bodies[j as usize];
                out.pairs_tested += 1;
                if !hostile(&a, &b) {
                    continue;
                }
                let reach = a.radius + b.radius;
                if (a.x - b.x).powi(2) + (a.y - b.y).powi(2) < reach * reach {
                    out.contacts += 1;
                    hit(own, b.damage, b.faction);
                    out.dealt.push((j, a.damage, a.faction));
                }
            }
        }
    }
}

fn hit(taken: &mut (i32, Option<u8>), damage: i32, by: Faction) {
    // Saturating: many contacts of large damage stay at i32::MAX.
    taken.0 = taken.0.saturating_add(damage);
    if let Faction::Player(n) = by {
        taken.1 = Some(taken.1.map_or(n, |m| m.min(n)));
    }
}

/// The grid's shape: the arena plus its margin, in square cells.
struct Grid {
    x0: f32,
    y0: f32,
    size: f32,
    cols: u32,
    rows: u32,
}

impl Grid {
    fn new(bodies: &[Body], width: f32, height: f32, margin: f32) -> Grid {
        let largest = bodies.iter().map(|b| b.radius).fold(1.0f32, f32::max);
        let size = 2.0 * largest;
        let cols = ((width + 2.0 * margin) / size).ceil().clamp(1.0, 4096.0) as u32;
        let rows = ((height + 2.0 * margin) / size).ceil().clamp(1.0, 4096.0) as u32;
        Grid {
            x0: -margin,
            y0: -margin,
            size,
            cols,
            rows,
        }
    }

    fn cells(&self) -> usize {
        (self.cols * self.rows) as usize
    }

    /// The cell of a point; points outside fall in the border cells.
    fn cell(&self, x: f32, y: f32) -> u32 {
        let (col, row) = self.coords(x, y);
        row * self.cols + col
    }

    /// The column and row of a point's cell.
    fn coords(&self, x: f32, y: f32) -> (u32, u32) {
        let col = ((x - self.x0) / self.size).clamp(0.0, (self.cols - 1) as f32) as u32;
        let row = ((y - self.y0) / self.size).clamp(0.0, (self.rows - 1) as f32) as u32;
        (col, row)
    }
}
