package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one share of a matrix, so that several identical machines can
// each run a part of it (a Kubernetes Indexed Job, a CI matrix, a shell loop
// over hosts) and summarise merges their work directories.
//
// The unit of sharding is one repeat of one cell with all its arms, so the
// arms stay interleaved inside every share. Counting these units from 0 in
// plan order, unit k belongs to shard k mod Count (round robin; docs/shards.md
// says why). The share depends only on the matrix and on Index and Count,
// never on the machine.
type Shard struct {
	// Index counts from 0, as JOB_COMPLETION_INDEX does; Count is how
	// many shards share the matrix. The zero value is the whole matrix,
	// and so is 0/1.
	Index, Count int
}

// MaxShards bounds Shard.Count.
const MaxShards = 1000

// Whole reports whether the shard is the whole matrix (the zero value, or
// 0/1).
func (s Shard) Whole() bool { return s.Count <= 1 && s.Index == 0 }

// String is "i/n", as -shard takes it; the whole matrix is "0/1".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, max(1, s.Count)) }

// recordText is what matrix.json records: "" for the whole matrix, so
// that unsharded records are unchanged, else "i/n".
func (s Shard) recordText() string {
	if s.Whole() {
		return ""
	}
	return s.String()
}

// validate checks that the shard is the zero value or an index inside a
// count from 1 to MaxShards.
func (s Shard) validate() error {
	switch {
	case s == Shard{}:
		return nil
	case s.Count < 1:
		return fmt.Errorf("shard %d/%d: the count must be at least 1", s.Index, s.Count)
	case s.Count > MaxShards:
		return fmt.Errorf("shard %d/%d: at most %d shards", s.Index, s.Count, MaxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %d/%d: the index counts from 0, so with %d shards give 0/%d to %d/%d",
			s.Index, s.Count, s.Count, s.Count, s.Count-1, s.Count)
	}
	return nil
}

// ParseShard parses "i/n": shard i of n, i counting from 0.
func ParseShard(text string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, shard i of n counting from 0, such as 0/4", text)
	}
	i, ierr := strconv.Atoi(strings.TrimSpace(is))
	n, nerr := strconv.Atoi(strings.TrimSpace(ns))
	if ierr != nil || nerr != nil {
		return Shard{}, fmt.Errorf("shard %q: i and n must be whole numbers, as in 0/4 (shard 0 of 4)", text)
	}
	s := Shard{Index: i, Count: n}
	if err := s.validate(); err != nil {
		return Shard{}, err
	}
	return s, nil
}

// share keeps the runs of plan (a full plan, in order) that belong to s,
// in their order. A unit is a run of consecutive runs with the same cell
// and repeat. A shard that does not validate has no share.
func (s Shard) share(plan []Run) []Run {
	if s.validate() != nil {
		return nil
	}
	if s.Whole() {
		return plan
	}
	var out []Run
	unit := -1
	for i, rc := range plan {
		if i == 0 || rc.Repeat != plan[i-1].Repeat || rc.Cell != plan[i-1].Cell {
			unit++
		}
		if unit%s.Count == s.Index {
			out = append(out, rc)
		}
	}
	return out
}

// units counts the (cell, repeat) units of a plan.
func units(plan []Run) int {
	n := 0
	for i, rc := range plan {
		if i == 0 || rc.Repeat != plan[i-1].Repeat || rc.Cell != plan[i-1].Cell {
			n++
		}
	}
	return n
}

// shardFits checks that the matrix has at least as many units as m.Shard
// has shards, since a shard with nothing to run is a mistake in the count.
// It assumes the rest of the matrix, and the shard, are valid.
func (m *Matrix) shardFits() error {
	if m.Shard.Whole() {
		return nil
	}
	if u := units(m.fullPlan()); m.Shard.Count > u {
		return fmt.Errorf("shard %s: the matrix has only %d cell repeats (the unit a shard takes, all arms of one repeat of one cell), so give at most %d shards",
			m.Shard, u, u)
	}
	return nil
}

// PlanSummary is the count in a command's opening line (benchcmd.Main): "R runs", or for a
// shard "shard i/n: R of T runs".
func (m *Matrix) PlanSummary(plan []Run) string {
	if m.Shard.Whole() {
		return fmt.Sprintf("%d runs", len(plan))
	}
	return fmt.Sprintf("shard %s: %d of %d runs", m.Shard, len(plan), len(m.fullPlan()))
}

// ShardSummaryNote is the line printed after a shard's summary, saying that
// it covers the shard only and how to merge; "" for the whole matrix.
func (m *Matrix) ShardSummaryNote(name string) string {
	if m.Shard.Whole() {
		return ""
	}
	return fmt.Sprintf("%s: the summary covers shard %s only (%d of %d runs); once every shard has run, merge their work directories with: go run ./examples/summarise DIR1 DIR2 ...",
		name, m.Shard, len(m.Plan()), len(m.fullPlan()))
}

// Environment variables that choose a shard when -shard is not given.
const (
	// envShard holds "i/n", as -shard takes it.
	envShard = "SHARD"
	// envJobIndex is the index a Kubernetes Indexed Job gives each pod.
	envJobIndex = "JOB_COMPLETION_INDEX"
	// envShards is the count to go with envJobIndex: the Job's
	// completions.
	envShards = "SHARDS"
)

// ResolveShard chooses the shard: -shard when given, else SHARD, else
// JOB_COMPLETION_INDEX with the count in SHARDS; else the whole matrix.
// lookup reads the environment.
func ResolveShard(flagValue string, flagGiven bool, lookup func(string) (string, bool)) (Shard, error) {
	if flagGiven {
		s, err := ParseShard(flagValue)
		if err != nil {
			return Shard{}, fmt.Errorf("-shard: %w", err)
		}
		return s, nil
	}
	if v, ok := lookup(envShard); ok {
		s, err := ParseShard(v)
		if err != nil {
			return Shard{}, fmt.Errorf("%s=%q: %w", envShard, v, err)
		}
		return s, nil
	}
	count, hasCount := lookup(envShards)
	index, hasIndex := lookup(envJobIndex)
	switch {
	case hasIndex && !hasCount:
		return Shard{}, fmt.Errorf("%s=%s is set (a Kubernetes Indexed Job) but %s is not: set %s to the Job's completions (spec.completions), or give -shard i/n",
			envJobIndex, index, envShards, envShards)
	case hasCount && !hasIndex:
		return Shard{}, fmt.Errorf("%s=%s is set but nothing gives this process's index: set %s (as an Indexed Job does) or give -shard i/n",
			envShards, count, envJobIndex)
	case !hasIndex:
		return Shard{}, nil
	}
	i, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return Shard{}, fmt.Errorf("%s=%q is not a whole number", envJobIndex, index)
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil {
		return Shard{}, fmt.Errorf("%s=%q is not a whole number: set it to the Job's completions", envShards, count)
	}
	s := Shard{Index: i, Count: n}
	if err := s.validate(); err != nil {
		return Shard{}, fmt.Errorf("%s=%s with %s=%s: %w", envJobIndex, index, envShards, count, err)
	}
	return s, nil
}
