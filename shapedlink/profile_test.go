package shapedlink

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultLimit(t *testing.T) {
	cases := []struct {
		rate float64
		rtt  time.Duration
		want int
	}{
		{10, 80 * time.Millisecond, 110},  // the reference rig's value
		{2, 150 * time.Millisecond, 48},   // 1.5*2e6*0.15/12000 = 37.5 -> 38 + 10
		{100, 20 * time.Millisecond, 260}, // 250 + 10
		{1000, 5 * time.Millisecond, 635}, // 625 + 10
		{0.001, time.Millisecond, 11},     // tiny BDP still gets one packet + 10
	}
	for _, c := range cases {
		if got := DefaultLimit(c.rate, c.rtt); got != c.want {
			t.Errorf("DefaultLimit(%v, %v) = %d, want %d", c.rate, c.rtt, got, c.want)
		}
	}
}

func TestParseProfile(t *testing.T) {
	good := []struct {
		in   string
		want Profile
		str  string
	}{
		{"80:10", Profile{RTT: 80 * time.Millisecond, RateMbit: 10, Limit: 110}, "80:10"},
		{"80:10:1", Profile{RTT: 80 * time.Millisecond, RateMbit: 10, LossPct: 1, Limit: 110}, "80:10:1"},
		{"150:2:0.5", Profile{RTT: 150 * time.Millisecond, RateMbit: 2, LossPct: 0.5, Limit: 48}, "150:2:0.5"},
		{"80:10:0", Profile{RTT: 80 * time.Millisecond, RateMbit: 10, Limit: 110}, "80:10"},
		{"0.5:1000.25", Profile{RTT: 500 * time.Microsecond, RateMbit: 1000.25, Limit: DefaultLimit(1000.25, 500*time.Microsecond)}, "0.5:1000.25"},
		{"80:10:1@200", Profile{RTT: 80 * time.Millisecond, RateMbit: 10, LossPct: 1, Limit: 200}, "80:10:1@200"},
		{"80:10@110", Profile{RTT: 80 * time.Millisecond, RateMbit: 10, Limit: 110}, "80:10"},
		{"80.:.5", Profile{RTT: 80 * time.Millisecond, RateMbit: 0.5, Limit: DefaultLimit(0.5, 80*time.Millisecond)}, "80:0.5"},
	}
	for _, c := range good {
		got, err := ParseProfile(c.in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseProfile(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", c.in, s, c.str)
		}
	}

	bad := []struct{ in, field string }{
		{"", ""},
		{"80", ""},
		{"80:10:1:2", ""},
		{"0:10", "rtt_ms"},
		{"-80:10", "rtt_ms"},
		{"x:10", "rtt_ms"},
		{"80:0", "rate_mbit"},
		{"80:1e3", "rate_mbit"},
		{"80:NaN", "rate_mbit"},
		{"80:Inf", "rate_mbit"},
		{"80:10:100", "loss_pct"},
		{"80:10:-1", "loss_pct"},
		{"80:10:", "loss_pct"},
		{"80:10:1.2.3", "loss_pct"},
		{"80:10@0", "limit_pkts"},
		{"80:10@+5", "limit_pkts"},
		{"80:10@ten", "limit_pkts"},
		{"80 :10", "rtt_ms"},
		{"0.0000000001:10", "rtt_ms"},
		{"60001:10", "rtt_ms"},
		{"80:100001", "rate_mbit"},
	}
	for _, c := range bad {
		_, err := ParseProfile(c.in)
		var pe *ProfileError
		if !errors.As(err, &pe) {
			t.Errorf("ParseProfile(%q) error = %v, want a *ProfileError", c.in, err)
			continue
		}
		if pe.Field != c.field {
			t.Errorf("ParseProfile(%q) blamed field %q, want %q (%v)", c.in, pe.Field, c.field, err)
		}
		if !strings.Contains(err.Error(), ProfileGrammar) {
			t.Errorf("ParseProfile(%q) error %q does not show the grammar", c.in, err)
		}
	}
}

func TestParseProfiles(t *testing.T) {
	ps, err := ParseProfiles("  80:10 80:10:1\t150:2:0.5\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "80:10 80:10:1 150:2:0.5" {
		t.Errorf("ParseProfiles round trip = %q", got)
	}
	if _, err := ParseProfiles("   "); !errors.Is(err, ErrEmptyProfiles) {
		t.Errorf("empty list: err = %v, want ErrEmptyProfiles", err)
	}
	if _, err := ParseProfiles("80:10 80:x"); err == nil || !strings.Contains(err.Error(), "rate_mbit") {
		t.Errorf("bad second profile: err = %v, want one naming rate_mbit", err)
	}
}

func TestProfileWith(t *testing.T) {
	p, err := ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	q := p.WithLoss(2)
	if q.LossPct != 2 || p.LossPct != 0 || q.Limit != p.Limit {
		t.Errorf("WithLoss: got %+v from %+v", q, p)
	}
	if q.String() != "80:10:2" {
		t.Errorf("WithLoss(2).String() = %q", q.String())
	}
	// Loss options of every kind go, the rest stay.
	r, err := ParseProfile("80:10,down.loss=1/25,up.loss=ge:1/10,qdisc=fq_codel")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseProfile("80:10:2,qdisc=fq_codel")
	if got := r.WithLoss(2); got != want {
		t.Errorf("WithLoss(2) of %s = %+v (%s), want %+v", r, got, got, want)
	}
	if err := p.WithLoss(100).Validate(); err == nil {
		t.Error("WithLoss(100).Validate() = nil, want an error")
	}
	if err := p.WithLimit(0).Validate(); err == nil {
		t.Error("WithLimit(0).Validate() = nil, want an error")
	}
	if _, err := NewProfile(80*time.Millisecond, 10, 1); err != nil {
		t.Errorf("NewProfile: %v", err)
	}
}

func FuzzParseProfile(f *testing.F) {
	for _, s := range []string{"80:10", "80:10:1", "150:2:0.5", "5:1000", "80:10:1@200", "0.001:0.001:99.999", ":", "80:10:", "1e3:1", "80:10@",
		"20:50,up.rate=5", "80:10,loss=1,down.delay=60", "80:10,rate=5,up.rate=5", "80:10,", "80:10,x=1", "80:10,up.limit=0", "80:10@20,down.rate=1",
		"80:10,loss=ge:1/10/50/0.5", "80:10:1,up.loss=ge:0.1/10", "80:10,loss=ge:/",
		"80:10,jitter=5/normal/25", "80:10,loss=1/25", "80:10,dup=1/5", "80:10,reorder=25/50/3", "80:10,jitter=5/uniform/0", "80:10,qdisc=fq_codel,ecn=on,down.flows=8", "80:10,up.qdisc=codel,up.target=1",
		// Units, values the backends apply as written or not, overlaps.
		"80ms:10:1%", "80:10,loss=ge:1%/30%", "80:10,jitter=5ms/normal", "80:0.000008", "80:0.0000001", "80.001:10", "80.002:10", "80:10:0.00001", "80:10:0.000000001",
		"80:10,loss=ge:100/0", "80:10,loss=ge:1/0/50", "80:10,trace=const:5,rate=3", "80:10,down.trace=const:5,up.rate=3", "80:10,jitter=0/normal", "80:10,loss=0/25", "80:10,reorder=0/0/5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProfile(s)
		if err != nil {
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseProfile(%q) returned a %T, want *ProfileError", s, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseProfile(%q) accepted an invalid profile: %v", s, err)
		}
		q, err := ParseProfile(p.String())
		if err != nil {
			t.Fatalf("ParseProfile(%q).String() = %q does not parse: %v", s, p.String(), err)
		}
		if q != p {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v", s, p, p.String(), q)
		}
	})
}

