package protect

import (
	"path"
	"strings"
)

// A repository's configuration can name files of the work tree that git
// then runs or reads as more configuration: core.hooksPath = .husky,
// include.path = ../tools/git.config, core.fsmonitor = ./tools/watch,
// an alias "!./scripts/lint". The git directory's own config is frozen,
// but what it names is an ordinary tracked file: a sandboxed command that
// rewrites .husky/pre-commit has the host run it at the next commit. So
// every file a frozen configuration names is on the protected list too.

// RefBase says what a relative path in a configuration value is relative to.
type RefBase uint8

const (
	// BaseFile is the directory of the configuration file (include.path).
	BaseFile RefBase = iota + 1
	// BaseTop is the top of the work tree, where git runs hooks and
	// aliases (the git directory itself for a bare repository).
	BaseTop
)

// ConfigRef is a path named by a git configuration value.
type ConfigRef struct {
	// Key is the variable as section.key (or section.sub.key), section
	// and key lowercased as git compares them.
	Key string
	// Path is the value's path as written.
	Path string
	// Base is what a relative Path is relative to.
	Base RefBase
	// Kind is File or Dir.
	Kind Kind
	// Include says that the file is more configuration git reads.
	Include bool
	// Missing says the path must be frozen even when it does not exist
	// yet (reserved): git would read or run whatever appears there. Only
	// unambiguous paths are: include files, the hooks directory, and a
	// command's program when it is written as a path.
	Missing bool
	// Arg is a command's argument written without a slash (sh fsm.sh):
	// it names a file of the top only if a regular file is there; a
	// directory or link of that name (clean/, code) is left alone.
	Arg bool
}

// configKey is how git uses one variable's value.
type configKey struct {
	pattern string // section.key or section.*.key, lowercase
	use     keyUse
}

type keyUse uint8

const (
	useInclude  keyUse = iota + 1 // a configuration file, relative to the including file
	useHooksDir                   // the hooks directory, relative to the top
	useCommand                    // a command line git runs from the top (its words may name files)
	useDir                        // a directory git copies into every new repository, hooks included
	useFile                       // a file git trusts (CA bundles, allowed signers), relative to the top
)

// configKeys are the variables whose values git reads as a path it runs
// or reads, or as a command line it runs (git-config(1)). Policy is data:
// a key git adds is one entry here.
var configKeys = []configKey{
	{"include.path", useInclude},
	{"includeif.*.path", useInclude},
	{"core.hookspath", useHooksDir},
	// git init and git clone, anywhere on the host, copy the template
	// directory into the new repository and then run its hooks/.
	{"init.templatedir", useDir},
	{"http.sslcapath", useDir},
	{"http.*.sslcapath", useDir},
	{"http.sslcainfo", useFile},
	{"http.*.sslcainfo", useFile},
	{"gpg.ssh.allowedsignersfile", useFile},
	{"gpg.ssh.revocationfile", useFile},
	{"core.fsmonitor", useCommand},
	{"core.pager", useCommand},
	{"core.editor", useCommand},
	{"core.sshcommand", useCommand},
	{"core.askpass", useCommand},
	{"core.gitproxy", useCommand},
	{"core.alternaterefscommand", useCommand},
	{"sequence.editor", useCommand},
	{"diff.external", useCommand},
	{"diff.*.textconv", useCommand},
	{"diff.*.command", useCommand},
	{"filter.*.clean", useCommand},
	{"filter.*.smudge", useCommand},
	{"filter.*.process", useCommand},
	{"merge.*.driver", useCommand},
	{"credential.helper", useCommand},
	{"credential.*.helper", useCommand},
	{"gpg.program", useCommand},
	{"gpg.*.program", useCommand},
	{"gpg.ssh.defaultkeycommand", useCommand},
	{"pager.*", useCommand},
	{"alias.*", useCommand},
	{"interactive.difffilter", useCommand},
	{"difftool.*.cmd", useCommand},
	{"difftool.*.path", useCommand},
	{"mergetool.*.cmd", useCommand},
	{"mergetool.*.path", useCommand},
	{"remote.*.uploadpack", useCommand},
	{"remote.*.receivepack", useCommand},
	{"remote.*.vcs", useCommand}, // git runs git-remote-<vcs>; a path when it has a slash
	{"trailer.*.command", useCommand},
	{"trailer.*.cmd", useCommand},
	{"hook.*.command", useCommand},
	{"sendemail.smtpserver", useCommand},
	{"sendemail.*.smtpserver", useCommand},
	{"web.browser", useCommand},
	{"browser.*.cmd", useCommand},
	{"browser.*.path", useCommand},
	{"man.*.cmd", useCommand},
	{"man.*.path", useCommand},
	{"gui.editor", useCommand},
	{"guitool.*.cmd", useCommand},
	{"instaweb.httpd", useCommand},
}

