package tracetest

import "testing"

// fakeT records whether a check failed.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }

// NoTrigger passes an empty trigger file and fails one with a trigger.
func TestNoTrigger(t *testing.T) {
	for _, c := range []struct {
		text string
		fail bool
	}{
		{"# Available triggers:\n# traceon traceoff\n", false},
		{"", false},
		{"# Available triggers:\ntraceoff if buf ~ \"quicbench-late*\"\n", true},
	} {
		f := &fakeT{}
		NoTrigger(f, c.text)
		if f.failed != c.fail {
			t.Errorf("NoTrigger(%q) failed %v, want %v", c.text, f.failed, c.fail)
		}
	}
}
