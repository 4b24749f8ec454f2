//! The schedule explains itself: a text report and a Graphviz DOT export.

use std::borrow::Cow;
use std::fmt::{self, Write};

use crate::{EdgeReason, Schedule, SystemId};

/// Text report of a schedule: each wave, its systems with their access, and
/// for each system the edges that put it there. Made by
/// [`Schedule::explain`]; print it with `{}`.
#[derive(Debug)]
pub struct Explain<'s>(&'s Schedule);

impl fmt::Display for Explain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schedule = self.0;
        let waves = schedule.waves();
        let plural =
            |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        writeln!(
            f,
            "{} {} in {} {} on {} {}",
            schedule.len(),
            plural(schedule.len(), "system", "systems"),
            waves.len(),
            plural(waves.len(), "wave", "waves"),
            schedule.threads(),
            plural(schedule.threads(), "thread", "threads")
        )?;
        for (k, wave) in waves.iter().enumerate() {
            let names: Vec<&str> = wave.iter().map(|&(_, name)| name).collect();
            writeln!(f, "wave {k}: {}", names.join(", "))?;
            for &(id, name) in wave {
                let slot = schedule.slot(id);
                let disabled = if slot.enabled { "" } else { " (disabled)" };
                let conditions = match slot.conditions.len() {
                    0 => String::new(),
                    1 => "; runs if its condition holds".to_owned(),
                    n => format!("; runs if its {n} conditions hold"),
                };
                writeln!(
                    f,
                    "  {name}{disabled}: {}{conditions}",
                    slot.access.describe()
                )?;
                let mut predecessors: Vec<_> = schedule.dag.predecessors(id.0).collect();
                predecessors.sort_by_key(|&(p, _)| p);
                if predecessors.is_empty() {
                    writeln!(f, "    no predecessor: runs in the first wave")?;
                }
                for (p, reasons) in predecessors {
                    let reasons: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                    writeln!(
                        f,
                        "    after {} (wave {}): {}",
                        schedule.slots[schedule.position[p]].name,
                        wave_of(&waves, p),
                        reasons.join("; ")
                    )?;
                }
            }
        }
        Ok(())
    }
}

fn wave_of(waves: &[Vec<(crate::SystemId, &str)>], index: usize) -> usize {
    waves
        .iter()
        .position(|w| w.iter().any(|&(id, _)| id.index() == index))
        .expect("every system is in a wave")
}

/// `text` with DOT's string escapes for `\\` and `"`.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

fn quote(text: &str) -> String {
    format!("\"{}\"", escape(text))
}

impl Schedule {
    /// Every edge of the DAG: `(from, to, reasons)`, `from` running in an
    /// earlier wave than `to`. The reasons say which explicit constraint or
    /// which conflict (type and [`Rule`](crate::Rule)) put the edge there.
    /// Every explicit constraint has its edge; a conflicting pair that a
    /// path of other edges already orders the same way may have none of
    /// its own (of N systems that all write one type, system k keeps only
    /// the edge from system k - 1); [`to_dot`](Self::to_dot) draws those
    /// too.
    pub fn edges(&self) -> impl Iterator<Item = (SystemId, SystemId, &[EdgeReason])> {
        self.dag
            .edges()
            .map(|(from, to, reasons)| (SystemId(from), SystemId(to), reasons))
    }

    /// A report of the waves and of why each system is in its wave; print
    /// it with `{}`.
    pub fn explain(&self) -> Explain<'_> {
        Explain(self)
    }

    /// The DAG in Graphviz DOT: one cluster per wave, an edge per ordering
    /// with its reasons as the label, one line per reason: every explicit
    /// constraint, and every conflicting pair the constraints leave
    /// unordered, also where the DAG orders it through a longer path (so
    /// the output grows with the square of the systems; see
    /// [`to_dot_reduced`](Self::to_dot_reduced) for large schedules). An
    /// edge whose writer-first rule fell back to registration order (it
    /// would have closed a cycle;
    /// [`Rule::CycleFallback`](crate::Rule::CycleFallback)) is dashed.
    /// Render with `dot -Tsvg`.
    pub fn to_dot(&self) -> String {
        self.dot(false)
    }

    /// As [`to_dot`](Self::to_dot), without the edges that other edges
    /// imply (the transitive reduction: an edge `a -> c` is left out when a
    /// path `a -> b -> ... -> c` orders the pair anyway). The waves are the
    /// same; the picture shows only the orderings that decide them.
    pub fn to_dot_reduced(&self) -> String {
        self.dot(true)
    }

    fn dot(&self, reduced: bool) -> String {
        let mut dot = String::from("digraph schedule {\n  rankdir=LR;\n  node [shape=box];\n");
        for (k, wave) in self.waves().iter().enumerate() {
            let _ = writeln!(
                dot,
                "  subgraph cluster_wave{k} {{\n    label=\"wave {k}\";"
            );
            for &(_, name) in wave {
                let _ = writeln!(dot, "    {};", quote(name));
            }
            dot.push_str("  }\n");
        }
        let edges = if reduced {
            let reach = self.dag.reach();
            self.dag
                .edges()
                .filter(|&(from, to, _)| !self.dag.implied(&reach, from, to))
                .map(|(from, to, reasons)| (from, to, Cow::Borrowed(reasons)))
                .collect()
        } else {
            self.dag
                .drawn_edges(|i| &self.slots[self.position[i]].access)
        };
        for (from, to, reasons) in edges {
            // Each reason escaped on its own, joined by DOT's line break.
            let label: Vec<String> = reasons.iter().map(|r| escape(&r.to_string())).collect();
            let style = if reasons.iter().any(|r| r.is_fallback()) {
                ", style=dashed"
            } else {
                ""
            };
            let _ = writeln!(
                dot,
                "  {} -> {} [label=\"{}\"{style}];",
                quote(&self.slots[self.position[from]].name),
                quote(&self.slots[self.position[to]].name),
                label.join("\\n")
            );
        }
        dot.push_str("}\n");
        dot
    }
}
