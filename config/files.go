package config

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Files holds a profile's path rules for the file tools (read_file,
// write_file, patch, search_files). Each glob is relative to the
// workspace (PathGlob) and is matched against the workspace-relative path
// of the object a tool opens — symlinks resolved, ".." removed — and
// against the path as the model wrote it. A match on a directory covers
// everything below it.
type Files struct {
	// Deny refuses every file-tool access to a matching path.
	Deny []string `yaml:"deny" json:"deny"`
	// Ask sends every file-tool access to a matching path to a person;
	// the answer covers that one call.
	Ask []string `yaml:"ask" json:"ask"`
	// SecretFiles is what happens to an access to a common secret file
	// (SecretFileGlobs: .env, *.pem, id_* keys, .npmrc, .netrc, …):
	// ask (the default), deny, or allow (the list is not applied).
	SecretFiles FileAction `yaml:"secret_files" json:"secret_files"`
}

// FileAction is what a file path rule does.
type FileAction string

// File rule actions, weakest first.
const (
	FileAllow FileAction = "allow"
	FileAsk   FileAction = "ask"
	FileDeny  FileAction = "deny"
)

// rank orders the actions by strength (allow < ask < deny); 0 is unknown.
func (a FileAction) rank() int {
	switch a {
	case FileAllow:
		return 1
	case FileAsk:
		return 2
	case FileDeny:
		return 3
	}
	return 0
}

// SecretFile is one entry of the built-in list of common secret files: a
// PathGlob and, optionally, a glob of names it does not cover.
type SecretFile struct {
	Glob   string
	Except string
}

// SecretFileGlobs is the built-in list of common secret files that
// files.secret_files applies to. Matched without regard to case, like
// every file rule.
var SecretFileGlobs = []SecretFile{
	{Glob: ".env"}, {Glob: ".env.*"}, {Glob: "*.env"},
	{Glob: "*.pem"}, {Glob: "*.key"}, {Glob: "*.p12"}, {Glob: "*.pfx"}, {Glob: "*.jks"}, {Glob: "*.keystore"},
	{Glob: "*.kdbx"}, {Glob: "*.ppk"},
	{Glob: "id_*", Except: "*.pub"},
	{Glob: ".npmrc"}, {Glob: ".yarnrc.yml"}, {Glob: ".netrc"}, {Glob: "_netrc"}, {Glob: ".pypirc"},
	{Glob: ".pgpass"}, {Glob: ".my.cnf"}, {Glob: ".htpasswd"}, {Glob: ".git-credentials"},
	{Glob: "credentials*"}, {Glob: "secrets.y*ml"}, {Glob: "secrets.json"}, {Glob: "secrets.toml"}, {Glob: "*.tfvars"}, {Glob: "*.tfstate"},
	{Glob: "**/.docker/config.json"}, {Glob: "**/.kube/config"}, {Glob: "kubeconfig*"},
	{Glob: ".ssh"}, {Glob: ".gnupg"}, {Glob: ".aws"}, {Glob: ".azure"}, {Glob: "**/.config/gcloud"},
	{Glob: "service-account*.json"},
}

// ErrBadPathGlob is returned (wrapped) by CheckPathGlob.
var ErrBadPathGlob = errors.New("bad path rule")

// CheckPathGlob reports whether g is a usable file path rule (PathGlob):
// relative, not empty, no "." or ".." component, valid glob syntax.
func CheckPathGlob(g string) error {
	t := strings.TrimSuffix(g, "/")
	switch {
	case strings.TrimSpace(t) == "":
		return fmt.Errorf("%w: empty pattern", ErrBadPathGlob)
	case strings.HasPrefix(t, "/"):
		return fmt.Errorf("%w: %q is absolute; path rules are relative to the workspace (\"secrets/**\", \"*.pem\")", ErrBadPathGlob, g)
	case strings.ContainsRune(t, 0):
		return fmt.Errorf("%w: %q contains a NUL byte", ErrBadPathGlob, g)
	}
	for _, c := range strings.Split(t, "/") {
		switch c {
		case "", ".", "..":
			return fmt.Errorf("%w: %q has an empty, \".\" or \"..\" component", ErrBadPathGlob, g)
		case "**":
			continue
		}
		if _, err := path.Match(c, ""); err != nil {
			return fmt.Errorf("%w: %q: %v", ErrBadPathGlob, g, err)
		}
	}
	return nil
}

