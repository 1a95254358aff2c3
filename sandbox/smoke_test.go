package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
)

func TestSmoke(t *testing.T) {
	r := &Runner{StateRoot: t.TempDir(), CgroupPrefix: fmt.Sprintf("tether-test-%d", os.Getpid())}
	var out, errb bytes.Buffer
	res, err := r.Run(context.Background(), Config{Workspace: t.TempDir()}, Command{Shell: "echo hi; id; ls /; cat /proc/self/cgroup; exit 3", Stdout: &out, Stderr: &errb})
	t.Logf("res=%+v err=%v\nout=%s\nerr=%s", res, err, out.String(), errb.String())
}
