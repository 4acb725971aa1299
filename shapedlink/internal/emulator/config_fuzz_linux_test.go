package emulator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
)

// FuzzDecodeConfig: the shaper process parses its whole configuration from
// one environment variable. On any bytes it returns an error or a
// configuration that validates and drives the model without panicking:
// frames of every size arrive and leave, and what is held never goes
// negative or above the limit.
func FuzzDecodeConfig(f *testing.F) {
	good, err := json.Marshal(childConfig{Config: Config{
		IfA: "qbshs0", IfB: "qbshc0",
		AToB: Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, LossPct: 1, Seed: 1},
		BToA: Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, Seed: 2},
	}, ParentPID: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(good))
	f.Add(`{"Config":{"AToB":{"Limit":-1}}}`)
	f.Add(`{"Config":{"IfA":"a","IfB":"b","AToB":{"RateMbit":1,"Limit":1},"BToA":{"RateMbit":1e18,"Limit":1000000000,"LossPct":100}}}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, v string) {
		cc, err := decodeConfig(v)
		if err != nil {
			return
		}
		if err := cc.Config.validate(); err != nil {
			t.Fatalf("decodeConfig accepted a configuration that does not validate: %v", err)
		}
		for _, d := range []Direction{cc.Config.AToB, cc.Config.BToA} {
			m := linkmodel.New(d, nil)
			var now int64
			for i, size := range []int{60, 1514, 9000, 1, 1514, 64} {
				now += int64(i) * 1000
				m.Arrive(now, size)
				if n, b := m.Held(); n < 0 || b < 0 || n > d.HeldLimit() {
					t.Fatalf("held %d packets, %d bytes with limit %d", n, b, d.HeldLimit())
				}
			}
		}
	})
}
