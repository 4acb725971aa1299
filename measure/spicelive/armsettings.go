package spicelive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shakenfist/quicbench/measure"
)

// armSetting is a deployment setting an arm may carry, written after its
// transport with a plus sign: "tcp-bbr+defer10+bounded". An arm that
// carries settings runs beside the same transport without them in one
// sitting, so that the setting is compared within it.
type armSetting struct {
	// Name is the setting's name in an arm.
	Name string
	// ServerOptions are spice-server settings it adds (xsession.ParseServerOptions).
	ServerOptions []string
	// NotSentLowat and SpiceRcvBuf are the tunnel's buffers it sets, as
	// Config's fields of the same names.
	NotSentLowat, SpiceRcvBuf int
	// About says what it does, for the help.
	About string
}

// armSettings are the settings an arm may carry.
var armSettings = []armSetting{
	{Name: "defer10", ServerOptions: []string{"deferred-fps=10"}, About: "spice-server renders at most 10 frames a second (deferred-fps=10)"},
	{Name: "bounded", NotSentLowat: 16 << 10, SpiceRcvBuf: 64 << 10,
		About: "the tunnel's buffers bounded: TCP_NOTSENT_LOWAT 16 KiB on the TCP carriers (not on quic's or quinn's), SO_RCVBUF 64 KiB towards spice-server (every arm)"},
	{Name: "stream", ServerOptions: []string{"streaming-video=all"}, About: "spice-server sends every frequently redrawn area as video (streaming-video=all)"},
}

// splitArm returns the transport arm of a (what carries the channels) and
// the settings it carries, in the order written.
func splitArm(a measure.Arm) (measure.Arm, []armSetting, error) {
	parts := strings.Split(string(a), "+")
	base, err := measure.ParseCarrierArm(parts[0])
	if err != nil {
		return "", nil, err
	}
	var out []armSetting
	for _, name := range parts[1:] {
		i := slices.IndexFunc(armSettings, func(s armSetting) bool { return s.Name == name })
		switch {
		case i < 0:
			names := make([]string, len(armSettings))
			for k, s := range armSettings {
				names[k] = "+" + s.Name
			}
			return "", nil, fmt.Errorf("arm %s: %q is not a setting an arm carries: want %s", a, "+"+name, strings.Join(names, ", "))
		case slices.ContainsFunc(out, func(s armSetting) bool { return s.Name == name }):
			return "", nil, fmt.Errorf("arm %s names +%s twice", a, name)
		}
		out = append(out, armSettings[i])
	}
	return measure.Arm(base), out, nil
}

// transportArm is a's transport, a being an arm Validate accepted.
func transportArm(a measure.Arm) measure.Arm {
	base, _, _ := strings.Cut(string(a), "+")
	return measure.Arm(base)
}

// armRun is what a run of arm sets beyond c: spice-server's options and the
// tunnel's buffers, c's own with the arm's settings over them.
type armRun struct {
	serverOptions []string
	notSentLowat  int
	spiceRcvBuf   int
}

// forArm is c's settings with arm's over them.
func (c Config) forArm(arm measure.Arm) armRun {
	r := armRun{serverOptions: slices.Clone(c.ServerOptions), notSentLowat: c.NotSentLowat, spiceRcvBuf: c.SpiceRcvBuf}
	_, sets, _ := splitArm(arm)
	for _, s := range sets {
		for _, o := range s.ServerOptions {
			name, _, _ := strings.Cut(o, "=")
			r.serverOptions = slices.DeleteFunc(r.serverOptions, func(have string) bool { return strings.HasPrefix(have, name+"=") })
			r.serverOptions = append(r.serverOptions, o)
		}
		if s.NotSentLowat > 0 {
			r.notSentLowat = s.NotSentLowat
		}
		if s.SpiceRcvBuf > 0 {
			r.spiceRcvBuf = s.SpiceRcvBuf
		}
	}
	return r
}
