//! A panic while a buffer is applied (a pushed closure, or a `Drop` of a
//! command dropped unapplied) leaves the buffer empty: nothing recorded
//! before it is ever applied by a later apply.

use command_buffer::CommandBuffer;
use ecs_engine::Registry;

/// Panics in `Drop` when its flag says so.
struct Fragile(bool);

impl Drop for Fragile {
    fn drop(&mut self) {
        if self.0 {
            panic!("Fragile panics in Drop");
        }
    }
}

#[test]
fn a_panic_while_applying_empties_the_buffer_even_if_a_discarded_drop_panics() {
    let mut registry = Registry::new();
    let e = registry.spawn(());
    let mut commands = CommandBuffer::new();
    commands.insert(e, 1_u8);
    commands.push(|_| panic!("first"));
    // Both dropped unapplied; the first one's `Drop` panics as well.
    commands.insert(e, Fragile(true));
    commands.insert(e, 5_u32);
    let panic = commands.try_apply(&mut registry).unwrap_err();
    assert_eq!((panic.index, panic.message.as_str()), (1, "first"));
    assert!(commands.is_empty());
    assert_eq!(registry.get::<u8>(e), Some(&1));
    // Nothing of the first apply is left for the next one.
    let report = commands.try_apply(&mut registry).unwrap();
    assert_eq!(report.total_applied(), 0);
    assert_eq!(registry.get::<u32>(e), None);
    assert!(registry.get::<Fragile>(e).is_none());
    // The buffer is usable.
    commands.insert(e, 6_u32);
    commands.try_apply(&mut registry).unwrap();
    assert_eq!(registry.get::<u32>(e), Some(&6));
}

#[test]
fn a_panicking_drop_of_a_replaced_value_is_the_commands_panic() {
    let mut registry = Registry::new();
    let e = registry.spawn((Fragile(true),));
    let mut commands = CommandBuffer::new();
    commands.insert(e, 1_u8);
    commands.insert(e, Fragile(false)); // replaces the fragile value
    commands.insert(e, 2_u16); // dropped with the panic
    let panic = commands.try_apply(&mut registry).unwrap_err();
    assert_eq!(panic.index, 1);
    assert!(panic.message.contains("Fragile panics in Drop"));
    assert!(commands.is_empty());
    assert_eq!(registry.get::<u8>(e), Some(&1));
    assert!(registry.get::<Fragile>(e).is_some_and(|f| !f.0));
    assert_eq!(registry.get::<u16>(e), None);
}
