// Package shellparse turns a bash command string into a structural description
// of every simple command it can reach: the effective program after peeling
// wrappers, literal arguments, environment assignments, redirections, the
// context each command runs in, and the opaque segments whose effect cannot be
// known statically.
//
// It is the first step of the terminal gate (DESIGN.md §2). It is pure: no
// policy, no I/O, no processes, no privileges. Policy lives in package approval.
//
// # Model
//
// Parse parses the source with mvdan.cc/sh/v3/syntax (bash dialect) and walks
// the syntax tree; it never matches text. Every simple command reachable
// anywhere becomes a Command: in lists, pipelines, && and ||, subshells,
// blocks, if/case/for/while/until conditions and bodies, function bodies,
// $( ), backticks, <( ) and >( ), substitutions inside arguments, assignment
// values, redirection targets, heredoc bodies, parameter expansions,
// arithmetic and [[ ]] expressions, coproc, time, and declare/export/local
// values. Commands inside substitutions are listed before the command whose
// words hold them, as they run first.
//
// A Command's Program is its name after quote and backslash removal with the
// directory stripped ("r\m", "'r'm", "/usr/bin/rm" and "./rm" are all "rm");
// Spelling keeps the path. Characters are never folded: a fullwidth "ｒｍ"
// stays "ｒｍ" (it is not the rm binary) and the Command is marked NonASCII.
// A program word that is not fully literal ("$(echo rm)", "$CMD", "${X}rm",
// "r${IFS}m", a glob or a brace expansion) yields an opaque dynamic-program
// segment and a Command with an empty Program (its arguments and
// redirections are still listed). A statement without a program (only
// assignments or redirections: "X=1", "> /dev/sda") is also a Command with
// an empty Program.
//
// Words keep their value after quote removal; expansions keep their source
// text ("$HOME/.aws"), and Word.Literal is false for any expansion, a
// leading "~", and unquoted glob or brace patterns (also marked Glob).
//
// Redirections of a compound command ("{ a; b; } > f", "while …; done < f")
// are listed on every command inside it, after the command's own. The
// redirections of a shell running a literal payload are listed on the
// payload's commands.
//
// # Wrappers
//
// Wrappers are programs that run another program named on their command
// line. Their option syntax (which options take values, abbreviations,
// "--", how many operands precede the command, which options mean no
// command runs) is read from package grammar, the one command grammar that
// package approval and package mandate read too; a wrapper is one entry in
// grammar/wrappers.go. They are peeled off, each recorded in Command.Wrappers (outermost
// first, with the words it was given before the wrapped command), and they
// nest ("sudo env X=1 nice -n 5 timeout 3 rm -rf /" is rm with four
// wrappers). Each wrapper's option syntax is known, so option arguments are
// not mistaken for the program:
//
//	env [-i] [-u NAME] [-C DIR] [-a ARG0] [-S STR] [NAME=VAL…] cmd   assignments → Env, -i/-u → EnvFlags;
//	     -S STR is split as GNU env splits it (\_ separators, quotes, # comments) and its words re-read
//	     by env, so the payload's commands carry two env wrappers (a ${VAR} in STR makes it opaque)
//	sudo [-u U -g G -h H -p P -C N -D D -r R -t T -U U -T T -R D …] [NAME=VAL…] cmd
//	     (-l -e -v -K -V: no command run; -s/-i without a command: sudo is the program, an interactive
//	     shell; -s/-i with a command: the words are joined and parsed as the shell's -c payload)
//	doas [-u U] [-n -s] cmd         (-C/-L: no command run)
//	su [-] [-l] [-c CMD] [user [args]], runuser (same, plus -u USER cmd): -c payload parsed; without it su is the program
//	nice [-n N | -N], nohup, setsid [-f -w -c], timeout [-s SIG -k DUR] DURATION, time [-p] (keyword) and /usr/bin/time [-f F -o F]
//	stdbuf [-i/-o/-e MODE], ionice [-c N -n N -t] (-p: no command), chrt [opts] PRIO (-p/-m: none), taskset [-a -c] MASK (-p: none)
//	exec [-a NAME -c -l], command [-p] (-v/-V is a lookup: command is the program), builtin
//	xargs [-0 -r -t -I R -i -L N -l -n N -P N -s N -d D -E S -e -a F …]   (Context.ExtraArgs)
//	find … -exec|-execdir|-ok|-okdir cmd … ; or +   (find stays a Command; each cmd is one more, with find as wrapper; "+" sets ExtraArgs)
//	watch [-n N …] words (joined and parsed as a payload; -x runs them directly), flock [opts] FILE cmd | flock [opts] FILE -c CMD
//	busybox APPLET, toybox APPLET, parallel [opts] cmd ::: … (command words parsed as a payload, ExtraArgs), sg GROUP [-c] CMD
//	pkexec, nsenter, unshare, chroot DIR, strace, ltrace, gosu USER, su-exec USER, setpriv, numactl, cgexec,
//	faketime TIME, fakeroot, eatmydata, catchsegv, unbuffer, dbus-run-session, torsocks, tsocks,
//	proxychains, proxychains4, firejail, caffeinate, systemd-run, systemd-inhibit, screen,
//	setarch ARCH [opts] (and linux32, linux64, i386, x86_64), prlimit, choom, valgrind, ssh-agent, run-one,
//	chpst, flatpak-spawn, ip netns|vrf exec NAME, uv/poetry/pipenv run, bundle exec, npx, npm/pnpm/yarn exec
//	su/runuser permute their options ("su root --command CMD"); -s PROG runs PROG with the words after the user
//	start-stop-daemon --start --exec|--startas PROG -- ARGS; screen -X stuff TEXT | exec CMD; tmux command
//	sequences ("\;") and send-keys KEYS (typed into a shell: parsed); time -- CMD
//	trap ACTION SIG…, tmux new-session|new-window|split-window|respawn-*|run-shell|display-popup … CMD,
//	script -c CMD, nix-shell --run|--command CMD, parallel ::: CMD… : shell strings parsed as payloads
//
// A wrapper with nothing left to run is itself the program ("env",
// "sudo -l", "exec 3<>/dev/tcp/h/80"). An option word that is not literal
// ends option scanning and is taken as the program, which makes it opaque.
// Long options may be abbreviated as getopt_long allows ("env --s=…" is
// --split-string, "su --comm" is --command). su and runuser stop reading
// their own options at the user name; the words after it go to the user's
// shell, so "su root -c CMD" is a payload too. Environment, redirections
// and wrappers of a shell running a literal payload are inherited by the
// payload's commands.
//
// # Payloads
//
// A literal script given to a shell is parsed recursively: sh, bash, dash,
// zsh, ksh, ash, mksh … with any option cluster containing c ("-c", "-lc",
// "-xec"), su/runuser -c, sudo -s/-i CMD, env -S, watch, flock -c,
// parallel, sg, trap, tmux, script -c, nix-shell --run, alias values
// (alias x='…': the alias command stays a Command too), and the literal
// arguments of eval. The payload's commands are added to Script.Commands
// with Context.Payload set to the nesting depth, Text in the payload's own
// source (for a payload made of several words, or an env -S string, that
// source is the joined or re-quoted text the shell would read), Span that
// of the outermost payload word(s), and the shell (or su, env, watch …) as
// their innermost wrapper. Words after a shell's -c script are the
// script's $0, $1 …: they set Context.ExtraArgs on its commands. The shell running
// a literal payload is not itself a Command. Past Options.MaxDepth the
// payload is an opaque depth-limit segment; a payload that does not parse is
// an opaque payload segment.
//
// # Opaque segments
//
// Opaque.Text is exact source text: the simple command's text unless noted.
//
//	dynamic-program         the program word is not literal
//	eval                    eval … (a literal eval is also parsed as a payload)
//	source                  source/. of a non-literal path; a shell or interpreter given a non-literal script path
//	                        (a leading "~/" and plain $HOME or ${HOME} count as known: "source $HOME/.cargo/env"
//	                        is not opaque)
//	payload                 a shell's non-literal -c script (bash -c "$x"); any interpreter inline code, literal
//	                        or not (python -c, perl -e/-ne, ruby -e, node/bun -e/-p/--eval, deno eval, php -r,
//	                        lua -e, Rscript -e, osascript -e, julia, elixir, guile, pwsh -c …; names are matched
//	                        case-insensitively without ".exe"); a payload that does not parse; env -S/su -c/watch
//	                        with a non-literal string; a literal -c script into which xargs -I/-i, find -exec's {}
//	                        or parallel splice run-time data (xargs -I{} sh -c 'rm {}'; the script is still parsed)
//	piped-to-interpreter    a shell or interpreter reading its script from stdin fed by a pipe (Text is the whole
//	                        pipeline: curl … | sh, base64 -d | bash, … | sudo bash, cat x | python3 -), from an
//	                        input redirection (sh < file), or from a process substitution (bash <(curl …))
//	heredoc-to-interpreter  a heredoc or here-string feeding such a program (Text is the heredoc body, or the
//	                        here-string word as written; Span is the body's). When the program reads shell
//	                        commands (a shell, su, sudo -s, source /dev/stdin, at) and the text has no
//	                        expansion (quoted delimiter, or no $ ` \ in the body), the script is also parsed as
//	                        a payload with the program as its innermost wrapper
//	depth-limit             a payload nested past Options.MaxDepth, or syntax nested past the walker's limit
//	written-file            a file this command line wrote with content it cannot know (curl -o x …; ./x,
//	                        cp "$1" x; ./x, wget -O s.sh …; bash s.sh), run as a program, a script or with source
//	partial-expansion       a list expansion of an array whose element 0 may be set before the line runs
//	                        (a[1]=rm; ${a[*]}): the known elements are read as well (expand.go)
//	parser-divergence       text that mvdan.cc/sh and bash may read differently (divergence.go): a script with
//	                        both an arithmetic-evaluating context ((( )), $(( )), let, [[ -eq ]], test -v,
//	                        declare -i, ${x:off}, a subscripted name …) and literal text holding "$(", a
//	                        backquote or a "$" ending a literal run (bash expands subscripts of strings it
//	                        evaluates: x='a[$(id)]'; [[ $x -eq 0 ]] runs id); a let argument with an unquoted
//	                        & | < > ; ( ); an array assignment glued to the next word (a=(1)#; id); a comment
//	                        continued by a backslash (x=1 #\<newline>id); a $'…' decoding to a NUL; single
//	                        quotes holding $ ` \ in a - :- = := + :+ operand inside double quotes or a here-document
//	                        ("${x:-'$(id)'}": bash keeps the quotes and runs id); a declaration builtin with -a/-A
//	                        given a value only known at run time that may begin with "("; a nameref (-n) counts
//	                        as an arithmetic context; ${!x} and ${x@P} with code in sight; a prompt escape
//	                        decoding to "$" before an expansion (PS4='\044(id)')
//
// # Text bash reads again
//
// Where bash parses a known string as source at run time, the string is
// walked as a nested source (reread.go), its commands reported like any
// others (Span is the construct's): a double-quoted ${x:-'…'} operand as
// bash reads it, declare/typeset/local/readonly/export -a|-A 'x=(…)' (and
// x='(…)') as the compound assignment, mapfile/readarray -C CALLBACK (with
// run-time arguments), PROMPT_COMMAND and PS0/PS1/PS2/PS4 values, and the
// known name behind ${!x}, a known ${x@P} value and a known nameref target
// as the expansion bash makes of them; the script a shell or source reads
// from a process substitution that prints known text (bash <(echo …)), as a
// payload. $FUNCNAME in a function body is the function's name. A known
// hash table entry (BASH_CMDS[NAME]=PATH, hash -p PATH NAME) makes the
// shell's later command NAME a command of PATH (hashtable.go).
//
// # Data flow inside one line
//
// Besides the variables (vars.go), the walk keeps what the line writes
// into files (dataflow.go): a copy, link, move or install of a file (cp,
// ln, mv, install, rsync, scp, dd if= of=, cat FILE > x), text written by a
// redirection, tee or a here-document (echo, printf, cat of a literal
// here-document or here-string, base64 -d, rev, tr of known input), and
// writes of content it cannot know (the grammar's written options and
// operands: curl -o, wget -O, go build -o …). A later run of such a file as
// a program (./x, /tmp/x, sudo x, a bare name written or linked into a
// PATH directory: ~/bin, /usr/local/bin …, or one the line assigns into
// PATH, where "." and "" are any relative directory), as a shell's or interpreter's script or with source/. is
// read as what it holds: a copy of rm is rm (Program "rm", Spelling the
// copied path), known shell text is walked as a payload (its "#!" line
// names the reader when the file itself is run; Python goes to the
// grammar's Python reader, other languages are opaque payloads), unknown
// content is a written-file segment. Files are matched by their last path
// element, and every write counts whatever the control flow; a write met
// after the command that runs the file was walked (a loop's later pass, a
// function walked at its definition) makes Parse walk the source once more
// with every write known. The same outputs make a command substitution's
// known text ("$(echo rm)", "`printf reboot`", "$(base64 -d <<< …)") the
// word's value, split as bash splits it. Bytes that pass through a filter
// and its inverse stay a copy (codec.go): "base64 /sbin/reboot | base64 -d
// > x", "gzip -c … | gunzip", "xxd | xxd -r", "tee x < /sbin/reboot", "cat
// … | dd of=x"; bytes left encoded are unknown content. A program the
// grammar gives a Script that reads a file the line wrote (crontab FILE,
// at -f FILE, batch < FILE, gdb -x FILE, make -f FILE, python3 FILE, bash
// --rcfile FILE, xargs -a FILE) is read as that program given the file's
// text (filescript.go). read and mapfile/readarray from a
// known input bind their variables and array elements (readin.go);
// namerefs with a known target are followed, and a walked function call
// starts from the caller's values and leaves the body's assignments to
// names it did not declare local (refs.go, vars.go).
//
// "Reads its script from stdin" means: a shell or interpreter without a
// script operand or -c/-e code, with "-", "/dev/stdin" or -s; an interactive
// sudo -s/-i, su, runuser or doas -s; source/. of /dev/stdin; at and batch
// without -f; crontab installing a table from stdin; awk, sed or make given
// -f - (or /dev/stdin). Their -f naming a process substitution is
// piped-to-interpreter too. Inline awk and sed programs are not opaque: they
// are ordinary arguments for the rules to read.
//
// ">& word" with a word that is not a file descriptor is "&> word": it is
// reported as a write of fd "&", like "&>".
//
// # Functions
//
// Each function definition is a Function. Commands in its body are reported
// with Context.Function set. Recursive, SelfPipe and SelfBackground are
// computed on the call graph of the function names defined in the script:
// a function is Recursive when it calls itself directly or through other
// defined functions (a calls b, b calls a), and SelfPipe/SelfBackground
// when a call on that cycle runs in a pipeline or with &. Invoked reports a
// call after the definition from outside every function body, or from a
// function that is itself invoked. A fork bomb is a function that is
// SelfPipe or SelfBackground and Invoked, whatever its name
// (":(){ :|:& };:", "bomb(){ bomb|bomb& }; bomb", "f(){ f & f; }; f").
//
// # Fidelity to bash
//
// mvdan/sh reads a carriage return as a blank, bash as a word character
// ("printf SAFE\r#x; reboot" runs reboot in bash). Parse replaces carriage
// returns by an unused control byte before parsing and maps them back in
// word values, so commands split exactly where bash splits them (input that
// also holds every usable control byte is refused with ErrUnsupported).
//
// # Variables
//
// Values assigned in the script (x=v, export, local, declare, typeset,
// readonly, for-loop items) are substituted where $x or ${x} is expanded, in
// the order bash runs the script; a value that cannot be known there leaves
// the expansion's text in the word and sets Word.Unknown (vars.go says which
// constructs forget or stop the tracking). An operator that yields the value
// itself when it is set and not empty (${x:?}, ${x:-w}, ${x=w}), ${x:+w}
// and a trim by a literal pattern (${x%/}, ${x#pre}) have known values too,
// as do case changes, literal replacements, number substrings, ${#x},
// ${!y} through a known name, and array elements (expand.go): "${a[@]}",
// "$@" and an unquoted known value with IFS characters are the several
// words bash makes of them, with IFS followed while its value is known;
// a[N]=v on an array not known reads the known elements beside a
// partial-expansion segment;
// $HOME is taken as set, and ${HOME%/} as the home. A choice operator
// (${x:-w}, ${x-w}, ${x:=w}, ${x=w}, ${x:+w}, ${x+w}) on a variable whose
// value is not known makes the command be walked once per state of the
// variable — set to an unknown value, unset, empty — for up to three such
// variables (27 walks), each recording the command bash would run then:
// "rm -rf ${D:-~}" is also rm -rf ~. An unquoted expansion known to be empty
// adds nothing to its word, and a word of nothing but such expansions is
// dropped ("${X:+sh} -c reboot" with X unset runs "-c"). A function called
// with known arguments is walked again with $1 … $9 bound to them (once per
// call, at most 8 calls, not inside another such walk); a shell -c script
// has $0, $1 … and "$@" bound to the known words after it, "{}" under find
// -exec included, and starts with the known X=v of its environment (X=v sh
// -c '$X'). A computed program or eval in a function body stops the
// tracking at a call that is not walked, not at the definition.
//
// Known standard input (feed.go): xargs whose input is an echo, printf
// '%s<sep>' or "ls -d" of known words in the pipeline stage before it, or a
// here-string or literal heredoc, runs its command with the items split as
// xargs splits them (-0, -d, -I lines, quotes); the items are appended, or
// put in place of the -I string (one command per item); an input of more
// than 64 items stays run-time data. BASH_ENV or ENV set to <(…) of such a
// printer is a payload the started shell runs, given as the command's
// assignment or as a NAME=<(…) word to env or sudo.
//
// Plain one-line commands and pipelines of them are given the tree mvdan.cc/sh
// would build without running its parser (simple.go); anything else is
// parsed by mvdan.cc/sh.
//
// Known approximations: aliases are not expanded at their use (bash does
// not expand them in a non-interactive shell; their values are parsed where
// they are defined); remote commands (ssh HOST CMD) and programs
// run through options of other tools (rg --pre, sort --compress-program,
// git -c core.pager) are ordinary arguments left to the rules; a
// reassignment of HOME earlier in the script is not tracked when a $HOME
// script path is judged known; sudo's quoting of the words it hands to
// "$SHELL -c" under -s/-i is not modelled (the words are parsed as a
// script, which can only over-report).
//
// # Bounds
//
// Input over Options.MaxBytes is refused with ErrTooLarge (never truncated).
// Input whose brackets nest past 1000 levels is refused with ErrTooDeep
// before parsing (the parser is recursive); the walker stops descending
// past 200 levels (16 for function definitions inside function bodies) and
// records a depth-limit segment. Parsers are pooled; a
// typical one-line command costs a few microseconds and about a dozen
// allocations (BenchmarkParse).
package shellparse