// PathGlob reports whether the workspace-relative path rel ("a/b/.env";
// "." is the workspace itself) is covered by the path rule g:
//
//   - a glob without "/" matches a name at any depth ("*.pem" matches
//     "certs/x.pem");
//   - a glob with "/" matches from the workspace root ("config/*.key"),
//     "**" standing for any number of directories ("**/prod/*.yaml");
//   - within a name, "*", "?" and "[…]" are path.Match's;
//   - a match on a directory covers everything below it ("secrets"
//     covers "secrets/db/password");
//   - case is ignored, so that ".ENV" cannot reach ".env" on a
//     case-insensitive filesystem.
func PathGlob(g, rel string) bool { return globParts(g, relParts(rel)) }

// relParts is rel as PathGlob compares it: cleaned, lower-case, split into
// names; nil for the workspace itself.
func relParts(rel string) []string {
	rel = strings.ToLower(path.Clean(rel))
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// globParts reports whether g covers the path of parts (relParts).
func globParts(g string, parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	g = strings.ToLower(strings.TrimSuffix(g, "/"))
	if !strings.Contains(g, "/") {
		for _, p := range parts {
			if nameMatch(g, p) {
				return true
			}
		}
		return false
	}
	return matchPrefix(strings.Split(g, "/"), parts)
}

// nameMatch is path.Match(g, name) with the common shapes ("name",
// "*.ext", "prefix*") compared directly: the path rules run on every
// file a search reads.
func nameMatch(g, name string) bool {
	switch meta := strings.IndexAny(g, "*?[\\"); {
	case meta < 0:
		return g == name
	case meta == 0 && g[0] == '*' && !strings.ContainsAny(g[1:], "*?[\\"):
		return strings.HasSuffix(name, g[1:])
	case meta == len(g)-1 && g[meta] == '*':
		return strings.HasPrefix(name, g[:meta])
	}
	ok, _ := path.Match(g, name)
	return ok
}

// matchPrefix reports whether the glob components gs match parts or a
// leading run of its components (a directory and what lies below it).
func matchPrefix(gs, parts []string) bool {
	if len(gs) == 0 {
		return true // what is left lies below a matched directory
	}
	if gs[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if matchPrefix(gs[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if !nameMatch(gs[0], parts[0]) {
		return false
	}
	return matchPrefix(gs[1:], parts[1:])
}

// PathRule is the rule of a profile that covers a path: its action, the
// rule id (files.deny, files.ask, files.secret) and the glob.
type PathRule struct {
	Action  FileAction
	Rule    string
	Pattern string
}

// Match returns the strongest rule of f that covers any of rels (deny
// before ask; the user's lists before the built-in secret list), or
// false when none does.
func (f Files) Match(rels ...string) (PathRule, bool) {
	var best PathRule
	consider := func(r PathRule) {
		if r.Action.rank() > best.Action.rank() {
			best = r
		}
	}
	for _, rel := range rels {
		parts := relParts(rel)
		for _, g := range f.Deny {
			if globParts(g, parts) {
				consider(PathRule{FileDeny, "files.deny", g})
			}
		}
		for _, g := range f.Ask {
			if globParts(g, parts) {
				consider(PathRule{FileAsk, "files.ask", g})
			}
		}
		if a := f.SecretFiles; a == FileAsk || a == FileDeny {
			if s, ok := matchSecretParts(parts); ok {
				consider(PathRule{a, "files.secret", s.Glob})
			}
		}
	}
	return best, best.Action.rank() > FileAllow.rank()
}

// MatchSecretFile returns the entry of SecretFileGlobs that covers rel.
func MatchSecretFile(rel string) (SecretFile, bool) { return matchSecretParts(relParts(rel)) }

func matchSecretParts(parts []string) (SecretFile, bool) {
	for _, s := range SecretFileGlobs {
		if !globParts(s.Glob, parts) {
			continue
		}
		if s.Except != "" && globParts(s.Except, parts[len(parts)-1:]) {
			continue
		}
		return s, true
	}
	return SecretFile{}, false
}

// checkFiles validates and completes a profile's files section.
func (v *validator) checkFiles(f *Files, at func(keys ...string) []string) {
	if f.SecretFiles == "" {
		f.SecretFiles = FileAsk
	} else if f.SecretFiles.rank() == 0 {
		v.errorf(at("files", "secret_files"), "invalid files.secret_files %q (want ask, deny or allow)", f.SecretFiles)
	}
	for _, list := range []struct {
		key   string
		globs []string
	}{{"deny", f.Deny}, {"ask", f.Ask}} {
		for i, g := range list.globs {
			if err := CheckPathGlob(g); err != nil {
				v.errorf(at("files", list.key, fmt.Sprint(i)), "files.%s entry: %v", list.key, err)
			}
		}
	}
}