// TestProfileOptions: per-direction options parse, resolve and print back;
// a profile without them resolves to exactly the short form's values in
// both directions.
func TestProfileOptions(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		in, str  string
		down, up Direction
	}{
		// No options: both directions are the short form, as before.
		{"80:10", "80:10", dirOf(40*ms, 10, 0, 110), dirOf(40*ms, 10, 0, 110)},
		{"80:10:1@200", "80:10:1@200", dirOf(40*ms, 10, 1, 200), dirOf(40*ms, 10, 1, 200)},
		// An up rate of its own gets a limit of its own (1.5 BDP + 10).
		{"20:50,up.rate=5", "20:50,up.rate=5", dirOf(10*ms, 50, 0, 135), dirOf(10*ms, 5, 0, 23)},
		// A named base limit holds for both directions.
		{"20:50@30,up.rate=5", "20:50@30,up.rate=5", dirOf(10*ms, 50, 0, 30), dirOf(10*ms, 5, 0, 30)},
		{"80:10,down.delay=60,up.delay=20", "80:10,down.delay=60,up.delay=20", dirOf(60*ms, 10, 0, 160), dirOf(20*ms, 10, 0, 60)},
		// An option without a direction sets both, and prints that way.
		{"80:10,loss=0.5", "80:10,loss=0.5", dirOf(40*ms, 10, 0.5, 110), dirOf(40*ms, 10, 0.5, 110)},
		{"80:10,up.loss=1,down.loss=1", "80:10,loss=1", dirOf(40*ms, 10, 1, 110), dirOf(40*ms, 10, 1, 110)},
		{"80:10:1,up.loss=0,up.limit=50", "80:10:1,up.loss=0,up.limit=50", dirOf(40*ms, 10, 1, 110), dirOf(40*ms, 10, 0, 50)},
		// Options print in a fixed order whatever the order given.
		{"80:10,up.limit=50,down.rate=20", "80:10,down.rate=20,up.limit=50", dirOf(40*ms, 20, 0, DefaultLimit(20, 80*ms)), dirOf(40*ms, 10, 0, 50)},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", c.in, err)
			continue
		}
		if got := p.String(); got != c.str {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", c.in, got, c.str)
		}
		if got := p.Direction(Down); !reflect.DeepEqual(got, c.down) {
			t.Errorf("%s: down %+v, want %+v", c.in, got, c.down)
		}
		if got := p.Direction(Up); !reflect.DeepEqual(got, c.up) {
			t.Errorf("%s: up %+v, want %+v", c.in, got, c.up)
		}
		if rt := p.RoundTrip(); rt != c.down.Delay+c.up.Delay {
			t.Errorf("%s: RoundTrip %v, want %v", c.in, rt, c.down.Delay+c.up.Delay)
		}
		if q, err := ParseProfile(p.String()); err != nil || q != p {
			t.Errorf("%s: round trip through %q gave %+v, %v", c.in, p.String(), q, err)
		}
	}
	if p, _ := ParseProfile("80:10"); !p.Symmetric() {
		t.Error("80:10 is not Symmetric")
	}
	if p, _ := ParseProfile("80:10,up.rate=1"); p.Symmetric() {
		t.Error("80:10,up.rate=1 is Symmetric")
	}

	bad := []struct{ in, says string }{
		{"80:10,", "not key=value"},
		{"80:10,rate", "not key=value"},
		{"80:10,slot=5", `unknown key "slot"`},
		{"80:10,sideways.rate=5", `direction "sideways"`},
		{"80:10,up.rate=0", "up.rate must be positive"},
		{"80:10,up.rate=-1", "not a decimal number"},
		{"80:10,down.loss=100", "down.loss must satisfy"},
		{"80:10,up.limit=0", "is not a whole number between 1 and 1048576"},
		{"80:10,up.limit=1.5", "whole number"},
		{"80:10,rate=5,up.rate=6", "twice"},
		{"80:10,down.delay=0,up.delay=0", "round trip of zero"},
		{"80:10,up.delay=60001", "more than 60000"},
	}
	for _, c := range bad {
		_, err := ParseProfile(c.in)
		if err == nil {
			t.Errorf("ParseProfile(%q) = nil error, want one saying %q", c.in, c.says)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseProfile(%q) = %q, want it to say %q", c.in, err, c.says)
		}
		var pe *ProfileError
		if !errors.As(err, &pe) {
			t.Errorf("ParseProfile(%q) returned a %T, want *ProfileError", c.in, err)
		}
	}
}

