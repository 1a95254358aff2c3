package grammar

import "strings"

// shortNames holds "-x" for every ASCII letter x, so that naming a short
// option found in a cluster does not allocate.
var shortNames = func() (t [128]string) {
	for c := 0; c < 128; c++ {
		t[c] = "-" + string(rune(c))
	}
	return t
}()

// Parse reads args, the arguments after the program word, as program reads
// them. program is a base name ("rm", not "/usr/bin/rm"). For a program the
// grammar does not know, every word starting with "-" (before "--") is an
// option without a value and the rest are operands.
//
// Reading follows the program's grammar: short clusters with attached
// values ("-rf", "-n5", "-lne CODE"), long options with "=" or a separate
// value, abbreviations by the program's long rule, "--", options after
// operands unless the program stops at the first operand, and subcommands
// after global options. An option the grammar does not know is recorded
// (Known false, Invocation.Unknown set) and never swallows the next word,
// except when that word is not a subcommand and a subcommand may follow:
// then it is taken as the unknown option's value so that the subcommand is
// still found ("kubectl --frob X delete pod"). Either way an unknown option
// cannot hide a subcommand.
func Parse(program string, args []string) *Invocation {
	return parseArgs(program, args, false)
}

// ParsePosix reads args as Parse does for a program that may run with
// POSIXLY_CORRECT in its environment. glibc's getopt then stops at the
// first operand, so an option word after it is an operand: "shred
// /dev/sda --help" shreds the disk and a file named --help. Which reading
// applies is not always known, so this is the worse of the two: an option
// that makes the invocation a dry run (help, version, --dry-run) counts
// only before the first operand, every other option wherever it is.
// Programs with their own parsers (the Exact long rule: Go, cobra) are
// read as Parse reads them.
func ParsePosix(program string, args []string) *Invocation {
	return parseArgs(program, args, true)
}

func parseArgs(program string, args []string, posix bool) *Invocation {
	if root := Lookup(program); root != nil && root.Traditional {
		if words, origin := traditional(root, args); words != nil {
			inv := parseWords(program, words, posix)
			inv.Args = args
			inv.remap(origin)
			return inv
		}
	}
	return parseWords(program, args, posix)
}

// traditional rewrites the traditional option form of tar ("tar cvf
// ARCHIVE FILE…"): a first word without a dash is a cluster of option
// letters, and each letter that takes a value takes the next word, in
// order ("cfb A 20" is -c -f A -b 20). It returns nil when args do not
// start so, or the cluster has a letter s does not know (then the word is
// an operand, as the program reads it too when it is not an option).
// origin maps each new word to the argument it came from.
func traditional(s *Spec, args []string) (words []string, origin []int) {
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' || strings.IndexByte(args[0], '=') >= 0 {
		return nil, nil
	}
	first := args[0]
	next := 1
	for k := 0; k < len(first); k++ {
		c := first[k]
		if c >= 128 || s.short[c] == 0 {
			return nil, nil
		}
		words, origin = append(words, shortNames[c]), append(origin, 0)
		if s.Options[s.short[c]-1].Arg == Required && next < len(args) {
			words, origin = append(words, args[next]), append(origin, next)
			next++
		}
	}
	for ; next < len(args); next++ {
		words, origin = append(words, args[next]), append(origin, next)
	}
	return words, origin
}

// remap turns the word indexes of an invocation read from rewritten words
// back into indexes of the arguments they came from.
func (inv *Invocation) remap(origin []int) {
	at := func(i int) int {
		if i < 0 || i >= len(origin) {
			return i
		}
		return origin[i]
	}
	for i := range inv.Options {
		inv.Options[i].Arg, inv.Options[i].ValueArg = at(inv.Options[i].Arg), at(inv.Options[i].ValueArg)
	}
	for i := range inv.Operands {
		inv.Operands[i].Arg = at(inv.Operands[i].Arg)
	}
	inv.Command, inv.DashDash = at(inv.Command), at(inv.DashDash)
}

