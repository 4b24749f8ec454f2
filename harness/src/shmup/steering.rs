//! The steering system: applies the players' input events at exactly the
//! tick they name (see the [input module](crate::input) for the
//! protocol), then sets each ship's velocity from its controls.

use std::f32::consts::FRAC_1_SQRT_2;

use event_queue::EventQueue;
use scheduler::{Query, Res, StatefulSystem, SystemParam, Tick};

use super::Rules;
use crate::components::{Controls, Player, Velocity};
use crate::input::{Command, InputEvent, InputMessage};

/// Steering's state: events received for later ticks, the watermark, and
/// counts of what it applied.
#[derive(Debug, Default)]
pub(crate) struct Steering {
    /// Events not applied yet, any order.
    pending: Vec<InputEvent>,
    /// Events of the current tick, in application order.
    due: Vec<InputEvent>,
    /// Every event of ticks up to this one has arrived.
    watermark: Option<u64>,
    /// The input thread is done: nothing more will arrive.
    closed: bool,
    /// Events applied so far.
    pub(crate) applied: u64,
    /// Events that arrived after their tick (0 unless the script breaks the
    /// protocol); they are dropped, never applied late.
    pub(crate) late: u64,
}

impl Steering {
    /// Pops input messages until every event of tick `t` is in hand.
    fn wait_for(&mut self, queue: &EventQueue<InputMessage>, t: u64) {
        while !self.closed && self.watermark.is_none_or(|w| w < t) {
            match queue.pop_blocking() {
                Ok(InputMessage::Event(event)) => self.pending.push(event),
                Ok(InputMessage::Through(w)) => self.watermark = Some(w),
                Err(_) => self.closed = true,
            }
        }
    }
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
        Tick,
        Res<'static, EventQueue<InputMessage>>,
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

    fn run(&mut self, (tick, queue, rules, mut ships): <Self::Params as SystemParam>::Item<'_>) {
        let t = tick.number;
        self.wait_for(&queue, t);
        self.pending
            .sort_unstable_by_key(|e| (e.tick, e.player, e.sequence));
        let due = self.pending.partition_point(|e| e.tick <= t);
        self.due.clear();
        for event in self.pending.drain(..due) {
            if event.tick < t {
                self.late += 1;
            } else {
                self.due.push(event);
            }
        }
        self.applied += self.due.len() as u64;
        let speed = rules.shmup.players.speed;
        let due = &self.due;
        ships.each(|(player, controls, velocity)| {
            for event in due.iter().filter(|e| e.player == player.index) {
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
