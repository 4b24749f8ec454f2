//! A first look at the registry: spawn a small world, move it with a view,
//! despawn what leaves the screen, and print what is left.
//!
//! Run with `cargo run --release --example quickstart`.

use ecs_runtime::prelude::*;

/// Pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

/// Pixels per second.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

/// A marker: the entity is an enemy.
#[derive(Debug, Clone, Copy)]
struct Enemy;

const SCREEN_WIDTH: f32 = 640.0;
const STEP_SECONDS: f32 = 1.0 / 60.0;

fn main() {
    let mut registry = Registry::new();
    let ship = registry.spawn((Position { x: 32.0, y: 240.0 }, Velocity { x: 60.0, y: 0.0 }));
    for i in 0..1000 {
        let speed = -(30.0 + (i % 7) as f32 * 40.0);
        registry.spawn((
            Position {
                x: SCREEN_WIDTH,
                y: (i % 480) as f32,
            },
            Velocity { x: speed, y: 0.0 },
            Enemy,
        ));
    }
    println!("spawned {} entities", registry.len());

    for _tick in 0..600 {
        registry
            .view_mut::<(&mut Position, &Velocity)>()
            .each(|(p, v)| {
                p.x += v.x * STEP_SECONDS;
                p.y += v.y * STEP_SECONDS;
            });
        registry.retain::<(&Position, &Enemy)>(|(p, _)| p.x >= 0.0);
    }

    let enemies = registry.view::<&Enemy>().count();
    let ship_position = registry.get::<Position>(ship).copied();
    println!("after 600 ticks (10 s): {enemies} enemies still on screen");
    println!("ship {ship} is at {ship_position:?}");
    let mut checksum = 0.0f64;
    registry
        .view::<(Entity, &Position)>()
        .each(|(e, p)| checksum += f64::from(e.index()) * 1e-3 + f64::from(p.x) + f64::from(p.y));
    println!("checksum of positions: {checksum:.3}");
}
