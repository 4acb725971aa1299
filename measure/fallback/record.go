package fallback

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// The arms, in the order they run and are shown: measure's tcp arm, and
// fallback's own two, which dial with transport.DialFallback.
const (
	// armTCP dials per-channel TCP directly (transport.Dial, transport.ArmTCP).
	armTCP = measure.TCP
	// armFallbackOpen dials with transport.DialFallback, UDP open: QUIC is
	// expected to be used, so it is the QUIC reference through the same
	// dialer a deployment would use.
	armFallbackOpen measure.Arm = "fallback-open"
	// armFallbackBlocked dials with transport.DialFallback while every UDP
	// packet leaving the client namespace is dropped.
	armFallbackBlocked measure.Arm = "fallback-blocked"
)

// Arms lists every arm in run order.
func Arms() []measure.Arm { return []measure.Arm{armTCP, armFallbackOpen, armFallbackBlocked} }

// ParseArms reads a space-separated list of arms, refusing an unknown
// one and an empty list.
func ParseArms(s string) ([]measure.Arm, error) {
	var out []measure.Arm
	for _, a := range strings.Fields(s) {
		if !slices.Contains(Arms(), measure.Arm(a)) {
			return nil, fmt.Errorf("unknown arm %q: want %s", a, armList())
		}
		out = append(out, measure.Arm(a))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no arms: give at least one of %s", armList())
	}
	return out, nil
}

