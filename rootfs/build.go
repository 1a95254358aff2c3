package rootfs

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tether-dev/tether/scripts"
)

// Source names what a root filesystem is built from.
type Source string

const (
	// FromBusybox builds a minimal root from Debian's static busybox
	// (package busybox-static): /bin/busybox and its applet links. No root
	// privileges are needed; it takes about a second.
	FromBusybox Source = "busybox"
	// FromDebootstrap builds a Debian root with `debootstrap
	// --variant=minbase` (package debootstrap). It needs root and a reachable
	// Debian mirror; bookworm takes under a minute on a fast mirror.
	FromDebootstrap Source = "debootstrap"
)

// DefaultSuite is the Debian suite that FromDebootstrap installs when
// BuildOptions.Suite is empty.
const DefaultSuite = "bookworm"

// Sentinel errors of Build, for callers that branch on the cause. They are
// wrapped with the details (which tool, which directory, what to do).
var (
	// ErrUnknownSource: BuildOptions.From is neither busybox nor debootstrap.
	ErrUnknownSource = errors.New("unknown root filesystem source")
	// ErrNotEmpty: the target exists and is not empty, and Force is not set.
	ErrNotEmpty = errors.New("target directory exists and is not empty")
	// ErrMissingTool: busybox-static, debootstrap or bash is not installed.
	ErrMissingTool = errors.New("required tool not installed")
	// ErrNotRoot: the source needs root (debootstrap) and we are not root.
	ErrNotRoot = errors.New("root privileges required")
)

// BuildOptions says what to build and where. The zero value is not valid:
// From and Dir are required.
type BuildOptions struct {
	// From is the source: FromBusybox or FromDebootstrap.
	From Source
	// Dir is the directory the root is built in. It must be absent or empty
	// unless Force is set; its parent is created if missing.
	Dir string
	// Suite is the Debian suite for FromDebootstrap; empty means DefaultSuite.
	Suite string
	// Mirror is the Debian archive URL for FromDebootstrap; empty means the
	// mirror this machine's apt sources use for Suite (see DefaultMirror).
	Mirror string
	// Force replaces a non-empty Dir. The old content is removed only after
	// the new root is complete; Build refuses when anything is mounted below Dir.
	Force bool
	// Tool is the path of the busybox or debootstrap program to use; empty
	// means looking it up in the usual places.
	Tool string
	// Progress receives the build's progress lines (the script's and the
	// tool's output, as they come). Nil discards them.
	Progress io.Writer
}

// BuildResult describes a finished build.
type BuildResult struct {
	// Dir is the absolute path of the new root.
	Dir string `json:"dir"`
	// From is the source it was built from.
	From Source `json:"from"`
	// Suite and Mirror are set for FromDebootstrap.
	Suite  string `json:"suite,omitempty"`
	Mirror string `json:"mirror,omitempty"`
	// Duration is the wall time of the whole build.
	Duration time.Duration `json:"-"`
}

