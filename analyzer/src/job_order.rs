//! The order the replay's jobs are taken in, when they cost unlike amounts
//! per instruction (several widths: a warp of 64 converged lanes, a warp of
//! 2 that counts its lanes alone too): the heavy ones first, so that the
//! cores finish together, and the rest mixed, so that the progress bar's
//! rate early on is the rate of the whole.

use std::collections::BTreeMap;

/// The order the cores take `items` in (each core a part of the order,
/// an idle one taking from another's): the items heavier than a quarter of
/// a core's share of the whole `weight` first, heaviest first (a core that
/// took one late would finish long after the others), then the rest
/// [`interleaved`] by `class`.
///
/// ```text
/// weights [1, 1, 10, 1, 1, 6] on 2 cores: share 10, heavy from 2.5
///     -> [10, 6, then the ones interleaved by class]
/// ```
pub(crate) fn queued<T, C: Ord>(
    items: Vec<T>,
    cores: usize,
    class: impl Fn(&T) -> C,
    weight: impl Fn(&T) -> u64,
) -> Vec<T> {
    let total: u128 = items.iter().map(|t| u128::from(weight(t))).sum();
    let quarter_share = |t: &T| 4 * cores as u128 * u128::from(weight(t)) > total;
    let (mut heavy, light): (Vec<T>, Vec<T>) = items.into_iter().partition(quarter_share);
    heavy.sort_by_key(|t| std::cmp::Reverse(weight(t)));
    heavy.extend(interleaved(light, class, weight));
    heavy
}

/// `items` in an order that spreads each class (by `class`) evenly by
/// `weight`: an item goes where the middle of its weight falls in its
/// class's total, so every stretch of the order holds each class in about
/// its share of the whole.
///
/// On nbody 2048 in `tf report`'s sweep, a warp of 64 converged lanes costs
/// about 5 ns per thread instruction, the observed warps of 32 about 8 ns,
/// a warp of 2 that counts its lanes alone too about 11 ns. In their list's
/// order, or taken from both ends of it, the work done a tenth of the way
/// through held too little of the dear ones, and the progress bar's ETA
/// then erred by -17 to -28%.
///
/// ```text
/// classes [a, a, a, a, b, b] by 1 each -> [a, b, a, a, b, a]
/// ```
pub(crate) fn interleaved<T, C: Ord>(
    items: Vec<T>,
    class: impl Fn(&T) -> C,
    weight: impl Fn(&T) -> u64,
) -> Vec<T> {
    // Weights one more than given, so that no class weighs nothing.
    let weight = |t: &T| u128::from(weight(t)) + 1;
    let mut totals: BTreeMap<C, u128> = BTreeMap::new();
    for item in &items {
        *totals.entry(class(item)).or_default() += weight(item);
    }
    let mut before: BTreeMap<C, u128> = BTreeMap::new();
    // (where the item's middle falls in its class, as a fraction, twice over)
    let mut placed: Vec<((u128, u128), T)> = items
        .into_iter()
        .map(|item| {
            let c = class(&item);
            let total = totals[&c];
            let given = before.entry(c).or_default();
            let middle = 2 * *given + weight(&item);
            *given += weight(&item);
            ((middle, 2 * total), item)
        })
        .collect();
    // a/b before c/d when a*d < c*b; a stable sort keeps a tie's order
    placed.sort_by(|((a, b), _), ((c, d), _)| (a * d).cmp(&(c * b)));
    placed.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Item = (char, u64);
    fn class(&(c, _): &Item) -> char {
        c
    }
    fn by_value(&(_, w): &Item) -> u64 {
        w
    }
    fn names(items: Vec<Item>) -> Vec<String> {
        items.iter().map(|&(c, w)| format!("{c}{w}")).collect()
    }

    #[test]
    fn classes_are_interleaved_by_weight() {
        let items = vec![('a', 1), ('a', 2), ('a', 3), ('a', 4), ('b', 1), ('b', 2)];
        // a's middles at 1/8, 3/8, 5/8, 7/8; b's at 1/4, 3/4
        let by_one = interleaved(items.clone(), class, |_| 1);
        assert_eq!(names(by_one), ["a1", "b1", "a2", "a3", "b2", "a4"]);
        // By weight (one more than given): a's total 14, middles 2/28,
        // 7/28, 14/28, 23/28; b's total 5, middles 2/10, 7/10.
        let by_weight = interleaved(items, class, by_value);
        assert_eq!(names(by_weight), ["a1", "b1", "a2", "a3", "b2", "a4"]);
        // One heavy item of a class takes the middle of the order.
        let heavy = vec![('w', 96), ('n', 3), ('n', 3), ('n', 3), ('n', 3)];
        let order = interleaved(heavy, class, by_value);
        assert_eq!(names(order), ["n3", "n3", "w96", "n3", "n3"]);
        assert!(interleaved(Vec::<Item>::new(), class, by_value).is_empty());
    }

    #[test]
    fn items_heavier_than_a_quarter_of_a_share_go_first() {
        // total 20 on 2 cores: a share is 10, a quarter of it 2.5
        let items = vec![('a', 1), ('a', 1), ('b', 10), ('a', 1), ('a', 1), ('c', 6)];
        let order = queued(items.clone(), 2, class, by_value);
        assert_eq!(names(order), ["b10", "c6", "a1", "a1", "a1", "a1"]);
        // On one core the share is 20, a quarter 5: b and c still go first.
        let one = queued(items.clone(), 1, class, by_value);
        assert_eq!(names(one), ["b10", "c6", "a1", "a1", "a1", "a1"]);
        // On 8 cores a quarter of a share is 0.625: all are heavy.
        let eight = queued(items, 8, class, by_value);
        assert_eq!(names(eight), ["b10", "c6", "a1", "a1", "a1", "a1"]);
        let light = vec![('a', 1), ('a', 1), ('b', 1), ('b', 1)];
        assert_eq!(
            names(queued(light, 1, class, by_value)),
            ["a1", "b1", "a1", "b1"]
        );
    }
}
