package approval

import (
	"path"
	"sort"
	"strings"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// A container's command acts on the container's own filesystem, processes
// and devices, except where the run options hand it the host's: a bind
// mount of a host path (-v /:/h makes /h/home the host's /home, and a
// recursive delete of / inside crosses into it), --privileged (the host's
// devices, /proc/sysrq-trigger, mounts: the host's root), --pid=host (the
// host's processes to signal) and --device (a host disk under a name of
// the container's). containerCommand rates the command run by docker,
// podman or nerdctl run/create with that mapping: the host paths a bind
// or device names replace the container's, the container's other absolute
// paths are its own, and of the command's hardline findings it keeps those
// the options make real on the host. A relative operand under -w DIR is
// DIR's.

// containerCommand applies the rules to the command a container runs.
func (a *analyzer) containerCommand(c *shellparse.Command, inv *grammar.Invocation) {
	if inv == nil || len(inv.Sub) == 0 {
		return
	}
	if s := inv.Sub[len(inv.Sub)-1]; s != "run" && s != "create" {
		return // exec: the container's mounts are not on this command line
	}
	var binds [][2]string // host path, container path
	privileged, pidHost := false, false
	var entry, workdir string
	for _, o := range inv.Options {
		switch o.Name {
		case "--privileged":
			privileged = true
		case "--pid":
			pidHost = pidHost || strings.EqualFold(o.Value, "host")
		case "--cap-add":
			if l := strings.ToLower(strings.TrimPrefix(strings.ToLower(o.Value), "cap_")); l == "all" || l == "sys_admin" {
				privileged = true
			}
		case "--volume", "--device":
			parts := strings.Split(o.Value, ":")
			if o.ValueArg >= 0 && o.ValueArg < len(c.Args) && !c.Args[o.ValueArg].Literal {
				parts[0] = foldHome(parts[0], "") // -v $HOME:/h is the home; '$HOME:/h' a volume of that name
			}
			if len(parts) == 1 && o.Name == "--device" {
				parts = append(parts, parts[0])
			}
			if len(parts) >= 2 {
				binds = append(binds, [2]string{parts[0], parts[1]})
			}
		case "--mount":
			var src, dst string
			for _, kv := range strings.Split(o.Value, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "source", "src":
					src = v
				case "target", "dst", "destination":
					dst = v
				}
			}
			binds = append(binds, [2]string{src, dst})
		case "--entrypoint":
			entry = o.Value
		case "--workdir", "-w":
			workdir = o.Value
		}
	}
	host := binds[:0]
	for _, b := range binds {
		if (strings.HasPrefix(b[0], "/") || strings.HasPrefix(b[0], "~")) && strings.HasPrefix(b[1], "/") {
			src := b[0]
			if rest, ok := strings.CutPrefix(src, "~"); ok && (rest == "" || rest[0] == '/') {
				home := a.home
				if home == "" {
					home = "/home/user" // a home, whoever's
				}
				src = home + rest
			}
			host = append(host, [2]string{path.Clean(src), path.Clean(b[1])})
		}
	}
	if len(host) == 0 && !privileged && !pidHost {
		return // nothing of the host's is in the container
	}
	// The longest container path decides (-v /:/h -v /etc:/h/etc).
	sort.Slice(host, func(i, j int) bool { return len(host[i][1]) > len(host[j][1]) })
	var words []string
	if entry != "" {
		words = append(words, entry)
	}
	for i, op := range inv.Operands {
		if i == 0 {
			continue // the image
		}
		if op.Arg < 0 || op.Arg >= len(c.Args) || !c.Args[op.Arg].Literal {
			return // not known: the container's own rule stands
		}
		words = append(words, op.Value)
	}
	if len(words) == 0 {
		return
	}
	// Each word maps once; a word that is an ancestor of a bind's container
	// path (rm -rf / with -v /home:/data) reaches the host path too, so
	// one line per such bind is rated as well.
	var lines []string
	line := func(ws []string) string {
		var b strings.Builder
		for i, w := range ws {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(quoteWord(w))
		}
		return b.String()
	}
	if wd := path.Clean(workdir); strings.HasPrefix(wd, "/") {
		// -w DIR: a relative operand names a path in DIR.
		for i, w := range words {
			if i > 0 && w != "" && w[0] != '-' && w[0] != '/' && !strings.ContainsAny(w, "= \t\n'\"") {
				words[i] = path.Join(wd, w)
			}
		}
	}
	mapped := make([]string, len(words))
	for i, w := range words {
		mapped[i] = mapContainerPath(w, host, privileged)
	}
	if len(words) > 2 && path.Base(words[0]) == "chroot" && mapped[1] == "/" {
		// chroot /h CMD with -v /:/h: CMD's paths are the host's.
		words = words[2:]
		mapped = append([]string(nil), words...)
	}
	lines = append(lines, line(mapped))
	for i, w := range words {
		if !strings.HasPrefix(w, "/") {
			continue
		}
		cw := path.Clean(w)
		for _, b := range host {
			if cw != b[1] && (cw == "/" || strings.HasPrefix(b[1], cw+"/")) {
				alt := append([]string(nil), mapped...)
				alt[i] = b[0]
				lines = append(lines, line(alt))
			}
		}
	}
	// The same command with every path the container's own: a hardline
	// finding only the host's paths make (echo b > /p/sysrq-trigger with
	// -v /proc:/p) acts on the host, whatever its rule.
	own := map[string]bool{}
	ownWords := make([]string, len(words))
	for i, w := range words {
		ownWords[i] = mapContainerPath(w, nil, false)
	}
	if sub := a.sub(line(ownWords)); sub != nil {
		for _, f := range sub.Findings {
			own[f.Rule] = true
		}
	}
	for _, l := range lines {
		sub := a.sub(l)
		if sub == nil {
			continue
		}
		for _, f := range sub.Findings {
			if f.Tier != TierHardline {
				continue
			}
			switch {
			case privileged, !own[f.Rule]:
			case f.Rule == RuleRmRoot, f.Rule == RuleDiskFormat, f.Rule == RuleDiskWrite, f.Rule == RuleDeviceUnknown:
			case f.Rule == RuleKillAll && pidHost:
			default:
				continue // not the host's: the container's own processes, power, …
			}
			a.hit(f.Rule, c.Text, c.Span)
		}
	}
}

