package main

import (
	"math/bits"
	"sort"
)

// graph is a directed graph whose arcs say "stands above": an arc from a
// to b means a uses b, so a belongs on a higher floor than b. w[a][b] is
// the arc's weight (how many references it stands for).
type graph struct {
	n int
	w []map[int]int
}

func newGraph(n int) *graph {
	g := &graph{n: n, w: make([]map[int]int, n)}
	for i := range g.w {
		g.w[i] = map[int]int{}
	}
	return g
}

func (g *graph) add(a, b, weight int) {
	if a != b {
		g.w[a][b] += weight
	}
}

// arcs is the number of arcs (pairs of nodes, weights aside).
func (g *graph) arcs() int {
	n := 0
	for _, m := range g.w {
		n += len(m)
	}
	return n
}

// layering is the result of putting a graph's nodes on floors.
type layering struct {
	Floor []int    // each node's floor, 1 for a node that stands above nothing
	Up    [][2]int // arcs running back up: a uses b, b is not below a
	// UpWeight is the summed weight of Up.
	UpWeight int
}

// exactLimit is the largest strongly connected part ordered exactly
// (exactLimitWeighted when arcs have weights other than 1); a larger one
// is ordered by a greedy rule improved by single moves.
const (
	exactLimit         = 23
	exactLimitWeighted = 16
)

// layer orders g's nodes bottom to top so that the weight of the arcs
// running back up is least (exact within strongly connected parts of up
// to exactLimit nodes), then puts each node on the lowest floor above
// everything it uses along the arcs that run down.
func layer(g *graph) layering {
	order := make([]int, 0, g.n)
	for _, comp := range components(g) {
		if len(comp) == 1 {
			order = append(order, comp...)
			continue
		}
		if len(comp) <= exactLimitWeighted || len(comp) <= exactLimit && unitWeights(g, comp) {
			order = append(order, exactOrder(g, comp)...)
		} else {
			order = append(order, improve(g, greedyOrder(g, comp))...)
		}
	}
	pos := make([]int, g.n)
	for i, v := range order {
		pos[v] = i
	}
	l := layering{Floor: make([]int, g.n)}
	for _, a := range order {
		f := 1
		for _, b := range sortedKeys(g.w[a]) {
			if pos[b] < pos[a] {
				f = max(f, l.Floor[b]+1)
			} else {
				l.Up = append(l.Up, [2]int{a, b})
				l.UpWeight += g.w[a][b]
			}
		}
		l.Floor[a] = f
	}
	sort.Slice(l.Up, func(i, j int) bool {
		if l.Up[i][0] != l.Up[j][0] {
			return l.Up[i][0] < l.Up[j][0]
		}
		return l.Up[i][1] < l.Up[j][1]
	})
	return l
}

