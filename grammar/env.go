package grammar

import "strings"

// Environment variables that make programs run code: a program or command
// line ($PAGER, $GIT_SSH_COMMAND), a start-up file ($BASH_ENV,
// $PYTHONSTARTUP), options that load code ($PERL5OPT, $NODE_OPTIONS) or a
// library ($LD_PRELOAD). The environment is inherited, so a variable set for
// one program reaches every program it starts: these hold for any program.
var execEnv = map[string]bool{
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "LD_DEBUG_OUTPUT": true,
	"DYLD_INSERT_LIBRARIES": true, "DYLD_LIBRARY_PATH": true, "GCONV_PATH": true,
	"ENV": true, "SHELL": true, "PATH": true, "PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS4": true,
	"SHELLOPTS": true, "IFS": true, "CDPATH": false, "ZDOTDIR": true, "INPUTRC": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "MANPAGER": true, "MANROFFOPT": true, "BROWSER": true,
	"LESSOPEN": true, "LESSCLOSE": true, "LESSKEY": true, "LESSSECURE": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "PERL5DB": true,
	"PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true, "PYTHONINSPECT": true, "PYTHONBREAKPOINT": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "RUBYOPT": true, "RUBYLIB": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "CLASSPATH": true,
	"RSYNC_RSH": true, "RSYNC_CONNECT_PROG": true, "CVS_RSH": true, "RSH": true,
	"SSH_ASKPASS": true, "SUDO_ASKPASS": true, "SUDO_EDITOR": true, "SYSTEMD_PAGER": true, "SYSTEMD_EDITOR": true,
	"GIT_SSH": true, "GIT_EXEC_PATH": true, "GIT_DIR": true, "GIT_TEMPLATE_DIR": true, "GIT_EXTERNAL_DIFF": true,
	"GIT_PROXY_COMMAND": true, "GIT_ASKPASS": true, "RIPGREP_CONFIG_PATH": true,
	"MAKEFLAGS": true, "MFLAGS": true, "MAKEFILES": true, "GNUMAKEFLAGS": true,
	"TERMINAL": true, "TMUX_TMPDIR": false, "LUA_INIT": true, "LUA_PATH": true, "R_PROFILE_USER": true,
	"NPM_CONFIG_SCRIPT_SHELL": true, "npm_config_script_shell": true, "npm_config_node_options": true,
}

// programEnv are variables naming a build tool that programs run in place
// of the default one (make's $(CC), cargo's RUSTC_WRAPPER, cmake's
// compiler launchers). Setting them is routine ("CC=clang make"), so the
// value is rated as the command it names rather than always asked about.
var programEnv = map[string]bool{
	"CC": true, "CXX": true, "CPP": true, "LD": true, "AR": true, "AS": true, "FC": true, "F77": true, "NM": true,
	"RANLIB": true, "STRIP": true, "OBJCOPY": true, "OBJDUMP": true, "HOSTCC": true, "HOSTCXX": true, "CC_FOR_BUILD": true,
	"RUSTC": true, "RUSTC_WRAPPER": true, "RUSTC_WORKSPACE_WRAPPER": true, "RUSTDOC": true, "RUSTFMT": true,
	"CARGO_BUILD_RUSTC": true, "CARGO_BUILD_RUSTC_WRAPPER": true, "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER": true, "CARGO_BUILD_RUSTDOC": true,
	"CMAKE_C_COMPILER_LAUNCHER": true, "CMAKE_CXX_COMPILER_LAUNCHER": true, "CMAKE_C_COMPILER": true, "CMAKE_CXX_COMPILER": true,
	"CMAKE_MAKE_PROGRAM": true, "CCACHE_PREFIX": true, "DISTCC_CMDLIST": false, "PKG_CONFIG": true, "YACC": true, "LEX": true,
	"GOTOOLCHAIN": false, "CGO_CFLAGS": false,
}

// writeEnv are variables naming a file the program writes (shell and REPL
// histories, written on exit, straight into a device when they name one).
var writeEnv = map[string]bool{
	"HISTFILE": true, "LESSHISTFILE": true, "PYTHON_HISTORY": true, "NODE_REPL_HISTORY": true, "MYSQL_HISTFILE": true,
	"PSQL_HISTORY": true, "SQLITE_HISTORY": true, "REDISCLI_HISTFILE": true, "LESSLOGFILE": true,
	"SSLKEYLOGFILE": true, // TLS libraries append session keys to it
}

