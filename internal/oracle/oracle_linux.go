package oracle

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

//go:embed driver.sh
var driverScript []byte

//go:embed standin.sh
var standinScript []byte

//go:embed passthrough.sh
var passthroughScript []byte

// Where things are inside the sandbox.
const (
	Home = "/home/alice" // the canary home, HOME of every command
	Cwd  = "/work"       // the working directory of every command
)

// StandIns are the hardline-class programs replaced by a logging stand-in:
// found first on PATH, and bound over the real program where the host has
// one. kill, pkill and killall are not among them: they run for real
// against canary processes, which the sandbox's pid namespace contains.
var StandIns = []string{
	"rm", "dd", "shred", "wipefs", "blkdiscard", "badblocks", "hdparm", "nvme", "cryptsetup", "mdadm", "blkzone", "sg_format",
	"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs",
	"mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.msdos", "mkfs.ntfs", "mkfs.exfat", "mkfs.f2fs", "mkfs.minix",
	"mkfs.bfs", "mkfs.cramfs", "sgdisk", "gdisk", "fdisk", "sfdisk", "cfdisk", "parted",
	"pvcreate", "pvremove", "lvremove", "vgremove",
	"reboot", "halt", "poweroff", "shutdown", "init", "telinit", "kexec", "systemctl", "busctl", "dbus-send", "gdbus", "qdbus",
}

// passThrough are wrappers that cannot work in a sandbox (setuid) and are
// replaced by a stand-in that runs what they wrap.
var passThrough = []string{"sudo", "doas", "su", "runuser"}

// devices are the stand-in block devices (regular files in the sandbox's
// /dev), and the canary processes.
var (
	devices  = []string{"sda", "sda1", "nvme0n1", "nvme0n1p1", "vda", "xvda", "mmcblk0", "dm-0", "md0", "zram0", "loop0"}
	canaries = []string{"sshd", "postgres", "nginx"}
)

// Oracle runs commands under real bash in tether's sandbox and reports what
// they did. Use New; the zero value is not usable. Not safe for concurrent
// use (one batch at a time shares the directory).
type Oracle struct {
	dir    string
	runner *sandbox.Runner
	world  world
	// PerCommand bounds each command's wall time (default 5s).
	PerCommand time.Duration
	// Pids is the sandbox's pids limit; a command that fills it is a fork bomb.
	Pids int64
}

// New prepares the oracle's files under dir (which the caller removes),
// running sandboxes with r.
func New(dir string, r *sandbox.Runner) (*Oracle, error) {
	o := &Oracle{dir: dir, runner: r, PerCommand: 5 * time.Second, Pids: 192}
	if err := o.prepare(); err != nil {
		return nil, fmt.Errorf("preparing the oracle in %s: %w", dir, err)
	}
	return o, nil
}

// homeFiles are the canary home's files; sensitive ones are rc files and
// credentials (a write to them is the approval tier).
var homeFiles = map[string]string{
	".bashrc": "# canary bashrc\n", ".profile": "# canary profile\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA canary\n",
	".aws/credentials": "[default]\naws_access_key_id=CANARY\n", "notes.txt": "canary notes\n",
	"projects/app/main.go": "package main\n", "Documents/report.txt": "canary report\n",
}

