//! The engine's and the scheduler's `tracing` spans, seen by a subscriber
//! set as the default of the thread that ticks (its own file: it sets a
//! dispatcher, which is process-wide state).

use std::sync::Arc;

use ecs_runtime::prelude::*;
use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

struct Position(f32);
struct Velocity(f32);

/// One span as created: its name and its one field, as text.
#[derive(Debug, Clone, PartialEq)]
struct Created {
    name: &'static str,
    field: String,
}

/// A subscriber that records every span created and the thread that
/// entered each.
#[derive(Default)]
struct Recorder {
    created: Mutex<Vec<Created>>,
    entered: Mutex<Vec<(usize, String)>>,
}

struct FieldText<'a>(&'a mut String);

impl Visit for FieldText<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        *self.0 = format!("{}={value:?}", field.name());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut field = String::new();
        span.record(&mut FieldText(&mut field));
        let mut created = self.created.lock();
        created.push(Created {
            name: span.metadata().name(),
            field,
        });
        Id::from_u64(created.len() as u64)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        let thread = std::thread::current().name().unwrap_or("").to_owned();
        self.entered
            .lock()
            .push((span.into_u64() as usize - 1, thread));
    }

    fn exit(&self, _: &Id) {}
}

#[test]
fn ticks_systems_and_applies_are_spans_on_the_workers() {
    let mut builder = Engine::builder();
    builder.threads(2);
    builder
        .add_system(|mut q: Query<&mut Position>| q.each(|p| p.0 += 1.0))
        .named("a");
    builder
        .add_system(|mut q: Query<&mut Velocity>| q.each(|v| v.0 += 1.0))
        .named("b");
    builder
        .add_system(|_: Query<(&Position, &Velocity)>| {})
        .named("c");
    let mut engine = builder.build().unwrap();
    // Every tick on the pool, however cheap (its systems take
    // microseconds: they would run on the caller's thread).
    engine.set_adaptive(false);
    engine.registry_mut().spawn((Position(0.0), Velocity(0.0)));
    engine.tick().unwrap(); // unseen: no subscriber yet

    let recorder = Arc::new(Recorder::default());
    tracing::subscriber::with_default(Arc::clone(&recorder), || engine.run(2)).unwrap();

    let created = recorder.created.lock().clone();
    let named = |name: &str| -> Vec<String> {
        let mut fields: Vec<String> = created
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.field.clone())
            .collect();
        fields.sort();
        fields
    };
    assert_eq!(named("tick"), ["number=1", "number=2"]);
    assert_eq!(
        named("system"),
        ["name=a", "name=a", "name=b", "name=b", "name=c", "name=c"]
    );
    // Two waves ({a, b}, {c}): two applies per tick.
    assert_eq!(named("apply"), ["wave=0", "wave=0", "wave=1", "wave=1"]);
    assert_eq!(created.len(), 2 + 6 + 4);
    // Systems and applies run on the pool's threads, ticks on the caller's.
    for (index, thread) in recorder.entered.lock().iter() {
        let on_worker = thread.starts_with("ecs-worker-");
        assert_eq!(on_worker, created[*index].name != "tick", "{thread}");
    }
    assert_eq!(recorder.entered.lock().len(), created.len());

    // Without the subscriber, nothing more is seen.
    engine.tick().unwrap();
    assert_eq!(recorder.created.lock().len(), created.len());
}