// containerRoot stands for the container's own root in a mapped path: a
// directory no rule counts as the host's.
const containerRoot = "/var/lib/container-root"

// mapContainerPath rewrites a word of a container's command to the host
// path it names: a path at or below a bind's container path becomes the
// host path (also inside a longer word, "sh -c 'rm -rf /h/home'"); any
// other absolute path is the container's own (its /dev too, unless the
// container is privileged).
func mapContainerPath(w string, binds [][2]string, privileged bool) string {
	for _, b := range binds {
		if w == b[1] || strings.HasPrefix(w, b[1]+"/") {
			return b[0] + strings.TrimPrefix(w, b[1])
		}
	}
	if strings.HasPrefix(w, "/") {
		if privileged && (strings.HasPrefix(w, "/dev/") || strings.HasPrefix(w, "/proc/") || strings.HasPrefix(w, "/sys/")) {
			return w
		}
		return containerRoot + w
	}
	for _, b := range binds {
		if b[1] == "/" {
			continue
		}
		w = replacePathPrefix(w, b[1], b[0])
	}
	return w
}

// replacePathPrefix replaces each occurrence of the path from in text
// that starts a path (after the start, a space, a quote, "=" or ":") and
// ends at a path boundary.
func replacePathPrefix(text, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, from)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(from)
		startOK := i == 0 || strings.IndexByte(" \t\n'\"=:;&|(", text[i-1]) >= 0
		endOK := end == len(text) || strings.IndexByte("/ \t\n'\";&|)", text[end]) >= 0
		b.WriteString(text[:i])
		if startOK && endOK {
			b.WriteString(to)
		} else {
			b.WriteString(from)
		}
		text = text[end:]
	}
}

// sshLoopback rates what ssh runs on this machine: a remote command (or,
// with none, the shell script on its input) given to a loopback host
// (localhost, 127.0.0.0/8, ::1) runs here, as a shell's -c would. Other
// hosts are approval.remote-exec.
func (a *analyzer) sshLoopback(c *shellparse.Command, inv *grammar.Invocation) {
	var host string
	var cmd []string
	for _, op := range inv.Operands {
		switch {
		case op.Effects.Has(grammar.Target) && host == "":
			host = op.Value
		case op.Effects.Has(grammar.Exec):
			cmd = append(cmd, op.Value)
		}
	}
	if !loopbackHost(host) {
		return
	}
	for _, op := range inv.Operands {
		if op.Arg >= 0 && op.Arg < len(c.Args) && !c.Args[op.Arg].Literal {
			return
		}
	}
	if len(cmd) > 0 {
		// ssh joins its command words with spaces for the remote shell.
		a.keepHardline(c, strings.Join(cmd, " "))
		return
	}
	a.keepHardline(c, a.fedCommands(c, "", nil))
}

// loopbackHost reports whether an ssh destination ([user@]host, or
// ssh://[user@]host[:port]) names this machine by a loopback name.
func loopbackHost(h string) bool {
	h = strings.TrimPrefix(h, "ssh://")
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), "/")
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	switch strings.ToLower(h) {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "::1", "0", "0.0.0.0":
		return true
	}
	return strings.HasPrefix(h, "127.") && strings.Trim(h, "0123456789.") == ""
}