func sortedKeys(m map[int]int) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// components returns g's strongly connected components, each sorted,
// in an order where a component comes after every component it uses
// (bottom first).
func components(g *graph) [][]int {
	index := make([]int, g.n)
	low := make([]int, g.n)
	on := make([]bool, g.n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var comps [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, u := range sortedKeys(g.w[v]) {
			if index[u] < 0 {
				visit(u)
				low[v] = min(low[v], low[u])
			} else if on[u] {
				low[v] = min(low[v], index[u])
			}
		}
		if low[v] == index[v] {
			var c []int
			for {
				u := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[u] = false
				c = append(c, u)
				if u == v {
					break
				}
			}
			sort.Ints(c)
			comps = append(comps, c)
		}
	}
	for v := 0; v < g.n; v++ {
		if index[v] < 0 {
			visit(v)
		}
	}
	// Tarjan's algorithm completes a component only after every
	// component it reaches, so comps is already bottom first.
	return comps
}

// cost is the weight of the arcs that run back up when the nodes are
// placed bottom to top in order.
func cost(g *graph, order []int) int {
	pos := map[int]int{}
	for i, v := range order {
		pos[v] = i
	}
	c := 0
	for _, a := range order {
		for b, w := range g.w[a] {
			if pb, ok := pos[b]; ok && pb > pos[a] {
				c += w
			}
		}
	}
	return c
}

// exactOrder orders a component of at most exactLimit nodes so that the
// weight running back up is least, by dynamic programming over the sets
// of nodes already placed at the bottom.
func exactOrder(g *graph, comp []int) []int {
	n := len(comp)
	local := map[int]int{}
	for i, v := range comp {
		local[v] = i
	}
	// in[v][u] is the weight of u's use of v: placing v above an
	// already placed u makes it run back up.
	in := make([][]int, n)
	for i := range in {
		in[i] = make([]int, n)
	}
	for i, a := range comp {
		for b, w := range g.w[a] {
			if j, ok := local[b]; ok {
				in[j][i] += w
			}
		}
	}
	inMask := make([]uint32, n)
	for v := range in {
		for u, w := range in[v] {
			if w > 0 {
				inMask[v] |= 1 << u
			}
		}
	}
	unit := unitWeights(g, comp)
	full := 1<<n - 1
	best := make([]int32, full+1)
	from := make([]int8, full+1)
	for s := 1; s <= full; s++ {
		best[s] = 1 << 30
	}
	for s := 0; s < full; s++ {
		bs := best[s]
		for free := uint32(full &^ s); free != 0; free &= free - 1 {
			v := bits.TrailingZeros32(free)
			c := bs
			if unit {
				c += int32(bits.OnesCount32(inMask[v] & uint32(s)))
			} else {
				for u := 0; u < n; u++ {
					if s&(1<<u) != 0 {
						c += int32(in[v][u])
					}
				}
			}
			if t := s | 1<<v; c < best[t] {
				best[t], from[t] = c, int8(v)
			}
		}
	}
	order := make([]int, n)
	for s, i := full, n-1; s != 0; i-- {
		v := int(from[s])
		order[i] = comp[v]
		s &^= 1 << v
	}
	return order
}

// greedyOrder orders a component by Eades, Lin and Smyth's rule: nodes
// that use nothing left go to the bottom, nodes nothing left uses to the
// top, else the node most used for what it uses goes to the bottom.
func greedyOrder(g *graph, comp []int) []int {
	left := map[int]bool{}
	for _, v := range comp {
		left[v] = true
	}
	users := map[int]map[int]int{}
	for _, a := range comp {
		for b, w := range g.w[a] {
			if left[b] {
				if users[b] == nil {
					users[b] = map[int]int{}
				}
				users[b][a] = w
			}
		}
	}
	weight := func(m map[int]int) int {
		s := 0
		for u, w := range m {
			if left[u] {
				s += w
			}
		}
		return s
	}
	var bottom, top []int
	for len(left) > 0 {
		progress := true
		for progress {
			progress = false
			for _, v := range comp {
				if left[v] && weight(g.w[v]) == 0 {
					bottom = append(bottom, v)
					delete(left, v)
					progress = true
				}
			}
			for _, v := range comp {
				if left[v] && weight(users[v]) == 0 {
					top = append(top, v)
					delete(left, v)
					progress = true
				}
			}
		}
		pick, bestDelta := -1, 0
		for _, v := range comp {
			if !left[v] {
				continue
			}
			d := weight(users[v]) - weight(g.w[v])
			if pick < 0 || d > bestDelta {
				pick, bestDelta = v, d
			}
		}
		if pick >= 0 {
			bottom = append(bottom, pick)
			delete(left, pick)
		}
	}
	for i := len(top) - 1; i >= 0; i-- {
		bottom = append(bottom, top[i])
	}
	return bottom
}

// improve moves one node at a time to the place where it makes the
// least weight run back up, while any move lowers it.
func improve(g *graph, order []int) []int {
	c := cost(g, order)
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(order); i++ {
			v := order[i]
			rest := append(append([]int{}, order[:i]...), order[i+1:]...)
			for j := 0; j <= len(rest); j++ {
				if j == i {
					continue
				}
				try := append(append(append([]int{}, rest[:j]...), v), rest[j:]...)
				if tc := cost(g, try); tc < c {
					order, c, changed = try, tc, true
					break
				}
			}
		}
	}
	return order
}

// unitWeights says whether every arc within comp weighs 1.
func unitWeights(g *graph, comp []int) bool {
	in := map[int]bool{}
	for _, v := range comp {
		in[v] = true
	}
	for _, a := range comp {
		for b, w := range g.w[a] {
			if in[b] && w != 1 {
				return false
			}
		}
	}
	return true
}