// Build builds a root filesystem as opts says and validates it (see
// Validate). It builds into a sibling directory DIR.tmp-<pid> and renames it
// to DIR only when the build succeeded, so a failed or cancelled build leaves
// DIR as it was and no half-made directory behind.
//
// Cancelling ctx sends SIGTERM to the build's process group (debootstrap then
// unmounts what it mounted), then SIGKILL after a grace period.
func Build(ctx context.Context, opts BuildOptions) (BuildResult, error) {
	start := time.Now()
	res := BuildResult{From: opts.From}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}

	// Check every input before changing anything.
	var script, scriptName string
	var args, env []string
	switch opts.From {
	case FromBusybox:
		script, scriptName = scripts.RootfsBusybox, "rootfs-busybox.sh"
	case FromDebootstrap:
		script, scriptName = scripts.RootfsDebootstrap, "rootfs-debootstrap.sh"
		res.Suite = opts.Suite
		if res.Suite == "" {
			res.Suite = DefaultSuite
		}
		if !suiteRE().MatchString(res.Suite) {
			return res, fmt.Errorf("checking suite %q: want a Debian suite name such as bookworm", res.Suite)
		}
		res.Mirror = opts.Mirror
		if res.Mirror == "" {
			res.Mirror = DefaultMirror(res.Suite)
		}
		if err := checkMirror(res.Mirror); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("%w %q: want busybox or debootstrap", ErrUnknownSource, opts.From)
	}
	dir, err := checkTarget(opts.Dir, opts.Force)
	if err != nil {
		return res, err
	}
	res.Dir = dir
	if opts.From == FromDebootstrap && geteuid() != 0 {
		return res, fmt.Errorf("building from debootstrap: %w: debootstrap installs packages as root; run tether as root or with sudo", ErrNotRoot)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return res, fmt.Errorf("%w: bash not found: install bash", ErrMissingTool)
	}
	switch opts.From {
	case FromBusybox:
		bb, err := findBusybox(opts.Tool)
		if err != nil {
			return res, err
		}
		env = append(env, "BUSYBOX="+bb)
	case FromDebootstrap:
		db, err := findTool(opts.Tool, "debootstrap", "/usr/sbin/debootstrap", "/sbin/debootstrap")
		if err != nil {
			return res, err
		}
		env = append(env, "DEBOOTSTRAP="+db)
		args = []string{res.Suite, res.Mirror}
	}

	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return res, fmt.Errorf("creating parent of %s: %w", dir, err)
	}
	tmp := fmt.Sprintf("%s.tmp-%d", dir, os.Getpid())
	if err := os.Mkdir(tmp, 0o755); errors.Is(err, fs.ErrExist) {
		return res, fmt.Errorf("creating build directory: %w (a crashed build left it; remove it)", err)
	} else if err != nil {
		return res, fmt.Errorf("creating build directory: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			if err := removeBuilt(tmp, true); err != nil {
				fmt.Fprintf(progress, "rootfs: could not remove %s: %v\n", tmp, err)
			}
		}
	}()

	fmt.Fprintf(progress, "rootfs: building %s root in %s\n", opts.From, tmp)
	if err := runScript(ctx, bash, script, scriptName, append([]string{tmp}, args...), env, progress); err != nil {
		return res, fmt.Errorf("building %s root in %s: %w", opts.From, dir, err)
	}
	if err := Validate(tmp, "/workspace"); err != nil {
		return res, fmt.Errorf("checking the built root: %w", err)
	}
	if err := replaceDir(tmp, dir); err != nil {
		return res, err
	}
	ok = true
	res.Duration = time.Since(start)
	fmt.Fprintf(progress, "rootfs: built %s in %.1fs\n", dir, res.Duration.Seconds())
	return res, nil
}

// geteuid is os.Geteuid; tests replace it to reach the not-root path.
var geteuid = os.Geteuid

