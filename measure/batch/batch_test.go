package batch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// testJob is a valid job of n shards into root.
func testJob(n int, root string) Job {
	return Job{Command: "headline", Shards: n, Root: root, CPUs: 2, Dir: "/srv/quicbench", Bin: "bin",
		Args: []string{"-losses", "0 1", "-profiles", "80:10,loss=ge:0.3367/33.33", "-quick"}}
}

// seedMatrix is the seed's reno cells as a matrix: 80:10 at 0, 1 and 2%
// loss, tcp and quic, 5 repeats (15 units).
func seedMatrix(t *testing.T) *plan.Matrix {
	t.Helper()
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Matrix{Profiles: []shapedlink.Profile{p}, Losses: []float64{0, 1, 2},
		CCs: []string{"reno"}, Arms: []measure.Arm{"tcp", "quic"}, Repeats: 5}
}

// TestShareMatchesBench: the share Check expects of each shard is the
// share bench plans for it, for every count of shards up to 7 of the
// seed's matrix (15 units of 2 arms), every shard complete.
func TestShareMatchesBench(t *testing.T) {
	m := seedMatrix(t)
	for n := 1; n <= 7; n++ {
		root := t.TempDir()
		writeShards(t, root, n, nil, nil)
		st, err := Check(root, n)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range st.Shards {
			m.Shard = plan.Shard{Index: i, Count: n}
			if want := len(m.Plan()); s.Want != want || !s.complete() {
				t.Errorf("shard %d/%d: Check expects %d runs (complete %v), bench plans %d", i, n, s.Want, s.complete(), want)
			}
		}
	}
}