// ConfigRefs returns the paths that git configuration text names, in the
// order they appear. It parses git's syntax (sections, subsections,
// quoting, escapes, continuation lines, comments); what it cannot parse is
// skipped, as git would refuse the file.
func ConfigRefs(data []byte) []ConfigRef {
	var refs []ConfigRef
	for _, kv := range parseConfig(string(data)) {
		use := keyUseOf(kv.key)
		switch use {
		case useInclude:
			refs = append(refs, ConfigRef{Key: kv.key, Path: kv.value, Base: BaseFile, Kind: File, Include: true, Missing: true})
		case useHooksDir:
			refs = append(refs, ConfigRef{Key: kv.key, Path: kv.value, Base: BaseTop, Kind: Dir, Missing: true})
			// husky 9 sets core.hooksPath to .husky/_, whose stubs run
			// the hooks of the directory above (.husky/pre-commit).
			if d, last := path.Split(path.Clean(kv.value)); last == "_" && d != "" {
				refs = append(refs, ConfigRef{Key: kv.key, Path: path.Clean(d), Base: BaseTop, Kind: Dir, Missing: true})
			}
		case useDir:
			refs = append(refs, ConfigRef{Key: kv.key, Path: kv.value, Base: BaseTop, Kind: Dir, Missing: true})
		case useFile:
			refs = append(refs, ConfigRef{Key: kv.key, Path: kv.value, Base: BaseTop, Kind: File, Missing: true})
		case useCommand:
			v := strings.TrimSpace(kv.value)
			if strings.HasPrefix(kv.key, "alias.") {
				if !strings.HasPrefix(v, "!") {
					continue // a git command line: it runs git, not a file
				}
				v = v[1:]
			}
			for i, w := range commandWords(v) {
				slash := strings.Contains(w, "/")
				if i == 0 && !slash {
					continue // a program the shell finds in $PATH, not in the work tree
				}
				// The program written as a path is unambiguous; other
				// words only when they exist (the caller checks).
				refs = append(refs, ConfigRef{Key: kv.key, Path: w, Base: BaseTop, Kind: File,
					Missing: i == 0, Arg: !slash})
			}
		}
	}
	return refs
}

func keyUseOf(key string) keyUse {
	for _, k := range configKeys {
		if matchKey(k.pattern, key) {
			return k.use
		}
	}
	return 0
}

// matchKey matches section.key or section.sub.key against a pattern
// whose "*" stands for one subsection (which may itself hold dots).
func matchKey(pattern, key string) bool {
	ps, pk, _ := strings.Cut(pattern, ".")
	i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if i < 0 {
		return false
	}
	section, name := key[:i], key[j+1:]
	if section != ps {
		return false
	}
	if sub, k, ok := strings.Cut(pk, "."); ok { // section.*.key or section.sub.key
		return i != j && name == k && (sub == "*" || sub == key[i+1:j])
	}
	if pk == "*" { // section.*: any key, with or without a subsection
		return true
	}
	return i == j && name == pk
}

