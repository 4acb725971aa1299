package shapedlink

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
)

// TestFourStateInProcess: the in-process link runs the 4-state model as
// the model does: 3000 datagrams 1 ms apart (no queue) arrive or not
// exactly as the model, seeded as the link's down direction, decides for
// the same frames, and the applied line names the model in tc's words.
func TestFourStateInProcess(t *testing.T) {
	const profile = "20:10,down.loss=state:5/40/20/60/2"
	synctest.Test(t, func(t *testing.T) {
		l := newInProcessLink(t, profile, Options{Seed: 5})
		if a := l.Applied(); !strings.Contains(a[0], "loss state p13 5% p31 40% p32 20% p23 60% p14 2% seed 5") || strings.Contains(a[1], "loss") {
			t.Fatalf("Applied() = %q, want the 4-state model server -> client only", a)
		}
		ctx := context.Background()
		srv, err := l.Server().ListenPacket(ctx, "udp", l.ServerAddr().String()+":4433")
		if err != nil {
			t.Fatal(err)
		}
		cli, err := l.Client().ListenPacket(ctx, "udp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		const n = 3000
		seen := make([]bool, n)
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 64)
			for {
				k, _, err := cli.ReadFrom(buf)
				if err != nil {
					return
				}
				if i := int(binary.BigEndian.Uint32(buf)); k >= 4 && i < n {
					seen[i] = true
				}
			}
		}()
		msg := make([]byte, 4)
		for i := range n {
			binary.BigEndian.PutUint32(msg, uint32(i))
			if _, err := srv.WriteTo(msg, cli.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Second)
		cli.Close()
		<-done

		p, err := ParseProfile(profile)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Direction(Down)
		d.Seed = 5
		m := linkmodel.New(d, nil)
		want := make([]bool, n)
		lost := 0
		for i := range want {
			_, v := m.Arrive(int64(i)*int64(time.Millisecond), 46)
			want[i] = v != linkmodel.Lost
			if v == linkmodel.Accepted {
				m.Depart(46)
			} else {
				lost++
			}
		}
		if !slices.Equal(seen, want) {
			first := 0
			for first < n && seen[first] == want[first] {
				first++
			}
			t.Errorf("the in-process link's losses differ from the model's (seed 5) from datagram %d", first)
		}
		if lost < n/20 {
			t.Errorf("the model lost %d of %d; the profile loses about 11%%", lost, n)
		}
	})
}
