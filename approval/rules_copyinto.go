package approval

import (
	"path"
	"strings"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// A copy into a directory writes DIR/NAME for each source NAME: "cp sda
// /dev/" and "cp -t /dev sda" open /dev/sda for writing (O_TRUNC on an
// existing file), as "cp sda /dev/sda" does. copyInto forms those paths and
// gives each to the write-target rules.

// deviceDirs are the directories of device nodes a destination names as a
// directory even without a trailing slash ("cp sda /dev").
var deviceDirs = map[string]bool{"/dev": true, "/dev/mapper": true, "/dev/block": true, "/dev/raw": true,
	"/dev/disk/by-id": true, "/dev/disk/by-uuid": true, "/dev/disk/by-path": true, "/dev/disk/by-label": true,
	"/dev/disk/by-partuuid": true, "/dev/disk/by-partlabel": true, "/dev/disk/by-diskseq": true}

// copyInto applies the write-target rules to the files cp, install and
// rsync --inplace write when their destination is a directory. Plain rsync
// writes a temporary file and renames it over the name, which replaces a
// device node rather than writing the disk; the destination operand's own
// rules cover it.
func (a *analyzer) copyInto(c *shellparse.Command, inv *grammar.Invocation) {
	switch inv.Program {
	case "cp", "install":
	case "rsync":
		if !inv.Has("--inplace") {
			return
		}
	default:
		return
	}
	if inv.Has("--no-target-directory") {
		return
	}
	dir, srcs := "", inv.Operands
	if v, ok := inv.Value("--target-directory"); ok {
		dir = v
	} else if n := len(srcs); n >= 2 {
		last := srcs[n-1].Value
		if !strings.HasSuffix(last, "/") && path.Base(last) != "." && path.Base(last) != ".." && !deviceDirs[a.fold(last)] {
			return
		}
		dir, srcs = last, srcs[:n-1]
	}
	if dir == "" {
		return
	}
	d := a.fold(dir)
	for _, s := range srcs {
		a.writeTarget(c, strings.TrimSuffix(d, "/")+"/"+path.Base(s.Value), false)
	}
}
