package sandbox

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLandlockABI(t *testing.T) {
	assert.Zero(t, landlockABI(0).fs, "no Landlock: nothing handled")
	one := landlockABI(1)
	assert.Zero(t, one.fs&(llRefer|llTruncate|llIoctlDev))
	assert.Equal(t, uint32(8), one.attrSize)
	seven := landlockABI(7)
	assert.Equal(t, uint64(llAll), seven.fs, "ABI 7 handles every filesystem right")
	assert.Equal(t, uint64(llScopeAbstractUnix|llScopeSignal), seven.scoped)
	assert.Equal(t, uint32(24), seven.attrSize)
	assert.Equal(t, uint32(llLogNewExecOn), seven.flags)
	assert.Zero(t, landlockABI(6).flags, "the log flags are ABI 7's")
}

func TestLandlockRules(t *testing.T) {
	cfg := Config{Workspace: "/work/proj", Binds: []Bind{{Source: "/data", Destination: "/mnt/data"}},
		Landlock: &Landlock{Trees: []string{"/work/proj/src", "/mnt/data/in", "/var/cache/x"}, Files: []string{"/work/proj/Makefile"}}}
	rules, err := landlockRules(cfg, []string{"/usr", "/etc"})
	require.NoError(t, err)
	byPath := map[string]llRule{}
	for _, r := range rules {
		byPath[r.path] = r
	}
	assert.Equal(t, tree("/usr", llSystem), byPath["/usr"])
	assert.Equal(t, tree("/tmp", llScratch), byPath["/tmp"])
	// The mandate's paths are resolved without symlinks beneath the
	// deepest mount of tether's that holds them, "/" outside them all.
	src := tree("/work/proj/src", llMandate)
	src.mount = "/work/proj"
	assert.Equal(t, src, byPath["/work/proj/src"])
	assert.Equal(t, "/mnt/data", byPath["/mnt/data/in"].mount)
	assert.Equal(t, "/", byPath["/var/cache/x"].mount)
	assert.Equal(t, llRule{path: "/work/proj/Makefile", dir: llReadDir, file: llFileRights, mount: "/work/proj"}, byPath["/work/proj/Makefile"])
	assert.Empty(t, byPath["/usr"].mount, "the system tree is followed as laid out")
	assert.Equal(t, tree("/work/proj", llReadDir), byPath["/work/proj"], "the workspace is listed, not read")
	assert.NotContains(t, byPath, "/mnt/data", "a bind gets only what the policy names")
	for _, r := range rules {
		assert.Zero(t, r.dir&(llMakeChar|llMakeBlock), "no rule makes device nodes: %s", r.path)
		assert.Zero(t, r.file&^llFileRights, "a file rule holds file rights only: %s", r.path)
	}

	// A workspace or bind that a system or scratch rule would cover
	// cannot be confined: refused, not widened.
	for _, c := range []Config{
		{Workspace: "/tmp/proj", Landlock: &Landlock{}},
		{Workspace: "/usr/src/proj", Landlock: &Landlock{}},
		{Binds: []Bind{{Source: "/x", Destination: "/tmp/x"}}, Landlock: &Landlock{}},
	} {
		_, err := landlockRules(c, []string{"/usr"})
		assert.True(t, errors.Is(err, ErrLandlockLayout), "%+v: %v", c, err)
	}
	_, err = landlockRules(Config{Landlock: &Landlock{Trees: []string{"relative"}}}, nil)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

func TestEncodeLandlock(t *testing.T) {
	abi := landlockABI(3)
	b := encodeLandlock(abi, llNetConnectTCP, []llRule{tree("/usr", llSystem|llIoctlDev)}, []uint16{443})
	require.Len(t, b, 48+24+4)
	ne := binary.NativeEndian
	assert.Equal(t, abi.fs, ne.Uint64(b))
	assert.Equal(t, abi.attrSize, ne.Uint32(b[32:]))
	assert.Equal(t, uint32(1), ne.Uint32(b[40:]))
	assert.Equal(t, uint64(llSystem), ne.Uint64(b[48:]), "rights the kernel does not handle are dropped")
	assert.Equal(t, uint64(llSystem&llFileRights), ne.Uint64(b[56:]))
	assert.Equal(t, uint32(4), ne.Uint32(b[64:]))
	assert.Equal(t, uint32(4), ne.Uint32(b[68:]), "a system rule is resolved following links")
	assert.Equal(t, "/usr", string(b[72:]))
	assert.Zero(t, ne.Uint64(b[8:]), "ABI 3 handles no network right")
	assert.Zero(t, ne.Uint32(b[44:]), "nor takes ports")

	b = encodeLandlock(abi, 0, []llRule{{path: "/work/proj/src", dir: llReadDir, mount: "/work/proj"}}, nil)
	assert.Equal(t, uint32(len("/work/proj")), ne.Uint32(b[68:]), "a mandate rule follows links only up to its mount")

	// ABI 4: TCP connects confined to the ports, which follow the rules.
	b = encodeLandlock(landlockABI(4), llNetConnectTCP, []llRule{tree("/usr", llSystem)}, []uint16{443, 8080})
	require.Len(t, b, 48+24+4+16)
	assert.Equal(t, uint64(llNetConnectTCP), ne.Uint64(b[8:]))
	assert.Equal(t, uint32(2), ne.Uint32(b[44:]))
	assert.Equal(t, uint64(443), ne.Uint64(b[76:]))
	assert.Equal(t, uint64(8080), ne.Uint64(b[84:]))
	b = encodeLandlock(landlockABI(4), 0, nil, []uint16{443})
	assert.Zero(t, ne.Uint64(b[8:]), "not asked: no network right handled")
	assert.Len(t, b, 48, "and no port")
}
