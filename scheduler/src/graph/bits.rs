//! Bit rows and reachability for the DAG builder, and Kahn's algorithm
//! level by level over successor lists.

/// Rows of bits: bit `j` of row `i`.
#[derive(Debug, Clone)]
pub(super) struct Bits {
    pub(super) words: usize,
    pub(super) bits: Vec<u64>,
}

impl Bits {
    pub(super) fn new(rows: usize, columns: usize) -> Bits {
        let words = columns.div_ceil(64);
        Bits {
            words,
            bits: vec![0; words * rows],
        }
    }

    pub(super) fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    pub(super) fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.words..(i + 1) * self.words]
    }
}

pub(super) fn bit(words: &[u64], j: usize) -> bool {
    words[j / 64] & (1 << (j % 64)) != 0
}

pub(super) fn set_bit(words: &mut [u64], j: usize) {
    words[j / 64] |= 1 << (j % 64);
}

/// The positions of the set bits of `words`, the first word being word
/// `first` of its row.
pub(super) fn ones(words: &[u64], first: usize) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(move |(k, &word)| {
        let base = (first + k) * 64;
        let mut rest = word;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let j = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                base + j
            })
        })
    })
}

pub(super) fn or_into(target: &mut [u64], source: &[u64]) {
    for (t, s) in target.iter_mut().zip(source) {
        *t |= s;
    }
}

/// Reachability over a DAG: bit `j` of the row of `i` set when a path
/// leads from `i` to `j`. Only systems with a successor have a row.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    row_of: Vec<usize>,
    rows: Bits,
}

impl Reach {
    /// The transitive closure of `successors`, given a topological `order`
    /// of its `n` nodes.
    pub(super) fn new(n: usize, order: &[usize], successors: &[Vec<usize>]) -> Reach {
        let mut row_of = vec![usize::MAX; n];
        let mut rows = 0;
        for (u, successors) in successors.iter().enumerate() {
            if !successors.is_empty() {
                row_of[u] = rows;
                rows += 1;
            }
        }
        let mut reach = Reach {
            row_of,
            rows: Bits::new(rows, n),
        };
        let mut row = vec![0; reach.rows.words];
        for &u in order.iter().rev() {
            if successors[u].is_empty() {
                continue;
            }
            row.fill(0);
            for &v in &successors[u] {
                set_bit(&mut row, v);
                if let Some(below) = reach.row(v) {
                    or_into(&mut row, below);
                }
            }
            let r = reach.row_of[u];
            reach.rows.row_mut(r).copy_from_slice(&row);
        }
        reach
    }

    pub(super) fn row(&self, i: usize) -> Option<&[u64]> {
        let r = self.row_of[i];
        (r != usize::MAX).then(|| self.rows.row(r))
    }

    /// `true` when a path leads from `from` to `to`.
    pub(crate) fn get(&self, from: usize, to: usize) -> bool {
        self.row(from).is_some_and(|row| bit(row, to))
    }

    /// `true` when a path joins `a` and `b`, either way.
    pub(super) fn ordered(&self, a: usize, b: usize) -> bool {
        self.get(a, b) || self.get(b, a)
    }
}

/// Kahn's algorithm, level by level, over `n` nodes whose successors
/// `successors(u, out)` pushes (a node once per edge). `Err` holds the
/// nodes left on or behind a cycle.
pub(super) fn levels(
    n: usize,
    mut successors: impl FnMut(usize, &mut Vec<usize>),
) -> Result<Vec<Vec<usize>>, Vec<usize>> {
    let mut out = Vec::new();
    let mut in_degree = vec![0usize; n];
    for u in 0..n {
        out.clear();
        successors(u, &mut out);
        for &v in &out {
            in_degree[v] += 1;
        }
    }
    let mut wave: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
    let mut waves = Vec::new();
    let mut placed = 0;
    while !wave.is_empty() {
        placed += wave.len();
        let mut next = Vec::new();
        for &u in &wave {
            out.clear();
            successors(u, &mut out);
            for &v in &out {
                in_degree[v] -= 1;
                if in_degree[v] == 0 {
                    next.push(v);
                }
            }
        }
        next.sort_unstable();
        waves.push(std::mem::replace(&mut wave, next));
    }
    if placed == n {
        Ok(waves)
    } else {
        Err((0..n).filter(|&i| in_degree[i] > 0).collect())
    }
}

/// Successor lists of `edges` over `n` nodes.
pub(super) fn successor_lists(
    n: usize,
    edges: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); n];
    for (from, to) in edges {
        successors[from].push(to);
    }
    successors
}
