//! Commands about one entity, chained: [`CommandBuffer::entity`] returns
//! an [`EntityCommands`] (bevy's `commands.entity(e)`), whose methods
//! record into the same buffer, in call order, as the buffer's own
//! methods would; [`EntityCommands::with_children`] spawns children under
//! it through a [`ChildBuilder`].

use ecs_engine::{Bundle, Component, Entity};

use crate::CommandBuffer;

/// The commands of one entity: each method records one command on the
/// buffer for [`id`](Self::id) and returns `self`, so calls chain. Made by
/// [`CommandBuffer::entity`]. Recording only: nothing changes until the
/// buffer is applied, and a command whose entity is not alive then is
/// skipped and reported, as for the buffer's own methods.
///
/// # Examples
///
/// ```
/// use command_buffer::CommandBuffer;
/// use ecs_engine::{Children, Registry};
///
/// struct Ship;
/// struct Turret(u8);
/// struct Speed(f32);
///
/// let mut registry = Registry::new();
/// let mut commands = CommandBuffer::new();
/// commands.prepare(&mut registry);
/// let ship = commands.spawn((Ship,));
/// commands
///     .entity(ship)
///     .insert((Speed(2.0),))
///     .with_children(|turrets| {
///         turrets.spawn((Turret(0),));
///         turrets.spawn((Turret(1),));
///     });
/// commands.apply(&mut registry);
///
/// assert_eq!(registry.get::<Speed>(ship).map(|s| s.0), Some(2.0));
/// let children = registry.get::<Children>(ship).unwrap();
/// let turrets: Vec<u8> = children.iter().map(|c| registry.get::<Turret>(c).unwrap().0).collect();
/// assert_eq!(turrets, [0, 1]);
/// ```
#[derive(Debug)]
pub struct EntityCommands<'a> {
    commands: &'a mut CommandBuffer,
    entity: Entity,
}

impl CommandBuffer {
    /// The commands of `entity`, chained ([`EntityCommands`]): bevy's
    /// `commands.entity(e)`. `entity` may be a handle `spawn` returned in
    /// this batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use command_buffer::CommandBuffer;
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((1_u8,));
    /// let mut commands = CommandBuffer::new();
    /// commands.entity(e).insert((2_u16,)).remove::<u8>();
    /// commands.apply(&mut registry);
    /// assert_eq!((registry.get::<u8>(e), registry.get::<u16>(e)), (None, Some(&2)));
    /// ```
    pub fn entity(&mut self, entity: Entity) -> EntityCommands<'_> {
        EntityCommands {
            commands: self,
            entity,
        }
    }
}

impl<'a> EntityCommands<'a> {
    /// The entity these commands are about.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// The buffer the commands go to, for commands about other entities.
    pub fn commands(&mut self) -> &mut CommandBuffer {
        self.commands
    }

