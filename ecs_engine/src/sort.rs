//! Bringing pools into one order: [`Registry::sort_pools`].
//!
//! A view joins its pools by position, with no lookup, where they hold the
//! driving pool's entities as one run (see `query/traits.rs`); pools filled in
//! different orders (archetypes spawned interleaved, components added and
//! removed over time) fall back to one sparse lookup per entity and pool.
//! Sorting every pool by one key puts the entities that share pools in the
//! same relative order everywhere, and groups them: the key is the
//! entity's *signature* (the set of pools holding it), then its index.
//!
//! Signatures are ordered as a reflected binary Gray code (by the inverse
//! Gray code of the signature's bit mask, bit `p` for the pool of
//! [`ComponentId`](crate::ComponentId) `p`), so signatures next to each
//! other differ in one pool: in a pool `C` joined with `D` in one system
//! and with `E` in another, the order `C`, `C+D`, `C+D+E`, `C+E` keeps
//! both joins contiguous, where plain binary order would split one. (The
//! same idea as EnTT's nested groups, computed instead of declared.)
//!
//! Sorting applies a permutation in place, by cycles of swaps, so a
//! component is never cloned, dropped or left half-moved; each pool's
//! sparse index is rebuilt and its change log restarted (a reorder is a
//! structural change: views' cached runs are checked again on their next
//! pass).

use crate::Registry;

/// Puts the values of a dense array into the order `order` names: after
/// the call, position `i` holds what position `order[i]` held, moved by
/// `swap(a, b)` calls. `order` must be a permutation of `0..order.len()`;
/// it is left as the identity.
pub(crate) fn apply_order(order: &mut [u32], mut swap: impl FnMut(usize, usize)) {
    for i in 0..order.len() {
        // Walk the cycle through `i`: each step puts one value in place
        // and marks its position done (`order[j] == j`).
        let mut j = i;
        loop {
            let k = order[j] as usize;
            order[j] = j as u32;
            if k == i {
                break;
            }
            swap(j, k);
            j = k;
        }
    }
}

/// The rank of a signature's bit mask in reflected binary Gray code order
/// (the inverse Gray code: the prefix XOR of its bits from the top).
#[inline]
fn gray_rank(mask: u64) -> u64 {
    let mut rank = mask;
    let mut shift = 1;
    while shift < 64 {
        rank ^= rank >> shift;
        shift <<= 1;
    }
    rank
}