func parseWords(program string, args []string, posix bool) *Invocation {
	// One allocation holds the invocation and room for the options,
	// operands and subcommand words of a typical command.
	b := &invocationBuf{}
	inv := &b.inv
	*inv = Invocation{Program: program, Args: args, Command: -1, DashDash: -1,
		Options: b.opts[:0], Operands: b.ops[:0], Sub: b.sub[:0]}
	root := Lookup(program)
	inv.Spec, inv.SubSpec = root, root
	if root == nil {
		inv.generic()
		return inv
	}
	inv.Effects = root.Effects
	cur := root
	subOpen := len(root.Subs) > 0
	endOpts := false
	lastUnknown := -1 // the unknown option word just before, if it had no value
	nOps := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !endOpts && a == "--" {
			endOpts = true
			inv.DashDash = i
			continue
		}
		if !endOpts && len(a) > 1 && a[0] == '-' {
			if posix && nOps > 0 && cur.Long != Exact {
				next, unknown, ok := inv.optionUnlessDry(cur, args, i)
				if !ok {
					inv.Operands = append(inv.Operands, Operand{Value: a, Arg: i})
					nOps++
					continue
				}
				i, lastUnknown = next, unknown
				continue
			}
			i, lastUnknown = inv.option(cur, args, i)
			continue
		}
		if subOpen {
			if c := cur.Sub(a); c != nil {
				inv.Sub = append(inv.Sub, a)
				cur, inv.SubSpec = c, c
				inv.Effects |= c.Effects
				subOpen = len(c.Subs) > 0
				lastUnknown = -1
				continue
			}
			if lastUnknown >= 0 && lastUnknown == i-1 {
				o := &inv.Options[len(inv.Options)-1]
				o.Value, o.HasValue, o.ValueArg = a, true, i
				lastUnknown = -1
				continue
			}
			subOpen = false
		}
		lastUnknown = -1
		if w := cur.Wrap; w != nil {
			if w.Assigns && isAssign(a) {
				inv.Assigns = append(inv.Assigns, a)
				continue
			}
			if nOps >= w.Operands {
				inv.Command = i
				break
			}
		}
		inv.Operands = append(inv.Operands, Operand{Value: a, Arg: i})
		nOps++
		if cur.StopAtOperand {
			endOpts = true
		}
	}
	if cur != root {
		applyOperands(inv, root)
	}
	applyOperands(inv, cur)
	if root.Refine != nil {
		root.Refine(inv)
	}
	if cur != root && cur.Refine != nil {
		cur.Refine(inv)
	}
	if inv.Effects.Has(NoCommand) {
		inv.Command = -1
	}
	return inv
}

// invocationBuf is an Invocation with inline room for small argument lists.
type invocationBuf struct {
	inv  Invocation
	opts [2]Opt
	ops  [3]Operand
	sub  [1]string
}

// generic reads the arguments of an unknown program.
func (inv *Invocation) generic() {
	end := false
	for i, a := range inv.Args {
		switch {
		case !end && a == "--":
			end = true
			inv.DashDash = i
		case !end && len(a) > 1 && a[0] == '-':
			o := Opt{Name: a, Spelled: a, Arg: i, ValueArg: -1}
			if eq := strings.IndexByte(a, '='); eq > 0 && a[1] == '-' {
				o.Name, o.Spelled, o.Value, o.HasValue, o.ValueArg = a[:eq], a[:eq], a[eq+1:], true, i
			}
			inv.Options = append(inv.Options, o)
		default:
			inv.Operands = append(inv.Operands, Operand{Value: a, Arg: i})
		}
	}
}

// optionUnlessDry reads the option word args[i] as option does, unless it
// holds an option that makes the invocation a dry run: then it takes
// nothing back from inv and reports false.
func (inv *Invocation) optionUnlessDry(s *Spec, args []string, i int) (int, int, bool) {
	n, effects, unknown := len(inv.Options), inv.Effects, inv.Unknown
	next, last := inv.option(s, args, i)
	for _, o := range inv.Options[n:] {
		if o.Effects.Has(DryRun) {
			inv.Options, inv.Effects, inv.Unknown = inv.Options[:n], effects, unknown
			return i, -1, false
		}
	}
	return next, last, true
}