func dirOf(delay time.Duration, rate, loss float64, limit int) Direction {
	return Direction{Delay: delay, RateMbit: rate, LossPct: loss, Limit: limit}
}

// TestProfileGE: the Gilbert-Elliott loss option parses with tc's defaults
// (1-h 100%, 1-k 0%), prints back without the defaults, replaces the
// short form's loss in its direction, and is refused when malformed.
func TestProfileGE(t *testing.T) {
	p, err := ParseProfile("80:10:1,up.loss=ge:0.3367/33.33")
	if err != nil {
		t.Fatal(err)
	}
	if s := p.String(); s != "80:10:1,up.loss=ge:0.3367/33.33" {
		t.Errorf("String() = %q", s)
	}
	down, up := p.Direction(Down), p.Direction(Up)
	if down.HasGE || down.LossPct != 1 {
		t.Errorf("down: %+v, want the short form's 1%% independent loss", down)
	}
	if want := (GE{P: 0.3367, R: 33.33, OneMinusH: 100}); !up.HasGE || up.GE != want || up.LossPct != 0 {
		t.Errorf("up: %+v, want GE %+v and no independent loss", up, want)
	}
	if m := up.GE.MeanLoss(); m < 0.9999 || m > 1.0001 {
		t.Errorf("mean loss %.5f%%, want 1%%", m)
	}
	if !p.HasLoss() {
		t.Error("a profile whose only up loss is GE reports no loss")
	}
	if q := p.WithLoss(0); q.HasLoss() || q.String() != "80:10" {
		t.Errorf("WithLoss(0) = %q, HasLoss %v; want 80:10 without loss", q, q.HasLoss())
	}
	for in, str := range map[string]string{
		"80:10,loss=ge:1/10/50/0.5": "80:10,loss=ge:1/10/50/0.5",
		"80:10,loss=ge:1/10/100/0":  "80:10,loss=ge:1/10",
		"80:10,loss=ge:1/10/80":     "80:10,loss=ge:1/10/80",
	} {
		q, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if q.String() != str {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", in, q.String(), str)
		}
		if r, err := ParseProfile(q.String()); err != nil || r != q {
			t.Errorf("%q does not round-trip: %+v, %v", in, r, err)
		}
	}
	for in, says := range map[string]string{
		"80:10,loss=ge:1":                "has 1 parts",
		"80:10,loss=ge:1/2/3/4/5":        "has 5 parts",
		"80:10,loss=ge:x/1":              `ge p "x"`,
		"80:10,loss=ge:101/1":            "more than 100%",
		"80:10,loss=1,up.loss=ge:1/2":    "twice",
		"80:10,up.loss=ge:1/2,up.loss=1": "twice",
	} {
		_, err := ParseProfile(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseProfile(%q) = %v, want an error saying %q", in, err, says)
		}
	}
}

