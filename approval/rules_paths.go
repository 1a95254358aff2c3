package approval

import (
	"path"
	"strings"
	"sync"
)

// Path folding. Rules compare paths in one canonical form so that every
// spelling of a location matches the same way:
//
//   - the current user's home, however written ("~", "~/", "$HOME", "${HOME}",
//     a quoted "~/x", or the literal AnalyzeOptions.Home such as /root or
//     /home/alice), becomes "~" followed by the rest of the path;
//   - the path is cleaned ("//" is "/", "a/../b" is "b", a trailing "/" goes);
//   - a relative path is joined to AnalyzeOptions.Cwd when that is known, and
//     otherwise stays relative (rules then cannot tell where it points and
//     treat it as an ordinary path).
//
// Other users' homes (/home/NAME, /Users/NAME, ~NAME) are recognised by
// homeRel, so credential and rc-file rules hold for every account.

// fold returns the canonical form of the path word value v.
func (a *analyzer) fold(v string) string {
	v = foldHome(a.procCwd(v), a.home)
	if v == "" {
		return v
	}
	if v[0] != '/' && v[0] != '~' && !strings.HasPrefix(v, "$") {
		if a.cwd == "" {
			// A relative name stays relative: "./~" is a directory
			// named "~", not the home.
			if isClean(v) && v[0] != '~' {
				return v
			}
			c := path.Clean(v)
			if strings.HasPrefix(c, "~") {
				return "./" + c
			}
			return c
		}
		for strings.HasPrefix(v, "./") {
			v = v[2:] // "./x" is x: the join below then needs no cleaning
		}
		if v == "" || v == "." {
			v = a.cwd
		} else {
			v = a.cwd + "/" + v
		}
	}
	return procRoot(cleanPath(v))
}

// procCwd resolves a leading /proc/PID/cwd in v: the kernel follows that
// link to the process's working directory before it reads what comes after,
// so "/proc/self/cwd/../dev/sda" is /dev/sda when the shell is in /work, not
// the /proc/self/dev/sda a lexical clean would make of it. The shell's own
// (self, thread-self, $$, $BASHPID) is the tracked cwd; another process's,
// or the shell's when the cwd is unknown, is taken to be "/" (init's is),
// where a climb with ".." lands on what is most at stake.
func (a *analyzer) procCwd(v string) string {
	rest, ok := strings.CutPrefix(v, "/proc/")
	if !ok {
		return v
	}
	pid, after, _ := strings.Cut(rest, "/")
	tail, ok := strings.CutPrefix(after, "cwd")
	if !ok || tail != "" && tail[0] != '/' {
		return v
	}
	dir := "/"
	switch pid {
	case "self", "thread-self", "$$", "${$}", "$BASHPID", "${BASHPID}":
		if a.cwd != "" {
			dir = a.cwd
		}
	default:
		if strings.Trim(pid, "0123456789") != "" {
			return v
		}
	}
	if tail == "" || tail == "/" {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + tail
}

// foldHome rewrites a leading home spelling in v to "~".
func foldHome(v, home string) string {
	for _, p := range [...]string{"${HOME}", "$HOME"} {
		if strings.HasPrefix(v, p) && (len(v) == len(p) || v[len(p)] == '/') {
			return "~" + v[len(p):]
		}
	}
	if home != "" && home != "/" && strings.HasPrefix(v, home) && (len(v) == len(home) || v[len(home)] == '/') {
		return "~" + v[len(home):]
	}
	return v
}

// cleanPath cleans p like path.Clean, keeping a leading "~" as the home root.
// A path that climbs out of the home ("~/..") resolves against a stand-in
// home of /home/user, so it lands where rules can judge it ("/home").
func cleanPath(p string) string {
	if isClean(p) {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		const stand = "/home/user"
		c := path.Clean(stand + p[1:])
		if c == stand {
			return "~"
		}
		if strings.HasPrefix(c, stand+"/") {
			return "~" + c[len(stand):]
		}
		return c
	}
	if p == "" {
		return p
	}
	return path.Clean(p)
}

// homeRel reports whether the canonical path p lies in a home directory (the
// current user's "~", /root, /home/NAME, /Users/NAME or ~NAME) and returns the
// part below the home without a leading slash ("" for the home itself).
func homeRel(p string) (string, bool) {
	switch {
	case p == "~":
		return "", true
	case strings.HasPrefix(p, "~/"):
		return p[2:], true
	case strings.HasPrefix(p, "~"):
		// ~NAME/rest: another user's home.
		if i := strings.IndexByte(p, '/'); i > 0 {
			return p[i+1:], true
		}
		return "", true
	case p == "/root":
		return "", true
	case strings.HasPrefix(p, "/root/"):
		return p[len("/root/"):], true
	}
	for _, base := range [...]string{"/home/", "/Users/"} {
		if strings.HasPrefix(p, base) {
			rest := p[len(base):]
			if rest == "" || rest == "*" {
				return "", false // the directory of homes, not a home
			}
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return rest[i+1:], true
			}
			return "", true
		}
	}
	return "", false
}

