package calibrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// timeVarying measures a link whose down direction has a trace or a
// schedule: how closely the delivered bytes follow the trace, and when
// each blackout really began and ended against its schedule.
func timeVarying(ctx context.Context, l *shapedlink.Link, down shapedlink.Direction, dur time.Duration) *TimeVarying {
	tv := &TimeVarying{}
	fail := func(err error) *TimeVarying { tv.Error = err.Error(); return tv }
	start := l.Instruments().ScheduleStart()
	if start.IsZero() {
		return fail(fmt.Errorf("the link reports no schedule start"))
	}
	if down.Trace != "" {
		tr, err := shapedlink.LoadTrace(down.Trace)
		if err != nil {
			return fail(err)
		}
		if err := traceFidelity(ctx, l, tr, start, down.Delay, dur, tv); err != nil {
			return fail(err)
		}
	}
	if down.Schedule != "" {
		if err := blackoutEdges(ctx, l, start, down.Delay, dur, tv); err != nil {
			return fail(err)
		}
	}
	if changes, err := l.Instruments().AppliedChanges(); err == nil {
		tv.Changes = len(changes)
		for _, c := range changes {
			if !c.AppliedAt.IsZero() {
				tv.MaxAckLagMs = max(tv.MaxAckLagMs, float64(c.AppliedAt.Sub(c.At))/1e6)
			}
		}
	}
	if sh, ok := l.Instruments().ShaperStats(); ok {
		for _, d := range sh.Directions {
			tv.ShaperMaxLagMs = max(tv.ShaperMaxLagMs, d.MaxChangeLagMs)
		}
	}
	return tv
}

// floodRecord sends n datagrams of size bytes from the server end to the
// client end, gap apart (in bursts of burst), and returns each one's send
// time and the arrival time of its first copy (zero if lost).
func floodRecord(ctx context.Context, l *shapedlink.Link, n, size, burst int, gap, tail time.Duration) (sent, got []time.Time, err error) {
	srv, err := udpIn(l.Server(), ipOf(l.ServerAddr()))
	if err != nil {
		return nil, nil, err
	}
	defer srv.Close()
	cli, err := udpIn(l.Client(), ipOf(l.ClientAddr()))
	if err != nil {
		return nil, nil, err
	}
	defer cli.Close()
	_ = cli.SetReadBuffer(8 << 20)
	sent, got = make([]time.Time, n), make([]time.Time, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if i := int(binary.BigEndian.Uint32(buf)); k >= 4 && i < n && got[i].IsZero() {
				got[i] = time.Now()
			}
		}
	}()
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, size)
	begin := time.Now()
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if i%burst == 0 {
			time.Sleep(time.Until(begin.Add(time.Duration(i/burst) * gap)))
		}
		binary.BigEndian.PutUint32(msg, uint32(i))
		sent[i] = time.Now()
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			return nil, nil, err
		}
	}
	time.Sleep(tail)
	cli.Close()
	<-done
	return sent, got, nil
}

// traceFidelity floods the trace at 1.5 times its busiest second (in
// 1514-byte frames) for dur and compares, per whole second from the
// second one on, the frames that left the link (arrival minus the delay)
// with what the trace's opportunities carry.
func traceFidelity(ctx context.Context, l *shapedlink.Link, tr shapedlink.Trace, start time.Time, delay, dur time.Duration, tv *TimeVarying) error {
	peak := 0
	for s := time.Duration(0); s < tr.Period(); s += time.Second {
		peak = max(peak, tr.Opportunities(s, s+time.Second))
	}
	perSec := max(10, int(math.Ceil(1.5*float64(peak)*shapedlink.TraceOpportunity/fullFrame)))
	const burst = 10
	gap := time.Second * burst / time.Duration(perSec)
	n := int(dur.Seconds() * float64(perSec))
	begin := time.Since(start)
	_, got, err := floodRecord(ctx, l, n, fullFrame-42, burst, gap, delay+500*time.Millisecond)
	if err != nil {
		return err
	}
	// Whole seconds of the trace from one after the flood began (the
	// queue has filled) to the flood's end (it drains after, still full).
	var carried, delivered float64
	for w := begin.Truncate(time.Second) + 2*time.Second; w+time.Second <= begin+dur; w += time.Second {
		want := float64(tr.Opportunities(w, w+time.Second)) * shapedlink.TraceOpportunity / fullFrame
		have := 0
		for _, g := range got {
			if at := g.Add(-delay).Sub(start); !g.IsZero() && at >= w && at < w+time.Second {
				have++
			}
		}
		tv.TraceWindows++
		tv.TraceMaxErrFrames = max(tv.TraceMaxErrFrames, math.Abs(float64(have)-want))
		carried += want
		delivered += float64(have)
	}
	if tv.TraceWindows == 0 {
		return fmt.Errorf("the %v flood left no whole second to compare; use a longer -timevarying", dur)
	}
	tv.TraceDeliveredPct = 100 * delivered / carried
	return nil
}

// blackoutEdges sends a datagram every millisecond for dur and finds,
// for each drop blackout in that time, when the datagrams began and
// stopped being lost, against the blackout's scheduled times.
func blackoutEdges(ctx context.Context, l *shapedlink.Link, start time.Time, delay, dur time.Duration, tv *TimeVarying) error {
	from := time.Now()
	sent, got, err := floodRecord(ctx, l, int(dur/time.Millisecond), 64, 1, time.Millisecond, delay+500*time.Millisecond)
	if err != nil {
		return err
	}
	changes, err := shapedlink.ScheduledChanges(l.Profile(), start, from, sent[len(sent)-1])
	if err != nil {
		return err
	}
	for i, c := range changes {
		if c.Set != "down" || c.Dir != "down" || c.Hold {
			continue
		}
		var up time.Time
		for _, u := range changes[i+1:] {
			if u.Dir == "down" && u.Set == "up" {
				up = u.At
				break
			}
		}
		if up.IsZero() {
			continue
		}
		// The first datagram lost at or after the scheduled down time's
		// neighbourhood, and the first delivered after the up time's.
		firstLost, firstBack := time.Time{}, time.Time{}
		for j, s := range sent {
			if s.Before(c.At.Add(-50*time.Millisecond)) || s.After(up.Add(50*time.Millisecond)) {
				continue
			}
			if got[j].IsZero() && firstLost.IsZero() {
				firstLost = s
			}
			if !firstLost.IsZero() && !got[j].IsZero() && firstBack.IsZero() {
				firstBack = s
			}
		}
		if firstLost.IsZero() || firstBack.IsZero() {
			continue
		}
		tv.Blackouts++
		tv.EdgeErrMs = append(tv.EdgeErrMs, float64(firstLost.Sub(c.At))/1e6, float64(firstBack.Sub(up))/1e6)
	}
	return nil
}
