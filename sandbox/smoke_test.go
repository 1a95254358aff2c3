package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	r := &Runner{StateRoot: t.TempDir(), CgroupPrefix: fmt.Sprintf("tether-test-%d", os.Getpid()), Grace: 300 * time.Millisecond}
	var out, errb bytes.Buffer
	res, err := r.Run(context.Background(), Config{Limits: Limits{Timeout: time.Second}}, Command{Shell: "trap '' TERM; sleep 10", Stdout: &out, Stderr: &errb})
	t.Logf("res=%+v err=%v\nout=%s\nerr=%s", res, err, out.String(), errb.String())
}
