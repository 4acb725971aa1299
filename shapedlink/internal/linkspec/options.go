package linkspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DirOptions are the options of one direction that differ from the base
// profile, each kept as the text String writes for it. The zero value
// sets nothing. It is a plain value, so a Profile holding two stays
// comparable.
type DirOptions struct {
	vals [len(options)]string
}

func index(key string) int {
	for i := range options {
		if options[i].Key == key {
			return i
		}
	}
	return -1
}

// Keys lists the option keys in String's order.
func Keys() []string {
	out := make([]string, len(options))
	for i, o := range options {
		out[i] = o.Key
	}
	return out
}

// Grammar is the form of the options, each after a comma:
// [down.|up.]{key=form|...}.
func Grammar() string {
	forms := make([]string, len(options))
	for i, o := range options {
		forms[i] = o.Key + "=" + o.Form
	}
	return "[down.|up.]{" + strings.Join(forms, "|") + "}"
}

// Help lists the options one a line, "key=form  what it sets", for a
// command's -h and for docs.
func Help() string {
	var b strings.Builder
	for _, o := range options {
		fmt.Fprintf(&b, "  %s=%s\n      %s\n", o.Key, o.Form, o.Doc)
	}
	return b.String()
}

// ErrUnknownKey is wrapped by Set for a key that is not an option.
var ErrUnknownKey = errors.New("unknown key")

// Set reads key=val into o: the value is parsed (a file it names is read)
// and kept as String writes it; a value that records nothing (qdisc=fifo,
// ecn=off) leaves key unset.
func (o *DirOptions) Set(key, val string) error {
	i := index(key)
	if i < 0 {
		return fmt.Errorf("%w %q; the keys are %s (each may follow down. or up.)", ErrUnknownKey, key, strings.Join(Keys(), ", "))
	}
	opt := options[i]
	var d Direction
	if err := opt.parse(val, &d); err != nil {
		return err
	}
	if opt.load != nil {
		if err := opt.load(val); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "shapedlink: "))
		}
	}
	o.vals[i] = opt.format(d)
	return nil
}

// Clear unsets keys.
func (o *DirOptions) Clear(keys ...string) {
	for _, k := range keys {
		if i := index(k); i >= 0 {
			o.vals[i] = ""
		}
	}
}

// Value is key's value as String writes it, and whether it is set.
func (o DirOptions) Value(key string) (string, bool) {
	i := index(key)
	if i < 0 || o.vals[i] == "" {
		return "", false
	}
	return o.vals[i], true
}

// Has reports whether key is set.
func (o DirOptions) Has(key string) bool {
	_, ok := o.Value(key)
	return ok
}

// IsZero reports whether o sets nothing.
func (o DirOptions) IsZero() bool { return o == DirOptions{} }

// Apply sets in d every option o sets, in options' order.
func (o DirOptions) Apply(d *Direction) {
	for i, v := range o.vals {
		if v != "" {
			// A value kept by Set parses again, and a file is not
			// read again: it was read when the option was set.
			_ = options[i].parse(v, d)
		}
	}
}

// NotOnNetem says why netem cannot build d, as the end of a sentence
// that begins "the down direction", or "". (Last option first: a trace
// is the plainest reason.)
func NotOnNetem(d Direction) string {
	for i := len(options) - 1; i >= 0; i-- {
		o := options[i]
		if o.NotOnNetem != nil {
			if why := o.NotOnNetem(d); why != "" {
				return why
			}
		}
	}
	return ""
}

// pctCorrOf reads pct or pct/correlation_pct; form names the accepted
// forms for the error.
func pctCorrOf(val, form string) (pct, corr float64, err error) {
	parts := strings.Split(val, "/")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("%q has %d parts; want %s", val, len(parts), form)
	}
	return pctCorr(parts)
}

// pctCorr reads parts[0] as a percentage and parts[1], when there, as its
// correlation.
func pctCorr(parts []string) (pct, corr float64, err error) {
	if pct, err = ParsePct(parts[0]); err != nil {
		return 0, 0, err
	}
	if len(parts) > 1 {
		if corr, err = ParsePct(parts[1]); err != nil {
			return 0, 0, fmt.Errorf("correlation %v", err)
		}
	}
	return pct, corr, nil
}

// parseCount reads a whole number between lo and hi.
func parseCount(val string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(val)
	switch {
	case err != nil || !IsDigits(val):
		return 0, fmt.Errorf("%q is not a whole number", val)
	case n < lo || n > hi:
		return 0, fmt.Errorf("%q is not a whole number between %d and %d", val, lo, hi)
	}
	return n, nil
}

// parseCoDelTime reads CoDel's target or interval: whole microseconds in
// ms, at least one and at most MaxRTT.
func parseCoDelTime(val string) (time.Duration, error) {
	d, err := ParseMs(val)
	if err != nil || d < time.Microsecond || d > MaxRTT {
		return 0, fmt.Errorf("%q is not a whole number of microseconds in ms between 0.001 and %d", val, MaxRTT.Milliseconds())
	}
	return d, nil
}

// corrSuffix is "/corr" when a correlation is set.
func corrSuffix(corr float64) string {
	if corr == 0 {
		return ""
	}
	return "/" + FmtNum(corr)
}

func msOrNone(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return FmtNum(float64(d) / 1e6)
}

func countOrNone(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// pctTerm is " name v%" (tc's form of a probability), or "" for zero; with
// an empty name, " v%".
func pctTerm(name string, v float64) string {
	if v <= 0 {
		return ""
	}
	return name + " " + pctWord(v)
}

func pctWord(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + "%" }

// fmtDuration writes d as tc does: "40ms", "40.5ms", "500us".
func fmtDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0ms"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/1e3, 'f', -1, 64) + "us"
	}
}

// fmtRate writes bits per second as tc does: "10Mbit", "1Gbit", "2.5Mbit".
func fmtRate(r uint64) string {
	switch {
	case r%1_000_000_000 == 0:
		return strconv.FormatUint(r/1_000_000_000, 10) + "Gbit"
	case r%1_000_000 == 0:
		return strconv.FormatUint(r/1_000_000, 10) + "Mbit"
	case r%1_000 == 0:
		return strconv.FormatUint(r/1_000, 10) + "Kbit"
	case r >= 1_000_000:
		return strconv.FormatFloat(float64(r)/1e6, 'f', -1, 64) + "Mbit"
	default:
		return strconv.FormatUint(r, 10) + "bit"
	}
}