// TestProfileJitter: jitter parses per direction with its distribution
// and correlation, prints back, and resolves.
func TestProfileJitter(t *testing.T) {
	p, err := ParseProfile("80:10,down.jitter=5,up.delay=20")
	if err != nil {
		t.Fatal(err)
	}
	if s := p.String(); s != "80:10,up.delay=20,down.jitter=5" {
		t.Errorf("String() = %q", s)
	}
	if d, u := p.Direction(Down), p.Direction(Up); d.Jitter != 5*time.Millisecond || u.Jitter != 0 || d.Delay != 40*time.Millisecond {
		t.Errorf("down %+v, up %+v", d, u)
	}
	if q, err := ParseProfile("80:10,jitter=2.5"); err != nil || q.String() != "80:10,jitter=2.5" || q.Direction(Up).Jitter != 2500*time.Microsecond {
		t.Errorf("jitter on both: %q, %v", q, err)
	}
	for in, want := range map[string]string{
		"80:10,jitter=5/normal":        "80:10,jitter=5/normal",
		"80:10,jitter=5/uniform":       "80:10,jitter=5",
		"80:10,jitter=5/uniform/25%":   "80:10,jitter=5/uniform/25",
		"80:10,up.jitter=5/pareto/10":  "80:10,up.jitter=5/pareto/10",
		"80:10,jitter=5/paretonormal":  "80:10,jitter=5/paretonormal",
		"80:10,loss=1/25":              "80:10,loss=1/25",
		"80:10:1,up.loss=1/25":         "80:10:1,up.loss=1/25",
		"80:10,dup=1":                  "80:10,dup=1",
		"80:10,down.dup=1%/50%":        "80:10,down.dup=1/50",
		"80:10,reorder=25":             "80:10,reorder=25",
		"80:10,reorder=25/50":          "80:10,reorder=25/50",
		"80:10,reorder=25/0/1":         "80:10,reorder=25",
		"80:10,reorder=25/0/5":         "80:10,reorder=25/0/5",
		"80:10,dup=1,reorder=2,loss=1": "80:10,loss=1,dup=1,reorder=2",
	} {
		p, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if s := p.String(); s != want {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", in, s, want)
		}
	}
	p, err = ParseProfile("80:10,down.jitter=5/normal/25,up.loss=2/30,dup=1/10,down.reorder=3/20/4")
	if err != nil {
		t.Fatal(err)
	}
	d, u := p.Direction(Down), p.Direction(Up)
	if d.JitterDist != "normal" || d.JitterCorr != 25 || u.Jitter != 0 || u.LossPct != 2 || u.LossCorr != 30 || d.LossCorr != 0 ||
		d.DupPct != 1 || d.DupCorr != 10 || u.DupPct != 1 || d.ReorderPct != 3 || d.ReorderCorr != 20 || d.ReorderGap != 4 || u.ReorderPct != 0 {
		t.Errorf("down %+v\nup %+v", d, u)
	}
}