    /// Records the insertion of every component of `bundle` (a tuple, e.g.
    /// `(Speed(2.0),)`), replacing those the entity has; see
    /// [`CommandBuffer::insert_bundle`]. Fires the observer hooks of
    /// [`CommandBuffer::insert`] for each observed component of the
    /// bundle and each observed component it requires:
    /// [`Hook::Add`](crate::Hook::Add) for each one the entity lacked,
    /// [`Hook::Replace`](crate::Hook::Replace) then
    /// [`Hook::Insert`](crate::Hook::Insert) for each bundle value that
    /// overwrote one, then `Insert` for each added one (each group in the
    /// order the types were first observed). Nothing fires when the
    /// entity is not alive.
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        self.commands.insert_bundle(self.entity, bundle);
        self
    }

    /// Records the removal of component `T`; see
    /// [`CommandBuffer::remove`].
    pub fn remove<T: Component>(&mut self) -> &mut Self {
        self.commands.remove::<T>(self.entity);
        self
    }

    /// Records the removal of every component of the bundle type `B` (a
    /// tuple, e.g. `(Speed, Ship)`) that the entity has; see
    /// [`CommandBuffer::remove_bundle`].
    pub fn remove_bundle<B: Bundle>(&mut self) -> &mut Self {
        self.commands.remove_bundle::<B>(self.entity);
        self
    }

    /// Records that the entity becomes a child of `parent`; see
    /// [`CommandBuffer::set_parent`].
    pub fn set_parent(&mut self, parent: Entity) -> &mut Self {
        self.commands.set_parent(self.entity, parent);
        self
    }

    /// Records that the entity leaves its parent; see
    /// [`CommandBuffer::remove_parent`].
    pub fn remove_parent(&mut self) -> &mut Self {
        self.commands.remove_parent(self.entity);
        self
    }

    /// Records that `child` becomes a child of this entity, after its
    /// present children.
    pub fn add_child(&mut self, child: Entity) -> &mut Self {
        self.commands.set_parent(child, self.entity);
        self
    }

    /// Spawns children of this entity: each
    /// [`ChildBuilder::spawn`] records a spawn and the link to this
    /// entity, so the children follow in spawn order. When this entity is
    /// not alive as the buffer is applied, no child is spawned (as in
    /// bevy): each child's spawn is skipped and reported as a
    /// [`Spawn`](crate::CommandKind::Spawn) refused with
    /// [`EcsError::NoSuchEntity`](ecs_engine::EcsError::NoSuchEntity)
    /// naming the parent, and its link and other commands are skipped as
    /// commands on a dead entity; no hook fires for them.
    pub fn with_children(&mut self, build: impl FnOnce(&mut ChildBuilder<'_>)) -> &mut Self {
        build(&mut ChildBuilder {
            commands: self.commands,
            parent: self.entity,
        });
        self
    }

    /// Records that the entity is disabled (skipped by queries that do not
    /// name [`Disabled`](ecs_engine::Disabled)); see
    /// [`CommandBuffer::disable`].
    pub fn disable(&mut self) -> &mut Self {
        self.commands.disable(self.entity);
        self
    }

    /// Records that the entity is enabled again; see
    /// [`CommandBuffer::enable`].
    pub fn enable(&mut self) -> &mut Self {
        self.commands.enable(self.entity);
        self
    }

    /// Records that the entity and its whole subtree are disabled; see
    /// [`CommandBuffer::disable_recursive`].
    pub fn disable_recursive(&mut self) -> &mut Self {
        self.commands.disable_recursive(self.entity);
        self
    }

    /// Records that the entity and its whole subtree are enabled again;
    /// see [`CommandBuffer::enable_recursive`].
    pub fn enable_recursive(&mut self) -> &mut Self {
        self.commands.enable_recursive(self.entity);
        self
    }

    /// Records the despawn of the entity (its children are detached, not
    /// despawned); see [`CommandBuffer::despawn`].
    pub fn despawn(self) {
        self.commands.despawn(self.entity);
    }

    /// Records the despawn of the entity and all its descendants; see
    /// [`CommandBuffer::despawn_recursive`].
    pub fn despawn_recursive(self) {
        self.commands.despawn_recursive(self.entity);
    }
}

/// Spawns children of one entity, in order: made by
/// [`EntityCommands::with_children`].
#[derive(Debug)]
pub struct ChildBuilder<'a> {
    commands: &'a mut CommandBuffer,
    parent: Entity,
}

impl ChildBuilder<'_> {
    /// Records the spawn of a child with the components of `bundle`, linked
    /// to the parent after the children spawned before it; returns the
    /// child's commands, to chain more of them (its own `with_children`
    /// too).
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> EntityCommands<'_> {
        let child = self.commands.spawn_child(self.parent, bundle);
        self.commands.set_parent(child, self.parent);
        self.commands.entity(child)
    }

    /// The entity the children are spawned under.
    pub fn parent(&self) -> Entity {
        self.parent
    }
}