func armList() string {
	var names []string
	for _, a := range Arms() {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}

// schemaVersion is written into every record.
const schemaVersion = 1

// Connect is one timed connect.
type Connect struct {
	Index   int       `json:"index"`
	Started time.Time `json:"started"`
	// Elapsed is the client's time from just before the dial until it
	// returned a usable session (every channel connected and its header
	// written) or an error.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Arm is the transport arm of the session obtained.
	Arm transport.Arm `json:"arm,omitempty"`
	// SessionConnect is that session's own ConnectTime: from its arm's
	// first dial, so for a fallback it leaves out the QUIC attempt.
	SessionConnect time.Duration `json:"session_connect_ns,omitempty"`
	// Probe is a one-byte round trip on channel 0 right after the
	// connect (not part of Elapsed): proof the session carries data.
	Probe time.Duration `json:"probe_ns,omitempty"`
	// Fallback is DialFallback's record, for the fallback arms.
	Fallback *transport.FallbackResult `json:"fallback,omitempty"`
	Err      string                    `json:"error,omitempty"`
}

// Dropped is a filter's drop counter.
type Dropped struct {
	Filter  string `json:"filter"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Record is everything one profile and arm measured; it is written as
// <workdir>/<profile dir>/<arm>.json.
type Record struct {
	Schema int `json:"schema"`
	// Profile is the link profile with its loss, in shapedlink's grammar.
	Profile  string        `json:"profile"`
	Arm      measure.Arm   `json:"arm"`
	Connects int           `json:"connects"`
	Channels int           `json:"channels"`
	GiveUp   time.Duration `json:"give_up_ns"`
	Gap      time.Duration `json:"gap_ns"`
	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	// Failed, when set, says why the arm could not be measured.
	Failed string       `json:"failed,omitempty"`
	Link   results.Link `json:"link"`
	// UDPBlocked is the client-egress UDP drop counter (fallback-blocked
	// only), read after the last connect.
	UDPBlocked *Dropped `json:"udp_blocked,omitempty"`
	// ServerSessions counts the sessions the server accepted, per arm.
	ServerSessions map[transport.Arm]int `json:"server_sessions,omitempty"`
	ServerErrors   []string              `json:"server_errors,omitempty"`
	Results        []Connect             `json:"results"`
	Host           json.RawMessage       `json:"host,omitempty"`
}

// profileDir names a profile's directory: "80ms-10mbit_loss0".
func profileDir(rttMS, rateMbit, lossPct float64) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return fmt.Sprintf("%sms-%smbit_loss%s", f(rttMS), f(rateMbit), f(lossPct))
}

// Load reads every record under workdir, at <profile dir>/<arm>.json,
// refusing one of another schemaVersion and one that names another
// profile or arm than its place (a copy), and fails when there is none.
func Load(workdir string) ([]Record, error) {
	out, ignored, err := results.ReadPlaced(workdir, "*/*.json", recordPlace)
	switch {
	case err != nil:
		return nil, err
	case len(ignored) > 0:
		return nil, fmt.Errorf("%s (%d such records); move them out of %s", ignored[0], len(ignored), workdir)
	case len(out) == 0:
		return nil, fmt.Errorf("no records under %s: is it a fallback results directory?", workdir)
	}
	return out, nil
}

// recordPlace is where r belongs, relative to the work directory.
func recordPlace(r Record) (string, error) {
	if r.Schema != schemaVersion {
		return "", fmt.Errorf("schema %d, this command reads %d", r.Schema, schemaVersion)
	}
	p, err := shapedlink.ParseProfile(r.Profile)
	if err != nil {
		return "", fmt.Errorf("profile %q: %w", r.Profile, err)
	}
	return path.Join(profileDirOf(p), string(r.Arm)+".json"), nil
}

// durs are durations with the summary statistics Summarise reports.
type durs []time.Duration

// median is the middle value, or the mean of the two middle values for an
// even count.
func (d durs) median() time.Duration {
	s := d.sorted()
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (d durs) sorted() durs {
	s := append(durs(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }

// armStats are one record's figures.
type armStats struct {
	ok, failed      int
	elapsed         durs
	tcpStart, tcpIn durs // fallback: when TCP started, and Ready - TCPStarted
	outcomes        map[transport.QUICOutcome]int
	arms            map[transport.Arm]int
}

func statsOf(r Record) armStats {
	st := armStats{outcomes: map[transport.QUICOutcome]int{}, arms: map[transport.Arm]int{}}
	for _, c := range r.Results {
		if c.Err != "" {
			st.failed++
			continue
		}
		st.ok++
		st.elapsed = append(st.elapsed, c.Elapsed)
		st.arms[c.Arm]++
		if f := c.Fallback; f != nil {
			st.outcomes[f.QUICOutcome]++
			if f.TCPTried {
				st.tcpStart = append(st.tcpStart, f.TCPStarted)
				st.tcpIn = append(st.tcpIn, f.Ready-f.TCPStarted)
			}
		}
	}
	return st
}

// Summarise writes the summary of records as markdown: per profile and
// arm, the median connect time with its range, the penalty against direct
// TCP, how each QUIC attempt ended and what carried the session, and the
// UDP drop counter.
func Summarise(w io.Writer, records []Record) error {
	if len(records) == 0 {
		return errors.New("nothing to summarise")
	}
	order := map[measure.Arm]int{}
	for i, a := range Arms() {
		order[a] = i
	}
	sort.SliceStable(records, func(i, j int) bool {
		a, b := records[i], records[j]
		if a.Profile != b.Profile {
			return profileLess(a.Profile, b.Profile)
		}
		return order[a.Arm] < order[b.Arm]
	})
	fmt.Fprintln(w, "| profile | arm | connects ok | median ms | min–max ms | vs tcp median ms | "+
		"QUIC used / failed / gave up | session over quic / tcp | UDP dropped (packets) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	tcpMedian := map[string]time.Duration{}
	for _, r := range records {
		if r.Arm == armTCP && r.Failed == "" {
			if st := statsOf(r); st.ok > 0 {
				tcpMedian[r.Profile] = st.elapsed.median()
			}
		}
	}
	var notes []string
	for _, r := range records {
		if r.Failed != "" {
			fmt.Fprintf(w, "| %s | %s | failed | | | | | | |\n", r.Profile, r.Arm)
			notes = append(notes, fmt.Sprintf("%s %s failed: %s", r.Profile, r.Arm, r.Failed))
			continue
		}
		st := statsOf(r)
		med, rng, vs := "", "", ""
		if st.ok > 0 {
			s := st.elapsed.sorted()
			med, rng = ms(st.elapsed.median()), ms(s[0])+"–"+ms(s[len(s)-1])
			if t, ok := tcpMedian[r.Profile]; ok && r.Arm != armTCP {
				vs = fmt.Sprintf("%+.1f", float64(st.elapsed.median()-t)/1e6)
			}
		}
		outcomes := ""
		if r.Arm != armTCP {
			outcomes = fmt.Sprintf("%d / %d / %d", st.outcomes[transport.QUICUsed], st.outcomes[transport.QUICFailed], st.outcomes[transport.QUICGaveUp])
		}
		dropped := ""
		if r.UDPBlocked != nil {
			dropped = strconv.FormatUint(r.UDPBlocked.Packets, 10)
		}
		fmt.Fprintf(w, "| %s | %s | %d/%d | %s | %s | %s | %s | %d / %d | %s |\n", r.Profile, r.Arm, st.ok, r.Connects,
			med, rng, vs, outcomes, st.arms[transport.ArmQUIC], st.arms[transport.ArmTCP], dropped)
		if st.failed > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: %d connects failed (see the record)", r.Profile, r.Arm, st.failed))
		}
	}
	// Where the fallback's time goes.
	first := true
	for _, r := range records {
		st := statsOf(r)
		if r.Failed != "" || len(st.tcpStart) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| profile | arm | give-up | TCP started, median (min–max) ms | TCP part, median (min–max) ms |")
			fmt.Fprintln(w, "|---|---|---|---|---|")
			first = false
		}
		a, b := st.tcpStart.sorted(), st.tcpIn.sorted()
		fmt.Fprintf(w, "| %s | %s | %v | %s (%s–%s) | %s (%s–%s) |\n", r.Profile, r.Arm, r.GiveUp,
			ms(a.median()), ms(a[0]), ms(a[len(a)-1]), ms(b.median()), ms(b[0]), ms(b[len(b)-1]))
	}
	for _, n := range notes {
		fmt.Fprintln(w)
		fmt.Fprintln(w, n)
	}
	return nil
}

// profileLess orders profile strings by RTT, then rate (descending), then
// loss, falling back to text when one does not parse.
func profileLess(a, b string) bool {
	pa, pb := profileNums(a), profileNums(b)
	if pa == nil || pb == nil {
		return a < b
	}
	if pa[0] != pb[0] {
		return pa[0] < pb[0]
	}
	if pa[1] != pb[1] {
		return pa[1] > pb[1]
	}
	return pa[2] < pb[2]
}

func profileNums(s string) []float64 {
	s, _, _ = strings.Cut(s, "@")
	f := strings.Split(s, ":")
	out := []float64{0, 0, 0}
	for i, x := range f {
		if i > 2 {
			return nil
		}
		v, err := strconv.ParseFloat(x, 64)
		if err != nil || math.IsNaN(v) {
			return nil
		}
		out[i] = v
	}
	return out
}

// existing reads the record at path, a job's recordPath, if there is one.
func existing(path string) (*Record, error) {
	r, err := results.ReadExtra[Record](filepath.Dir(path), filepath.Base(path))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return &r, nil
}
