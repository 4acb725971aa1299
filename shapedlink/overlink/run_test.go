package overlink

import (
	"context"
	"strings"
	"testing"
)

// TestRunRefusesBadConfig: a Config Run cannot use is refused before
// anything starts, saying which field is wrong; the record says so too.
func TestRunRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"negative grace", Config{Grace: -1}, "Config.ServerWait and Config.Grace must not be negative"},
		{"negative wait", Config{Server: "sleep 1", ServerWait: -1}, "Config.ServerWait and Config.Grace must not be negative"},
		{"none with a port", Config{Server: "sleep 1", ServerPort: ServerPort{None: true, Port: 80}}, "ServerPort"},
		{"unknown proto", Config{Server: "sleep 1", ServerPort: ServerPort{Proto: "sctp", Port: 80}}, "ServerPort"},
		{"proto without a port", Config{Server: "sleep 1", ServerPort: ServerPort{Proto: "tcp"}}, "ServerPort"},
		{"port out of range", Config{Server: "sleep 1", ServerPort: ServerPort{Port: 70000}}, "ServerPort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Client = []string{"true"}
			rec, err := Run(context.Background(), tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error saying %q", err, tc.want)
			}
			if rec.Error != err.Error() || rec.ExitCode != -1 || rec.Backend != "" || rec.Finished.IsZero() {
				t.Errorf("record %+v: want the error, no exit status and no link", rec)
			}
		})
	}
}
