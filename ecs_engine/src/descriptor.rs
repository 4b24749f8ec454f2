//! Components registered at run time: their description (name, layout,
//! destructor) and the shared destructor handle.
//!
//! A run-time component is a block of `layout.size()` bytes that the
//! registry moves by copying bytes (it must be trivially relocatable, as
//! every C type is) and drops by calling its [`DropFn`], if it has one,
//! exactly once per stored value.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

/// The destructor of a run-time component: called with a pointer to one
/// value (aligned to the component's layout) when the registry, or a
/// command buffer holding an unapplied value, drops it.
///
/// Cheap to clone (a shared handle). Made only by
/// [`ComponentDescriptor::with_drop`], whose caller vouches for it.
#[derive(Clone)]
pub struct DropFn(Arc<dyn Fn(NonNull<u8>) + Send + Sync>);

impl DropFn {
    /// Drops the value at `value` in place.
    ///
    /// # Safety
    ///
    /// `value` points to a live value of the component this destructor was
    /// registered with, aligned to its layout, that nobody uses or drops
    /// afterwards.
    #[inline]
    pub unsafe fn call(&self, value: NonNull<u8>) {
        (self.0)(value)
    }
}

impl PartialEq for DropFn {
    /// Two handles are equal when they share one destructor.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for DropFn {}

impl fmt::Debug for DropFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DropFn(..)")
    }
}

/// The description of a component registered at run time (for the C API):
/// a name unique among run-time components, a layout and an optional
/// destructor. Pass it to
/// [`Registry::register_runtime`](crate::Registry::register_runtime).
///
/// Values are moved by copying their bytes and dropped by calling the
/// destructor (none: plain bytes, nothing to do). A zero-size layout is
/// allowed: the component then only marks entities.
///
/// # Examples
///
/// ```
/// use std::alloc::Layout;
/// use ecs_engine::{ComponentDescriptor, Registry};
///
/// let mut registry = Registry::new();
/// let id = registry
///     .register_runtime(ComponentDescriptor::new("Position", Layout::new::<[f32; 2]>()))
///     .unwrap();
/// let e = registry.spawn(());
/// let value = [1.0f32, 2.0];
/// // SAFETY: `value` is a valid `[f32; 2]`, plain bytes with no destructor.
/// unsafe { registry.insert_raw(e, id, value.as_ptr().cast()) }.unwrap();
/// let stored = registry.get_raw(e, id).unwrap().cast::<[f32; 2]>();
/// // SAFETY: the pointer is aligned and valid until the registry changes.
/// assert_eq!(unsafe { *stored.as_ptr() }, [1.0, 2.0]);
/// assert_eq!(registry.component_by_name("Position"), Some(id));
/// ```
#[derive(Debug, Clone)]
pub struct ComponentDescriptor {
    name: String,
    layout: Layout,
    drop: Option<DropFn>,
    savable: bool,
}

impl ComponentDescriptor {
    /// A component named `name` of `layout` (size and alignment, in bytes),
    /// with no destructor.
    pub fn new(name: impl Into<String>, layout: Layout) -> Self {
        ComponentDescriptor {
            name: name.into(),
            layout,
            drop: None,
            savable: false,
        }
    }

    /// Gives the component a destructor, called exactly once for every
    /// value the registry (or a command buffer) drops, with a pointer to
    /// the value aligned to the layout. After the call the bytes are
    /// forgotten.
    ///
    /// # Safety
    ///
    /// `drop` may run on any thread, and must be sound to call once with a
    /// pointer to any value of this component that was inserted through the
    /// raw API (for a zero-size layout: a dangling, aligned pointer it must
    /// not read).
    #[must_use]
    pub unsafe fn with_drop(mut self, drop: impl Fn(NonNull<u8>) + Send + Sync + 'static) -> Self {
        self.drop = Some(DropFn(Arc::new(drop)));
        self
    }

    /// Declares the values plain data that snapshots save and load by
    /// their bytes ([`Registry::runtime_bytes`](crate::Registry::runtime_bytes),
    /// [`Registry::insert_runtime_bytes`](crate::Registry::insert_runtime_bytes)).
    /// A component that also has a destructor stays unsavable
    /// ([`ComponentInfo::is_savable`](crate::ComponentInfo::is_savable)):
    /// a byte copy would own its resources twice.
    ///
    /// # Safety
    ///
    /// Every value inserted through the raw API has all its
    /// `layout.size()` bytes initialised, padding included (a C caller
    /// zeroes a struct before filling it, and writes it field by field or
    /// by copying a zeroed struct), and any `layout.size()` bytes written
    /// by `insert_runtime_bytes` are a value the component's users accept:
    /// the value owns nothing and points nowhere it relies on, so bytes
    /// saved in one process are a valid value loaded in another.
    #[must_use]
    pub unsafe fn savable(mut self) -> Self {
        self.savable = true;
        self
    }

    /// The component's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Size and alignment of one value, in bytes.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Name, layout, destructor and whether [`savable`](Self::savable)
    /// was declared.
    pub(crate) fn into_parts(self) -> (String, Layout, Option<DropFn>, bool) {
        (self.name, self.layout, self.drop, self.savable)
    }
}
