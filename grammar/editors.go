package grammar

import "strings"

// Editors, pagers, REPLs and debuggers given commands: vim's -c/+cmd/--cmd
// and ex mode reading its input, ed, sqlite3 dot commands, gdb -ex, emacs
// --eval, man's pager, rg's preprocessor.
func editors() []*Spec {
	return []*Spec{
		{Name: "vim", Aliases: []string{"vi", "nvim", "view", "ex", "rvim", "gvim", "vimdiff", "evim"}, Long: Exact, Refine: refineVim,
			Stdin: &Script{Lang: "vim", Shell: editorShell, From: []string{"-s", "-S"}},
			Options: join(ops(arg("-c", Code), arg("--cmd", Code), arg("-S", Code), arg("-s", Code), arg("-u", Code), arg("-U", Code),
				arg("-w", Write), arg("-W", Write), arg("-i", 0), arg("-t", 0), arg("-q", Read), arg("-T", 0), arg("--startuptime", Write),
				arg("--servername", 0), arg("--remote-send", Code), arg("--remote-expr", Code), arg("-V", 0),
				flag("-e", Interactive), flag("-E", Interactive), flag("-es", Interactive), flag("-Es", Interactive),
				flag("--version", DryRun), flag("--help -h", DryRun)),
				flags("-b -d -D -g -f -l -m -M -n -N -o -O -p -r -L -R -x -X -y -Z -A -H --clean --noplugin --not-a-term --ttyfail --nofork --embed --headless"))},
		{Name: "ed", Aliases: []string{"red"}, Effects: Interactive, Stdin: &Script{Lang: "ed", Shell: editorShell}, Options: gnu(args("--prompt -p"), flags("--quiet --silent -s --loose-exit-status -l --restricted -r --verbose -v -E --extended-regexp -G --traditional"))},
		{Name: "sqlite3", Long: Exact, Refine: refineSQLite, Stdin: &Script{Lang: "sqlite", Shell: SQLiteShell, From: []string{"-init"}},
			Options: ops(arg("-cmd --cmd", Code), arg("-init --init", Code), arg("-separator", 0), arg("-nullvalue", 0), arg("-newline", 0),
				arg("-mmap", 0), arg("-vfs", 0), arg("-lookaside", 0), arg("-pagecache", 0), flag("-interactive", Interactive),
				flag("-version --version", DryRun), flag("-help --help", DryRun), flag("-safe", 0),
				flag("-bail", 0), flag("-batch", 0), flag("-csv", 0), flag("-header", 0), flag("-json", 0), flag("-line", 0),
				flag("-list", 0), flag("-markdown", 0), flag("-readonly", 0), flag("-echo", 0), flag("-box", 0), flag("-table", 0))},
		{Name: "gdb", Aliases: []string{"gdb-multiarch", "cgdb"}, Long: Exact, Refine: refineGDB,
			Stdin: &Script{Lang: "gdb", Inline: "-ex", Lines: true, From: []string{"-x", "-ix"}},
			Options: ops(arg("-ex --ex --eval-command", Code), arg("-iex --iex --init-eval-command", Code), arg("-x --x --command", Code),
				arg("-ix --ix --init-command", Code), arg("-p --pid", 0), arg("-cd --cd", 0), arg("-d --directory", 0), arg("-se --se", 0),
				arg("-s --symbols", 0), arg("-e --exec", 0), arg("-c --core", 0), flag("-batch --batch", 0), flag("-q -quiet --quiet -silent", 0),
				flag("-nx --nx -n", 0), flag("--args -args", 0), flag("--version -version", DryRun), flag("--help -help", DryRun))},
		// psql runs its input unless given -c or -f (-f - and -f /dev/stdin read
		// it too); its \! lines run shell commands.
		{Name: "psql", Refine: refinePsql, Stdin: &Script{Lang: "psql", Shell: SQLiteShell, From: []string{"--file"}},
			Options: gnu(ops(arg("--command -c", 0), arg("--file -f", Read), arg("--output -o", Write), arg("--log-file -L", Write),
				arg("--dbname -d", 0), arg("--host -h", 0), arg("--port -p", 0), arg("--username -U", 0), arg("--set --variable -v", 0),
				arg("--pset -P", 0), arg("--field-separator -F", 0), arg("--record-separator -R", 0), arg("--table-attr -T", 0),
				flag("--list -l", DryRun), flag("-V", DryRun), flag("-?", DryRun)),
				flags("--echo-all -a --no-align -A --echo-errors -b --echo-queries -e --echo-hidden -E --html -H --no-psqlrc -X --quiet -q "+
					"--single-step -s --single-line -S --tuples-only -t --expanded -x --no-password -w --password -W --single-transaction -1 --csv --field-separator-zero -z --record-separator-zero -0"))},
		{Name: "emacs", Aliases: []string{"emacsclient"}, Long: Exact, Options: ops(arg("--eval", Code), arg("--load -l", Code), arg("--funcall -f", Code),
			arg("--script", Code), arg("-x", Code), flag("--batch", 0), flag("-Q -q --no-init-file", 0), flag("--version", DryRun), flag("--help", DryRun))},
		{Name: "less", Aliases: []string{"more", "most"}, Refine: refineLess, Options: ops(arg("--pattern -p", 0), arg("-t --tag", 0), arg("--log-file -o", Write), arg("--LOG-FILE -O", Write),
			arg("-k --lesskey-file", Code), arg("-x --tabs", 0), arg("-y --max-forw-scroll", 0), arg("-z --window", 0), arg("-b --buffers", 0),
			arg("-h --max-back-scroll", 0), arg("-j --jump-target", 0), arg("-P --prompt", 0), flag("--version -V", DryRun), flag("--help", DryRun))},
		// bat pages through --pager (or $BAT_PAGER) when paging.
		{Name: "bat", Aliases: []string{"batcat"}, Env: map[string]Effect{"BAT_PAGER": Exec}, Options: gnu(ops(arg("--pager", Exec), arg("--paging", 0), arg("--language -l", 0),
			arg("--style", 0), arg("--theme", 0), arg("--line-range -r", 0), arg("--highlight-line -H", 0), arg("--map-syntax -m", 0), arg("--color", 0), arg("--decorations", 0),
			arg("--tabs", 0), arg("--wrap", 0), arg("--terminal-width", 0), arg("--file-name", 0), arg("--config-file", Config)),
			flags("-p --plain -n --number -A --show-all -P -u --unbuffered --list-languages -L --list-themes --diff -d"))},
		{Name: "man", Options: gnu(ops(arg("--pager -P", Exec), opt("--html -H", Exec), arg("--config-file -C", Config), arg("--preprocessor -p", 0),
			arg("--manpath -M", 0), arg("--prompt -r", 0), arg("--locale -L", 0), arg("--systems -m", 0), arg("--sections -S -s", 0),
			arg("--extension -e", 0), arg("--recode -R", 0), arg("--encoding -E", 0), opt("--gxditview -X", Exec), flag("--local-file -l", 0)),
			flags("--all -a --whatis -f --apropos -k --where --path -w --catman -c --ascii -7 --ditroff -Z --troff -t --update -u --no-hyphenation --nh --no-justification --nj"))},
		{Name: "rg", Aliases: []string{"ripgrep"}, Long: Exact, ConfigFiles: &ConfigFiles{Env: []string{"RIPGREP_CONFIG_PATH"}, Shell: RipgrepConfigCommands}, Options: join(ops(arg("--pre", Exec), arg("--hostname-bin", Exec), arg("--file -f", Read),
			arg("--regexp -e", 0), arg("--glob -g", 0), arg("--iglob", 0), arg("--type -t", 0), arg("--type-not -T", 0), arg("--type-add", 0),
			arg("--after-context -A", 0), arg("--before-context -B", 0), arg("--context -C", 0), arg("--max-count -m", 0), arg("--threads -j", 0),
			arg("--max-columns -M", 0), arg("--max-depth --maxdepth -d", 0), arg("--sort", 0), arg("--sortr", 0), arg("--colors", 0), arg("--color", 0),
			arg("--path-separator", 0), arg("--ignore-file", Read), arg("--engine", 0), arg("--encoding -E", 0), arg("--replace -r", 0),
			arg("--context-separator", 0), arg("--max-filesize", 0), arg("--pre-glob", 0), arg("--dfa-size-limit --regex-size-limit", 0),
			flag("--version -V", DryRun), flag("--help -h", DryRun)))},
		// zip -m moves the files into the archive: it deletes them after.
		{Name: "zip", Operands: []OperandRule{{Index: 0, Effects: Write}, {All: true, From: 1, Effects: Target}},
			Options: ops(arg("--unzip-command -TT", Exec), arg("-b", 0), arg("-t -tt", 0), arg("-x --exclude", 0), arg("-i --include", 0), arg("-P --password", 0), arg("-O --output-file", Write),
				flag("--move -m", Delete), flag("--recurse-paths -r", Recursive), flag("--recurse-patterns -R", Recursive))},
		// sdiff and diff3 run --diff-program to compare; sdiff -o writes
		// the merge.
		{Name: "sdiff", Aliases: []string{"diff3"}, Options: gnu(ops(arg("--diff-program", Exec), arg("--output -o", Write), arg("--width -w", 0),
			arg("--tabsize", 0), arg("--ignore-matching-lines -I", 0), arg("--label -L", 0)))},
		// pandoc runs its --filter programs (and Lua filters in-process)
		// on the document, and writes -o.
		{Name: "pandoc", Options: gnu(ops(arg("--filter -F", Exec), arg("--lua-filter -L", Code), arg("--output -o", Write),
			arg("--from --read -f -r", 0), arg("--to --write -t -w", 0), arg("--template", Read), arg("--metadata -M", 0),
			arg("--variable -V", 0), arg("--resource-path", 0), arg("--data-dir", Config), arg("--defaults -d", Config)))},
		// mysql pipes results through --pager (optional value).
		{Name: "mysql", Aliases: []string{"mariadb"}, Options: ops(opt("--pager", Exec), arg("--execute -e", 0), arg("--user -u", 0),
			arg("--host -h", 0), arg("--port -P", 0), arg("--database -D", 0), opt("--password -p", 0), arg("--defaults-file", Config),
			arg("--defaults-extra-file", Config), arg("--init-command", 0), arg("--tee", Write), flag("--help -?", DryRun), flag("--version -V", DryRun))},
		// nano runs --speller on the buffer when spell checking is asked.
		{Name: "nano", Aliases: []string{"rnano"}, Options: gnu(ops(arg("--speller -s", Exec), arg("--operatingdir -o", 0), arg("--rcfile -f", Config),
			arg("--tabsize -T", 0), arg("--fill -r", 0), arg("--syntax -Y", 0), arg("--backupdir -C", 0)))},
	}
}