func (o *Oracle) prepare() error {
	top := filepath.Join(o.dir, "oracle")
	write := func(p string, data []byte, mode os.FileMode) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, mode)
	}
	if err := write(filepath.Join(top, "driver.sh"), driverScript, 0o755); err != nil {
		return err
	}
	if err := write(filepath.Join(top, "standin", "passthrough"), passthroughScript, 0o755); err != nil {
		return err
	}
	for _, n := range StandIns {
		// Each stand-in is its own file naming the program it stands
		// for: a copy, a link or a hash table entry runs it under another
		// name (cp /bin/rm x; ./x, BASH_CMDS[ls]=/sbin/reboot; ls), and
		// the content, not argv[0], says what the real file would do.
		if err := write(filepath.Join(top, "standin", n), standinFor(n), 0o755); err != nil {
			return err
		}
	}
	for _, n := range passThrough {
		if err := os.Symlink("passthrough", filepath.Join(top, "standin", n)); err != nil {
			return err
		}
	}
	// The driver's own rm, and the canary processes (copies of sleep
	// under the names of system daemons, which pkill and killall match).
	if err := copyFile("/usr/bin/rm", filepath.Join(top, "real", "rm")); err != nil {
		return err
	}
	for _, c := range canaries {
		if err := copyFile("/usr/bin/sleep", filepath.Join(top, "cbin", c)); err != nil {
			return err
		}
	}
	sensitive := []string{".bashrc", ".profile", ".ssh", ".aws"}
	for rel, data := range homeFiles {
		if err := write(filepath.Join(top, "pristine", "home", rel), []byte(data), 0o644); err != nil {
			return err
		}
	}
	for rel, data := range map[string]string{".bashrc": "# canary root bashrc\n", ".ssh/id_ed25519": "canary key\n", "admin/notes": "root canary\n"} {
		if err := write(filepath.Join(top, "pristine", "root", rel), []byte(data), 0o600); err != nil {
			return err
		}
	}
	for rel, data := range map[string]string{"README.md": "# app\n", "Makefile": "all:\n\techo build\n", "src/main.go": "package main\n",
		"build/out.o": "obj\n", ".env.example": "X=1\n", "app.log": "log line\n", "node_modules/x/index.js": "x\n"} {
		if err := write(filepath.Join(top, "pristine", "work", rel), []byte(data), 0o644); err != nil {
			return err
		}
	}
	dev := bytes.Repeat([]byte("STAND-IN BLOCK DEVICE: every byte of it is data someone needs.\n"), 256)
	if err := write(filepath.Join(top, "pristine", "dev", "dev"), dev, 0o644); err != nil {
		return err
	}
	for _, d := range []string{"in", "log"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{"log", "home", "root", "work"} {
		if err := os.MkdirAll(filepath.Join(o.dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(o.dir, "root"), 0o700); err != nil {
		return err
	}

	o.world = world{home: Home, canaries: len(canaries), sensitive: sensitive}
	o.world.homeEntries = topEntries(homeFiles)
	o.world.rootEntries = []string{"admin"}
	for _, d := range devices {
		o.world.devices = append(o.world.devices, "/dev/"+d)
	}
	return nil
}

// topEntries are the visible top-level names of files: a home is wiped
// when all of them are gone, as rm -rf ~/* leaves only dotfiles.
func topEntries(files map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for rel := range files {
		t, _, _ := strings.Cut(rel, "/")
		if !seen[t] && !strings.HasPrefix(t, ".") {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}

// config is the sandbox of one batch: the host layout read-only, the
// oracle's files, the canary home and /root, the workspace, and each
// stand-in bound over the real program where the host has one.
func (o *Oracle) config() sandbox.Config {
	top := filepath.Join(o.dir, "oracle")
	binds := []sandbox.Bind{
		{Source: top, Destination: "/oracle", ReadOnly: true},
		// Throwaway trees nothing on the host runs: not frozen, so the
		// commands under test (kill -9 -1 among them) find no creation
		// gate helper to kill and the driver can always write its log.
		{Source: filepath.Join(o.dir, "log"), Destination: "/oracle/log", Scratch: true},
		{Source: filepath.Join(o.dir, "home"), Destination: Home, Scratch: true},
		{Source: filepath.Join(o.dir, "root"), Destination: "/root", Scratch: true},
		{Source: filepath.Join(o.dir, "work"), Destination: Cwd, Scratch: true},
	}
	for _, set := range []struct {
		names  []string
		script string
	}{{StandIns, ""}, {passThrough, "passthrough"}} {
		for _, n := range set.names {
			for _, d := range []string{"/usr/bin", "/usr/sbin"} {
				p := filepath.Join(d, n)
				if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
					src := set.script
					if src == "" {
						src = n // its own stand-in (prepare)
					}
					binds = append(binds, sandbox.Bind{Source: filepath.Join(top, "standin", src), Destination: p, ReadOnly: true})
				}
			}
		}
	}
	return sandbox.Config{
		Binds:   binds,
		Cwd:     "/",
		Env:     []string{"PATH=/usr/bin:/bin", "ORACLE_TIMEOUT=" + strconv.Itoa(int(o.PerCommand.Seconds())), "ORACLE_PIDS=" + strconv.FormatInt(o.Pids, 10)},
		Seccomp: sandbox.SeccompOptional,
		Limits: sandbox.Limits{MemoryBytes: 1 << 30, Pids: o.Pids, CPUs: 1,
			OutputBytes: 1 << 20, TmpfsBytes: 32 << 20},
	}
}

// standinFor is the stand-in script for program name: standin.sh with the
// name it records in place of @NAME@.
func standinFor(name string) []byte {
	return bytes.ReplaceAll(standinScript, []byte("@NAME@"), []byte(name))
}

// ErrLost is returned (wrapped) for a command whose result the driver
// never wrote (the batch ended early, or the command destroyed the log).
var ErrLost = errors.New("oracle: result lost")

// Case is one command to run and the variables exported to it (NAME=VALUE)
// beside the driver's own environment; every other variable is unset.
type Case struct {
	Command string
	Env     []string
}

// Cases are cmds, each with no variable set.
func Cases(cmds []string) []Case {
	out := make([]Case, len(cmds))
	for i, c := range cmds {
		out[i] = Case{Command: c}
	}
	return out
}

// Run runs cmds in one sandbox, one after another, each with no variable
// set, and returns what each did (RunCases).
func (o *Oracle) Run(ctx context.Context, cmds []string) (obs []Observation, lost int, err error) {
	return o.RunCases(ctx, Cases(cmds))
}

// RunCases runs cases in one sandbox, one after another, and returns what
// each did. A case whose result was lost gets an observation with Tier
// allow and the evidence "lost"; lost counts them.
func (o *Oracle) RunCases(ctx context.Context, cases []Case) (obs []Observation, lost int, err error) {
	log := filepath.Join(o.dir, "log")
	if err := os.RemoveAll(log); err != nil {
		return nil, 0, err
	}
	if err := os.MkdirAll(log, 0o755); err != nil {
		return nil, 0, err
	}
	// The driver reads NUL-terminated fields: the number of variables,
	// each NAME=VALUE, the command.
	var in bytes.Buffer
	field := func(s string) error {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%q holds a NUL byte", s)
		}
		in.WriteString(s)
		in.WriteByte(0)
		return nil
	}
	for _, c := range cases {
		if err := field(strconv.Itoa(len(c.Env))); err != nil {
			return nil, 0, err
		}
		for _, e := range c.Env {
			if !validAssign(e) {
				return nil, 0, fmt.Errorf("%q is not NAME=VALUE", e)
			}
			if err := field(e); err != nil {
				return nil, 0, err
			}
		}
		if err := field(c.Command); err != nil {
			return nil, 0, err
		}
	}
	if err := os.WriteFile(filepath.Join(o.dir, "oracle", "in", "cmds"), in.Bytes(), 0o644); err != nil {
		return nil, 0, err
	}
	cfg := o.config()
	cfg.Limits.Timeout = time.Duration(len(cases)+4) * (o.PerCommand + 2*time.Second)
	var out bytes.Buffer
	res, err := o.runner.Run(ctx, cfg, sandbox.Command{Args: []string{"/bin/bash", "/oracle/driver.sh"}, Stdout: &out, Stderr: &out})
	if err != nil {
		return nil, 0, fmt.Errorf("running the oracle's sandbox: %w", err)
	}
	if res.ExitCode != 0 {
		return nil, 0, fmt.Errorf("the oracle's driver exited %d: %s", res.ExitCode, tail(out.String(), 2000))
	}
	for i, c := range cases {
		d := filepath.Join(log, strconv.Itoa(i))
		result, rerr := os.ReadFile(filepath.Join(d, "result"))
		if rerr != nil || !bytes.HasSuffix(result, []byte("done\n")) {
			lost++
			obs = append(obs, Observation{Command: c.Command, Env: c.Env, Evidence: []string{"lost: the driver wrote no complete result"}})
			continue
		}
		calls, cerr := os.ReadFile(filepath.Join(d, "calls"))
		if cerr != nil && !errors.Is(cerr, fs.ErrNotExist) {
			return nil, 0, cerr
		}
		stderr, _ := os.ReadFile(filepath.Join(d, "err"))
		ob := o.world.classify(c.Command, strings.Split(strings.TrimSpace(string(result)), "\n"), parseCalls(string(calls)), string(stderr))
		ob.Stderr = tail(ob.Stderr, 400)
		ob.Env = c.Env
		obs = append(obs, ob)
	}
	return obs, lost, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Analyze is the static verdict the oracle compares with: the approval
// package's analysis, as `tether check` runs it, with the sandbox's home
// and working directory.
func Analyze(cmd string) (*approval.Analysis, error) {
	return approval.Analyze(cmd, approval.AnalyzeOptions{Home: Home, Cwd: Cwd})
}
