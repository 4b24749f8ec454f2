//! Default system names: unique and readable.
//!
//! A system added without [`named`](crate::SystemConfig::named) is named
//! after its function or type path (`game::physics::update`). Its name is
//! the shortest suffix of that path, in `::` segments, that no other system
//! shares at the same length: `update` alone, `physics::update` beside a
//! `render::update`. A closure's path ends in `{{closure}}`, so its name
//! keeps at least the enclosing function (`setup::{{closure}}`). Systems
//! whose paths are identical (the same function added twice, two closures
//! of one function) keep the short name and are told apart by a numbered
//! suffix in registration order: `setup::{{closure}}`,
//! `setup::{{closure}}#2`. Names chosen by the user (`named`, or a
//! [`DeclaredSystem`](crate::DeclaredSystem)'s name) are never changed; two
//! equal chosen names are a [`BuildError::DuplicateName`].

use std::collections::{HashMap, HashSet};

use crate::BuildError;
use crate::access::short_name;

/// Where a system's name comes from.
#[derive(Debug)]
pub(crate) enum NameSource {
    /// Chosen by the user: kept as is.
    Chosen(String),
    /// A function or type path, shortened here.
    Path(String),
}

/// Splits `path` at the `::` that are outside generic arguments, and
/// shortens the paths inside each segment's arguments.
fn segments(path: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                parts.push(short_name(&path[start..i]));
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(short_name(&path[start..]));
    parts
}

fn suffix(segments: &[String], len: usize) -> String {
    segments[segments.len() - len.min(segments.len())..].join("::")
}

/// The names of the systems, in registration order.
///
/// # Errors
///
/// [`BuildError::DuplicateName`] when two chosen names are equal.
pub(crate) fn assign(sources: &[NameSource]) -> Result<Vec<String>, BuildError> {
    let mut chosen = HashSet::new();
    for source in sources {
        if let NameSource::Chosen(name) = source
            && !chosen.insert(name.as_str())
        {
            return Err(BuildError::DuplicateName { name: name.clone() });
        }
    }
    let paths: Vec<Option<Vec<String>>> = sources
        .iter()
        .map(|s| match s {
            NameSource::Chosen(_) => None,
            NameSource::Path(path) => Some(segments(path)),
        })
        .collect();
    let min_len = |segs: &[String]| {
        if segs.last().is_some_and(|s| s.starts_with("{{closure}}")) && segs.len() > 1 {
            2
        } else {
            1
        }
    };
    let mut names: Vec<String> = Vec::with_capacity(sources.len());
    for (k, source) in sources.iter().enumerate() {
        let name = match (source, &paths[k]) {
            (NameSource::Chosen(name), _) => name.clone(),
            (NameSource::Path(_), Some(segs)) => {
                // The shortest suffix no other path shares at that length
                // and no chosen name equals; the shortest one when none is.
                let unique = (min_len(segs)..=segs.len()).find(|&len| {
                    let candidate = suffix(segs, len);
                    !chosen.contains(candidate.as_str())
                        && paths.iter().enumerate().all(|(m, other)| match other {
                            Some(other) if m != k && other != segs => {
                                suffix(other, len) != candidate
                            }
                            _ => true,
                        })
                });
                suffix(segs, unique.unwrap_or(min_len(segs)))
            }
            (NameSource::Path(_), None) => unreachable!("paths mirror sources"),
        };
        names.push(name);
    }
    // Identical paths (or a chosen name no suffix avoids): number the
    // later ones.
    let mut taken: HashSet<String> = chosen.iter().map(|s| (*s).to_owned()).collect();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (k, source) in sources.iter().enumerate() {
        if let NameSource::Chosen(_) = source {
            continue;
        }
        let base = names[k].clone();
        if taken.insert(base.clone()) {
            continue;
        }
        let count = counts.entry(base.clone()).or_insert(1);
        let numbered = loop {
            *count += 1;
            let numbered = format!("{base}#{count}");
            if taken.insert(numbered.clone()) {
                break numbered;
            }
        };
        names[k] = numbered;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::{NameSource, assign};
    use crate::BuildError;

    fn path(p: &str) -> NameSource {
        NameSource::Path(p.to_owned())
    }

    fn chosen(p: &str) -> NameSource {
        NameSource::Chosen(p.to_owned())
    }

    #[test]
    fn shortest_unique_suffix() {
        let names = assign(&[
            path("game::physics::update"),
            path("game::render::update"),
            path("game::movement"),
            path("game::ai::Brain<game::ai::Goal>"),
        ])
        .unwrap();
        assert_eq!(
            names,
            [
                "physics::update",
                "render::update",
                "movement",
                "Brain<Goal>"
            ]
        );
    }

    #[test]
    fn closures_keep_their_function_and_are_numbered() {
        let names = assign(&[
            path("game::setup::{{closure}}"),
            path("game::setup::{{closure}}"),
            path("game::other::{{closure}}"),
            path("game::setup::{{closure}}"),
        ])
        .unwrap();
        assert_eq!(
            names,
            [
                "setup::{{closure}}",
                "setup::{{closure}}#2",
                "other::{{closure}}",
                "setup::{{closure}}#3"
            ]
        );
    }

    #[test]
    fn chosen_names_win_and_must_be_unique() {
        let names = assign(&[path("game::movement"), chosen("movement")]).unwrap();
        assert_eq!(names, ["game::movement", "movement"]);
        let names = assign(&[path("movement"), chosen("movement")]).unwrap();
        assert_eq!(names, ["movement#2", "movement"]);
        let names = assign(&[chosen("movement#2"), path("movement"), path("movement")]).unwrap();
        assert_eq!(names, ["movement#2", "movement", "movement#3"]);
        assert_eq!(
            assign(&[chosen("a"), path("x::b"), chosen("a")]),
            Err(BuildError::DuplicateName { name: "a".into() })
        );
    }
}
