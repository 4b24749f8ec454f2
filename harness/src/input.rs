//! Player input from another thread: the input script, its parser, and
//! the thread that feeds it into the engine's [`EventQueue`].
//!
//! # The script
//!
//! One command per line, `TICK PLAYER COMMAND`:
//!
//! ```text
//! # tick player command        (blank lines and # comments are skipped)
//! 0    0  fire on
//! 0    0  move 1 -1             # right and up; each of dx, dy is -1, 0 or 1
//! 90   1  move 0 0
//! 120  0  fire off
//! ```
//!
//! Ticks never decrease from one line to the next.
//!
//! # Determinism
//!
//! The input thread reads the script while the world runs and sends each
//! command through the engine's tick-stamped input
//! ([`InputProducer`](ecs_runtime::InputProducer)), tagged with its tick;
//! each time the script moves past a tick it declares that tick complete
//! (an [`InputMessage::Through`] watermark). Before tick `t` the engine
//! waits until the watermark reaches `t` (sleeping if the thread is
//! behind), then delivers the events of tick `t` to the steering system as
//! events, in (tick, producer, sequence) order, `sequence` being the
//! line's rank in the script. So an event is never applied early or late,
//! and the world does not depend on when the thread ran. The channel is
//! bounded: the thread runs at most its capacity ahead.

use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::Duration;

use ecs_runtime::InputProducer;

use super::HarnessError;
use super::draw;

/// Messages the input thread keeps in flight at most.
pub(crate) const QUEUE_CAPACITY: usize = 1024;

/// What a player asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Steer: each of `dx` (right) and `dy` (down) is -1, 0 or 1.
    Move {
        /// Horizontal direction.
        dx: i8,
        /// Vertical direction.
        dy: i8,
    },
    /// Hold (`true`) or release (`false`) the fire button.
    Fire(bool),
}

/// One command of the input script, for one tick and one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputEvent {
    /// The tick it applies to.
    pub tick: u64,
    /// The player number.
    pub player: u8,
    /// Its rank in the script: ties of (tick, player) apply in this order.
    pub sequence: u64,
    /// What to do.
    pub command: Command,
}

/// What the script reader sends: events, and watermarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMessage {
    /// A command.
    Event(InputEvent),
    /// Every event of ticks up to and including this one has been sent.
    Through(u64),
}

/// Where the players' commands come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum InputSource {
    /// The built-in script: each player changes direction every 40 ticks
    /// (drawn from the seed and the tick by the runtime's `Random`, on the
    /// input thread) and fires, pausing half a second every 5 s.
    #[default]
    BuiltIn,
    /// A script file (`--inputs FILE`). A regular file is read to its end
    /// even after the run, so that a bad line is always reported; any
    /// other file (a pipe, a device) is read only while the run lasts.
    File(PathBuf),
    /// The script on standard input (`--inputs -`), read only while the
    /// run lasts: an endless stream does not keep the process alive.
    Stdin,
    /// A script given as text (for tests and embedding).
    Text(String),
}

/// Parses one script line: `None` for a blank or comment line.
fn parse_line(line: &str, players: u8) -> Result<Option<(u64, u8, Command)>, String> {
    let content = line.split('#').next().unwrap_or("");
    let words: Vec<&str> = content.split_whitespace().collect();
    if words.is_empty() {
        return Ok(None);
    }
    if words.len() < 3 {
        return Err(format!(
            "expected `TICK PLAYER COMMAND`, found `{}`",
            cut(content.trim())
        ));
    }
    let tick: u64 = words[0].parse().map_err(|_| {
        format!(
            "the tick `{}` is not a whole number from 0 to {}",
            cut(words[0]),
            u64::MAX
        )
    })?;
    let player: u8 = words[1]
        .parse()
        .ok()
        .filter(|&p| p < players)
        .ok_or_else(|| {
            format!(
                "no player `{}`: the scenario has players 0 to {}",
                cut(words[1]),
                players - 1
            )
        })?;
    let command = match (words[2], &words[3..]) {
        ("move", [dx, dy]) => Command::Move {
            dx: direction(dx)?,
            dy: direction(dy)?,
        },
        ("fire", ["on"]) => Command::Fire(true),
        ("fire", ["off"]) => Command::Fire(false),
        ("move", _) => return Err("`move` takes two directions: `move DX DY`".into()),
        ("fire", _) => return Err("`fire` takes `on` or `off`".into()),
        (other, _) => {
            return Err(format!(
                "unknown command `{}` (expected `move` or `fire`)",
                cut(other)
            ));
        }
    };
    Ok(Some((tick, player, command)))
}

