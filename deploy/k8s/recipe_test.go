package k8s

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestImageRecipeAgrees: the Containerfile builds on nothing from a
// registry, copies the tree deploy/image/build stages, the one tree
// .dockerignore lets into the context, and works where the manifests'
// workingDir and the commands (Dir/bin) are.
func TestImageRecipeAgrees(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cf, ignore, build := read("../../Containerfile"), read("../../.dockerignore"), read("../image/build")
	var from, copySrc, workdir string
	for _, l := range strings.Split(cf, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "FROM":
			from = f[1]
		case len(f) == 3 && f[0] == "COPY":
			copySrc = strings.TrimSuffix(f[1], "/")
		case len(f) == 2 && f[0] == "WORKDIR":
			workdir = f[1]
		}
	}
	if from != "scratch" {
		t.Errorf("the Containerfile is FROM %q, not scratch: a base would come from a registry", from)
	}
	stage := regexp.MustCompile(`(?m)^stage=(\S+)$`).FindStringSubmatch(build)
	if stage == nil || stage[1] != copySrc {
		t.Errorf("the Containerfile copies %q, deploy/image/build stages %v", copySrc, stage)
	}
	var kept []string
	for _, l := range strings.Split(ignore, "\n") {
		if strings.HasPrefix(l, "!") {
			kept = append(kept, l[1:])
		}
	}
	if !strings.Contains(ignore, "\n**\n") || len(kept) != 1 || kept[0] != copySrc {
		t.Errorf(".dockerignore leaves out everything but %v, want only %q", kept, copySrc)
	}
	if workdir != "/usr/src/quicbench" || !strings.Contains(build, `"$stage/usr/src/quicbench/bin/"`) {
		t.Errorf("WORKDIR %q, or the commands are not staged in /usr/src/quicbench/bin: the manifests run bin/COMMAND there", workdir)
	}
}