// writeShards writes the seed's reno runs as n shards' work directories
// under root; keep decides which runs are written, edit may change one.
func writeShards(t *testing.T, root string, n int, keep func(i int, rc plan.Run) bool, edit func(i int, r *results.Run)) {
	t.Helper()
	seed := map[string]results.Run{}
	for _, r := range reporttest.Seed() {
		seed[results.RunDir("", r.Cell, r.Arm, r.Repeat)] = r
	}
	m := seedMatrix(t)
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 45*time.Second, reporttest.Warmup
	for i := range n {
		dir := ShardDir(root, i)
		rec := map[string]any{"profiles": []string{"80:10"}, "losses": m.Losses, "ccs": m.CCs, "arms": m.Arms,
			"repeats": m.Repeats, "workload": w, "workdir": dir, "qlog": false, "shard": fmt.Sprintf("%d/%d", i, n)}
		if err := results.WriteJSON(filepath.Join(dir, "matrix.json"), rec); err != nil {
			t.Fatal(err)
		}
		m.Shard = plan.Shard{Index: i, Count: n}
		for _, rc := range m.Plan() {
			if keep != nil && !keep(i, rc) {
				continue
			}
			r := seed[results.RunDir("", rc.Cell, string(rc.Arm), rc.Repeat)]
			if edit != nil {
				edit(i, &r)
			}
			if err := results.WriteJSON(filepath.Join(results.RunDir(dir, rc.Cell, string(rc.Arm), rc.Repeat), results.RunFile), r); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCheck: complete shards are complete; a shard short of a run, one
// with a failed run, one never started and a directory of another shard
// are each named, and only they, as the shards to run again.
func TestCheck(t *testing.T) {
	for name, c := range map[string]struct {
		n       int
		keep    func(i int, rc plan.Run) bool
		edit    func(i int, r *results.Run)
		prepare func(root string)
		want    []int
		line    string
	}{
		"complete": {n: 3, line: "shard 2/3: complete, 10 of 10 runs"},
		"a run missing": {n: 3, want: []int{1},
			keep: func(i int, rc plan.Run) bool { return i != 1 || rc.Repeat != 2 || rc.Arm != "quic" },
			line: "shard 1/3: incomplete, 9 of 10 runs measured, 0 failed"},
		"a run failed": {n: 2, want: []int{0},
			edit: func(i int, r *results.Run) {
				if i == 0 && r.Repeat == 1 && r.Arm == "tcp" {
					r.Failed = "client: exit status 1"
				}
			},
			line: "shard 0/2: incomplete, 14 of 16 runs measured, 2 failed"},
		"not started": {n: 3, want: []int{2},
			prepare: func(root string) { os.RemoveAll(ShardDir(root, 2)) },
			line:    "shard 2/3: not started"},
		"another shard's directory": {n: 2, want: []int{1},
			prepare: func(root string) {
				os.Remove(filepath.Join(ShardDir(root, 1), "matrix.json"))
				os.WriteFile(filepath.Join(ShardDir(root, 1), "matrix.json"), []byte(`{"shard":"1/3"}`), 0o644)
			},
			line: `holds shard "1/3", not 1/2`},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeShards(t, root, c.n, c.keep, c.edit)
			if c.prepare != nil {
				c.prepare(root)
			}
			st, err := Check(root, c.n)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			st.Write(&b, "batch")
			if !slices.Equal(st.Incomplete(), c.want) || !strings.Contains(b.String(), c.line) {
				t.Errorf("incomplete %v, want %v; report:\n%s\nwant a line with %q", st.Incomplete(), c.want, b.String(), c.line)
			}
			if st.Planned != 30 {
				t.Errorf("planned %d runs, want the matrix's 30", st.Planned)
			}
		})
	}
}

// TestCheckNothingYet: shards that have recorded nothing are all
// incomplete, without an error; shards of another count are named.
func TestCheckNothingYet(t *testing.T) {
	st, err := Check(t.TempDir(), 2)
	if err != nil || !slices.Equal(st.Incomplete(), []int{0, 1}) {
		t.Errorf("empty root: %v, incomplete %v; want no error and both shards", err, st.Incomplete())
	}
	root := t.TempDir()
	writeShards(t, root, 2, nil, nil)
	if st, err := Check(root, 1); err != nil || !slices.Equal(st.Incomplete(), []int{0}) || !strings.Contains(st.Shards[0].String(), `holds shard "0/2", not 0/1`) {
		t.Errorf("two shards' directories checked as one shard: %v, %v; want shard 0 named as another count's", err, st.Shards)
	}
	if _, err := Check(root, 0); err == nil {
		t.Error("a count of 0: no error")
	}
}

// fakeBin writes shell scripts standing in for commands: each appends
// its name and arguments, one per line, to log.
func fakeBin(t *testing.T, dir, log string, names ...string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the scripts:", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		script := fmt.Sprintf("#!/bin/sh\n{ echo %s; for a in \"$@\"; do echo \"[$a]\"; done; } >> %s\n", n, log)
		if n == "sbatch" {
			script += "echo \"$(( $(grep -c '^sbatch$' " + log + ") + 40 ));cluster\"\n"
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScriptsRunInAShell: the task and the merge, run by sh as an engine
// would, give the commands the arguments the job means, a flag value with
// spaces in one piece.
func TestScriptsRunInAShell(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	fakeBin(t, filepath.Join(dir, "bin"), log, "headline", "summarise", "batch")
	j := testJob(3, "res")
	j.Dir = dir
	// Shard 0's directory is there without matrix.json (made, never
	// begun); shard 2's has it.
	for _, d := range []string{"shard-0", "shard-2"} {
		if err := os.MkdirAll(filepath.Join(dir, "res", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "res", "shard-2", "matrix.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ script, env string }{
		{"SHARDS=3\n" + j.TaskScript("SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_ID=1"},
		{j.TaskScript("JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX=2"},
		{j.MergeScript(), ""},
	} {
		cmd := exec.Command("sh", "-c", s.script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), s.env, "SHARDS=3")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", s.script, err, out)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := `headline [-shard] [1/3] [-workdir] [res/shard-1] [-no-summary] [-losses] [0 1] [-profiles] [80:10,loss=ge:0.3367/33.33] [-quick]
headline [-shard] [2/3] [-workdir] [res/shard-2] [-no-summary] [-losses] [0 1] [-profiles] [80:10,loss=ge:0.3367/33.33] [-quick]
summarise [res/shard-2]
summarise [-json] [res/shard-2]
batch [-do] [check] [-root] [res] [-shards] [3]`
	if got := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(string(b)), "\n[", " ["), "]\n", "]\n"); got != want {
		t.Errorf("the scripts ran:\n%s\nwant:\n%s", got, want)
	}
}

// TestSlurmScripts: the array asks for one task per shard, the CPUs and
// a node of its own unless shared, and the merge reads every shard.
func TestSlurmScripts(t *testing.T) {
	j := testJob(4, "results/h")
	a := j.SlurmArray()
	for _, want := range []string{"#SBATCH --array=0-3\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --exclusive\n", "#SBATCH --chdir=/srv/quicbench\n",
		"#SBATCH --output=results/h/slurm-%A-%a.out\n", "SHARDS=4\n", "exec bin/headline -shard \"$SLURM_ARRAY_TASK_ID/$SHARDS\""} {
		if !strings.Contains(a, want) {
			t.Errorf("the array's script lacks %q:\n%s", want, a)
		}
	}
	j.Shared = true
	if strings.Contains(j.SlurmArray(), "--exclusive") {
		t.Error("a shared job's array asks for --exclusive")
	}
	m := j.slurmMerge()
	if !strings.Contains(m, "for d in results/h/shard-0 results/h/shard-1 results/h/shard-2 results/h/shard-3; do") || !strings.Contains(m, "-shards 4") {
		t.Errorf("the merge does not read every shard:\n%s", m)
	}
}

// TestValidate: each bad field is refused with its name.
func TestValidate(t *testing.T) {
	if err := testJob(2, "r").Validate(); err != nil {
		t.Fatalf("a good job: %v", err)
	}
	for want, edit := range map[string]func(*Job){
		"not a matrix command": func(j *Job) { j.Command = "summarise" },
		"shards 0":             func(j *Job) { j.Shards = 0 },
		"shards 1001":          func(j *Job) { j.Shards = 1001 },
		"cpus 0":               func(j *Job) { j.CPUs = 0 },
		"root is empty":        func(j *Job) { j.Root = "" },
		"root \"a b\"":         func(j *Job) { j.Root = "a b" },
		"is not absolute":      func(j *Job) { j.Dir = "src" },
		"name \"Big\"":         func(j *Job) { j.Name = "Big" },
		"-shard=1/2":           func(j *Job) { j.Args = []string{"-shard=1/2"} },
		"--workdir":            func(j *Job) { j.Args = []string{"--workdir", "x"} },
	} {
		j := testJob(2, "r")
		edit(&j)
		if err := j.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error naming %q, got %v", want, err)
		}
	}
}

// TestSubmit: the array goes first (only the given indexes), then the
// merge after it; the ids are sbatch's.
func TestSubmit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	fakeBin(t, dir, log, "sbatch")
	ids, err := Submit(context.Background(), filepath.Join(dir, "sbatch"), SlurmFiles{Array: "a.sbatch", Merge: "m.sbatch"}, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	want := "sbatch\n[--parsable]\n[--array=1,3]\n[a.sbatch]\nsbatch\n[--parsable]\n[--dependency=afterany:41]\n[m.sbatch]\n"
	if ids != (Submitted{Array: "41", Merge: "42"}) || string(b) != want {
		t.Errorf("ids %+v, sbatch ran:\n%s\nwant 41 and 42, and:\n%s", ids, b, want)
	}
	if _, err := parseJobID("Submitted batch job 7"); err == nil {
		t.Error("parseJobID took sbatch's wordy output")
	}
}

// TestShellMetacharactersStayWords: a -bin, a root and an argument full
// of shell syntax reach the shell as words; nothing in them runs.
func TestShellMetacharactersStayWords(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the scripts:", err)
	}
	dir := t.TempDir()
	j := testJob(2, "r;id>pwned-root;")
	j.Dir, j.Bin = dir, "bin;id>pwned;"
	j.Args = []string{"-profiles", "$(id>pwned-arg)", "`id>pwned-tick`", "a|id>pwned-pipe", "&id>pwned-amp&", "(id>pwned-sub)", "<x"}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{j.SlurmArray(), j.slurmMerge(), j.TaskScript("JOB_COMPLETION_INDEX"), j.MergeScript()} {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0", "JOB_COMPLETION_INDEX=1", "SHARDS=2")
		out, _ := cmd.CombinedOutput()
		m, _ := filepath.Glob(filepath.Join(dir, "*pwned*"))
		if len(m) > 0 {
			t.Fatalf("the script ran what a value held (%v):\n%s\n%s", m, script, out)
		}
	}
	if a := j.SlurmArray(); !strings.Contains(a, `exec 'bin;id>pwned;/headline'`) {
		t.Errorf("the program is not one quoted word:\n%s", a)
	}
}

// TestYAMLLineBreaksRefused: every character YAML reads as a line break
// (other than a newline inside an argument, which the block keeps) and
// control characters are refused, naming the value.
func TestYAMLLineBreaksRefused(t *testing.T) {
	for _, c := range []string{"\r", "\u0085", "\u2028", "\u2029", "\ufeff", "\x00", "\x1b", "\x7f", "\xff"} {
		j := testJob(2, "r")
		j.Args = []string{"-profiles=80:10" + c + "      hostPID: true"}
		if err := j.Validate(); err == nil || !strings.Contains(err.Error(), "the command's argument") {
			t.Errorf("argument with %q: %v; want it refused", c, err)
		}
		j = testJob(2, "r")
		j.Image = "img" + c + "x"
		if err := j.Validate(); err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("image with %q: %v; want it refused", c, err)
		}
	}
	j := testJob(2, "r")
	j.Args = []string{"-profiles", "80:10\n90:5"}
	if err := j.Validate(); err != nil {
		t.Errorf("a newline inside an argument: %v", err)
	}
}

// TestCheckRefusesSymlinkedShard: a shard directory that is a symbolic
// link is an error, not a shard with nothing measured.
func TestCheckRefusesSymlinkedShard(t *testing.T) {
	root := t.TempDir()
	writeShards(t, root, 2, nil, nil)
	elsewhere := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(ShardDir(root, 1), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, ShardDir(root, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(root, 2); err == nil || !strings.Contains(err.Error(), "shard-1 is a symbolic link") {
		t.Errorf("a symlinked shard: %v; want it refused", err)
	}
}

// TestOtherCount: a root of two shards checked as one or three says so;
// checked as two, it does not.
func TestOtherCount(t *testing.T) {
	root := t.TempDir()
	writeShards(t, root, 2, nil, nil)
	for n, want := range map[int]string{1: "shard-0/matrix.json is shard 0/2", 3: "shard-0/matrix.json is shard 0/2", 2: ""} {
		st, err := Check(root, n)
		if err != nil {
			t.Fatal(err)
		}
		err = st.OtherCount(root)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("checked as %d: %v; want %q", n, err, want)
		}
	}
	root = t.TempDir()
	for _, d := range []string{ShardDir(root, 0), ShardDir(root, 1)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Check(root, 1)
	if err == nil {
		err = st.OtherCount(root)
	}
	if err == nil || !strings.Contains(err.Error(), "shard-1 is there, a shard beyond 1") {
		t.Errorf("a root with shard-1 checked as one shard: %v", err)
	}
}
