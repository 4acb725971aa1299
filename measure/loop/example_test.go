package loop_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// nowhere is Ends whose stage runs nothing: enough to show the loop.
type nowhere struct{}

func (nowhere) Ready(context.Context) error { return nil }
func (nowhere) Close()                      {}
func (nowhere) Open(_ context.Context, _ string, _ shapedlink.Profile, run *results.Run) (rig.Stage, error) {
	run.Link.Backend = "none"
	return stage{}, nil
}

type stage struct{}

func (stage) StartServer(context.Context, transport.Options, time.Duration, func(rig.RoleBase) any) (rig.RoleBase, error) {
	return rig.RoleBase{Role: rig.RoleClient}, nil
}
func (stage) StartClient(context.Context, any, ...*os.File) (*exec.Cmd, error) { return nil, nil }
func (stage) EndServer(context.Context, time.Duration) (bool, error)           { return true, nil }
func (stage) Close(*results.Run)                                               {}

// job is one run whose client "measures" a throughput.
type job struct{ dir string }

func (j job) Start() (string, shapedlink.Profile, results.Run) {
	cell := results.Cell{Profile: "80:10", RTTms: 10, RateMbit: 80, CC: "reno"}
	return j.dir, shapedlink.Profile{}, results.NewRun(cell, "tcp", false, 1, 5*time.Second, time.Second)
}
func (job) Roles(context.Context, rig.Stage, string) (loop.Roles, error) {
	spec := func(b rig.RoleBase) any { return b }
	return loop.Roles{Within: time.Minute, ServerSpec: spec, ClientSpec: spec}, nil
}
func (job) Drive(context.Context, rig.Stage, any, *results.Run) (error, error) { return nil, nil }
func (job) Finish(run *results.Run, _ loop.Ended) error {
	run.ThroughputMbit = 79.5
	return nil
}
func (job) Extra(results.Run) error { return nil }

func ExampleOne() {
	dir, _ := os.MkdirTemp("", "loop")
	defer os.RemoveAll(dir)
	run, err := loop.One(context.Background(), nowhere{}, job{dir: filepath.Join(dir, "r1")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, st, _ := results.Check(filepath.Join(dir, "r1"), run.Cell, run.Arm, run.Repeat)
	fmt.Println(run.Arm, run.Link.Backend, run.ThroughputMbit, st)
	// Output: tcp none 79.5 measured
}
