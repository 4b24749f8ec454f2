//! Labels: what `before`, `after`, `in_set` and `ScheduleBuilder::set`
//! take to name a system or a set, a string or a typed [`SystemSet`].

use std::borrow::Cow;
use std::fmt::Debug;

/// A system set named by a value of a type of your own instead of a
/// string (bevy's `#[derive(SystemSet)]`), so that a misspelt set does
/// not compile instead of silently naming a new, empty set.
///
/// Implement it (it has no methods) for a fieldless enum or a unit
/// struct that derives `Debug` (a struct with fields works too). Its
/// name, as [`explain`] and build errors show it, is the type's path and
/// the value's `Debug` text: `game::GameSet::Physics` for the variant
/// `Physics` of `enum GameSet` in module `game`, `game::Render` for
/// `struct Render;`, `game::Layer(2)` for `Layer(2)`. So two types of one
/// name in different modules are different sets, and a string with the
/// same text names the same set.
///
/// [`explain`]: crate::Schedule::explain
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Schedule, SystemSet};
///
/// #[derive(Debug, Clone, Copy)]
/// enum GameSet {
///     Input,
///     Physics,
/// }
/// impl SystemSet for GameSet {}
///
/// fn read_keys() {}
/// fn integrate() {}
///
/// let mut builder = Schedule::builder();
/// builder.set(GameSet::Input).before(GameSet::Physics);
/// builder.add(integrate).in_set(GameSet::Physics);
/// builder.add(read_keys).in_set(GameSet::Input);
/// let schedule = builder.build(&mut Registry::new()).unwrap();
/// let order: Vec<String> = schedule.waves().concat().iter().map(|(_, n)| n.to_string()).collect();
/// assert_eq!(order, ["read_keys", "integrate"]);
/// ```
///
/// A misspelt variant is a compile error, where a misspelt string would
/// name a new set:
///
/// ```compile_fail,E0599
/// # use scheduler::{Schedule, SystemSet};
/// #[derive(Debug)]
/// enum GameSet { Physics }
/// impl SystemSet for GameSet {}
/// fn integrate() {}
/// Schedule::builder().add(integrate).in_set(GameSet::Physcs);
/// ```
pub trait SystemSet: Debug + 'static {}

/// Anything that names a system or a set: `&str`, `String`, `&String`,
/// `Cow<str>`, or a [`SystemSet`] value.
pub trait Label {
    /// The name this label stands for.
    fn into_name(self) -> String;
}

impl Label for &str {
    fn into_name(self) -> String {
        self.to_owned()
    }
}

impl Label for String {
    fn into_name(self) -> String {
        self
    }
}

impl Label for &String {
    fn into_name(self) -> String {
        self.clone()
    }
}

impl Label for Cow<'_, str> {
    fn into_name(self) -> String {
        self.into_owned()
    }
}

impl<S: SystemSet> Label for S {
    fn into_name(self) -> String {
        // The full path tells apart two types of one name in different
        // modules; a `Debug` text that starts with the type's own name (a
        // unit struct, a tuple or braced struct) replaces that name.
        let path = std::any::type_name::<S>();
        let base = path.split('<').next().unwrap_or(path);
        let own = base.rsplit("::").next().unwrap_or(base);
        let module = &base[..base.len() - own.len()];
        let value = format!("{self:?}");
        if value.starts_with(own) {
            format!("{module}{value}")
        } else {
            format!("{path}::{value}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    enum GameSet {
        Physics,
    }
    impl SystemSet for GameSet {}

    #[derive(Debug)]
    struct Render;
    impl SystemSet for Render {}

    mod other {
        #[derive(Debug)]
        pub(super) enum GameSet {
            Physics,
        }
        impl super::SystemSet for GameSet {}
    }

    #[derive(Debug)]
    struct Layer(#[expect(dead_code, reason = "read through Debug only")] u8);
    impl SystemSet for Layer {}

    #[test]
    fn a_typed_label_is_named_by_its_type_path_and_value() {
        let here = module_path!();
        assert_eq!(
            GameSet::Physics.into_name(),
            format!("{here}::GameSet::Physics")
        );
        assert_eq!(
            other::GameSet::Physics.into_name(),
            format!("{here}::other::GameSet::Physics")
        );
        assert_eq!(Render.into_name(), format!("{here}::Render"));
        assert_eq!(Layer(2).into_name(), format!("{here}::Layer(2)"));
        assert_eq!("physics".into_name(), "physics");
        assert_eq!(String::from("a").into_name(), "a");
        assert_eq!(Cow::Borrowed("b").into_name(), "b");
    }
}
