//! [`ScheduleBuilder::add_chain`]: systems that run one after another, in
//! the order given (bevy's `.chain()`).

use super::ScheduleBuilder;
use crate::IntoSystem;

/// A tuple of 2 to 8 systems for [`ScheduleBuilder::add_chain`]; `Marker`
/// only tells the implementations apart.
pub trait SystemChain<Marker> {
    /// Adds the systems to `builder`, in order; their registration
    /// indices.
    fn add_all(self, builder: &mut ScheduleBuilder) -> Vec<usize>;
}

macro_rules! chain_tuple {
    ($($s:ident $m:ident),+) => {
        impl<$($s: IntoSystem<$m>, $m),+> SystemChain<($($m,)+)> for ($($s,)+) {
            #[expect(non_snake_case, reason = "the systems are named after their types")]
            fn add_all(self, builder: &mut ScheduleBuilder) -> Vec<usize> {
                let ($($s,)+) = self;
                vec![$(builder.add($s).index),+]
            }
        }
    };
}

chain_tuple!(A MA, B MB);
chain_tuple!(A MA, B MB, C MC);
chain_tuple!(A MA, B MB, C MC, D MD);
chain_tuple!(A MA, B MB, C MC, D MD, E ME);
chain_tuple!(A MA, B MB, C MC, D MD, E ME, F MF);
chain_tuple!(A MA, B MB, C MC, D MD, E ME, F MF, G MG);
chain_tuple!(A MA, B MB, C MC, D MD, E ME, F MF, G MG, H MH);

impl ScheduleBuilder {
    /// Adds 2 to 8 systems that run in the order given, each in a later
    /// wave than the one before it, whatever they access: bevy's
    /// `add_systems((a, b, c).chain())`. Each system gets its default name
    /// (name them with [`add`](Self::add) and `after` instead to choose
    /// names); `explain()` shows each link as `` `b` declared after ``.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{ResMut, Schedule, Tick};
    ///
    /// struct Input(u32);
    /// struct Physics(u32);
    /// struct Render(u32);
    ///
    /// fn input(mut i: ResMut<Input>) { i.0 += 1 }
    /// fn physics(mut p: ResMut<Physics>) { p.0 += 1 }
    /// fn render(mut r: ResMut<Render>) { r.0 += 1 }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Input(0));
    /// registry.insert_resource(Physics(0));
    /// registry.insert_resource(Render(0));
    /// let mut builder = Schedule::builder();
    /// // Nothing in common: one wave without the chain, three with it.
    /// builder.add_chain((input, physics, render));
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// let waves: Vec<Vec<&str>> = schedule
    ///     .waves()
    ///     .iter()
    ///     .map(|w| w.iter().map(|&(_, name)| name).collect())
    ///     .collect();
    /// assert_eq!(waves, [["input"], ["physics"], ["render"]]);
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<Render>().unwrap().0, 1);
    /// ```
    pub fn add_chain<M>(&mut self, systems: impl SystemChain<M>) -> &mut Self {
        let indices = systems.add_all(self);
        for pair in indices.windows(2) {
            self.chained.push((pair[0], pair[1]));
        }
        self
    }
}