fn direction(word: &str) -> Result<i8, String> {
    match word {
        "-1" => Ok(-1),
        "0" => Ok(0),
        "1" | "+1" => Ok(1),
        _ => Err(format!("the direction `{}` is not -1, 0 or 1", cut(word))),
    }
}

/// The most commands a script may give for one tick: the world waits for
/// the end of a tick's commands, so an endless run of them (`yes "0 0 fire
/// on"`) would stall it.
pub const MOST_COMMANDS_PER_TICK: usize = 4096;

/// Characters of a script line that an error message quotes at most.
const QUOTED_CHARS: usize = 40;

/// `text` as an error message quotes it: whole up to [`QUOTED_CHARS`]
/// characters, else its start and `…`, so that a huge line does not
/// flood the terminal; control characters escaped
/// ([`printable`](crate::printable)), so that a terminal escape sequence
/// in a script is shown, not obeyed.
fn cut(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", crate::printable(&text[..end])),
        None => crate::printable(text),
    }
}

/// The longest script line read, bytes: a longer one is an error, so an
/// endless line (`--inputs /dev/zero`) is refused instead of filling
/// memory.
pub const LONGEST_INPUT_LINE: usize = 4096;

/// The lines of `reader`, each at most [`LONGEST_INPUT_LINE`] bytes (an
/// error otherwise), without their `\n` or `\r\n`, a UTF-8 byte-order mark
/// removed from the first.
fn script_lines(mut reader: impl BufRead) -> impl Iterator<Item = std::io::Result<String>> {
    let mut first = true;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let mut bytes = Vec::new();
        let limit = LONGEST_INPUT_LINE as u64 + 2;
        let line = match reader.by_ref().take(limit).read_until(b'\n', &mut bytes) {
            Ok(0) => return None,
            Ok(_) => {
                if bytes.last() == Some(&b'\n') {
                    bytes.pop();
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                }
                if first && bytes.starts_with("\u{feff}".as_bytes()) {
                    bytes.drain(..3);
                }
                first = false;
                if bytes.len() > LONGEST_INPUT_LINE {
                    Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("the line is longer than {LONGEST_INPUT_LINE} bytes"),
                    ))
                } else {
                    String::from_utf8(bytes).map_err(|_| {
                        std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "the line is not UTF-8",
                        )
                    })
                }
            }
            Err(e) => Err(e),
        };
        failed = line.is_err();
        Some(line)
    })
}

/// Where the messages go: `false` once it takes no more.
type Sink = Box<dyn FnMut(InputMessage) -> bool + Send>;

/// Sends messages while the sink is open, then only checks the rest.
struct Sender {
    sink: Sink,
    open: bool,
    pause: Duration,
}

impl Sender {
    /// A sender into the engine's input: events at their tick, watermarks
    /// as `through`, the end (`Through(u64::MAX)`) as closing. The
    /// producer closes when dropped, even when the thread unwinds, so the
    /// engine never waits for a thread that is gone. Events of ticks before
    /// `from_tick` are dropped: a world resumed from a snapshot taken
    /// after `from_tick` ticks already applied them.
    fn to_engine(
        mut producer: InputProducer<InputEvent>,
        pause: Duration,
        from_tick: u64,
    ) -> Sender {
        let sink = move |message| match message {
            InputMessage::Event(event) if event.tick < from_tick => true,
            InputMessage::Event(event) => producer.send_at(event.tick, event).is_ok(),
            InputMessage::Through(u64::MAX) => {
                producer.close();
                false
            }
            InputMessage::Through(tick) => producer.through(tick).is_ok(),
        };
        Sender {
            sink: Box::new(sink),
            open: true,
            pause,
        }
    }