impl Registry {
    /// Sorts every component pool into one order: by the entity's
    /// signature (which pools hold it, in Gray code order), then by entity
    /// index. After it, pools that share entities hold them in the same
    /// relative order and, for each archetype, as one run, so views join
    /// them by position, as if each archetype had been spawned as one
    /// batch. Deterministic: the order depends only on which entities each
    /// pool holds and on the component ids.
    ///
    /// Costs about one sort of each pool that is out of order
    /// (O(n log n)) plus one pass over all pools; a pool already in order
    /// is left untouched, so calling it again on an unchanged world only
    /// checks. A pool that was reordered counts as structurally changed:
    /// views check its runs again on their next pass (once). Values are
    /// moved, never cloned or dropped; handles stay valid.
    ///
    /// Worth calling between ticks when entities of several archetypes
    /// were spawned interleaved or components were added and removed
    /// one by one: see `BENCHMARKS.md` (the interleaved `schedule` world).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// for i in 0..4u32 {
    ///     registry.spawn((i, 1.0f32)); // archetypes spawned interleaved
    ///     registry.spawn((i, 'x'));
    /// }
    /// registry.sort_pools();
    /// let ids = registry.pool::<u32>().unwrap().entities();
    /// let floats = registry.pool::<f32>().unwrap().entities();
    /// let chars = registry.pool::<char>().unwrap().entities();
    /// // Each archetype is now one run of the `u32` pool, in the order of
    /// // the other pool.
    /// assert!(ids.windows(4).any(|run| run == floats));
    /// assert!(ids.windows(4).any(|run| run == chars));
    /// ```
    pub fn sort_pools(&mut self) {
        let pools = self.pools.len();
        if pools == 0 {
            return;
        }
        let words = pools.div_ceil(64);
        let Some(max_index) = self
            .pools
            .erased_mut()
            .flat_map(|pool| pool.entities().iter().map(|e| e.index()))
            .max()
        else {
            return;
        };
        // Each entity's signature, `words` words per entity index, then
        // turned into Gray code ranks word by word.
        let mut ranks = vec![0u64; (max_index as usize + 1) * words];
        for (p, pool) in self.pools.erased_mut().enumerate() {
            let (word, bit) = (p / 64, 1u64 << (p % 64));
            for entity in pool.entities() {
                ranks[entity.index() as usize * words + word] |= bit;
            }
        }
        for rank in &mut ranks {
            *rank = gray_rank(*rank);
        }
        let mut order = Vec::new();
        if words == 1 {
            // Up to 64 pools (the usual case): every entity's place in the
            // one global order is found by one sort of the entities, then
            // each pool sorts its own by that place, a `u64` with the
            // dense position beside it.
            let key = |index: u32| (ranks[index as usize], index);
            if self
                .pools
                .erased_mut()
                .all(|pool| pool.entities().is_sorted_by_key(|e| key(e.index())))
            {
                return;
            }
            let mut everyone: Vec<u32> = (0..=max_index)
                .filter(|&index| ranks[index as usize] != gray_rank(0))
                .collect();
            everyone.sort_unstable_by_key(|&index| key(index));
            let mut place = vec![0u32; max_index as usize + 1];
            for (at, &index) in everyone.iter().enumerate() {
                place[index as usize] = at as u32;
            }
            let mut keyed: Vec<u64> = Vec::new();
            for pool in self.pools.erased_mut() {
                let entities = pool.entities();
                if entities.is_sorted_by_key(|e| place[e.index() as usize]) {
                    continue;
                }
                keyed.clear();
                keyed.extend(
                    entities
                        .iter()
                        .zip(0u32..)
                        .map(|(e, i)| u64::from(place[e.index() as usize]) << 32 | u64::from(i)),
                );
                keyed.sort_unstable();
                order.clear();
                order.extend(keyed.iter().map(|&key| key as u32));
                pool.apply_order(&mut order);
            }
            return;
        }
        let key = |index: u32| {
            let at = index as usize * words;
            (&ranks[at..at + words], index)
        };
        for pool in self.pools.erased_mut() {
            let entities = pool.entities();
            if entities.is_sorted_by_key(|e| key(e.index())) {
                continue;
            }
            order.clear();
            order.extend(0..entities.len() as u32);
            order.sort_unstable_by_key(|&i| key(entities[i as usize].index()));
            pool.apply_order(&mut order);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_order_moves_each_value_once() {
        let order_of = [
            vec![],
            vec![0],
            vec![2, 0, 1],
            vec![3, 2, 1, 0, 4],
            vec![1, 0, 3, 4, 2],
        ];
        for order in order_of {
            let mut values: Vec<u32> = (0..order.len() as u32).map(|v| v * 10).collect();
            let expected: Vec<u32> = order.iter().map(|&i| values[i as usize]).collect();
            let mut order = order;
            apply_order(&mut order, |a, b| values.swap(a, b));
            assert_eq!(values, expected);
            assert!(order.iter().enumerate().all(|(i, &o)| o as usize == i));
        }
    }

    #[test]
    fn gray_rank_orders_neighbours_one_bit_apart() {
        let mut masks: Vec<u64> = (0..16).collect();
        masks.sort_by_key(|&m| gray_rank(m));
        for pair in masks.windows(2) {
            assert_eq!((pair[0] ^ pair[1]).count_ones(), 1, "{pair:?}");
        }
    }
}
