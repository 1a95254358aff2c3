package grammar

import "strings"

// Power: halting, rebooting, powering off or isolating the machine, through
// every door: the power commands, init levels, systemd verbs, targets and
// units, and D-Bus calls to logind or systemd.
func power() []*Spec {
	powerHelp := gnu(ops(flag("--wtmp-only -w", 0), flag("--force -f", 0), flag("--no-wtmp -d", 0), flag("--no-sync -n", 0), flag("--poweroff -p", 0), flag("--halt -h", 0), flag("--reboot -r", 0)), flags("--no-wall -q -l"))
	return []*Spec{
		{Name: "reboot", Aliases: []string{"halt", "poweroff"}, Effects: Power, Options: powerHelp, Refine: func(inv *Invocation) {
			if inv.Has("--wtmp-only") {
				inv.Effects &^= Power
			}
		}},
		{Name: "shutdown", Effects: Power, Options: ops(flag("--help", DryRun), flag("--version", DryRun),
			flag("--halt -H", 0), flag("--poweroff -P", 0), flag("--reboot -r", 0), flag("--kexec -K", 0), flag("-h", 0),
			flag("-c", 0), flag("--show", 0), flag("-k", 0), flag("--no-wall", 0), arg("-t", 0),
			flag("-a", 0), flag("-f", 0), flag("-F", 0), flag("-n", 0)), Refine: refineShutdown},
		{Name: "init", Aliases: []string{"telinit", "runit-init"}, Options: gnu(args("-t -e")),
			Operands: []OperandRule{{Index: 0, Values: values(Power, "0 6 1 s S single emergency rescue halt poweroff reboot")}}},
		{Name: "openrc-shutdown", Effects: Power, Options: gnu(ops(flag("--write-only -w", 0), flag("--dry-run -D", 0), flag("--cancel -c", 0)), flags("-H --halt -k --kexec -p --poweroff -r --reboot -s --single")),
			Refine: func(inv *Invocation) {
				if inv.Has("--write-only") || inv.Has("--dry-run") || inv.Has("--cancel") {
					inv.Effects &^= Power
				}
			}},
		{Name: "kexec", Effects: Power, Options: gnu(
			ops(flag("--load -l", 0), flag("--load-panic -p", 0), flag("--unload -u", 0), flag("--exec -e", 0),
				arg("--append", 0), arg("--command-line", 0), arg("--initrd", 0), arg("--type -t", 0), arg("--reuse-cmdline", 0)),
			flags("-s --kexec-file-syscall -c --kexec-syscall -a --kexec-syscall-auto -x --no-ifdown -f --force -i --no-checks -d --debug")),
			Refine: func(inv *Invocation) {
				if (inv.Has("--load") || inv.Has("--load-panic") || inv.Has("--unload")) && !inv.Has("--exec") {
					inv.Effects &^= Power
				}
			}},
		systemctl(),
		{Name: "loginctl", Persistent: true, Options: gnu(args("-H --host -M --machine -p --property -s --signal --kill-whom -n --lines -o --output"),
			flags("--user --system -a --all --value -l --full --no-pager --no-legend --no-ask-password")),
			Subs: []*Spec{
				sub("kill-session kill-user terminate-session terminate-user terminate-seat", Kill),
				sub("poweroff reboot halt", Power),
			}},
		// rtcwake -m off|disk powers off (off calls shutdown, disk
		// hibernates); the suspend modes (standby, the default, mem,
		// freeze) stop the machine until the alarm, as systemctl suspend.
		{Name: "rtcwake", Options: gnu(ops(arg("--mode -m", 0), flag("--dry-run -n", DryRun), flag("--list-modes", DryRun)),
			args("--seconds -s --time -t --date --device -d"), flags("--auto -a --local -l --utc -u --verbose -v --adjfile -A")),
			Refine: func(inv *Invocation) {
				mode, ok := inv.Value("--mode")
				switch {
				case !ok:
					mode = "standby"
				case mode == "no" || mode == "on" || mode == "disable" || mode == "show":
					return
				}
				if mode == "off" || mode == "disk" {
					inv.Effects |= Power
				} else {
					inv.Effects |= ServiceStop
				}
			}},
		// ipmitool talks to the local BMC (or -H's): chassis power
		// off/reset/cycle/soft (also "power …" alone) and "mc reset" halt
		// or reset the machine at once.
		{Name: "ipmitool", Options: join(args("-I -H -U -P -f -k -y -L -p -t -b -T -B -l -m -o -O -R -N -C -c -e -S -K -D -Y"), flags("-v -V -h -E -A -a -x -z -4 -6")),
			Refine: refineIpmitool},
		// Desktop session tools end the session and power the machine
		// off or reboot it.
		{Name: "gnome-session-quit", Options: ops(flag("--power-off", Power), flag("--reboot", Power), flag("--logout", 0), flag("--no-prompt", 0), flag("--force", 0))},
		{Name: "xfce4-session-logout", Options: ops(flag("--halt -h", Power), flag("--reboot -r", Power), flag("--logout -l", 0), flag("--suspend -s", 0),
			flag("--hibernate -i", 0), flag("--hybrid-sleep -b", 0), flag("--switch-user -u", 0), flag("--fast -f", 0))},
		{Name: "busctl", Aliases: []string{"dbus-send", "gdbus", "qdbus", "dbus"}, Refine: refineDBus},
	}
}