// option reads the option word args[i] in spec s. It returns the index of
// the last word it used and, when the word ends in an unknown option without
// a value, that word's index (else -1).
func (inv *Invocation) option(s *Spec, args []string, i int) (int, int) {
	a := args[i]
	long := ""
	if a[1] != '-' && len(a) > 2 && s.Long == LongOnly {
		long = s.longOnly(a)
	}
	if a[1] == '-' || long != "" || (len(a) > 2 && s.wholeWord(a)) {
		name, val, hasVal := a, "", false
		if eq := strings.IndexByte(a, '='); eq > 0 {
			name, val, hasVal = a[:eq], a[eq+1:], true
		}
		o := s.Option(name)
		if long != "" {
			o = s.Option(long)
		}
		opt := Opt{Name: name, Spelled: name, Value: val, HasValue: hasVal, Arg: i, ValueArg: -1}
		if hasVal {
			opt.ValueArg = i
		}
		if o == nil {
			inv.Unknown = true
			inv.Options = append(inv.Options, opt)
			if hasVal {
				return i, -1
			}
			return i, i
		}
		if o.Arg == Required && !hasVal {
			if i+1 < len(args) {
				i++
				opt.Value, opt.HasValue, opt.ValueArg = args[i], true, i
			} else {
				opt.Missing = true
			}
		}
		inv.known(opt, o)
		return i, -1
	}
	unknownLast := false
	for k := 1; k < len(a); k++ {
		c := a[k]
		unknownLast = false
		var o *Option
		name := a[k : k+1]
		if c < 128 {
			o = s.shortOption(c)
			name = shortNames[c]
		}
		opt := Opt{Name: name, Spelled: name, Arg: i, ValueArg: -1}
		if o == nil {
			inv.Unknown = true
			inv.Options = append(inv.Options, opt)
			unknownLast = true
			continue
		}
		switch o.Arg {
		case Required:
			if k+1 < len(a) {
				opt.Value, opt.HasValue, opt.ValueArg = a[k+1:], true, i
			} else if i+1 < len(args) {
				i++
				opt.Value, opt.HasValue, opt.ValueArg = args[i], true, i
			} else {
				opt.Missing = true
			}
			inv.known(opt, o)
			return i, -1
		case Optional:
			if o.ValueChars != "" {
				n := k + 1
				for n < len(a) && strings.IndexByte(o.ValueChars, a[n]) >= 0 {
					n++
				}
				if n > k+1 {
					opt.Value, opt.HasValue, opt.ValueArg = a[k+1:n], true, i
				}
				inv.known(opt, o)
				k = n - 1
				continue
			}
			if k+1 < len(a) {
				opt.Value, opt.HasValue, opt.ValueArg = a[k+1:], true, i
			}
			inv.known(opt, o)
			return i, -1
		}
		inv.known(opt, o)
	}
	if unknownLast {
		return i, i
	}
	return i, -1
}

// wholeWord reports whether a single-dash word names a whole-word option of
// s or of a persistent ancestor ("find -delete", "java -jar").
func (s *Spec) wholeWord(a string) bool {
	name := a
	if eq := strings.IndexByte(a, '='); eq > 0 {
		name = a[:eq]
	}
	for sp := s; sp != nil; sp = sp.parent {
		if sp != s && !sp.Persistent {
			continue
		}
		if len(name) > 2 && name[1] != '-' && sp.longOption(name) != nil {
			return true
		}
	}
	return false
}

// longOnly returns the long spelling ("--user") of a single-dash word that
// getopt_long_only reads as a long option of s ("-us", "-user=alice"), or
// "" when it reads the word as a short cluster: it names no long option, or
// is ambiguous (the program then refuses it; the cluster reading never
// finds less than nothing).
func (s *Spec) longOnly(a string) string {
	name := a
	if eq := strings.IndexByte(a, '='); eq > 0 {
		name = a[:eq]
	}
	if s.Option("-"+name) == nil {
		return ""
	}
	return "-" + name
}

