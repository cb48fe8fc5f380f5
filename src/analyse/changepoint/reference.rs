//! The literal batch port of Otava's split pass, as it was before the
//! incremental one replaced it: every window's distance matrices built in
//! full and every interval's Q̂ recomputed on every split. Kept only to
//! test that the incremental computation gives the same candidates, Q̂
//! values and weak change points, bit for bit.

use super::{Found, Interval, intervals, test_split};

/// Otava's `PairDistanceCalculator` over one window: pairwise distances
/// |zᵢ − zⱼ| and the prefix sums V and H from which every Q̂(τ, κ) follows.
pub(super) struct Calculator<'a> {
    z: &'a [f64],
    /// `V[b]` = Σ_{a ≤ b} |z_a − z_{b+1}|.
    v: Vec<f64>,
    /// `H[a][b]` = Σ_{c = a..=b} |z_a − z_{c+1}| (0 below the diagonal),
    /// row-major, (n−1)².
    h: Vec<f64>,
}

impl<'a> Calculator<'a> {
    pub(super) fn new(z: &'a [f64]) -> Self {
        let n = z.len();
        let m = n.saturating_sub(1);
        // triu(D, k=1)[:-1, 1:]: T[a][b] = |z_a − z_{b+1}| for a ≤ b.
        let t = |a: usize, b: usize| if a <= b { (z[a] - z[b + 1]).abs() } else { 0.0 };
        let mut v = vec![0.0; m];
        for (b, vb) in v.iter_mut().enumerate() {
            // numpy sums axis 0 row by row, zeros included.
            let mut acc = t(0, b);
            for a in 1..m {
                acc += t(a, b);
            }
            *vb = acc;
        }
        let mut h = vec![0.0; m * m];
        for a in 0..m {
            let mut acc = 0.0;
            for b in 0..m {
                acc = if b == 0 { t(a, 0) } else { acc + t(a, b) };
                h[a * m + b] = acc;
            }
        }
        Calculator { z, v, h }
    }

    fn dist(&self, i: usize, j: usize) -> f64 {
        (self.z[i] - self.z[j]).abs()
    }

    /// Otava's `get_candidate_change_point` for `z[start..stop]`: the τ of
    /// the first arg-max of Q̂ and the maximum.
    pub(super) fn candidate(&self, start: usize, stop: usize) -> (usize, f64) {
        debug_assert!(stop - start > 1);
        let width = self.z.len() - 1;
        let m = stop - 1 - start;
        // V restricted to points from `start` on.
        let vs: Vec<f64> = (0..m)
            .map(|k| {
                let col = start + 1 + k;
                let mut sub = 0.0;
                for a in 0..start {
                    sub = if a == 0 {
                        self.dist(0, col)
                    } else {
                        sub + self.dist(a, col)
                    };
                }
                self.v[start + k] - sub
            })
            .collect();
        let hs = |i: usize, j: usize| self.h[(start + i) * width + start + j];
        let mut cum_v = vec![0.0; m];
        let mut acc = 0.0;
        for k in 0..m {
            acc = if k == 0 { vs[0] } else { acc + vs[k] };
            cum_v[k] = acc;
        }
        // cumsum(H, axis=0)
        let mut cum_h = vec![0.0; m * m];
        for j in 0..m {
            let mut acc = 0.0;
            for i in 0..m {
                acc = if i == 0 { hs(0, j) } else { acc + hs(i, j) };
                cum_h[i * m + j] = acc;
            }
        }
        // flipud(cumsum(flipud(H[1:, 1:]), axis=0)): R[r][c] = Σ_{r' ≥ r} H[r'+1][c+1]
        let g = m.saturating_sub(1);
        let mut rev_h = vec![0.0; g * g];
        for c in 0..g {
            let mut acc = 0.0;
            for r in (0..g).rev() {
                acc = if r == g - 1 {
                    hs(r + 1, c + 1)
                } else {
                    acc + hs(r + 1, c + 1)
                };
                rev_h[r * g + c] = acc;
            }
        }
        let mut best = (0usize, 0usize);
        let mut best_q = f64::NEG_INFINITY;
        for i in 0..m {
            for j in 0..m {
                // A = 2/(κ−s) · triu(cumsum(H) − shifted cumsum(V))
                let a_coef = 2.0 / (j + 2) as f64;
                let a = if j >= i {
                    let within_left = if i >= 1 { cum_v[i - 1] } else { 0.0 };
                    a_coef * (cum_h[i * m + j] - within_left)
                } else {
                    0.0
                };
                // B = 2(κ−τ) / ((κ−s)(τ−s−1)) · Σ V
                let b = if i >= 1 && j >= 1 {
                    let den = (j + 2) * i;
                    let coef = if j >= i && den != 0 {
                        (2 * (j + 1 - i)) as f64 / den as f64
                    } else {
                        0.0
                    };
                    coef * cum_v[i - 1]
                } else {
                    0.0
                };
                // C = 2(τ−s) / ((κ−s)(κ−τ−1)) · Σ H over the right segment
                let c = if i + 1 < m && j >= 1 {
                    let coef = if j > i {
                        let den = (j + 2) * (j - i);
                        (2 * (i + 1)) as f64 / den as f64
                    } else {
                        0.0
                    };
                    coef * rev_h[i * g + (j - 1)]
                } else {
                    0.0
                };
                let q = a - b - c;
                if q > best_q {
                    best_q = q;
                    best = (i, j);
                }
            }
        }
        (best.0 + 1 + start, best_q)
    }

