package grammar

import "strings"

// The rm family and the other coreutils/util-linux programs that delete,
// copy, write or change files.
func coreutils() []*Spec {
	cpCommon := join(
		ops(argE("--target-directory -t", Write|Target, 0), arg("--suffix -S", 0), opt("--backup", 0),
			opt("--reflink", 0), arg("--sparse", 0), opt("--preserve", 0), arg("--no-preserve", 0),
			opt("--context", 0), opt("--update", 0), flag("--recursive -r -R", Recursive), flag("--force -f", Force)),
		flags("--archive -a --attributes-only --copy-contents -b -d --debug --dereference -L --no-dereference -P "+
			"-H --interactive -i --link -l --no-clobber -n -p --parents --remove-destination "+
			"--strip-trailing-slashes --no-target-directory -T -u --verbose -v --one-file-system -x -Z --keep-directory-symlink --exchange"),
	)
	return []*Spec{
		{Name: "rm", Effects: Delete, Operands: allTargets, Options: gnu(
			ops(flag("--recursive -r -R", Recursive), flag("--force -f", Force), opt("--interactive", 0),
				opt("--preserve-root", 0)),
			flags("-i -I --no-preserve-root --one-file-system --dir -d --verbose -v"))},
		{Name: "rmdir", Effects: Delete, Operands: allTargets, Options: gnu(flags("--ignore-fail-on-non-empty --parents -p --verbose -v"))},
		{Name: "unlink", Effects: Delete, Operands: allTargets, Options: gnuHelp()},
		// shred destroys its targets' data whether or not -u removes them after:
		// for the catalog it deletes them (and writes any device among them).
		{Name: "shred", Effects: DeviceWrite | Delete, Operands: allTargets, Options: gnu(
			args("--iterations -n --size -s --random-source"),
			ops(opt("--remove -u", 0), flag("--force -f", Force)),
			flags("--exact -x --verbose -v --zero -z"))},
		{Name: "cp", Options: gnu(cpCommon, ops(flag("--symbolic-link -s", 0))), Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write}, {All: true, Effects: Read}}},
		{Name: "mv", Options: gnu(cpCommon), Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write}, {All: true, Effects: Target | Delete}}},
		{Name: "ln", Options: gnu(cpCommon, ops(flag("--symbolic -s", 0)), flags("--logical --physical --relative -r --no-dereference -n")),
			Operands: []OperandRule{{Index: -1, Min: 1, Effects: Write}}},
		{Name: "install", Options: gnu(
			ops(argE("--target-directory -t", Write|Target, 0), arg("--mode -m", 0), arg("--owner -o", 0),
				arg("--group -g", 0), arg("--suffix -S", 0), opt("--backup", 0), arg("--strip-program", Exec),
				opt("--context", 0), flag("--directory -d", Write)),
			flags("-b -c --compare -C -D --preserve-timestamps -p --strip -s --verbose -v -Z --no-target-directory -T")),
			Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write}},
			Refine: func(inv *Invocation) {
				if inv.Has("--directory") {
					for i := range inv.Operands {
						inv.Operands[i].Effects |= Write
					}
				}
			}},
		{Name: "tee", Operands: []OperandRule{{All: true, Effects: Write}}, Options: gnu(
			ops(opt("--output-error", 0)), flags("--append -a --ignore-interrupts -i -p"))},
		{Name: "touch", Operands: []OperandRule{{All: true, Effects: Write}}, Options: gnu(
			ops(arg("--reference -r", Read), arg("--date -d", 0), arg("-t", 0), arg("--time", 0)),
			flags("-a --no-create -c -f --no-dereference -h -m"))},
		{Name: "truncate", Effects: Truncate, Operands: []OperandRule{{All: true, Effects: Target | Write}}, Options: gnu(
			ops(arg("--size -s", 0), arg("--reference -r", Read)), flags("--no-create -c --io-blocks -o"))},
		{Name: "fallocate", Operands: []OperandRule{{Index: -1, Effects: Target | Write}}, Options: gnu(
			ops(arg("--length -l", 0), arg("--offset -o", 0), flag("--punch-hole -p", DeviceWrite),
				flag("--zero-range -z", DeviceWrite), flag("--collapse-range -c", DeviceWrite),
				flag("--insert-range -i", DeviceWrite), flag("--dig-holes -d", DeviceWrite),
				flag("--write-zeroes -w", DeviceWrite)),
			flags("--keep-size -n --posix -x --verbose -v"))},
		{Name: "chmod", Effects: Perms, Operands: []OperandRule{{All: true, From: 1, Effects: Target}}, Options: gnu(
			ops(flag("--recursive -R", Recursive), arg("--reference", Read)),
			flags("--changes -c --silent --quiet -f --verbose -v --no-preserve-root --preserve-root -H -L -P --dereference --no-dereference -h"))},
		{Name: "chown", Aliases: []string{"chgrp"}, Effects: Perms, Operands: []OperandRule{{All: true, From: 1, Effects: Target}}, Options: gnu(
			ops(flag("--recursive -R", Recursive), arg("--reference", Read), arg("--from", 0)),
			flags("--changes -c --silent --quiet -f --verbose -v --no-preserve-root --preserve-root -H -L -P --dereference --no-dereference -h"))},
		{Name: "sort", Options: gnu(
			ops(arg("--output -o", Write), arg("--compress-program", Exec), arg("--files0-from", Read),
				arg("--key -k", 0), arg("--field-separator -t", 0), arg("--buffer-size -S", 0),
				arg("--temporary-directory -T", 0), arg("--parallel", 0), arg("--batch-size", 0), opt("--sort", 0),
				opt("--random-source", 0), opt("--check", 0)),
			flags("-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g --general-numeric-sort "+
				"-i --ignore-nonprinting -M --month-sort -h --human-numeric-sort -n --numeric-sort -R --random-sort "+
				"-r --reverse -V --version-sort -c -C --debug -m --merge -s --stable -u --unique -z --zero-terminated"))},
		{Name: "uniq", Operands: []OperandRule{{Index: 1, Effects: Write}}, Options: gnu(
			args("--skip-fields -f --skip-chars -s --check-chars -w"), ops(opt("--all-repeated", 0), opt("--group", 0)),
			flags("--count -c --repeated -d -D --ignore-case -i --unique -u --zero-terminated -z"))},
		{Name: "split", Aliases: []string{"csplit"}, Operands: []OperandRule{{Index: 1, Effects: Write}}, Options: gnu(
			ops(arg("--filter", Exec)), args("--suffix-length -a --additional-suffix --bytes -b --line-bytes -C --lines -l --number -n --separator -t --prefix -f --digits"),
			flags("-d -x --elide-empty-files -e --unbuffered -u --verbose --keep-files -k --quiet -s -z"))},
		{Name: "dd", Options: gnuHelp(), Refine: refineDD},
		// tar --remove-files deletes what it archived, directories and
		// all; the traditional form "tar cf ARCHIVE" is read too.
		{Name: "tar", Aliases: []string{"gtar", "bsdtar"}, Traditional: true, Operands: allTargets, Options: gnu(
			ops(flag("--remove-files", Delete|Recursive)),
			ops(argE("--file -f", Write|Read, 0), arg("--to-command", Exec), arg("--use-compress-program -I", Exec),
				arg("--checkpoint-action", Exec|Config), arg("--info-script --new-volume-script -F", Exec),
				arg("--rsh-command", Exec), arg("--rmt-command", Exec), arg("--directory -C", 0),
				arg("--files-from -T", Read), arg("--exclude", 0), arg("--exclude-from -X", Read),
				arg("--transform --xform", 0), arg("--owner", 0), arg("--group", 0), arg("--mode", 0),
				arg("--blocking-factor -b", 0), arg("--tape-length -L", 0), arg("--index-file", Write),
				arg("--listed-incremental -g", Write), arg("--suffix", 0), arg("--strip-components", 0),
				arg("--newer -N --after-date", 0), arg("--format -H", 0), arg("--label -V", 0),
				opt("--checkpoint", 0), opt("--backup", 0), opt("--occurrence", 0), opt("--sparse-version", 0),
				flag("--list -t", DryRun)),
			flags("-A --catenate --concatenate -c --create -d --diff --compare --delete -r --append -u --update -x --extract --get "+
				"-z --gzip -j --bzip2 -J --xz --zstd --lzma -Z --compress -a --auto-compress -v --verbose -p --preserve-permissions "+
				"-k --keep-old-files --overwrite -P --absolute-names -h --dereference -S --sparse -O --to-stdout "+
				"-m --touch -o -w --interactive -W --verify -l -B -M --multi-volume -G -i --ignore-zeros --numeric-owner "+
				"--no-same-owner --same-owner --wildcards --no-wildcards --anchored --recursion --no-recursion --totals --utc -U --unlink-first "+
				"--keep-newer-files --one-file-system --show-transformed-names --null -s --same-order --preserve-order --exclude-vcs"))},
		{Name: "sed", Aliases: []string{"gsed"}, Options: gnu(
			ops(argE("--expression -e", Code, 0), argE("--file -f", Read, 0), opt("--in-place -i", 0),
				arg("--line-length -l", 0)),
			flags("--quiet --silent -n --debug --posix --regexp-extended -E -r --separate -s --sandbox --unbuffered -u --null-data -z --follow-symlinks -b --binary")),
			Refine: refineSed},
		// find reads its own expression: no abbreviations ("--hel" is an
		// unknown predicate).
		{Name: "find", Long: Exact, Options: findOptions(), Refine: refineFind},
	}
}

