package approval

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// A find whose -exec (or -execdir, -ok, -okdir) runs a recursive delete on
// "{}" deletes every path its tests select, whole trees included. With
// name tests it is a filtered find, which deletes a selection; but when the
// selection can hold "/", a system directory or a home ("find / -maxdepth 1
// -name home -exec rm -rf {} +" deletes /home), it is that delete, and is
// rated as the same command given those paths (hardline.rm-root).

// findSelectsCatastrophic reports whether a filtered find invocation whose
// action deletes recursively can select a catastrophic path: one of the
// system directories, /root, a home under /home or /Users named by a
// literal -name (when the find starts there, or at / with -maxdepth 2 or
// less), or the start point itself, that is at or below a start
// point within -mindepth/-maxdepth, and that every name and type test of
// the expression accepts. Tests that select by time, size or owner can
// match such a directory and are not read as excluding it.
func (a *analyzer) findSelectsCatastrophic(c *shellparse.Command, inv *grammar.Invocation) bool {
	if !findExecDeletesTrees(inv.Args) {
		return false
	}
	minD, maxD := 0, 1<<30
	var tests []grammar.Opt
	var names []string
	for _, o := range inv.Options {
		switch o.Name {
		case "-mindepth", "-maxdepth":
			n, err := strconv.Atoi(o.Value)
			if err != nil {
				continue // find refuses it: nothing runs
			}
			if o.Name == "-mindepth" {
				minD = n
			} else {
				maxD = n
			}
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type":
			tests = append(tests, o)
			if (o.Name == "-name" || o.Name == "-iname") && !strings.ContainsAny(o.Value, "*?[\\/") && o.Value != "" {
				names = append(names, o.Value)
			}
		}
	}
	var starts []string
	for _, op := range inv.Operands {
		if op.Effects.Has(grammar.Target) {
			starts = append(starts, a.fold(op.Value))
		}
	}
	if len(starts) == 0 {
		starts = []string{a.fold(".")}
	}
	cands := make([]string, 0, len(systemDirs())+2*len(names)+2)
	for d := range systemDirs() {
		cands = append(cands, d)
	}
	for _, s := range starts {
		homes := cands
		if s == "/home" || s == "/Users" || s == "/" && maxD <= 2 {
			// Any directory there is a home; below / only a depth-limited
			// find names one (find / -name node_modules is a cleanup).
			for _, n := range names {
				homes = append(homes, "/home/"+n, "/Users/"+n)
			}
		}
		for _, p := range append(homes, s) {
			d, ok := depthBelow(s, p)
			if !ok || d < minD || d > maxD || !isCatastrophicTarget(p) {
				continue
			}
			if a.findTestsAccept(tests, s, p) {
				return true
			}
		}
	}
	return false
}

// depthBelow returns how many components p is below the start point s
// (0 for s itself), and whether p is at or below s.
func depthBelow(s, p string) (int, bool) {
	if s == p {
		return 0, true
	}
	if s == "~" || strings.HasPrefix(s, "~/") || !strings.HasPrefix(s, "/") {
		return 0, false // the catastrophic paths below a home are not known by name
	}
	prefix := strings.TrimSuffix(s, "/") + "/"
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest == "" {
		return 0, false
	}
	return strings.Count(rest, "/") + 1, true
}

// findTestsAccept reports whether every test can accept the catastrophic
// path p found under start s: a name test matches its base name, a path
// test the path find prints, -type a directory.
func (a *analyzer) findTestsAccept(tests []grammar.Opt, s, p string) bool {
	printed, base := p, path.Base(p)
	if p == "~" {
		printed, base = a.home, path.Base(a.home)
		if a.home == "" {
			return true // the home's name is not known: it may match
		}
	}
	for _, t := range tests {
		v := t.Value
		fold := strings.HasPrefix(t.Name, "-i")
		switch t.Name {
		case "-type":
			if !strings.Contains(v, "d") {
				return false
			}
		case "-name", "-iname":
			if !findGlob(v, base, fold) {
				return false
			}
		case "-path", "-ipath", "-wholename", "-iwholename":
			if !findGlob(v, printed, fold) {
				return false
			}
		case "-regex", "-iregex":
			re, err := regexp.Compile("^(?:" + v + ")$")
			if err != nil {
				continue // not read: it may match
			}
			if fold {
				re, err = regexp.Compile("(?i)^(?:" + v + ")$")
			}
			if err == nil && !re.MatchString(printed) {
				return false
			}
		}
	}
	return true
}

// findGlob matches name against a find pattern as fnmatch does without
// FNM_PATHNAME: "*" and "?" match "/" too. A pattern it cannot read may
// match.
func findGlob(pattern, name string, fold bool) bool {
	var b strings.Builder
	b.WriteString("^")
	if fold {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; ch {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
			}
		case '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pattern[i+1 : i+1+j]
			if j == 0 { // "[]…]": a leading ] is a member
				k := strings.IndexByte(pattern[i+2:], ']')
				if k < 0 {
					b.WriteString(`\[`)
					continue
				}
				class = pattern[i+1 : i+2+k]
				j = k + 1
			}
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return true
	}
	return re.MatchString(name)
}

// findExecDeletesTrees reports whether find's expression runs, on "{}", a
// program that deletes recursively (rm -rf, rm -r): the grammar reads the
// -exec command's words.
func findExecDeletesTrees(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		end := len(args)
		for j := i + 1; j < len(args); j++ {
			if args[j] == ";" || args[j] == "+" {
				end = j
				break
			}
		}
		if i+1 < end {
			prog := path.Base(args[i+1])
			sub := grammar.Parse(prog, args[i+2:end])
			if sub.Effects.Has(grammar.Delete) && sub.Effects.Has(grammar.Recursive) {
				for _, op := range sub.Operands {
					if op.Effects.Has(grammar.Target) && strings.Contains(op.Value, "{}") {
						return true
					}
				}
			}
		}
		i = end
	}
	return false
}