    fn send(&mut self, message: InputMessage) {
        if self.open && !(self.sink)(message) {
            self.open = false;
        }
    }
}

/// Reads script lines, sends their events and watermarks. After the queue
/// is closed (the run ended), keeps checking the remaining lines so that a
/// bad line is always reported when `check_rest`, else stops (a stream may
/// never end).
fn feed_script(
    lines: impl Iterator<Item = std::io::Result<String>>,
    origin: &str,
    players: u8,
    sender: &mut Sender,
    check_rest: bool,
) -> Result<u64, HarnessError> {
    let mut last_tick: Option<u64> = None;
    let mut events = 0;
    let mut same_tick = 0;
    for (index, line) in lines.enumerate() {
        if !sender.open && !check_rest {
            return Ok(events);
        }
        let number = index + 1;
        let bad = |message: String| HarnessError::Input {
            origin: origin.to_owned(),
            line: number,
            message,
        };
        let line = line.map_err(|e| bad(format!("cannot read it: {e}")))?;
        let Some((tick, player, command)) = parse_line(&line, players).map_err(bad)? else {
            continue;
        };
        if let Some(last) = last_tick {
            if tick < last {
                return Err(bad(format!(
                    "tick {tick} comes after tick {last}: lines must be in tick order"
                )));
            }
            if tick > last {
                sender.send(InputMessage::Through(tick - 1));
                same_tick = 0;
            }
        }
        same_tick += 1;
        if same_tick > MOST_COMMANDS_PER_TICK {
            return Err(bad(format!(
                "more than {MOST_COMMANDS_PER_TICK} commands for tick {tick}"
            )));
        }
        last_tick = Some(tick);
        if sender.open && !sender.pause.is_zero() {
            std::thread::sleep(sender.pause);
        }
        sender.send(InputMessage::Event(InputEvent {
            tick,
            player,
            sequence: number as u64,
            command,
        }));
        events += 1;
    }
    sender.send(InputMessage::Through(u64::MAX));
    Ok(events)
}

/// The built-in script, generated tick after tick until the queue closes.
fn feed_builtin(seed: u64, players: u8, sender: &mut Sender) -> u64 {
    let mut sequence = 0;
    let mut events = 0;
    for tick in 0u64.. {
        for player in 0..players {
            let p = u64::from(player);
            let mut commands = Vec::new();
            if (tick + 13 * p) % 40 == 0 {
                let mut rng = scheduler::Random::new(seed, draw::INPUT, tick).stream(p);
                commands.push(Command::Move {
                    dx: rng.below(3) as i8 - 1,
                    dy: rng.below(3) as i8 - 1,
                });
            }
            match tick % 300 {
                t if t == 5 * p => commands.push(Command::Fire(true)),
                t if t == 270 + 5 * p => commands.push(Command::Fire(false)),
                _ => {}
            }
            for command in commands {
                sequence += 1;
                events += 1;
                sender.send(InputMessage::Event(InputEvent {
                    tick,
                    player,
                    sequence,
                    command,
                }));
            }
        }
        sender.send(InputMessage::Through(tick));
        if !sender.open {
            break;
        }
        if !sender.pause.is_zero() {
            std::thread::sleep(sender.pause);
        }
    }
    events
}

/// What the input thread does with its sender.
type Job = Box<dyn FnOnce(&mut Sender) -> Result<u64, HarnessError> + Send>;

