package linkspec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A profile holds only values that both backends apply as written; any
// other is refused, never rounded. netem takes a rate in whole bytes per
// second (the emulator in bits per second), a delay or jitter in
// nanoseconds (TCA_NETEM_LATENCY64 and TCA_NETEM_JITTER64; the emulator
// in nanoseconds too), CoDel's times in microseconds and a probability in
// steps of 1/(2^32-1). So a profile's times are whole microseconds
// (rtt_ms such that each direction's half is one too), its rates whole
// bytes per second, and a percentage is zero or at least MinPct.

// MinPct is the smallest non-zero percentage a profile accepts, a
// probability of one in ten million. netem holds a probability as a
// fraction of 2^32-1, so it applies one of at least MinPct within 0.25%
// of its value; a smaller one would be changed by more, down to zero
// (no loss at all) below 100/(2^32-1) percent.
const MinPct = 0.00001

func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDecimal accepts digits with at most one '.', at least one digit.
func parseDecimal(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("is empty")
	}
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, errors.New("is not a decimal number")
		}
	}
	if digits == 0 || dots > 1 {
		return 0, errors.New("is not a decimal number")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, errors.New("is out of range")
	}
	return v, nil
}

// parseFixed reads s, a decimal as parseDecimal accepts it, as a count of
// 10^-places units. exact is false when s has more decimals than places
// (trailing zeros aside).
func parseFixed(s string, places int) (n int64, exact bool, err error) {
	if _, err := parseDecimal(s); err != nil {
		return 0, false, err
	}
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > places {
		return 0, false, nil
	}
	digits := strings.TrimLeft(whole+frac+strings.Repeat("0", places-len(frac)), "0")
	if digits == "" {
		return 0, true, nil
	}
	n, err = strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false, errors.New("is out of range")
	}
	return n, true, nil
}

// ParseMs reads a time in milliseconds, which may end in "ms", as a whole
// number of microseconds.
func ParseMs(s string) (time.Duration, error) {
	n, exact, err := parseFixed(strings.TrimSuffix(s, "ms"), 3)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q %v", s, err)
	case !exact:
		return 0, fmt.Errorf("%q is not a whole number of microseconds (at most three decimals of ms), the unit the backends apply", s)
	case n > int64(time.Hour/time.Microsecond):
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return time.Duration(n) * time.Microsecond, nil
}

// ParseRate reads a rate in Mbit/s that is zero or a whole number of bytes
// per second (zero is left to the caller to refuse).
func ParseRate(s string) (float64, error) {
	v, err := parseDecimal(s)
	if err != nil {
		return 0, fmt.Errorf("%q %v", s, err)
	}
	bits, exact, err := parseFixed(s, 6)
	if err != nil {
		return 0, fmt.Errorf("%q %v", s, err)
	}
	if v != 0 && (!exact || bits%8 != 0) {
		return 0, fmt.Errorf("%q Mbit/s %s", s, RateReason(v))
	}
	return v, nil
}

// WholeBytes reports whether mbit is a whole, non-zero number of bytes per
// second, to float64's precision.
func WholeBytes(mbit float64) bool {
	b := mbit * 1e6 / 8
	return math.Round(b) >= 1 && math.Abs(b-math.Round(b)) <= 1e-12*b
}

// RateReason says why a rate of mbit Mbit/s cannot be applied as written
// and which rates near it can.
func RateReason(mbit float64) string {
	b := mbit * 1e6 / 8
	lo := math.Floor(b)
	near := FmtNum((lo + 1) * 8 / 1e6)
	if lo >= 1 {
		near = FmtNum(lo*8/1e6) + " or " + near
	}
	return fmt.Sprintf("is %s bytes per second; netem applies a rate in whole bytes per second (and the emulator in bits), so it would not be this rate: use %s",
		strconv.FormatFloat(b, 'g', 15, 64), near)
}

// ParsePct reads a percentage between 0 and 100, which may end in "%".
func ParsePct(s string) (float64, error) {
	v, err := parseDecimal(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, fmt.Errorf("%q %v (percent)", s, err)
	}
	if r := PctReason(v); r != "" {
		return 0, fmt.Errorf("%q %s", s, r)
	}
	return v, nil
}

// PctReason says why v is not a percentage a profile accepts, or "".
func PctReason(v float64) string {
	switch {
	case !(v >= 0):
		return "is negative or not a number"
	case v > 100:
		return "is more than 100%"
	case v > 0 && v < MinPct:
		return fmt.Sprintf("is below %s%% (MinPct), the smallest percentage netem applies within 0.25%% (it holds a probability in steps of 1/(2^32-1)); use 0 or at least %s", FmtNum(MinPct), FmtNum(MinPct))
	}
	return ""
}

// MicrosReason says why d, a time the backends apply, is not a whole
// number of microseconds, or "".
func MicrosReason(d time.Duration) string {
	if d%time.Microsecond == 0 {
		return ""
	}
	return fmt.Sprintf("is %s ms, not a whole number of microseconds, the unit the backends apply", FmtNum(float64(d)/1e6))
}

// FmtNum writes f as a profile writes numbers: plain decimals, no
// exponent, no trailing zeros.
func FmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
