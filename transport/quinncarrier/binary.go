package quinncarrier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// BinaryEnv names the environment variable that, when set, is the path of
// the quicbench-quinn program to run instead of building one.
const BinaryEnv = "QUICBENCH_QUINN"

// ErrUnavailable is returned, wrapped, by Binary when the program cannot
// be built here: cargo, or Debian's packaged crates, are missing (the
// error names the package to install).
var ErrUnavailable = errors.New("quinncarrier: the quinn carrier cannot be built here")

var built struct {
	sync.Mutex
	path string
}

// Binary returns the quicbench-quinn program: $QUICBENCH_QUINN when set,
// or else the one quinn/build.sh builds (offline, from Debian's packaged
// crates) in the repository around the working directory, building it
// first when its sources changed. The build is done once per process.
func Binary(ctx context.Context) (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("quinncarrier: $%s=%s is not an executable file", BinaryEnv, p)
		}
		return p, nil
	}
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		return built.path, nil
	}
	script, err := buildScript()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 3 {
			return "", fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return "", fmt.Errorf("quinncarrier: %s failed: %w: %s", script, err, msg)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	built.path = lines[len(lines)-1]
	return built.path, nil
}

// buildScript finds quinn/build.sh in the repository that holds the
// working directory.
func buildScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		s := filepath.Join(dir, "quinn", "build.sh")
		if _, err := os.Stat(s); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return s, nil
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("%w: no quinn/build.sh in a directory above the working directory; run from quicbench's repository, or set $%s to a built quicbench-quinn", ErrUnavailable, BinaryEnv)
		}
		dir = up
	}
}