// optionsEnv are variables that hold a program's options, read as if given
// first on its command line (after the subcommand), by the program (grammar
// name) that reads them. They are inherited like any variable: set for make,
// TAR_OPTIONS still reaches the tar a recipe runs. GNU grep has ignored
// GREP_OPTIONS since 3.6.
var optionsEnv = map[string]string{
	"TAR_OPTIONS": "tar", "ZIPOPT": "zip", "PARALLEL": "parallel",
	"LESS": "less", "MORE": "less", "GZIP": "gzip", "BZIP2": "gzip", "BZIP": "gzip", "XZ_OPT": "gzip",
	"XZ_DEFAULTS": "gzip", "LZOP": "gzip", "MAKEFLAGS": "make", "GNUMAKEFLAGS": "make", "MFLAGS": "make",
	"GOFLAGS": "go", "MANOPT": "man",
}

// OptionsProgram returns the program (grammar name) whose options the
// variable name holds, or "".
func OptionsProgram(name string) string { return optionsEnv[name] }

// execEnvPrefixes and execEnvSuffixes cover families of such variables:
// BASH_ENV, BASH_FUNC_x%%, BASH_ALIASES…; GIT_CONFIG_*; *_EDITOR, *_PAGER,
// *_ASKPASS, *_SSH_COMMAND, *_RSH.
var (
	execEnvPrefixes = []string{"BASH_", "LD_", "DYLD_", "GIT_CONFIG", "NPM_CONFIG_", "npm_config_", "LUA_INIT"}
	execEnvSuffixes = []string{"_EDITOR", "_PAGER", "_ASKPASS", "_SSH_COMMAND", "_RSH", "_PROXY_COMMAND", "_SHELL"}
)

// EnvEffects returns what the value of environment variable name is to
// program (a base name; "" for any): Exec when it names a program, a
// command line, options or a start-up file that makes some program run
// code; Program for a build tool's name (CC); plus what the program's own
// grammar declares (make's SHELL, go's GOFLAGS: Options). It is 0 for
// variables that only carry data.
func EnvEffects(program, name string) Effect {
	var e Effect
	if execEnv[name] {
		e |= Exec
	} else {
		for _, p := range execEnvPrefixes {
			if strings.HasPrefix(name, p) && len(name) > len(p) {
				e |= Exec
				break
			}
		}
		for _, s := range execEnvSuffixes {
			if strings.HasSuffix(name, s) && len(name) > len(s) {
				e |= Exec
				break
			}
		}
	}
	if writeEnv[name] || strings.HasPrefix(name, "GIT_TRACE") {
		// GIT_TRACE, GIT_TRACE_PACKET, GIT_TRACE2_EVENT …: an absolute
		// path is a file git appends its trace to.
		e |= Write
	}
	if programEnv[name] || strings.HasPrefix(name, "CARGO_TARGET_") && strings.HasSuffix(name, "_RUNNER") {
		e |= Program
	}
	if s := Lookup(program); s != nil {
		e |= s.Env[name]
		if optionsEnv[name] == s.Name {
			e |= Options
		}
	}
	return e
}

// SplitOptions splits the value of a variable that holds a program's
// options (TAR_OPTIONS, ZIPOPT, MAKEFLAGS …) into the words the program
// reads: fields separated by blanks, with single and double quotes and
// backslashes quoting as in a shell (tar splits so; the others split on
// blanks alone, which this reads the same way for words without quotes).
func SplitOptions(v string) []string {
	var out []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
				continue
			}
		case ch == '\\' && i+1 < len(v) && quote != '\'':
			i++
			ch = v[i]
		case quote == '"':
			if ch == '"' {
				quote = 0
				continue
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
			continue
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
			continue
		}
		b.WriteByte(ch)
		in = true
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// EnvCommands returns the command lines that the value of an environment
// variable naming a command runs: the value itself, except for less's
// input preprocessor ("|cmd %s", "||cmd %s", "|-cmd %s": the markers say how
// its output is read, "%s" is the file) and GIT_CONFIG_PARAMETERS (the
// values of its quoted 'key'='value' entries, as git -c's).
func EnvCommands(name, value string) []string {
	switch name {
	case "LESSOPEN", "LESSCLOSE":
		v := strings.TrimPrefix(strings.TrimPrefix(value, "|"), "|")
		return []string{strings.ReplaceAll(strings.TrimPrefix(v, "-"), "%s", "f")}
	case "GIT_CONFIG_PARAMETERS":
		var out []string
		for _, w := range SplitOptions(value) {
			if _, v, ok := strings.Cut(w, "="); ok {
				out = append(out, v)
			}
		}
		return out
	}
	return []string{value}
}