// refineVim: operands starting with "+" are commands ("+cmd", "+/pat"
// and "+N" are not), and ex mode (-e, -es, ex) reads commands from input.
func refineVim(inv *Invocation) {
	if inv.Program == "ex" {
		inv.Effects |= Interactive
	}
	for i := range inv.Operands {
		op := &inv.Operands[i]
		if v, ok := strings.CutPrefix(op.Value, "+"); ok && v != "" && v[0] != '/' && strings.Trim(v, "0123456789") != "" {
			op.Value = v
			op.Effects |= Code
		} else {
			op.Effects |= Write
		}
	}
}

// refineLess: "+cmd" operands are less commands ("!" runs a shell).
func refineLess(inv *Invocation) {
	for i := range inv.Operands {
		op := &inv.Operands[i]
		if v, ok := strings.CutPrefix(op.Value, "+"); ok && strings.ContainsAny(v, "!|") {
			op.Effects |= Code
		}
	}
}

// refineSQLite: the first operand is the database, the rest are SQL or
// dot commands; ".shell" and ".system" run their text, ".load" loads code,
// ".output", ".once" and ".log" write files. Without SQL operands sqlite3
// reads its input.
func refineSQLite(inv *Invocation) {
	if len(inv.Operands) <= 1 && !inv.Effects.Has(DryRun) {
		inv.Effects |= Interactive
	}
	for i := range inv.Operands {
		op := &inv.Operands[i]
		if i == 0 {
			op.Effects |= Target
			continue
		}
		op.Effects |= Code
	}
	for i := range inv.Options {
		if o := &inv.Options[i]; o.ValueEffects.Has(Code) {
			o.ValueEffects |= SQLiteDot(o.Value)
		}
	}
	for i := range inv.Operands[min(1, len(inv.Operands)):] {
		op := &inv.Operands[i+1]
		op.Effects |= SQLiteDot(op.Value)
	}
}

