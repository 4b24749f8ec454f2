//! The model of a world and of buffers not yet applied, and the harness
//! that drives the real buffers and registry beside it.

use std::alloc::Layout;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use command_buffer::{ApplyMode, CommandBuffer, CommandKind, apply_all_with, is_placeholder};
use ecs_engine::{ComponentDescriptor, ComponentId, Entity, RawComponent, Registry};

use super::{A, B, BUFFERS, Log, Op, Res, policy};

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Recorded in a buffer not yet applied.
    Pending,
    Alive,
    Dead,
    /// Its spawn was dropped unapplied.
    Never,
}

#[derive(Debug)]
struct Logical {
    /// The handle `spawn` returned.
    handle: Entity,
    /// The buffer instance and batch it was spawned in (placeholders are
    /// only meaningful there).
    instance: usize,
    batch: usize,
    state: State,
    a: Option<u32>,
    b: Option<u32>,
    /// The run-time component `R`.
    r: Option<u32>,
    /// The live entity, once known.
    real: Option<Entity>,
}

/// A command target as the model sees it.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A logical entity; `false` for a placeholder from an earlier batch.
    Logical(usize, bool),
    /// A handle no registry ever handed out.
    Foreign,
}

#[derive(Debug, Clone)]
enum Cmd {
    Spawn(usize),
    Despawn(Target),
    InsertA(Target, u32),
    InsertB(Target, u32),
    InsertBundle(Target, u32),
    RemoveA(Target),
    RemoveB(Target),
    InsertR(Target, u32),
    RemoveR(Target),
    InsertRes(u32),
    RemoveRes,
    Custom(u32),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Applied,
    Skipped,
    NoOp,
}

const FOREIGN: Entity = match Entity::from_bits(1_000_000 | (7 << 32)) {
    Some(e) => e,
    None => Entity::NULL,
};

pub(crate) struct Harness {
    pub(crate) registry: Registry,
    pub(crate) buffers: Vec<CommandBuffer>,
    instance: Vec<usize>,
    next_instance: usize,
    batch: Vec<usize>,
    recorded: Vec<Vec<Cmd>>,
    ents: Vec<Logical>,
    res: Option<u32>,
    log: Vec<u32>,
    seen: HashSet<Entity>,
    /// The run-time component `R` (a `u64` holding the value).
    r: ComponentId,
    /// `R` values recorded so far, and dropped so far (by the destructor).
    r_created: usize,
    r_dropped: Arc<AtomicUsize>,
}