// TestProfileNetemOptionErrors: each bad value names the option and what
// was wrong.
func TestProfileNetemOptionErrors(t *testing.T) {
	for in, says := range map[string]string{
		"80:10,jitter=5/gauss":         `distribution "gauss"`,
		"80:10,jitter=5/normal/101":    "more than 100%",
		"80:10,jitter=5/normal/1/2":    "has 4 parts",
		"80:10,jitter=3000":            "more than 2147 ms",
		"80:10,loss=1/x":               `correlation "x"`,
		"80:10,dup=101":                "more than 100%",
		"80:10,dup=1/2/3":              "has 3 parts",
		"80:10,reorder=5/10/0":         `gap "0"`,
		"80:10,reorder=5/10/1.5":       `gap "1.5"`,
		"80:10,reorder=5/10/2/3":       "has 4 parts",
		"80:10,down.delay=0,reorder=5": "needs a delay",
		"80:10,duplicate=1":            `unknown key "duplicate"`,
	} {
		_, err := ParseProfile(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseProfile(%q) = %v, want an error saying %q", in, err, says)
		}
	}
}

// TestProfileQueue: the queue discipline options parse per direction,
// print back, set the discipline's default limit unless a limit is named,
// send the profile to the emulator, and refuse what does not fit.
func TestProfileQueue(t *testing.T) {
	for in, want := range map[string]string{
		"80:10,qdisc=fq_codel":                       "80:10,qdisc=fq_codel",
		"80:10,qdisc=fifo":                           "80:10",
		"80:10,qdisc=codel,ecn=on,target=2.5":        "80:10,qdisc=codel,target=2.5,ecn=on",
		"80:10,down.qdisc=fq_codel,down.flows=16":    "80:10,down.qdisc=fq_codel,down.flows=16",
		"80:10,qdisc=fq_codel,quantum=300,ecn=off":   "80:10,qdisc=fq_codel,quantum=300",
		"80:10,qdisc=codel,interval=50,up.limit=200": "80:10,up.limit=200,qdisc=codel,interval=50",
	} {
		p, err := ParseProfile(in)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", in, err)
			continue
		}
		if s := p.String(); s != want {
			t.Errorf("ParseProfile(%q).String() = %q, want %q", in, s, want)
		}
	}
	p, err := ParseProfile("80:10,down.qdisc=fq_codel,up.qdisc=codel,ecn=on,up.limit=200")
	if err != nil {
		t.Fatal(err)
	}
	d, u := p.Direction(Down), p.Direction(Up)
	if d.Queue != (Queue{Kind: QueueFQCoDel, ECN: true}) || u.Queue != (Queue{Kind: QueueCoDel, ECN: true}) || d.Limit != 10240 || u.Limit != 200 {
		t.Errorf("down %+v limit %d, up %+v limit %d", d.Queue, d.Limit, u.Queue, u.Limit)
	}
	if q, _ := ParseProfile("80:10@50,qdisc=codel"); q.Direction(Down).Limit != 50 {
		t.Errorf("a limit in the short form is the discipline's: got %d", q.Direction(Down).Limit)
	}
	if why := p.emulatorOnly(); why != "" {
		t.Errorf("netem builds a discipline without jitter (netem, tbf, the discipline), but emulatorOnly() = %q", why)
	}
	jq, _ := ParseProfile("80:10,jitter=2,down.qdisc=fq_codel")
	if why := jq.emulatorOnly(); !strings.Contains(why, "qdisc=fq_codel") || !strings.Contains(why, "jitter") {
		t.Errorf("emulatorOnly() = %q, want the reason naming jitter beside the discipline", why)
	}
	if plain, _ := ParseProfile("80:10,jitter=5/normal,dup=1"); plain.emulatorOnly() != "" {
		t.Errorf("a profile without a discipline needs the emulator: %q", plain.emulatorOnly())
	}
	for in, says := range map[string]string{
		"80:10,qdisc=pie":                 `names "pie"`,
		"80:10,target=5":                  "need qdisc=codel",
		"80:10,qdisc=codel,flows=16":      "fq_codel's",
		"80:10,qdisc=fq_codel,flows=0":    "between 1 and 65536",
		"80:10,qdisc=fq_codel,quantum=10": "between 256",
		"80:10,qdisc=codel,target=0":      "between 0.001",
		"80:10,qdisc=codel,ecn=yes":       "on or off",
		"80:10,qdisc=codel,dup=1":         "not combined",
	} {
		_, err := ParseProfile(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseProfile(%q) = %v, want an error saying %q", in, err, says)
		}
	}
}

