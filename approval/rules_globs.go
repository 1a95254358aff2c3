package approval

import (
	"path"
	"strings"
)

// Globs as targets. bash expands a glob before the program runs, so a
// pattern is as dangerous as the names it can match: "~/?*" and "~/[!.]*"
// empty a home as "~/*" does, and "> /dev/s?a" writes /dev/sda when that is
// the one match. Patterns are judged against samples of the names that
// matter rather than against the host's files, which the analyzer cannot see.

// plainNames are typical entries of a home or a system directory. A last
// path element that matches most of them (globMatchesAll) takes every entry
// of its directory with it; one with a literal part ("*.log", "build-?")
// matches few of them.
var plainNames = [...]string{"Documents", "Downloads", "Desktop", "projects", "src", "go", "bin", "lib", "work", "notes.txt", "a", "x1", "README.md", "node_modules"}

// globMatchesAll reports whether the glob element pat (bash syntax,
// including extglob) matches at least three in four plainNames.
func globMatchesAll(pat string) bool {
	alts := globAlternatives(pat, 0)
	if alts == nil {
		return true // too complex to expand: fail closed
	}
	n := 0
	for _, name := range plainNames {
		for _, alt := range alts {
			if ok, err := path.Match(alt, name); ok || err != nil {
				n++ // a pattern Go cannot read is taken to match (fail closed)
				break
			}
		}
	}
	return 4*n >= 3*len(plainNames)
}

// isGlob reports whether s holds a bash glob operator (a "(" may open an
// extglob; taking every one as such errs on the safe side).
func isGlob(s string) bool {
	return strings.ContainsAny(s, "*?[(")
}

// globAlternatives rewrites the bash glob element pat as path.Match
// patterns whose union matches about what bash matches: "[!x]" becomes
// "[^x]", POSIX classes ("[[:alnum:]]") become ranges, "@(a|b)" and its
// "?(…)", "*(…)", "+(…)" kin become one pattern per alternative, and "!(…)"
// becomes "*" (it matches nearly everything). It returns nil when the
// expansion grows past a bound.
func globAlternatives(pat string, depth int) []string {
	if depth > 4 {
		return nil
	}
	for i := 0; i+1 < len(pat); i++ {
		if pat[i+1] != '(' || !strings.ContainsRune("@?*+!", rune(pat[i])) {
			continue
		}
		end := matchingParen(pat, i+1)
		if end < 0 {
			return nil
		}
		var inner []string
		if pat[i] == '!' {
			inner = []string{"*"}
		} else {
			inner = splitTopLevel(pat[i+2 : end])
			if pat[i] == '?' || pat[i] == '*' {
				inner = append(inner, "")
			}
			if pat[i] == '*' || pat[i] == '+' {
				inner = append(inner, "*") // repetitions: any run of them
			}
		}
		var out []string
		for _, in := range inner {
			alts := globAlternatives(pat[:i]+in+pat[end+1:], depth+1)
			if alts == nil {
				return nil
			}
			out = append(out, alts...)
			if len(out) > 64 {
				return nil
			}
		}
		return out
	}
	return []string{goGlob(pat)}
}

// matchingParen returns the index of the ")" closing the "(" at open, or -1.
func matchingParen(s string, open int) int {
	d := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			d++
		case ')':
			d--
			if d == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTopLevel splits an extglob's pattern list at the "|" outside nested
// parentheses.
func splitTopLevel(s string) []string {
	var out []string
	d, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			d++
		case ')':
			d--
		case '|':
			if d == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// posixClasses are the bracket classes bash knows, as path.Match ranges.
var posixClasses = strings.NewReplacer(
	"[:alnum:]", "a-zA-Z0-9", "[:alpha:]", "a-zA-Z", "[:lower:]", "a-z", "[:upper:]", "A-Z",
	"[:digit:]", "0-9", "[:xdigit:]", "0-9a-fA-F", "[:word:]", "a-zA-Z0-9_", "[:print:]", " -~",
	"[:graph:]", "!-~", "[:punct:]", "!-/:-@[-`{-~", "[:space:]", " \t", "[:blank:]", " \t", "[:cntrl:]", "\x00-\x1f",
)

// goGlob turns a bash glob element without extglob into path.Match syntax.
func goGlob(pat string) string {
	pat = posixClasses.Replace(pat)
	return strings.ReplaceAll(pat, "[!", "[^")
}

// globDirTarget returns the directory whose every entry the glob path p
// matches ("~/?*" is "~", "/etc/[!.]*" is "/etc"), or "" when p's last
// element is no such glob.
func globDirTarget(p string) string {
	base := path.Base(p)
	if !isGlob(base) || !globMatchesAll(base) {
		return ""
	}
	dir := path.Dir(p)
	if dir == "." {
		return "" // relative, the directory unknown
	}
	return dir
}

// blockDeviceSamples are device nodes a glob write target is matched
// against: one or more of each family isBlockDevice knows.
var blockDeviceSamples = [...]string{
	"/dev/sda", "/dev/sda1", "/dev/sdb", "/dev/hda", "/dev/vda", "/dev/vda1", "/dev/xvda", "/dev/xvda1",
	"/dev/nvme0n1", "/dev/nvme0n1p1", "/dev/mmcblk0", "/dev/mmcblk0p1", "/dev/md0", "/dev/dm-0",
	"/dev/loop0", "/dev/nbd0", "/dev/zram0", "/dev/root", "/dev/mem", "/dev/kmem", "/dev/port",
	"/dev/mapper/root", "/dev/disk/by-uuid/x", "/dev/block/8:0", "/dev/sr0",
}

// globMatchesDevice reports whether the glob path p (canonical) can match a
// block device node: "/dev/s?a", "/d?v/sda", "/*/sda".
func globMatchesDevice(p string) bool {
	if !isGlob(p) {
		return false
	}
	alts := globAlternatives(p, 0)
	if alts == nil {
		return strings.HasPrefix(p, "/") // unreadable: fail closed for absolute paths
	}
	for _, alt := range alts {
		for _, d := range blockDeviceSamples {
			if ok, err := path.Match(alt, d); ok || err != nil && strings.HasPrefix(p, "/dev/") {
				return true
			}
		}
	}
	return false
}
