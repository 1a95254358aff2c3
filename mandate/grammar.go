package mandate

import "strings"

// This file is the mandate's view of the command grammar: which options of
// a call "-*" does not cover, and what reach a rule grants. INTERIM: a
// small table until package grammar lands.

// riskyEffect is what makes an option risky: it executes code, writes a
// file or device, or changes where the program reads configuration.
type effect uint8

const (
	effExec effect = 1 << iota
	effWrite
	effConfig
)

var interimRisky = map[string]map[string]effect{
	"git":  {"--output": effWrite, "-c": effConfig, "-C": effConfig, "--exec-path": effExec, "--git-dir": effConfig, "--work-tree": effConfig, "--ext-diff": effExec, "--textconv": effExec, "--upload-pack": effExec, "--receive-pack": effExec, "--exec": effExec},
	"curl": {"-o": effWrite, "--output": effWrite, "-O": effWrite, "-K": effConfig, "--config": effConfig, "-D": effWrite, "-c": effWrite},
	"make": {"-f": effConfig, "--file": effConfig, "-C": effConfig, "--eval": effExec, "-I": effConfig},
}

// riskyOptions returns the canonical names of the options in args (the
// arguments after program) that "-*" does not cover.
func riskyOptions(program string, sub []string, opts []string) []string {
	t := interimRisky[program]
	var out []string
	for _, o := range opts {
		name := o
		if i := strings.IndexByte(o, '='); i > 0 && strings.HasPrefix(o, "--") {
			name = o[:i]
		}
		if t[name] != 0 {
			out = append(out, name)
			continue
		}
		for full, e := range t {
			if e != 0 && strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(full, name) {
				out = append(out, full) // getopt_long abbreviation
			}
		}
	}
	return uniqSorted(out)
}

// optionTakesValue reports whether option opt of program takes the next
// word as its value.
func optionTakesValue(program, opt string) bool { return false }

// optionEffect returns the effects of the option named name.
func optionEffect(program string, sub []string, name string) effect {
	return interimRisky[program][name]
}

// programExecutes reports whether running program at all executes code
// that its arguments or files choose (a shell, an interpreter, make).
func programExecutes(program string) bool {
	switch program {
	case "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php", "lua", "make", "gmake", "eval", "source", ".", "xargs", "env":
		return true
	}
	return false
}

// envExecutes reports whether an environment variable or make-style
// assignment name makes program run code.
func envExecutes(program, name string) bool {
	switch name {
	case "SHELL", "BASH_ENV", "ENV", "LD_PRELOAD", "PATH", "MAKEFLAGS":
		return true
	}
	return false
}
