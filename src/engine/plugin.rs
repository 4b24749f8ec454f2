//! Plugins: a part of a game (its systems, resources, sets, input queues)
//! added to an [`EngineBuilder`] in one call, so a game is a list of
//! plugins (bevy's `Plugin`).

use std::any::type_name;

use super::builder::EngineBuilder;

/// A part of a game that adds what it needs to an [`EngineBuilder`]: its
/// systems, resources, sets and input queues. Implemented by types (for a
/// plugin with settings) and by every `Fn(&mut EngineBuilder)`, so a plain
/// function is a plugin.
///
/// A plugin is unique by default: adding one of the same
/// [`name`](Self::name) twice makes [`EngineBuilder::build`] fail with
/// [`EngineError::DuplicatePlugin`](crate::EngineError::DuplicatePlugin)
/// (its systems would run twice). Return `false` from
/// [`is_unique`](Self::is_unique) for one that may be added several times.
///
/// # Examples
///
/// ```
/// use ecs_runtime::prelude::*;
/// use ecs_runtime::Plugin;
///
/// struct Health(u32);
///
/// /// Regenerates `amount` health per tick.
/// struct Regeneration {
///     amount: u32,
/// }
///
/// impl Plugin for Regeneration {
///     fn build(&self, builder: &mut EngineBuilder) {
///         let amount = self.amount;
///         builder
///             .add_system(move |mut q: Query<&mut Health>| q.each(|h| h.0 += amount))
///             .named("regenerate");
///     }
/// }
///
/// fn world(builder: &mut EngineBuilder) {
///     builder.registry_mut().spawn((Health(1),));
/// }
///
/// let mut builder = Engine::builder();
/// builder.add_plugin(world).add_plugin(Regeneration { amount: 2 });
/// let mut engine = builder.build().unwrap();
/// engine.run(3).unwrap();
/// let health: Vec<u32> = engine.registry().view::<&Health>().iter().map(|h| h.0).collect();
/// assert_eq!(health, [7]);
/// ```
pub trait Plugin {
    /// Adds the plugin's systems, resources, sets and input queues.
    fn build(&self, builder: &mut EngineBuilder);

    /// The name a duplicate is recognised by, and that errors name: the
    /// plugin's type name by default.
    fn name(&self) -> &str {
        type_name::<Self>()
    }

    /// `false` for a plugin that may be added more than once; `true` by
    /// default.
    fn is_unique(&self) -> bool {
        true
    }
}

impl<F: Fn(&mut EngineBuilder)> Plugin for F {
    fn build(&self, builder: &mut EngineBuilder) {
        self(builder);
    }
}

impl EngineBuilder {
    /// Adds `plugin`: calls its [`Plugin::build`] on this builder now. A
    /// unique plugin added a second time is not built again, and
    /// [`build`](Self::build) then fails with
    /// [`EngineError::DuplicatePlugin`](crate::EngineError::DuplicatePlugin)
    /// naming it.
    pub fn add_plugin(&mut self, plugin: impl Plugin) -> &mut Self {
        if plugin.is_unique() {
            let name = plugin.name().to_owned();
            if self.plugins.contains(&name) {
                self.duplicate_plugin.get_or_insert(name);
                return self;
            }
            self.plugins.push(name);
        }
        plugin.build(self);
        self
    }
}