// refineShutdown reads shutdown's action as systemd's shutdown does: each
// of -H, -P, -r, -K, -h, -c and --show sets the action and the last one
// wins ("shutdown -c -r now" reboots, "shutdown -r -c" cancels); -k only
// warns wherever it is. sysvinit's shutdown cancels on -c wherever it is,
// so the last action is the worse of the two readings. --help (any unique
// prefix: "--he") prints and exits before anything is done.
func refineShutdown(inv *Invocation) {
	last := ""
	for _, o := range inv.Options {
		switch o.Name {
		case "-k":
			inv.Effects &^= Power
			return
		case "--halt", "--poweroff", "--reboot", "--kexec", "-h", "-c", "--show":
			last = o.Name
		}
	}
	if last == "-c" || last == "--show" {
		inv.Effects &^= Power
	}
}

// powerUnits are systemd units and targets that halt, reboot or isolate
// the machine when started, with and without their suffix.
var powerUnits = func() map[string]Effect {
	m := map[string]Effect{}
	for _, u := range strings.Fields("reboot poweroff halt kexec ctrl-alt-del rescue emergency soft-reboot exit shutdown final " +
		"systemd-reboot systemd-poweroff systemd-halt systemd-kexec systemd-soft-reboot sigpwr " +
		// systemd's SysV aliases: runlevel0 is poweroff, 1 rescue, 6 reboot.
		"runlevel0 runlevel1 runlevel6") {
		m[u] = Power
		m[u+".target"] = Power
		m[u+".service"] = Power
	}
	return m
}()

// sleepUnits are the sleep targets: started, they suspend or hibernate the
// machine as systemctl suspend and hibernate do.
var sleepUnits = func() map[string]Effect {
	m := map[string]Effect{}
	for _, u := range strings.Fields("suspend hibernate hybrid-sleep suspend-then-hibernate sleep systemd-suspend systemd-hibernate systemd-hybrid-sleep systemd-suspend-then-hibernate") {
		m[u+".target"] = ServiceStop
		m[u+".service"] = ServiceStop
	}
	return m
}()

// valuesOf gives every key of m the effect e.
func valuesOf(m map[string]Effect, e Effect) map[string]Effect {
	out := make(map[string]Effect, len(m))
	for k := range m {
		out[k] = e
	}
	return out
}

// systemctl's verbs follow global options that may take values; the power
// verbs halt the machine, and starting a power unit or isolating a rescue
// target does too.
func systemctl() *Spec {
	stop := ServiceStop
	return &Spec{Name: "systemctl", Persistent: true, Options: gnu(
		args("-H --host -M --machine -t --type -p --property -P -s --signal --root --image -n --lines -o --output "+
			"--kill-whom --kill-who --kill-value --state --job-mode --what --boot-loader-entry --boot-loader-menu "+
			"--message --timestamp --check-inhibitors --when --preset-mode --drop-in --image-policy --reboot-argument"),
		ops(flag("--dry-run", DryRun)),
		flags("--user --system --global --now --force -f -i --ignore-inhibitors --no-block -q --quiet --no-pager "+
			"--no-ask-password -a --all -l --full -r --recursive --reverse --after --before --failed --no-legend "+
			"--no-wall --runtime --no-reload --show-types -T --show-transaction --firmware-setup --mkdir --read-only "+
			"--plain --value --no-warn --marked --wait --legend --with-dependencies --ignore-dependencies --fail --replace --irreversible")),
		Subs: []*Spec{
			sub("reboot poweroff halt kexec soft-reboot emergency rescue exit", Power),
			{Name: "start", Aliases: []string{"restart-or-start", "try-start", "reload-or-restart", "restart", "try-restart", "condrestart", "enqueue", "isolate"},
				Operands: []OperandRule{{All: true, Effects: Target, Values: powerUnits}, {All: true, Values: sleepUnits}}},
			// enable --now starts what it enables (read in Refine).
			sub("enable reenable", 0),
			sub("stop disable mask kill terminate force-reload freeze clean suspend hibernate hybrid-sleep suspend-then-hibernate sleep", stop),
			// A power target as the default target halts every boot.
			{Name: "set-default", Operands: []OperandRule{{All: true, Effects: Target, Values: valuesOf(powerUnits, stop)}}},
		},
		Refine: func(inv *Invocation) {
			if len(inv.Sub) == 0 {
				return
			}
			switch inv.Sub[0] {
			case "restart", "try-restart", "reload-or-restart", "condrestart", "isolate":
				inv.Effects |= stop
			case "enable", "reenable":
				if inv.Has("--now") {
					for _, op := range inv.Operands {
						inv.Effects |= powerUnits[op.Value] | sleepUnits[op.Value]
					}
				}
			case "kill":
				// A pattern matching every unit ("*", "*.service")
				// signals every service: journald, logind, sshd, getty.
				for _, op := range inv.Operands {
					if v := strings.Trim(op.Value, "*"); strings.Contains(op.Value, "*") && (v == "" || v == "." || v == ".service" || v == ".scope" || v == ".slice") {
						inv.Effects |= KillAll
					}
				}
			}
		},
	}
}

