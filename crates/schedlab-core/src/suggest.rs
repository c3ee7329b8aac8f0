//! "Did you mean": the closest known name to a misspelt one.
//!
//! Names are compared without case and with `-` and `_` taken as equal, by
//! edit distance (insert, delete, substitute, swap two neighbours); a name
//! within a third of its length (at least 1, at most 3 edits) is offered.

/// The known name closest to `wrong`, if one is close enough.
pub fn closest<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = norm(wrong);
    let limit = (w.chars().count() / 3).clamp(1, 3);
    known
        .into_iter()
        .map(|k| (distance(&w, &norm(k)), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// `" (did you mean NAME?)"` or nothing, to append to a message.
pub fn hint<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(wrong, known).map_or(String::new(), |k| format!(" (did you mean {k}?)"))
}

fn norm(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_names_find_their_match() {
        let features = ["SCHED_IDLE_AS_IDLE", "SIS_UTIL", "STEAL", "RUN_TO_PARITY"];
        // A swap of two letters.
        assert_eq!(
            closest("SCHED_IDEL_AS_IDLE", features),
            Some("SCHED_IDLE_AS_IDLE")
        );
        // Case and '-' for '_'.
        assert_eq!(closest("run-to-parity", features), Some("RUN_TO_PARITY"));
        let presets = ["a7-octa", "vm-2cpu", "icx-2s-80c-ht"];
        assert_eq!(closest("a7_octa", presets), Some("a7-octa"));
        assert_eq!(closest("vm-2cpus", presets), Some("vm-2cpu"));
        // Nothing close: no guess.
        assert_eq!(closest("BOGUS", features), None);
        assert_eq!(closest("x", presets), None);
        assert_eq!(hint("STEEL", features), " (did you mean STEAL?)");
        assert_eq!(hint("nothing-like-it", features), "");
    }
}