// suiteRE accepts Debian suite and codename spellings (bookworm, stable,
// bookworm-backports) and nothing that debootstrap could read as an option.
// It is compiled on first use, not at init: init work runs in every tether
// process, including the container init that `tether run` re-executes.
var suiteRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9.-]{0,63}$`) })

// checkMirror accepts http, https and file URLs, the forms debootstrap reads.
func checkMirror(mirror string) error {
	u, err := url.Parse(mirror)
	if err != nil {
		return fmt.Errorf("checking mirror %q: %w", mirror, err)
	}
	switch {
	case strings.ContainsAny(mirror, " \t\n"):
		return fmt.Errorf("checking mirror %q: a URL has no spaces", mirror)
	case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
	case u.Scheme == "file" && u.Path != "":
	default:
		return fmt.Errorf("checking mirror %q: want an http://, https:// or file:// URL such as http://deb.debian.org/debian", mirror)
	}
	return nil
}

// checkTarget makes dir absolute and checks that it may be built: absent, an
// empty directory, or (with force) a non-empty directory with no mounts below.
func checkTarget(dir string, force bool) (string, error) {
	if dir == "" {
		return "", errors.New("checking target: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	if abs == "/" {
		return "", errors.New("checking target: refusing to build into /")
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return abs, nil // creating it (and its parent) will say what is wrong
	}
	if err != nil {
		return "", fmt.Errorf("checking target %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("checking target: %s exists and is not a directory", abs)
	}
	empty, err := isEmptyDir(abs)
	if err != nil {
		return "", fmt.Errorf("checking target %s: %w", abs, err)
	}
	if empty {
		return abs, nil
	}
	if !force {
		return "", fmt.Errorf("%w: %s; use --force to replace it", ErrNotEmpty, abs)
	}
	mounts, err := mountsUnder(abs)
	if err != nil {
		return "", err
	}
	if len(mounts) > 0 {
		return "", fmt.Errorf("checking target: %s has mounts below it (%s); unmount them before replacing it", abs, strings.Join(mounts, ", "))
	}
	return abs, nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// findBusybox finds a statically linked busybox: the root has no libc for a
// dynamic one. Debian's busybox-static installs it as /bin/busybox.
func findBusybox(tool string) (string, error) {
	bb, err := findTool(tool, "busybox", "/bin/busybox", "/usr/bin/busybox")
	if err != nil {
		return "", err
	}
	static, err := isStatic(bb)
	if err != nil {
		return "", fmt.Errorf("%w: reading %s: %v; install busybox-static (apt-get install busybox-static, or run scripts/provision.sh)", ErrMissingTool, bb, err)
	}
	if !static {
		return "", fmt.Errorf("%w: %s is dynamically linked and cannot run in a root without libc; install busybox-static (apt-get install busybox-static, or run scripts/provision.sh)", ErrMissingTool, bb)
	}
	return bb, nil
}

// findTool returns tool if set and executable, else the first of name on
// PATH and the fallbacks (root's PATH has /usr/sbin, other users' may not).
func findTool(tool, name string, fallbacks ...string) (string, error) {
	pkg := name
	if name == "busybox" {
		pkg = "busybox-static"
	}
	hint := fmt.Sprintf("install it with `apt-get install %s` or run scripts/provision.sh", pkg)
	if tool != "" {
		if err := isExecutable(tool); err != nil {
			return "", fmt.Errorf("%w: %s: %v; %s", ErrMissingTool, tool, err, hint)
		}
		return tool, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range fallbacks {
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s not found; %s", ErrMissingTool, name, hint)
}

func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// isStatic reports whether the ELF file at path has no program interpreter.
func isStatic(path string) (bool, error) {
	interp, err := Interpreter(path)
	return interp == "", err
}

// Interpreter returns the ELF program interpreter (PT_INTERP: the dynamic
// loader) of the executable at path, "" for a static one. A file that is not
// ELF is an error.
func Interpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err != nil {
			return "", fmt.Errorf("reading interpreter of %s: %w", path, err)
		}
		return string(bytes.TrimRight(b, "\x00")), nil
	}
	return "", nil
}

// runScript runs an embedded script with bash in its own process group,
// streaming its output to progress. On failure the error carries the last
// lines of output, so a caller without progress output still sees why.
func runScript(ctx context.Context, bash, script, name string, args, env []string, progress io.Writer) error {
	out := &tailWriter{w: progress, max: 15}
	cmd := exec.CommandContext(ctx, bash, append([]string{"-c", script, name}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH")+":/usr/sbin:/sbin", "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The script's children (debootstrap, dpkg, chroot) are in its process
	// group; TERM them all so debootstrap's exit traps unmount /proc and /sys.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever is left of the group after the leader exits is ours to end.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("running %s: %w", name, ctx.Err())
	}
	if tail := out.tail(); tail != "" {
		return fmt.Errorf("running %s: %w; last output:\n%s", name, err, tail)
	}
	return fmt.Errorf("running %s: %w", name, err)
}

// tailWriter passes writes through and keeps the last max lines.
type tailWriter struct {
	w   io.Writer
	max int

	mu    sync.Mutex
	lines []string
	part  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, string(t.part[:i]))
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
		t.part = t.part[i+1:]
	}
	// A progress writer that fails must not fail the build.
	_, _ = t.w.Write(p)
	return len(p), nil
}

func (t *tailWriter) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.part))
	}
	return strings.Join(lines, "\n")
}

// replaceDir moves the finished build at tmp to dir. An absent or empty dir
// is replaced directly; a non-empty one (Force) is moved aside first, and
// restored if the final rename fails.
func replaceDir(tmp, dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("checking %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("replacing %s: it is no longer a directory", dir)
	default:
		// An empty directory is removed by rename(2) itself; a non-empty one
		// is moved aside and removed once the new root is in place.
		if err := os.Rename(tmp, dir); err == nil {
			return nil
		}
		old := fmt.Sprintf("%s.old-%d", dir, os.Getpid())
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("moving the old %s aside: %w", dir, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if rerr := os.Rename(old, dir); rerr != nil {
				return fmt.Errorf("moving the new root into %s: %w (the old root is left in %s: %v)", dir, err, old, rerr)
			}
			return fmt.Errorf("moving the new root into %s: %w", dir, err)
		}
		if err := removeBuilt(old, false); err != nil {
			return fmt.Errorf("removing the old root (now %s): %w", old, err)
		}
		return nil
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("moving the new root into %s: %w", dir, err)
	}
	return nil
}
