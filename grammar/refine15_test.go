package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRefineIssue15 checks the effects the issue 15 families give, and the
// forms that must not have them.
func TestRefineIssue15(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd  string
		has  Effect
		lack Effect
	}{
		{"kill -INT 1", Power, 0},
		{"kill -s SIGRTMIN+4 01", Power, 0},
		{"kill 1", Power, 0},
		{"kill -0 1", 0, Power | Signal},
		{"kill -9 -0001", KillAll, 0},
		{"kill -TERM 12345", Signal, Power | KillAll},
		{"fuser -km /", KillAll | Kill, 0},
		{"fuser -km /mnt/usb", Kill, KillAll},
		{"fuser -v /", 0, Kill | KillAll},
		{"rtcwake -m off -s 60", Power, 0},
		{"rtcwake -s 60", ServiceStop, Power},
		{"rtcwake -m show", 0, Power | ServiceStop},
		{"ipmitool chassis power cycle", Power, 0},
		{"ipmitool chassis power status", 0, Power},
		{"lvresize -L 1M vg/root", Format | Device, 0},
		{"lvresize -L +1G vg/root", 0, Format},
		{"btrfs dev add /dev/sdb /", Format, 0},
		{"btrfs device usage /", 0, Format},
		{"mkfs.bcachefs /dev/sda", Format, 0},
		{"sg_format /dev/sda", 0, Format},
		{"sg_format --format /dev/sda", Format, 0},
		{"tar --remove-files -cf x.tar d", Delete | Recursive, 0},
		{"tar cf x.tar d", 0, Delete},
		{"tune2fs -l /dev/sda1", DryRun, DiskChange},
		{"mke2fs -n /dev/sda", DryRun, 0},
		{"dc3dd wipe=/dev/sda", DeviceWrite, 0},
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		inv := Parse(f[0], f[1:])
		assert.True(t, inv.Effects.Has(c.has), "%q: want %b in %b", c.cmd, c.has, inv.Effects)
		assert.False(t, inv.Effects.Any(c.lack), "%q: want none of %b in %b", c.cmd, c.lack, inv.Effects)
	}
}

// TestTraditionalTar: "tar cfb A 20 x" is -c -f A -b 20 x, with each
// option's word index that of the argument it came from.
func TestTraditionalTar(t *testing.T) {
	t.Parallel()
	inv := Parse("tar", []string{"cfb", "/dev/sda", "20", "x"})
	v, ok := inv.Value("--file")
	assert.True(t, ok)
	assert.Equal(t, "/dev/sda", v)
	for _, o := range inv.Options {
		if o.Name == "--file" {
			assert.Equal(t, 0, o.Arg)
			assert.Equal(t, 1, o.ValueArg)
		}
	}
	if assert.Len(t, inv.Operands, 1) {
		assert.Equal(t, "x", inv.Operands[0].Value)
		assert.Equal(t, 3, inv.Operands[0].Arg)
	}
	assert.Equal(t, []string{"cfb", "/dev/sda", "20", "x"}, inv.Args)
	// A first word that is not a cluster of tar's letters is an operand.
	assert.False(t, Parse("tar", []string{"zzq", "x"}).Has("--file"))
}
