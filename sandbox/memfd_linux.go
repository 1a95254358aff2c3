package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/tether-dev/tether/sandbox/memfdnoexec"
)

// memfdNoExec sets vm.memfd_noexec = 2 in the pid namespace of process
// pid (a sandbox's init, before anything of the sandbox's runs): every
// memfd a process of the sandbox creates is then non-executable and
// sealed so (MFD_NOEXEC_SEAL; asking for MFD_EXEC fails with EACCES), so
// no program written into memory can be executed, whatever it is named.
// Nothing tether runs in a sandbox executes a memfd made there: the
// init's and the supervisor's copies of this binary, and the trampoline's
// descriptors, are memfds made on the host, whose namespace's setting
// applies (it is read when a memfd is created). The error says why it
// could not be set (a kernel before 6.3, tether without root).
func memfdNoExec(pid int) error {
	if _, err := os.Stat("/proc/sys/vm/memfd_noexec"); err != nil {
		return fmt.Errorf("memfd_noexec: the kernel has no vm.memfd_noexec (Linux 6.3+): %w", err)
	}
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return fmt.Errorf("memfd_noexec: %w", err)
	}
	defer ns.Close()
	cmd := exec.Command("/proc/self/exe", memfdnoexec.Arg)
	cmd.Env = []string{}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{ns} // descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("memfd_noexec: %w: %s", err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}