// SQLiteDot returns the effects of sqlite3 input text: Exec for a line
// starting with .shell, .system or .load (or psql's \! and mysql's system
// and \!), Write for .output, .once, .log, .excel, .save, .backup.
func SQLiteDot(text string) Effect {
	var e Effect
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		for _, semi := range strings.Split(l, ";") {
			w := strings.ToLower(strings.TrimSpace(semi))
			switch {
			case strings.HasPrefix(w, ".sh"), strings.HasPrefix(w, ".system"), strings.HasPrefix(w, ".load"),
				strings.HasPrefix(w, `\!`), strings.HasPrefix(w, "system "), strings.HasPrefix(w, ".import |"):
				e |= Exec
			case strings.HasPrefix(w, ".output"), strings.HasPrefix(w, ".once"), strings.HasPrefix(w, ".log"),
				strings.HasPrefix(w, ".excel"), strings.HasPrefix(w, ".save"), strings.HasPrefix(w, ".backup"),
				strings.HasPrefix(w, `\o`), strings.HasPrefix(w, `\w`), strings.HasPrefix(w, `\copy`):
				e |= Write
			}
		}
	}
	return e
}

// SQLiteOutputs returns the files that database shell commands in text
// write: sqlite3's .output/.once/.log/.save/.backup FILE and psql's \o and
// \w FILE (the last word, quotes removed; "stdout", "off" and "|cmd"
// are not files).
func SQLiteOutputs(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, part := range strings.Split(line, ";") {
			f := strings.Fields(part)
			if len(f) < 2 {
				continue
			}
			switch strings.ToLower(f[0]) {
			case ".output", ".once", ".log", ".save", ".backup", `\o`, `\w`, `\out`, `\write`:
				v := strings.Trim(f[len(f)-1], `"'`)
				if v != "" && v != "stdout" && v != "stderr" && v != "off" && v[0] != '|' && v[0] != '-' {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// refinePsql: without -c or -f psql reads its input.
func refinePsql(inv *Invocation) {
	if !inv.Has("--command") && !inv.Has("--file") && !inv.Effects.Has(DryRun) {
		inv.Effects |= Interactive
	}
	// psql opens -o FILE as it reads its options: -V and -? exit where
	// they stand, so an -o before them is written, and -l lists into it.
	for _, o := range inv.Options {
		if o.Name == "-V" || o.Name == "-?" {
			return
		}
		if o.Name == "--output" {
			inv.Effects &^= DryRun
			return
		}
	}
}

// refineGDB: with --args, the operands are a program and its arguments
// that gdb runs; -batch with commands runs them. Without -batch gdb reads
// commands from its input.
//
// gdb attached to a process (-p PID, or PROGRAM PID) stops it, and the
// commands it is given run arbitrary code in it (call, set var, jump,
// kill, run restarts it). Attached to init (pid 1), that is init made to
// exit or killed, and the kernel panics: KillAll, the same as killing
// every process. Attaching alone, or with commands that only inspect
// (bt, info, print without a call or an assignment …), stops init for a
// while and detaches: Kill. Commands in a file (-x FILE) are not known and
// count as inspection only; they are opaque code, rated on their own.
func refineGDB(inv *Invocation) {
	if !inv.Has("-batch") && !inv.Effects.Has(DryRun) {
		inv.Effects |= Interactive
	}
	init := false
	if v, _ := inv.Value("-p"); strings.TrimLeft(v, "0") == "1" {
		init = true
	}
	if n := len(inv.Operands); n == 2 && strings.TrimLeft(inv.Operands[1].Value, "0") == "1" && !inv.Has("--args") {
		init = true
	}
	if init {
		inv.Effects |= Kill
		for _, o := range inv.Options {
			if (o.Name == "-ex" || o.Name == "-iex") && o.HasValue && !gdbInspects(o.Value) {
				inv.Effects |= KillAll
			}
		}
	}
	if inv.Has("--args") {
		for i := range inv.Operands {
			inv.Operands[i].Effects |= Exec
		}
	}
}

// gdbInspectCommands are gdb commands that only read the inferior's state
// (or end the session, which detaches from an attached process).
var gdbInspectCommands = map[string]bool{
	"bt": true, "backtrace": true, "where": true, "info": true, "i": true, "x": true, "list": true, "l": true,
	"frame": true, "f": true, "up": true, "down": true, "thread": true, "disassemble": true, "show": true,
	"print": true, "p": true, "output": true, "ptype": true, "whatis": true, "detach": true, "quit": true, "q": true,
	"echo": true, "help": true,
}

// gdbInspects reports whether a gdb command only inspects: its first word
// is an inspection command and it makes no call and no assignment
// ("print f()", "p x=1", "p $rip = 0").
func gdbInspects(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return true
	}
	w := f[0]
	if i := strings.IndexByte(w, '/'); i > 0 {
		w = w[:i] // p/x, x/16x
	}
	if !gdbInspectCommands[w] {
		return false
	}
	rest := strings.Join(f[1:], " ")
	rest = strings.NewReplacer("==", "", "!=", "", "<=", "", ">=", "").Replace(rest)
	return !strings.ContainsAny(rest, "(=")
}
