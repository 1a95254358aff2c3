package shellparse

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Variables read from a known input. read and mapfile/readarray assign
// what they read from standard input; when that input is known (a
// here-string, a literal here-document, known text piped in: see feed.go)
// the values are known too, so "read x <<< reboot; $x" runs reboot.
// Arrays are followed element by element, as the names "a[0]", "a[1]" …
// beside "a" (which is "a[0]"); an input or an option the model does not
// cover leaves every name the command may assign unknown, as commandVars
// did before.

// maxReadItems bounds the fields or lines bound from one read or mapfile.
const maxReadItems = 32

// readAssign applies read's assignments from a known input, after
// commandVars forgot what it may assign.
func (w *walker) readAssign(cs *cmdState, i int) {
	in := cs.stdin
	if in == nil || !in.lit || !w.tracking() {
		return
	}
	args := cs.words[i+1:]
	raw, array, delim := false, "", byte('\n')
	k := 0
opts:
	for ; k < len(args); k++ {
		a := args[k]
		if !a.Literal {
			return
		}
		v := a.Value
		if v == "--" {
			k++
			break
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'r':
				raw = true
			case 's', 'e':
			case 'a', 'd', 'p', 't':
				val := v[j+1:]
				if val == "" {
					if k++; k >= len(args) || !args[k].Literal {
						return
					}
					val = args[k].Value
				}
				switch v[j] {
				case 'a':
					array = val
				case 'd':
					delim = 0
					if val != "" {
						delim = val[0]
					}
				}
				continue opts
			default:
				return // -n, -N, -u, -i …: not modelled
			}
		}
	}
	names := args[k:]
	ifs, ok := w.commandIFS(cs)
	if !ok {
		return
	}
	line := in.text
	if j := strings.IndexByte(line, delim); j >= 0 {
		line = line[:j]
	}
	if !raw && strings.IndexByte(line, '\\') >= 0 {
		return // escapes and continued lines: not modelled
	}
	if array != "" {
		fields := splitIFS(line, ifs)
		if fields == nil || !syntax.ValidName(array) {
			return
		}
		w.setArray(array, fields)
		return
	}
	if len(names) == 0 {
		w.bind("REPLY", line) // the line as read, not trimmed
		return
	}
	for _, n := range names {
		if !n.Literal || !syntax.ValidName(n.Value) {
			return
		}
	}
	fields := splitIFS(line, ifs)
	if fields == nil {
		return
	}
	for j, n := range names {
		var v string
		switch {
		case j == len(names)-1 && len(fields) > len(names):
			// The last name takes the rest of the line as it stands.
			rest, ok := restOfLine(line, ifs, j)
			if !ok {
				return
			}
			v = rest
		case j < len(fields):
			v = fields[j]
		}
		w.bind(n.Value, v)
	}
}

// mapfileAssign applies mapfile/readarray from a known input: each line
// (with its delimiter unless -t) an element of the array (MAPFILE by
// default).
func (w *walker) mapfileAssign(cs *cmdState, i int) {
	in := cs.stdin
	if in == nil || !in.lit || !w.tracking() {
		return
	}
	trim, delim, array := false, "\n", "MAPFILE"
	args := cs.words[i+1:]
	for k := 0; k < len(args); k++ {
		a := args[k]
		if !a.Literal {
			return
		}
		switch v := a.Value; {
		case v == "-t":
			trim = true
		case v == "-d" && k+1 < len(args) && args[k+1].Literal:
			k++
			delim = "\x00"
			if args[k].Value != "" {
				delim = args[k].Value[:1]
			}
		case strings.HasPrefix(v, "-"):
			return // -n, -O, -s, -u, -C …: not modelled
		case k == len(args)-1 && syntax.ValidName(v):
			array = v
		default:
			return
		}
	}
	var items []string
	for rest := in.text; rest != ""; {
		j := strings.Index(rest, delim)
		item := rest
		if j >= 0 {
			item, rest = rest[:j+1], rest[j+1:]
		} else {
			rest = ""
		}
		if trim {
			item = strings.TrimSuffix(item, delim)
		}
		items = append(items, item)
	}
	if len(items) > maxReadItems {
		return
	}
	w.setArray(array, items)
}

// commandIFS returns the IFS a builtin runs with: an IFS=… before it, or
// the default (an assignment to IFS stops the tracking, see setVar).
func (w *walker) commandIFS(cs *cmdState) (string, bool) {
	ifs := w.ifs()
	for _, e := range cs.env {
		if e.Name == "IFS" {
			if !e.Value.Literal {
				return "", false
			}
			ifs = e.Value.Value
		}
	}
	return ifs, true
}

// splitIFS splits s into fields as read does: IFS whitespace around
// fields is dropped and runs of it separate, every other IFS character
// ends one field ("a::b" is a, "", b). It returns nil past maxReadItems.
func splitIFS(s, ifs string) []string {
	isWS := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.IndexByte(ifs, c) >= 0 }
	isSep := func(c byte) bool { return strings.IndexByte(ifs, c) >= 0 }
	fields := []string{}
	i := 0
	for i < len(s) && isWS(s[i]) {
		i++
	}
	for i < len(s) {
		j := i
		for j < len(s) && !isSep(s[j]) {
			j++
		}
		fields = append(fields, s[i:j])
		if len(fields) > maxReadItems {
			return nil
		}
		for j < len(s) && isWS(s[j]) {
			j++
		}
		if j < len(s) && isSep(s[j]) && !isWS(s[j]) {
			j++
			for j < len(s) && isWS(s[j]) {
				j++
			}
		}
		i = j
	}
	return fields
}

// restOfLine returns what read gives its last name when the line has more
// fields than names: the line from field n on, without trailing IFS
// whitespace. A rest holding any other IFS character is not modelled
// (bash's handling of a trailing delimiter there).
func restOfLine(line, ifs string, n int) (string, bool) {
	isWS := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.IndexByte(ifs, c) >= 0 }
	i := 0
	for f := 0; ; f++ {
		for i < len(line) && isWS(line[i]) {
			i++
		}
		if f == n {
			break
		}
		for i < len(line) && strings.IndexByte(ifs, line[i]) < 0 {
			i++
		}
		if i < len(line) && !isWS(line[i]) {
			return "", false
		}
	}
	rest := strings.TrimRight(line[i:], " \t\n")
	for k := 0; k < len(rest); k++ {
		if strings.IndexByte(ifs, rest[k]) >= 0 && !isWS(rest[k]) {
			return "", false
		}
	}
	return rest, true
}

// setArray binds the elements of array name (name itself is element 0).
func (w *walker) setArray(name string, elems []string) {
	w.forget(name)
	for k, e := range elems {
		w.bind(name+"["+strconv.Itoa(k)+"]", e)
	}
	if len(elems) > 0 {
		w.bind(name, elems[0])
	}
}

// bind records a value read from known text. Unlike setVar it also binds
// the variables bash itself assigns from input (REPLY, MAPFILE).
func (w *walker) bind(name, v string) {
	base, _, _ := strings.Cut(name, "[")
	if _, ref := w.namerefs[base]; ref {
		w.forgetAll() // read into a nameref: not followed
		return
	}
	if base == "IFS" || strings.HasPrefix(base, "BASH") || (shellManaged[base] && base != "REPLY" && base != "MAPFILE") {
		w.forget(base)
		return
	}
	w.touch(base)
	if w.vars == nil {
		w.vars = make(map[string]Word)
	}
	w.vars[name] = Word{Value: v, Literal: true}
}
