//! Things chosen by name (BookSim2's way: a component is picked by the name in the
//! configuration): routing policies, switch models, channel releases, traffic patterns,
//! topology generators, up*/down* roots.
//!
//! Each kind implements [`Named`] with one table of (name, value); parsing, naming,
//! help texts and the "unknown name" error all come from that table, so a new policy or
//! generator is one line in it. Command-line parsers list [`Named::names`]. This module
//! knows names only: it never builds or runs what they name.

use core::fmt;

/// A kind of thing chosen by name.
pub trait Named: Sized + Clone + 'static {
    /// What the things are, for messages ("routing policy").
    const WHAT: &'static str;

    /// Every name and its value, in the order help texts list them.
    fn table() -> &'static [(&'static str, Self)];

    /// The value called `name`.
    fn from_name(name: &str) -> Result<Self, UnknownName> {
        Self::table()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| UnknownName::new::<Self>(name))
    }

    /// Every name, in table order.
    fn names() -> impl Iterator<Item = &'static str> {
        Self::table().iter().map(|(n, _)| *n)
    }

    /// The names joined with ", ", for help texts and errors.
    fn known() -> String {
        Self::names().collect::<Vec<_>>().join(", ")
    }
}

/// The name of a value of a table whose values compare: the first entry equal to it.
pub fn name_of<T: Named + PartialEq>(v: &T) -> &'static str {
    T::table()
        .iter()
        .find(|(_, x)| x == v)
        .map(|(n, _)| *n)
        .expect("every value of a Named kind is in its table")
}

/// A name that is not in its kind's table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    pub known: String,
}

impl UnknownName {
    pub fn new<T: Named>(name: &str) -> UnknownName {
        UnknownName {
            what: T::WHAT,
            name: name.to_string(),
            known: T::known(),
        }
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} '{}' (known: {})",
            self.what, self.name, self.known
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    impl Named for Colour {
        const WHAT: &'static str = "colour";
        fn table() -> &'static [(&'static str, Colour)] {
            &[("red", Colour::Red), ("blue", Colour::Blue)]
        }
    }

    #[test]
    fn names_parse_and_print_from_one_table() {
        assert_eq!(Colour::from_name("blue"), Ok(Colour::Blue));
        assert_eq!(name_of(&Colour::Red), "red");
        assert_eq!(Colour::known(), "red, blue");
        let e = Colour::from_name("green").unwrap_err();
        assert_eq!(e.to_string(), "unknown colour 'green' (known: red, blue)");
    }
}
