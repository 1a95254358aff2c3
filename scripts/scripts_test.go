package scripts

import (
	"github.com/tether-dev/tether/internal/testenv"

	"os"
	"os/exec"
	"path/filepath"
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
}