/// The running input thread. Close the engine's inputs
/// ([`Engine::close_inputs`](ecs_runtime::Engine::close_inputs), or drop the
/// engine) before finishing or dropping it: the built-in script never ends
/// by itself.
#[derive(Debug)]
pub(crate) struct InputFeed {
    thread: Option<JoinHandle<Result<u64, HarnessError>>>,
    outcome: Option<Result<u64, HarnessError>>,
    /// Whether the run's end waits for the script's end: `false` for a
    /// stream, which may never end (the thread, blocked in a read, is left
    /// to stop at its next line or with the process).
    wait_for_end: bool,
}

impl InputFeed {
    /// Starts the thread that feeds `source` through `producer` for
    /// `players` players, pausing `pause` before each command line (to
    /// simulate a slow producer), skipping the events of ticks before
    /// `from_tick` (0 for a run from the start).
    pub(crate) fn start(
        source: &InputSource,
        seed: u64,
        players: u8,
        producer: InputProducer<InputEvent>,
        pause: Duration,
        from_tick: u64,
    ) -> Result<InputFeed, HarnessError> {
        let mut sender = Sender::to_engine(producer, pause, from_tick);
        let mut wait_for_end = true;
        let job: Job = match source {
            InputSource::BuiltIn => Box::new(move |s| Ok(feed_builtin(seed, players, s))),
            InputSource::Text(text) => {
                let text = text.clone();
                Box::new(move |s| {
                    let lines = script_lines(text.as_bytes());
                    feed_script(lines, "input script", players, s, true)
                })
            }
            InputSource::File(path) => {
                // A pipe is opened without waiting for its writer; its
                // reads wait for one at most PIPE_WAIT.
                let input =
                    crate::files::open_input(path, "input script", crate::PIPE_WAIT, false)?;
                wait_for_end = input.meta.is_file();
                let origin = path.display().to_string();
                let reader = input.reader;
                Box::new(move |s| {
                    let lines = script_lines(std::io::BufReader::new(reader));
                    feed_script(lines, &origin, players, s, wait_for_end)
                })
            }
            InputSource::Stdin => {
                wait_for_end = false;
                Box::new(move |s| {
                    let lines = script_lines(std::io::stdin().lock());
                    feed_script(lines, "on standard input", players, s, false)
                })
            }
        };
        let thread = std::thread::Builder::new()
            .name("harness-input".into())
            .spawn(move || job(&mut sender))
            .map_err(|e| HarnessError::Thread(e.to_string()))?;
        Ok(InputFeed {
            thread: Some(thread),
            outcome: None,
            wait_for_end,
        })
    }

    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let outcome = thread
                .join()
                .unwrap_or_else(|_| Err(HarnessError::Thread("the input thread panicked".into())));
            self.outcome = Some(outcome);
        }
    }

    /// The thread's error, if it already stopped on one.
    pub(crate) fn check(&mut self) -> Result<(), HarnessError> {
        if self.thread.as_ref().is_some_and(JoinHandle::is_finished) {
            self.join();
        }
        match &self.outcome {
            Some(Err(error)) => Err(error.clone()),
            _ => Ok(()),
        }
    }

    /// Waits for the thread (the engine's inputs must be closed: the run
    /// is over), unless it reads a stream and has not stopped yet; returns
    /// the number of commands it read (0 when it was not waited for).
    pub(crate) fn finish(mut self) -> Result<u64, HarnessError> {
        self.stop();
        self.outcome.take().unwrap_or(Ok(0))
    }

    fn stop(&mut self) {
        let finished = self.thread.as_ref().is_some_and(JoinHandle::is_finished);
        if self.wait_for_end || finished {
            self.join();
        } else {
            // Detached: it stops at its next line, or with the process.
            self.thread = None;
        }
    }
}

impl Drop for InputFeed {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Option<(u64, u8, Command)>, String> {
        parse_line(line, 2)
    }

