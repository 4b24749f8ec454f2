//! The fallback order: the literal pairwise rule, row by row, with
//! reachability in bit sets (used when the rule's own chains with the
//! explicit edges close a cycle).

use ecs_engine::Access;

use super::bits::{Bits, Reach, bit, levels, ones, or_into, set_bit, successor_lists};
use super::chains::Subjects;
use super::reason::Policy;
use crate::access::SubjectKind;

/// The pairwise rule run literally, for when chaining in the rule's order
/// closes a cycle: for each system `i` in registration order, its
/// conflicting pairs `(i, j)`, `j > i`, in order of `j`. Returns a
/// topological order of the resulting DAG.
///
/// Reachability is kept in bit rows (`desc`, `anc`), exact for the systems
/// after `i` only: a system's row is read only while its pairs are still to
/// come. Within row `i`, every new edge touches `i`, so only `i`'s own
/// ancestors (`a`) and descendants (`d`) change; after the row, every
/// later ancestor of `i` reaches every later descendant. An edge is
/// recorded (`out`) only where it adds a path.
pub(super) fn pairwise_order(
    n: usize,
    subjects: &Subjects,
    down: &Reach,
    explicit_order: &[usize],
    explicit_edges: &[(usize, usize)],
    policy: Policy,
) -> Vec<usize> {
    let mut desc = Bits::new(n, n);
    let mut anc = Bits::new(n, n);
    let words = desc.words;
    let reversed: Vec<usize> = explicit_order.iter().rev().copied().collect();
    let up = Reach::new(
        n,
        &reversed,
        &successor_lists(n, explicit_edges.iter().map(|&(from, to)| (to, from))),
    );
    let mut desc_any = vec![false; n];
    let mut anc_any = vec![false; n];
    for x in 0..n {
        if let Some(row) = down.row(x) {
            desc.row_mut(x).copy_from_slice(row);
            desc_any[x] = true;
        }
        if let Some(row) = up.row(x) {
            anc.row_mut(x).copy_from_slice(row);
            anc_any[x] = true;
        }
    }
    let mut writers = Bits::new(subjects.list.len(), n);
    let mut readers = Bits::new(subjects.list.len(), n);
    for (s, (_, accessors)) in subjects.list.iter().enumerate() {
        for &(i, access) in accessors {
            let row = if access == Access::Write {
                writers.row_mut(s)
            } else {
                readers.row_mut(s)
            };
            set_bit(row, i);
        }
    }
    let mut out = Bits::new(n, n);
    let (mut candidates, mut forward) = (vec![0u64; words], vec![0u64; words]);
    let (mut a, mut d) = (vec![0u64; words], vec![0u64; words]);
    let (mut a_old, mut d_old) = (vec![0u64; words], vec![0u64; words]);
    let (mut a_new, mut d_new) = (vec![0u64; words], vec![0u64; words]);
    for i in 0..n {
        // Only bits after `i` are read: from word `lo`, the first masked.
        let lo = (i + 1) / 64;
        if lo == words {
            break;
        }
        let first_mask = !0u64 << ((i + 1) % 64);
        candidates[lo..].fill(0);
        forward[lo..].fill(0);
        for &(s, access) in &subjects.of_system[i] {
            let kind = subjects.list[s].0;
            // Which accessors conflict with `i`, and whether the rule runs
            // `i` (the earlier) first.
            let (with_writers, with_readers, runs_forward) = match (kind, access) {
                (SubjectKind::Event, Access::Write) => (false, true, true),
                (SubjectKind::Event, Access::Read) => (true, false, false),
                (_, Access::Write) => (true, true, true),
                (SubjectKind::Registry, Access::Read) => (true, false, true),
                (_, Access::Read) => (true, false, policy == Policy::RegistrationOrder),
            };
            let (w, r) = (writers.row(s), readers.row(s));
            // The later systems whose queries are disjoint from `i`'s on
            // this subject do not conflict with it here.
            let apart = |k: usize| {
                subjects.disjoint[s]
                    .iter()
                    .filter(|&&(a, b)| a == i && b / 64 == k)
                    .fold(0u64, |bits, &(_, b)| bits | 1 << (b % 64))
            };
            for k in lo..words {
                let v = if with_writers { w[k] } else { 0 } | if with_readers { r[k] } else { 0 };
                let v = if subjects.disjoint[s].is_empty() {
                    v
                } else {
                    v & !apart(k)
                };
                candidates[k] |= v;
                if runs_forward {
                    forward[k] |= v;
                }
            }
        }
        candidates[lo] &= first_mask;
        a[lo..].copy_from_slice(&anc.row(i)[lo..]);
        d[lo..].copy_from_slice(&desc.row(i)[lo..]);
        for j in ones(&candidates[lo..], lo) {
            // Ordered already (the user's constraints included): the rule
            // adds no edge, or one that adds no path.
            if bit(&a, j) || bit(&d, j) {
                continue;
            }
            if bit(&forward, j) {
                set_bit(out.row_mut(i), j);
                set_bit(&mut d, j);
                if desc_any[j] {
                    or_into(&mut d[lo..], &desc.row(j)[lo..]);
                }
            } else {
                set_bit(out.row_mut(j), i);
                set_bit(&mut a, j);
                if anc_any[j] {
                    or_into(&mut a[lo..], &anc.row(j)[lo..]);
                }
            }
        }
        a[lo] &= first_mask;
        d[lo] &= first_mask;
        // Every later ancestor of `i` now reaches every later descendant.
        // Ancestors from before the row already reach the descendants from
        // before it (and the other way round): only the new ones spread.
        for k in lo..words {
            let (a0, d0) = (anc.row(i)[k], desc.row(i)[k]);
            let mask = if k == lo { first_mask } else { !0 };
            a_old[k] = a0 & mask;
            d_old[k] = d0 & mask;
            a_new[k] = a[k] & !a0;
            d_new[k] = d[k] & !d0;
        }
        spread(&mut desc, &mut desc_any, &a_old[lo..], &d_new[lo..], lo);
        spread(&mut desc, &mut desc_any, &a_new[lo..], &d[lo..], lo);
        spread(&mut anc, &mut anc_any, &d_old[lo..], &a_new[lo..], lo);
        spread(&mut anc, &mut anc_any, &d_new[lo..], &a[lo..], lo);
    }
    let explicit = successor_lists(n, explicit_edges.iter().copied());
    levels(n, |u, successors| {
        successors.extend(ones(out.row(u), 0));
        successors.extend_from_slice(&explicit[u]);
    })
    .expect("the pairwise rule closes no cycle")
    .concat()
}

/// ORs `bits` (words from word `first` of a row) into the row of every
/// node in `targets` (the same words), marking those rows non-empty.
pub(super) fn spread(
    rows: &mut Bits,
    any: &mut [bool],
    targets: &[u64],
    bits: &[u64],
    first: usize,
) {
    let words: Vec<(usize, u64)> = (first..)
        .zip(bits)
        .filter(|&(_, &v)| v != 0)
        .map(|(k, &v)| (k, v))
        .collect();
    if words.is_empty() {
        return;
    }
    for x in ones(targets, first) {
        let row = rows.row_mut(x);
        for &(k, v) in &words {
            row[k] |= v;
        }
        any[x] = true;
    }
}
