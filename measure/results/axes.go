package results

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Limits on what Cell.Axes records, so that each value names a directory
// apart: an axis name is a lower-case letter and then letters and digits;
// a value is lower-case letters, digits, '.', '+' and '-' (no '_', which
// separates the parts of a directory name, and no space, which separates
// the pairs of Cell.Axes).
var (
	axisName  = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)
	axisValue = regexp.MustCompile(`^[a-z0-9.+-]{1,64}$`)
)

// axisPair is one value of a matrix's own axis, as a cell records it
// (Cell.Axes).
type axisPair struct {
	// Axis is the axis's name ("mtu"), Value its value in this cell
	// ("1200").
	Axis, Value string
}

// CheckAxis says why a cell cannot record value for the axis name, or
// returns nil: a name is a lower-case letter and then up to 31 letters
// and digits; a value is 1 to 64 lower-case letters, digits, '.', '+' and
// '-'.
func CheckAxis(name, value string) error {
	if !axisName.MatchString(name) {
		return fmt.Errorf("axis name %q: give a lower-case letter and then letters and digits, at most 32 in all (such as mtu)", name)
	}
	if !axisValue.MatchString(value) {
		return fmt.Errorf("axis %s: value %q: give 1 to 64 lower-case letters, digits, '.', '+' and '-' (such as 1200 or 0.5)", name, value)
	}
	return nil
}

// WithAxis returns c recording value for the axis name after the values
// it already records (Cell.Axes). Check both with CheckAxis first; a cell
// recording an axis twice does not validate.
func (c Cell) WithAxis(name, value string) Cell {
	pair := name + "=" + value
	if c.Axes == "" {
		c.Axes = pair
	} else {
		c.Axes += " " + pair
	}
	return c
}

// axisValues are the values c records for a matrix's own axes, in the
// matrix's order; nil when it records none.
func (c Cell) axisValues() []axisPair {
	var out []axisPair
	for _, f := range strings.Fields(c.Axes) {
		name, value, _ := strings.Cut(f, "=")
		out = append(out, axisPair{Axis: name, Value: value})
	}
	return out
}

// axesSuffix is what Cell.Axes adds to a directory name: "_name-value" for
// each axis, in order ("_mtu-1200_tls-1.3").
func (c Cell) axesSuffix() string {
	var b strings.Builder
	for _, v := range c.axisValues() {
		b.WriteString("_" + v.Axis + "-" + v.Value)
	}
	return b.String()
}

// axesTitle is what Cell.Axes adds to a title: ", name value" for each
// axis.
func (c Cell) axesTitle() string {
	var b strings.Builder
	for _, v := range c.axisValues() {
		b.WriteString(", " + v.Axis + " " + v.Value)
	}
	return b.String()
}

// validateAxes checks that Cell.Axes is pairs of name=value, each
// passing CheckAxis, separated by single spaces, each axis once.
func (c Cell) validateAxes() error {
	if c.Axes == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(c.Axes, " ") {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("cell axes %q: %q is not name=value", c.Axes, f)
		}
		if err := CheckAxis(name, value); err != nil {
			return fmt.Errorf("cell axes %q: %w", c.Axes, err)
		}
		if seen[name] {
			return fmt.Errorf("cell axes %q: axis %s is given twice", c.Axes, name)
		}
		seen[name] = true
	}
	return nil
}

// CompareAxes orders two cells by the values of their own axes, axis by
// axis: by number where both values are a number followed by the same
// unit ("5ms" before "20ms", "0.5" before "2"), else as text.
func CompareAxes(a, b Cell) int {
	va, vb := a.axisValues(), b.axisValues()
	for i := range min(len(va), len(vb)) {
		if c := strings.Compare(va[i].Axis, vb[i].Axis); c != 0 {
			return c
		}
		na, ua, oka := leadingNumber(va[i].Value)
		nb, ub, okb := leadingNumber(vb[i].Value)
		if oka && okb && ua == ub {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		}
		if c := strings.Compare(va[i].Value, vb[i].Value); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(va), len(vb))
}

// leadingNumber splits s into the longest number it starts with and the
// rest, if it starts with one.
func leadingNumber(s string) (float64, string, bool) {
	for i := len(s); i > 0; i-- {
		if f, err := strconv.ParseFloat(s[:i], 64); err == nil && !math.IsNaN(f) {
			return f, s[i:], true
		}
	}
	return 0, s, false
}
