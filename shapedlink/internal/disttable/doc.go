// Package disttable computes the delay-distribution tables that Linux's
// netem qdisc takes and that shapedlink's userspace emulator uses in the
// same way.
//
// # What a table is
//
// A table is 4096 signed 16-bit entries, as netem receives it in the
// netlink attribute TCA_NETEM_DELAY_DIST ("delay MU SIGMA distribution
// NAME"). For each frame netem draws a uniform 32-bit rnd, takes
// t = table[rnd % len(table)] and delays the frame by
//
//	mu + sigma*t/Scale, rounded,
//
// with Scale = 8192 (netem's NETEM_DIST_SCALE). 4096 divides 2^32, so every
// entry is equally likely, and the delay delivered has mean
// mu + sigma*mean(t)/Scale and standard deviation sigma*sd(t)/Scale: the
// entries are the quantiles of a standardized distribution (mean 0,
// standard deviation 1) in fixed point, one for each of 4096 equal slices
// of probability.
//
// # The definition
//
// For each distribution Q is the inverse CDF of the standardized
// distribution, and
//
//	table[i] = clamp(round(Scale * Q((i+0.5)/4096)))
//
// with round to the nearest integer and clamp to the int16 range
// [-32768, 32767]: each entry is the quantile at the middle of its slice.
// The distributions:
//
//   - "normal": the standard normal, Q(u) = sqrt(2) * erfinv(2u-1).
//   - "pareto": the Pareto distribution of shape alpha = 3 and scale
//     x_m = 1 (CDF 1 - y^-3 for y >= 1; mean 3/2, standard deviation
//     sqrt(3)/2), standardized: Q(u) = ((1-u)^(-1/3) - 3/2) / (sqrt(3)/2).
//     It is bounded below by -1/sqrt(3) and has a long right tail.
//   - "paretonormal": X = (P + 3N) / sqrt(10), with P the standardized
//     Pareto variable above and N an independent standard normal, so X has
//     mean 0 and standard deviation 1 and is mostly normal with a Pareto
//     right tail.
//
// The paretonormal CDF,
//
//	F(x) = integral of phi(n) * F_P(sqrt(10)*x - 3n) dn
//
// (phi the normal density, F_P the standardized Pareto CDF), has no closed
// form. It is computed by Simpson's rule over n in [-9, 9] with step 0.01,
// the integration starting at the kink where F_P leaves 0, to better than
// 1e-7, and its Q inverts it by bisection. The table's entries are
// found on the integer grid directly (the k with
// F((k-0.5)/Scale) <= u < F((k+0.5)/Scale)), which is round(Scale*Q(u))
// without computing Q to full precision. Everything is deterministic;
// nothing is sampled.
//
// # Clamping, and what the tables deliver
//
// An int16 entry reaches only 32767/8192, just under 4 standard deviations,
// so quantiles beyond +-4 sigma are clamped. The normal table is not
// clamped at all (its extreme entries are +-30051, +-3.668 sigma), but the
// right tails of the other two are, and both clamping and the 4096-point
// discretization cut the tails. What a table really delivers, in units of
// sigma (the mean and the standard deviation of its entries over Scale):
//
//	table         clamped entries   mean      sd
//	normal        none              0.0000    0.9998
//	pareto        top 33 (0.8%)    -0.0234    0.7372
//	paretonormal  top 3            -0.0014    0.9887
//
// So "delay 100ms 10ms distribution pareto" has a mean of about 99.77 ms
// and a standard deviation of about 7.4 ms, not 100 ms and 10 ms. Without
// the clamp the pareto midpoint quantiles would have mean -0.0011 and
// standard deviation 0.9403: even unclamped, 4096 points cannot carry the
// Pareto tail's variance.
//
// The tables are computed on first use (the paretonormal table takes a few
// tens of milliseconds) and Table hands out copies.
package disttable
