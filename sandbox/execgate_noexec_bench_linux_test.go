package sandbox

import (
	"path"
	"testing"

	"github.com/tether-dev/tether/rootfs"
)

// BenchmarkNoExecFiles is what Config.NoExec costs a sandbox's set-up
// before its mounts: finding the runner's 66 paths (11 programs refused
// outright, 6 program directories) in the host layout. Each file found
// then costs one more bind in the container's set-up.
func BenchmarkNoExecFiles(b *testing.B) {
	layout, err := rootfs.HostLayout()
	if err != nil {
		b.Skip(err)
	}
	var paths []string
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		for _, n := range []string{"halt", "kexec", "killall5", "lvreduce", "lvremove", "openrc-shutdown", "poweroff", "pvremove", "reboot", "shutdown", "vgremove"} {
			paths = append(paths, path.Join(d, n))
		}
	}
	found := 0
	for b.Loop() {
		found = len(noExecFiles(layout, paths))
	}
	b.ReportMetric(float64(found), "files")
}
