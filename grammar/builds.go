package grammar

// Build tools: make's variables given as operands or in the environment
// (SHELL, .SHELLFLAGS, MAKEFLAGS run commands), --eval; go's -exec and
// -toolexec.
func builds() []*Spec {
	makeEnv := map[string]Effect{"SHELL": Exec, ".SHELLFLAGS": Exec, "MAKEFLAGS": Exec | Options, "MFLAGS": Exec | Options, "MAKEFILES": Exec,
		"MAKE": Exec, "MAKESHELL": Exec, "GNUMAKEFLAGS": Exec | Options, ".RECIPEPREFIX": Exec, "MAKEOVERRIDES": Exec}
	goFlags := join(ops(arg("-exec", Exec), arg("-toolexec", Exec), arg("-vettool", Exec), arg("-o", Write), arg("-coverprofile", Write),
		arg("-cpuprofile", Write), arg("-memprofile", Write), arg("-blockprofile", Write), arg("-mutexprofile", Write), arg("-trace", Write),
		arg("-outputdir", Write), arg("-modfile", Read), arg("-overlay", Read), arg("-pgo", Read)),
		args("-C -ldflags -gcflags -asmflags -gccgoflags -tags -run -bench -count -timeout -p -mod -parallel -benchtime -cpu -covermode -coverpkg -skip -shuffle -fuzz -fuzztime -buildmode -compiler -installsuffix -pkgdir -reldir"),
		flags("-v -x -n -a -race -msan -asan -cover -short -json -failfast -benchmem -trimpath -buildvcs -linkshared -work -i -u -t -d -f -m -l -fix"))
	goSub := func(names string) *Spec { s := sub(names, 0); s.Long = Exact; s.Options = goFlags; return s }
	return []*Spec{
		{Name: "make", Aliases: []string{"gmake", "bmake", "remake"}, Env: makeEnv, Refine: refineMake,
			Stdin: &Script{Lang: "make", Shell: MakeRecipes, From: []string{"--file"}}, Options: gnu(
				ops(arg("--directory -C", 0), arg("--file --makefile -f", Code), arg("--include-dir -I", 0), arg("--old-file --assume-old -o", 0),
					arg("--what-if --new-file --assume-new -W", 0), opt("--jobs -j", 0), opt("--load-average --max-load -l", 0),
					opt("--output-sync -O", 0), arg("--eval -E", Code), opt("--debug", 0), opt("--shuffle", 0), arg("--jobserver-auth --jobserver-fds", 0)),
				flags("-d -e --environment-overrides -i --ignore-errors -k --keep-going -S --no-keep-going --stop -n --just-print --dry-run --recon "+
					"-q --question -r --no-builtin-rules -R --no-builtin-variables -s --silent --quiet -t --touch -v -w --print-directory --no-print-directory "+
					"-B --always-make --trace -p --print-data-base -L --check-symlink-times --warn-undefined-variables --no-silent"))},
		{Name: "go", Long: Exact, Subs: []*Spec{goSub("test build run vet install generate list get mod tool env fmt clean doc work fix")}},
	}
}

// refineMake: NAME=VALUE operands are variable assignments, not targets.
func refineMake(inv *Invocation) {
	for i := range inv.Operands {
		if op := &inv.Operands[i]; isAssign(op.Value) || isMakeSpecial(op.Value) {
			op.Effects |= Env
		} else {
			op.Effects |= Target
		}
	}
}

// isMakeSpecial reports whether a is an assignment to a special variable
// such as ".SHELLFLAGS=…", or uses := ::= += ?= != forms.
func isMakeSpecial(a string) bool {
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case '=':
			return i > 0
		case ' ', '\t', '/':
			return false
		}
	}
	return false
}

// AssignName returns the variable name of a make-style assignment operand
// ("SHELL=x", ".SHELLFLAGS:=x", "CFLAGS+=x"), or "".
func AssignName(a string) string {
	for i := 0; i < len(a); i++ {
		if a[i] == '=' {
			n := a[:i]
			for len(n) > 0 && (n[len(n)-1] == ':' || n[len(n)-1] == '+' || n[len(n)-1] == '?' || n[len(n)-1] == '!') {
				n = n[:len(n)-1]
			}
			return n
		}
	}
	return ""
}