// shortOption returns the short option c of s or of a persistent ancestor.
func (s *Spec) shortOption(c byte) *Option {
	for sp := s; sp != nil; sp = sp.parent {
		if sp != s && !sp.Persistent {
			continue
		}
		if i := sp.short[c]; i > 0 {
			return &sp.Options[i-1]
		}
	}
	return nil
}

// known records a known option.
func (inv *Invocation) known(opt Opt, o *Option) {
	opt.Known = true
	opt.Name = o.Names[0]
	opt.Effects, opt.ValueEffects = o.Effects, o.Value
	if opt.HasValue && o.Value.Has(Config) && execKey(inv.Spec, opt.Value) {
		opt.ValueEffects |= Exec
	}
	inv.Effects |= o.Effects
	inv.Options = append(inv.Options, opt)
}

// execKey reports whether a "key=value" setting names one of s's ExecKeys.
func execKey(s *Spec, kv string) bool {
	if s == nil || len(s.ExecKeys) == 0 {
		return false
	}
	k := strings.TrimLeft(kv, " \t")
	if i := strings.IndexAny(k, "= \t"); i >= 0 {
		k = k[:i]
	}
	return ExecKey(s, k)
}

// ExecKey reports whether the configuration key (any case) of program spec
// s makes the program run its value (git's core.pager, alias.*).
func ExecKey(s *Spec, key string) bool {
	if s == nil {
		return false
	}
	return execKeyIn(s.ExecKeys, key)
}

// execKeyIn reports whether key (any case) is one of keys: a key ending in
// "." is a prefix, any other a substring.
func execKeyIn(keys []string, key string) bool {
	k := strings.ToLower(key)
	for _, x := range keys {
		if strings.HasSuffix(x, ".") {
			if strings.HasPrefix(k, x) {
				return true
			}
			continue
		}
		if strings.Contains(k, x) {
			return true
		}
	}
	return false
}

// applyOperands gives operands the effects of s's operand rules.
func applyOperands(inv *Invocation, s *Spec) {
	n := len(inv.Operands)
	for ri := range s.Operands {
		r := &s.Operands[ri]
		if n < r.Min {
			continue
		}
		for j := range inv.Operands {
			op := &inv.Operands[j]
			switch {
			case r.Prefix != "":
				v, ok := strings.CutPrefix(op.Value, r.Prefix)
				if !ok {
					continue
				}
				op.Value = v
			case r.All:
				if j < r.From {
					continue
				}
			case r.Index >= 0 && r.Index != j, r.Index < 0 && n+r.Index != j:
				continue
			}
			if r.Values != nil {
				e, ok := r.Values[op.Value]
				if !ok {
					continue
				}
				inv.Effects |= e
			}
			op.Effects |= r.Effects
			inv.Effects |= r.Invocation
		}
	}
}

// isAssign reports whether a is NAME=VALUE with a valid shell name.
func isAssign(a string) bool {
	eq := strings.IndexByte(a, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := a[i]
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// OptionsWith returns the options whose effects or value effects hold any
// of e.
func (inv *Invocation) OptionsWith(e Effect) []Opt {
	var out []Opt
	for _, o := range inv.Options {
		if (o.Effects|o.ValueEffects)&e != 0 {
			out = append(out, o)
		}
	}
	return out
}

// Has reports whether an option with canonical name (or, for unknown
// options, spelling) name was given.
func (inv *Invocation) Has(name string) bool {
	for i := range inv.Options {
		if inv.Options[i].Name == name {
			return true
		}
	}
	return false
}

// Value returns the value of the last option named name, and whether it
// was given with a value.
func (inv *Invocation) Value(name string) (string, bool) {
	v, ok := "", false
	for i := range inv.Options {
		if o := &inv.Options[i]; o.Name == name && o.HasValue {
			v, ok = o.Value, true
		}
	}
	return v, ok
}
