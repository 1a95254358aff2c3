package oracle

import (
	"errors"
	"strings"
)

// Argument kinds of an option, as getopt_long's has_arg.
const (
	noArg       = 0
	requiredArg = 1
	optionalArg = 2
)

// optSpec is how a GNU program declares its options to getopt_long: the
// short option string ("dfirvIR", "o:" requires a value, "o::" takes an
// optional attached one) and the long options with their argument kinds.
// Parsing follows glibc: a long option may be abbreviated to any unique
// prefix, options and operands may be interleaved (permutation), "--" ends
// the options, and "-" is an operand.
type optSpec struct {
	short string
	long  map[string]int
}

// opt is one parsed option: a short letter ("r") or a long name
// ("recursive"), with its value if it took one.
type opt struct {
	name string
	val  string
}

var errUsage = errors.New("getopt: invalid option")

// parse returns the options and operands of args the way the program's
// getopt_long would, or errUsage when the program would refuse them (an
// unknown or ambiguous option, a missing value): such a program stops
// before doing anything. posix is POSIXLY_CORRECT in the environment: no
// permutation, the first operand ends the options.
func (s optSpec) parse(args []string, posix bool) (opts []opt, operands []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			full, kind, ok := s.longName(name)
			if !ok {
				return nil, nil, errUsage
			}
			switch {
			case kind == noArg && hasVal:
				return nil, nil, errUsage
			case kind == requiredArg && !hasVal:
				if i+1 >= len(args) {
					return nil, nil, errUsage
				}
				i++
				val = args[i]
			}
			opts = append(opts, opt{name: full, val: val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(s.short, c)
				if k < 0 || c == ':' {
					return nil, nil, errUsage
				}
				kind := noArg
				if k+1 < len(s.short) && s.short[k+1] == ':' {
					kind = requiredArg
					if k+2 < len(s.short) && s.short[k+2] == ':' {
						kind = optionalArg
					}
				}
				if kind == noArg {
					opts = append(opts, opt{name: string(c)})
					continue
				}
				val := a[j+1:]
				if val == "" && kind == requiredArg {
					if i+1 >= len(args) {
						return nil, nil, errUsage
					}
					i++
					val = args[i]
				}
				opts = append(opts, opt{name: string(c), val: val})
				break
			}
		case posix:
			return opts, append(operands, args[i:]...), nil
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}

// longName resolves a long option as written, exactly or as a unique
// prefix.
func (s optSpec) longName(name string) (string, int, bool) {
	if k, ok := s.long[name]; ok {
		return name, k, true
	}
	if name == "" {
		return "", 0, false
	}
	found := ""
	for l := range s.long {
		if strings.HasPrefix(l, name) {
			if found != "" {
				return "", 0, false // ambiguous
			}
			found = l
		}
	}
	if found == "" {
		return "", 0, false
	}
	return found, s.long[found], true
}

// has reports whether opts holds any of names.
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}
