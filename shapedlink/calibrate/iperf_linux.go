package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

const (
	iperfPort = 5201
	iperfOmit = 2 // seconds iperf3 leaves out at the start of its flow
	// unlimitedProfile stands for "no rate limit": 100 Gbit/s is more
	// than any flow here reaches, and 2 ms keeps the delay line short.
	unlimitedProfile = "2:100000"
)

// iperfSeries runs Debian's iperf3 (one Cubic flow, client to server)
// across an unshaped veth pair with its offloads on and with wire-sized
// packets, across an effectively unlimited link and across a link of
// each rate at 5 ms RTT, the links in opts' offload mode: the rate a
// sender nobody here wrote gets, beside the machine's own ceilings.
func iperfSeries(ctx context.Context, c Config, rates []float64, opts shapedlink.Options) ([]Iperf, error) {
	var out []Iperf
	bareKeep, bareWire := bareOptions(opts, shapedlink.OffloadKeep), bareOptions(opts, shapedlink.OffloadWire)
	unlimited, err := shapedlink.ParseProfile(unlimitedProfile)
	if err != nil {
		return nil, err
	}
	// The bare pairs first: the ceilings the others are read against.
	type step struct {
		label string
		p     shapedlink.Profile
		opts  shapedlink.Options
		rate  float64
	}
	steps := []step{{bareKeepLabel, unlimited, bareKeep, 0}, {bareWireLabel, unlimited, bareWire, 0}, {"unlimited", unlimited, opts, 0}}
	for _, r := range rates {
		p, err := shapedlink.NewProfile(5*time.Millisecond, r, 0)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step{p.String(), p, opts, r})
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, iperfRun(ctx, c, s.label, s.p, s.opts, s.rate))
	}
	return out, nil
}

