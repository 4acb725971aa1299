package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m, main) }

// Bad input is refused before anything runs, with exit 2 and the reason.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-flows", "udp"}, `flow "udp"`},
		{[]string{"-losses", "x"}, `"x" is not a number`},
		{[]string{"-repeats", "0", "-flows", "quic"}, "repeats 0"},
		{[]string{"-quicreno-beta", "100"}, "beta 100%"},
		{[]string{"-flows", "quic tcp-quicreno2"}, `flow "tcp-quicreno2"`},
		{[]string{"-quicreno-iw", "4294967297"}, `invalid value "4294967297" for flag -quicreno-iw`},
		{[]string{"-quicreno-iw", "4294967296"}, `invalid value "4294967296" for flag -quicreno-iw`},
		{[]string{"-quicreno-beta", "4294967366"}, `invalid value "4294967366" for flag -quicreno-beta`},
		{[]string{"-quicreno-iw", "-1"}, `invalid value "-1" for flag -quicreno-iw`},
	} {
		r := cmdtest.Run(t, 0, dir, append(tc.args, "-workdir", filepath.Join(dir, "w"))...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}

// Without root the quicreno flow is refused up front, saying why.
func TestControllerNeedsRoot(t *testing.T) {
	cmdtest.NeedUnprivileged(t)
	dir := cmdtest.OpenDir(t, cmdtest.Nobody)
	r := cmdtest.Run(t, cmdtest.Nobody, dir, "-flows", "tcp-quicreno", "-workdir", filepath.Join(dir, "w"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "needs root") {
		t.Errorf("exit %d, stderr %q; want 2 and a reason naming root", r.Code, r.Stderr)
	}
}
