package cmdtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// envAsCommand, set in a test binary's environment, makes Main run the
// command instead of the tests.
const envAsCommand = "QUICBENCH_TEST_AS_COMMAND"

// Nobody is the user unprivileged runs are made as.
const Nobody = 65534

// Main is the body of a command package's TestMain: the command's main when
// Run started this binary, the tests otherwise.
func Main(m *testing.M, main func()) {
	if os.Getenv(envAsCommand) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Result is one run of a command.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// String says how the run ended and what it printed on stderr.
func (r Result) String() string {
	return fmt.Sprintf("exit %d; stderr:\n%s", r.Code, strings.TrimRight(r.Stderr, "\n"))
}
