package shapedlink

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
	"github.com/vishvananda/netlink"
)

// netemSchedule applies a link's schedules to its netem qdiscs: at each
// change's time it changes the direction's root netem in place (tc qdisc
// change, never delete and add, so what netem holds stays queued) and
// records when the kernel acknowledged it.
type netemSchedule struct {
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	applied []AppliedChange
	err     error
}

// netemTimeline is one direction's schedule and the state the qdisc is
// in: the direction as the profile has it, with the changes so far.
type netemTimeline struct {
	d       Dir
	sched   Schedule // the direction's changes (loaded) and period
	state   Direction
	lossUp  float64 // the loss to restore when a blackout ends
	geUp    bool
	fourUp  bool
	next    int64 // global index of the next change
	ifindex int
	ns      *Namespace
}

// at is the k-th change's offset from the start, or -1 when none is left.
func (tl *netemTimeline) at(k int64) time.Duration {
	n := int64(len(tl.sched.Changes))
	if n == 0 || tl.sched.Period == 0 && k >= n {
		return -1
	}
	return time.Duration(k/n)*tl.sched.Period + tl.sched.Changes[k%n].At
}

// startNetemSchedule starts applying the directions' schedules, if they
// have any, from now; it returns nil when there are none.
func startNetemSchedule(e ends, dirs [2]Direction) (*netemSchedule, error) {
	var tls []*netemTimeline
	for _, end := range []End{ServerEnd, ClientEnd} {
		d := end.dir()
		pd := dirs[d]
		if len(pd.Changes) == 0 {
			continue
		}
		h, err := e.ns[end].handle()
		if err != nil {
			return nil, err
		}
		link, err := h.LinkByName(e.dev[end])
		h.Close()
		if err != nil {
			return nil, fmt.Errorf("shapedlink: finding %s for its schedule: %w", e.dev[end], err)
		}
		s := Schedule{Spec: pd.Schedule, Period: pd.SchedulePeriod, Changes: pd.Changes}
		tls = append(tls, &netemTimeline{d: d, sched: s, state: pd, lossUp: pd.LossPct, geUp: pd.HasGE, fourUp: pd.HasFourState, ifindex: link.Attrs().Index, ns: e.ns[end]})
	}
	if len(tls) == 0 {
		return nil, nil
	}
	ns := &netemSchedule{start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go ns.run(tls)
	return ns, nil
}

func (ns *netemSchedule) run(tls []*netemTimeline) {
	defer close(ns.done)
	for {
		var tl *netemTimeline
		next := time.Duration(math.MaxInt64)
		for _, t := range tls {
			if at := t.at(t.next); at >= 0 && at < next {
				tl, next = t, at
			}
		}
		if tl == nil {
			return
		}
		timer := time.NewTimer(time.Until(ns.start.Add(next)))
		select {
		case <-ns.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		c := tl.sched.Changes[tl.next%int64(len(tl.sched.Changes))]
		tl.next++
		switch c.Set {
		case "rate":
			tl.state.RateMbit = c.Value
		case "delay":
			tl.state.Delay = time.Duration(math.Round(c.Value * 1e6))
		case "loss":
			tl.state.LossPct, tl.lossUp = c.Value, c.Value
		case "limit":
			tl.state.Limit = int(c.Value)
		case "down":
			// netem drops every packet at a loss of 100% (a u32 of
			// 2^32-1 is at least every draw); a loss model (Gilbert-
			// Elliott, 4-state) would override it, so it is left out
			// while down.
			tl.state.LossPct, tl.state.HasGE, tl.state.HasFourState = 100, false, false
		case "up":
			tl.state.LossPct, tl.state.HasGE, tl.state.HasFourState = tl.lossUp, tl.geUp, tl.fourUp
		}
		q := netemnl.Root(netlink.QdiscAttrs{LinkIndex: tl.ifindex, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}, tl.state)
		err := func() error {
			opts, err := netemnl.Options(q, tl.state, 0)
			if err != nil {
				return err
			}
			return changeQdiscRaw(tl.ns, tl.ifindex, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts)
		}()
		acked := time.Now()
		ns.mu.Lock()
		ns.applied = append(ns.applied, AppliedChange{At: ns.start.Add(next), Dir: tl.d.String(), Set: c.Set, Value: c.Value, Hold: c.Hold, AppliedAt: acked})
		if err != nil {
			ns.err = fmt.Errorf("shapedlink: changing the %s direction's netem (%s at %v): %w", tl.d, c.Set, next, err)
		}
		ns.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// close stops the schedule and waits for it.
func (ns *netemSchedule) close() {
	select {
	case <-ns.stop:
	default:
		close(ns.stop)
	}
	<-ns.done
}

// record returns the changes applied so far and the error that stopped
// the schedule, if one did.
func (ns *netemSchedule) record() ([]AppliedChange, error) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return append([]AppliedChange(nil), ns.applied...), ns.err
}