impl Harness {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::new();
        registry.insert_resource(Log::default());
        let r_dropped = Arc::new(AtomicUsize::new(0));
        let counter = r_dropped.clone();
        // SAFETY: the destructor only checks alignment and counts.
        let descriptor = unsafe {
            ComponentDescriptor::new("R", Layout::new::<u64>()).with_drop(move |ptr| {
                assert_eq!(ptr.as_ptr() as usize % 8, 0, "aligned drop");
                counter.fetch_add(1, Ordering::Relaxed);
            })
        };
        let r = registry.register_runtime(descriptor).unwrap();
        Harness {
            r,
            r_created: 0,
            r_dropped,
            registry,
            buffers: (0..BUFFERS)
                .map(|b| CommandBuffer::with_policy(policy(b)))
                .collect(),
            instance: (0..BUFFERS).collect(),
            next_instance: BUFFERS,
            batch: vec![0; BUFFERS],
            recorded: vec![Vec::new(); BUFFERS],
            ents: Vec::new(),
            res: None,
            log: Vec::new(),
            seen: HashSet::new(),
        }
    }

    /// The model target and the handle to record for `target`, or `None`
    /// for a placeholder of another buffer instance (unsupported).
    fn target(&self, buf: usize, target: usize) -> Option<(Target, Entity)> {
        let pick = target % (self.ents.len() + 1);
        let Some(l) = self.ents.get(pick) else {
            return Some((Target::Foreign, FOREIGN));
        };
        if !is_placeholder(l.handle) {
            return Some((Target::Logical(pick, true), l.handle));
        }
        (l.instance == self.instance[buf]).then(|| {
            let current = l.batch == self.batch[buf];
            (Target::Logical(pick, current), l.handle)
        })
    }

    fn note_handle(&mut self, handle: Entity) {
        if !is_placeholder(handle) {
            assert!(self.seen.insert(handle), "handle {handle} handed out twice");
        }
    }

    pub(crate) fn record(&mut self, op: &Op) {
        match *op {
            Op::Spawn { buf, a, b } => {
                let handle = match (a, b) {
                    (Some(a), Some(b)) => self.buffers[buf].spawn((A(a), B(b))),
                    (Some(a), None) => self.buffers[buf].spawn((A(a),)),
                    (None, Some(b)) => self.buffers[buf].spawn((B(b),)),
                    (None, None) => self.buffers[buf].spawn_empty(),
                };
                self.note_handle(handle);
                self.ents.push(Logical {
                    handle,
                    instance: self.instance[buf],
                    batch: self.batch[buf],
                    state: State::Pending,
                    a,
                    b,
                    r: None,
                    real: None,
                });
                self.recorded[buf].push(Cmd::Spawn(self.ents.len() - 1));
            }
            Op::Despawn { buf, target } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].despawn(h);
                    self.recorded[buf].push(Cmd::Despawn(t));
                }
            }
            Op::InsertA { buf, target, value } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].insert(h, A(value));
                    self.recorded[buf].push(Cmd::InsertA(t, value));
                }
            }
            Op::InsertB { buf, target, value } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].insert(h, B(value));
                    self.recorded[buf].push(Cmd::InsertB(t, value));
                }
            }
            Op::InsertBundle { buf, target, value } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].insert_bundle(h, (A(value), B(value + 1)));
                    self.recorded[buf].push(Cmd::InsertBundle(t, value));
                }
            }
            Op::RemoveA { buf, target } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].remove::<A>(h);
                    self.recorded[buf].push(Cmd::RemoveA(t));
                }
            }
            Op::RemoveB { buf, target } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].remove::<B>(h);
                    self.recorded[buf].push(Cmd::RemoveB(t));
                }
            }
            Op::InsertR { buf, target, value } => {
                if let Some((t, h)) = self.target(buf, target) {
                    // A u64 at an odd address: the buffer copies it aligned.
                    let mut bytes = [0u8; 9];
                    bytes[1..].copy_from_slice(&u64::from(value).to_ne_bytes());
                    let info = self.registry.component_info(self.r).unwrap();
                    // SAFETY: `info` is `R`'s and the bytes a valid u64.
                    let raw = unsafe {
                        RawComponent::new(self.r, info, &RawComponent::bytes_of(&bytes)[1..])
                    };
                    self.buffers[buf].insert_raw(h, raw);
                    self.r_created += 1;
                    self.recorded[buf].push(Cmd::InsertR(t, value));
                }
            }
            Op::RemoveR { buf, target } => {
                if let Some((t, h)) = self.target(buf, target) {
                    self.buffers[buf].remove_by_id(h, self.r);
                    self.recorded[buf].push(Cmd::RemoveR(t));
                }
            }
            Op::InsertRes { buf, value } => {
                self.buffers[buf].insert_resource(Res(value));
                self.recorded[buf].push(Cmd::InsertRes(value));
            }
            Op::RemoveRes { buf } => {
                self.buffers[buf].remove_resource::<Res>();
                self.recorded[buf].push(Cmd::RemoveRes);
            }
            Op::Custom { buf, tag } => {
                self.buffers[buf].push(move |registry: &mut Registry| {
                    registry
                        .resource_mut::<Log>()
                        .expect("log resource")
                        .0
                        .push(tag);
                });
                self.recorded[buf].push(Cmd::Custom(tag));
            }
            Op::Clear { buf } => {
                self.buffers[buf].clear();
                self.forget(buf, 0);
            }
            Op::Replace { buf } => {
                self.buffers[buf] = CommandBuffer::with_policy(policy(buf));
                self.forget(buf, 0);
                self.instance[buf] = self.next_instance;
                self.next_instance += 1;
            }
            Op::Reserve { buf, count } => {
                self.buffers[buf]
                    .reserve_entities(&mut self.registry, count)
                    .unwrap();
                assert!(self.buffers[buf].reserved_len() >= count);
            }
            Op::Release { buf } => {
                self.buffers[buf].release(&mut self.registry);
                assert_eq!(self.buffers[buf].reserved_len(), 0);
            }
            Op::DirectSpawn { a } => {
                let handle = self.registry.spawn((A(a),));
                self.note_handle(handle);
                self.ents.push(Logical {
                    handle,
                    instance: usize::MAX,
                    batch: 0,
                    state: State::Alive,
                    a: Some(a),
                    b: None,
                    r: None,
                    real: Some(handle),
                });
            }
            Op::DirectDespawn { target } => {
                if self.ents.is_empty() {
                    return;
                }
                let l = target % self.ents.len();
                if self.ents[l].state == State::Alive {
                    let real = self.ents[l].real.unwrap();
                    self.registry.despawn(real).unwrap();
                    self.ents[l].state = State::Dead;
                }
            }
            Op::Apply { reversed, strict } => self.apply(reversed, strict),
        }
    }

    /// The model side of dropping buffer `buf`'s commands from `from` on.
    fn forget(&mut self, buf: usize, from: usize) {
        for cmd in self.recorded[buf].drain(from..) {
            if let Cmd::Spawn(l) = cmd {
                self.ents[l].state = State::Never;
            }
        }
        self.recorded[buf].clear();
        self.batch[buf] += 1;
    }

    fn alive(&self, target: Target) -> Option<usize> {
        match target {
            Target::Logical(l, true) if self.ents[l].state == State::Alive => Some(l),
            _ => None,
        }
    }

    fn handle_of(&self, target: Target) -> Entity {
        match target {
            Target::Logical(l, _) => self.ents[l].handle,
            Target::Foreign => FOREIGN,
        }
    }

    /// Runs one command on the model.
    fn exec(&mut self, cmd: &Cmd) -> (CommandKind, Entity, Outcome) {
        let on = |h: &mut Self, t: Target, kind, f: &mut dyn FnMut(&mut Logical) -> Outcome| {
            let handle = h.handle_of(t);
            match h.alive(t) {
                Some(l) => (kind, handle, f(&mut h.ents[l])),
                None => (kind, handle, Outcome::Skipped),
            }
        };
        let remove = |slot: &mut Option<u32>| match slot.take() {
            Some(_) => Outcome::Applied,
            None => Outcome::NoOp,
        };
        match *cmd {
            Cmd::Spawn(l) => {
                self.ents[l].state = State::Alive;
                (CommandKind::Spawn, self.ents[l].handle, Outcome::Applied)
            }
            Cmd::Despawn(t) => on(self, t, CommandKind::Despawn, &mut |e| {
                e.state = State::Dead;
                Outcome::Applied
            }),
            Cmd::InsertA(t, v) => on(self, t, CommandKind::Insert, &mut |e| {
                e.a = Some(v);
                Outcome::Applied
            }),
            Cmd::InsertB(t, v) => on(self, t, CommandKind::Insert, &mut |e| {
                e.b = Some(v);
                Outcome::Applied
            }),
            Cmd::InsertBundle(t, v) => on(self, t, CommandKind::InsertBundle, &mut |e| {
                (e.a, e.b) = (Some(v), Some(v + 1));
                Outcome::Applied
            }),
            Cmd::RemoveA(t) => on(self, t, CommandKind::Remove, &mut |e| remove(&mut e.a)),
            Cmd::RemoveB(t) => on(self, t, CommandKind::Remove, &mut |e| remove(&mut e.b)),
            Cmd::InsertR(t, v) => on(self, t, CommandKind::InsertRaw, &mut |e| {
                e.r = Some(v);
                Outcome::Applied
            }),
            Cmd::RemoveR(t) => on(self, t, CommandKind::RemoveById, &mut |e| remove(&mut e.r)),
            Cmd::InsertRes(v) => {
                self.res = Some(v);
                (CommandKind::InsertResource, Entity::NULL, Outcome::Applied)
            }
            Cmd::RemoveRes => {
                let outcome = remove(&mut self.res);
                (CommandKind::RemoveResource, Entity::NULL, outcome)
            }
            Cmd::Custom(tag) => {
                self.log.push(tag);
                (CommandKind::Custom, Entity::NULL, Outcome::Applied)
            }
        }
    }

    fn apply(&mut self, reversed: bool, strict: bool) {
        let mut order: Vec<usize> = (0..BUFFERS).collect();
        if reversed {
            order.reverse();
        }
        let mode = if strict {
            ApplyMode::Strict
        } else {
            ApplyMode::Lenient
        };
        let spawned: Vec<(usize, usize)> = order
            .iter()
            .enumerate()
            .flat_map(|(pos, &buf)| {
                self.recorded[buf].iter().filter_map(move |cmd| match cmd {
                    Cmd::Spawn(l) => Some((pos, *l)),
                    _ => None,
                })
            })
            .collect();

        // The model, buffer by buffer.
        let mut counts = [[0_usize; 3]; CommandKind::ALL.len()];
        let mut expected_error = None;
        'buffers: for (pos, &buf) in order.iter().enumerate() {
            let cmds = std::mem::take(&mut self.recorded[buf]);
            for (index, cmd) in cmds.iter().enumerate() {
                let (kind, entity, outcome) = self.exec(cmd);
                if strict && outcome == Outcome::Skipped {
                    expected_error = Some((pos, index, kind, entity));
                    self.recorded[buf] = cmds;
                    self.forget(buf, index + 1);
                    break 'buffers;
                }
                counts[kind as usize][outcome as usize] += 1;
            }
            self.batch[buf] += 1;
        }

        // The real thing.
        let mut buffers: Vec<&mut CommandBuffer> = self.buffers.iter_mut().collect();
        if reversed {
            buffers.reverse();
        }
        let report = match (
            apply_all_with(&mut self.registry, buffers, mode),
            expected_error,
        ) {
            (Ok(report), None) => report,
            (Err(error), Some((pos, index, kind, entity))) => {
                let skipped = &error.skipped;
                assert_eq!(
                    (skipped.buffer, skipped.index, skipped.kind, skipped.entity),
                    (pos, index, kind, entity)
                );
                *error.report
            }
            (result, expected) => panic!("apply gave {result:?}, the model expected {expected:?}"),
        };
        for kind in CommandKind::ALL {
            let [applied, skipped, noops] = counts[kind as usize];
            assert_eq!(report.applied(kind), applied, "applied {kind}");
            assert_eq!(report.skipped(kind), skipped, "skipped {kind}");
            assert_eq!(report.noops(kind), noops, "noops {kind}");
        }
        for (pos, l) in spawned {
            if matches!(self.ents[l].state, State::Pending | State::Never) {
                continue;
            }
            let handle = self.ents[l].handle;
            let real = if is_placeholder(handle) {
                let real = report.resolve(pos, handle).expect("placeholder resolved");
                self.note_handle(real);
                real
            } else {
                handle
            };
            self.ents[l].real = Some(real);
        }
    }

    pub(crate) fn check(&self) {
        let mut alive = 0;
        let (mut with_a, mut with_b, mut with_r) = (0, 0, 0);
        for l in &self.ents {
            if l.state == State::Alive {
                alive += 1;
                with_a += usize::from(l.a.is_some());
                with_b += usize::from(l.b.is_some());
                with_r += usize::from(l.r.is_some());
            }
            match l.real {
                Some(real) => {
                    assert_eq!(
                        self.registry.is_alive(real),
                        l.state == State::Alive,
                        "{l:?}"
                    );
                    if l.state == State::Alive {
                        assert_eq!(self.registry.get::<A>(real).map(|c| c.0), l.a, "{l:?}");
                        assert_eq!(self.registry.get::<B>(real).map(|c| c.0), l.b, "{l:?}");
                        let r = self.registry.get_raw(real, self.r).ok().map(|p| {
                            // SAFETY: an aligned u64, read while nothing changes.
                            unsafe { *p.cast::<u64>().as_ptr() as u32 }
                        });
                        assert_eq!(r, l.r, "{l:?}");
                    }
                }
                None => assert!(!self.registry.is_alive(l.handle), "{l:?}"),
            }
        }
        assert_eq!(self.registry.len(), alive);
        assert_eq!(self.registry.count::<A>(), with_a);
        assert_eq!(self.registry.count::<B>(), with_b);
        assert_eq!(self.registry.count_id(self.r), with_r);
        // Every `R` value ever recorded is in the registry, waiting in a
        // buffer, or dropped exactly once.
        let pending = self
            .recorded
            .iter()
            .flatten()
            .filter(|cmd| matches!(cmd, Cmd::InsertR(..)))
            .count();
        assert_eq!(
            self.r_created - self.r_dropped.load(Ordering::Relaxed),
            with_r + pending,
            "R values alive"
        );
        assert_eq!(self.registry.resource::<Res>().map(|r| r.0), self.res);
        assert_eq!(
            self.registry.resource::<Log>().map(|l| l.0.as_slice()),
            Some(self.log.as_slice())
        );

        // Every reserved slot is accounted for: in a reserve, or in a
        // recorded spawn (cleared, dropped and discarded ones are cancelled
        // by the next apply of their buffer, checked after applies only).
        let in_reserves: usize = self.buffers.iter().map(CommandBuffer::reserved_len).sum();
        let in_spawns = self
            .ents
            .iter()
            .filter(|l| l.state == State::Pending && !is_placeholder(l.handle))
            .count();
        assert!(self.registry.entities().reserved() >= in_reserves + in_spawns);
    }

    /// Drops the buffers and the registry: every `R` value recorded has then
    /// been dropped exactly once.
    pub(crate) fn check_all_raw_values_dropped(self) {
        let (created, dropped) = (self.r_created, self.r_dropped.clone());
        drop(self);
        assert_eq!(dropped.load(Ordering::Relaxed), created);
    }

    /// After an apply that reached every buffer, nothing else is reserved.
    pub(crate) fn check_reserved_exactly(&self) {
        let in_reserves: usize = self.buffers.iter().map(CommandBuffer::reserved_len).sum();
        let in_spawns = self
            .ents
            .iter()
            .filter(|l| l.state == State::Pending && !is_placeholder(l.handle))
            .count();
        assert_eq!(self.registry.entities().reserved(), in_reserves + in_spawns);
    }
}
