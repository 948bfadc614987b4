//! The first iteration's tests from the prediction's ranking: the best configurations that
//! are not near twins of a better one, since two configurations closer than the smallest move
//! a campaign makes measure the same thing twice.

/// How many ranked candidates per wanted test the first iteration may look through.
pub(super) const TWIN_CANDIDATES: usize = 8;

/// The first `wanted` candidates, in rank order, that differ from every one kept before by at
/// least `minimum_step` PEs in some component: two configurations closer than the smallest
/// move the campaign makes measure the same thing twice (OpenIFS 191x4 beside 190x4), so the
/// next distinct one is worth its runs more. Each keeps its rank as `prediction #k`.
pub(super) fn distinct_tests<'a>(
    ranked: impl IntoIterator<Item = &'a [u32]>,
    wanted: usize,
    minimum_step: u32,
) -> Vec<(Vec<u32>, String)> {
    let mut kept: Vec<(Vec<u32>, String)> = Vec::new();
    for (k, nproc) in ranked.into_iter().enumerate() {
        if kept.len() == wanted {
            break;
        }
        let twin = kept.iter().any(|(other, _)| {
            other
                .iter()
                .zip(nproc)
                .all(|(a, b)| a.abs_diff(*b) < minimum_step)
        });
        if !twin {
            kept.push((nproc.to_vec(), format!("prediction #{}", k + 1)));
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_twins_give_way_to_the_next_distinct_candidate() {
        let ranked: Vec<Vec<u32>> = vec![
            vec![764, 259],
            vec![760, 259], // one 4-thread rank away from #1
            vec![764, 263],
            vec![828, 194],
            vec![700, 300],
        ];
        let kept = distinct_tests(ranked.iter().map(Vec::as_slice), 3, 16);
        let names: Vec<&str> = kept.iter().map(|(_, o)| o.as_str()).collect();
        assert_eq!(names, ["prediction #1", "prediction #4", "prediction #5"]);
        assert_eq!(kept[1].0, [828, 194]);
        // A minimum step of 1 keeps every distinct configuration, in rank order.
        let kept = distinct_tests(ranked.iter().map(Vec::as_slice), 3, 1);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[1].1, "prediction #2");
        // Fewer candidates than wanted: as many as there are.
        assert_eq!(
            distinct_tests(ranked.iter().map(Vec::as_slice), 9, 16).len(),
            3
        );
    }
}