// refineDD reads dd's key=value operands: of= is written, if= read. The
// dd clones (dcfldd, dc3dd) read the same operands and add their own
// outputs: of= again for dc3dd's "ofs=", the hash-verifying "hof=" and
// "hofs=", and dc3dd's "wipe=" and "hwipe=" (fill the device with zeros).
func refineDD(inv *Invocation) {
	for i := range inv.Operands {
		op := &inv.Operands[i]
		k, v, ok := strings.Cut(op.Value, "=")
		if !ok || v == "" {
			continue
		}
		switch k {
		case "of", "ofs", "hof", "hofs", "wipe", "hwipe":
			op.Value = v
			op.Effects |= Write | Target
			inv.Effects |= DeviceWrite
		case "if", "ifs", "vf":
			op.Value = v
			op.Effects |= Read
		}
	}
}

// findOptions are find's whole-word primaries and options.
func findOptions() []Option {
	o := join(
		args("-name -iname -path -ipath -regex -iregex -wholename -iwholename -lname -ilname -type -xtype -newer -anewer -cnewer "+
			"-perm -user -group -uid -gid -size -mtime -atime -ctime -mmin -amin -cmin -used -maxdepth -mindepth "+
			"-samefile -inum -links -fstype -printf -context -regextype -newermt -newerct -newerat -files0-from -D"),
		ops(arg("-fprint", Write), arg("-fprint0", Write), arg("-fls", Write), arg("-fprintf", Write),
			flag("-delete", Delete), flag("-exec", Exec), flag("-execdir", Exec), flag("-ok", Exec), flag("-okdir", Exec)),
		flags("-print -print0 -ls -prune -quit -depth -d -mount -xdev -noleaf -follow -daystart -ignore_readdir_race "+
			"-noignore_readdir_race -true -false -empty -readable -writable -executable -nouser -nogroup -not -a -and -o -or "+
			"-H -L -P -O0 -O1 -O2 -O3"),
		ops(flag("--help -help", DryRun), flag("--version -version", DryRun)),
	)
	return o
}