// under reports whether rel equals dir or lies below it.
func under(rel, dir string) bool {
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}

// credentialDirs are home-relative places that hold credentials.
var credentialDirs = []string{
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".config/gh",
	".config/gcloud", ".config/hub", ".netrc", ".git-credentials", ".npmrc",
	".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	".vault-token", ".password-store", ".local/share/keyrings", ".terraform.d",
	".config/op", ".pgpass", ".my.cnf", ".s3cfg", ".boto",
}

// shellRCFiles are home-relative shell start-up files.
var shellRCFiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
	".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".config/fish", ".inputrc",
	".xprofile", ".xinitrc", ".login", ".envrc",
}

// agentDirs are home-relative directories of agent control planes (tether's
// own and the peer agent's); an agent must not rewrite its own guardrails.
var agentDirs = []string{".hermes", ".config/tether", ".local/share/tether", ".local/state/tether"}

// agentEnvDirs are environment variables naming agent control-plane homes.
var agentEnvDirs = []string{"HERMES_HOME", "TETHER_HOME", "TETHER_CONFIG"}

// inList reports whether rel is one of dirs or below one of them.
func inList(rel string, dirs []string) bool {
	for _, d := range dirs {
		if under(rel, d) {
			return true
		}
	}
	return false
}

// systemDirs are directories whose recursive deletion wrecks the host.
var systemDirs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"/": true, "/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true,
		"/lib": true, "/lib32": true, "/lib64": true, "/libx32": true, "/media": true,
		"/mnt": true, "/opt": true, "/proc": true, "/root": true, "/run": true, "/sbin": true,
		"/srv": true, "/sys": true, "/usr": true, "/var": true, "/snap": true,
		"/usr/bin": true, "/usr/sbin": true, "/usr/lib": true, "/usr/lib64": true,
		"/usr/local": true, "/usr/share": true, "/usr/include": true, "/usr/libexec": true,
		"/var/lib": true, "/var/log": true, "/var/spool": true, "/var/cache": true,
		"/System": true, "/Library": true, "/Applications": true, "/Users": true,
		"/private": true, "/private/etc": true, "/private/var": true,
	}
})

// isCatastrophicTarget reports whether deleting the canonical path p
// recursively destroys the system or a home: "/", a system directory, a
// home directory, or every entry of one of those ("/*", "~/*", "/etc/*").
func isCatastrophicTarget(p string) bool {
	if p == "" {
		return false
	}
	for _, suf := range [...]string{"/*", "/.*", "/*/", "/.[!.]*"} {
		if strings.HasSuffix(p, suf) {
			parent := p[:len(p)-len(suf)]
			if parent == "" {
				parent = "/"
			}
			return isCatastrophicTarget(cleanPath(parent))
		}
	}
	if p == "*" || p == ".*" {
		return false // relative glob, cwd unknown
	}
	if dir := globDirTarget(p); dir != "" {
		// "~/?*", "~/[!.]*", "/etc/@(*)": every entry of dir.
		return isCatastrophicTarget(cleanPath(dir))
	}
	p = procRoot(p)
	if systemDirs()[p] {
		return true
	}
	if base := path.Base(p); strings.ContainsAny(base, "*?[") && strings.HasPrefix(p, "/") {
		// A glob whose matches include a system directory deletes it:
		// "/[a-z]*" and "/b*" take /bin (and /boot …), as "/*" does.
		parent := path.Dir(p)
		for d := range systemDirs() {
			if d != "/" && path.Dir(d) == parent {
				if ok, _ := path.Match(base, path.Base(d)); ok {
					return true
				}
			}
		}
	}
	if rel, ok := homeRel(p); ok && rel == "" {
		return true
	}
	return false
}

// isEtc reports whether the canonical path p is /etc or below it (including
// macOS /private/etc).
func isEtc(p string) bool {
	return under(p, "/etc") || under(p, "/private/etc")
}

