//! The start order, computed once from the facilities each plugin's manifest needs.
//!
//! The kernel provides the base facilities (memory, the event ring, settings); a plugin provides
//! itself (`plugin:<name>`, meaning its channels and tools). A plugin may start the moment its
//! needs are up, so the order is a topological sort; a need nobody provides, or a cycle, is an
//! error at load time rather than a plugin that waits for ever.

use std::collections::{BTreeMap, BTreeSet};

use crate::PluginError;

/// Something a plugin needs running before it starts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Facility {
    /// The memory store (graph recall, documents).
    Memory,
    /// The event ring on the shared segment.
    Ring,
    /// The settings store.
    Settings,
    /// Another plugin, started (its tools and channels registered).
    Plugin(String),
}

impl Facility {
    /// The manifest spelling: `memory`, `ring`, `settings`, `plugin:<name>`.
    pub fn parse(text: &str) -> Result<Facility, String> {
        match text {
            "memory" => Ok(Facility::Memory),
            "ring" => Ok(Facility::Ring),
            "settings" => Ok(Facility::Settings),
            _ => match text.strip_prefix("plugin:") {
                Some(name) if !name.is_empty() => Ok(Facility::Plugin(name.to_owned())),
                _ => Err(format!("need {text:?} is not a known facility")),
            },
        }
    }
}

impl std::fmt::Display for Facility {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Facility::Memory => f.write_str("memory"),
            Facility::Ring => f.write_str("ring"),
            Facility::Settings => f.write_str("settings"),
            Facility::Plugin(name) => write!(f, "plugin:{name}"),
        }
    }
}

/// Orders `plugins` (name → needs) so each comes after every plugin it needs. `base` lists the
/// facilities the kernel has up. Ties are broken by name, so the order is stable.
pub fn start_order(
    plugins: &BTreeMap<String, Vec<Facility>>,
    base: &[Facility],
) -> Result<Vec<String>, PluginError> {
    let mut waiting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (name, needs) in plugins {
        let mut deps = BTreeSet::new();
        for need in needs {
            match need {
                Facility::Plugin(other) if plugins.contains_key(other) => {
                    deps.insert(other.as_str());
                }
                Facility::Plugin(other) => {
                    return Err(PluginError::Order(format!(
                        "plugin {name} needs plugin {other}, which is not installed or not \
                         enabled (`hearth plugin list`)"
                    )));
                }
                base_need if base.contains(base_need) => {}
                missing => {
                    return Err(PluginError::Order(format!(
                        "plugin {name} needs {missing}, which this daemon does not provide"
                    )));
                }
            }
        }
        waiting.insert(name, deps);
    }
    let mut order = Vec::with_capacity(waiting.len());
    while !waiting.is_empty() {
        let ready: Vec<&str> = waiting
            .iter()
            .filter(|(_, deps)| deps.is_empty())
            .map(|(n, _)| *n)
            .collect();
        if ready.is_empty() {
            return Err(PluginError::Order(format!(
                "the needs of plugins {} form a cycle; remove one of the plugin: needs",
                cycle(&waiting).join(" → ")
            )));
        }
        for name in ready {
            waiting.remove(name);
            for deps in waiting.values_mut() {
                deps.remove(name);
            }
            order.push(name.to_owned());
        }
    }
    Ok(order)
}

/// One cycle among the plugins still waiting (each waits on another that waits).
fn cycle<'a>(waiting: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<&'a str> {
    let Some(mut at) = waiting.keys().next().copied() else {
        return Vec::new();
    };
    let mut path: Vec<&str> = Vec::new();
    while !path.contains(&at) {
        path.push(at);
        match waiting[at].iter().next() {
            Some(next) => at = next,
            None => return path,
        }
    }
    let start = path.iter().position(|n| *n == at).unwrap_or(0);
    let mut cycle = path.split_off(start);
    cycle.push(at);
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: [Facility; 3] = [Facility::Memory, Facility::Ring, Facility::Settings];

    fn set(entries: &[(&str, &[&str])]) -> BTreeMap<String, Vec<Facility>> {
        entries
            .iter()
            .map(|(n, needs)| {
                let needs = needs
                    .iter()
                    .map(|t| Facility::parse(t).expect("need"))
                    .collect();
                (n.to_string(), needs)
            })
            .collect()
    }

    #[test]
    fn dependencies_start_first_and_ties_go_by_name() {
        let plugins = set(&[
            ("c", &["plugin:a", "memory"]),
            ("b", &[]),
            ("a", &["plugin:b", "ring"]),
            ("d", &[]),
        ]);
        let order = start_order(&plugins, &BASE).expect("orders");
        assert_eq!(order, ["b", "d", "a", "c"]);
    }

    #[test]
    fn a_missing_plugin_or_facility_is_named() {
        let e = start_order(&set(&[("a", &["plugin:ghost"])]), &BASE).expect_err("missing");
        assert!(e.to_string().contains("needs plugin ghost"), "{e}");
        let e = start_order(&set(&[("a", &["memory"])]), &[Facility::Ring]).expect_err("no memory");
        assert!(e.to_string().contains("needs memory"), "{e}");
    }

    #[test]
    fn a_cycle_is_reported_with_its_members() {
        let plugins = set(&[
            ("a", &["plugin:b"]),
            ("b", &["plugin:c"]),
            ("c", &["plugin:a"]),
            ("z", &[]),
        ]);
        let e = start_order(&plugins, &BASE).expect_err("cycle").to_string();
        assert!(e.contains("a → b → c → a"), "{e}");
    }

    #[test]
    fn facility_spellings_round_trip() {
        for t in ["memory", "ring", "settings", "plugin:x"] {
            assert_eq!(Facility::parse(t).expect("parses").to_string(), t);
        }
        assert!(Facility::parse("plugin:").is_err());
    }
}