// findFilters are find tests that select files by name or content; with one
// of them (and no -o, -not or "!"), -delete removes a selection, not a tree.
var findFilters = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true, "-iregex": true,
	"-wholename": true, "-iwholename": true, "-newer": true, "-mtime": true, "-mmin": true, "-atime": true,
	"-amin": true, "-ctime": true, "-cmin": true, "-size": true, "-user": true, "-uid": true, "-group": true,
	"-gid": true, "-inum": true, "-samefile": true, "-lname": true, "-ilname": true, "-empty": true,
	"-newermt": true, "-links": true, "-perm": true,
}

// refineFind marks find's start points (operands before the expression) as
// targets, takes the words of -exec … ; out of the options and operands,
// reads -fprintf's second value, and makes an unfiltered -delete recursive.
func refineFind(inv *Invocation) {
	first := len(inv.Args)
	if len(inv.Options) > 0 {
		first = inv.Options[0].Arg
	}
	// inner marks the words of -exec … ; (run by the command, not read by
	// find) and the format of -fprintf.
	var inner []bool
	mark := func(j int) {
		if inner == nil {
			inner = make([]bool, len(inv.Args)+1)
		}
		inner[j] = true
	}
	for _, o := range inv.Options {
		if inner != nil && inner[o.Arg] {
			continue
		}
		switch o.Name {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := len(inv.Args)
			for j := o.Arg + 1; j < len(inv.Args); j++ {
				mark(j)
				if inv.Args[j] == ";" || inv.Args[j] == "+" {
					end = j
					break
				}
			}
			if execDeletesFound(inv.Args[o.Arg+1 : end]) {
				inv.Effects |= Delete
			}
		case "-fprintf":
			if o.ValueArg >= 0 {
				mark(o.ValueArg + 1)
			}
		}
	}
	// find reads its expression left to right and opens the files of
	// -fprint, -fprintf and -fls as it reads them (truncating them);
	// --help and --version then print and exit before anything is
	// evaluated. What they leave is the outputs opened before them.
	for _, o := range inv.Options {
		if (o.Name != "--help" && o.Name != "--version") || (inner != nil && inner[o.Arg]) {
			continue
		}
		kept := inv.Options[:0]
		for _, w := range inv.Options {
			if w.Arg < o.Arg && w.ValueEffects.Has(Write) && (inner == nil || !inner[w.Arg]) {
				w.Effects = 0
				kept = append(kept, w)
			}
		}
		inv.Options, inv.Operands = kept, inv.Operands[:0]
		inv.Effects = DryRun
		if len(kept) > 0 {
			inv.Effects = 0
		}
		return
	}
	if inner != nil {
		kept := inv.Options[:0]
		for _, o := range inv.Options {
			if !inner[o.Arg] {
				kept = append(kept, o)
			}
		}
		inv.Options = kept
		// No --help or --version of find's own is left (the loop above
		// returned): a DryRun the parse took from a word of -exec or
		// from -fprintf's format ("-fprintf /dev/sda --help") is not
		// find's, which runs.
		inv.Effects &^= DryRun
	}
	ops := inv.Operands[:0]
	for _, op := range inv.Operands {
		if inner != nil && inner[op.Arg] {
			continue
		}
		if op.Arg < first {
			op.Effects |= Target
		}
		ops = append(ops, op)
	}
	inv.Operands = ops
	if inv.Effects.Has(Delete) && findUnfiltered(inv) {
		inv.Effects |= Recursive
	}
}