// procRoot strips a leading /proc/PID/root (or /proc/self/root,
// /proc/thread-self/root): a path through a process's root is the same file.
func procRoot(p string) string {
	for {
		rest, ok := strings.CutPrefix(p, "/proc/")
		if !ok {
			return p
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 || !strings.HasPrefix(rest[i:], "/root") || (len(rest) > i+5 && rest[i+5] != '/') {
			return p
		}
		p = rest[i+5:]
		if p == "" {
			p = "/"
		}
	}
}

// nonBlockDevDirs are directories under /dev that hold no disks.
var nonBlockDevDirs = map[string]bool{
	"pts": true, "shm": true, "fd": true, "net": true, "snd": true, "input": true, "dri": true, "bus": true,
	"char": true, "mqueue": true, "hugepages": true, "cpu": true, "usb": true, "v4l": true, "serial": true,
	"vfio": true, "dma_heap": true, "tcp": true, "udp": true, "stdin": true, "stdout": true, "stderr": true,
	"snd/by-path": true, "dvb": true, "hidraw": true, "vhost-net": true, "kvm": true,
}

// blockPrefixes are the names of disk and partition device nodes (followed
// by a letter or digit, or a glob).
var blockPrefixes = [...]string{"sd", "hd", "vd", "xvd", "nvme", "ng", "mmcblk", "md", "nbd", "dm-", "loop", "disk",
	"rdisk", "sr", "ubd", "zd", "rbd", "zram", "ram", "pmem", "mtd", "mtdblock", "ubi", "bcache", "drbd", "sg", "fd", "nvme-fabrics", "vg"}

// isBlockDevice reports whether the canonical path p names a disk or
// partition device node, however it is spelled: /dev/sdX and the other
// kernel names, /dev/root, /dev/mapper/*, LVM /dev/VG/LV, /dev/disk/by-*/*,
// /dev/block/M:N, /dev/raw/*, globs over any of them, and any of these
// through /proc/PID/root.
func isBlockDevice(p string) bool {
	p = procRoot(p)
	if globMatchesDevice(p) {
		return true
	}
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	n := p[len("/dev/"):]
	switch n {
	case "root", "*", "?*":
		return true
	case "mem", "kmem", "port", "nvram":
		// Raw hardware: physical and kernel memory, I/O ports (zeros
		// across /dev/port hit the reset and keyboard controller ports),
		// the NVRAM. Written, they are as final as a disk.
		return true
	}
	if strings.HasPrefix(n, "[") {
		return true
	}
	if i := strings.IndexByte(n, '/'); i >= 0 {
		dir := n[:i]
		if nonBlockDevDirs[dir] || n[i+1:] == "" {
			return false
		}
		// mapper/*, disk/by-*/*, block/M:N, raw/*, and LVM VG/LV
		return true
	}
	for _, pre := range blockPrefixes {
		if strings.HasPrefix(n, pre) && len(n) > len(pre) {
			c := n[len(pre)]
			if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '*' || c == '?' || c == '[' || c == '{' {
				return true
			}
		}
	}
	return false
}

// envPrefixed reports whether the raw value v starts with one of the named
// environment variables ($NAME or ${NAME}).
func envPrefixed(v string, names []string) bool {
	for _, n := range names {
		for _, p := range [...]string{"$" + n, "${" + n + "}"} {
			if strings.HasPrefix(v, p) && (len(v) == len(p) || v[len(p)] == '/') {
				return true
			}
		}
	}
	return false
}

// isClean reports whether path.Clean would return p unchanged and, for a
// "~" path, cleanPath too: no empty, "." or ".." element and no trailing
// slash. It saves the common case a copy.
func isClean(p string) bool {
	if p == "" || p == "/" {
		return p == "/"
	}
	start := 0
	if p[0] == '/' {
		start = 1
	}
	for i := start; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// maxBraceWords bounds the words a brace expansion is expanded to; the rest
// are not checked (the word is already a glob that needs approval).
const maxBraceWords = 64

// braceExpand returns the words bash's brace expansion makes of v: each
// "{a,b,…}" alternative list, outermost first, with nesting. A "{x..y}"
// sequence and a brace without a comma are left as written.
func braceExpand(v string) []string {
	out := []string{}
	var walk func(s string)
	walk = func(s string) {
		if len(out) >= maxBraceWords {
			return
		}
		open, alts, end := braceGroup(s)
		if open < 0 {
			out = append(out, s)
			return
		}
		for _, a := range alts {
			walk(s[:open] + a + s[end+1:])
		}
	}
	walk(v)
	return out
}

// braceGroup finds the first brace group in s with a top-level comma and
// returns its opening index, its alternatives and its closing index, or -1.
func braceGroup(s string) (int, []string, int) {
	for open := 0; open < len(s); open++ {
		if s[open] != '{' {
			continue
		}
		depth, start := 0, open+1
		var alts []string
		for i := open; i < len(s); i++ {
			switch s[i] {
			case '{':
				depth++
			case ',':
				if depth == 1 {
					alts = append(alts, s[start:i])
					start = i + 1
				}
			case '}':
				depth--
				if depth == 0 {
					if alts != nil {
						return open, append(alts, s[start:i]), i
					}
					i = len(s) // no comma: a literal brace; try the next "{"
				}
			}
		}
	}
	return -1, nil, -1
}
