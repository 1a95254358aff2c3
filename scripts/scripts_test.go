package scripts

import (
	"github.com/tether-dev/tether/internal/testenv"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireOrSkip skips with reason, or fails under REQUIRE_SANDBOX=1 (CI),
// where scripts/provision.sh has installed every tool the tests use.
var requireOrSkip = testenv.SkipOrFail

// TestShellScriptsParse runs `bash -n` on every script in this directory.
func TestShellScriptsParse(t *testing.T) {
	files, err := filepath.Glob("*.sh")
	require.NoError(t, err)
	require.Contains(t, files, "rootfs-busybox.sh")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			out, err := exec.Command("bash", "-n", f).CombinedOutput()
			assert.NoError(t, err, string(out))
		})
	}
}

// TestEmbeddedScriptsAreExecutable checks that the embedded scripts are also
// runnable by hand from a checkout, as their comments promise.
func TestEmbeddedScriptsAreExecutable(t *testing.T) {
	for name, text := range map[string]string{"rootfs-busybox.sh": RootfsBusybox, "rootfs-debootstrap.sh": RootfsDebootstrap} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode().Perm()&0o100, "%s is not executable", name)
		assert.True(t, strings.HasPrefix(text, "#!/usr/bin/env bash\n"), name)
	}
}

// TestVagrantfileValidates runs `vagrant validate` on the repository's
// Vagrantfile. VMs cannot boot on the CI machines, so this is what CI checks
// of it; scripts/provision.sh installs Debian's vagrant package for it.
// Provider sections are ignored (-p): the VirtualBox and libvirt providers
// are not installed where the tests run.
func TestVagrantfileValidates(t *testing.T) {
	vagrant, err := exec.LookPath("vagrant")
	if err != nil {
		requireOrSkip(t, "vagrant not installed (apt-get install vagrant, or run scripts/provision.sh)")
	}
	home := t.TempDir()
	cmd := exec.Command(vagrant, "validate", "--ignore-provider")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(),
		"VAGRANT_HOME="+filepath.Join(home, "vagrant.d"),   // not the user's ~/.vagrant.d
		"VAGRANT_DOTFILE_PATH="+filepath.Join(home, "dot"), // no .vagrant/ in the checkout
		"VAGRANT_CHECKPOINT_DISABLE=1",                     // no version check over the network
		"VAGRANT_NO_COLOR=1",
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "Vagrantfile validated successfully")
	for _, box := range []string{"debian12", "ubuntu2404"} {
		assert.Contains(t, string(out), box+": Ignoring provider config", "machine %s is not defined", box)
	}
}

// TestProvisionProfiles checks the package lists of scripts/provision.sh:
// `make demo` installs the demo profile only, a subset of the test
// profile without the heavy test-only tools.
func TestProvisionProfiles(t *testing.T) {
	list := func(profile string) []string {
		out, err := exec.Command("bash", "provision.sh", "--list", profile).Output()
		require.NoError(t, err)
		return strings.Fields(string(out))
	}
	demo, test := list("demo"), list("test")
	for _, p := range demo {
		assert.Contains(t, test, p, "the test profile includes the demo's")
	}
	for _, p := range []string{"gcc", "libc6-dev", "libseccomp-dev", "git"} {
		assert.Contains(t, demo, p)
	}
	for _, p := range []string{"chromium", "vagrant", "runc", "bubblewrap", "debootstrap", "busybox-static"} {
		assert.NotContains(t, demo, p)
		assert.Contains(t, test, p)
	}
	out, err := exec.Command("bash", "provision.sh", "nonsense").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "usage:")

	// The cgroup v2 guests' list (scripts/vm-image.sh): what the host-built
	// test binaries need at run time, and systemd for the delegation guest;
	// never installed on the host itself.
	assert.Contains(t, test, "qemu-system-x86")
	guest := list("guest")
	for _, p := range []string{"libseccomp2", "systemd-sysv", "busybox-static", "python3"} {
		assert.Contains(t, guest, p)
	}
	assert.NotContains(t, guest, "libseccomp-dev", "the guest runs binaries built on the host")
	cmd := exec.Command("bash", "provision.sh", "guest")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 2, cmd.ProcessState.ExitCode())
	assert.Contains(t, string(out), "--list guest")
}

// TestVMCITestsList checks scripts/vm-ci-tests.txt, the cgroup v2 guest's
// CI subset: every line names a package vm-test.sh builds and a regexp Go
// accepts, so a typo cannot silently run nothing.
func TestVMCITestsList(t *testing.T) {
	b, err := os.ReadFile("vm-ci-tests.txt")
	require.NoError(t, err)
	lines := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines++
		pkg, re, ok := strings.Cut(line, " ")
		require.True(t, ok, "line %q: want PACKAGE REGEXP", line)
		fi, err := os.Stat(filepath.Join("..", pkg))
		require.NoError(t, err, "line %q", line)
		assert.True(t, fi.IsDir())
		for _, part := range strings.Split(re, "/") {
			_, err := regexp.Compile(part)
			assert.NoError(t, err, "line %q", line)
		}
		// Every test named outright (^(A|B)$) at the top level exists.
		top := strings.Split(re, "/")[0]
		var src strings.Builder
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			src.Write(b)
		}
		if !strings.HasPrefix(top, "^") || !strings.HasSuffix(top, "$") {
			continue // a prefix such as ^TestKeeper
		}
		for _, name := range strings.Split(strings.Trim(top, "^()$"), "|") {
			if regexp.QuoteMeta(name) == name {
				assert.True(t, strings.Contains(src.String(), "func "+name+"("), "line %q: no test %s in %s", line, name, pkg)
			}
		}
	}
	assert.GreaterOrEqual(t, lines, 5)
}