// dbusPowerMethods are logind and systemd manager methods that halt or
// reboot; dbusStopMethods stop or kill units.
var (
	dbusPowerMethods = map[string]bool{
		"poweroff": true, "reboot": true, "halt": true, "kexec": true, "softreboot": true, "poweroffwithflags": true,
		"rebootwithflags": true, "haltwithflags": true, "kexecwithflags": true, "scheduleshutdown": true, "exit": true,
	}
	dbusStopMethods = map[string]bool{
		"stopunit": true, "killunit": true, "restartunit": true, "tryrestartunit": true, "reloadorrestartunit": true,
		"disableunitfiles": true, "maskunitfiles": true, "killsession": true, "killuser": true, "terminatesession": true,
		"terminateuser": true, "suspend": true, "hibernate": true, "hybridsleep": true, "suspendthenhibernate": true,
	}
	// "start" is the Unit interface's own method, called on the unit's
	// object path (/org/freedesktop/systemd1/unit/reboot_2etarget);
	// EnqueueUnitJob(name, "start", mode) is what systemctl's
	// --show-transaction calls.
	dbusStartMethods = map[string]bool{"startunit": true, "startunitreplace": true, "startunitwithflags": true, "startunitreplacewithflags": true,
		"enqueueunitjob": true, "start": true, "restart": true, "reloadorrestart": true}
	// consoleKitPowerMethods are ConsoleKit's Manager methods (older
	// distributions): Stop powers off, Restart reboots.
	consoleKitPowerMethods = map[string]bool{"stop": true, "restart": true}
)

// refineDBus reads a D-Bus call (busctl, dbus-send, gdbus, qdbus) to logind
// or systemd: the method is the last dot- or slash-separated part of any
// word, so every spelling of the call is found.
func refineDBus(inv *Invocation) {
	target, consoleKit := false, false
	for _, a := range inv.Args {
		l := strings.ToLower(a)
		if strings.Contains(l, "login1") || strings.Contains(l, "systemd1") {
			target = true
		}
		consoleKit = consoleKit || strings.Contains(l, "consolekit")
	}
	if consoleKit {
		for _, a := range inv.Args {
			if m := dbusMethod(a); consoleKitPowerMethods[m] {
				inv.Effects |= Power
			}
		}
	}
	if !target {
		return
	}
	start := false
	for _, a := range inv.Args {
		switch m := dbusMethod(a); {
		case dbusPowerMethods[m]:
			inv.Effects |= Power
		case dbusStopMethods[m]:
			inv.Effects |= ServiceStop
		case dbusStartMethods[m]:
			start = true
		}
	}
	if start {
		for _, a := range inv.Args {
			v := a
			if i := strings.IndexByte(v, ':'); i >= 0 { // dbus-send string:reboot.target
				v = v[i+1:]
			}
			v = strings.Trim(v, `"'`)
			if i := strings.LastIndexByte(v, '/'); i >= 0 { // the unit's object path
				v = unescapeBusLabel(v[i+1:])
			}
			if powerUnits[v] != 0 {
				inv.Effects |= Power
			}
		}
	}
}

// dbusMethod is the method a word names: its last dot- or slash-separated
// part, lower-cased.
func dbusMethod(a string) string {
	m := strings.ToLower(a)
	if i := strings.LastIndexAny(m, "./"); i >= 0 {
		m = m[i+1:]
	}
	return m
}

const hexDigits = "0123456789abcdef"

// unescapeBusLabel undoes sd-bus's object path escaping: "_2e" is ".",
// so "reboot_2etarget" is reboot.target.
func unescapeBusLabel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i+2 < len(s) {
			hi, lo := strings.IndexByte(hexDigits, s[i+1]|0x20), strings.IndexByte(hexDigits, s[i+2]|0x20)
			if hi >= 0 && lo >= 0 {
				b.WriteByte(byte(hi<<4 | lo))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// refineIpmitool finds "power off|reset|cycle|soft|down" (after "chassis"
// or alone) and "mc reset" among the operands.
func refineIpmitool(inv *Invocation) {
	ops := inv.Operands
	for i := 0; i+1 < len(ops); i++ {
		a, b := strings.ToLower(ops[i].Value), strings.ToLower(ops[i+1].Value)
		switch {
		case a == "power" && (b == "off" || b == "reset" || b == "cycle" || b == "soft" || b == "down" || b == "diag"):
			inv.Effects |= Power
		case a == "mc" && b == "reset":
			inv.Effects |= Power
		}
	}
}
