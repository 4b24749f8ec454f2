//! The steering system: applies the players' input events, which the
//! engine delivers at exactly the tick they name, in (tick, producer,
//! sequence) order (see the [input module](crate::input)), then sets each
//! ship's velocity from its controls.

use std::f32::consts::FRAC_1_SQRT_2;

use scheduler::{EventReader, Query, Res, StatefulSystem, SystemParam};

use super::Rules;
use crate::components::{Controls, Player, Velocity};
use crate::input::{Command, InputEvent};

/// Steering's state: the count of what it applied.
#[derive(Debug, Default, Clone)]
pub(crate) struct Steering {
    /// Events applied so far.
    pub(crate) applied: u64,
}

fn apply(controls: &mut Controls, command: Command) {
    match command {
        Command::Move { dx, dy } => {
            controls.dx = dx;
            controls.dy = dy;
        }
        Command::Fire(fire) => controls.fire = fire,
    }
}

impl StatefulSystem for Steering {
    type Params = (
        EventReader<'static, InputEvent>,
        Res<'static, Rules>,
        Query<
            'static,
            (
                &'static Player,
                &'static mut Controls,
                &'static mut Velocity,
            ),
        >,
    );

    fn run(&mut self, (inputs, rules, mut ships): <Self::Params as SystemParam>::Item<'_>) {
        // The events of this tick, in script order: per player, the order
        // of (tick, player, sequence).
        self.applied += inputs.len() as u64;
        let speed = rules.shmup.players.speed;
        ships.each(|(player, controls, velocity)| {
            for event in inputs.iter().filter(|e| e.player == player.index) {
                apply(controls, event.command);
            }
            let diagonal = if controls.dx != 0 && controls.dy != 0 {
                FRAC_1_SQRT_2
            } else {
                1.0
            };
            velocity.x = f32::from(controls.dx) * speed * diagonal;
            velocity.y = f32::from(controls.dy) * speed * diagonal;
        });
    }
}