// FindVisitsAll reports whether find with the arguments args (start points
// and expression) acts on every path under its start points, as
// findUnfiltered reads it: a command its -exec runs on "{}" then runs on
// the whole tree.
func FindVisitsAll(args []string) bool {
	return findUnfiltered(Parse("find", args))
}

// findUnfiltered reports whether a refined find invocation selects every
// path it visits: no test of findFilters narrows it, or -o, -not, "!" or ","
// makes the expression one this reading does not follow (taken as all).
func findUnfiltered(inv *Invocation) bool {
	filtered := false
	for _, o := range inv.Options {
		switch {
		case o.Name == "-o" || o.Name == "-or" || o.Name == "-not":
			return true
		case findFilters[o.Name] && !findMatchesAll(o.Name, o.Value):
			filtered = true
		}
	}
	for _, op := range inv.Operands {
		if op.Value == "!" || op.Value == "," {
			return true
		}
	}
	return !filtered
}

// findMatchesAll reports whether a find test with value v selects every
// path: -name '*' (and "" as before), -regex '.*' (the regex matches the
// whole path, so '.*' is every one).
func findMatchesAll(test, v string) bool {
	switch test {
	case "-regex", "-iregex":
		return v == ".*" || v == "^.*$" || v == ".*$" || v == "^.*" || v == "" || v == "\\(.*\\)"
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
		return v == "*" || v == "" || v == "**"
	}
	return v == "*" || v == ""
}

// parseInner is Parse, bound in init: the specs hold refineFind, so a direct
// call would make their initialisation depend on itself.
var parseInner func(program string, args []string) *Invocation

func init() { parseInner = Parse }

// execDeletesFound reports whether the command of a find -exec (its words,
// without the closing ";" or "+") deletes the files find hands it: a
// deleting program ("rm -rf", "unlink", "shred -u" …, by the grammar) with
// "{}" among its targets. find then deletes what it visits, as -delete does.
func execDeletesFound(words []string) bool {
	if len(words) == 0 {
		return false
	}
	prog := words[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:] // /bin/rm is rm
	}
	sub := parseInner(prog, words[1:])
	if sub.Spec == nil || !sub.Effects.Has(Delete) {
		return false
	}
	for _, op := range sub.Operands {
		if op.Effects.Has(Target) && strings.Contains(op.Value, "{}") {
			return true
		}
	}
	return false
}

// refineSed: without -e or -f the first operand is the script; the others
// are input files.
func refineSed(inv *Invocation) {
	script := false
	for _, o := range inv.Options {
		if o.Name == "--expression" || o.Name == "--file" {
			script = true
		}
	}
	for i := range inv.Operands {
		if i == 0 && !script {
			inv.Operands[i].Effects |= Code
		} else {
			inv.Operands[i].Effects |= Read
		}
	}
}