// TestJitterCDF checks the configured jitter's distribution function:
// uniform on [-J, J), and the normal table's quartiles and centre.
func TestJitterCDF(t *testing.T) {
	for _, c := range []struct {
		profile string
		x       time.Duration
		want    float64
	}{
		{"80:10,jitter=4", -4 * time.Millisecond, 0},
		{"80:10,jitter=4", -2 * time.Millisecond, 0.25},
		{"80:10,jitter=4", 0, 0.5},
		{"80:10,jitter=4", 4 * time.Millisecond, 1},
		{"80:10,jitter=10/normal", 0, 0.5},
		{"80:10,jitter=10/normal", 10 * time.Millisecond, 0.8413},
		{"80:10,jitter=10/normal", -6745 * time.Microsecond, 0.25},
	} {
		p, err := ParseProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Direction(Down).JitterCDF()(c.x); math.Abs(got-c.want) > 0.005 {
			t.Errorf("%s: CDF(%v) = %.4f, want %.4f", c.profile, c.x, got, c.want)
		}
	}
	if p, _ := ParseProfile("80:10"); p.Direction(Down).JitterCDF() != nil {
		t.Error("a profile without jitter has a jitter CDF")
	}
}

func TestProfileCross(t *testing.T) {
	p, err := ParseProfile("80:10,down.cross=2xcubic+1xquic")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "80:10,down.cross=2xcubic+1xquic" {
		t.Errorf("String = %q", got)
	}
	want := []Cross{{Count: 2, Kind: "cubic"}, {Count: 1, Kind: "quic"}}
	if got := p.Direction(Down).Cross; len(got) != 2 || got[0] != want[0] || got[1] != want[1] || !got[0].TCP() || got[1].TCP() {
		t.Errorf("down cross = %+v, want %+v", got, want)
	}
	if got := p.Direction(Up).Cross; got != nil {
		t.Errorf("up cross = %+v, want none", got)
	}
	for in, want := range map[string]string{
		"80:10,cross=cubic":          "not NxKIND",
		"80:10,cross=0xcubic":        "between 1 and 16",
		"80:10,cross=2xCubic":        `kind "Cubic"`,
		"80:10,cross=1xreno+2xreno":  "names reno twice",
		"80:10,cross=9xreno+9xcubic": "at most 16",
		"80:10,cross=2x":             "not NxKIND",
	} {
		if _, err := ParseProfile(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProfile(%q) = %v, want an error saying %q", in, err, want)
		}
	}
	if _, err := New(t.Context(), p, Options{Backend: BackendInProcess}); err == nil || !strings.Contains(err.Error(), "cross traffic") {
		t.Errorf("in process: err = %v, want one refusing the cross traffic", err)
	}
}