    #[test]
    fn the_built_in_moves_are_drawn_from_random_by_tick_and_player() {
        use std::sync::{Arc, Mutex};
        let events = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&events);
        let mut sender = Sender {
            sink: Box::new(move |message| match message {
                InputMessage::Event(event) => {
                    kept.lock().unwrap().push(event);
                    true
                }
                InputMessage::Through(tick) => tick < 200,
            }),
            open: true,
            pause: Duration::ZERO,
        };
        feed_builtin(3, 2, &mut sender);
        let moves: Vec<InputEvent> = events
            .lock()
            .unwrap()
            .iter()
            .copied()
            .filter(|e| matches!(e.command, Command::Move { .. }))
            .collect();
        // Every 40 ticks per player, player 1 13 ticks later: ticks 0 to
        // 200 hold six moves of player 0 and five of player 1.
        assert_eq!(moves.len(), 11);
        for event in moves {
            let mut stream =
                scheduler::Random::new(3, draw::INPUT, event.tick).stream(u64::from(event.player));
            let dx = stream.below(3) as i8 - 1;
            let dy = stream.below(3) as i8 - 1;
            assert_eq!(event.command, Command::Move { dx, dy }, "{event:?}");
        }
    }

    #[test]
    fn lines_parse_into_commands() {
        assert_eq!(
            parse("12 1 move -1 1  # up-left"),
            Ok(Some((12, 1, Command::Move { dx: -1, dy: 1 })))
        );
        assert_eq!(parse("0 0 fire on"), Ok(Some((0, 0, Command::Fire(true)))));
        assert_eq!(
            parse("7 0 fire off"),
            Ok(Some((7, 0, Command::Fire(false))))
        );
        assert_eq!(parse("   # nothing"), Ok(None));
        assert_eq!(parse(""), Ok(None));
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        assert_eq!(
            parse("x 0 fire on").unwrap_err(),
            "the tick `x` is not a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            parse("1 2 fire on").unwrap_err(),
            "no player `2`: the scenario has players 0 to 1"
        );
        assert_eq!(
            parse("1 0 jump").unwrap_err(),
            "unknown command `jump` (expected `move` or `fire`)"
        );
        assert_eq!(
            parse("1 0 move 2 0").unwrap_err(),
            "the direction `2` is not -1, 0 or 1"
        );
        assert_eq!(
            parse("1 0 fire maybe").unwrap_err(),
            "`fire` takes `on` or `off`"
        );
        assert_eq!(
            parse("1 0").unwrap_err(),
            "expected `TICK PLAYER COMMAND`, found `1 0`"
        );
    }

    #[test]
    fn quoted_text_is_cut_at_forty_characters() {
        assert_eq!(cut("fly"), "fly");
        assert_eq!(cut("a\u{1b}[2Jb\r"), "a\\u{1b}[2Jb\\r");
        let long = "é".repeat(100);
        assert_eq!(cut(&long), format!("{}…", "é".repeat(40)));
        let error = parse(&format!("1 0 {}", "z".repeat(1000))).unwrap_err();
        assert!(error.len() < 100, "{error}");
    }

    #[test]
    fn script_lines_are_bounded_and_lose_their_mark_and_ends() {
        let text = "\u{feff}0 0 fire on\r\n\u{feff}1 0 fire off\n\nlast";
        let lines: Vec<String> = script_lines(text.as_bytes()).map(Result::unwrap).collect();
        assert_eq!(lines, ["0 0 fire on", "\u{feff}1 0 fire off", "", "last"]);

        let exact = "a".repeat(LONGEST_INPUT_LINE) + "\r\n";
        let lines: Vec<_> = script_lines(exact.as_bytes()).collect();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].as_ref().unwrap().len(), LONGEST_INPUT_LINE);

        let endless = std::io::repeat(b'0');
        let mut lines = script_lines(std::io::BufReader::new(endless));
        let error = lines.next().unwrap().unwrap_err();
        assert_eq!(error.to_string(), "the line is longer than 4096 bytes");
        assert!(lines.next().is_none(), "nothing after an error");

        let mut lines = script_lines(&b"0 0 fire \xff\n"[..]);
        assert_eq!(
            lines.next().unwrap().unwrap_err().to_string(),
            "the line is not UTF-8"
        );
    }

    #[test]
    fn a_stream_stops_being_read_once_the_run_ends() {
        let (mut sender, _) = keeper(0);
        let lines = ["0 0 fire on", "1 0 fire off", "2 0 oops"];
        let events = feed_script(
            lines.iter().map(|l| Ok(l.to_string())),
            "t",
            2,
            &mut sender,
            false,
        );
        assert_eq!(
            events.unwrap(),
            1,
            "the first line, refused by the closed sink"
        );
    }

    #[test]
    fn endless_commands_for_one_tick_are_refused() {
        let script = "7 1 move 0 1\n".repeat(MOST_COMMANDS_PER_TICK + 1);
        let error = collect(&script).unwrap_err();
        assert_eq!(
            error.to_string(),
            "input script t, line 4097: more than 4096 commands for tick 7"
        );
        let script: String = (0..2 * MOST_COMMANDS_PER_TICK)
            .map(|i| format!("{} 0 fire on\n", i / MOST_COMMANDS_PER_TICK))
            .collect();
        assert!(collect(&script).is_ok());
    }

    /// A sender that keeps the messages, open for `room` of them.
    fn keeper(room: usize) -> (Sender, std::sync::Arc<std::sync::Mutex<Vec<InputMessage>>>) {
        let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = {
            let kept = kept.clone();
            move |message| {
                let mut kept = kept.lock().unwrap();
                if kept.len() >= room {
                    return false;
                }
                kept.push(message);
                true
            }
        };
        let sender = Sender {
            sink: Box::new(sink),
            open: true,
            pause: Duration::ZERO,
        };
        (sender, kept)
    }

    fn collect(script: &str) -> Result<Vec<InputMessage>, HarnessError> {
        let (mut sender, kept) = keeper(usize::MAX);
        feed_script(
            script.lines().map(|l| Ok(l.to_owned())),
            "t",
            2,
            &mut sender,
            true,
        )?;
        Ok(std::mem::take(&mut *kept.lock().unwrap()))
    }

    #[test]
    fn the_script_sends_events_then_watermarks() {
        let messages = collect("0 0 fire on\n0 1 move 1 0\n\n5 0 fire off\n").unwrap();
        let event = |tick, player, sequence, command| {
            InputMessage::Event(InputEvent {
                tick,
                player,
                sequence,
                command,
            })
        };
        assert_eq!(
            messages,
            vec![
                event(0, 0, 1, Command::Fire(true)),
                event(0, 1, 2, Command::Move { dx: 1, dy: 0 }),
                InputMessage::Through(4),
                event(5, 0, 4, Command::Fire(false)),
                InputMessage::Through(u64::MAX),
            ]
        );
    }

    #[test]
    fn a_bad_line_or_a_tick_going_back_names_the_line() {
        let error = collect("0 0 fire on\n\n3 0 fly\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "input script t, line 3: unknown command `fly` (expected `move` or `fire`)"
        );
        let error = collect("5 0 fire on\n4 0 fire off\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "input script t, line 2: tick 4 comes after tick 5: lines must be in tick order"
        );
    }

    #[test]
    fn a_closed_queue_still_gets_the_rest_checked() {
        let (mut sender, _) = keeper(0);
        let lines = ["0 0 fire on", "1 0 move 0 0", "2 0 oops"];
        let error = feed_script(
            lines.iter().map(|l| Ok(l.to_string())),
            "t",
            2,
            &mut sender,
            true,
        )
        .unwrap_err();
        assert!(matches!(error, HarnessError::Input { line: 3, .. }));
        assert!(!sender.open);
    }
}