    /// Otava's `get_next_candidate`: the best candidate over all intervals
    /// longer than one point; the first wins a tie.
    fn next_candidate(&self, intervals: &[Interval]) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for &(start, stop) in intervals {
            if stop - start > 1 {
                let cand = self.candidate(start, stop);
                // Replace only on a strictly greater Q̂, as Python's `max` does.
                if best.is_none_or(|(_, q)| cand.1 > q) {
                    best = Some(cand);
                }
            }
        }
        best
    }
}

/// Otava's `ChangePointDetector.get_change_points` on `series[start..end]`
/// with a t-test at `max_pvalue`: E-divisive splitting until the best
/// candidate is not significant. Indexes are global.
fn detect_in_window(series: &[f64], start: usize, end: usize, max_pvalue: f64) -> Vec<Found> {
    let z = &series[start..end];
    let calc = Calculator::new(z);
    let mut found: Vec<Found> = Vec::new();
    loop {
        let cps: Vec<usize> = found.iter().map(|f| f.index).collect();
        let ivs = intervals(&cps, z.len());
        let Some((index, _qhat)) = calc.next_candidate(&ivs) else {
            break;
        };
        let stats = test_split(index, z, &ivs);
        // `p <= alpha`; a NaN p is never significant.
        if stats.pvalue <= max_pvalue {
            found.push(Found { index, stats });
            found.sort_by_key(|f| f.index);
        } else {
            break;
        }
    }
    for f in &mut found {
        f.index += start;
    }
    found
}

/// Otava's `split`: sliding windows, union of the change points found,
/// each re-tested between its neighbours on the whole series.
pub(super) fn split(series: &[f64], window_len: usize, max_pvalue: f64) -> Vec<Found> {
    let step = window_len / 2;
    let mut start = 0;
    let mut found: Vec<Found> = Vec::new();
    while start < series.len() {
        let end = (start + window_len).min(series.len());
        let new = detect_in_window(series, start, end, max_pvalue);
        let last = new.last().map_or(0, |f| f.index);
        start = last.max(start + step);
        for cp in new {
            if !found.iter().any(|f| f.index == cp.index) {
                found.push(cp);
            }
        }
    }
    found.sort_by_key(|f| f.index);
    let cps: Vec<usize> = found.iter().map(|f| f.index).collect();
    let ivs = intervals(&cps, series.len());
    found
        .iter()
        .map(|f| Found {
            index: f.index,
            stats: test_split(f.index, series, &ivs),
        })
        .collect()
}
