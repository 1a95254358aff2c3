package approval

import (
	"strings"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// A write to a disk device is hardline wherever it comes from. The grammar
// says, for the programs it knows, which words are read and which written;
// a disk device named anywhere else (given to a program the grammar does
// not know, or in a word its grammar cannot place because an option was
// not known) may be an output (openssl -out, a cloner's destination, an
// encoder's output operand), so it fails closed. Programs that only read
// devices (blkid, smartctl, lsblk, cat …) are in the grammar or the safe
// class, which says so.

// deviceUse applies the rule to c, read as inv (nil for a program the
// grammar does not know).
func (a *analyzer) deviceUse(c *shellparse.Command, inv *grammar.Invocation, args []string) {
	known := inv != nil && inv.Spec != nil
	if !known {
		if deviceInert[c.Program] || c.Program == "" || c.Program[0] == '-' {
			return // "time -o /dev/sda ls": bash's time keyword has no -o, and "-o" is no program
		}
		if check, ok := safePrograms()[c.Program]; ok && (check == nil || check(args)) {
			return // a read-only program read as read-only
		}
		for i := range c.Args {
			if a.namesDevice(c, c.Args[i].Value) {
				a.hitCmd(RuleDeviceUnknown, c)
				return
			}
		}
		return
	}
	if !inv.Unknown {
		return // every word is where the grammar put it
	}
	for _, op := range inv.Operands {
		if op.Effects == 0 && a.namesDevice(c, op.Value) {
			a.hitCmd(RuleDeviceUnknown, c)
			return
		}
	}
	for _, o := range inv.Options {
		if o.Known {
			continue
		}
		// An unknown option's value: attached, or (the grammar does not
		// know whether it takes one) the next word, whatever the grammar
		// then made of that word.
		v := ""
		switch {
		case o.HasValue:
			v = o.Value
		case o.Arg+1 < len(inv.Args):
			v = inv.Args[o.Arg+1]
		}
		if v != "" && a.namesDevice(c, v) {
			a.hitCmd(RuleDeviceUnknown, c)
			return
		}
	}
}

// deviceInert are builtins whose words name nothing they open: a
// declaration stores the text ("export DISK=/dev/sda").
var deviceInert = map[string]bool{"export": true, "declare": true, "typeset": true, "local": true, "readonly": true,
	"set": true, "unset": true, "shift": true, "alias": true, "unalias": true, "hash": true, "type": true,
	"command": true, "builtin": true, "exit": true, "return": true, "wait": true, "read": true}

// namesDevice reports whether the word value v names a disk or raw
// hardware device: as a whole, after an option's or key's "=" ("of=…",
// "--output=…", "id=0,dest=…"), or attached to a short option ("-o/dev/sda").
func (a *analyzer) namesDevice(c *shellparse.Command, v string) bool {
	if !strings.Contains(v, "dev") && !strings.Contains(v, "{}") && !strings.HasPrefix(a.cwd, "/dev") {
		return false // the common case: no device can be named
	}
	if a.blockDevice(c, v) {
		return true
	}
	if len(v) > 2 && v[0] == '-' && v[1] != '-' && a.blockDevice(c, v[2:]) {
		return true
	}
	for rest := v; ; {
		i := strings.IndexByte(rest, '=')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		val := rest
		if j := strings.IndexByte(val, ','); j >= 0 {
			val = val[:j]
		}
		if val != "" && a.blockDevice(c, val) {
			return true
		}
	}
}

// sysNodeRule returns the rule for a write to the canonical path p when
// it is a kernel node whose write halts or cuts off the machine, or "": the
// magic SysRq trigger ("b" reboots, "o" powers off, at once), an armed
// hardware watchdog (opened and closed without the magic 'V', it reboots
// the machine), /sys/power/state ("disk" hibernates and powers down,
// "mem" suspends); and a disk's sysfs delete or remove node (the kernel
// drops the device, and with the root disk the running system's files).
func sysNodeRule(p string) string {
	p = procRoot(p)
	switch {
	case p == "/proc/sysrq-trigger", p == "/sys/power/state", p == "/sys/power/disk", strings.HasPrefix(p, "/dev/watchdog"):
		return RulePower
	case strings.HasPrefix(p, "/sys/") && (strings.HasSuffix(p, "/delete") || strings.HasSuffix(p, "/remove")):
		return RuleDiskWrite
	}
	return ""
}