// commandWords splits a command line into the words that may name files:
// shell words, and again the words inside quoted arguments (sh -c 'x/y').
func commandWords(v string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(v, func(r rune) bool {
		return strings.ContainsRune(" \t\n;&|()<>'\"`=", r)
	}) {
		if w = strings.TrimRight(w, "/"); w != "" && !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "$") {
			out = append(out, w)
		}
	}
	return out
}

// Resolve returns ref's path relative to the workspace root (ws, an
// absolute host path), given the workspace-relative directory of the
// configuration file (fileDir) and the top of its work tree (top). It
// reports false for a path outside the workspace or one that depends on
// an environment ($VAR). A path git expands (~/x, ~user/x) is expanded
// with every home a host git reading it may have (HomesFor: tether's,
// root's, the workspace owner's): the first expansion inside the workspace
// is the answer, so `core.hooksPath = ~/src/proj/hooks` protects hooks/
// of a workspace at ~/src/proj.
func (r ConfigRef) Resolve(ws, fileDir, top string) (string, bool) {
	p := r.Path
	if p == "" || strings.Contains(p, "$") {
		return "", false
	}
	if strings.HasPrefix(p, "~") {
		for _, abs := range expandTilde(p, ws) {
			if rel, ok := (ConfigRef{Path: abs}).Resolve(ws, fileDir, top); ok {
				return rel, true
			}
		}
		return "", false
	}
	if path.IsAbs(p) {
		rel, ok := strings.CutPrefix(path.Clean(p), strings.TrimSuffix(ws, "/")+"/")
		if !ok || rel == "" {
			return "", false
		}
		return rel, true
	}
	base := top
	if r.Base == BaseFile {
		base = fileDir
	}
	rel := path.Join(base, p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

type configKV struct{ key, value string }

// parseConfig reads git configuration text into its variables, keys as
// section[.subsection].name with section and name lowercased.
func parseConfig(s string) []configKV {
	var out []configKV
	section := ""
	i := 0
	next := func() (byte, bool) {
		if i >= len(s) {
			return 0, false
		}
		c := s[i]
		i++
		return c, true
	}
	skipLine := func() {
		for i < len(s) && s[i] != '\n' {
			i++
		}
	}
	for i < len(s) {
		c, _ := next()
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '#' || c == ';':
			skipLine()
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return out
			}
			hdr := s[i : i+end]
			i += end + 1
			name, sub, quoted := strings.Cut(hdr, " ")
			if quoted {
				sub = strings.TrimSpace(sub)
				sub = strings.TrimSuffix(strings.TrimPrefix(sub, `"`), `"`)
				sub = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(sub)
				section = strings.ToLower(name) + "." + sub
			} else if a, b, ok := strings.Cut(hdr, "."); ok { // [section.sub], deprecated: sub lowercased
				section = strings.ToLower(a) + "." + strings.ToLower(b)
			} else {
				section = strings.ToLower(hdr)
			}
		default:
			// name [= value]
			start := i - 1
			for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
				i++
			}
			name := strings.ToLower(s[start:i])
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i >= len(s) || s[i] != '=' {
				skipLine() // a boolean without a value, or garbage
				continue
			}
			i++
			out = append(out, configKV{key: section + "." + name, value: readValue(s, &i)})
		}
	}
	return out
}

// readValue reads a value from s[*i:] to the end of its line, as git
// does: quotes group, backslash escapes, a backslash-newline continues,
// # and ; start a comment outside quotes, outer blanks are dropped.
func readValue(s string, i *int) string {
	var b strings.Builder
	quoted := false
	pending := "" // blanks kept only when something follows
	for *i < len(s) {
		c := s[*i]
		*i++
		switch {
		case c == '\n':
			return b.String()
		case c == '\\' && *i < len(s):
			e := s[*i]
			*i++
			switch e {
			case '\n':
				continue
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			}
			b.WriteString(pending)
			pending = ""
			b.WriteByte(e)
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			for *i < len(s) && s[*i] != '\n' {
				*i++
			}
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if b.Len() > 0 {
				pending += string(c)
			}
		default:
			b.WriteString(pending)
			pending = ""
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