// iperfRun builds one link and runs one iperf3 flow across it.
func iperfRun(ctx context.Context, c Config, label string, p shapedlink.Profile, opts shapedlink.Options, rateMbit float64) Iperf {
	res := Iperf{Label: label, Profile: p.String(), RateMbit: rateMbit, Offload: opts.Offload.String()}
	fail := func(err error) Iperf { res.Error = err.Error(); return res }
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	res.Backend = string(l.Backend())
	srvAddr := l.ServerAddr().String()
	var srvOut bytes.Buffer
	srv := exec.Command("iperf3", "-s", "-1", "-B", srvAddr, "-p", strconv.Itoa(iperfPort))
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := l.Server().Start(srv); err != nil {
		return fail(fmt.Errorf("starting the iperf3 server: %w", err))
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	defer func() {
		_ = srv.Process.Kill()
		<-srvDone
	}()
	if err := waitListening(ctx, l.Server(), iperfPort, 5*time.Second, srvDone); err != nil {
		return fail(fmt.Errorf("the iperf3 server: %w (its output: %q)", err, srvOut.String()))
	}

	secs := max(3, int(c.Bulk.Round(time.Second)/time.Second))
	var cliOut, cliErr bytes.Buffer
	cli := exec.Command("iperf3", "-c", srvAddr, "-p", strconv.Itoa(iperfPort), "-C", "cubic",
		"-t", strconv.Itoa(secs), "-O", strconv.Itoa(iperfOmit), "-J")
	cli.Stdout, cli.Stderr = &cliOut, &cliErr
	sh0 := shaperTotals(l)
	start := time.Now()
	if err := l.Client().Start(cli); err != nil {
		return fail(fmt.Errorf("starting the iperf3 client: %w", err))
	}
	cliDone := make(chan error, 1)
	go func() { cliDone <- cli.Wait() }()
	// The wire share: what the emulator forwarded client to server inside
	// iperf3's measured window (after its omitted start, before its end).
	w0, t0, w1, t1 := int64(-1), time.Time{}, int64(-1), time.Time{}
	sample := func(at time.Time) (int64, time.Time, bool) {
		select {
		case err := <-cliDone:
			cliDone <- err
			return -1, time.Time{}, false
		case <-time.After(time.Until(at)):
		case <-ctx.Done():
			return -1, time.Time{}, false
		}
		b, ok := clientToServerBytes(l)
		if !ok {
			return -1, time.Time{}, true
		}
		return b, time.Now(), true
	}
	if b, t, ok := sample(start.Add(time.Duration(iperfOmit)*time.Second + 700*time.Millisecond)); ok {
		w0, t0 = b, t
		w1, t1, _ = sample(start.Add(time.Duration(iperfOmit+secs)*time.Second - 300*time.Millisecond))
	}
	var werr error
	select {
	case werr = <-cliDone:
	case <-ctx.Done():
		_ = cli.Process.Kill()
		<-cliDone
		return fail(ctx.Err())
	}
	sh1 := shaperTotals(l)
	mbit, retr, err := readIperfJSON(cliOut.Bytes(), cliErr.String(), werr)
	if err != nil {
		return fail(err)
	}
	res.Mbit, res.Retransmits = mbit, retr
	if rateMbit > 0 {
		res.GoodputPct = 100 * res.Mbit / rateMbit
		if w0 >= 0 && w1 > w0 && t1.After(t0) {
			res.WirePct, res.WireFrom = 100*float64(w1-w0)*8/t1.Sub(t0).Seconds()/(rateMbit*1e6), "shaper"
		} else {
			res.WirePct, res.WireFrom = res.GoodputPct*fullFrame/fullPayload, "estimate"
		}
	}
	res.shaperFigures(sh0, sh1)
	return res
}

// readIperfJSON reads the iperf3 client's -J output: the receiver's
// goodput in Mbit/s and the sender's retransmissions; stderr and werr
// (how the client exited) go into the error when the run failed.
func readIperfJSON(out []byte, stderr string, werr error) (mbit float64, retransmits int, err error) {
	var rep struct {
		End struct {
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return 0, 0, fmt.Errorf("iperf3 client (%v): its JSON: %w; stderr %q", werr, err, strings.TrimSpace(stderr))
	}
	if rep.Error != "" || werr != nil {
		return 0, 0, fmt.Errorf("iperf3 client: %v %s", werr, rep.Error)
	}
	return rep.End.SumReceived.BitsPerSecond / 1e6, rep.End.SumSent.Retransmits, nil
}

// shaperFigures fills f's emulator figures from its totals before and
// after the flow: CPU per wire packet and per GB forwarded, and the
// super-packets read and written.
func (f *Iperf) shaperFigures(before, after shaperTotal) {
	if !before.ok || !after.ok {
		return
	}
	if cpu := after.cpuNs - before.cpuNs; before.cpuNs >= 0 && cpu > 0 {
		if n := after.frames - before.frames; n > 0 {
			f.CPUNsPerFrame = float64(cpu) / float64(n)
		}
		if b := after.bytes - before.bytes; b > 0 {
			f.CPUSecPerGB = float64(cpu) / 1e9 / (float64(b) / 1e9)
		}
	}
	f.SuperPacketsIn = after.superIn - before.superIn
	f.SuperPacketsOut = after.superOut - before.superOut
	f.Segments = after.frames - before.frames
	f.FramesOut = after.framesOut - before.framesOut
	f.Early = after.early - before.early
	f.EarlyMaxMs = float64(after.earlyMaxNs) / 1e6
}

// shaperTotal is the emulator's account so far, both directions: its
// CPU time in ns (-1 when it cannot be read), the wire packets and bytes
// it forwarded, the super-packets it read and wrote, the frames it wrote,
// the packets sent early and the most any was early (since the link
// started); ok is false without an emulator.
type shaperTotal struct {
	ok                               bool
	cpuNs                            int64
	frames, bytes, superIn, superOut uint64
	framesOut, early, earlyMaxNs     uint64
}

// shaperTotals reads l's emulator's shaperTotal.
func shaperTotals(l *shapedlink.Link) shaperTotal {
	sh, ok := l.Instruments().ShaperStats()
	if !ok {
		return shaperTotal{cpuNs: -1}
	}
	t := shaperTotal{ok: true, cpuNs: shaperCPU(l.Instruments().EmulatorPID())}
	for _, d := range sh.Directions {
		t.frames += d.Forwarded
		t.bytes += d.ForwardedBytes
		t.superIn += d.SuperPacketsIn
		t.superOut += d.SuperPacketsOut
		t.framesOut += d.FramesOut
		t.early += d.Early
		t.earlyMaxNs = max(t.earlyMaxNs, d.MaxEarlyNanos)
	}
	return t
}

// clientToServerBytes is what the emulator has forwarded from the client
// to the server so far.
func clientToServerBytes(l *shapedlink.Link) (int64, bool) {
	sh, ok := l.Instruments().ShaperStats()
	if !ok || len(sh.Directions) < 2 {
		return 0, false
	}
	return int64(sh.Directions[1].ForwardedBytes), true
}

// waitListening waits until a TCP socket listens on port in ns (read from
// the namespace's /proc/net/tcp), so that no probe connection is spent on
// a one-off server; it gives up after d or when exited says the server
// ended.
func waitListening(ctx context.Context, ns *shapedlink.Namespace, port int, d time.Duration, exited chan error) error {
	want := fmt.Sprintf(":%04X ", port)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		var tab []byte
		err := ns.Do(func() (err error) {
			// thread-self: this thread is the one switched into ns.
			tab, err = os.ReadFile("/proc/thread-self/net/tcp")
			return err
		})
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(tab), "\n") {
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1]+" ", want) && f[3] == "0A" {
				return nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("it exited before listening: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("not listening on port %d after %v", port, d)
}
